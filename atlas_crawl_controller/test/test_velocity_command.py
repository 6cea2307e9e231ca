"""/cmd_vel validation, velocity runs and the CrawlTo law (issue 12 §2) on the plain GaitSequencer.

The plant is kinematic: the pelvis follows the contact pattern of the last reference the controller core reached
(position = centroid of the targets + a fixed offset, heading = the pattern heading), so the closed loops of the
velocity mode and of CrawlTo are exercised without physics (the live test and the README figures use MuJoCo).
"""
import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from atlas_crawl_controller.cartesian import NOMINAL_STANCE, pattern_heading_rad
from atlas_crawl_controller.controller_core import CrawlControllerCore
from atlas_crawl_controller.gait_generator import CrawlCommand
from atlas_crawl_controller.gait_generator import parameter_set as gen_parameter_set
from atlas_crawl_controller.gait_sequencer import (CRAWL_TO, GaitSequencer, heading_from_quat, parameter_set,
                                                   validate_crawl_to, velocity_goal)
from atlas_crawl_controller.velocity_command import (CrawlToTarget, crawl_to_command, rate_limit,
                                                     validate_cmd_vel)

Q_STANCE = Rotation.from_quat([0, 0.6159, 0, 0.7878])   # crawl stance orientation, heading +x
DT = 0.01


def pose_at(x, y, heading):
    q = (Rotation.from_euler("z", heading) * Q_STANCE).as_quat()
    return np.array([x, y, 0.5, *q])


def test_heading_of_pose_helper():
    assert abs(heading_from_quat(pose_at(0, 0, 0.7)[3:]) - 0.7) < 1e-6


@pytest.fixture(scope="module")
def params():
    return parameter_set().values(), gen_parameter_set().values()


def test_validate_cmd_vel_accepts_and_refuses_with_reasons(params):
    p, gp = params
    cmd, why = validate_cmd_vel((0.03, 0.0, 0.0), (0.0, 0.0, 0.05), p, gp)
    assert why == "" and cmd == CrawlCommand(0.03, 0.0, 0.05)
    for lin, ang, needle in (((math.nan, 0, 0), (0, 0, 0), "linear.x"), ((0, 0, 0), (0, math.inf, 0), "angular.y"),
                             ((0.2, 0, 0), (0, 0, 0), "cmd_vel.max_vx_m_per_s"),
                             ((0, 0.05, 0), (0, 0, 0), "cmd_vel.max_vy_m_per_s"),
                             ((0, 0, 0), (0, 0, -0.2), "cmd_vel.max_wz_rad_per_s")):
        cmd, why = validate_cmd_vel(lin, ang, p, gp)
        assert cmd is None and needle in why, (lin, ang, why)
    # within each limit but beyond the generator's stride per cycle
    p2 = parameter_set().values({"cmd_vel.max_vx_m_per_s": 0.1})
    cmd, why = validate_cmd_vel((0.07, 0, 0), (0, 0, 0), p2, gp)
    assert cmd is None and "max_stride_m" in why


def test_rate_limit_bounds_each_component():
    c = rate_limit(CrawlCommand(0.0, 0.0, 0.0), CrawlCommand(0.05, -0.02, 0.1), 1.0, 0.01, 0.02)
    assert c == CrawlCommand(0.01, -0.01, 0.02)
    assert rate_limit(c, c, 1.0, 0.01, 0.02) == c


def test_crawl_to_law_phases(params):
    p, gp = params
    tgt = CrawlToTarget(1.0, 0.0, 0.0, 0.05, 0.05)
    cmd, ph = crawl_to_command(tgt, (0.0, 0.0), 0.0, p, 5.6)           # far ahead: full speed, no turn
    assert ph == "approach" and cmd.vx_m_per_s == pytest.approx(p["cmd_vel.max_vx_m_per_s"]) and cmd.wz_rad_per_s == 0
    cmd, ph = crawl_to_command(tgt, (0.0, 0.0), math.pi, p, 5.6)       # behind: turn on the spot, no travel
    assert ph == "turn" and cmd.vx_m_per_s == 0 and abs(cmd.wz_rad_per_s) == pytest.approx(p["cmd_vel.max_wz_rad_per_s"])
    cmd, ph = crawl_to_command(tgt, (0.98, 0.0), 0.3, p, 5.6)          # in position: yaw only, toward the target yaw
    assert ph == "align_yaw" and cmd.vx_m_per_s == 0 and cmd.wz_rad_per_s < 0
    cmd, ph = crawl_to_command(tgt, (0.9, 0.05), 0.0, p, 5.6)          # near: holonomic, right and forward
    assert ph == "align" and cmd.vx_m_per_s > 0 and cmd.vy_m_per_s < 0


