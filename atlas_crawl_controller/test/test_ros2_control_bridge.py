"""The exact Python call sequence of the ros2_control plugin (atlas_crawl_ros2_control/CrawlController), without ROS.

The C++ plugin only ever calls what these tests call, in this order (see ros2_control_bridge's docstring), so the
Python side of the full stack is covered by the default suite even where controller_manager is not installed.
"""
import numpy as np
import pytest
import yaml

from atlas_crawl_controller import ros2_control_bridge as rb
from atlas_crawl_controller.controller_core import State
from atlas_crawl_controller.parameters import ParameterError, config_path
from atlas_description import JOINT_NAMES, joint_limits

DT = 0.004


def _ptrs(b):
    return [a.__array_interface__["data"][0] for a in (b.position, b.velocity, b.effort, b.pelvis, b.command,
                                                         b.status)]


def _configured():
    b = rb.Ros2ControlBridge({"update_rate_hz": 250.0}, cartesian=False)
    return b


def _step(b, t, q=None):
    """What update() does: copy state in place, one Python call."""
    if q is not None:
        b.position[:] = q
    return b.update(t, DT)


def test_configure_exposes_names_and_fixed_buffers():
    b = _configured()
    assert b.joint_names == list(JOINT_NAMES)
    with open(config_path("crawl_controller_parameters.yaml")) as f:
        yaml_names = set(yaml.safe_load(f)["crawl_controller"].keys())
    assert set(b.parameter_names) == yaml_names  # what the plugin forwards from its ROS parameters
    for a, n in ((b.position, 28), (b.velocity, 28), (b.effort, 28), (b.pelvis, 7), (b.command, 28),
                 (b.status, len(rb.STATUS_FIELDS))):
        assert a.dtype == np.float64 and a.flags["C_CONTIGUOUS"] and a.shape == (n,)
    assert b.status[rb.STATUS_FIELDS.index("state")] == State.INACTIVE


def test_invalid_parameters_fail_configure_with_reason():
    with pytest.raises(ParameterError, match="iik_rate_hz"):
        rb.Ros2ControlBridge({"update_rate_hz": 100.0, "iik_rate_hz": 200.0})
    with pytest.raises(ParameterError):
        rb.Ros2ControlBridge({"watchdog_timeout_s": -1.0})


def test_plugin_call_sequence_tracks_a_keyframe_and_keeps_buffers():
    b = _configured()
    ptrs = _ptrs(b)
    lo, hi, _, _ = joint_limits()
    q0 = np.clip(np.zeros(28), lo, hi)
    b.position[:] = q0
    b.activate()
    np.testing.assert_allclose(b.command, q0)
    assert b.status[rb.STATUS_FIELDS.index("state")] == State.HOLDING

    rc = _step(b, 0.0, q0)
    assert rc & rb.RC_COMMAND and not rc & (rb.RC_EXCEPTION | rb.RC_NONFINITE)

    j = JOINT_NAMES.index("l_arm_shx")
    target = float(np.clip(-0.5, lo[j], hi[j]))
    assert b.set_reference(1, 7, ["l_arm_shx"], [target], 0.4, [], [True] * 4, False)
    t = 0.0
    q = q0.copy()
    changed_seen = False
    for _ in range(400):
        t += DT
        rc = _step(b, t, q)
        assert rc & rb.RC_COMMAND
        changed_seen |= bool(rc & rb.RC_STATUS_CHANGED)
        assert np.all(np.isfinite(b.command))
        q = b.command.copy()          # perfect position servo (what mock_components does)
    assert changed_seen
    assert b.command[j] == pytest.approx(target, abs=1e-6)
    assert b.status[rb.STATUS_FIELDS.index("sequence_id")] == 7
    assert b.status[rb.STATUS_FIELDS.index("reached")] == 1.0
    assert _ptrs(b) == ptrs            # the plugin's raw pointers stay valid


