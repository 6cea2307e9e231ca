"""The crawl tracker's policies (plain classes, no ROS, no simulator) and its parameter file."""
import math
from types import SimpleNamespace

import numpy as np
import pytest

from atlas_crawl_controller.parameters import ParameterError
from atlas_crawl_controller.tracking import (CoMGate, CoMIntegral, CoMRateLimit, GroundSeek, LiftLookahead, Press,
                                             ServoSagIntegral, TouchdownHold, TrackerError, parameter_set,
                                             seed_source, stance_hold, support_source)

ALL = np.ones(4, bool)


def _sample(stance, targets=None):
    return SimpleNamespace(stance=np.asarray(stance, bool), targets=np.zeros((4, 3)) if targets is None else targets)


class _Plan:
    """Stance all four until t_lift, then LW (index 0) swings."""

    def __init__(self, t_lift):
        self.t_lift = t_lift

    def sample(self, t):
        return _sample([t < self.t_lift, True, True, True])


def test_parameter_file_defaults_and_validation():
    p = parameter_set().values()
    assert p["solve_rate_hz"] == 50.0 and p["seed"] == "internal" and p["sag.ki_per_s"] == 2.0
    for bad in ({"seed": "guess"}, {"stance_source": "psychic"}, {"root": "head"}, {"com.margin_m": -0.1},
                {"orientation_hold_frames": ["utorso", "utorso"]}):
        with pytest.raises(ParameterError):
            parameter_set().values(bad)


def test_factories_refuse_unknown_names():
    for f, bad in ((seed_source, "guess"), (stance_hold, "glue"), (support_source, "wishes")):
        with pytest.raises(TrackerError):
            f(bad)
    for bad in (lambda: CoMGate(-1.0), lambda: CoMRateLimit(float("nan")), lambda: ServoSagIntegral(-2.0),
                lambda: Press(-0.01), lambda: GroundSeek(0.1, -1.0), lambda: LiftLookahead(float("inf"))):
        with pytest.raises(TrackerError):
            bad()


def test_com_gate_holds_until_margin_or_timeout():
    """Before LW lifts, the gate holds while the measured CoM is outside the RW-LK-RK triangle, and lets go on
    the timeout; with the CoM well inside it does not hold."""
    contacts = np.array([[0.6, 0.2, 0], [0.6, -0.2, 0], [0.0, 0.25, 0], [0.0, -0.25, 0]], float)
    plan = _Plan(t_lift=0.02)
    gate = CoMGate(margin_m=0.03, timeout_s=0.05)
    outside = SimpleNamespace(com_xy=np.array([0.55, 0.15]), contacts=contacts)
    holds = [gate.holds(plan, 0.0, 10.0, 0.02, plan.sample(0.0), outside) for _ in range(5)]
    # 0.02 s per solve: held 3 solves (0.06 s >= timeout), released once, then the next lift's wait starts
    assert holds == [True, True, True, False, True] and gate.timeouts() == 1
    inside = SimpleNamespace(com_xy=np.array([0.2, -0.05]), contacts=contacts)
    gate2 = CoMGate(margin_m=0.03, timeout_s=1.0)
    assert not gate2.holds(plan, 0.0, 10.0, 0.02, plan.sample(0.0), inside)
    assert gate2.waits_s == [0.0]
    assert not CoMGate(0.0).holds(plan, 0.0, 10.0, 0.02, plan.sample(0.0), outside)   # disabled


def test_lookahead_drops_the_limb_that_lifts_within_the_horizon():
    la = LiftLookahead(0.6)
    assert la(_Plan(0.5), 0.0, 10.0, 0.02, ALL.copy()).tolist() == [False, True, True, True]
    assert la(_Plan(0.9), 0.0, 10.0, 0.02, ALL.copy()).all()                  # beyond the horizon
    assert LiftLookahead(0.0)(_Plan(0.1), 0.0, 10.0, 0.02, ALL.copy()).all()  # disabled


