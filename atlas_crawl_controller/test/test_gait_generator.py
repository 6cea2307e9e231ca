"""Plain-class tests of the closed-loop crawl gait generator (gait_generator/, issue 12 §1)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from atlas_crawl_controller.gait_generator import (CommandError, CoMPlan, CrawlCommand, CrawlGaitGenerator,
                                                   PlacementFeedback)
from atlas_crawl_controller.gait_generator.contact_sequence import ContactSequence
from atlas_crawl_controller.gait_generator.feedback import pelvis_heading_rad

C0 = np.array([[0.66, 0.22, 0.0], [0.66, -0.22, 0.0], [0.0, 0.26, 0.0], [0.0, -0.26, 0.0]])
COM0 = np.array([0.35, 0.0])


def Rz(a):
    """A crawling pelvis: pitched nose-down 1.25 rad (z axis forward-up), then yawed by a."""
    c, s = math.cos(a), math.sin(a)
    yaw = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    p = 1.25
    pitch = np.array([[math.cos(p), 0, math.sin(p)], [0, 1, 0], [-math.sin(p), 0, math.cos(p)]])
    return yaw @ pitch


def gen(cmd, cycles=2, **params):
    return CrawlGaitGenerator(C0, COM0, 0.0, cmd, cycles, params)


def test_forward_every_limb_moves_one_stride_per_cycle():
    g = gen(CrawlCommand(0.035, 0, 0), cycles=3)
    T = 4 * g.seq.step_s
    d = g.contacts[8][:, :2] - g.contacts[4][:, :2]          # second cycle: steady state
    assert np.allclose(d, [[0.035 * T, 0.0]] * 4, atol=1e-9)
    assert g.seq.groups == ((0,), (3,), (1,), (2,))          # LW, RK, RW, LK


def test_backward_reverses_order_and_moves_back():
    g = gen(CrawlCommand(-0.035, 0, 0), cycles=2)
    assert g.seq.groups == ((2,), (1,), (3,), (0,))
    assert g.contacts[-1][:, 0].mean() < C0[:, 0].mean() - 0.2


def test_turn_on_the_spot_rotates_each_limb_about_the_reference():
    g = gen(CrawlCommand(0, 0, 0.1), cycles=2)
    T = g.seq.step_s
    r0 = C0[:, :2].mean(axis=0)
    for k in range(g.n_steps):
        (li,) = g.seq.group(k)
        a = 0.1 * T * (k + 1)                                    # lands one step ahead of the reference
        R = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        assert np.allclose(g.contacts[k + 1][li, :2], r0 + R @ (C0[li, :2] - r0), atol=1e-9)
    assert np.allclose(g.ref[-1][0], r0, atol=1e-12)


def test_samples_hold_three_contacts_and_swing_one():
    g = gen(CrawlCommand(0.035, 0, 0))
    for t in np.linspace(0, g.duration_s, 157):
        s = g.sample(float(t))
        assert s.stance.sum() >= 3
        if s.swing >= 0:
            held = [i for i in range(4) if i != s.swing]
            k = g.seq.step_at(float(t))
            assert np.allclose(s.targets[held], g.contacts[k][held])


def test_com_target_respects_margin_before_every_lift():
    g = gen(CrawlCommand(0.035, 0, 0.05), cycles=2, margin_m=0.04)
    for k in range(g.n_steps):
        (li,) = g.seq.group(k)
        assert CoMPlan.margin(g.com_to[k], g.contacts[k], li) >= 0.04 - 1e-6
    cp = CoMPlan(0.04)
    li = 0
    assert cp.lift_allowed(cp.target(C0, li), C0, li, 0.03)
    assert not cp.lift_allowed(C0[li, :2], C0, li, 0.0)         # CoM over the lifting hand: no lift


def test_heading_correction_sign():
    """A robot yawed left (measured heading > desired) gets its pattern turned right, and vice versa, from the next
    cycle on (``feedback.every_cycles`` 1: the update comes at the cycle boundary, not within the cycle)."""
    for err, sign in ((0.05, -1), (-0.05, +1)):
        g = gen(CrawlCommand(0.035, 0, 0))
        k1 = g.steps_per_cycle                                  # first step of cycle 1
        g.observe(0.0, [0, 0, 0.5], Rz(0.0))                    # start hold: feedback starts
        th_nominal = g.ref[k1 + 1][1]
        for t in np.arange(g.seq.t_start_s, g.seq.step_start_s(k1), 0.1):
            g.observe(float(t), [0.0, 0.0, 0.5], Rz(err))      # yawed by err during cycle 0
            assert g.ref[k1 + 1][1] == th_nominal              # no update within the cycle
        g.observe(g.seq.step_start_s(k1) + 1e-3, [0.0, 0.0, 0.5], Rz(err))
        assert np.sign(g.ref[k1 + 1][1] - th_nominal) == sign
        assert abs(g.ref[k1 + 1][1] - th_nominal) <= g.p["feedback.max_heading_step_rad"] + 1e-12


def test_the_sequencer_and_the_sampling_runner_apply_one_feedback_law():
    """The same measurements give the same plan whether the host samples the plan (``observe`` every tick, the
    runner) or plans cycle by cycle (``track`` every tick + ``generator_cycle(feedback=True)`` at the boundary, the
    gait sequencer)."""
    from atlas_crawl_controller.cartesian import generator_cycle
    for cmd in (CrawlCommand(0.035, 0, 0), CrawlCommand(-0.035, 0, 0), CrawlCommand(0, 0, 0.1)):
        a, b = gen(cmd, cycles=3), gen(cmd, cycles=3)
        k1 = a.steps_per_cycle
        for t in np.arange(0.0, a.seq.step_start_s(k1), 0.05):
            xy, R = [0.01 * t, 0.004 * t, 0.5], Rz(0.01 * math.sin(t))          # drifting left, swaying
            a.observe(float(t), xy, R)
            b.track(float(t), xy, R, moving=b.seq.t_start_s <= t)
        t = a.seq.step_start_s(k1) + 1e-3
        a.observe(t, xy, R)
        b.track(t, xy, R)
        generator_cycle(b, 1, feedback=True)
        assert a.feedback.dtheta != 0.0 and (a.feedback.phi != 0.0 or np.any(a.feedback.delta != 0.0))
        for k in range(k1, a.n_steps + 1):
            assert np.allclose(a.contacts[k], b.contacts[k]) and np.allclose(a.ref[k][0], b.ref[k][0])
            assert a.ref[k][1] == pytest.approx(b.ref[k][1])


def test_the_desired_pose_advances_from_where_the_gait_starts_moving():
    """A host that first repositions the contacts (moving=False, 6 s) does not owe the command's turn over that time:
    the desired heading starts at the goal's start heading when the gait starts moving, then advances."""
    g = gen(CrawlCommand(0.0, 0.0, 0.1), cycles=3)
    g.track(0.0, [0.0, 0.0], Rz(0.0), moving=False)                 # goal start: the reference
    g.track(6.0, [0.02, 0.03], Rz(0.1), moving=True)                # after the reposition the gait starts moving
    fb = g.feedback
    assert fb.psi0 == pytest.approx(0.0) and fb.psi_d == pytest.approx(0.0)
    g.track(7.0, [0.02, 0.03], Rz(0.2))
    assert fb.psi_d == pytest.approx(0.1)
    g.track(8.0, [np.nan, 0.0], Rz(0.3))                            # non-finite: nothing recorded
    assert fb.psi_d == pytest.approx(0.1)


