"""Robustness matrix (issue 13 §3): every gait × scene × disturbance × seed, each run in a fresh simulator through
the evaluation's trial adapter and metrics, run in parallel on Ray.

    python -m atlas_crawl_eval.robustness --out reports/robustness            # the full default matrix
    python -m atlas_crawl_eval.robustness --gaits crawl_forward turn_left --scenes flat rough 'slope:angle_deg=5' \\
        --disturbances none push --seeds 0 1 --cycles 3 --num-cpus 2 --out reports/robustness_small
    python -m atlas_crawl_eval.robustness ... --address ray://head:10001      # an existing Ray cluster

Disturbances: ``none``; ``push`` (one 30 N·s horizontal push of the pelvis per gait cycle, over 0.1 s, at a seeded
random phase of the cycle and a seeded random direction); ``gains`` (every servo's kp and kv × 0.8, the gait
player still believes the nominal gains); ``mass`` (utorso mass and inertia × 1.1); ``friction_low`` /
``friction_high`` (ground friction 0.5 / 1.25 on top of the scene). Each run is seeded by its seed alone (initial
pose noise, push phases and directions), so the results do not depend on the number of workers.

Per run: fell (the controller's fall definition on ground truth), ceiling touches (tunnel scenes), speed (crawls:
progress per gait along the start heading, in the gait's direction, m; turns: heading change per gait in the
turn's direction, deg), drift (crawls: the thesis' drift per gait; turns: net CoM displacement per gait), success
= no fall, no ceiling touch, metrics computed and a positive speed (a backward crawl that slid forward down a slope,
or a turn the wrong way round, is a failed run: "wrong way"). Per cell (gait × scene × disturbance): success rate,
mean speed of the successful runs and its % of the same gait's flat/none speed, mean drift, falls. Written to
``<out>/robustness.json``, ``report.md`` and ``heatmap.png``; failed runs are listed with the command that
replays them (``--video`` films every run of a replay).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: key-frame scripts, then the closed-loop gait generator (gen_*: atlas_crawl_eval.gen_crawl, with the height map)
GAITS = ("crawl_forward", "crawl_forward_fast", "crawl_backward", "turn_left", "turn_right", "gen_forward",
         "gen_backward", "gen_turn_left")
#: generator gait -> gen_crawl mode
#: gait-generator gaits: name -> (gen_crawl mode, --gait)
GEN_MODES = {"gen_forward": ("forward", "static"), "gen_backward": ("backward", "static"),
             "gen_turn_left": ("turn", "static"), "gen_diagonal_forward": ("forward", "diagonal"),
             "gen_diagonal_backward": ("backward", "diagonal"), "gen_diagonal_turn_left": ("turn", "diagonal")}
SCENES = ("flat", "slope", "slope:direction_deg=90", "rough", "steps", "rubble", "tunnel")
DISTURBANCES = ("none", "push", "gains", "mass", "friction_low", "friction_high")
#: gait -> sign of its intended motion (crawl: + forward; turn: + counter-clockwise)
DIRECTION = {"crawl_forward": 1, "crawl_forward_fast": 1, "crawl_backward": -1, "turn_left": 1, "turn_right": -1,
             "gen_forward": 1, "gen_backward": -1, "gen_turn_left": 1, "gen_diagonal_forward": 1,
             "gen_diagonal_backward": -1, "gen_diagonal_turn_left": 1}
FRICTION = {"friction_low": 0.5, "friction_high": 1.25}
PUSH_NS, PUSH_S, GAIN_SCALE, MASS_SCALE, MASS_BODY = 30.0, 0.1, 0.8, 1.1, "utorso"


def scene_for(scene: str, disturbance: str) -> str:
    """The scene spec a run uses: the friction disturbances add ``friction=`` to the scene's parameters."""
    if disturbance not in FRICTION:
        return scene
    return scene + ("," if ":" in scene else ":") + f"friction={FRICTION[disturbance]}"


