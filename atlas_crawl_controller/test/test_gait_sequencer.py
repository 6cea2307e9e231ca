"""GaitSequencer (plain Python) driven against the real CrawlControllerCore with an ideal plant (q = command)."""
import math
from types import SimpleNamespace

import numpy as np
import pytest

from atlas_crawl_controller.controller_core import CrawlControllerCore, Mode, Reference
from atlas_crawl_controller.gait_sequencer import (GaitSequencer, heading_from_quat, parameter_set, validate_crawl,
                                                   validate_roll, validate_turn)
from atlas_crawl_controller.keyframes import parse_script

DT = 0.002

SCRIPT = {
    "name": "toy_crawl",
    "keyframes": [
        {"name": "stance", "duration_s": 0.1, "stance": ["LW", "RW", "LK", "RK"], "joints": {"l_leg_kny": 1.2}},
        {"name": "lift_lw", "duration_s": 0.1, "stance": ["RW", "LK", "RK"], "joints": {"l_arm_shx": 0.3}},
        {"name": "place_lw", "duration_s": 0.1, "stance": ["LW", "RW", "LK", "RK"], "joints": {"l_arm_shx": 0.0}},
        {"name": "lift_rk", "duration_s": 0.1, "stance": ["LW", "RW", "LK"], "joints": {"r_leg_kny": 1.0}},
        {"name": "place_rk", "duration_s": 0.1, "stance": ["LW", "RW", "LK", "RK"], "joints": {"r_leg_kny": 1.2}},
    ],
}


def loader(name):
    return parse_script(dict(SCRIPT, name=name))


#: the generator's tests plan at the goal's start (no joint-space move into generator.start_posture first)
NO_POSTURE = {"generator.enabled": True, "generator.start_posture": ""}


class Harness:
    """Sequencer + controller core + ideal plant; support state follows the planned stance of the last key-frame."""

    def __init__(self, params=None, support_mode="planned"):
        self.p = params or parameter_set().values()
        self.seq = GaitSequencer(self.p, script_loader=loader)
        self.core = CrawlControllerCore()
        self.core.configure({"update_rate_hz": 500.0})
        self.q = self.core.activate(np.zeros(28) + 0.0).copy()
        self.t = 0.0
        self.pose = np.array([0, 0, 0.5, 0, 0.6159, 0, 0.7878])   # crawl stance orientation (heading +x)
        self.support_mode = support_mode
        self.stance = np.ones(4, bool)
        self.refs = []
        self.feedback = []
        self.tick_every = 5  # 100 Hz sequencer on a 500 Hz controller

    def support(self):
        if self.support_mode == "none":
            return None
        ic = np.ones(4, bool) if self.support_mode == "planned" else np.array([False, True, True, True])
        return SimpleNamespace(in_contact=ic, stability_margin_m=0.1, statically_stable=True, age_s=0.0)

    def run(self, seconds, cancel_at=None):
        tick_every = self.tick_every
        for k in range(int(seconds / DT)):
            self.t += DT
            if cancel_at is not None and self.feedback and self.feedback[-1]["phase"] == cancel_at:
                self.seq.request_cancel()
                cancel_at = None
            if k % tick_every == 0:
                st = self.core.status()
                out = self.seq.tick(self.t, st, self.support(), self.pose)
                if out.reference is not None:
                    self.refs.append(out.reference)
                    ok, why = self.core.set_reference(out.reference)
                    assert ok, why
                if out.feedback:
                    self.feedback.append(out.feedback)
                if out.outcome:
                    return out.outcome
            self.q = self.core.update(self.t, DT, self.q).copy()
            # crawl forward 1 cm per key-frame (fake odometry)
            self.pose[0] = 0.01 * len(self.refs)
        return None


def crawl_goal(**kw):
    g = dict(cycles=2, distance_m=0.0, direction=0, loop_mode=0, method=0, speed_scale=1.0)
    g.update(kw)
    return SimpleNamespace(**g)


def test_full_crawl_succeeds_with_feedback():
    h = Harness()
    g, why = validate_crawl(crawl_goal(), h.p)
    assert g is not None, why
    h.seq.start(g, h.t, h.pose)
    out = h.run(10.0)
    assert out is not None and out.status == "succeeded", out
    assert out.cycles_completed == 2 and len(h.refs) == 10
    assert out.distance_m == pytest.approx(0.10, abs=1e-9)
    assert [f["keyframe"] for f in h.feedback][0] == 0 and max(f["cycle"] for f in h.feedback) == 1
    assert h.feedback[-1]["progress"] == pytest.approx(1.0)
    assert not h.seq.busy


@pytest.mark.parametrize("support_mode", ["planned", "lw_up"])
def test_steps_are_queued_before_the_previous_one_ends(support_mode):
    """pipeline_lead_s: within a cycle the next key-frame goes out queued before the running one ends and the core
    starts it the period the running one is reached (no round trip); the first step of a cycle waits for the
    boundary, and a lift the support state does not confirm (RK's, with LW reported up) is never queued. Same
    references, same outcome, a shorter goal (a 20 Hz sequencer, so a round trip costs up to 50 ms)."""
    outs, refs, gaps = {}, {}, {}
    for lead in (0.0, 0.06):
        h = Harness(parameter_set().values({"pipeline_lead_s": lead}), support_mode=support_mode)
        h.tick_every = 25
        g, _ = validate_crawl(crawl_goal(cycles=3, speed_scale=1.3), h.p)
        h.seq.start(g, h.t, h.pose)
        update, seen = h.core.update, []

        def logged(t, dt, q, *a, _u=update, _c=h.core, _seen=seen):
            out = _u(t, dt, q, *a)
            st = _c.status()
            if not _seen or _seen[-1][1:] != (st.sequence_id, st.reached):
                _seen.append((t, st.sequence_id, st.reached))
            return out
        h.core.update = logged
        outs[lead], refs[lead] = h.run(20.0), h.refs
        ends = {sid: t for t, sid, r in seen if r}
        starts = {sid: t for t, sid, r in seen if not r}
        gaps[lead] = {sid: starts[sid] - ends[sid - 1] for sid in starts if sid - 1 in ends}
    for lead in outs:
        assert outs[lead].status == "succeeded" and outs[lead].cycles_completed == 3, outs[lead]
    plain = [(r.sequence_id, list(r.joint_names)) for r in refs[0.0]]
    assert [(r.sequence_id, list(r.joint_names)) for r in refs[0.06]] == plain and not any(r.queue for r in refs[0.0])
    queued = [r.queue for r in refs[0.06]]
    lifts_rk = [i for i, r in enumerate(refs[0.06]) if not r.stance[3]]       # its tripod needs LW
    # full loop, 3 x 5 steps; a goal counted in cycles is queued across the cycle boundaries (5, 10) too
    assert len(queued) == 15 and not queued[0] and queued[5] and queued[10]
    if support_mode == "planned":
        assert sum(queued) == len(queued) - 1
    else:
        assert lifts_rk and not any(queued[i] for i in lifts_rk) and sum(queued) == len(queued) - 1 - len(lifts_rk)
    for r in refs[0.06]:
        if r.queue:
            assert gaps[0.06][r.sequence_id] == pytest.approx(DT)          # started the period after the reached one
    assert sum(gaps[0.0].values()) - sum(gaps[0.06].values()) > sum(queued) * 0.01
    assert outs[0.06].duration_s < outs[0.0].duration_s