def test_lateral_correction_sign():
    fb = PlacementFeedback(heading_gain=0.0, lateral_gain_rad_per_m=2.0)
    fb.start([0, 0], Rz(0))
    fb.track(0.1, 0.1, [0.0, 0.04], Rz(0))                      # pelvis 4 cm left of the line
    _, phi, _ = fb.update(1.0)                                  # forward: steer right
    assert phi < 0
    _, phi, _ = fb.update(-1.0)                                 # backward: a CCW turn of the velocity moves it right
    assert phi > 0
    fb2 = PlacementFeedback(position_gain=0.5)
    fb2.start([0, 0], Rz(0))
    fb2.track(0.1, 0.1, [0.0, 0.04], Rz(0))
    _, phi, d = fb2.update(0.0)                                 # turn on the spot: shift back to the start point
    assert phi == 0 and d[1] < 0


def test_turn_position_hold_keeps_the_pelvis_on_its_circle_about_the_pivot():
    """Turning on the spot about a pivot 0.14 m ahead of the pelvis, a pelvis on its circle about the pivot is where
    it should be (no correction); held on its start point, the same pelvis reads as off by the chord."""
    pivot, wz, dt = np.array([0.14, 0.0]), 0.5, 0.1
    out = {}
    for name, pv in (("pivot", pivot), ("start point", None)):
        fb = PlacementFeedback(heading_gain=0.0, position_gain=0.5, max_position_step_m=1.0, max_total_position_m=1.0,
                               window_s=10.0, pivot_xy=pv)
        fb.start([0.0, 0.0], Rz(0.0))
        for i in range(1, 11):
            a = wz * dt * i
            p = pivot + np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]) @ -pivot
            fb.track(dt * i, dt, p, Rz(a), 0.0, 0.0, wz)
        out[name] = fb.update(0.0)[2]
    assert np.allclose(out["pivot"], 0.0, atol=1e-12)
    assert np.linalg.norm(out["start point"]) > 0.01
    with pytest.raises(ValueError):
        PlacementFeedback(pivot_xy=[np.nan, 0.0])