@dataclass
class Hooks:
    """Disturbance + monitor of one run (TrialConfig.disturbance): see the module doc."""
    disturbance: str
    seed: int
    pushes: list = field(default_factory=list)       # (sim time, impulse x, y) applied
    ceiling_touches: int = 0                           # control steps (every 10 ms) with a ceiling contact

    def __post_init__(self):
        self._rng = np.random.default_rng([self.seed, 13])
        self._cycle = {}   # cycle -> (start time, phase, angle)
        self._pushed = set()
        self._k = 0

    def on_sim(self, sim) -> None:
        import mujoco
        m = sim.model
        if self.disturbance == "gains":
            a = sim.map.act_id
            m.actuator_gainprm[a, 0] *= GAIN_SCALE
            m.actuator_biasprm[a, 1:3] *= GAIN_SCALE
        elif self.disturbance == "mass":
            b = m.body(MASS_BODY).id
            m.body_mass[b] *= MASS_SCALE
            m.body_inertia[b] *= MASS_SCALE
            mujoco.mj_setConst(m, sim.data)
            sim.map.total_mass = float(m.body_subtreemass[0])

    def on_step(self, sim, pl) -> None:
        """Every physics step of a key-frame gait (the player ``pl`` says the cycle and the script its period)."""
        self.on_tick(sim, pl.cycle, sum(k.duration_s for k in pl.script.keyframes) * pl.time_scale)

    def on_tick(self, sim, cycle: int, period_s: float) -> None:
        """Every physics step, in gait cycle ``cycle`` of period ``period_s``: ceiling monitor and pushes."""
        self._k += 1
        if self._k % 10 == 0 and (sim.map.geom_limb == -3).any():
            code = sim.map.geom_limb
            d = sim.data
            if any(code[d.contact[i].geom1] == -3 or code[d.contact[i].geom2] == -3 for i in range(d.ncon)):
                self.ceiling_touches += 1
        if self.disturbance != "push":
            return
        c = cycle
        if c not in self._cycle:
            self._cycle[c] = (sim.time, float(self._rng.uniform()), float(self._rng.uniform(0, 2 * math.pi)))
        t0, u, ang = self._cycle[c]
        if c not in self._pushed and sim.time - t0 >= u * period_s:
            self._pushed.add(c)
            j = PUSH_NS * np.array([math.cos(ang), math.sin(ang), 0.0])
            sim.push(j, PUSH_S)
            self.pushes.append((round(sim.time, 3), round(float(j[0]), 2), round(float(j[1]), 2)))


def run_generator(job: dict) -> dict:
    """One run of a gait-generator gait (:func:`atlas_crawl_eval.gen_crawl.run_trial`: the nominal stance, start noise
    ``init_noise_rad`` seeded by the seed, the generator on the sim's height map) with the same disturbances and
    monitor as the key-frame runs; no video or log file."""
    from . import gen_crawl
    t0 = time.monotonic()
    g, sc, dist, seed = job["gait"], job["scene"], job["disturbance"], int(job["seed"])
    mode, gait = GEN_MODES[g]
    hooks = Hooks(dist, seed)
    a = gen_crawl.parser().parse_args(["--cycles", str(int(job["cycles"])), "--scene", sc, "--terrain", "map",
                                       "--disturbance", "none" if dist == "push" else dist, "--gait", gait])
    params, a = gen_crawl.gait_params(mode, a, {})
    row = gen_crawl.run_trial(mode, a, seed, params, noise_rad=float(job["init_noise_rad"]), monitor=hooks.on_tick)
    err = row.get("metric_error", "")
    r = {"gait": g, "scene": sc, "disturbance": dist, "seed": seed, "fell": bool(row["fell"]),
         "fall_time_s": row["fall_time_s"], "ceiling_touches": hooks.ceiling_touches, "pushes": hooks.pushes,
         "error": err, "speed": float("nan"), "drift_m": float("nan"), "sim_s": float(row["gait_time_s"])}
    if not err:
        if mode == "turn":
            r["speed"] = DIRECTION[g] * float(row["turn_per_cycle_deg"])
            r["drift_m"] = float(row["com_displacement_per_cycle_m"])
        else:
            r["speed"] = DIRECTION[g] * float(row["progress_per_gait_m"])
            r["drift_m"] = float(row["drift_per_gait_m"])
    judge(r)
    r["wall_s"] = round(time.monotonic() - t0, 2)
    return r


def judge(r: dict) -> dict:
    """``r["wrong_way"]``: metrics computed but no progress in the gait's direction (speed <= 0); ``r["success"]``:
    no fall, no ceiling touch, no metric error, not the wrong way."""
    r["wrong_way"] = not r["error"] and not r["fell"] and not r["speed"] > 0.0
    r["success"] = not r["fell"] and r["ceiling_touches"] == 0 and not r["error"] and not r["wrong_way"]
    return r


