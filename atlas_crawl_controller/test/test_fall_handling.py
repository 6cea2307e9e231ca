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

    def run(self, goal, on_phase=None, at_time=None, max_s=400.0):
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
