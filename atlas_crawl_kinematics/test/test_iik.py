"""IIK solver (thesis Algorithm 2) and CoM-modulated IIK: convergence, limits, robustness, stance holding."""

import numpy as np
import pytest

from atlas_crawl_kinematics.iik import IIKParams, IIKSolver, IIKStatus, InvalidTargetError, four_point_stance
from atlas_description import CONTACT_FRAMES
from atlas_crawl_kinematics.support import stability_margin, support_polygon


def _targets(model, home, rng, sigma=0.25, root=None):
    qt = model.clip_to_limits(home + rng.normal(0, sigma, model.n_joints))
    return model.forward(qt).positions(CONTACT_FRAMES, root=root)


def test_thesis_defaults(model):
    p = IIKParams()
    assert (p.locality_threshold_rad, p.convergence_m, p.no_progress_m, p.no_progress_iterations, p.c_inv) == (
        0.4, 0.01, 0.001, 3, 1e-3)


@pytest.mark.parametrize("mode,root", [("pelvis", None), ("root", "l_knee_contact"), ("floating", None)])
def test_improved_iik_reaches_5mm(model, mode, root):
    rng = np.random.default_rng(3)
    home = four_point_stance(model)
    s = IIKSolver(model, params=IIKParams.improved(), mode=mode, root=root)
    errs = []
    for _ in range(15):
        tg = _targets(model, home, rng, root=root)
        kw = dict(base_pos=np.zeros(3), base_rot=np.eye(3)) if mode == "floating" else {}
        r = s.solve(home, tg, **kw)
        assert np.all(r.q >= model.lower) and np.all(r.q <= model.upper) and np.all(np.isfinite(r.q))
        errs.append(r.error_m)
    assert np.median(errs) < 0.005
    assert max(errs) < 0.01


def test_thesis_iik_converges_to_1cm_on_small_moves(model):
    rng = np.random.default_rng(4)
    home = four_point_stance(model)
    s = IIKSolver(model, params=IIKParams(nullspace_gain=0.0))
    res = [s.solve(home, _targets(model, home, rng, sigma=0.1)) for _ in range(10)]
    assert np.median([r.error_m for r in res]) < 0.012


def test_locality_threshold_respected(model):
    home = four_point_stance(model)
    tg = model.forward(home).positions(CONTACT_FRAMES) + np.array([0.2, 0.0, 0.1])
    s = IIKSolver(model, params=IIKParams(max_iterations=1, nullspace_gain=0.0, no_progress_iterations=10))
    r = s.solve(home, tg)
    assert np.abs(r.q - home).max() <= 0.4 + 1e-12


def test_unreachable_target_gives_closest_finite_in_limit_config(model):
    home = four_point_stance(model)
    tg = model.forward(home).positions(CONTACT_FRAMES)
    tg[0] += [3.0, 0.0, 0.0]  # 3 m away: unreachable
    s = IIKSolver(model, params=IIKParams.improved())
    r = s.solve(home, tg)
    assert r.status is not IIKStatus.CONVERGED
    assert np.all(np.isfinite(r.q)) and np.all(r.q >= model.lower) and np.all(r.q <= model.upper)
    # closest: the left wrist got nearer to the target than it started, and the error reported is the real one
    k = model.forward(r.q)
    d0 = np.linalg.norm(model.forward(home).position("l_wrist_contact") - tg[0])
    d1 = np.linalg.norm(k.position("l_wrist_contact") - tg[0])
    assert d1 < d0 - 0.2
    assert r.error_m == pytest.approx(np.sqrt(((k.positions(CONTACT_FRAMES) - tg) ** 2).sum(1)).max())


def test_joint_limits_inside_solve_beat_clamping_afterwards(model):
    """A target that needs joints beyond their limits: locking joints inside the solve does at least as well."""
    rng = np.random.default_rng(8)
    home = four_point_stance(model)
    better = 0
    for _ in range(8):
        tg = _targets(model, home, rng, sigma=0.6)
        inside = IIKSolver(model, params=IIKParams.improved(limit_passes=4)).solve(home, tg)
        after = IIKSolver(model, params=IIKParams.improved(limit_passes=0)).solve(home, tg)
        for r in (inside, after):
            assert np.all(r.q >= model.lower) and np.all(r.q <= model.upper)
        better += inside.error_m <= after.error_m + 1e-4
    assert better >= 6