def test_part_loop_skips_start_keyframes():
    h = Harness()
    g, _ = validate_crawl(crawl_goal(loop_mode=1, cycles=3), h.p)
    h.seq.start(g, h.t, h.pose)
    out = h.run(10.0)
    assert out.status == "succeeded" and len(h.refs) == 5 + 4 + 4


def test_cancel_stops_at_next_all_four_stance():
    h = Harness()
    g, _ = validate_crawl(crawl_goal(cycles=5), h.p)
    h.seq.start(g, h.t, h.pose)
    out = h.run(20.0, cancel_at="moving:lift_lw")   # during 'lift_lw' (3-limb stance)
    assert out.status == "canceled" and "place_lw" in out.reason, out
    assert len(h.refs) == 3
    # the controller holds the reached pose afterwards
    q_end = h.q.copy()
    h.run(0.5)
    np.testing.assert_allclose(h.q, q_end)


def test_support_wait_then_proceed_or_abort():
    p = parameter_set().values()
    h = Harness(p, support_mode="lw_up")
    g, _ = validate_crawl(crawl_goal(cycles=1), p)
    h.seq.start(g, h.t, h.pose)
    out = h.run(10.0)
    assert out.status == "succeeded" and out.reason == "" and out.support_violations >= 1
    p2 = p.replace(support_timeout_policy="abort")
    h = Harness(p2, support_mode="lw_up")
    h.seq.start(g, h.t, h.pose)
    out = h.run(10.0)
    assert out.status == "aborted" and "not in contact" in out.reason


def test_controller_not_reaching_aborts_without_hanging():
    p = parameter_set().values().replace(reach_timeout_s=0.2)
    seq = GaitSequencer(p, script_loader=loader)
    g, _ = validate_crawl(crawl_goal(), p)
    seq.start(g, 0.0, np.array([0, 0, 0.5, 0, 0, 0, 1.0]))
    t, out = 0.0, seq.tick(0.0)
    assert out.reference is not None
    while out.outcome is None and t < 5:
        t += 0.01
        out = seq.tick(t, SimpleNamespace(sequence_id=out.reference.sequence_id if out.reference else 1,
                                          accepted=True, reached=False, reason=""))
    assert out.outcome.status == "aborted" and "did not reach" in out.outcome.reason


def test_distance_goal_is_not_queued_across_a_cycle_boundary():
    """A Crawl with distance_m is checked at every cycle boundary on the measured pose, so the first step of a cycle
    waits for it (the Harness odometry: 1 cm per key-frame, 0.12 m reached in the third cycle)."""
    h = Harness(parameter_set().values({"pipeline_lead_s": 0.06}))
    g, _ = validate_crawl(crawl_goal(cycles=5, distance_m=0.12), h.p)
    h.seq.start(g, h.t, h.pose)
    out = h.run(20.0)
    assert out.status == "succeeded" and out.cycles_completed == 3, out
    queued = [r.queue for r in h.refs if r.mode != Mode.HOLD]
    assert len(queued) == 15 and not any(queued[i] for i in (0, 5, 10)) and sum(queued) == 12


def test_goal_that_ends_with_a_step_queued_holds_and_drops_it():
    """The step in flight never reaches (controller stuck) after the next one went out queued: the goal aborts, and
    the same tick sends a MODE_HOLD, which drops the queued step in the controller (it must not run after the goal
    ended)."""
    p = parameter_set().values().replace(reach_timeout_s=0.2)
    seq = GaitSequencer(p, script_loader=loader)
    g, _ = validate_crawl(crawl_goal(), p)
    seq.start(g, 0.0, np.array([0, 0, 0.5, 0, 0, 0, 1.0]))
    first = seq.tick(0.0).reference
    stuck = SimpleNamespace(sequence_id=first.sequence_id, accepted=True, reached=False, reason="")
    support = SimpleNamespace(in_contact=np.ones(4, bool), stability_margin_m=0.1, statically_stable=True, age_s=0.0)
    t, queued, out = 0.0, [], None
    while t < 1.0:
        t += 0.01
        out = seq.tick(t, stuck, support)
        if out.reference is not None and out.outcome is None:
            queued.append(out.reference)
        if out.outcome is not None:
            break
    assert [r.queue for r in queued] == [True] and queued[0].sequence_id == first.sequence_id + 1
    assert out.outcome.status == "aborted" and "did not reach" in out.outcome.reason
    assert out.reference is not None and out.reference.mode == Mode.HOLD and not out.reference.queue
    core = CrawlControllerCore()
    core.configure()
    q = core.activate(np.zeros(28)).copy()
    ok, why = core.set_reference(Reference(mode=Mode.KEYFRAME, sequence_id=1, joint_positions_rad=q.copy(),
                                           duration_s=0.5, sender=seq.sender))
    assert ok, why
    core.update(0.004, 0.004, q)
    for ref in (queued[0], out.reference):
        ok, why = core.set_reference(ref)
        assert ok, why
    for k in range(400):
        q = core.update(0.008 + 0.004 * k, 0.004, q).copy()
    assert core.status().sequence_id == 1 and core.status().reached        # the queued step never started