def test_plugin_passes_the_queue_flag():
    """The plugin's call with ControllerReference.queue (its last argument): a queued key-frame starts the period
    the running one is reached, not when it arrives."""
    b = _configured()
    lo, hi, _, _ = joint_limits()
    q = np.clip(np.zeros(28), lo, hi)
    b.position[:] = q
    b.activate()
    j = JOINT_NAMES.index("l_arm_shx")
    first, second = (float(np.clip(v, lo[j], hi[j])) for v in (-0.3, 0.2))
    assert b.set_reference(1, 1, ["l_arm_shx"], [first], 0.2, [], [True] * 4, False, "seq", False)
    t, ids = 0.0, []
    for k in range(200):
        t += DT
        _step(b, t, q)
        q = b.command.copy()
        if k == 5:
            assert b.set_reference(1, 2, ["l_arm_shx"], [second], 0.2, [], [True] * 4, False, "seq", True)
        ids.append((int(b.status[rb.STATUS_FIELDS.index("sequence_id")]),
                    bool(b.status[rb.STATUS_FIELDS.index("reached")])))
    assert ids[6] == (1, False) and (1, True) in ids            # 1 ran to its end while 2 waited
    assert ids.index((1, True)) + 1 == ids.index((2, False))     # 2 started the period after
    assert b.command[j] == pytest.approx(second, abs=1e-6)


def test_rejected_reference_reports_reason_and_sequence_id():
    b = _configured()
    b.activate()
    _step(b, 0.0)
    running = b.status.copy()
    assert not b.set_reference(1, 42, ["no_such_joint"], [0.1], 1.0, [], [True] * 4, False, "intruder")
    assert "unknown joints" in b.rejected_reason
    # the rejection is the host's to publish under id 42 / sender 'intruder'; the running motion's status and reason
    # stay untouched (the plugin once published the intruder's reason with the running motion's statuses)
    np.testing.assert_array_equal(b.status, running)
    assert "unknown joints" not in b.reason and b.status[rb.STATUS_FIELDS.index("accepted")] == 1.0
    assert b.core.last_rejection.sequence_id == 42 and b.core.last_rejection.sender == "intruder"
    assert not b.set_reference(1, 43, list(JOINT_NAMES), [float("nan")] * 28, 1.0, [], [True] * 4, False)
    assert "non-finite" in b.rejected_reason
    # Cartesian without the solver plugged in: rejected with that reason, nothing moves
    before = b.command.copy()
    assert not b.set_reference(2, 44, [], [], 1.0, [0.0] * 12, [True] * 4, True)
    assert "IIK" in b.rejected_reason
    _step(b, DT)
    np.testing.assert_array_equal(b.command, before)


def test_core_exception_and_nonfinite_leave_command_untouched(monkeypatch):
    b = _configured()
    b.activate()
    _step(b, 0.0)
    before = b.command.copy()

    def boom(*a, **k):
        raise RuntimeError("injected")
    monkeypatch.setattr(b.core, "update", boom)
    rc = b.update(DT, DT)
    assert rc & rb.RC_EXCEPTION and not rc & rb.RC_COMMAND
    assert "injected" in b.last_error
    np.testing.assert_array_equal(b.command, before)

    monkeypatch.setattr(b.core, "update", lambda *a, **k: np.full(28, np.nan))
    rc = b.update(2 * DT, DT)
    assert rc & rb.RC_NONFINITE and not rc & rb.RC_COMMAND
    np.testing.assert_array_equal(b.command, before)


def test_nonfinite_state_holds_last_safe_command():
    b = _configured()
    b.activate()
    _step(b, 0.0)
    before = b.command.copy()
    b.position[3] = np.nan                   # what the plugin writes when a state interface has no value
    rc = b.update(DT, DT)
    assert rc & rb.RC_COMMAND
    np.testing.assert_array_equal(b.command, before)
    assert b.status[rb.STATUS_FIELDS.index("nonfinite_inputs")] == 1


def test_runtime_parameters_validated_and_applied():
    b = _configured()
    assert b.set_params({"update_rate_hz": 250.0, "watchdog_timeout_s": 3.0}) == ""
    assert b.core.params["watchdog_timeout_s"] == 3.0
    reason = b.set_params({"update_rate_hz": 250.0, "iik_rate_hz": 500.0})
    assert "iik_rate_hz" in reason
    assert b.core.params["iik_rate_hz"] == 50.0   # unchanged


