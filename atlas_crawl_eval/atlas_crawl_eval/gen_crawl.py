"""Closed-loop Cartesian crawl (gait generator, issue 12) in MuJoCo physics: forward, backward, turn on the spot,
arcs.

    python -m atlas_crawl_eval.gen_crawl --modes forward backward turn --cycles 10 [--trials 1 --noise-rad 0.01] \
        [--com-modulation] [--set feedback.heading_gain=0.5 ...] [--no-feedback] \
        [--scene 'slope:angle_deg=5'] [--disturbance gains] [--terrain map|blind]
    python -m atlas_crawl_eval.gen_crawl --modes arc --radius-m 0.5 1 2 3 [--vx 0.035]

An arc is the command (vx, 0, vx / R) (R > 0: to the left); its radius is measured by a least-squares circle through
the pelvis positions at the same gait phase of every cycle (target: within 5 % of R, issue 12 §3).

Each trial: a fresh simulator, the runner's nominal hands-and-knees stance (:func:`iik_crawl.start_stance`), then
the controller's :class:`~atlas_crawl_controller.gait_generator.CrawlGaitGenerator` tracked by the controller's
crawl tracker (:func:`iik_crawl.track`, which calls the generator's ``observe`` with the measured pelvis every
tick). Prints speed (m/s), drift (m/gait), turn (°/gait), s/circle, falls, beside the key-frame gaits' figures
(README, part loop 10 × 10) and the issue-12 targets, and the signed progress along the commanded direction (a
backward crawl that slid forward down a slope is flagged WRONG WAY). Exit 1 on any fall or wrong way.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import yaml

from atlas_crawl_controller.gait_generator import CrawlCommand, CrawlGaitGenerator, diagonal_params, parameter_set
from atlas_crawl_controller.parameters import ParameterError
from atlas_crawl_mujoco.height_map import HeightMapFeed
from atlas_crawl_mujoco.sim import AtlasSim

from .iik_crawl import (NOMINAL, add_track_args, eval_metrics, robot_model, sensed_base, start_stance, track,
                        track_config_from_args, trial_log_of)

#: key-frame gaits (README "Results", evaluate.py part loop, 10 trials x 10 cycles)
KEYFRAME = {"forward": "0.1266 m/s, drift 0.0089 m/gait, turn -0.03 deg/gait",
            "backward": "0.0682 m/s, drift 0.0086 m/gait, turn +0.22 deg/gait",
            "turn": "32.6 deg/cycle, 45.3 s/circle (README, 4 cycles)", "arc": "-"}
TARGETS = {"forward": ">= 0.30 m/s, drift <= 0.005 m/gait, |turn| <= 0.2 deg/gait",
           "backward": ">= 0.30 m/s, drift <= 0.005 m/gait, |turn| <= 0.2 deg/gait",
           "turn": "<= 15 s/circle, radius <= 0.05 m", "arc": "radius within 5 %"}


def command_for(mode: str, vx: float, wz: float, radius_m: float = math.inf) -> CrawlCommand:
    if mode == "arc":
        if not (math.isfinite(radius_m) and radius_m != 0.0):
            raise ValueError(f"an arc needs a finite non-zero radius, got {radius_m!r}")
        return CrawlCommand(abs(vx), 0.0, abs(vx) / radius_m)
    if mode == "forward":
        return CrawlCommand(abs(vx), 0.0, 0.0)
    if mode == "backward":
        return CrawlCommand(-abs(vx), 0.0, 0.0)
    if mode == "turn":
        return CrawlCommand(0.0, 0.0, wz)
    raise ValueError(f"unknown mode {mode!r}")


def fit_circle(xy):
    """(centre (2,), radius) of the least-squares circle through the points ``xy`` (N, 2), N >= 3 (Kasa's
    algebraic fit: 2 c·p + (r² − |c|²) = |p|², linear in c and r² − |c|²)."""
    xy = np.asarray(xy, float)
    if xy.ndim != 2 or xy.shape[1] != 2 or len(xy) < 3 or not np.all(np.isfinite(xy)):
        raise ValueError("fit_circle: needs >= 3 finite (x, y) points")
    A = np.c_[2.0 * xy, np.ones(len(xy))]
    sol, *_ = np.linalg.lstsq(A, (xy ** 2).sum(axis=1), rcond=None)
    c = sol[:2]
    return c, float(math.sqrt(max(sol[2] + c @ c, 0.0)))


def phase_times(arr, cycle_s: float) -> np.ndarray:
    """Log times at the same gait phase in every cycle (each first lift-off of a cycle, from the first on: the pelvis
    sways within a cycle, one period per cycle)."""
    t = np.asarray(arr["time_s"], float)
    moving = np.flatnonzero(~np.asarray(arr["planned_stance"], bool).all(axis=1))
    if moving.size == 0 or not cycle_s > 0:
        raise ValueError("no step in the log")
    return np.arange(t[moving[0]], t[-1] + 1e-9, cycle_s)


def arc_radius(arr, cycle_s: float) -> float:
    """Radius of the circle fitted through the pelvis positions at the same gait phase in every cycle
    (:func:`phase_times`)."""
    t = np.asarray(arr["time_s"], float)
    xy = np.asarray(arr["pelvis_pos_m"], float)[:, :2]
    try:
        ts = phase_times(arr, cycle_s)
    except ValueError as e:
        raise ValueError(f"arc_radius: {e}") from None
    pts = np.c_[np.interp(ts, t, xy[:, 0]), np.interp(ts, t, xy[:, 1])]
    return fit_circle(pts)[1]


def com_displacement_per_cycle(arr) -> float:
    """:func:`metrics.com_displacement_per_cycle` of the runner's log arrays; NaN without complete cycles."""
    from . import metrics
    try:
        return metrics.com_displacement_per_cycle(trial_log_of(arr))
    except metrics.MetricError:
        return math.nan


