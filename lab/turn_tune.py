"""Turn-on-the-spot tuning helper: design a turn_left candidate, play it with the thesis turning protocol, and score
it with the evaluation's own metrics (thesis §4.1.2, atlas_crawl_eval.metrics.turning_metrics).

Two additions over ``gait_design turn_left`` / ``search_gait turn_left``:

* the rotation centre (``centre_x_m``, ``centre_y_m`` of :meth:`~.gait_design.CrawlDesigner.turn`, pelvis-start
  frame; None = contact centroid): under the mean CoM of the cycle instead of the contact centroid (which lies
  ahead of the CoM) it shrinks the CoM circle (the thesis "radius"); the K0 stance does not depend on it.
* :func:`play` — the trial loop of :func:`atlas_crawl_eval.run_trials.run_trial` (fresh sim, seeded start-pose
  noise, 2.5 s logged settle before/after, full loop) with the effort-saturation measure of
  :mod:`~.run_sequence` (longest continuous time any servo is at its force limit), scored with
  ``turning_metrics`` on the logged trial. Both the candidate (left) and its mirror (right, what
  ``turn_right.yaml``'s ``derive: mirror`` plays) can be measured.

    python lab/turn_tune.py --set turn_rad=0.7 t_shift_s=0.45 centre_x_m=0.24 --cycles 12 \\
        [--right] [--seeds 0 1] [--out candidate.yaml]
    python lab/turn_tune.py --script turn_left --cycles 12     # measure a shipped script
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

from atlas_crawl_controller.keyframes import load_script
from atlas_crawl_kinematics.progress import Progress

from gait_design import DESCRIPTIONS, PRESETS, CrawlDesigner, parse_sets, to_yaml
from atlas_crawl_mujoco.run_sequence import MAX_SATURATION_S

#: the turn designer (gait_design's CrawlDesigner.turn has the rotation-centre option)
TurnDesigner = CrawlDesigner


def design_yaml(designer: TurnDesigner, params: dict, measured: str | None = None) -> str:
    """turn_left YAML for ``params`` (on top of the shipped turn_left preset)."""
    kw = dict(PRESETS.get("turn_left", {}), **params)
    kfs, p = designer.turn(**kw)
    for k in kfs:
        print(f"  {k['name']:14s} margin({'/'.join(k['tri'])}) {k['margin']:+.3f} com ({k['com'][0]:+.3f},"
              f"{k['com'][1]:+.3f}) err {k['err'] * 1000:.1f} mm", file=sys.stderr)
    return to_yaml(kfs, "turn_left", DESCRIPTIONS["turn_left"], p, tool="turn_tune", measured=measured)


def play(script, cycles=12, seed=0, noise_rad=0.01, settle_s=2.5, log_path=None):
    """One thesis-protocol turning trial of ``script`` (KeyframeScript), full loop. Returns a dict of the
    evaluation's turning metrics + fell + max continuous effort-saturation time (s) and its joint."""
    from atlas_crawl_controller.player import KeyframePlayer
    from atlas_description import JOINT_NAMES
    from atlas_crawl_eval import metrics
    from atlas_crawl_eval.trial_log import TrialLog

    from atlas_crawl_mujoco.logger import Logger
    from atlas_crawl_mujoco.sim import AtlasSim

    sim = AtlasSim(seed=seed)
    try:
        q0 = script.keyframes[0].q
        sim.reset(q0, base_quat_wxyz=tuple(float(v) for v in script.start_quat_wxyz), noise_rad=noise_rad)
        sim.set_joint_targets(q0)
        log = Logger(sim.params.get("log_rate_hz", 100.0))
        log.next_t = sim.time
        dt = sim.dt
        sim.fall_check = "none"
        rest = np.ones(4, bool)
        for _ in range(int(round(settle_s / dt))):
            sim.step(1)
            log.maybe_sample(sim, rest, -1, -1)
        sim.fall_check = script.fall_check
        pl = KeyframePlayer(script, loop_mode="full", cycles=cycles)
        pl.start(sim.joint_q(), sim.joint_effort(), sim.kp)
        lim = sim.model.actuator_forcerange[sim.map.act_id, 1]
        sat_run, max_sat = np.zeros(28), np.zeros(28)
        fell, k, after = False, 0, int(round(settle_s / dt))
        while after > 0:
            if not pl.done:
                q, _ = pl.update(dt)
                sim.set_joint_targets(q)
            sim.step(1)
            if pl.done:
                after -= 1
                log.maybe_sample(sim, pl.planned_stance(), -1, -1)
            else:
                log.maybe_sample(sim, pl.planned_stance(), pl.cycle, pl.keyframe_index)
                sat = np.abs(sim.joint_effort()) >= 0.999 * lim
                sat_run = np.where(sat, sat_run + dt, 0.0)
                max_sat = np.maximum(max_sat, sat_run)
            k += 1
            if k % 10 == 0:
                f, _ = sim.fallen()
                if f:
                    fell = True
                    break
        arrays = log.arrays(dict(gait=script.name, loop_mode="full", cycles=cycles, seed=seed, fell=fell))
    finally:
        sim.close()
    path = log_path or os.path.join(tempfile.mkdtemp(prefix="turn_tune_"), "trial.npz")
    np.savez_compressed(path, **arrays)
    lg = TrialLog.load(path)
    j = int(np.argmax(max_sat))
    out = dict(fell=fell, max_sat_s=float(max_sat[j]), sat_joint=JOINT_NAMES[j] if max_sat[j] > 0 else "")
    if fell:
        return out
    tm = metrics.turning_metrics(lg)
    st = metrics.stability_metrics(lg)
    out.update(time_per_circle_s=tm.time_per_circle_s, radius_m=tm.radius_m, drift_m=tm.drift_per_circle_m,
               cycles_per_circle=tm.cycles_per_circle, turn_per_cycle_deg=tm.turn_per_cycle_deg,
               t_extrap_s=tm.time_per_circle_extrapolated_s, radius_cs_m=tm.radius_cycle_starts_m,
               n_circles=tm.n_circles)
    out.update(planned_polygon_margin_min_m=st.planned_positions_min_m, margin_min_m=st.min_m)
    return out