def test_deactivate_reports_inactive_and_rejects_references():
    b = _configured()
    b.activate()
    _step(b, 0.0)
    b.deactivate()
    assert b.status[rb.STATUS_FIELDS.index("state")] == State.INACTIVE
    assert not b.set_reference(0, 1, [], [], 0.0, [], [True] * 4, False)
    assert "inactive" in b.rejected_reason


def _cartesian_bridge():
    """Bridge with the crawl tracker plugged in, activated in the crawl stance (first key-frame of crawl_forward)
    with the pelvis placed so the lowest contact touches z = 0."""
    pytest.importorskip("atlas_crawl_kinematics.com_modulation")
    from atlas_crawl_controller.keyframes import named_pose
    b = rb.Ros2ControlBridge({"update_rate_hz": 250.0}, cartesian=True)
    assert b.cartesian_enabled
    q0, (w, x, y, z) = named_pose("crawl_forward")
    pose = np.array([0.0, 0.0, 0.0, x, y, z, w])
    pose[2] = -b.core._law.contact_fk(q0, pose)[:, 2].min()
    b.position[:] = q0
    b.pelvis[:] = pose
    b.activate()
    assert _step(b, 0.0) & rb.RC_COMMAND
    return b, q0, pose


def test_plugin_call_sequence_tracks_a_cartesian_reference_with_the_crawl_tracker():
    """MODE_CARTESIAN runs the crawl tracker (the runner's law): swing LW 5 cm forward over 0.5 s with the other
    three in stance and CoM modulation, perfect position servo. The tracker's solution puts every contact within
    5 mm of its target in the IIK's world, commands stay finite and in limits, the status reports the solve; then a key-frame, the
    other reference type, drives the same core."""
    b, q0, pose = _cartesian_bridge()
    ptrs = _ptrs(b)
    law = b.core._law
    tg = law.contact_fk(q0, pose)
    tg[0, 0] += 0.05
    assert b.set_reference(2, 11, [], [], 0.5, tg.reshape(-1), [False, True, True, True], True), b.reason
    lo, hi, _, _ = joint_limits()
    t, q = 0.0, q0.copy()
    for _ in range(150):
        t += DT
        assert _step(b, t, q) & rb.RC_COMMAND
        assert np.all(np.isfinite(b.command)) and np.all(b.command >= lo) and np.all(b.command <= hi)
        q = b.command.copy()
    s = b.core.status()
    assert s.sequence_id == 11 and s.accepted and s.reached and s.iterations >= 1, s
    tr = b.core._tracker
    r = tr.last.result
    from atlas_crawl_controller.robot_info import CONTACT_FRAMES
    k = law.model.forward(r.q)
    P = (r.base_rot @ k.positions(list(CONTACT_FRAMES)).T).T + r.base_pos
    # the IIK's targets are the plan's mapped into its own world (tracking/world_drift.py): the fixed pelvis pose of
    # this harness makes the sensed contacts move with the joints, which reads as a few mm of drift
    wd = tr.world_drift
    mine = tg.copy()
    for i, (yaw, shift) in enumerate(wd.limb):
        mine[i, :2] = wd.inverse(yaw, shift, tg[i, :2])
    assert np.max(np.linalg.norm(P - mine, axis=1)) < 0.005, P - mine
    assert np.max(np.linalg.norm(mine - tg, axis=1)) < 0.02, mine - tg
    assert np.max(np.abs(b.command - q0)) > 0.01          # the joints moved to make the step
    j = JOINT_NAMES.index("neck_ay")
    target = float(np.clip(q[j] + 0.1, lo[j], hi[j]))
    assert b.set_reference(1, 12, ["neck_ay"], [target], 0.3, [], [True] * 4, False), b.reason
    for _ in range(100):
        t += DT
        _step(b, t, q)
        q = b.command.copy()
    assert b.command[j] == pytest.approx(target, abs=1e-6) and b.core.status().reached
    assert b.core._tracker is None or b.core._cart is None   # the key-frame ended the Cartesian run
    assert _ptrs(b) == ptrs