def make_sim(scene: str = "", disturbance: str = "none", seed: int = 0) -> AtlasSim:
    """A fresh simulator on ``scene`` (a scene spec, "" = the default floor) with one of the robustness matrix's
    static disturbances (``gains``, ``mass``, ``friction_low``, ``friction_high``), applied as the matrix does."""
    from .robustness import Hooks, scene_for
    if disturbance not in ("none", "gains", "mass", "friction_low", "friction_high"):
        raise ValueError(f"unknown disturbance {disturbance!r}")
    if disturbance != "none":
        scene = scene_for(scene or "flat", disturbance)
    sim = AtlasSim(params={"scene": scene} if scene else None, seed=seed)
    if disturbance in ("gains", "mass"):
        Hooks(disturbance, seed).on_sim(sim)
    return sim


def run_trial(mode: str, a, seed: int, params: dict, quiet=True, noise_rad: float = 0.0,
              radius_m: float = math.inf, monitor=None, video=None, with_log: bool = False):
    """One trial from the nominal stance; ``noise_rad`` > 0: seeded uniform noise on the servo targets of that stance,
    settled for 0.5 s (the simulator itself is deterministic: without noise every trial is the same).
    ``monitor(sim, cycle, period_s)``, optional: called every physics step of the gait (the robustness matrix's
    pushes and ceiling monitor). ``video``: an mp4 path to film the trial. ``with_log``: return ``(row, log arrays,
    generator, sim time of the plan's start)`` instead of the row (diagnostics, e.g. ``lab/stance_slip.py``)."""
    model = robot_model()
    sim = make_sim(getattr(a, "scene", ""), getattr(a, "disturbance", "none"), seed)
    home, _ = start_stance(sim, model, nominal=NOMINAL)
    if noise_rad > 0:
        q = sim.joint_q() + np.random.default_rng(seed).uniform(-noise_rad, noise_rad, sim.joint_q().shape)
        sim.set_joint_targets(q)
        sim.step(int(round(0.5 / sim.dt)))
    c0 = sim.contact_site_pos()
    gen = CrawlGaitGenerator(c0, sim.com()[:2], 0.0, command_for(mode, a.vx, a.wz, radius_m), a.cycles, params)
    feed = HeightMapFeed(sim) if getattr(a, "terrain", "map") == "map" else None
    blind = []

    period_s = gen.seq.cycle_s

    def on_tick(s):
        if feed is not None:
            hm = feed.poll()
            if hm is not None:
                why = gen.use_map(hm, s.time)
                if why:
                    blind.append(why)
        if monitor is not None:
            monitor(s, max(gen.observed, 0) // gen.steps_per_cycle, period_s)
    if feed is not None:
        on_tick(sim)
    cfg = track_config_from_args(a)
    t = time.perf_counter()
    t_gait0 = sim.time
    arr, st, summ = track(sim, model, gen, cfg, home, gait_name=f"gen_{mode}", seed=seed, quiet=quiet,
                          on_tick=on_tick if feed is not None or monitor is not None else None, video=video)
    beh = {"forward": "crawl_forward", "backward": "crawl_backward", "arc": "crawl_forward",
           "turn": "turn_left" if a.wz > 0 else "turn_right"}[mode]
    em = eval_metrics(arr, beh)
    row = dict(mode=mode, seed=seed, fell=bool(summ["fell"]), fall_reason=summ.get("fall_reason", ""),
               fall_time_s=float(summ["fall_time_s"]) - t_gait0 if summ["fell"] else None,
               wall_s=time.perf_counter() - t, gait_time_s=summ["gait_time_s"],
               feedback_log=[list(map(float, r)) for r in gen.feedback.log], terrain=getattr(a, "terrain", "map"),
               blind_reasons=sorted(set(blind)), max_lift_m=float(np.max(gen.lift)))
    row.update({k: em.get(k, math.nan) for k in ("velocity_m_s", "drift_per_gait_m", "turn_per_gait_deg",
                                                   "distance_per_gait_m", "progress_per_gait_m",
                                                   "time_per_circle_extrapolated_s", "radius_m", "turn_per_cycle_deg")})
    row["com_displacement_per_cycle_m"] = com_displacement_per_cycle(arr)
    row["progress_m_s"], wrong = progress_along(mode, row["progress_per_gait_m"], gen.seq.cycle_s)
    row["wrong_way"] = wrong and not row["fell"]        # a fall is reported as such
    if mode == "turn":
        row["turn_per_gait_deg"] = row["turn_per_cycle_deg"]
    if mode == "arc":
        row["radius_target_m"] = abs(float(radius_m))
        row["arc_radius_m"] = arc_radius(arr, gen.seq.cycle_s)
        row["arc_radius_error_pct"] = 100.0 * (row["arc_radius_m"] / abs(float(radius_m)) - 1.0)
    row["time_per_circle_s"] = row["time_per_circle_extrapolated_s"]
    if "error" in em:
        row["metric_error"] = em["error"]
    p, R = sensed_base(sim)
    row["end_xy"] = [float(p[0]), float(p[1])]
    if with_log:
        return row, arr, gen, t_gait0 + cfg.rest_s     # track() rests cfg.rest_s before the plan starts
    return row


def radius_cell(rows) -> str:
    """Mean (worst) CoM circle radius of turn trials (the thesis' turning radius, one per complete circle); "-" for
    other modes, "no circle" when a turn completed none."""
    if not rows or rows[0]["mode"] != "turn":
        return "-"
    rad = [r["radius_m"] for r in rows if math.isfinite(r["radius_m"])]
    miss = len(rows) - len(rad)
    if not rad:
        return "no circle"
    return f"{np.mean(rad):.3f} ({max(rad):.3f})" + (f", {miss} without a circle" if miss else "")


def progress_along(mode: str, progress_per_gait_m: float, cycle_s: float) -> tuple[float, bool]:
    """(progress speed along the commanded direction in m/s, went the wrong way) of a straight run; (NaN, False) for
    a turn on the spot or an arc (its start heading is not its direction). The thesis' velocity is |displacement| /
    time, so a backward crawl that slides forward down a slope has a speed too; the signed progress (metrics
    ``progress_per_gait_m``: + forward) says which way it went. A NaN progress (no full cycle) counts as the wrong
    way."""
    sign = {"forward": 1.0, "backward": -1.0}.get(mode)
    if sign is None:
        return math.nan, False
    v = sign * float(progress_per_gait_m) / float(cycle_s)
    return v, not v > 0.0


def gait_params(mode: str, a, params: dict):
    """(generator overrides, args with ``vx`` and ``wz`` set) of ``mode`` for ``--gait``: the diagonal crawl's
    ``diagonal_pairs.*`` values (backward: ``diagonal_pairs.backward.*``, turn: ``diagonal_pairs.turn.*``) under the
    ``--set`` ones; ``--vx`` / ``--wz`` unset: the gait's crawl_speed_m_per_s / turn_rate_rad_per_s."""
    pm = dict(params)
    if getattr(a, "gait", "static") == "diagonal":
        pm = {**diagonal_params(parameter_set().values(params), mode == "backward", mode == "turn"), **params}
    am = argparse.Namespace(**vars(a))
    vals = parameter_set().values(pm)
    if am.vx is None:
        am.vx = vals["crawl_speed_m_per_s"]
    if getattr(am, "wz", None) is None:
        am.wz = vals["turn_rate_rad_per_s"]
    return pm, am


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modes", nargs="+", default=["forward", "backward", "turn"],
                    choices=["forward", "backward", "turn", "arc"])
    ap.add_argument("--radius-m", type=float, nargs="+", default=[1.0],
                    help="arc radii (m, > 0: to the left), each run as its own arc trials")
    ap.add_argument("--cycles", type=int, default=10)
    ap.add_argument("--trials", type=int, default=1,
                    help="trial 0 from the exact nominal stance, trial k > 0 with --noise-rad start noise (seed + k)")
    ap.add_argument("--noise-rad", type=float, default=0.01, help="start noise of trials k > 0 (rad, uniform)")
    ap.add_argument("--vx", type=float, default=None,
                    help="m/s, |vx| of forward/backward (default: the generator's crawl_speed_m_per_s, of the gait)")
    ap.add_argument("--gait", default="static", choices=["static", "diagonal"],
                    help="static: one limb at a time (the YAML's values); diagonal: the dynamic diagonal-pair crawl "
                         "(pattern diagonal_pairs with the YAML's diagonal_pairs.* values, as Crawl GAIT_DIAGONAL)")
    ap.add_argument("--wz", type=float, default=None,
                    help="rad/s of the turn on the spot (default: the generator's turn_rate_rad_per_s, of the gait)")
    ap.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE",
                    help="gait generator parameters (config/gait_generator_parameters.yaml)")
    ap.add_argument("--no-feedback", action="store_true", help="heading/lateral gains 0 (open-loop placement)")
    ap.add_argument("--scene", default="", help="simulator scene, e.g. 'slope:angle_deg=5' (as the robustness matrix)")
    ap.add_argument("--disturbance", default="none",
                    choices=["none", "gains", "mass", "friction_low", "friction_high"],
                    help="a robustness-matrix disturbance (servo gains x0.8, torso mass +10 %%, friction 0.5 / 1.25)")
    ap.add_argument("--terrain", default="map", choices=["map", "blind"],
                    help="map: the generator gets the sim node's height map at its rate (foothold choice, swing "
                         "clearance, body tilt); blind: no map (flat-ground placement)")
    ap.add_argument("--out", default="reports/gen_crawl")
    add_track_args(ap)   # defaults: the controller's parameter file
    return ap