def test_controller_rejection_aborts_with_reason():
    p = parameter_set().values()
    seq = GaitSequencer(p, script_loader=loader)
    g, _ = validate_crawl(crawl_goal(), p)
    seq.start(g, 0.0, np.array([0, 0, 0.5, 0, 0, 0, 1.0]))
    out = seq.tick(0.0)
    sid = out.reference.sequence_id
    out = seq.tick(0.01, SimpleNamespace(sequence_id=sid, accepted=False, reached=False, reason="controller inactive"))
    assert out.outcome.status == "aborted" and "controller inactive" in out.outcome.reason


def test_busy_start_raises():
    p = parameter_set().values()
    seq = GaitSequencer(p, script_loader=loader)
    g, _ = validate_crawl(crawl_goal(), p)
    seq.start(g, 0.0, np.zeros(7) + [0, 0, 0, 0, 0, 0, 1])
    with pytest.raises(RuntimeError):
        seq.start(g, 0.0, np.zeros(7))


@pytest.mark.parametrize("kw,needle", [
    (dict(cycles=0), "cycles must be > 0"), (dict(cycles=-3), "cycles must be > 0"),
    (dict(direction=7), "direction"), (dict(loop_mode=5), "loop_mode"), (dict(method=9), "method"),
    (dict(method=1), "not available"), (dict(speed_scale=float("nan")), "speed_scale"),
    (dict(speed_scale=0.0), "speed_scale"), (dict(speed_scale=100.0), "speed_scale"),
    (dict(distance_m=float("nan")), "distance_m"), (dict(distance_m=-1.0), "distance_m"),
    (dict(cycles=10 ** 6), "max_cycles"),
])
def test_invalid_crawl_goals(kw, needle):
    g, why = validate_crawl(crawl_goal(**kw), parameter_set().values())
    assert g is None and needle in why


def test_turn_and_roll_validation():
    p = parameter_set().values()
    T = lambda **kw: SimpleNamespace(**dict(dict(direction=0, angle_rad=0.0, cycles=1, speed_scale=1.0), **kw))  # noqa
    assert validate_turn(T(), p)[0].script == p["gaits.turn_left"]
    assert validate_turn(T(direction=1), p)[0].script == p["gaits.turn_right"]
    g, _ = validate_turn(T(direction=2, angle_rad=-1.0), p)
    assert g.script == p["gaits.turn_right"] and g.angle_rad == -1.0
    for bad in (T(direction=3), T(direction=2, angle_rad=0.0), T(direction=2, angle_rad=float("inf")), T(cycles=0)):
        assert validate_turn(bad, p)[0] is None
    R = lambda **kw: SimpleNamespace(**dict(dict(from_side=0, to=1), **kw))  # noqa
    assert validate_roll(R(), p)[0].loop_mode == "once"
    assert validate_roll(R(from_side=2), p)[0] is None and validate_roll(R(to=4), p)[0] is None


def test_heading_from_quat():
    yaw = 0.7
    q = [0, 0, math.sin(yaw / 2), math.cos(yaw / 2)]
    assert heading_from_quat(q) == pytest.approx(yaw)


def test_cartesian_crawl_plan_sends_cartesian_references():
    pytest.importorskip("atlas_crawl_kinematics.cartesian_gait")
    p = parameter_set().values({"generator.enabled": False})      # the open-loop plan (cartesian_plan)
    g, why = validate_crawl(crawl_goal(method=2, cycles=1, speed_scale=3.0), p, iik_available=True)
    assert g is not None and g.method == "com_modulated", why
    assert validate_crawl(crawl_goal(method=1), p, iik_available=False)[0] is None
    h = Harness(p)

    def toy_solver(q_seed, pose, targets, stance, com):
        return q_seed, 2, 0.0, 0.05

    h.core.set_cartesian_solver(toy_solver, lambda q, pose: np.zeros((4, 3)))
    c0 = np.array([[0.62, 0.38, 0.0], [0.62, -0.38, 0.0], [0.0, 0.25, 0.0], [0.0, -0.25, 0.0]])
    h.seq.start(g, h.t, h.pose, SimpleNamespace(positions=c0, com_xy=np.array([0.25, 0.0])))
    out = h.run(20.0)
    assert out is not None and out.status == "succeeded" and out.cycles_completed == 1, out
    assert all(r.mode == 2 and np.asarray(r.contact_targets).shape == (4, 3) for r in h.refs)
    swings = [r for r in h.refs if not all(r.stance)]
    # 4 limbs x (shift with the coming support = lookahead, apex, touchdown), after moving the two hands (0.38 m
    # apart sideways) to the nominal stance (0.22 m) the same way
    assert len(swings) == 18 == len(h.refs) and all(sum(r.stance) == 3 for r in swings)
    lw = [np.asarray(r.contact_targets)[0] for r in h.refs]
    assert lw[-1][0] > c0[0, 0] + 0.1                                       # the left wrist stepped forward
    assert all(r.com_modulation for r in h.refs)


