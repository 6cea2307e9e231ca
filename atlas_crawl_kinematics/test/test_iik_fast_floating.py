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
    monkeypatch.setattr(iik_fast_floating, "solve_fast_floating", lambda *a, **k: called.append(1))
    home = four_point_stance(model)
    s = IIKSolver(model, CONTACT_FRAMES, IIKParams.improved(), home, mode="floating")
    tg = model.forward(home).positions(list(CONTACT_FRAMES))
    s.solve(home, tg, base_pos=np.zeros(3), base_rot=np.eye(3))
    assert not called
