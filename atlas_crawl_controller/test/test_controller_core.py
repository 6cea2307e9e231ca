"""Controller core guarantees: finite, in-limit commands; reference rejection; watchdog; key-frame tracking."""
import numpy as np
import pytest

from atlas_crawl_controller.controller_core import CrawlControllerCore, Mode, Reference, State
from atlas_crawl_controller.parameters import ParameterError
from atlas_description import JOINT_NAMES, joint_limits

LO, HI, _, _ = joint_limits()
MID = 0.5 * (np.asarray(LO) + np.asarray(HI))
DT = 0.002


def make(**p):
    c = CrawlControllerCore()
    c.configure(p)
    c.activate(MID.copy())
    return c


def run(c, q_meas, t0, seconds, follow=True):
    t = t0
    q = q_meas.copy()
    cmd = None
    for _ in range(int(round(seconds / DT))):
        t += DT
        cmd = c.update(t, DT, q, np.zeros(28), np.zeros(28), np.array([0, 0, 0.5, 0, 0, 0, 1.0]))
        assert np.all(np.isfinite(cmd)) and np.all(cmd >= LO - 1e-12) and np.all(cmd <= HI + 1e-12)
        if follow:
            q = cmd.copy()
    return t, q, cmd


def test_keyframe_reaches_target_and_reports_reached():
    c = make()
    goal = MID + 0.2 * (np.asarray(HI) - MID)
    ok, why = c.set_reference(Reference(mode=Mode.KEYFRAME, sequence_id=7, joint_positions_rad=goal, duration_s=0.5))
    assert ok, why
    t, q, cmd = run(c, MID, 0.0, 0.3)
    assert c.status().state == State.TRACKING and not c.status().reached
    t, q, cmd = run(c, q, t, 0.5)
    st = c.status()
    assert st.reached and st.sequence_id == 7
    np.testing.assert_allclose(cmd, goal, atol=1e-9)


def test_partial_keyframe_keeps_other_joints():
    c = make()
    ok, _ = c.set_reference(Reference(mode=1, sequence_id=1, joint_names=["l_leg_kny"], joint_positions_rad=[1.0],
                                      duration_s=0.2))
    assert ok
    _, _, cmd = run(c, MID, 0.0, 0.5)
    k = JOINT_NAMES.index("l_leg_kny")
    assert cmd[k] == pytest.approx(1.0)
    np.testing.assert_allclose(np.delete(cmd, k), np.delete(MID, k))


@pytest.mark.parametrize("ref,needle", [
    (Reference(mode=1, joint_positions_rad=np.full(28, np.nan), duration_s=1.0), "non-finite"),
    (Reference(mode=1, joint_positions_rad=np.full(28, np.inf), duration_s=1.0), "non-finite"),
    (Reference(mode=1, joint_positions_rad=np.zeros(27), duration_s=1.0), "equal length"),
    (Reference(mode=1, joint_names=["nope"], joint_positions_rad=[0.0], duration_s=1.0), "unknown joints"),
    (Reference(mode=1, joint_names=["neck_ay", "neck_ay"], joint_positions_rad=[0, 0], duration_s=1.0), "duplicate"),
    (Reference(mode=1, joint_positions_rad=MID + 10.0, duration_s=1.0), "outside its limits"),
    (Reference(mode=1, joint_positions_rad=MID, duration_s=0.0), "duration"),
    (Reference(mode=1, joint_positions_rad=MID, duration_s=float("nan")), "duration"),
    (Reference(mode=1, joint_positions_rad=MID, duration_s=1e9), "max_duration"),
    (Reference(mode=2, contact_targets=np.zeros((4, 3)), duration_s=1.0), "IIK"),
    (Reference(mode=9, duration_s=1.0), "unknown reference mode"),
])
def test_bad_references_rejected_and_motion_unchanged(ref, needle):
    c = make()
    goal = MID + 0.1
    goal = np.clip(goal, LO, HI)
    assert c.set_reference(Reference(mode=1, sequence_id=3, joint_positions_rad=goal, duration_s=0.4))[0]
    t, q, _ = run(c, MID, 0.0, 0.1)
    ref.sequence_id, ref.sender = 99, "someone"
    ok, reason = c.set_reference(ref)
    assert not ok and needle in reason
    rej = c.last_rejection   # reported under the rejected reference's own id and sender (issue 11 row 3)
    assert (rej.sequence_id, rej.sender, rej.accepted, rej.reached, rej.reason) == (99, "someone", False, False, reason)
    assert c.status().accepted and c.status().sequence_id == 3   # the running motion's status is untouched
    assert c.rejected_references == 1
    _, _, cmd = run(c, q, t, 0.6)
    np.testing.assert_allclose(cmd, goal, atol=1e-9)   # the accepted motion carried on
    assert c.status().sequence_id == 3 and c.status().accepted