def test_com_rate_limit_moves_at_the_rate():
    rl = CoMRateLimit(0.5)
    goal = np.array([1.0, 0.0])
    off = rl.offset(goal, np.zeros(2), 0.02)          # starts at the measured CoM, moves 0.5 m/s * 0.02 s
    np.testing.assert_allclose(rl.c_lim, [0.01, 0.0])
    np.testing.assert_allclose(goal + off, rl.c_lim)
    for _ in range(200):
        off = rl.offset(goal, np.zeros(2), 0.02)
    np.testing.assert_allclose(off, 0.0)               # reached: no offset


def test_servo_sag_integral_starts_bumpless_and_is_bounded():
    s = ServoSagIntegral(2.0, 0.15)
    q = np.zeros(3)
    s.start(np.array([0.05, -0.3, 0.0]), q)           # servo offsets that hold the settled pose
    np.testing.assert_allclose(s.value, [0.05, -0.15, 0.0])
    cmd = s.command(np.array([0.1, 0.0, 0.0]), q, 0.001)
    np.testing.assert_allclose(cmd, [0.1 + 0.05 + 2.0 * 0.001 * 0.1, -0.15, 0.0])
    for _ in range(100000):
        s.command(np.ones(3), q, 0.001)
    assert np.all(np.abs(s.value) <= 0.15)
    off = ServoSagIntegral(0.0)
    off.start(np.ones(3), q)
    np.testing.assert_array_equal(off.command(np.full(3, 0.2), q, 0.001), np.full(3, 0.2))


def test_servo_sag_integral_only_on_its_joints():
    s = ServoSagIntegral(2.0, 0.15, mask=[True, False, True])
    q = np.zeros(3)
    s.start(np.array([0.05, 0.1, -0.02]), q)
    np.testing.assert_allclose(s.value, [0.05, 0.0, -0.02])     # no start offset outside the mask either
    for _ in range(1000):
        cmd = s.command(np.full(3, 0.1), q, 0.001)
    assert s.value[1] == 0.0 and cmd[1] == 0.1 and s.value[0] > 0.05 and s.value[2] > -0.02
    with pytest.raises(TrackerError, match="mask"):
        ServoSagIntegral(2.0, 0.15, mask=[True, False]).start(np.zeros(3), q)


def test_sag_joints_are_checked_and_default_to_the_legs_and_shoulder_roll():
    from atlas_crawl_controller.tracking.servo_sag import sag_mask
    from atlas_crawl_kinematics.model import RobotModel
    from atlas_crawl_kinematics.robot_source import atlas_urdf_string
    from atlas_crawl_controller.tracking import CrawlTracker
    model = RobotModel(atlas_urdf_string())
    joints = parameter_set().defaults()["sag.joints"]
    m = sag_mask(model, joints)
    names = np.array(model.joint_names)
    assert set(names[m]) == {n for n in names if "_leg_" in n} | {"l_arm_shx", "r_arm_shx"}
    with pytest.raises(TrackerError, match="nope"):
        sag_mask(model, ["l_leg_kny", "nope"])
    with pytest.raises(TrackerError, match="nope"):
        CrawlTracker.from_params(model, np.zeros(model.n_joints), 0.004, {"sag.joints": ["nope"]})


def test_com_integral_and_press_and_seek():
    ci = CoMIntegral(0.5, 0.06)
    np.testing.assert_array_equal(ci.offset(), 0.0)
    ci.update(np.array([1.0, 0.0]), np.zeros(2), 0.02)
    np.testing.assert_allclose(ci.offset(), [0.01, 0.0])
    for _ in range(100):
        ci.update(np.array([1.0, 0.0]), np.zeros(2), 0.02)
    np.testing.assert_allclose(ci.offset(), [0.06, 0.0])
    tg = Press(0.01).apply(np.zeros((4, 3)), _sample([False, True, True, True]))
    np.testing.assert_allclose(tg[:, 2], [0.0, -0.01, -0.01, -0.01])
    gs = GroundSeek(0.1, 0.05)
    touch = np.array([True, True, False, True])
    for _ in range(100):
        tg = gs.apply(np.zeros((4, 3)), _sample(ALL), _sample(ALL), touch, 0.02)
    np.testing.assert_allclose(tg[:, 2], [0.0, 0.0, -0.05, 0.0])    # only the untouched stance limb, capped
    tg = gs.apply(np.zeros((4, 3)), _sample(ALL), _sample(ALL), ALL, 0.02)
    assert tg[2, 2] == pytest.approx(-0.048)                         # released at the same speed