def test_nonfinite_measurement_changes_nothing():
    g = gen(CrawlCommand(0.035, 0, 0))
    g.observe(0.0, [0, 0, 0.5], Rz(0.0))
    before = [c.copy() for c in g.contacts[1:]]
    g.observe(g.seq.step_start_s(1) + 1e-3, [np.nan, 0, 0.5], Rz(0.0))
    assert all(np.allclose(a, b) for a, b in zip(before, g.contacts[1:]))


def test_pelvis_heading_of_crawling_pelvis():
    assert abs(pelvis_heading_rad(Rz(0.3)) - 0.3) < 1e-9


@pytest.mark.parametrize("cmd,why", [
    (CrawlCommand(float("nan"), 0, 0), "not finite"),
    (CrawlCommand(5.0, 0, 0), "exceeds the limit"),
    (CrawlCommand(0, 0, -9.0), "exceeds the limit"),
])
def test_bad_commands_rejected_with_reason(cmd, why):
    with pytest.raises(CommandError, match=why):
        gen(cmd)


def test_command_beyond_stride_or_turn_rejected():
    with pytest.raises(CommandError, match="max_stride_m"):
        gen(CrawlCommand(0.2, 0, 0), max_stride_m=0.3)
    with pytest.raises(CommandError, match="max_turn_rad_per_cycle"):
        gen(CrawlCommand(0, 0, 0.3), max_turn_rad_per_cycle=0.5)


def test_set_command_bad_changes_nothing_and_direction_change_refused():
    g = gen(CrawlCommand(0.035, 0, 0))
    plan = [c.copy() for c in g.contacts[1:]]
    with pytest.raises(CommandError):
        g.set_command(CrawlCommand(math.inf, 0, 0))
    with pytest.raises(CommandError, match="forward and backward"):
        g.set_command(CrawlCommand(-0.03, 0, 0))
    assert g.cmd == CrawlCommand(0.035, 0, 0)
    assert all(np.allclose(a, b) for a, b in zip(plan, g.contacts[1:]))
    back = gen(CrawlCommand(-0.03, 0, 0))
    back.set_command(CrawlCommand(0.0, 0, 0.05))          # no translation: either contact order serves (CrawlTo)
    with pytest.raises(CommandError, match="forward and backward"):
        back.set_command(CrawlCommand(0.02, 0, 0))