def test_nonfinite_and_malformed_state_hold_last_safe_command():
    c = make()
    assert c.set_reference(Reference(mode=1, sequence_id=1, joint_positions_rad=np.clip(MID + 0.3, LO, HI),
                                     duration_s=0.5))[0]
    t, q, cmd = run(c, MID, 0.0, 0.2)
    before = cmd.copy()
    for bad in (np.full(28, np.nan), np.full(28, np.inf), np.zeros(5)):
        out = c.update(t + DT, DT, bad)
        np.testing.assert_array_equal(out, before)
    out = c.update(float("nan"), DT, q)
    np.testing.assert_array_equal(out, before)
    assert c.status().nonfinite_inputs == 4


def test_output_always_within_limits_under_random_abuse():
    rng = np.random.default_rng(0)
    c = make(limit_margin_rad=0.01)
    t = 0.0
    for i in range(3000):
        t += DT
        if i % 50 == 0:
            tgt = rng.uniform(LO - 0.005, HI + 0.005)
            if rng.random() < 0.2:
                tgt[rng.integers(28)] = rng.choice([np.nan, np.inf, -np.inf, 1e6])
            c.set_reference(Reference(mode=1, sequence_id=i, joint_positions_rad=tgt, duration_s=rng.uniform(0.01, 1)))
        q = rng.uniform(LO - 1.0, HI + 1.0)
        if rng.random() < 0.05:
            q[rng.integers(28)] = np.nan
        cmd = c.update(t, DT, q)
        assert np.all(np.isfinite(cmd))
        assert np.all(cmd >= np.asarray(LO) + 0.01 - 1e-12) and np.all(cmd <= np.asarray(HI) - 0.01 + 1e-12)


def test_activation_from_out_of_range_or_nan_state_is_clamped():
    c = CrawlControllerCore()
    c.configure()
    q = np.asarray(HI) + 1.0
    q[0] = np.nan
    cmd = c.activate(q)
    assert np.all(np.isfinite(cmd)) and np.all(cmd <= HI) and np.all(cmd >= LO)


def test_rate_limit_bounds_command_steps():
    c = make(max_command_velocity_radps=1.0, velocity_limit_scale=1.0)
    goal = np.asarray(LO) + 0.01
    assert c.set_reference(Reference(mode=1, sequence_id=1, joint_positions_rad=goal, duration_s=0.05))[0]
    prev = MID.copy()
    t = 0.0
    for _ in range(200):
        t += DT
        cmd = c.update(t, DT, prev).copy()
        assert np.max(np.abs(cmd - prev)) <= 1.0 * DT + 1e-12
        prev = cmd