def test_touchdown_hold_keeps_the_touchdown_point():
    h = TouchdownHold()
    sites = np.array([[0.6, 0.2, 0], [0.6, -0.2, 0], [0.0, 0.25, 0], [0.0, -0.25, 0]], float)
    planned = sites + [0.03, 0.01, 0.0]
    out = h.apply(planned.copy(), _sample(ALL), _sample(ALL), sites)
    np.testing.assert_allclose(out[:, :2], sites[:, :2])            # held where they touched down
    sw = [False, True, True, True]
    out = h.apply(planned.copy(), _sample(sw), _sample(sw), sites)
    np.testing.assert_allclose(out[0], planned[0])                   # the swing limb follows its plan
    moved = sites.copy()
    moved[0] += [0.2, 0.0, 0.0]
    out = h.apply(planned.copy(), _sample(ALL), _sample(ALL), moved)
    np.testing.assert_allclose(out[0, :2], moved[0, :2])             # new touchdown point after the swing
    assert math.isfinite(out.sum())


def test_a_solve_sliced_over_updates_gives_the_whole_solves_results():
    """iik.iterations_per_update (issue 10 real-time budget): a tracker that runs at most 2 IIK iterations per update
    spreads a long solve over several updates and ends with the same solutions, solve for solve, as one that solves
    whole; its command only reaches each solution later, and stays finite."""
    pytest.importorskip("atlas_crawl_kinematics.iik_fast_floating")
    from atlas_crawl_kinematics import iik_fast
    if not iik_fast.HAVE_NUMBA:
        pytest.skip("slicing needs the compiled kernel")
    from atlas_crawl_controller.cartesian import CartesianLaw, SegmentPlan
    from atlas_crawl_controller.keyframes import named_pose
    whole_law = CartesianLaw(params={"iik.iterations_per_update": 0})
    sliced_law = CartesianLaw(whole_law.model, params={"iik.iterations_per_update": 2})
    q0, (w, x, y, z) = named_pose("crawl_forward")
    pose = np.array([0.0, 0.0, 0.0, x, y, z, w])
    pose[2] = -whole_law.contact_fk(q0, pose)[:, 2].min()
    p0 = whole_law.contact_fk(q0, pose)
    p1 = p0.copy()
    p1[0, 0] += 0.08
    sensed = whole_law.sensed(q0, pose)                       # held fixed: both trackers see the same inputs
    runs = {}
    for name, law in (("whole", whole_law), ("sliced", sliced_law)):
        tr = law.new_tracker(0.004, q0, True)
        plan = SegmentPlan(p0, p1, [False, True, True, True], 0.4, sensed.com_xy)
        tr.start(plan, sensed, q0)
        results, cmds, spans, ticks = [], [], [], 0
        while not tr.finished(plan):
            cmds.append(tr.step(ticks * 0.004, plan, sensed))
            ticks += 1
            spans.append(tr.solving)
            if tr.solved:
                results.append(tr.last.result)
        runs[name] = (results, np.array(cmds), spans)
    (rw, cw, sw), (rs, cs, ss) = runs["whole"], runs["sliced"]
    assert len(rw) == len(rs) >= 5
    for a, b in zip(rw, rs):
        assert a.iik.iterations == b.iik.iterations
        np.testing.assert_array_equal(a.q, b.q)
    assert max(r.iik.iterations for r in rw) > 2              # some solve needed more than one update
    assert sum(ss) > sum(sw)                                  # ... and ran over several updates
    assert np.all(np.isfinite(cs)) and 0 <= len(cs) - len(cw) <= 2   # a last pending solve ends the motion later
    assert not np.array_equal(cs[:len(cw)], cw)               # the sliced command lags
