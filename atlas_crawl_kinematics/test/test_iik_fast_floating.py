"""Compiled floating-base IIK kernel (issue 10 §1 real-time budget) = numpy path: 6 virtual base DOF, orientation
tasks and the horizontal CoM task, as the crawl tracker uses them."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from atlas_crawl_kinematics import iik_fast
from atlas_crawl_kinematics.iik import IIKParams, IIKSolver, four_point_stance
from atlas_description import CONTACT_FRAMES

pytestmark = pytest.mark.skipif(not iik_fast.HAVE_NUMBA, reason="numba not installed (numpy path only)")

HOLD = ("l_lleg", "r_lleg", "utorso")


@pytest.mark.parametrize("with_ori", [False, True])
@pytest.mark.parametrize("with_com", [False, True])
def test_floating_kernel_matches_numpy_path(model, with_ori, with_com):
    """Random reachable targets from a perturbed crawl-like base pose: same status and iterations, joints, base pose
    and errors within 1e-9 (measured: <= 1e-11 rad)."""
    rng = np.random.default_rng(3)
    home = four_point_stance(model)
    mk = lambda b: IIKParams.improved(max_iterations=30, convergence_m=0.002, backend=b)   # noqa: E731
    a = IIKSolver(model, CONTACT_FRAMES, mk("numpy"), home, mode="floating")
    b = IIKSolver(model, CONTACT_FRAMES, mk("numba"), home, mode="floating")
    for _ in range(5):
        q0 = model.clip_to_limits(home + rng.normal(0, 0.15, model.n_joints))
        qt = model.clip_to_limits(home + rng.normal(0, 0.15, model.n_joints))
        bR = Rotation.from_rotvec(rng.normal(0, 0.2, 3)).as_matrix() @ Rotation.from_rotvec([0, 1.2, 0]).as_matrix()
        bp = np.array([0.1, 0.0, 0.5]) + rng.normal(0, 0.05, 3)
        k = model.forward(qt)
        bpt = bp + rng.normal(0, 0.03, 3)
        kw = dict(weights=[10.0, 1.0, 10.0, 10.0], base_pos=bp, base_rot=bR,
                  targets=k.positions(list(CONTACT_FRAMES)) @ bR.T + bpt)
        if with_ori:
            kw["orientations"] = {f: bR @ k.rotation(f) for f in HOLD}
        if with_com:
            kw["com_target"] = bR @ k.com() + bpt + [0.02, -0.01, 0.0]
        ra, rb = a.solve(q0, **kw), b.solve(q0, **kw)
        assert ra.status == rb.status and ra.iterations == rb.iterations
        np.testing.assert_allclose(rb.q, ra.q, atol=1e-9)
        np.testing.assert_allclose(rb.base_pos, ra.base_pos, atol=1e-9)
        np.testing.assert_allclose(rb.base_rot, ra.base_rot, atol=1e-9)
        assert rb.error_m == pytest.approx(ra.error_m, abs=1e-9)
        assert rb.com_error_m == pytest.approx(ra.com_error_m, abs=1e-9)
        np.testing.assert_allclose(rb.errors, ra.errors, atol=1e-9)


def test_auto_backend_keeps_the_numpy_floating_path(model, monkeypatch):
    """backend='auto' (the default) must not switch the floating base to the kernel (the golden logs' numbers)."""
    from atlas_crawl_kinematics import iik_fast_floating
    called = []
    monkeypatch.setattr(iik_fast_floating, "solve_fast_floating_steps", lambda *a, **k: called.append(1))
    home = four_point_stance(model)
    s = IIKSolver(model, CONTACT_FRAMES, IIKParams.improved(), home, mode="floating")
    tg = model.forward(home).positions(list(CONTACT_FRAMES))
    s.solve(home, tg, base_pos=np.zeros(3), base_rot=np.eye(3))
    assert not called


@pytest.mark.parametrize("budget", [1, 3, 7])
def test_sliced_solve_is_the_whole_solve(model, budget):
    """solve_steps(budget=k) (the controller's real-time slicing) yields once per k iterations while the solve runs
    and returns exactly the result of the whole solve, iteration for iteration."""
    rng = np.random.default_rng(11)
    home = four_point_stance(model)
    s = IIKSolver(model, CONTACT_FRAMES, IIKParams.improved(max_iterations=30, convergence_m=0.002,
                                                            backend="numba"), home, mode="floating")
    n_long = 0
    for _ in range(4):
        q0 = model.clip_to_limits(home + rng.normal(0, 0.2, model.n_joints))
        qt = model.clip_to_limits(home + rng.normal(0, 0.2, model.n_joints))
        bR = Rotation.from_rotvec([0, 1.2, 0]).as_matrix()
        bp = np.array([0.1, 0.0, 0.5])
        k = model.forward(qt)
        kw = dict(weights=[10.0, 1.0, 10.0, 10.0], base_pos=bp, base_rot=bR,
                  targets=k.positions(list(CONTACT_FRAMES)) @ bR.T + bp + [0.05, 0.0, 0.0],
                  orientations={f: bR @ k.rotation(f) for f in HOLD}, com_target=bR @ k.com() + bp + [0.08, 0, 0])
        whole = s.solve(q0, **kw)
        gen = s.solve_steps(q0, budget=budget, **kw)
        yields = 0
        while True:
            try:
                next(gen)
                yields += 1
            except StopIteration as stop:
                part = stop.value
                break
        assert yields == (whole.iterations - 1) // budget
        n_long += whole.iterations > budget
        assert part.status == whole.status and part.iterations == whole.iterations
        np.testing.assert_array_equal(part.q, whole.q)
        np.testing.assert_array_equal(part.base_pos, whole.base_pos)
        np.testing.assert_array_equal(part.base_rot, whole.base_rot)
        assert part.errors == whole.errors
    assert n_long >= 1   # the slicing was exercised
