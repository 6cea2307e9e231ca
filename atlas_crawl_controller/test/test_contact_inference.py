"""Contact estimators on synthetic crawl-like data (known ground truth), plus support and scoring helpers."""
import numpy as np
import pytest

from atlas_crawl_controller.contact_inference import (ContactInference, EffortEstimator, HeightEstimator,
                                                      VelocityEstimator, default_parameters, precision_recall,
                                                      support_from_contacts)
from atlas_description import JOINT_INDEX

DT = 0.01


def synthetic_crawl(seconds=8.0, period=2.0, seed=0):
    """Each limb swings for 25 % of the period in turn (LW, RK, RW, LK), moving 0.15 m forward with a 5 cm lift."""
    rng = np.random.default_rng(seed)
    n = int(seconds / DT)
    t = np.arange(n) * DT
    base = np.array([[0.3, 0.2, 0.0], [0.3, -0.2, 0.0], [-0.3, 0.15, 0.0], [-0.3, -0.15, 0.0]])
    order = [0, 3, 1, 2]
    pos = np.zeros((n, 4, 3))
    truth = np.ones((n, 4), bool)
    eff = np.zeros((n, 28))
    for k in range(n):
        cyc, ph = divmod(t[k], period)
        for slot, limb in enumerate(order):
            s0 = slot * period / 4
            x_done = cyc * 0.15
            if ph < s0:
                s = 0.0
            elif ph < s0 + period / 4:
                s = (ph - s0) / (period / 4)
            else:
                s = 1.0
            swing = 0.0 < s < 1.0
            lift = 0.05 * np.sin(np.pi * s) if swing else 0.0
            pos[k, limb] = base[limb] + [x_done + 0.15 * (0.5 - 0.5 * np.cos(np.pi * s)), 0, lift]
            truth[k, limb] = not swing or lift < 0.003
        # torques: loaded limbs carry ~ 80 N m on their load joint, swinging ones ~ 15 N m
        for limb, joint in enumerate(["l_arm_shx", "r_arm_shx", "l_leg_lhy", "r_leg_lhy"]):
            eff[k, JOINT_INDEX[joint]] = (80.0 if truth[k, limb] else 15.0) + rng.normal(0, 3)
    pos += rng.normal(0, 0.00005, pos.shape)  # 0.05 mm: FK of measured joints is nearly exact
    return t, pos, eff, truth


def run(est, t, pos, eff):
    return np.array([est.update(t[k], pos[k], eff[k]).in_contact for k in range(len(t))])


def test_height_estimator_high_precision_recall():
    t, pos, eff, truth = synthetic_crawl()
    pred = run(HeightEstimator(0.01, 0.005), t, pos, eff)
    s = precision_recall(pred, truth)["all"]
    assert s["precision"] > 0.95 and s["recall"] > 0.95


def test_velocity_estimator_detects_swing():
    t, pos, eff, truth = synthetic_crawl()
    pred = run(VelocityEstimator(window_s=2.5, ratio=0.1, min_max_speed_mps=0.02, filter_tau_s=0.05), t, pos, eff)
    s = precision_recall(pred[300:], truth[300:])["all"]
    assert s["precision"] > 0.9 and s["recall"] > 0.85
    # every limb is detected in swing at some point
    assert np.all((~pred[300:]).any(axis=0))


def test_velocity_estimator_at_rest_is_stance():
    est = VelocityEstimator(2.0, 0.1, 0.02, 0.0)
    p = np.zeros((4, 3))
    for k in range(100):
        out = est.update(k * DT, p + 1e-5 * k)
    assert out.in_contact.all()


def test_effort_estimator_with_hysteresis():
    t, pos, eff, truth = synthetic_crawl()
    est = EffortEstimator([["l_arm_shx"], ["r_arm_shx"], ["l_leg_lhy"], ["r_leg_lhy"]], [50] * 4, [40] * 4, 0.0)
    pred = run(est, t, pos, eff)
    s = precision_recall(pred, truth)["all"]
    assert s["precision"] > 0.95 and s["recall"] > 0.95
    # hysteresis: a value between off and on keeps the previous state
    est.reset()
    e = np.zeros(28)
    e[JOINT_INDEX["l_arm_shx"]] = 45.0
    assert est.update(0.0, np.zeros((4, 3)), e).in_contact[0]        # starts in stance, 45 >= off
    e[JOINT_INDEX["l_arm_shx"]] = 10.0
    assert not est.update(0.01, np.zeros((4, 3)), e).in_contact[0]
    e[JOINT_INDEX["l_arm_shx"]] = 45.0
    assert not est.update(0.02, np.zeros((4, 3)), e).in_contact[0]   # 45 < on: stays swing