def test_cartesian_reference_outside_the_workspace_or_without_support_is_rejected():
    """Issue 11: targets 1e6 m away (accepted before, the pelvis then dropped to 0.20 m) and a stance set that
    cannot hold the robot are rejected with the reason; nothing moves."""
    b, q0, pose = _cartesian_bridge()
    tg = b.core._law.contact_fk(q0, pose)
    before = b.command.copy()
    assert not b.set_reference(2, 21, [], [], 1.0, (tg + 1e6).reshape(-1), [True] * 4, True)
    assert "reachable workspace" in b.rejected_reason or "reachable" in b.rejected_reason, b.rejected_reason
    far = tg.copy()
    far[0, 0] += 3.0
    assert not b.set_reference(2, 22, [], [], 1.0, far.reshape(-1), [False, True, True, True], True)
    assert "LW" in b.rejected_reason and "reachable" in b.rejected_reason, b.rejected_reason
    assert not b.set_reference(2, 23, [], [], 1.0, tg.reshape(-1), [True, True, False, False], True)
    assert "cannot hold the robot" in b.rejected_reason and "at least 3" in b.rejected_reason, b.rejected_reason
    assert "diagonal pair" in b.rejected_reason, b.rejected_reason
    # a diagonal pair is the dynamic crawl's swing support: accepted
    assert b.core._law.check(tg, [True, False, False, True], pose) is None
    assert b.core._law.check(tg, [False, True, True, False], pose) is None
    line = tg.copy()
    line[:, 1] = 0.0
    assert not b.set_reference(2, 24, [], [], 1.0, line.reshape(-1), [True] * 4, True)
    assert "collinear" in b.rejected_reason, b.rejected_reason
    deep = tg.copy()
    deep[2, 2] = -0.5
    assert not b.set_reference(2, 25, [], [], 1.0, deep.reshape(-1), [True] * 4, True)
    assert "below the ground" in b.rejected_reason, b.rejected_reason
    _step(b, DT)
    np.testing.assert_array_equal(b.command, before)


def test_cartesian_reference_shape_fields_are_checked_and_shape_the_segment():
    """ControllerReference.swing_lift_m / com_support (session 13): bad values are refused with the reason and
    change nothing; a good swing follows the swing arc to its apex, and a shift plans the CoM in com_support."""
    from atlas_crawl_controller.cartesian import SegmentPlan
    from atlas_crawl_kinematics.cartesian_gait import swing_arc
    b, q0, pose = _cartesian_bridge()
    tg = b.core._law.contact_fk(q0, pose)
    tgt = tg.copy()
    tgt[0, 0] += 0.1
    swing = [False, True, True, True]
    for lift, sup, why in (([0.5, 0, 0, 0], [], "swing_lift_m"), ([float("nan"), 0, 0, 0], [], "swing_lift_m"),
                           ([-0.1, 0, 0, 0], [], "swing_lift_m"), ([0.05, 0, 0], [], "swing_lift_m"),
                           ([0.05, 0, 0, 0], [True, True, False, False], "subset of the stance"),
                           ([0.05, 0, 0, 0], [False, True, False, True], "com_support")):
        assert not b.set_reference(2, 31, [], [], 0.5, tgt.reshape(-1), swing, True, swing_lift_m=lift,
                                   com_support=sup), (lift, sup)
        assert why in b.rejected_reason, (why, b.rejected_reason)
    assert b.set_reference(2, 32, [], [], 0.5, tgt.reshape(-1), swing, True, swing_lift_m=[0.05, 0, 0, 0])
    plan = SegmentPlan(tg, tgt, swing, 0.5, tg[:, :2].mean(axis=0), 0.04, swing_lift_m=[0.05, 0, 0, 0])
    for t in (0.0, 0.125, 0.25, 0.5):
        assert np.allclose(plan.sample(t).targets[0], swing_arc(tg[0], tgt[0], 0.05, t / 0.5))
        assert np.allclose(plan.sample(t).targets[1:], plan.p0[1:] + plan._s(t) * (tgt[1:] - tg[1:]))
    assert plan.sample(0.25).targets[0, 2] == pytest.approx(tg[0, 2] + 0.05 + 0.5 * (tgt[0, 2] - tg[0, 2]))
    # a shift: all four stay put, the CoM goes to the margin point of the tripod that remains (not the centroid)
    shift = SegmentPlan(tg, tg, [True] * 4, 0.2, tg[:, :2].mean(axis=0), 0.04, com_support=swing)
    four = SegmentPlan(tg, tg, [True] * 4, 0.2, tg[:, :2].mean(axis=0), 0.04)
    assert shift.sample(0.1).stance.all()
    assert np.linalg.norm(shift.c1 - four.c1) > 0.02
    from atlas_crawl_kinematics.support import stability_margin, support_polygon
    assert stability_margin(shift.c1, support_polygon(tg[1:, :2])) >= 0.04 - 1e-6