def test_watchdog_holds_last_pose_and_recovers():
    c = make(watchdog_timeout_s=0.2)
    goal = np.clip(MID + 0.05, LO, HI)
    assert c.set_reference(Reference(mode=1, sequence_id=1, joint_positions_rad=goal, duration_s=0.2))[0]
    t, q, cmd = run(c, MID, 0.0, 0.3)
    assert c.status().state == State.TRACKING
    t, q, cmd = run(c, q, t, 0.2)
    st = c.status()
    assert st.state == State.WATCHDOG_HOLD and "watchdog" in st.reason
    np.testing.assert_allclose(cmd, goal, atol=1e-9)
    # keep-alive returns to HOLDING; a new key-frame tracks again
    assert c.set_reference(Reference(mode=Mode.HOLD, sequence_id=2))[0]
    t, q, cmd = run(c, q, t, 0.01)
    assert c.status().state == State.HOLDING
    assert c.set_reference(Reference(mode=1, sequence_id=3, joint_positions_rad=MID, duration_s=0.1))[0]
    t, q, cmd = run(c, q, t, 0.01)
    assert c.status().state == State.TRACKING


def test_inactive_rejects_and_outputs_last_command():
    c = make()
    c.deactivate()
    ok, why = c.set_reference(Reference(mode=1, joint_positions_rad=MID, duration_s=1.0))
    assert not ok and "inactive" in why
    out = c.update(0.1, DT, MID + 0.1)
    assert np.all(np.isfinite(out))


def test_configure_validates_parameters():
    c = CrawlControllerCore()
    with pytest.raises(ParameterError):
        c.configure({"watchdog_timeout_s": -1.0})
    with pytest.raises(ParameterError):
        c.configure({"iik_rate_hz": 1000.0, "update_rate_hz": 250.0})
    c.configure({"reached_tolerance_rad": 0.02})
    assert c.set_params({"max_command_velocity_radps": float("nan")}) is not None
    assert c.params["reached_tolerance_rad"] == 0.02


def test_cartesian_mode_with_plugged_solver_interpolates_between_solves():
    calls = []

    def solver(q_seed, pose, targets, stance, com):
        calls.append(targets.copy())
        q = q_seed.copy()
        q[0] = np.clip(targets[0, 0], LO[0], HI[0])  # toy: joint 0 follows the LW x target
        return q, 3, 0.001, 0.05

    def fk(q, pose):
        p = np.zeros((4, 3))
        p[0, 0] = q[0]
        return p

    c = make(iik_rate_hz=50.0, update_rate_hz=500.0)
    c.set_cartesian_solver(solver, fk)
    tg = np.zeros((4, 3))
    tg[0, 0] = 0.3
    ok, why = c.set_reference(Reference(mode=2, sequence_id=5, contact_targets=tg, duration_s=0.5))
    assert ok, why
    t, q, cmd = run(c, MID, 0.0, 1.0)
    assert 20 <= len(calls) <= 60   # ~50 Hz over 0.5 s, not every 2 ms update
    assert cmd[0] == pytest.approx(0.3, abs=1e-6)
    assert c.status().iterations == 3 and c.status().reached


def test_foreign_sender_refused_while_owner_motion_runs():
    """Ownership: a second sender's reference is refused, naming the owner, until the owner's motion ends plus
    reference_owner_lease_s; afterwards it is accepted."""
    c = make(reference_owner_lease_s=0.5)
    goal = np.clip(MID + 0.1, LO, HI)
    assert c.set_reference(Reference(mode=1, sequence_id=1, joint_positions_rad=goal, duration_s=0.4,
                                     sender="gait_sequencer"))[0]
    t, q, _ = run(c, MID, 0.0, 0.1)
    other = Reference(mode=1, sequence_id=1, joint_positions_rad=MID, duration_s=0.4, sender="teleop")
    ok, reason = c.set_reference(other)
    assert not ok and "owned by 'gait_sequencer'" in reason and "'teleop'" in reason
    assert c.status().accepted and c.status().sender == "gait_sequencer"
    ok, _ = c.set_reference(Reference(mode=0, sequence_id=0, sender="teleop"))   # a foreign HOLD too
    assert not ok
    t, q, _ = run(c, q, t, 0.5)            # motion ends at 0.4 s (+ SmoothMove stretch), lease still running
    assert not c.set_reference(other)[0]
    t, q, _ = run(c, q, t, 1.5)            # lease over
    assert c.set_reference(other)[0]