def test_cartesian_turn_goal_runs_the_generator_turning_on_the_spot():
    """Turn with a Cartesian method: validated like Crawl (enums, IIK available, no diagonal key-frame turn, the
    generator on), then the gait generator with the command (0, 0, ±turn rate) of the gait; a right turn steps the
    mirrored order, a diagonal turn uses the diagonal_pairs.turn values."""
    p = parameter_set().values(NO_POSTURE)
    T = lambda **kw: SimpleNamespace(**dict(dict(direction=0, angle_rad=0.0, cycles=2, speed_scale=1.0, method=1,  # noqa
                                                 gait=0), **kw))
    assert validate_turn(T(), p)[0] is None                                          # IIK not available
    for bad, needle in ((T(method=3), "method"), (T(gait=2), "gait"), (T(method=0, gait=1), "Cartesian")):
        g, why = validate_turn(bad, p, iik_available=True)
        assert g is None and needle in why, why
    off = parameter_set().values({"generator.enabled": False})
    assert "generator" in validate_turn(T(), off, iik_available=True)[1]
    toy = (lambda q, pose, tg, st, com: (q, 2, 0.0, 0.05), lambda q, pose: np.zeros((4, 3)))
    c0 = np.array([[0.62, 0.22, 0.0], [0.62, -0.22, 0.0], [0.0, 0.25, 0.0], [0.0, -0.25, 0.0]])
    for kw, wz_sign, first in ((dict(), 1, (0,)), (dict(direction=1), -1, (1,)), (dict(gait=1), 1, (0, 3)),
                               (dict(direction=2, angle_rad=-0.5), -1, (1,))):
        g, why = validate_turn(T(**kw), p, iik_available=True)
        assert g is not None and g.method == "iik", why
        h = Harness(p)
        h.core.set_cartesian_solver(*toy)
        h.seq.start(g, h.t, h.pose, SimpleNamespace(positions=c0, com_xy=np.array([0.25, 0.0])))
        gen = h.seq._run.gen["gen"]
        rate = gen.p["turn_rate_rad_per_s"]
        assert (gen.cmd.vx_m_per_s, gen.cmd.vy_m_per_s) == (0.0, 0.0) and gen.cmd.wz_rad_per_s == wz_sign * rate
        assert gen.seq.groups[0] == first, kw                                        # mirrored when turning right
        if kw.get("gait") == 1:
            from atlas_crawl_controller.gait_generator import parameter_set as gen_parameter_set
            assert gen.p["pattern"] == "diagonal_pairs"
            assert rate == gen_parameter_set().values()["diagonal_pairs.turn.turn_rate_rad_per_s"] != \
                gen_parameter_set().values()["turn_rate_rad_per_s"]


def test_cartesian_crawl_generator_replans_each_cycle():
    """generator.enabled: cycle 0 = reposition + one generated cycle; each later cycle is generated at the cycle
    boundary from the last targets (here 2 cycles: the second exists only after the first ran)."""
    p = parameter_set().values(NO_POSTURE)
    g, why = validate_crawl(crawl_goal(method=1, cycles=2, speed_scale=3.0), p, iik_available=True)
    assert g is not None, why
    h = Harness(p)
    h.seq.set_generator_params({"world_drift_max_correction_m": 0.005})
    h.core.set_cartesian_solver(lambda q, pose, tg, st, com: (q, 2, 0.0, 0.05), lambda q, pose: np.zeros((4, 3)))
    c0 = np.array([[0.62, 0.38, 0.0], [0.62, -0.38, 0.0], [0.0, 0.25, 0.0], [0.0, -0.25, 0.0]])
    h.seq.start(g, h.t, h.pose, SimpleNamespace(positions=c0, com_xy=np.array([0.25, 0.0])))
    assert {s.cycle for s in h.seq._run.steps} == {0}
    out = h.run(40.0)
    assert out is not None and out.status == "succeeded" and out.cycles_completed == 2, out
    lw = [np.asarray(r.contact_targets)[0] for r in h.refs]
    # the generator's first cycle ramps up (a limb lands one step of the reference ahead: 0.035 m/s x 1.4 s), the
    # second moves a full cycle (0.196 m)
    assert lw[-1][0] > 0.66 + 0.049 + 0.19
    # every generated step asks the tracker for the straight crawl's world-drift bound (set); the reposition does not
    b = 0.005
    asked = [r.drift_correction_max_m for r in h.refs]
    n = 2 * 2 * 4
    assert asked[-n:] == [b] * n and set(asked[:-n]) == {None}, asked


@pytest.mark.parametrize("stale", [False, True])
def test_cartesian_crawl_plans_on_the_height_map_or_says_why_it_is_blind(stale):
    """Issue 13 §2 through the sequencer: a fresh map of a 5.7 deg slope puts the landing heights on it (the start
    offsets kept); a map older than terrain.max_age_s plans blind (heights as they stand) and says so."""
    from atlas_crawl_controller.height_map import HeightMap
    p = parameter_set().values(NO_POSTURE)
    g, why = validate_crawl(crawl_goal(method=1, cycles=2, speed_scale=3.0), p, iik_available=True)
    h = Harness(p)
    h.core.set_cartesian_solver(lambda q, pose, tg, st, com: (q, 2, 0.0, 0.05), lambda q, pose: np.zeros((4, 3)))
    c0 = np.array([[0.62, 0.38, 0.0], [0.62, -0.38, 0.0], [0.0, 0.25, 0.0], [0.0, -0.25, 0.0]])
    c0[:, 2] = 0.1 * c0[:, 0]
    n, res = 120, 0.025
    X, _Y = np.meshgrid(-1.0 + res * np.arange(n), -1.5 + res * np.arange(n))
    assert h.seq.terrain.startswith("blind: no height map")
    h.seq.set_generator_params({"terrain.max_age_s": 60.0})     # one map for the whole run (the sim sends 2 Hz)
    h.run(0.1)                                                  # the sequencer's clock runs
    age = 100.0 if stale else 0.0
    h.seq.set_height_map(HeightMap.from_fields(h.t - age, res, n, n, -1.0, -1.5, (0.1 * X).ravel()), h.t - age)
    h.seq.start(g, h.t, h.pose, SimpleNamespace(positions=c0, com_xy=np.array([0.25, 0.0])))
    out = h.run(40.0)
    assert out is not None and out.status == "succeeded" and out.cycles_completed == 2, out
    last = np.asarray(h.refs[-1].contact_targets)
    assert last[0, 0] > 0.8                                              # the wrists moved up the slope
    if stale:
        assert h.seq.terrain.startswith("blind") and "stale" in h.seq.terrain
        assert np.allclose(last[:, 2], c0[:, 2])                         # heights as they stood
    else:
        assert h.seq.terrain == "map"
        assert np.allclose(last[:, 2], 0.1 * last[:, 0], atol=1e-6)     # on the slope (start offsets 0)


def test_cartesian_start_without_support_state_raises():
    p = parameter_set().values()
    g, _ = validate_crawl(crawl_goal(method=1), p, iik_available=True)
    seq = GaitSequencer(p, script_loader=loader)
    with pytest.raises(ValueError):
        seq.start(g, 0.0, np.array([0, 0, 0.5, 0, 0, 0, 1.0]))
    assert not seq.busy