@settings(max_examples=25, deadline=None)
@given(vx=st.floats(-0.05, 0.05), vy=st.floats(-0.018, 0.018), wz=st.floats(-0.1, 0.1))   # within max_stride_m
def test_blend_commands_displace_pattern_by_command(vx, vy, wz):
    """Any blend: after each cycle the pattern reference has moved by the integrated command (exact chords)."""
    g = gen(CrawlCommand(vx, vy, wz), cycles=1)
    T = g.seq.step_s
    r, th = np.zeros(2), 0.0
    for _ in range(4):
        a = th + 0.5 * wz * T
        r = r + np.array([math.cos(a) * vx - math.sin(a) * vy, math.sin(a) * vx + math.cos(a) * vy]) * T
        th += wz * T
    assert np.allclose(g.ref[4][0] - g.ref[0][0], r, atol=1e-9)
    assert math.isclose(g.ref[4][1], th, abs_tol=1e-12)
    for k in range(4):                                            # limb of step k lands at ref(k + 1)
        r1, th1 = g.ref[k + 1]
        (li,) = g.seq.group(k)
        Rm = np.array([[math.cos(th1), -math.sin(th1)], [math.sin(th1), math.cos(th1)]])
        assert np.allclose(g.contacts[k + 1][li, :2], r1 + Rm @ g.placement.rel[li], atol=1e-9)
    assert all(g.sample(t).stance.sum() >= 3 for t in np.linspace(0, g.duration_s, 23))


def test_sequence_timing():
    s = ContactSequence(0.8, 0.6, 0.5)
    assert s.step_at(0.49) == -1 and s.step_at(0.5) == 0 and s.step_at(0.5 + 1.4 * 3 + 0.1) == 3


@pytest.mark.parametrize("vx", [0.035, -0.035, 0.0])
def test_resync_pulls_the_plan_back_to_a_lagging_robot(vx):
    """The robot's contacts lag the planned ones by 6 cm along the travel and 3 cm sideways at the cycle boundary:
    the rest of the plan moves by that offset (bounded in norm); what was already sent is not rewritten."""
    g = gen(CrawlCommand(vx, 0, 0.0 if vx else 0.1), cycles=3)
    k = 4
    before = [c.copy() for c in g.contacts]
    sign = math.copysign(1.0, vx) if vx else 1.0
    measured = before[k].copy()
    off = np.array([-sign * 0.06, 0.03])
    measured[:, :2] += off
    shift = g.resync(k, measured, max_shift_m=0.1)
    assert shift == pytest.approx(float(np.linalg.norm(off)))
    for j in range(k, len(g.contacts)):
        assert np.allclose(g.contacts[j][:, :2] - before[j][:, :2], [off] * 4, atol=1e-9)
    assert all(np.array_equal(g.contacts[j], before[j]) for j in range(k))
    g2 = gen(CrawlCommand(vx, 0, 0.0 if vx else 0.1), cycles=3)
    assert g2.resync(k, measured, max_shift_m=0.02) == pytest.approx(0.02)
    assert np.allclose(g2.contacts[k][:, :2] - before[k][:, :2], [off / np.linalg.norm(off) * 0.02] * 4)