def test_expected_stance_follows_the_running_reference():
    """The gait phase's expected contacts (state estimator prior): a key-frame reference's stance once it starts."""
    c = make()
    assert c.expected_stance.tolist() == [True] * 4
    ok, why = c.set_reference(Reference(mode=Mode.KEYFRAME, sequence_id=1, joint_positions_rad=MID.copy(),
                                        duration_s=0.2, stance=[False, True, True, True]))
    assert ok, why
    assert c.expected_stance.tolist() == [True] * 4          # queued, not started
    run(c, MID, 0.0, 0.01)
    assert c.expected_stance.tolist() == [False, True, True, True]
    ok, why = c.set_reference(Reference(mode=Mode.KEYFRAME, sequence_id=2, joint_positions_rad=MID.copy(),
                                        duration_s=0.2, stance=[True, False]))
    assert not ok and "stance" in why


def _kf(seq, goal, T=0.2, queue=False):
    return Reference(mode=Mode.KEYFRAME, sequence_id=seq, joint_positions_rad=goal, duration_s=T, queue=queue)


def test_queued_reference_starts_when_the_running_motion_is_reached():
    """Queueing: a queued key-frame waits for the running one to be reached and starts at the next update (one
    period, no round trip); a later queued one replaces it; a direct reference preempts the motion and drops it, and
    a HOLD keeps the motion and drops it; with no motion running a queued reference starts at once."""
    c = make()
    a, b, b2 = (np.clip(MID + d, LO, HI) for d in (0.1, 0.2, -0.1))
    assert c.set_reference(_kf(1, a))[0]
    t, q, _ = run(c, MID, 0.0, 0.1)
    assert c.set_reference(_kf(2, b, queue=True))[0]
    assert c.set_reference(_kf(3, b2, queue=True))[0]                   # replaces 2
    assert c.status().sequence_id == 1 and not c.status().reached
    seen, t_end1 = [], None
    for _ in range(200):
        t, q, _ = run(c, q, t, DT)
        st = c.status()
        seen.append(st.sequence_id)
        if st.sequence_id == 1 and st.reached and t_end1 is None:
            t_end1 = t
        if st.sequence_id == 3:
            break
    assert 2 not in seen and seen[-1] == 3 and t_end1 is not None
    assert t - t_end1 == pytest.approx(DT)                              # started one period after 1 was reached
    assert not c.status().reached
    t, q, cmd = run(c, q, t, 0.5)
    assert c.status().reached and c.status().sequence_id == 3
    np.testing.assert_allclose(cmd, b2, atol=1e-9)
    # a direct reference preempts and drops the queued one
    assert c.set_reference(_kf(4, a, T=0.4))[0]
    t, q, _ = run(c, q, t, 0.05)
    assert c.set_reference(_kf(5, b, queue=True))[0]
    assert c.set_reference(_kf(6, b2))[0]
    t, q, _ = run(c, q, t, 1.0)
    assert c.status().sequence_id == 6 and c.status().reached
    # a HOLD keeps the running motion and drops the queued one
    assert c.set_reference(_kf(8, b, T=0.4))[0]
    t, q, _ = run(c, q, t, 0.05)
    assert c.set_reference(_kf(9, a, queue=True))[0]
    assert c.set_reference(Reference(mode=Mode.HOLD, sequence_id=0))[0]
    t, q, cmd = run(c, q, t, 1.0)
    assert c.status().sequence_id == 8 and c.status().reached
    np.testing.assert_allclose(cmd, b, atol=1e-9)
    # nothing running: a queued reference starts at once
    assert c.set_reference(_kf(7, a, queue=True))[0]
    t, q, _ = run(c, q, t, DT)
    assert c.status().sequence_id == 7
