"""Compiled IIK kernel (issue 4 §7) = numpy path, number for number (pelvis and support-root modes, ± CoM task)."""

import numpy as np
import pytest

from atlas_crawl_kinematics import iik_fast
from atlas_crawl_kinematics.iik import IIKParams, IIKSolver, InvalidTargetError, four_point_stance
from atlas_description import CONTACT_FRAMES

pytestmark = pytest.mark.skipif(not iik_fast.HAVE_NUMBA, reason="numba not installed (numpy path only)")


@pytest.mark.parametrize("mode,root", [("pelvis", None), ("root", "r_knee_contact")])
@pytest.mark.parametrize("with_com", [False, True])
@pytest.mark.parametrize("preset", ["thesis", "improved"])
def test_kernel_matches_numpy_path(model, mode, root, with_com, preset):
    rng = np.random.default_rng(11)
    home = four_point_stance(model)
    mk = (lambda **kw: IIKParams(**kw)) if preset == "thesis" else IIKParams.improved
    a = IIKSolver(model, params=mk(backend="numpy"), mode=mode, root=root)
    b = IIKSolver(model, params=mk(backend="numba"), mode=mode, root=root)
    for _ in range(4):
        k = model.forward(model.clip_to_limits(home + rng.normal(0, 0.3, model.n_joints)))
        tg = k.positions(CONTACT_FRAMES, root=root)
        kw = {"com_target": k.com(root=root) + [0.02, -0.01, 0.0]} if with_com else {}
        ra, rb = a.solve(home, tg, weights=[1, 2, 3, 4], **kw), b.solve(home, tg, weights=[1, 2, 3, 4], **kw)
        assert ra.status == rb.status and ra.iterations == rb.iterations
        # the numpy path's CoM rows are the rank-2 3×3 projector (ε-regularised), the kernel's 2 basis rows
        tol = 1e-5 if with_com else 1e-9
        np.testing.assert_allclose(rb.q, ra.q, atol=tol)
        assert rb.error_m == pytest.approx(ra.error_m, abs=tol)
        assert rb.com_error_m == pytest.approx(ra.com_error_m, abs=tol)
        np.testing.assert_allclose(rb.errors, ra.errors, atol=tol)


def test_kernel_bad_input_and_backend(model):
    home = four_point_stance(model)
    s = IIKSolver(model, params=IIKParams.tuned())
    tg = model.forward(home).positions(CONTACT_FRAMES)
    tg[1, 2] = np.nan
    with pytest.raises(InvalidTargetError):
        s.solve(home, tg)
    with pytest.raises(InvalidTargetError):
        IIKParams(backend="fortran").validate()
    with pytest.raises(InvalidTargetError):
        s.solve(home, model.forward(home).positions(CONTACT_FRAMES), up=(0.0, 0.0, 0.0))


def test_tuned_preset_converges_on_random_targets(model):
    rng = np.random.default_rng(5)
    home = four_point_stance(model)
    s = IIKSolver(model, params=IIKParams.tuned())
    res = []
    for _ in range(30):
        k = model.forward(model.clip_to_limits(home + rng.normal(0, 0.25, model.n_joints)))
        res.append(s.solve(home, k.positions(CONTACT_FRAMES), com_target=k.com()))
    assert sum(r.converged for r in res) >= 29
    assert np.median([r.iterations for r in res]) <= 8
    for r in res:
        assert np.all(r.q >= model.lower) and np.all(r.q <= model.upper)