def test_cartesian_reference_heading_is_checked_and_carried_across_segments():
    """ControllerReference.heading_rad (session 24): a non-finite heading is refused with the reason and changes
    nothing; a given one ends the segment there, and the next segment starts from it (the gait generator's planned
    heading, which in a diagonal turn leads the contact pattern's by half a step's yaw)."""
    from atlas_crawl_controller.cartesian import SegmentPlan, pattern_heading_rad
    b, q0, pose = _cartesian_bridge()
    tg = b.core._law.contact_fk(q0, pose)
    _step(b, DT)
    before = b.command.copy()
    for bad in ([float("nan")], [float("inf")]):
        assert not b.set_reference(2, 41, [], [], 0.5, tg.reshape(-1), [True] * 4, False, heading_rad=bad)
        assert "heading_rad must be finite" in b.rejected_reason, b.rejected_reason
    np.testing.assert_array_equal(b.command, before)
    h_pat = pattern_heading_rad(tg)
    assert b.set_reference(2, 42, [], [], 0.5, tg.reshape(-1), [True] * 4, False, heading_rad=[h_pat + 0.1])
    _step(b, DT)
    plan = b.core._cart["plan"]
    assert plan.h0 == pytest.approx(h_pat) and plan.h1 == pytest.approx(h_pat + 0.1)
    assert plan.sample(0.5).heading_rad == pytest.approx(h_pat + 0.1)
    assert b.set_reference(2, 43, [], [], 0.5, tg.reshape(-1), [True] * 4, True)     # no heading: the pattern's
    for _ in range(int(0.6 / DT)):
        _step(b, DT)
    nxt = b.core._cart["plan"]
    assert nxt is not plan and nxt.h0 == pytest.approx(h_pat + 0.1) and nxt.h1 == pytest.approx(h_pat)
    # the shortest way round: from +3.0 to -3.0 rad turns +0.28 rad, not -6
    wrap = SegmentPlan(tg, tg, [True] * 4, 1.0, None, heading0_rad=3.0, heading1_rad=-3.0)
    assert wrap.dh == pytest.approx(2 * np.pi - 6.0) and wrap.sample(1.0).heading_rad == pytest.approx(3.0 + wrap.dh)


def test_cartesian_reference_world_drift_bound_is_checked_and_reaches_the_tracker():
    """ControllerReference.drift_correction_max_m (session 27): a negative or non-finite bound is refused with the
    reason and changes nothing; a given one is the tracker's world-drift bound while that reference runs, and a
    reference without one gives the tracker back its own (crawl_tracker world_drift.max_correction_m)."""
    b, q0, pose = _cartesian_bridge()
    tg = b.core._law.contact_fk(q0, pose)
    _step(b, DT)
    before = b.command.copy()
    for bad in ([-0.01], [float("nan")], [float("inf")]):
        assert not b.set_reference(2, 51, [], [], 0.5, tg.reshape(-1), [True] * 4, False, drift_correction_max_m=bad)
        assert "drift_correction_max_m must be finite and >= 0" in b.rejected_reason, b.rejected_reason
    np.testing.assert_array_equal(b.command, before)
    assert b.set_reference(2, 52, [], [], 0.5, tg.reshape(-1), [True] * 4, False, drift_correction_max_m=[0.004])
    for _ in range(int(0.1 / DT)):
        _step(b, DT)
    wd = b.core._tracker.world_drift
    assert wd.max_correction_m == pytest.approx(0.004)
    assert b.set_reference(2, 53, [], [], 0.5, tg.reshape(-1), [True] * 4, True)     # none asked: the tracker's own
    for _ in range(int(0.7 / DT)):
        _step(b, DT)
    assert b.core._tracker.world_drift is wd and wd.max_correction_m == wd.default_max_correction_m
    assert wd.default_max_correction_m == pytest.approx(b.core._law.params["world_drift.max_correction_m"])