def test_resync_deadband_keeps_the_pivot_through_small_errors_and_follows_a_slide():
    """A turn on the spot with a 6 cm dead-band: a 4 cm landing error moves nothing; a 10 cm slide moves the plan
    by the 4 cm beyond the dead-band, along the slide."""
    g = gen(CrawlCommand(0.0, 0, 0.1), cycles=3)
    k = 4
    before = [c.copy() for c in g.contacts]
    small = before[k].copy()
    small[:, :2] += [0.04, 0.0]
    assert g.resync(k, small, max_shift_m=0.15, deadband_m=0.06) == 0.0
    assert all(np.allclose(a, b) for a, b in zip(g.contacts, before))
    slide = before[k].copy()
    slide[:, :2] += [0.0, -0.10]
    assert g.resync(k, slide, max_shift_m=0.15, deadband_m=0.06) == pytest.approx(0.04)
    assert np.allclose(g.contacts[k][:, :2] - before[k][:, :2], [[0.0, -0.04]] * 4, atol=1e-9)


def test_resync_ignores_bad_measurements():
    g = gen(CrawlCommand(0.035, 0, 0), cycles=2)
    before = [c.copy() for c in g.contacts]
    bad = before[4].copy()
    bad[0, 0] = float("nan")
    assert g.resync(4, bad, 0.1) == 0.0
    assert g.resync(4, before[4] + 0.05, 0.0) == 0.0
    assert all(np.array_equal(a, b) for a, b in zip(g.contacts, before))


def test_resync_pulls_a_single_lagging_limb_to_within_max_limb_error():
    """One knee 0.3 m behind its planned contact at the boundary, the others where planned: the centroid shift moves
    all four by a quarter of that; with max_limb_error_m the knee is then planned 0.1 m from where it is."""
    g = gen(CrawlCommand(0.035, 0, 0), cycles=3)
    k = 4
    measured = g.contacts[k].copy()
    measured[2, 0] -= 0.3
    plain = gen(CrawlCommand(0.035, 0, 0), cycles=3)
    plain.resync(k, measured, max_shift_m=0.1)
    assert np.linalg.norm(plain.contacts[k][2, :2] - measured[2, :2]) == pytest.approx(0.225, abs=1e-9)
    g.resync(k, measured, max_shift_m=0.1, max_limb_error_m=0.1)
    assert np.linalg.norm(g.contacts[k][2, :2] - measured[2, :2]) == pytest.approx(0.1, abs=1e-9)
    others = [0, 1, 3]
    assert np.allclose(g.contacts[k][others], plain.contacts[k][others])


def test_the_start_hold_keeps_the_com_where_it_is():
    """Before the first shift the CoM target is the measured start CoM: the first shift moves it from there (a
    target at the first tripod's margin point from t = 0 jerked the robot off a 10 deg side slope: gen_crawl
    --scene 'slope:direction_deg=90' fell in every trial, now 0/6)."""
    g = gen(CrawlCommand(0.035, 0, 0))
    assert np.allclose(g.sample(0.0).com_xy, COM0) and np.allclose(g.sample(0.99 * g.seq.t_start_s).com_xy, COM0)
    s = g.seq.t_start_s
    assert np.allclose(g.sample(s + 1e-9).com_xy, COM0, atol=1e-6)             # the shift starts there ...
    assert np.allclose(g.sample(s + g.p["t_shift_s"] - 1e-9).com_xy, g.com_to[0], atol=1e-6)   # ... and ends here


PAIRS = dict(pattern="diagonal_pairs", t_shift_s=0.05, t_swing_s=0.25, max_stride_m=1.0, **{"limits.vx_m_per_s": 1.0})


def test_diagonal_pairs_sequence_and_timing():
    fwd = ContactSequence(0.05, 0.25, pattern="diagonal_pairs")
    assert fwd.groups == ((0, 3), (1, 2)) and fwd.steps_per_cycle == 2        # LW+RK, then RW+LK
    assert fwd.cycle_s == pytest.approx(0.6)
    assert ContactSequence(0.05, 0.25, backward=True, pattern="diagonal_pairs").groups == ((1, 2), (0, 3))
    with pytest.raises(ValueError, match="pattern"):
        ContactSequence(0.05, 0.25, pattern="trot")
    with pytest.raises(Exception, match="pattern"):
        gen(CrawlCommand(0.3, 0, 0), pattern="gallop")                      # the YAML's one_of check