def test_task_weights_prioritise_stance(model):
    home = four_point_stance(model)
    tg = model.forward(home).positions(CONTACT_FRAMES)
    tg[0] += [1.5, 0, 0]  # unreachable swing target for LW; the others stay
    s = IIKSolver(model, params=IIKParams.improved())
    heavy = s.solve(home, tg, weights=[1, 100, 100, 100])
    light = s.solve(home, tg, weights=[100, 1, 1, 1])
    k_h, k_l = model.forward(heavy.q), model.forward(light.q)
    err = lambda k: np.linalg.norm(k.positions(CONTACT_FRAMES)[1:] - tg[1:], axis=1).max()
    assert err(k_h) < err(k_l)


def test_wrist_orientation_task(model):
    home = four_point_stance(model)
    k0 = model.forward(home)
    from scipy.spatial.transform import Rotation

    Rt = Rotation.from_rotvec([0.0, 0.0, 0.4]).as_matrix() @ k0.rotation("l_wrist_contact")
    s = IIKSolver(model, params=IIKParams.improved(orientation_weight_m_per_rad=0.2))
    r = s.solve(home, k0.positions(CONTACT_FRAMES), orientations={"l_wrist_contact": Rt})
    Rr = model.forward(r.q).rotation("l_wrist_contact")
    ang = np.linalg.norm(Rotation.from_matrix(Rt @ Rr.T).as_rotvec())
    assert ang < 0.05
    assert r.error_m < 0.01


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_bad_targets_refused(model, bad):
    home = four_point_stance(model)
    tg = model.forward(home).positions(CONTACT_FRAMES)
    tg[2, 1] = bad
    s = IIKSolver(model)
    with pytest.raises(InvalidTargetError):
        s.solve(home, tg)
    q = home.copy()
    q[0] = bad
    with pytest.raises(InvalidTargetError):
        s.solve(q, model.forward(home).positions(CONTACT_FRAMES))
    with pytest.raises(InvalidTargetError):
        s.solve(home, tg[:3])
    with pytest.raises(InvalidTargetError):
        s.solve(home, model.forward(home).positions(CONTACT_FRAMES), com_target=[0, bad, 0])
    with pytest.raises(InvalidTargetError):
        IIKParams(c_inv=bad).validate()


def test_com_modulation_floating_base_holds_stance_and_moves_com(model):
    """Tripod stance (RW, LK, RK held in the world), LW swing; CoM pushed to a point inside the tripod."""
    home = four_point_stance(model)
    k = model.forward(home)
    from scipy.spatial.transform import Rotation

    base_rot = Rotation.from_euler("y", 1.25).as_matrix()  # pelvis pitched forward, as on all fours
    base_pos = np.array([0.0, 0.0, 0.55])
    world = k.positions(CONTACT_FRAMES) @ base_rot.T + base_pos
    stance = world[1:]
    tri = support_polygon(stance[:, :2])
    inside = stance[:, :2].mean(axis=0)  # tripod centroid
    com0 = base_rot @ k.com() + base_pos
    targets = world.copy()
    targets[0] += [0.10, 0.0, 0.05]  # swing the left hand forward and up
    s = IIKSolver(model, params=IIKParams.improved(), mode="floating")
    r = s.solve(home, targets, weights=[1, 10, 10, 10], com_target=np.r_[inside, 0.0], base_pos=base_pos,
                base_rot=base_rot)
    kk = model.forward(r.q)
    w_new = kk.positions(CONTACT_FRAMES) @ r.base_rot.T + r.base_pos
    slip = np.linalg.norm(w_new[1:] - stance, axis=1).max()
    com = r.base_rot @ kk.com() + r.base_pos
    assert slip < 0.005
    assert np.linalg.norm(com[:2] - inside) < 0.01
    assert stability_margin(com[:2], tri) > stability_margin(com0[:2], tri) - 1e-9
    assert stability_margin(com[:2], tri) > 0.02