def test_crawl_to_goal_validation(params):
    p, _ = params
    ok = dict(x_m=1.0, y_m=0.0, yaw_rad=0.0, position_tolerance_m=0.05, yaw_tolerance_rad=0.05, max_cycles=0,
              timeout_s=0.0)
    g, why = validate_crawl_to(SimpleNamespace(**ok), p, iik_available=True)
    assert g is not None and g.kind == CRAWL_TO and g.cycles == p["crawl_to.max_cycles"], why
    for bad, needle in ((dict(x_m=math.nan), "x_m"), (dict(position_tolerance_m=0.0), "position_tolerance_m"),
                        (dict(yaw_tolerance_rad=4.0), "yaw_tolerance_rad"), (dict(max_cycles=10_000), "max_cycles"),
                        (dict(timeout_s=-1.0), "timeout_s")):
        g, why = validate_crawl_to(SimpleNamespace(**dict(ok, **bad)), p, iik_available=True)
        assert g is None and needle in why, (bad, why)
    assert validate_crawl_to(SimpleNamespace(**ok), p, iik_available=False)[0] is None


class Plant:
    """Sequencer + controller core (toy Cartesian solver) + a pelvis that follows the reached contact pattern."""

    def __init__(self, p, heading=0.0):
        self.seq = GaitSequencer(p)
        self.core = CrawlControllerCore()
        self.core.configure({"update_rate_hz": 100.0})
        self.core.set_cartesian_solver(lambda q, pose, tg, st, com: (q, 2, 0.0, 0.05), lambda q, pose: np.zeros((4, 3)))
        self.q = self.core.activate(np.zeros(28)).copy()
        self.t = 0.0
        R = np.array([[math.cos(heading), -math.sin(heading)], [math.sin(heading), math.cos(heading)]])
        self.contacts = np.zeros((4, 3))
        self.contacts[:, :2] = NOMINAL_STANCE @ R.T
        self.offset = np.array([0.3, 0.0])          # pelvis ahead of the contact centroid, body frame
        self.pose = self._pose_of(self.contacts)
        self.refs, self.feedback = [], []

    def _pose_of(self, c):
        h = pattern_heading_rad(c)
        xy = c[:, :2].mean(axis=0) + np.array([[math.cos(h), -math.sin(h)], [math.sin(h), math.cos(h)]]) @ self.offset
        return pose_at(xy[0], xy[1], h)

    def support(self):
        return SimpleNamespace(in_contact=np.ones(4, bool), stability_margin_m=0.1, statically_stable=True, age_s=0.0,
                               positions=self.contacts.copy(), com_xy=self.pose[:2].copy())

    def run(self, seconds, before_tick=None):
        for _ in range(int(seconds / DT)):
            self.t += DT
            if before_tick is not None:
                before_tick(self)
            st = self.core.status()
            if st.reached and self.refs and self.refs[-1].contact_targets is not None:
                self.contacts = np.asarray(self.refs[-1].contact_targets, float).copy()
                self.pose = self._pose_of(self.contacts)
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
        return None


