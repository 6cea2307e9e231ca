"""Gait sequencer fall handling (plain class, fake poses): posture checks before a goal, "fell: ..." aborts with the
protective key-frame, end-posture checks of Crawl/Turn/Roll, the Recover run and auto_recover."""
import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from atlas_crawl_controller.gait_sequencer import (RECOVER, GaitSequencer, parameter_set, validate_crawl,
                                                   validate_recover, validate_roll, validate_turn)
from atlas_crawl_controller.keyframes import load_script


def pose(z=0.54, pitch=0.25, roll=0.0, x=0.0):
    R = Rotation.from_euler("y", math.pi / 2 - pitch) * Rotation.from_euler("z", roll)
    return np.r_[x, 0.0, z, R.as_quat()]


CRAWL_POSE = pose()
PRONE = pose(z=0.18, pitch=0.0)
SUPINE = pose(z=0.15, pitch=0.0, roll=math.pi)
RIGHT_SIDE = pose(z=0.25, pitch=0.0, roll=math.pi / 2)


def crawl_goal(p, **kw):
    g = dict(cycles=1, distance_m=0.0, direction=0, loop_mode=0, method=0, speed_scale=1.0)
    g.update(kw)
    return validate_crawl(SimpleNamespace(**g), p)[0]


class Loop:
    """Sequencer at 100 Hz with a controller that reaches every key-frame after its duration; ``poses`` maps a
    feedback phase prefix (or a time) to a new pelvis pose."""

    def __init__(self, params=None, pose0=CRAWL_POSE):
        # the pelvis pose here moves only when a test says so: the crawl progress check (test_gait_sequencer) is off
        self.p = (params or parameter_set().values()).replace(**{"success.min_crawl_progress_m_per_cycle": 0.0})
        self.seq = GaitSequencer(self.p)
        self.pose = np.array(pose0, float)
        self.t = 0.0
        self.refs, self.phases = [], []
        self.sent = None

    def settle(self, seconds=1.0):
        for _ in range(int(seconds / 0.01)):
            self.t += 0.01
            self.seq.observe(self.t, self.pose)

    def run(self, goal, on_phase=None, at_time=None, max_s=400.0, every_tick=None):
        self.seq.start_prepared(self.seq.prepare(goal, self.pose), self.t) if hasattr(self.seq, "prepare") \
            else self.seq.start(goal, self.t, self.pose)
        t0 = self.t
        while self.t - t0 < max_s:
            st = None
            if self.sent is not None:
                sid, t_due = self.sent
                st = SimpleNamespace(sequence_id=sid, accepted=True, reached=self.t >= t_due, reason="")
            out = self.seq.tick(self.t, st, None, self.pose)
            if out.reference is not None:
                self.refs.append(out.reference)
                self.sent = (out.reference.sequence_id, self.t + out.reference.duration_s)
            if out.feedback:
                ph = out.feedback["phase"]
                if not self.phases or self.phases[-1] != ph:
                    self.phases.append(ph)
                    if on_phase:
                        new = on_phase(ph, self)
                        if new is not None:
                            self.pose = np.array(new, float)
            if at_time is not None and self.t - t0 >= at_time[0]:
                self.pose = np.array(at_time[1], float)
            if every_tick is not None:
                every_tick(self)
            if out.outcome:
                return out.outcome
            self.t += 0.01
        raise AssertionError("no outcome")


@pytest.mark.parametrize("lying", [SUPINE, PRONE, RIGHT_SIDE])
def test_crawl_and_turn_rejected_while_down(lying):
    lp = Loop(pose0=lying)
    lp.settle()
    g = crawl_goal(lp.p)
    why = lp.seq.posture_rejection(g)
    assert why and ("robot is down" in why or "not in the crawl stance" in why) and "Recover" in why, why
    tg = validate_turn(SimpleNamespace(direction=0, cycles=1, speed_scale=1.0, angle_rad=0.0), lp.p)[0]
    assert lp.seq.posture_rejection(tg)
    assert lp.seq.needs_recovery(g)


def test_upright_crawl_accepted_and_succeeds():
    lp = Loop()
    lp.settle()
    g = crawl_goal(lp.p)
    assert lp.seq.posture_rejection(g) == ""
    out = lp.run(g)
    assert out.status == "succeeded", out


def test_fall_during_crawl_aborts_and_holds_by_default():
    lp = Loop()
    lp.settle()
    out = lp.run(crawl_goal(lp.p, cycles=3), at_time=(2.0, RIGHT_SIDE))
    assert out.status == "aborted" and out.reason.startswith("fell: "), out
    assert lp.p["protect_script"] == ""                     # default: no protective move, the last command holds
    protect = load_script("fall_protect").keyframes[-1]
    last = lp.refs[-1]
    assert not (len(last.joint_positions_rad) == protect.selected.sum()
                and np.allclose(last.joint_positions_rad, protect.q[protect.selected]))
    assert not lp.seq.busy