def failure(r: dict) -> str:
    """Why a run failed, in a few words."""
    if r["fell"]:
        return f"fell at {r['fall_time_s']:.2f} s" if r.get("fall_time_s") is not None else "fell"
    if r["ceiling_touches"]:
        return f"touched the ceiling ({r['ceiling_touches']} x 10 ms)"
    if r.get("wrong_way"):
        return f"wrong way (speed {r['speed']:+.3g} {speed_unit(r['gait'])})"
    return r["error"]


def run_name(gait: str, scene: str, disturbance: str, seed: int) -> str:
    slug = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in scene)
    return f"{gait}__{slug}__{disturbance}__s{seed}"


def run_one(job: dict) -> dict:
    """One run in a fresh simulator (executed on a Ray worker). ``job``: gait, scene, disturbance, seed, cycles,
    init_noise_rad, settle_before_s, settle_after_s, out, video."""
    from . import metrics, report
    from .run_trials import TrialConfig, run_trial
    t0 = time.monotonic()
    g, sc, dist, seed = job["gait"], job["scene"], job["disturbance"], int(job["seed"])
    if g in GEN_MODES:
        return run_generator(job)
    name = run_name(g, sc, dist, seed)
    hooks = Hooks(dist, seed)
    out = Path(job["out"])
    cfg = TrialConfig(g, "full", int(job["cycles"]), seed, float(job["init_noise_rad"]), float(job["settle_before_s"]),
                      float(job["settle_after_s"]), video=str(out / "videos" / f"{name}.mp4") if job["video"] else None,
                      sim_params={"scene": scene_for(sc, dist)}, disturbance=hooks)
    log = run_trial(cfg, out / "logs" / f"{name}.npz")
    m = report.evaluate_logs([log], g)[0]
    sign = DIRECTION[g]
    r = {"gait": g, "scene": sc, "disturbance": dist, "seed": seed, "fell": bool(log.meta_fell),
         "fall_time_s": None if not log.meta_fell else float(log.meta_fall_time_s),
         "ceiling_touches": hooks.ceiling_touches, "pushes": hooks.pushes, "error": m.get("error", ""),
         "speed": float("nan"), "drift_m": float("nan"), "sim_s": float(log.time_s[-1] - log.time_s[0])}
    if not r["error"]:
        if g in metrics.CRAWL_BEHAVIOURS:
            r["speed"] = sign * float(m["progress_per_gait_m"])
            r["drift_m"] = float(m["drift_per_gait_m"])
        else:
            r["speed"] = sign * float(m["turn_per_cycle_deg"])
            r["drift_m"] = metrics.com_displacement_per_cycle(log)
    judge(r)
    r["wall_s"] = round(time.monotonic() - t0, 2)
    return r


def speed_unit(gait: str) -> str:
    turn = gait.startswith("turn") or GEN_MODES.get(gait, ("",))[0] == "turn"
    return "deg/gait" if turn else "m/gait"


def summarize(runs: list[dict]) -> list[dict]:
    """Per-cell figures (see the module doc), cells in first-seen order."""
    cells = {}
    for r in runs:
        cells.setdefault((r["gait"], r["scene"], r["disturbance"]), []).append(r)
    base = {}
    for (g, s, d), rs in cells.items():
        if s == "flat" and d == "none":
            v = [r["speed"] for r in rs if r["success"]]
            base[g] = float(np.mean(v)) if v else float("nan")
    out = []
    for (g, s, d), rs in cells.items():
        ok = [r for r in rs if r["success"]]
        spd = float(np.mean([r["speed"] for r in ok])) if ok else float("nan")
        b = base.get(g, float("nan"))
        out.append({"gait": g, "scene": s, "disturbance": d, "runs": len(rs), "success_rate": len(ok) / len(rs),
                    "speed": spd, "speed_unit": speed_unit(g),
                    "speed_pct_flat": 100 * spd / b if (b > 0 and not math.isnan(spd)) else float("nan"),
                    "drift_m": float(np.mean([r["drift_m"] for r in ok])) if ok else float("nan"),
                    "falls": sum(r["fell"] for r in rs), "ceiling_touch_runs": sum(r["ceiling_touches"] > 0 for r in rs),
                    "errors": sum(bool(r["error"]) for r in rs)})
    return out