def test_a_right_turn_on_the_spot_steps_the_mirrored_order():
    """The left/right reflection of the order (LW+RK <-> RW+LK) is the same alternation half a cycle later."""
    assert ContactSequence(0.05, 0.25, pattern="diagonal_pairs", mirrored=True).groups == ((1, 2), (0, 3))
    assert ContactSequence(0.8, 0.6, mirrored=True).groups == ((1,), (2,), (0,), (3,))     # RW, LK, LW, RK
    turn = dict(PAIRS, **{"limits.wz_rad_per_s": 1.0})
    assert gen(CrawlCommand(0, 0, -0.5), **turn).seq.groups[0] == (1, 2)     # right: RW+LK first
    assert gen(CrawlCommand(0, 0, 0.5), **turn).seq.groups[0] == (0, 3)      # left, forward, an arc: LW+RK first
    assert gen(CrawlCommand(0.3, 0, 0), **turn).seq.groups[0] == (0, 3)
    assert gen(CrawlCommand(0.3, 0, -0.5), **turn).seq.groups[0] == (0, 3)
    assert gen(CrawlCommand(0, 0, -0.5), mirror_right_turn=False, **turn).seq.groups[0] == (0, 3)


def test_diagonal_pairs_every_limb_moves_one_stride_per_cycle():
    g = gen(CrawlCommand(0.7, 0, 0), cycles=3, **PAIRS)
    assert g.n_steps == 6
    d = g.contacts[4][:, :2] - g.contacts[2][:, :2]          # second cycle: steady state
    assert np.allclose(d, [[0.7 * g.seq.cycle_s, 0.0]] * 4, atol=1e-9)


def test_diagonal_pair_samples_swing_the_pair_and_ride_the_support_diagonal():
    g = gen(CrawlCommand(0.7, 0, 0.2), cycles=2, **PAIRS)
    for t in np.linspace(0, g.duration_s, 211):
        s = g.sample(float(t))
        k = g.seq.step_at(float(t))
        assert s.stance.sum() in (2, 4)
        if s.stance.sum() == 2:
            assert set(np.flatnonzero(~s.stance)) == set(g.seq.group(k))
            assert np.allclose(s.targets[s.stance], g.contacts[k][s.stance])      # the support diagonal is held
            a, b = g.contacts[k][s.stance, :2]
            d = b - a
            e = s.com_xy - a
            assert abs(d[0] * e[1] - d[1] * e[0]) / np.linalg.norm(d) < 1e-9       # CoM target on that diagonal
    steps = g.steps()
    assert [st["name"] for st in steps[:2]] == ["shift_LW_RK", "swing_LW_RK"] and len(steps) == 2 * g.n_steps
    shift, swing = steps[0], steps[1]
    assert shift["stance"].all() and list(shift["com_support"]) == [False, True, True, False]   # CoM onto RW-LK
    assert list(swing["stance"]) == [False, True, True, False]
    assert swing["swing_lift_m"][0] == g.lift[0][0] > 0 and swing["swing_lift_m"][1] == 0.0   # the arc's apex