# ------------------------------------------------------------------------------------------ hosted state estimator
def _estimating(**kw):
    return rb.Ros2ControlBridge({"update_rate_hz": 250.0}, cartesian=False, pose_source="estimate", **kw)


def test_estimate_pose_source_checks_its_arguments():
    with pytest.raises(ValueError, match="pose_source"):
        rb.Ros2ControlBridge({"update_rate_hz": 250.0}, pose_source="gps")
    with pytest.raises(ValueError, match="name=value"):
        _estimating(estimator_overrides=["alignment_s"])
    with pytest.raises(ParameterError, match="alignment_s"):
        _estimating(estimator_overrides=["alignment_s=-1"])
    b = _estimating(estimator_overrides=["alignment_s=0.5", "leg.ground_height_source=flat"])
    assert b.estimator.params["alignment_s"] == 0.5 and b.estimator.params["leg.ground_height_source"] == "flat"
    assert b.odom.shape == (rb.ODOM_SIZE,) and b.imu.shape == (6,) and np.all(np.isnan(b.pelvis))


def test_hosted_estimator_initialises_at_the_first_pose_then_ignores_the_topic():
    """At rest: no estimate (NaN: the core holds) until a pose arrived and the alignment ended; then the estimate is
    the initial pose, and later poses on the topic change nothing."""
    from atlas_crawl_kinematics.iik import four_point_stance
    from atlas_crawl_kinematics.model import RobotModel
    from atlas_crawl_kinematics.robot_source import atlas_urdf_string
    from atlas_crawl_kinematics.rotations import quat_xyzw_to_R
    q0 = four_point_stance(RobotModel(atlas_urdf_string()))
    b = _estimating(estimator_overrides=["alignment_s=0.5"])     # no height map: z is not measured
    b.position[:] = q0
    b.velocity[:] = 0.0
    b.activate()
    pose0 = np.array([0.3, -0.2, 0.6, 0.0, np.sin(0.6), 0.0, np.cos(0.6)])     # pitched, as a crawl stance
    b.imu[:3] = 0.0
    b.imu[3:] = quat_xyzw_to_R(pose0[3:]).T @ [0.0, 0.0, 9.81]                 # specific force at rest
    t = 0.0
    for _ in range(10):                                  # no pose received yet: nothing estimated, the core holds
        t += DT
        assert _step(b, t) & rb.RC_COMMAND
    assert not b.estimator.initialised and np.all(np.isnan(b.odom))
    b.pelvis[:] = pose0
    for _ in range(int(0.5 / DT) + 5):
        t += DT
        assert _step(b, t) & rb.RC_COMMAND
    assert np.all(np.isfinite(b.odom))
    assert np.allclose(b.odom[:3], pose0[:3], atol=0.01)
    assert abs(abs(float(np.dot(b.odom[3:7], pose0[3:]))) - 1.0) < 1e-3
    b.pelvis[:] = [5.0, 5.0, 5.0, 0.0, 0.0, 0.0, 1.0]    # the topic is not read once running
    for _ in range(25):
        t += DT
        _step(b, t)
    assert np.allclose(b.odom[:3], pose0[:3], atol=0.01)