def test_velocity_run_steers_then_stops_on_a_stale_command_in_a_four_point_stance(params):
    p, _ = params
    h = Plant(p)
    fwd = CrawlCommand(0.05, 0.0, 0.0)
    h.seq.command_velocity(fwd, h.t)
    assert h.seq.velocity_active(h.t)
    h.seq.start(velocity_goal(p, fwd.vx_m_per_s), h.t, h.pose, h.support())
    t_stop = {}

    def publisher(pl):          # 10 Hz: forward, a left turn from the 2nd cycle (boundary ~6.1 s), silence from 11 s
        if pl.t < 11.0 and round(pl.t * 100) % 10 == 0:
            pl.seq.command_velocity(fwd if pl.t < 5.0 else CrawlCommand(0.03, 0.0, 0.08), pl.t)
        if pl.t >= 11.0 and "t" not in t_stop:
            t_stop["t"] = pl.t
    x0 = h.pose[0]
    out = h.run(60.0, publisher)
    assert out is not None and out.status == "succeeded" and "stale" in out.reason, out
    assert out.cycles_completed >= 1
    assert h.pose[0] - x0 > 0.2                       # crawled forward (kinematic plant: the pattern's stride)
    assert heading_from_quat(h.pose[3:]) > 0.05       # the turn command of the second cycle turned the pattern
    last = h.refs[-1]
    assert last.mode == 2 and np.all(last.stance)    # ends in a four-point stance reference
    # stopped within one step of the command going stale (0.5 s timeout + the step in flight <= 0.8 s + settle)
    assert h.t - t_stop["t"] < p["cmd_vel.timeout_s"] + 0.8 + 0.01 + p["cmd_vel.stop_settle_s"] + 0.1
    assert not h.seq.busy


def test_zero_command_stops_and_idle_sequencer_ignores_stale(params):
    p, _ = params
    h = Plant(p)
    h.seq.command_velocity(CrawlCommand(0.04, 0.0, 0.0), h.t)
    h.seq.start(velocity_goal(p, 0.04), h.t, h.pose, h.support())

    def pub(pl):
        if round(pl.t * 100) % 10 == 0:
            pl.seq.command_velocity(CrawlCommand(0.04, 0, 0) if pl.t < 3.0 else CrawlCommand(0, 0, 0), pl.t)
    out = h.run(30.0, pub)
    assert out is not None and out.status == "succeeded" and "zero" in out.reason, out
    assert not h.seq.velocity_active(h.t)
    h.t += 1.0
    h.seq.command_velocity(CrawlCommand(0.04, 0, 0), h.t - 0.6)           # older than timeout_s: stale
    assert h.seq.velocity_command(h.t) is None and not h.seq.velocity_active(h.t)


def test_reverse_command_ends_the_segment_for_a_new_gait(params):
    p, _ = params
    h = Plant(p)
    h.seq.command_velocity(CrawlCommand(0.04, 0, 0), h.t)
    h.seq.start(velocity_goal(p, 0.04), h.t, h.pose, h.support())

    def pub(pl):
        if round(pl.t * 100) % 10 == 0:
            pl.seq.command_velocity(CrawlCommand(0.04 if pl.t < 3.0 else -0.04, 0, 0), pl.t)
    out = h.run(40.0, pub)
    assert out is not None and out.status == "succeeded" and "direction change" in out.reason, out
    assert np.all(h.refs[-1].stance)
    assert h.seq.velocity_active(h.t)       # the node starts a backward run from here


@pytest.mark.parametrize("target", [(0.45, 0.0, 0.0), (0.3, 0.25, 0.6)])
def test_crawl_to_reaches_the_target_on_the_kinematic_plant(params, target):
    p, _ = params
    h = Plant(p)
    goal, why = validate_crawl_to(SimpleNamespace(x_m=target[0] + h.pose[0], y_m=target[1] + h.pose[1],
                                                  yaw_rad=target[2], position_tolerance_m=0.03,
                                                  yaw_tolerance_rad=0.05, max_cycles=12, timeout_s=0.0),
                                  p, iik_available=True)
    assert goal is not None, why
    h.seq.start(goal, h.t, h.pose, h.support())
    out = h.run(150.0)
    assert out is not None and out.status == "succeeded", out
    assert out.position_error_m <= 0.03 and abs(out.yaw_error_rad) <= 0.05
    d = [f["remaining_distance_m"] for f in h.feedback]
    assert d[-1] < d[0] and all(math.isfinite(f["heading_error_rad"]) for f in h.feedback)
    assert out.cycles_completed <= 12