def test_nan_input_keeps_previous_decision_with_zero_confidence():
    est = HeightEstimator(0.03, 0.01)
    p = np.zeros((4, 3))
    p[1, 2] = 0.2
    a = est.update(0.0, p)
    p[1, 2] = np.nan
    b = est.update(0.01, p)
    assert a.in_contact[1] == b.in_contact[1] and b.confidence[1] == 0.0
    v = VelocityEstimator(1.0, 0.1, 0.02, 0.0)
    v.update(0.0, np.zeros((4, 3)))
    out = v.update(0.01, np.full((4, 3), np.nan))
    assert out.confidence.sum() == 0.0


def test_bad_shapes_raise():
    with pytest.raises(ValueError):
        HeightEstimator(0.03, 0.01).update(0.0, np.zeros((3, 3)))
    with pytest.raises(ValueError):
        EffortEstimator([["nope"]] * 4, [1] * 4, [1] * 4, 0.0)
    with pytest.raises(ValueError):
        EffortEstimator([["l_arm_shx"]] * 4, [1] * 4, [2] * 4, 0.0)


def test_contact_inference_method_switch_and_rejection():
    ci = ContactInference()
    assert ci.method == "fusion"
    p = default_parameters()
    assert ci.set_params(p.replace(method="velocity")) is None and ci.method == "velocity"
    reason = ci.set_params(p.replace(method="effort", **{"effort.off_threshold_nm": [100.0] * 4}))
    assert reason and "threshold" in reason and ci.method == "velocity"


def test_support_from_contacts():
    pos = np.array([[0.3, 0.2, 0], [0.3, -0.2, 0], [-0.3, 0.15, 0], [-0.3, -0.15, 0]])
    s = support_from_contacts([True] * 4, pos, [0.0, 0.0, 0.5])
    assert s.statically_stable and s.margin_m == pytest.approx(0.1744, abs=1e-3)  # side edge
    s = support_from_contacts([False, True, True, True], pos, [0.25, 0.15, 0.5])
    assert not s.statically_stable and s.margin_m < 0
    s = support_from_contacts([False] * 4, pos, [0, 0, 0])
    assert not s.statically_stable and s.polygon_xy.shape == (0, 2)


def test_precision_recall_values():
    truth = np.array([[1, 1, 0, 0]] * 4, bool)
    pred = np.array([[1, 0, 1, 0]] * 4, bool)
    s = precision_recall(pred, truth)
    assert s["all"]["precision"] == 0.5 and s["all"]["recall"] == 0.5
    assert s["LW"]["precision"] == 1.0 and np.isnan(s["RK"]["precision"])


def _fusion(**kw):
    from atlas_crawl_controller.contact_inference import FusionEstimator
    args = dict(switch_probability=0.0135, phase_logodds=0.3, clearance_threshold_m=0.0004,
                clearance_scale_m=0.0001, max_evidence_logodds=11.8, hysteresis=0.06)
    args.update(kw)
    return FusionEstimator(**args)


def test_fusion_follows_clearance_and_phase():
    f = _fusion()
    down, up = np.zeros(4), np.array([0.0, 0.02, 0.0, 0.0])       # RW lifted 2 cm
    for k in range(5):
        out = f.update(0.01 * k, None, clearance=down, expected=[True] * 4)
    assert out.in_contact.all()
    for k in range(5, 10):
        out = f.update(0.01 * k, None, clearance=up, expected=[True, False, True, True])
    assert list(out.in_contact) == [True, False, True, True] and out.confidence[1] > 0.9
    # clearance right at the threshold: the gait phase decides
    mid = np.full(4, 0.0004)
    g = _fusion()
    for k in range(50):
        out = g.update(0.01 * k, None, clearance=mid, expected=[False, True, True, True])
    assert list(out.in_contact) == [False, True, True, True]