class TurningHarness(Harness):
    """Harness whose fake odometry yaws the pelvis 8° per key-frame reference (counter-clockwise)."""

    def run(self, seconds, cancel_at=None):
        tick_every = 5
        for k in range(int(seconds / DT)):
            self.t += DT
            if k % tick_every == 0:
                out = self.seq.tick(self.t, self.core.status(), self.support(), self.pose)
                if out.reference is not None:
                    self.refs.append(out.reference)
                    ok, why = self.core.set_reference(out.reference)
                    assert ok, why
                if out.outcome:
                    return out.outcome
            self.q = self.core.update(self.t, DT, self.q).copy()
            yaw = math.radians(8.0) * len(self.refs)
            # pelvis lying forward (z axis horizontal) as when crawling: rotate about world z by yaw
            qy = np.array([0.0, math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4)])       # 90° about y (x,y,z,w)
            qz = np.array([0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2)])
            x1, y1, z1, w1 = qz
            x2, y2, z2, w2 = qy
            self.pose[3:7] = [w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2, w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                              w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2, w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2]
        return None


def test_turn_result_is_unwrapped_past_half_a_turn():
    """6 cycles × 5 key-frames × 8° = 240° of turning must be reported as 240°, not folded to -120° (the result
    used to wrap the heading difference into (-180°, 180°]; seen in Gazebo: 12 turn cycles reported as 112°)."""
    h = TurningHarness()
    T = lambda **kw: SimpleNamespace(**dict(dict(direction=0, angle_rad=0.0, cycles=6, speed_scale=1.0), **kw))  # noqa
    g, why = validate_turn(T(), h.p)
    assert g is not None, why
    h0 = heading_from_quat(h.pose[3:7])
    h.seq.start(g, h.t, h.pose)
    out = h.run(30.0)
    assert out is not None and out.status == "succeeded", out
    expected = math.radians(8.0) * len(h.refs)
    assert expected > math.pi   # the case that used to wrap
    assert out.heading_change_rad == pytest.approx(expected, abs=1e-6)
    assert heading_from_quat(h.pose[3:7]) - h0 == pytest.approx(math.remainder(expected, 2 * math.pi), abs=1e-6)


class LaggingHarness(Harness):
    """Support as the sequencer node sees it: a SupportState message (contact inference) turned back by
    ``support_from_msg``; the measured limbs sit ``lag_m`` behind the last reference's targets (in x)."""

    def __init__(self, params, with_positions: bool, lag_m: float = 0.05):
        super().__init__(params)
        self.with_positions, self.lag_m = with_positions, lag_m

    def support(self):
        from atlas_crawl_controller.nodes.conversions import support_from_msg, support_to_msg
        last = [r for r in self.refs if r.contact_targets is not None]
        pts = np.asarray(last[-1].contact_targets, float) - [self.lag_m, 0.0, 0.0] if last else np.zeros((4, 3))
        msg = support_to_msg(np.ones(4, bool), np.ones(4), 0, pts, pts[:3, :2], pts[:, :2].mean(axis=0), 0.1,
                             True, "world")
        s = support_from_msg(msg, 0.0)
        if not self.with_positions:   # what the node's tick passed before: contact flags only
            del s.positions, s.com_xy
        return s


@pytest.mark.parametrize("with_positions", [True, False])
def test_generator_resyncs_to_the_positions_of_the_support_message(with_positions):
    """The node hands the sequencer the measured contact positions every tick, so the generator re-syncs its
    footholds to a lagging robot at each cycle boundary (without them it never did, and the graph's backward
    Cartesian crawl aborted with 'target of LK is 1.17 m from the pelvis')."""
    pytest.importorskip("atlas_crawl_msgs.msg")
    p = parameter_set().values(NO_POSTURE)
    g, why = validate_crawl(crawl_goal(method=1, cycles=3, speed_scale=3.0), p, iik_available=True)
    assert g is not None, why
    h = LaggingHarness(p, with_positions)
    h.core.set_cartesian_solver(lambda q, pose, tg, st, com: (q, 2, 0.0, 0.05), lambda q, pose: np.zeros((4, 3)))
    c0 = np.array([[0.62, 0.38, 0.0], [0.62, -0.38, 0.0], [0.0, 0.25, 0.0], [0.0, -0.25, 0.0]])
    h.seq.start(g, h.t, h.pose, SimpleNamespace(positions=c0, com_xy=np.array([0.25, 0.0])))
    gen = h.seq._run.gen
    out = h.run(60.0)
    assert out is not None and out.status == "succeeded", out
    if with_positions:
        assert gen["resync_m"] == pytest.approx(2 * 0.05, abs=0.02)   # two cycle boundaries, 5 cm each
    else:
        assert gen.get("resync_m", 0.0) == 0.0