def test_steps_carry_the_planned_heading_which_leads_the_pattern_in_a_diagonal_turn():
    """The references' heading_rad is the plan's (what sample() gives at each step's end). Turning on the spot in
    diagonal pairs, the contact pattern's heading lags it by half a step's yaw: the core used to hold the body there
    (session 24: these steps replayed as the core's segments in the runner circled at 0.13 m with the pattern's
    heading, 0.05 m with the plan's)."""
    from atlas_crawl_controller.cartesian import pattern_heading_rad
    g = gen(CrawlCommand(0.0, 0.0, 0.3), cycles=2, **PAIRS)
    t = 0.0
    for step in g.steps():
        t += step["duration_s"]
        assert step["heading_rad"] == pytest.approx(g.sample(t - 1e-9).heading_rad, abs=1e-6), step["name"]
    swings = [s for s in g.steps() if s["name"].startswith("swing")]
    lag = [math.remainder(s["heading_rad"] - pattern_heading_rad(s["targets"]), 2 * math.pi) for s in swings]
    step_yaw = math.remainder(swings[1]["heading_rad"] - swings[0]["heading_rad"], 2 * math.pi)
    assert step_yaw > 0.05
    assert all(abs(d - step_yaw / 2) < 0.2 * step_yaw for d in lag[1:]), (lag, step_yaw)


def test_a_straight_crawl_asks_the_tracker_for_its_world_drift_bound_and_turns_do_not():
    """world_drift_max_correction_m (session 27): every step and sample of a straight crawl (forward, backward,
    sideways) carries the bound for the tracker; a turn on the spot, an arc and the default (negative) ask for none
    (the tracker's own: a turn's pivot needs the shift made up)."""
    from atlas_crawl_controller.gait_generator.generator import parameter_set
    assert parameter_set().values({})["world_drift_max_correction_m"] < 0         # none asked by default
    b = 0.005
    for cmd in (CrawlCommand(0.035, 0.0, 0.0), CrawlCommand(-0.035, 0.0, 0.0), CrawlCommand(0.0, 0.02, 0.0)):
        g = gen(cmd, world_drift_max_correction_m=b)
        assert g.drift_bound_m() == b
        assert all(st["drift_correction_max_m"] == b for st in g.steps())
        assert all(g.sample(t).extra["drift_correction_max_m"] == b for t in (-1.0, 0.3, 2.0, 99.0))
    for g in (gen(CrawlCommand(0.0, 0.0, 0.1), world_drift_max_correction_m=b),
              gen(CrawlCommand(0.035, 0.0, 0.05), world_drift_max_correction_m=b), gen(CrawlCommand(0.035, 0.0, 0.0))):
        assert g.drift_bound_m() is None
        assert not any("drift_correction_max_m" in st for st in g.steps())
        assert "drift_correction_max_m" not in g.sample(1.0).extra


def test_diagonal_params_are_the_yaml_group_backward_overrides_and_run():
    from atlas_crawl_controller.gait_generator import diagonal_params, parameter_set
    vals = parameter_set().values({"diagonal_pairs.t_swing_s": 0.3})
    fwd, back = diagonal_params(vals), diagonal_params(vals, backward=True)
    assert fwd["pattern"] == back["pattern"] == "diagonal_pairs"
    assert fwd["t_swing_s"] == 0.3 and back["t_swing_s"] == vals["diagonal_pairs.backward.t_swing_s"]
    assert fwd["lift_knee_m"] == vals["diagonal_pairs.lift_knee_m"] != back["lift_knee_m"]
    assert not any(k.startswith("backward") or k.startswith("diagonal_pairs") for k in fwd)
    d = parameter_set().values()
    fwd, back = diagonal_params(d), diagonal_params(d, backward=True)
    for p, v in ((fwd, fwd["crawl_speed_m_per_s"]), (back, -back["crawl_speed_m_per_s"])):
        g = gen(CrawlCommand(v, 0, 0), cycles=2, **p)                   # the defaults form a valid command
        assert g.steps_per_cycle == 2 and g.seq.backward == (v < 0)
    turn = diagonal_params(d, turn=True)                                 # the turn group, not the backward one
    assert turn["t_swing_s"] == d["diagonal_pairs.turn.t_swing_s"] != fwd["t_swing_s"]
    assert turn["lift_knee_m"] == d["diagonal_pairs.turn.lift_knee_m"] != back["lift_knee_m"]
    assert turn["limits.wz_rad_per_s"] == d["diagonal_pairs.turn.limits.wz_rad_per_s"]
    assert not any(k.startswith("turn.") or k.startswith("backward.") for k in turn)
    for wz in (turn["turn_rate_rad_per_s"], -turn["turn_rate_rad_per_s"]):
        g = gen(CrawlCommand(0, 0, wz), cycles=2, **turn)                # its own rate is a valid command
        assert g.steps_per_cycle == 2


