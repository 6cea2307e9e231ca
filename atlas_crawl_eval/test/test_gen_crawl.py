"""Closed-loop gait generator in MuJoCo physics (issue 12): one short forward crawl and a turn, tracked by the
controller's crawl tracker with the generator re-planning from the measured pelvis every cycle."""

import numpy as np

from atlas_crawl_controller.gait_generator import CrawlCommand, CrawlGaitGenerator
from atlas_crawl_eval.iik_crawl import AtlasSim, NOMINAL, TrackConfig, robot_model, sensed_base, start_stance, track


def _run(cmd, cycles=1):
    model = robot_model()
    sim = AtlasSim()
    home, _ = start_stance(sim, model, nominal=NOMINAL)
    p0, _ = sensed_base(sim)
    gen = CrawlGaitGenerator(sim.contact_site_pos(), sim.com()[:2], 0.0, cmd, cycles)
    arr, st, summ = track(sim, model, gen, TrackConfig(rest_s=0.3), home, quiet=True)
    return gen, p0, arr, summ


def test_forward_cycles_move_forward_upright_and_replan_every_cycle():
    gen, p0, arr, summ = _run(CrawlCommand(0.035, 0.0, 0.0), cycles=2)
    assert not summ["fell"], summ["fall_reason"]
    d = arr["pelvis_pos_m"][-1, :2] - p0[:2]
    assert d[0] > 0.1, d                                   # measured in physics: ~0.1 m per cycle
    assert len(gen.feedback.log) == 1                      # re-planned at the start of cycle 1 (step 4) only
    assert np.all(np.isfinite(np.array(gen.feedback.log)))
    assert arr["pelvis_pos_m"][:, 2].min() > 0.3


def _heading_per_cycle_deg(arr, gen):
    """Pelvis heading change per cycle, sampled at the first lift-off of each cycle (one sway phase)."""
    from atlas_crawl_eval.gen_crawl import phase_times
    from atlas_crawl_kinematics.rotations import quat_wxyz_to_R
    from atlas_crawl_kinematics.support import crawl_heading_rad
    h = np.unwrap([crawl_heading_rad(quat_wxyz_to_R(q)) for q in arr["pelvis_quat_wxyz"]])
    return np.degrees(np.diff(np.interp(phase_times(arr, gen.seq.cycle_s), np.asarray(arr["time_s"]), h)))


def test_an_arc_turns_at_the_commanded_rate_with_the_drift_mapped():
    """A 1 m arc (11.2 deg per cycle commanded): the swings land where the plan puts them in the measured world
    (tracking/world_drift.py), so the pattern turns at the plan's rate. Without it the IIK's own world drifted from
    the real one and the robot turned ~18 deg per cycle (README, issue 12)."""
    from dataclasses import replace
    cmd = CrawlCommand(0.035, 0.0, 0.035)
    per_cycle = np.degrees(0.035 * 5.6)
    rates = {}
    for drift in (True, False):
        model = robot_model()
        sim = AtlasSim()
        home, _ = start_stance(sim, model, nominal=NOMINAL)
        gen = CrawlGaitGenerator(sim.contact_site_pos(), sim.com()[:2], 0.0, cmd, 5)
        arr, _st, summ = track(sim, model, gen, replace(TrackConfig(rest_s=0.3), world_drift=drift), home, quiet=True)
        assert not summ["fell"], summ["fall_reason"]
        rates[drift] = _heading_per_cycle_deg(arr, gen)[1:]      # the first cycle starts from rest
    assert abs(np.mean(rates[True]) - per_cycle) < 2.5 and np.all(np.abs(rates[True] - per_cycle) < 4.0), rates
    assert np.mean(rates[False]) > per_cycle + 4.0, rates           # the mechanism this guards against