@pytest.mark.parametrize("kind", ["crawl", "turn"])
def test_a_cartesian_goal_first_moves_into_the_start_posture_then_plans_from_there(kind):
    """generator.start_posture (default crawl_stance_nominal, the sampling runner's start): a Cartesian Crawl or Turn
    sends one joint-space key-frame step into it, marked as preparation (``reposition_*``), and plans its gait only
    once that step is reached, from the contacts measured then; without positions then it aborts with the reason."""
    assert parameter_set().values({})["generator.start_posture_goals"] == ["turn", "diagonal_crawl"]
    p = parameter_set().values({"generator.enabled": True, "generator.start_posture_goals": ["crawl", "turn"]})
    assert p["generator.start_posture"] == "crawl_stance_nominal"
    if kind == "crawl":
        g, why = validate_crawl(crawl_goal(method=1, cycles=1), p, iik_available=True)
    else:
        g, why = validate_turn(SimpleNamespace(direction=0, angle_rad=0.0, cycles=1, speed_scale=1.0, method=1,
                                               gait=0), p, iik_available=True)
    assert g is not None, why
    c0 = np.array([[0.62, 0.22, 0.0], [0.62, -0.22, 0.0], [0.0, 0.25, 0.0], [0.0, -0.25, 0.0]])
    moved = c0 + [0.3, 0.1, 0.0]                     # where the posture move left the contacts

    class Moved(Harness):
        def support(self):
            s = SimpleNamespace(in_contact=np.ones(4, bool), stability_margin_m=0.1, statically_stable=True,
                                age_s=0.0, com_xy=np.array([0.55, 0.1]))
            if self.refs and self.refs[0].mode == Mode.KEYFRAME:
                s.positions = moved if self.with_positions else None
            return s

    for with_positions in (True, False):
        h = Moved(p)
        h.with_positions = with_positions
        h.core.set_cartesian_solver(lambda q, pose, tg, st, com: (q, 2, 0.0, 0.05), lambda q, pose: np.zeros((4, 3)))
        h.seq.start(g, h.t, h.pose, SimpleNamespace(positions=c0, com_xy=np.array([0.25, 0.0])))
        assert h.seq._run.gen is None and h.seq._run.deferred
        out = h.run(30.0)
        first = h.refs[0]
        assert first.mode == Mode.KEYFRAME and first.duration_s == p["generator.start_posture_s"]
        kf = loader(p["generator.start_posture"]).keyframes[-1]
        assert np.allclose(first.joint_positions_rad, kf.q[kf.selected])
        assert h.feedback[0]["phase"] == "moving:reposition_posture"
        if not with_positions:
            assert out.status == "aborted" and "cannot plan the gait after the start posture" in out.reason, out
            assert len(h.refs) == 1
            continue
        # the harness's pelvis does not yaw: the turn ends "no progress", after its gait
        assert out is not None and (out.status == "succeeded" or "no progress: turned" in out.reason), out
        cart = [r for r in h.refs if r.mode == Mode.CARTESIAN]
        assert cart and all(r.mode == Mode.CARTESIAN for r in h.refs[1:])
        assert np.allclose(cart[0].contact_targets[:, :2], moved[:, :2])        # planned from there
    bad = parameter_set().values({"generator.start_posture": "no_such_posture"})
    assert "generator.start_posture: cannot load" in GaitSequencer(p).check_scripts(bad)
    # off: the gait is planned at the start, from the contacts then
    h = Harness(parameter_set().values({"generator.enabled": True, "generator.start_posture_goals": ["turn"]} if
                                       kind == "crawl" else NO_POSTURE))
    h.core.set_cartesian_solver(lambda q, pose, tg, st, com: (q, 2, 0.0, 0.05), lambda q, pose: np.zeros((4, 3)))
    h.seq.start(g, h.t, h.pose, SimpleNamespace(positions=c0, com_xy=np.array([0.25, 0.0])))
    assert h.seq._run.gen is not None and not h.seq._run.deferred


@pytest.mark.parametrize("turn_resync_m, deadband_m, shift_m", [(None, None, 0.0), (0.2, 0.0, 0.10), (0.2, 0.03, 0.04)])
def test_a_diagonal_turn_on_the_spot_keeps_its_pivot(turn_resync_m, deadband_m, shift_m):
    """A diagonal Turn re-syncs its pattern to the measured contacts only beyond a dead-band
    (generator.diagonal_turn_resync_deadband_m 0.06 m by default): re-synced at every error, its pivot followed the
    landing errors and the CoM circled at 0.17-0.25 m through the graph (0.06-0.07 m without; session 25); never
    re-synced, the plan stayed while the robot slid down a 10 deg slope (session 28). The harness lags 5 cm per
    cycle: within the default dead-band."""
    pytest.importorskip("atlas_crawl_msgs.msg")
    over = dict(NO_POSTURE)
    if turn_resync_m is not None:
        over["generator.diagonal_turn_max_resync_m"] = turn_resync_m
        over["generator.diagonal_turn_resync_deadband_m"] = deadband_m
    p = parameter_set().values(over)
    goal = SimpleNamespace(direction=0, angle_rad=0.0, cycles=3, speed_scale=1.0, method=1, gait=1)
    g, why = validate_turn(goal, p, iik_available=True)
    assert g is not None and g.gait == "diagonal", why
    h = LaggingHarness(p, True)
    h.core.set_cartesian_solver(lambda q, pose, tg, st, com: (q, 2, 0.0, 0.05), lambda q, pose: np.zeros((4, 3)))
    c0 = np.array([[0.62, 0.38, 0.0], [0.62, -0.38, 0.0], [0.0, 0.25, 0.0], [0.0, -0.25, 0.0]])
    h.seq.start(g, h.t, h.pose, SimpleNamespace(positions=c0, com_xy=np.array([0.25, 0.0])))
    gen = h.seq._run.gen
    h.run(60.0)
    assert gen.get("resync_m", 0.0) == pytest.approx(shift_m, abs=0.02)   # two cycle boundaries


def test_crawl_that_went_the_wrong_way_is_not_a_success():
    """The Harness's odometry moves the pelvis forward whatever is played: a backward crawl ends 'aborted' with the
    signed distance (issue 10: backward crawls that went forward used to report SUCCEEDED)."""
    h = Harness()
    g, why = validate_crawl(crawl_goal(direction=1), h.p)
    assert g is not None and g.direction == -1, why
    h.seq.start(g, h.t, h.pose)
    out = h.run(10.0)
    assert out is not None and out.status == "aborted" and out.cycles_completed == 2, out
    assert out.reason.startswith("no progress: moved -0.100 m backward in 2 cycles"), out.reason
    h = Harness(parameter_set().values({"success.min_crawl_progress_m_per_cycle": 0.0}))   # 0 disables the check
    h.seq.start(validate_crawl(crawl_goal(direction=1), h.p)[0], h.t, h.pose)
    assert h.run(10.0).status == "succeeded"


def test_turn_that_went_the_wrong_way_is_not_a_success():
    T = lambda **kw: SimpleNamespace(**dict(dict(direction=0, angle_rad=0.0, cycles=2, speed_scale=1.0), **kw))  # noqa
    for direction, status in ((0, "succeeded"), (1, "aborted")):      # left, right
        h = TurningHarness()     # yaws left whatever is played
        g, why = validate_turn(T(direction=direction), h.p)
        assert g is not None, why
        h.seq.start(g, h.t, h.pose)
        out = h.run(30.0)
        assert out is not None and out.status == status, out
        if status == "aborted":
            assert out.reason.startswith("no progress: turned -") and "right in 2 cycles" in out.reason, out.reason