def test_fall_during_crawl_aborts_with_reason_and_protective_keyframe():
    lp = Loop(params=parameter_set().values().replace(protect_script="fall_protect"))
    lp.settle()
    out = lp.run(crawl_goal(lp.p, cycles=3), at_time=(2.0, RIGHT_SIDE))
    assert out.status == "aborted" and out.reason.startswith("fell: "), out
    assert "roll about the spine" in out.reason and "right side" in out.reason
    assert out.duration_s - 2.0 <= 0.1                                  # flagged within 100 ms
    protect = load_script("fall_protect").keyframes[-1]
    last = lp.refs[-1]
    assert last.mode == 1 and list(last.joint_names) == [n for n, s in zip(
        __import__("atlas_crawl_controller.robot_info", fromlist=["JOINT_NAMES"]).JOINT_NAMES, protect.selected) if s]
    np.testing.assert_allclose(last.joint_positions_rad, protect.q[protect.selected])
    assert not lp.seq.busy


def test_crawl_ending_on_its_side_is_not_success():
    """A fall in the very last tick (no time to debounce) is still caught by the end-posture check."""
    lp = Loop()
    lp.settle()
    g = crawl_goal(lp.p)

    def last_keyframe(ph, _lp):
        return RIGHT_SIDE if ph.endswith(load_script(g.script).keyframes[-1].name) and len(_lp.phases) > 3 else None
    out = lp.run(g, on_phase=last_keyframe)
    assert out.status == "aborted" and out.reason.startswith("fell: "), out


def _mark_met(ph, lp):
    """on_phase: note the sim time of the first "confirming:end_stance" feedback (the goal was met there)."""
    if ph.startswith("confirming") and not hasattr(lp, "t_met"):
        lp.t_met = lp.t


def test_a_met_goal_is_reported_after_holding_its_end_stance():
    """success.confirm_*: the outcome comes confirm_min_s after the goal was met (the robot is still here), with the
    figures of that moment; 0 reports at once, as before."""
    ends = {}
    for cmin in (0.0, 0.5):
        lp = Loop(params=parameter_set().values({"success.confirm_min_s": cmin}))
        lp.settle()
        out = lp.run(crawl_goal(lp.p), on_phase=_mark_met)
        assert out.status == "succeeded" and out.reason == "", out
        ends[cmin] = (lp.t, out.duration_s, getattr(lp, "t_met", None))
    (t0, d0, met0), (t1, d1, met1) = ends[0.0], ends[0.5]
    assert met0 is None and met1 is not None                  # only the held run says "confirming"
    assert d1 == pytest.approx(d0, abs=0.011)                 # measured when met, not when reported
    assert 0.5 - 1e-6 <= t1 - met1 <= 0.52 and t1 - t0 == pytest.approx(0.5, abs=0.02)


def test_a_fall_after_the_goal_was_met_aborts_it():
    """The robot rolls onto its side while holding the end stance (a diagonal Turn on the 10 deg slope did so 1.7 s
    after SUCCEEDED in session 25): the goal is aborted "fell ... after the goal was met", not reported succeeded."""
    lp = Loop(params=parameter_set().values({"success.confirm_min_s": 0.5}))
    lp.settle()

    def roll_over(ph, lp_):
        _mark_met(ph, lp_)
        return RIGHT_SIDE if ph.startswith("confirming") else None
    out = lp.run(crawl_goal(lp.p), on_phase=roll_over)
    assert out.status == "aborted" and out.reason.startswith("fell ") and "after the goal was met" in out.reason, out
    assert lp.t - lp.t_met <= 0.1 and not lp.seq.busy


def test_a_robot_still_moving_is_held_up_to_confirm_max_then_judged_on_its_posture():
    """Sliding on at 0.2 m/s (faster than start_settle.max_speed_m_per_s) but upright: held until confirm_max_s, then
    succeeded; the same slide ending on the back just before then is aborted, saying how long after the goal."""
    p = parameter_set().values({"success.confirm_min_s": 0.3, "success.confirm_max_s": 1.5})
    for end, status in ((None, "succeeded"), (SUPINE, "aborted")):
        lp = Loop(params=p)
        lp.settle()

        def slide(lp_, end=end):
            if hasattr(lp_, "t_met"):
                lp_.pose[0] += 0.2 * 0.01
                if end is not None and lp_.t - lp_.t_met > 1.45:
                    lp_.pose = np.array(end, float)
        out = lp.run(crawl_goal(lp.p), on_phase=_mark_met, every_tick=slide)
        assert out.status == status, out
        assert 1.45 <= lp.t - lp.t_met <= 1.52
        if status == "aborted":
            assert "s after the goal was met" in out.reason and "supine" in out.reason, out


def test_no_valid_pose_while_holding_the_end_stance_is_not_a_success():
    """Non-finite poses from the goal's end on: held until confirm_max_s (nothing to judge the posture by), then
    aborted with the reason."""
    lp = Loop(params=parameter_set().values({"success.confirm_min_s": 0.3, "success.confirm_max_s": 1.0}))
    lp.settle()

    def blind(ph, lp_):
        _mark_met(ph, lp_)
        return np.full(7, np.nan) if ph.startswith("confirming") else None
    out = lp.run(crawl_goal(lp.p), on_phase=blind)
    assert out.status == "aborted" and "could not confirm the end stance" in out.reason, out
    assert 0.99 <= lp.t - lp.t_met <= 1.02