def _arc_run(fb, pose_at, T=6.0, dt=0.05, cmd=(0.1, 0.0, 0.1)):
    """Feed ``fb`` the poses ``pose_at(t) -> (xy, heading)`` for T s under ``cmd``; returns update(+1)."""
    for t in np.arange(dt, T + 1e-9, dt):
        xy, h = pose_at(float(t))
        fb.track(float(t), dt, xy, Rz(h), *cmd)
    return fb.update(1.0)


def test_arc_errors_are_taken_on_the_circle_not_on_the_clock():
    """On an arc (v 0.1 m/s, w 0.1 rad/s: a 1 m circle to the left about (0, 1)), a robot on the circle with the
    tangent heading has no error even at half the commanded pace (the time-based pose would have run ahead and
    turned its pattern); one 5 cm outside is steered left, towards the centre; one inside, right."""
    def on_circle(pace, dr=0.0):
        def pose(t):
            a = pace * 0.1 * t                      # angle travelled on the circle
            r = 1.0 + dr
            return np.array([r * math.sin(a), 1.0 - r * math.cos(a)]), a
        return pose
    for pace in (1.0, 0.5):
        fb = PlacementFeedback(heading_gain=0.5, lateral_gain_rad_per_m=2.0)
        fb.start([0.0, 0.0], Rz(0.0))
        dth, phi, _ = _arc_run(fb, on_circle(pace))
        assert abs(dth) < 1e-6 and abs(phi) < 1e-6, pace
    fb = PlacementFeedback(heading_gain=0.0, lateral_gain_rad_per_m=2.0)
    fb.start([0.0, 0.0], Rz(0.0))
    assert _arc_run(fb, on_circle(0.5, dr=0.05))[1] > 0       # outside: steer left
    fb = PlacementFeedback(heading_gain=0.0, lateral_gain_rad_per_m=2.0)
    fb.start([0.0, 0.0], Rz(0.0))
    assert _arc_run(fb, on_circle(0.5, dr=-0.05))[1] < 0      # inside: steer right
    fb = PlacementFeedback(heading_gain=0.5, lateral_gain_rad_per_m=0.0)
    fb.start([0.0, 0.0], Rz(0.0))
    pose = on_circle(0.5)
    dth = _arc_run(fb, lambda t: (pose(t)[0], pose(t)[1] + 0.04))[0]
    assert dth < 0                                            # heading 0.04 rad left of the tangent: turn right


def test_a_new_arc_command_starts_a_new_circle_and_lines_keep_their_samples():
    fb = PlacementFeedback(heading_gain=0.5, lateral_gain_rad_per_m=2.0)
    fb.start([0.0, 0.0], Rz(0.0))
    fb.track(0.1, 0.1, [0.0, 0.0], Rz(0.0))                   # held (no command): a line sample
    fb.track(0.2, 0.1, [0.01, 0.0], Rz(0.0), 0.1, 0.0, 0.1)   # arc samples
    c1 = fb._arc[1].copy()
    fb.track(0.3, 0.1, [0.02, 0.0], Rz(0.0), 0.1, 0.0, -0.2)  # new command: new circle, to the right
    assert fb._arc[1][1] < 0 < c1[1]
    fb.update(1.0)
    fb.track(0.4, 0.1, [0.03, 0.0], Rz(0.0), 0.1, 0.0, 0.0)   # straight again
    assert fb._arc is None
    dth, phi, _ = fb.update(1.0)
    assert math.isfinite(dth) and math.isfinite(phi)
