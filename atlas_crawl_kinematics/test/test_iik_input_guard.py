"""IIK input guard (issue 11), property-based: whatever targets, weights and seeds arrive, the solver either refuses
them with InvalidTargetError or returns a finite, in-limit configuration — and never CONVERGED with a NaN.

Before the guard the compiled kernel returned q = NaN with status CONVERGED and error 0.0 for a coordinate of
±1.8e308 or weights of 1e300, and q outside the limits for targets of ~1e154 and above."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atlas_crawl_kinematics import iik_fast
from atlas_crawl_kinematics.iik import (MAX_COORD_M, MAX_WEIGHT, IIKParams, IIKSolver, IIKStatus, InvalidTargetError,
                                        four_point_stance)
from atlas_description import CONTACT_FRAMES

BACKENDS = ["numpy"] + (["numba"] if iik_fast.HAVE_NUMBA else [])
# any float, with the magnitudes that broke the kernel well represented
COORD = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                  st.sampled_from([1.8e308, -1.8e308, 1e154, -1e200, 1e3, 1.001e3, 0.0, 0.3]))
WEIGHT = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([1e300, 1e-300, 1.0, 1e6, 1e-6]))
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _check(model, res):
    assert np.all(np.isfinite(res.q)), res
    assert np.all(res.q >= model.lower - 1e-12) and np.all(res.q <= model.upper + 1e-12)
    assert math.isfinite(res.error_m)
    if res.status is IIKStatus.CONVERGED:
        assert res.error_m < 0.05


@pytest.mark.parametrize("backend", BACKENDS)
@SETTINGS
@given(target=st.lists(COORD, min_size=3, max_size=3), which=st.integers(0, 3))
def test_any_target_refused_or_finite_in_limits(model, backend, target, which):
    s = IIKSolver(model, params=IIKParams.tuned(backend=backend))
    home = four_point_stance(model)
    tg = model.forward(home).positions(CONTACT_FRAMES)
    tg[which] = target
    bad = not np.all(np.isfinite(tg)) or np.max(np.abs(tg)) > MAX_COORD_M
    try:
        res = s.solve(home, tg)
    except InvalidTargetError:
        assert bad
        return
    assert not bad
    _check(model, res)


@pytest.mark.parametrize("backend", BACKENDS)
@SETTINGS
@given(w=st.lists(WEIGHT, min_size=4, max_size=4))
def test_any_weights_refused_or_finite_in_limits(model, backend, w):
    s = IIKSolver(model, params=IIKParams.tuned(backend=backend))
    home = four_point_stance(model)
    tg = model.forward(home).positions(CONTACT_FRAMES) + [0.02, 0.0, 0.0]
    try:
        res = s.solve(home, tg, weights=w)
    except InvalidTargetError:
        assert not all(math.isfinite(x) and 1e-6 <= x <= MAX_WEIGHT for x in w)
        return
    _check(model, res)


@pytest.mark.parametrize("backend", BACKENDS)
@SETTINGS
@given(seed=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=1), j=st.integers(0, 27))
def test_any_finite_seed_clipped_and_result_in_limits(model, backend, seed, j):
    s = IIKSolver(model, params=IIKParams.tuned(backend=backend))
    home = four_point_stance(model)
    tg = model.forward(home).positions(CONTACT_FRAMES)
    q0 = home.copy()
    q0[j] = seed[0]
    _check(model, s.solve(q0, tg))


def test_the_reported_cases_refused(model):
    s = IIKSolver(model, params=IIKParams.tuned())
    home = four_point_stance(model)
    tg = model.forward(home).positions(CONTACT_FRAMES)
    for v in (1.7e308, -1.7e308, 1e154):   # (±1.8e308 parses as ±inf: refused as NaN/inf)
        t = tg.copy()
        t[0, 0] = v
        with pytest.raises(InvalidTargetError, match="beyond"):
            s.solve(home, t)
    with pytest.raises(InvalidTargetError, match="weights"):
        s.solve(home, tg, weights=[1e300, 1, 1, 1])