def test_a_cancel_while_holding_the_end_stance_ends_it_canceled():
    lp = Loop(params=parameter_set().values({"success.confirm_min_s": 2.0}))
    lp.settle()

    def cancel(ph, lp_):
        _mark_met(ph, lp_)
        if ph.startswith("confirming"):
            lp_.seq.request_cancel()
    out = lp.run(crawl_goal(lp.p), on_phase=cancel)
    assert out.status == "canceled" and "holding the end stance" in out.reason, out
    assert lp.t - lp.t_met < 0.05


@pytest.mark.parametrize("end_pose, ok", [(SUPINE, True), (PRONE, False), (RIGHT_SIDE, False)])
def test_roll_to_back_checks_its_end_posture(end_pose, ok):
    lp = Loop()
    lp.settle()
    g = validate_roll(SimpleNamespace(from_side=0, to=0), lp.p)[0]
    out = lp.run(g, on_phase=lambda ph, _lp: end_pose if len(_lp.phases) == 3 else None)
    assert (out.status == "succeeded") == ok, out
    if not ok:
        assert "not on the back" in out.reason


def test_roll_rejections_by_posture():
    lp = Loop(pose0=SUPINE)
    lp.settle()
    p = lp.p
    assert "already on the back" in lp.seq.posture_rejection(validate_roll(SimpleNamespace(from_side=0, to=0), p)[0])
    assert lp.seq.posture_rejection(validate_roll(SimpleNamespace(from_side=0, to=1), p)[0]) == ""
    lp2 = Loop()
    lp2.settle()
    assert "already belly down" in lp2.seq.posture_rejection(validate_roll(SimpleNamespace(from_side=1, to=1), p)[0])


def chain(ph, lp):
    """Fake physics of a recovery: each stage lands in the posture its script is meant to reach."""
    if ph != "settling" or not lp.seq._run.stages:
        return None
    last = lp.seq._run.stages[-1]
    return {"roll_to_belly": PRONE, "prone+init_crawl_stance_from_prone": CRAWL_POSE, "prone": PRONE}[last]


@pytest.mark.parametrize("start, stages", [
    (SUPINE, ("roll_to_belly", "prone+init_crawl_stance_from_prone")),
    (PRONE, ("prone+init_crawl_stance_from_prone",)),
    (RIGHT_SIDE, ("prone", "prone+init_crawl_stance_from_prone")),
    (CRAWL_POSE, ()),
])
def test_recover_chains_scripts_from_the_estimated_posture(start, stages):
    lp = Loop(pose0=start)
    lp.settle()
    g, why = validate_recover(SimpleNamespace(max_stages=0), lp.p)
    assert g.kind == RECOVER, why
    out = lp.run(g, on_phase=chain)
    assert out.status == "succeeded", out
    assert out.stages == stages and out.final_posture == "crawl"
    assert out.initial_posture == ("crawl" if not stages else lp.seq.fall_detector.posture(start))
    assert lp.seq.posture_rejection(crawl_goal(lp.p)) == ""               # up again: crawls are accepted


def test_recover_gives_up_after_max_stages():
    lp = Loop(pose0=SUPINE)
    lp.settle()
    g, _ = validate_recover(SimpleNamespace(max_stages=2), lp.p)
    out = lp.run(g)                                                      # the fake robot never moves
    assert out.status == "aborted" and "after 2 recovery scripts" in out.reason and "supine" in out.reason, out


def test_auto_recover_recovers_then_runs_the_goal():
    p = parameter_set().values().replace(auto_recover=True)
    lp = Loop(params=p, pose0=PRONE)
    lp.settle()
    g = crawl_goal(p)
    assert lp.seq.needs_recovery(g)
    out = lp.run(g, on_phase=chain)
    assert out.status == "succeeded" and out.cycles_completed == 1, out
    assert "settling" in lp.phases and any(ph.startswith("moving:") for ph in lp.phases[lp.phases.index("settling"):])


@pytest.mark.parametrize("bad", [-1, 51, 2.5, True, "3"])
def test_invalid_recover_goals(bad):
    g, why = validate_recover(SimpleNamespace(max_stages=bad), parameter_set().values())
    assert g is None and "max_stages" in why


def test_recover_aborts_with_reason_when_a_script_cannot_load():
    def loader(name):
        if name == "init_crawl_stance_from_prone":
            raise OSError("disk gone")
        return load_script(name)
    lp = Loop(pose0=SUPINE)
    lp.seq = GaitSequencer(lp.p, script_loader=loader)
    lp.settle()
    out = lp.run(validate_recover(SimpleNamespace(max_stages=0), lp.p)[0], on_phase=chain)
    assert out.status == "aborted" and "cannot load the next recovery script" in out.reason and "disk gone" in out.reason
    assert out.stages == ("roll_to_belly",) and not lp.seq.busy