def fmt(r: dict) -> str:
    if r.get("fell"):
        return f"FELL (sat {r['max_sat_s']:.2f} s {r['sat_joint']})"
    return (f"t/circle {r['time_per_circle_s']:.2f} s (extrap {r['t_extrap_s']:.2f}) radius {r['radius_m']:.4f} m "
            f"(cycle starts {r['radius_cs_m']:.4f}) drift {r['drift_m']:.4f} m cycles/circle "
            f"{r['cycles_per_circle']:.2f} turn/cycle {r['turn_per_cycle_deg']:+.2f} deg planned-margin min "
            f"{r.get('planned_polygon_margin_min_m', float('nan')):+.3f} m sat {r['max_sat_s']:.2f} s "
            f"{r['sat_joint']}{' (> %.1f s!)' % MAX_SATURATION_S if r['max_sat_s'] > MAX_SATURATION_S else ''}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", nargs="*", default=[], help="design overrides key=value (gait_design keys + "
                    "centre_x_m, centre_y_m) on top of the turn_left preset")
    ap.add_argument("--script", default=None, help="measure this existing script (name or path) instead")
    ap.add_argument("--cycles", type=int, default=12)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--noise", type=float, default=0.01, help="start-pose joint noise, ±rad (evaluation default)")
    ap.add_argument("--right", action="store_true", help="also play the mirror image (turn_right)")
    ap.add_argument("--out", default=None, help="write the designed turn_left YAML here")
    ap.add_argument("--quiet", action="store_true", help="no progress bar (the per-trial lines are kept)")
    a = ap.parse_args(argv)
    if a.script:
        left = load_script(a.script)
    else:
        txt = design_yaml(TurnDesigner(), parse_sets(a.set))
        path = a.out or os.path.join(tempfile.mkdtemp(prefix="turn_tune_"), "turn_left.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(txt)
        print("wrote", path)
        left = load_script(path)
    scripts = [("left", left)] + ([("right", left.mirrored("turn_right"))] if a.right else [])
    with Progress(len(scripts) * len(a.seeds), desc="turn_tune", unit="trial", quiet=a.quiet) as bar:
        for side, sc in scripts:
            for sd in a.seeds:
                bar.set_info(f"{side} seed {sd}")
                r = play(sc, a.cycles, sd, a.noise)
                bar.update(1)
                (print if a.quiet else bar.write)(f"{side} seed {sd}: {fmt(r)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