def main(argv=None) -> int:
    ap = parser()
    a = ap.parse_args(argv)
    params = {}
    pset = parameter_set()
    try:
        for kv in a.set:
            k, v = kv.split("=", 1)
            params[k] = pset.check(k, yaml.safe_load(v))      # YAML scalars: 0.1, 3, false
    except (ValueError, KeyError, ParameterError) as e:
        ap.error(f"--set: {e}")
    if a.no_feedback:
        params.update({"feedback.heading_gain": 0.0, "feedback.lateral_gain_rad_per_m": 0.0, "feedback.position_gain": 0.0})
    if any(r == 0 or not math.isfinite(r) for r in a.radius_m):
        ap.error("--radius-m: radii must be finite and non-zero")
    if a.video:
        from atlas_crawl_mujoco.render import select_gl_backend
        if select_gl_backend() is None:
            ap.error("--video: no offscreen GL backend (tried egl, osmesa)")
    rows = []
    out = Path(a.out)
    for mode in a.modes:
        pm, am = gait_params(mode, a, params)
        for radius in (a.radius_m if mode == "arc" else [math.inf]):
            for i in range(a.trials):
                video = None
                if a.video:
                    out.mkdir(parents=True, exist_ok=True)
                    video = str(out / f"{mode}_seed{a.seed + i}{'' if math.isinf(radius) else f'_r{radius:g}'}.mp4")
                r = run_trial(mode, am, a.seed + i, pm, noise_rad=a.noise_rad if i > 0 else 0.0, radius_m=radius,
                              video=video)
                rows.append(r)
                arc = (f" arc radius {r['arc_radius_m']:.3f} m for {r['radius_target_m']:.2f} m "
                       f"({r['arc_radius_error_pct']:+.1f} %)," if mode == "arc" else "")
                way = (f" (progress {r['progress_m_s']:+.4f} m/s{', WRONG WAY' if r['wrong_way'] else ''})"
                       if math.isfinite(r["progress_m_s"]) else "")
                circle = f", radius {r['radius_m']:.3f} m" if mode == "turn" else ""
                print(f"{mode:8s} seed {r['seed']}:{arc} {r['velocity_m_s']:.4f} m/s{way}, drift "
                      f"{r['drift_per_gait_m']:.4f} m/gait, turn {r['turn_per_gait_deg']:+.2f} deg/gait, s/circle "
                      f"{r['time_per_circle_s']:.1f}{circle}, fell {r['fell']} {r['fall_reason']} "
                      f"{r.get('metric_error', '')} (wall {r['wall_s']:.0f} s)", flush=True)
    print("\n| mode | speed m/s | drift m/gait | turn deg/gait | s/circle | radius m (worst) | falls | wrong way "
          "| key-frame gait | target |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for mode in a.modes:
        rs = [r for r in rows if r["mode"] == mode]
        m = lambda k: float(np.nanmean([r[k] for r in rs]))  # noqa: E731
        print(f"| {mode} | {m('velocity_m_s'):.4f} | {m('drift_per_gait_m'):.4f} | {m('turn_per_gait_deg'):+.2f} | "
              f"{m('time_per_circle_s'):.1f} | {radius_cell(rs)} | {sum(r['fell'] for r in rs)}/{len(rs)} | "
              f"{sum(r['wrong_way'] for r in rs)}/{len(rs)} | {KEYFRAME[mode]} | "
              f"{TARGETS[mode]} |")
    arcs = [r for r in rows if r["mode"] == "arc"]
    if arcs:
        print("\n| arc radius m | measured m (mean over trials) | error % (worst) | speed m/s | falls | target |")
        print("|---|---|---|---|---|---|")
        for radius in a.radius_m:
            rs = [r for r in arcs if r["radius_target_m"] == abs(radius)]
            err = [r["arc_radius_error_pct"] for r in rs]
            print(f"| {radius:g} | {np.mean([r['arc_radius_m'] for r in rs]):.3f} | {np.mean(err):+.1f} "
                  f"({max(err, key=abs):+.1f}) | {np.mean([r['velocity_m_s'] for r in rs]):.4f} | "
                  f"{sum(r['fell'] for r in rs)}/{len(rs)} | within 5 % |")
    out.mkdir(parents=True, exist_ok=True)
    (out / "gen_crawl.json").write_text(json.dumps(dict(args=vars(a), params=params, rows=rows), indent=1,
                                                   default=str), encoding="utf-8")
    return 1 if any(r["fell"] or r["wrong_way"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