def test_hosted_estimator_holds_on_nonfinite_imu_and_reports_its_exception(monkeypatch):
    b = _estimating(estimator_overrides=["alignment_s=0.1", "input_timeout_s=0.05"])
    b.position[:] = 0.0
    b.velocity[:] = 0.0
    b.activate()
    b.pelvis[:] = [0, 0, 0.6, 0, 0, 0, 1]
    b.imu[:] = [0, 0, 0, 0, 0, 9.81]
    t = 0.0
    for _ in range(40):
        t += DT
        _step(b, t)
    assert np.all(np.isfinite(b.odom))
    b.imu[:] = np.nan                                    # NaN IMU: not integrated; the estimate goes stale -> NaN
    for _ in range(20):
        t += DT
        assert _step(b, t) & rb.RC_COMMAND
    assert np.all(np.isnan(b.odom)) and "non-finite" in b.estimator.est.reason

    def boom(*a, **k):
        raise RuntimeError("kaput")
    monkeypatch.setattr(b.estimator, "step", boom)
    before = b.command.copy()
    rc = _step(b, t + DT)
    assert rc & rb.RC_EXCEPTION and not rc & rb.RC_COMMAND and "kaput" in b.last_error
    assert np.array_equal(b.command, before) and np.all(np.isnan(b.odom))


def test_hosted_estimator_records_its_inputs_for_a_replay(tmp_path):
    """estimator_record_path: every update after the first pose, what the estimator was fed and what it estimated;
    a bad path or a record without the estimator is refused with the reason."""
    from atlas_crawl_controller.estimation.recorder import load_record
    with pytest.raises(ValueError, match="pose_source 'estimate'"):
        rb.Ros2ControlBridge({"update_rate_hz": 250.0}, estimator_record_path=str(tmp_path / "r.npz"))
    with pytest.raises(ValueError, match="not writable|does not exist"):
        _estimating(estimator_record_path=str(tmp_path / "nope" / "r.npz"))
    with pytest.raises(ValueError, match=".npz"):
        _estimating(estimator_record_path=str(tmp_path / "r.csv"))
    path = tmp_path / "r.npz"
    b = _estimating(estimator_overrides=["alignment_s=0.1"], estimator_record_path=str(path))
    b.position[:] = 0.1
    b.velocity[:] = 0.0
    b.activate()
    b.imu[:] = [0.01, 0.0, 0.0, 0.0, 0.0, 9.81]
    t = 0.0
    for _ in range(5):                                   # no pose yet: nothing recorded
        t += DT
        _step(b, t)
    b.pelvis[:] = [0.1, 0.2, 0.6, 0, 0, 0, 1]
    for _ in range(100):
        t += DT
        _step(b, t)
    b.deactivate()
    r = load_record(str(path))
    assert r["t"].shape == (100,) and np.all(np.diff(r["t"]) > 0)
    assert np.allclose(r["q"], 0.1) and np.allclose(r["imu"][:, 0], 0.01) and np.all(r["stance"] == 1)
    assert np.allclose(r["pose_in"][-1], [0.1, 0.2, 0.6, 0, 0, 0, 1])
    assert np.all(np.isnan(r["estimate"][0])) and np.all(np.isfinite(r["estimate"][-1]))   # aligning, then running
    assert not bool(r["truncated"])


def test_input_recorder_bounds_its_rows_and_flushes_in_the_background(tmp_path):
    from atlas_crawl_controller.estimation.recorder import InputRecorder, load_record
    rec = InputRecorder(str(tmp_path / "x.npz"), flush_period_s=1.0, max_rows=3000)
    z = np.zeros
    for i in range(3100):
        rec.append(i * 0.004, z(28), z(28), z(4), z(6), z(7), z(7))
        if i == 600:                       # 2.4 s: a background flush has been started
            rec._writer.join()
            assert load_record(str(tmp_path / "x.npz"))["t"].shape[0] >= 250
    rec.close()
    r = load_record(str(tmp_path / "x.npz"))
    assert r["t"].shape == (3000,) and bool(r["truncated"]) and rec.rows == 3000
    np.savez(tmp_path / "bad.npz", t=np.zeros(3))
    with pytest.raises(ValueError, match="no column 'q'"):
        load_record(str(tmp_path / "bad.npz"))