def test_generator_parameters_reach_the_planned_goal():
    """set_generator_params (the node's gait_generator.* parameters): the goals planned afterwards run a generator
    with those values (here a faster timing: the generated cycle's shift steps last t_shift_s x time scale)."""
    p = parameter_set().values(NO_POSTURE)
    g, why = validate_crawl(crawl_goal(method=1, cycles=1), p, iik_available=True)
    assert g is not None, why
    c0 = np.array([[0.66, 0.22, 0.0], [0.66, -0.22, 0.0], [0.0, 0.26, 0.0], [0.0, -0.26, 0.0]])
    sup = SimpleNamespace(positions=c0, com_xy=np.array([0.25, 0.0]))
    pose = np.array([0, 0, 0.5, 0, 0.6159, 0, 0.7878])
    durations = {}
    for over in (None, {"t_shift_s": 0.2, "t_swing_s": 0.15, "crawl_speed_m_per_s": 0.1}):
        seq = GaitSequencer(p)
        seq.set_generator_params(over)
        run = seq.prepare(g, pose, sup)
        assert run.gen["gen"].p["t_shift_s"] == (over or {}).get("t_shift_s", 0.8)
        durations[bool(over)] = [s.duration_s for s in run.steps if s.name.startswith("shift_")]
        assert seq._gen_params()["t_swing_s"] == (over or {}).get("t_swing_s", 0.6)
    assert durations[True] and all(d == pytest.approx(0.2) for d in durations[True][1:])
    assert all(d == pytest.approx(0.8) for d in durations[False][1:])
    with pytest.raises(ValueError, match="exceeds the limit"):   # a command the overridden limits refuse
        seq = GaitSequencer(p)
        seq.set_generator_params({"limits.vx_m_per_s": 0.01})
        seq.prepare(g, pose, sup)


def test_crawl_to_backs_up_to_a_target_behind_with_a_new_backward_gait():
    """CrawlTo overshoot: at the cycle boundary the law asks for vx < 0 and the sequencer starts a new generator in the
    other direction from the four-point stance the running one ends on (crawl_to.reverse); the next cycle's limb
    targets move backward. With reverse off the run stays forward and is never commanded backward."""
    from atlas_crawl_controller.gait_sequencer import validate_crawl_to
    p = parameter_set().values(NO_POSTURE)
    goal = SimpleNamespace(x_m=0.5, y_m=0.0, yaw_rad=0.0, position_tolerance_m=0.02, yaw_tolerance_rad=0.05,
                           max_cycles=6, timeout_s=0.0)
    g, why = validate_crawl_to(goal, p, iik_available=True)
    assert g is not None, why
    c0 = np.array([[0.66, 0.22, 0.0], [0.66, -0.22, 0.0], [0.0, 0.26, 0.0], [0.0, -0.26, 0.0]])
    sup = SimpleNamespace(positions=c0, com_xy=np.array([0.25, 0.0]))
    pose0 = np.array([0.3, 0, 0.5, 0, 0.6159, 0, 0.7878])       # pelvis heading +x
    for reverse in (True, False):
        seq = GaitSequencer(parameter_set().values({"generator.enabled": True, "crawl_to.reverse": reverse}))
        run = seq.prepare(g, pose0, sup)
        assert run.goal.direction == 1
        n0 = len(run.steps)
        last = np.asarray(run.steps[-1].targets, float)
        past = pose0.copy()
        past[0] = 0.75                    # the pelvis 0.25 m past the target (an overshoot)
        seq._plan_generator_cycle(run, sup, past)
        new = run.steps[n0:]
        assert new, "a cycle was planned"
        end = np.asarray(new[-1].targets, float)
        if reverse:
            assert run.goal.direction == -1 and run.gen["reversals"] == 1 and run.gen["cmd"].vx_m_per_s < 0
            assert end[:, 0].mean() < last[:, 0].mean() - 0.01, (end[:, 0].mean(), last[:, 0].mean())
        else:
            assert run.goal.direction == 1 and "reversals" not in run.gen and run.gen["cmd"].vx_m_per_s >= 0


def _ground_map(t, slope_deg=0.0, bumps_m=0.0, seed=0):
    """A 2 m height map centred on the origin: a plane rising ``slope_deg`` along +y, plus uniform bumps."""
    from atlas_crawl_controller.height_map import HeightMap
    n, res = 41, 0.05
    X, Y = np.meshgrid(-1.0 + res * np.arange(n), -1.0 + res * np.arange(n))
    z = math.tan(math.radians(slope_deg)) * Y + np.random.default_rng(seed).uniform(-bumps_m, bumps_m, X.shape)
    return HeightMap.from_fields(t, res, n, n, -1.0, -1.0, z.ravel())


@pytest.mark.parametrize("slope_deg, bumps_m, needle", [
    (0.0, 0.0, ""), (2.0, 0.0, ""), (5.0, 0.0, "tilted 5.0 deg"), (0.0, 0.03, "uneven, 1.7 cm RMS"),
    (0.0, 0.005, ""),
])
def test_a_keyframe_goal_on_tilted_or_uneven_ground_is_flagged(slope_deg, bumps_m, needle):
    """Session 30: the open-loop key-frame gaits fell on a 5 deg side slope and a ±3 cm rough floor through the
    graph; keyframe_ground says why from the height map (max_tilt_deg 3, max_roughness_m 0.004 by default)."""
    seq = GaitSequencer(parameter_set().values())
    pose = np.array([0.0, 0.0, 0.6, 0.0, 0.0, 0.0, 1.0])
    g, _ = validate_crawl(crawl_goal(), seq.params)
    assert seq.keyframe_ground(g, pose, 1.0) == ""                       # no map: nothing to say
    seq.set_height_map(_ground_map(1.0, slope_deg, bumps_m), 1.0)
    why = seq.keyframe_ground(g, pose, 1.5)
    assert (needle in why and why.endswith("recorded on flat ground")) if needle else why == ""
    if needle:
        t, _ = validate_turn(SimpleNamespace(direction=0, angle_rad=0.0, cycles=2, speed_scale=1.0), seq.params)
        assert seq.keyframe_ground(t, pose, 1.5) == why                  # a key-frame Turn too
        assert seq.keyframe_ground(g, pose, 1.0 + 2.5) == ""             # the map is stale (max_map_age_s 2)
        cart, _ = validate_crawl(crawl_goal(method=1), seq.params, iik_available=True)
        assert seq.keyframe_ground(cart, pose, 1.5) == ""                # METHOD_IIK plans on the map itself
        off = GaitSequencer(parameter_set().values({"keyframe_ground.policy": "off"}))
        off.set_height_map(_ground_map(1.0, slope_deg, bumps_m), 1.0)
        assert off.keyframe_ground(g, pose, 1.5) == ""