def test_fusion_holds_on_nonfinite_and_rejects_bad_parameters():
    f = _fusion()
    f.update(0.0, None, clearance=np.array([0.0, 0.05, 0.0, 0.0]))
    f.update(0.01, None, clearance=np.array([0.0, 0.05, 0.0, 0.0]))
    before = f.state.copy()
    out = f.update(0.02, None, clearance=np.array([np.nan, np.inf, 0.0, 0.0]))
    assert list(out.in_contact[:2]) == list(before[:2]) and out.confidence[0] == 0.0 and out.confidence[1] == 0.0
    for bad in (dict(switch_probability=0.0), dict(switch_probability=0.6), dict(clearance_scale_m=0.0),
                dict(hysteresis=0.5)):
        with pytest.raises(ValueError):
            _fusion(**bad)


def test_clearance_is_taken_above_the_height_map_where_it_is_fresh_and_known():
    """ContactEvidence: with a fresh map the clearance is the lowest point's height above the map's ground under
    it; a stale map, a NaN cell or ground_height_source flat fall back to the plane at ground_height_m."""
    from atlas_crawl_controller.contact_inference import default_parameters, make_evidence
    from atlas_crawl_controller.height_map import HeightMap
    from atlas_crawl_kinematics.model import RobotModel
    from atlas_crawl_kinematics.robot_source import atlas_urdf_string
    urdf = atlas_urdf_string()
    model = RobotModel(urdf)
    q = np.zeros(model.n_joints)
    pose = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])

    def ramp(t, nan_at=None):        # ground z = 0.1 x (a slope), 10 cm cells over ±1.5 m
        n = 31
        xs = -1.5 + 0.1 * np.arange(n)
        h = np.tile(0.1 * xs, (n, 1))
        if nan_at is not None:
            h[:, :] = np.nan
        return HeightMap.from_fields(t, 0.1, n, n, -1.5, -1.5, h.ravel())

    ev = make_evidence(default_parameters(), model, urdf)
    flat = ev.update(0.0, q, pose).clearance
    assert ev.ground_reason == "no height map" and np.all(np.isfinite(flat))
    ev.set_ground_map(ramp(0.0))
    e = ev.update(0.5, q, pose)
    assert ev.ground_reason == ""
    assert np.allclose(e.clearance, flat - 0.1 * e.point[:, 0], atol=1e-9)   # bilinear on a plane is exact
    e = ev.update(3.0, q, pose)                                                # the map is now 3 s old (> 2 s)
    assert ev.ground_reason == "height map stale" and np.allclose(e.clearance, flat)
    ev.set_ground_map(ramp(3.0, nan_at="all"))
    e = ev.update(3.1, q, pose)
    assert ev.ground_reason == "height map unknown under a limb" and np.allclose(e.clearance, flat)
    ev_flat = make_evidence(default_parameters().replace(ground_height_source="flat"), model, urdf)
    ev_flat.set_ground_map(ramp(0.0))
    assert np.allclose(ev_flat.update(0.5, q, pose).clearance, flat)
    with pytest.raises(ValueError):
        make_evidence(default_parameters().replace(ground_height_source="lidar"), model, urdf)


def test_horizontal_speed_weight_separates_a_slide_from_a_lift():
    """ContactEvidence's velocity cue: the pelvis (and every limb with it) moving 0.3 m/s along the floor reads
    k × 0.3 m/s, moving up 0.3 m/s reads 0.3 m/s whatever k; k outside [0, 1] is refused."""
    from atlas_crawl_controller.contact_inference import default_parameters, make_evidence
    from atlas_crawl_kinematics.model import RobotModel
    from atlas_crawl_kinematics.robot_source import atlas_urdf_string
    urdf = atlas_urdf_string()
    model = RobotModel(urdf)
    q = np.zeros(model.n_joints)

    def speed(k, direction):
        ev = make_evidence(default_parameters().replace(**{"fusion.horizontal_speed_weight": k,
                                                           "fusion.speed_filter_tau_s": 0.0}), model, urdf)
        ev.update(0.0, q, np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]))
        step = 0.003 * np.asarray(direction, float)            # 0.3 m/s over 10 ms
        return ev.update(0.01, q, np.r_[np.array([0.0, 0.0, 1.0]) + step, 0.0, 0.0, 0.0, 1.0]).speed

    for k in (0.0, 0.4, 1.0):
        assert np.allclose(speed(k, [1, 0, 0]), 0.3 * k, atol=1e-9)
        assert np.allclose(speed(k, [0, 0, 1]), 0.3, atol=1e-9)
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="horizontal_speed_weight"):
            make_evidence(default_parameters().replace(**{"fusion.horizontal_speed_weight": bad}), model, urdf)