def heatmap(cells: list[dict], path: Path) -> Path:
    """Success-rate heat-map: one row per gait, one column per scene × disturbance; text = success % and speed %."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    gaits = list(dict.fromkeys(c["gait"] for c in cells))
    cols = list(dict.fromkeys((c["scene"], c["disturbance"]) for c in cells))
    z = np.full((len(gaits), len(cols)), np.nan)
    txt = {}
    for c in cells:
        i, j = gaits.index(c["gait"]), cols.index((c["scene"], c["disturbance"]))
        z[i, j] = c["success_rate"]
        sp = c["speed_pct_flat"]
        txt[i, j] = f"{100 * c['success_rate']:.0f}%" + ("" if math.isnan(sp) else f"\n{sp:.0f}% v")
    fig, ax = plt.subplots(figsize=(1.0 + 0.95 * len(cols), 1.4 + 0.6 * len(gaits)))
    im = ax.imshow(z, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    for (i, j), t in txt.items():
        ax.text(j, i, t, ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(cols)), [f"{s}\n{d}" for s, d in cols], rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(gaits)), gaits, fontsize=8)
    ax.set_title("success rate per cell (text: success %, speed % of flat/none)", fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.03, label="success rate")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def replay_command(r: dict, cycles: int, out: str) -> str:
    return ("python -m atlas_crawl_eval.robustness " + " ".join(shlex.quote(x) for x in [
        "--gaits", r["gait"], "--scenes", r["scene"], "--disturbances", r["disturbance"], "--seeds", str(r["seed"]),
        "--cycles", str(cycles), "--num-cpus", "1", "--no-baseline", "--video", "--out",
        f"{out}/replay/{run_name(r['gait'], r['scene'], r['disturbance'], r['seed'])}"]))


def write_report(out: Path, runs: list[dict], cells: list[dict], info: dict) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / "robustness.json").write_text(json.dumps({**info, "cells": cells, "runs": runs}, indent=1,
                                                    default=float), encoding="utf-8")
    png = heatmap(cells, out / "heatmap.png")
    fails = [r for r in runs if not r["success"]]
    md = [f"# Robustness matrix\n\nCommand: `{info['command']}`  \n",
          f"Runs: {len(runs)} ({len(cells)} cells), {info['cycles']} cycles each, wall time {info['wall_s']:.1f} s "
          f"on {info['num_cpus']} Ray CPUs; commit {info['commit']}.\n\n![heat-map]({png.name})\n\n",
          "| gait | scene | disturbance | success | speed | % flat | drift/gait m | falls | ceiling |\n",
          "|---|---|---|---|---|---|---|---|---|\n"]
    for c in cells:
        md.append(f"| {c['gait']} | {c['scene']} | {c['disturbance']} | {c['success_rate'] * 100:.0f}% of {c['runs']} "
                  f"| {c['speed']:.3g} {c['speed_unit']} | {c['speed_pct_flat']:.0f}% | {c['drift_m']:.3f} "
                  f"| {c['falls']} | {c['ceiling_touch_runs']} |\n")
    md.append(f"\n## Failed runs ({len(fails)})\n\n")
    for r in fails:
        md.append(f"- {r['gait']} / {r['scene']} / {r['disturbance']} / seed {r['seed']}: {failure(r)}; replay: "
                  f"`{replay_command(r, info['cycles'], str(out))}`\n")
    (out / "report.md").write_text("".join(md), encoding="utf-8")
    return out / "report.md"


def run_matrix(jobs: list[dict], num_cpus: int | None = None, address: str | None = None, bar=None) -> tuple:
    """Run ``jobs`` on Ray (local with ``num_cpus``, or the cluster at ``address``); returns (runs in job order,
    CPUs Ray had). ``bar``: a Progress advanced per finished run."""
    import ray
    started = not ray.is_initialized()
    if started:
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(address="local", num_cpus=num_cpus or os.cpu_count(), include_dashboard=False,
                     log_to_driver=False)   # always a new local instance, never a cluster found on this host
    try:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        task = ray.remote(num_cpus=1, max_retries=0)(run_one)
        pending = {task.remote(j): i for i, j in enumerate(jobs)}
        runs = [None] * len(jobs)
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            i = pending.pop(done[0])
            r = ray.get(done[0])
            runs[i] = r
            if bar is not None:
                bar.update(1, info=f"{r['gait']} {r['scene']} {r['disturbance']} s{r['seed']}")
                if not r["success"]:
                    bar.write(f"[robustness] FAIL {run_name(r['gait'], r['scene'], r['disturbance'], r['seed'])}: "
                              + failure(r))
        return runs, cpus
    finally:
        if started:
            ray.shutdown()


def make_jobs(gaits, scenes, disturbances, seeds, cycles, out, baseline=True, init_noise_rad=0.01,
              settle_before_s=2.5, settle_after_s=2.5, video=False) -> list[dict]:
    cells = [(g, s, d) for g in gaits for s in scenes for d in disturbances]
    if baseline:   # the flat/none cell of every gait: the speed reference
        cells = [(g, "flat", "none") for g in gaits if (g, "flat", "none") not in cells] + cells
    return [dict(gait=g, scene=s, disturbance=d, seed=int(k), cycles=int(cycles), init_noise_rad=init_noise_rad,
                 settle_before_s=settle_before_s, settle_after_s=settle_after_s, out=str(out), video=video)
            for g, s, d in cells for k in seeds]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gaits", nargs="+", default=list(GAITS), help=f"default: {' '.join(GAITS)}")
    ap.add_argument("--scenes", nargs="+", default=list(SCENES), help=f"scene specs; default: {' '.join(SCENES)}")
    ap.add_argument("--disturbances", nargs="+", default=list(DISTURBANCES), choices=DISTURBANCES)
    ap.add_argument("--seeds", nargs="+", type=int, default=list(range(10)))
    ap.add_argument("--cycles", type=int, default=6, help="gait cycles per run (default 6)")
    ap.add_argument("--out", default="reports/robustness")
    ap.add_argument("--num-cpus", type=int, help="local Ray CPUs (default: every core)")
    ap.add_argument("--address", help="address of an existing Ray cluster (its nodes need this workspace + venv)")
    ap.add_argument("--no-baseline", action="store_true", help="do not add the flat/none cell of each gait")
    ap.add_argument("--video", action="store_true", help="film every run (meant for replays of single runs)")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    from atlas_crawl_mujoco.scenes import parse_scene
    bad = [g for g in a.gaits if g not in DIRECTION]
    if bad:
        ap.error(f"unknown gait(s) {bad}: choose from {list(DIRECTION)}")
    if a.cycles < 1 or any(s < 0 for s in a.seeds) or (a.num_cpus is not None and a.num_cpus < 1):
        ap.error("--cycles and --num-cpus must be >= 1, seeds >= 0")
    if a.address and a.num_cpus:
        ap.error("give --num-cpus (local Ray) or --address (existing cluster), not both")
    try:   # every scene x disturbance is checked before any simulator exists
        for s in a.scenes:
            for d in a.disturbances:
                parse_scene(scene_for(s, d))
    except ValueError as e:
        ap.error(str(e))
    if a.video:
        from atlas_crawl_mujoco.render import select_gl_backend
        if select_gl_backend() is None:
            ap.error("--video: no offscreen GL backend (tried egl, osmesa)")
    out = Path(a.out)
    jobs = make_jobs(a.gaits, list(dict.fromkeys(a.scenes)), list(dict.fromkeys(a.disturbances)),
                     list(dict.fromkeys(a.seeds)), a.cycles, out, baseline=not a.no_baseline, video=a.video)
    from atlas_crawl_kinematics.progress import Progress

    from .report import git_commit
    command = "python -m atlas_crawl_eval.robustness " + " ".join(shlex.quote(x) for x in (argv or sys.argv[1:]))
    bar = Progress(len(jobs), desc="robustness", unit="run", quiet=a.quiet)
    t0 = time.monotonic()
    runs, cpus = run_matrix(jobs, a.num_cpus, a.address, bar)
    wall = time.monotonic() - t0
    bar.close()
    cells = summarize(runs)
    info = {"command": command, "commit": git_commit(), "cycles": a.cycles, "num_cpus": cpus, "wall_s": wall,
            "push_ns": PUSH_NS, "push_s": PUSH_S, "gain_scale": GAIN_SCALE, "mass_scale": MASS_SCALE,
            "friction": FRICTION}
    p = write_report(out, runs, cells, info)
    ok = sum(r["success"] for r in runs)
    print(f"[robustness] {len(runs)} runs, {ok} succeeded, wall {wall:.1f} s on {cpus} CPUs; report {p}, "
          f"heat-map {out / 'heatmap.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