def test_the_ground_alternative_is_the_cartesian_goal_or_a_rejection_with_both_reasons():
    from atlas_crawl_controller.gait_sequencer import ground_alternative
    p = parameter_set().values()
    msg = crawl_goal(cycles=3, direction=1)
    g, why = ground_alternative("crawl", msg, "tilted", p, iik_available=True)
    assert why == "" and g.method == "iik" and g.direction == -1 and g.cycles == 3
    assert g.description.endswith("instead of key-frames: tilted") and msg.method == 0      # the message unchanged
    t, why = ground_alternative("turn", SimpleNamespace(direction=1, angle_rad=0.0, cycles=2, speed_scale=1.0,
                                                       method=0, gait=0), "tilted", p, iik_available=True)
    assert why == "" and t.method == "iik" and t.turn_sense == -1
    g, why = ground_alternative("crawl", crawl_goal(gait=1), "tilted", p, iik_available=True)
    assert g is None and why.startswith("tilted; METHOD_IIK instead is refused too") and "diagonal" in why
    g, why = ground_alternative("crawl", msg, "tilted", p, iik_available=False)
    assert g is None and "not available" in why
    g, why = ground_alternative("crawl", msg, "tilted", parameter_set().values({"keyframe_ground.policy": "reject"}),
                                iik_available=True)
    assert g is None and why.startswith("tilted; send METHOD_IIK")


@pytest.mark.parametrize("policy", ["cartesian", "reject"])
def test_a_keyframe_crawl_that_reaches_such_ground_stops_at_the_next_cycle_boundary(policy):
    """A 4-cycle key-frame crawl started on the flat: once the map under it shows a 5 deg slope it stops at the end
    of the cycle it is in (not queued into the next one), in the crawl stance, with the reason; on the flat it
    finishes all 4."""
    h = Harness(parameter_set().values({"keyframe_ground.policy": policy, "success.confirm_min_s": 0.0}))
    g, _ = validate_crawl(crawl_goal(cycles=4), h.p)
    h.seq.set_height_map(_ground_map(0.0), 0.0)
    h.seq.start(g, h.t, h.pose)
    assert h.run(0.3) is None and len(h.refs) <= 4               # in cycle 0 (5 key-frames of 0.1 s)
    h.seq.set_height_map(_ground_map(h.t, slope_deg=5.0), h.t)   # now on a slope
    out = h.run(10.0)
    assert out.status == "aborted" and out.cycles_completed == 1, out
    assert out.reason.startswith("stopped after 1 cycle in the crawl stance: the ground under the robot is tilted "
                                 "5.0 deg"), out.reason
    assert ("sent again, it runs as METHOD_IIK" if policy == "cartesian" else "send METHOD_IIK") in out.reason
    assert len(h.refs) == 5 and h.refs[-1].stance.all()         # nothing of cycle 1 was sent
    flat = Harness(parameter_set().values({"success.confirm_min_s": 0.0}))
    flat.seq.set_height_map(_ground_map(0.0), 0.0)
    flat.seq.start(g, flat.t, flat.pose)
    done = flat.run(20.0)
    assert done.status == "succeeded" and done.cycles_completed == 4, done


def test_the_ground_status_for_diagnostics():
    seq = GaitSequencer(parameter_set().values())
    pose = np.array([0.0, 0.0, 0.6, 0.0, 0.0, 0.0, 1.0])
    assert seq.ground_status(pose, 1.0) == "not checked: no fresh height map under the robot"
    seq.set_height_map(_ground_map(1.0), 1.0)
    assert seq.ground_status(pose, 1.5) == "tilt 0.0 deg, 0.0 cm RMS: key-frame gaits allowed"
    seq.set_height_map(_ground_map(2.0, slope_deg=5.0), 2.0)
    assert seq.ground_status(pose, 2.5) == "tilt 5.0 deg, 0.0 cm RMS: key-frame goals run as METHOD_IIK"
    assert seq.ground_status(None, 2.5).startswith("not checked")


def test_a_diagonal_crawl_starts_in_the_posture_by_default_and_a_static_one_does_not():
    """generator.start_posture_goals default [turn, diagonal_crawl] (session 30): a Cartesian Crawl GAIT_DIAGONAL first
    moves into the start posture; the Cartesian static crawl plans at once."""
    p = parameter_set().values({"generator.enabled": True, "generator.diagonal_enabled": True})
    seq = GaitSequencer(p, script_loader=loader)
    c0 = SimpleNamespace(positions=np.array([[0.62, 0.22, 0.0], [0.62, -0.22, 0.0], [0.0, 0.25, 0.0],
                                             [0.0, -0.25, 0.0]]), com_xy=np.array([0.25, 0.0]))
    pose = np.array([0, 0, 0.5, 0, 0.6159, 0, 0.7878])
    diag, why = validate_crawl(crawl_goal(method=1, gait=1), p, iik_available=True)
    assert diag is not None, why
    run = seq.prepare(diag, pose, c0)
    assert run.deferred and run.steps[0].name == "reposition_posture"
    static, _ = validate_crawl(crawl_goal(method=1), p, iik_available=True)
    run = seq.prepare(static, pose, c0)
    assert not run.deferred and run.gen is not None
    off = GaitSequencer(parameter_set().values({"generator.enabled": True, "generator.diagonal_enabled": True,
                                                "generator.start_posture_goals": ["turn"]}), script_loader=loader)
    assert not off.prepare(diag, pose, c0).deferred