def test_crawl_to_gives_up_at_max_cycles_with_the_errors(params):
    p, _ = params
    h = Plant(p)
    goal, _ = validate_crawl_to(SimpleNamespace(x_m=3.0, y_m=0.0, yaw_rad=0.0, position_tolerance_m=0.03,
                                                yaw_tolerance_rad=0.05, max_cycles=1, timeout_s=0.0),
                                p, iik_available=True)
    h.seq.start(goal, h.t, h.pose, h.support())
    out = h.run(60.0)
    assert out.status == "aborted" and "max_cycles" in out.reason and out.position_error_m > 2.0, out


def test_crawl_to_cancel_ends_after_the_step_in_flight_in_a_four_point_stance(params):
    p, _ = params
    h = Plant(p)
    goal, _ = validate_crawl_to(SimpleNamespace(x_m=2.0, y_m=0.0, yaw_rad=0.0, position_tolerance_m=0.03,
                                                yaw_tolerance_rad=0.05, max_cycles=5, timeout_s=0.0),
                                p, iik_available=True)
    h.seq.start(goal, h.t, h.pose, h.support())
    t_cancel = {}

    def cancel(pl):
        if pl.t >= 3.0 and not t_cancel:
            t_cancel["t"] = pl.t
            pl.seq.request_cancel()
    out = h.run(30.0, cancel)
    assert out is not None and out.status == "canceled" and "stop_four_point_stance" in out.reason, out
    assert np.all(h.refs[-1].stance) and h.t - t_cancel["t"] < 0.8 + p["cmd_vel.stop_settle_s"] + 0.1


def test_crawl_to_law_backs_up_to_a_near_target_behind_instead_of_turning_round():
    p = parameter_set().values()
    tgt = CrawlToTarget(1.0, 0.0, 0.0, 0.02, 0.05)
    cmd, ph = crawl_to_command(tgt, (1.25, 0.02), 0.0, p, 5.6)         # 0.25 m past it: back up, slightly right
    assert ph == "align" and cmd.vx_m_per_s < 0 and cmd.vy_m_per_s < 0
    off = parameter_set().values({"crawl_to.reverse": False})
    cmd, ph = crawl_to_command(tgt, (1.25, 0.02), 0.0, off, 5.6)       # forward only: turn round to face it
    assert ph == "turn" and cmd.vx_m_per_s == 0.0
    cmd, ph = crawl_to_command(tgt, (1.9, 0.0), 0.0, p, 5.6)           # 0.9 m behind, beyond back_up_radius_m
    assert ph == "turn"
    cmd, ph = crawl_to_command(tgt, (1.015, 0.04), 0.0, p, 5.6)         # 1.5 cm past, 4 cm aside: no reversal
    assert ph == "align" and cmd.vx_m_per_s == 0.0 and cmd.vy_m_per_s < 0


def test_a_fresh_command_extends_one_gait_past_its_planned_cycles(params):
    """Continuous crawling is one gait: while the command stays fresh, the generator planned cmd_vel.segment_cycles
    ahead is extended (no four-point stop, no reposition, no new heading latched between segments); it stops on a
    stale command."""
    p = parameter_set().values({"cmd_vel.segment_cycles": 2})
    h = Plant(p)
    fwd = CrawlCommand(0.04, 0.0, 0.0)

    def pub(pl):
        if pl.t < 40.0 and round(pl.t * 100) % 10 == 0:
            pl.seq.command_velocity(fwd, pl.t)
    h.seq.command_velocity(fwd, h.t)
    h.seq.start(velocity_goal(p, fwd.vx_m_per_s), h.t, h.pose, h.support())
    run = h.seq._run
    gen = run.gen["gen"]
    n_pre = run.gen["n_pre"]
    x0 = h.pose[0]
    out = h.run(80.0, pub)
    assert out is not None and out.status == "succeeded" and "stale" in out.reason, out
    assert out.cycles_completed >= 5 and gen.cycles >= 6             # 40 s of 5.6 s cycles, planned 2 at a time
    names = [s.name for s in run.steps]
    assert not any(n.startswith("reposition") for n in names[n_pre:])     # repositioned at the start only
    assert names.count("stop_four_point_stance") == 1 and names[-1] == "stop_four_point_stance"
    assert h.pose[0] - x0 > 0.04 * 30                                   # kept crawling at the command
