"""Evaluation command (issue 3 §4): N trials with a fresh MuJoCo simulator each, then the report folder.

    python -m atlas_crawl_eval.evaluate --behaviour crawl_forward --loop full --trials 10 --cycles 10 \\
        --out reports/crawl_forward_full [--video] [--quick]
    python -m atlas_crawl_eval.evaluate --all --out reports/latest [--quick] [--video]
    python -m atlas_crawl_eval.evaluate --behaviour turn_left --from-logs 'reports/x/logs/*.npz' --out reports/x
    python -m atlas_crawl_eval.evaluate --all --report-only --out reports/latest   # re-report existing logs

Defaults are the thesis protocol (§4.1.3: 10 trials × 10 cycles crawling; §4.1.2: 5 trials × 20 loops turning;
rolling: 20 trials, issue 3 §4). ``--quick`` = 1 trial × 2 cycles (CI smoke run).
"""

from __future__ import annotations

import argparse
import glob
import json
import shlex
import sys
from pathlib import Path

from . import params as params_mod, report, run_trials, thesis_values as tv
from .trial_log import TrialLog

ALL_RUNS = [("crawl_forward", "full"), ("crawl_forward", "part"), ("crawl_backward", "full"),
            ("crawl_backward", "part"), ("turn_left", "full"), ("turn_right", "full"), ("roll_left", "full"),
            ("roll_right", "full")]


def run_name(behaviour, loop):
    return f"{behaviour}_{loop}" if behaviour.startswith("crawl") else behaviour


def evaluate_one(behaviour, loop, trials, cycles, out, video=False, seed0=0, noise=0.01, command=None,
                 from_logs=None, prm=None, bar=None, video_kwargs=None, sim_params=None):
    prm = prm or params_mod.load_params()
    out = Path(out)
    if from_logs:
        paths = sorted(glob.glob(from_logs))
        if not paths:
            raise SystemExit(f"--from-logs {from_logs!r} matched no file")
        logs = [TrialLog.load(p) for p in paths]
    else:
        logs = run_trials.run_trials(behaviour, loop, trials, cycles, out, seed0, video, noise,
                                     settle_before_s=prm["settle_before_s"], settle_after_s=prm["settle_after_s"],
                                     bar=bar, video_kwargs=video_kwargs, sim_params=sim_params)
    vid = out / "video.mp4"
    extra = {"scene": (sim_params or {}).get("scene", "flat")} if not from_logs else {}
    frozen = sorted((out / "script").glob("*.yaml"))
    if frozen:
        import hashlib
        extra["gait script"] = (f"[{frozen[0].name}](script/{frozen[0].name}) sha256 "
                                f"{hashlib.sha256(frozen[0].read_bytes()).hexdigest()[:12]}")
    p = report.write_report(logs, behaviour, out, loop, command=command, video="video.mp4" if vid.exists() else None,
                            extra_provenance=extra,
                            heading_source=prm["heading_source"], slip_min_duration_s=prm["slip_min_duration_s"],
                            init_noise_rad=None if from_logs else noise)
    return p


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--behaviour", choices=list(tv.PROTOCOL))
    ap.add_argument("--all", action="store_true", help="every behaviour with the thesis trial counts")
    ap.add_argument("--loop", choices=["full", "part"], default="full")
    ap.add_argument("--trials", type=int, help="default: thesis protocol")
    ap.add_argument("--cycles", type=int, help="default: thesis protocol")
    ap.add_argument("--out", required=True)
    ap.add_argument("--video", action="store_true", help="film the first trial (video.mp4 in the report folder)")
    ap.add_argument("--quiet", action="store_true", help="no progress bar, no per-trial lines, no tables on stdout")
    ap.add_argument("--quick", action="store_true", help="1 trial × 2 cycles (CI)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the first trial (trial i uses seed + i)")
    ap.add_argument("--init-noise-rad", type=float, default=None,
                    help="seeded uniform start-pose joint noise, rad (0 = all trials identical: MuJoCo is exact); "
                         "default from config/evaluation_parameters.yaml")
    ap.add_argument("--from-logs", help="glob of existing trial .npz logs: report only, no simulation")
    ap.add_argument("--report-only", action="store_true",
                    help="no simulation: rewrite the report(s) from <out>[/<behaviour>]/logs/*.npz")
    ap.add_argument("--scene", default="flat", help="terrain scene (issue 13): built-in name or .yaml/.xml/.png file, "
                    "with ':key=value,...' (atlas_crawl_mujoco/config/scenes/README.md)")
    from atlas_crawl_mujoco.render import add_video_args, video_kwargs
    add_video_args(ap)
    a = ap.parse_args(argv)
    if a.all == bool(a.behaviour):
        ap.error("give exactly one of --behaviour or --all")
    try:
        vkw = video_kwargs(a)
        from atlas_crawl_mujoco.scenes import parse_scene
        parse_scene(a.scene)   # a bad scene is refused here, before any simulator exists
    except ValueError as e:
        ap.error(str(e))
    if a.video:
        from atlas_crawl_mujoco.render import select_gl_backend
        if select_gl_backend() is None:
            ap.error("--video: no offscreen GL backend (tried egl, osmesa)")
    command = "python -m atlas_crawl_eval.evaluate " + " ".join(shlex.quote(x) for x in (argv or sys.argv[1:]))
    prm = params_mod.load_params(overrides=None if a.init_noise_rad is None else
                                 {"init_noise_rad": a.init_noise_rad})
    runs = ALL_RUNS if a.all else [(a.behaviour, a.loop)]
    out = Path(a.out)
    written = []
    plan = []
    for beh, loop in runs:
        n, c = tv.PROTOCOL[beh]
        if a.quick:
            n, c = 1, (1 if beh.startswith("roll") else 2)
        plan.append((beh, loop, a.trials or n, a.cycles or c))
    from atlas_crawl_kinematics.progress import Progress
    simulate = not (a.report_only or a.from_logs)
    bar = Progress(sum(p[2] for p in plan), desc="evaluate", unit="trial", quiet=a.quiet,
                   mode="auto" if simulate else "off")
    say = bar.write if not a.quiet else (lambda msg: None)
    for beh, loop, n, c in plan:
        folder = out / run_name(beh, loop) if a.all else out
        try:
            from_logs = a.from_logs if not a.all else None
            if a.report_only:
                from_logs = str(folder / "logs" / "*.npz")
                if not glob.glob(from_logs):
                    raise run_trials.BackendUnavailable(f"--report-only: no logs in {folder / 'logs'}")
            p = evaluate_one(beh, loop, n, c, folder, a.video, a.seed, prm["init_noise_rad"], command,
                             from_logs, prm, bar=bar if simulate else None, video_kwargs=vkw,
                             sim_params={"scene": a.scene})
        except run_trials.BackendUnavailable as e:
            print(f"[evaluate] {beh}/{loop}: SKIPPED, {e}", file=sys.stderr)
            written.append((beh, loop, None, str(e)))
            bar.update(n)
            continue
        say(p.read_text(encoding="utf-8").split("## Per-trial")[0])
        say(f"[evaluate] {run_name(beh, loop)}: {p} and {p.with_suffix('.html')}"
            + (f"  ({bar.status()})" if simulate else ""))
        written.append((beh, loop, p, ""))
    bar.close()
    if a.all:
        idx = write_index(out, written, command)
        print(f"[evaluate] index: {idx} and {idx.with_suffix('.html')}")
    elif written and written[0][2]:
        print(f"[evaluate] report: {written[0][2]} and {written[0][2].with_suffix('.html')}")
    return 0 if all(p for _, _, p, _ in written) else 2


def write_index(out: Path, written, command) -> Path:
    """reports/<name>/report.md and report.html: every behaviour's table, linking to its folder."""
    md = [f"# atlas_crawl evaluation (all behaviours)\n\nCommand: `{command}`\n"]
    html = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>atlas_crawl evaluation</title>"
            f"<style>{report._CSS}</style></head><body><h1>atlas_crawl evaluation (all behaviours)</h1>"
            f"<p class='prov'>Command: <code>{report._esc(command)}</code></p>"]
    for beh, loop, p, err in written:
        name = run_name(beh, loop)
        md.append(f"\n## {name}\n\n")
        html.append(f"<h2>{report._esc(name)}</h2>")
        if p is None:
            md.append(f"Not run: {err}\n")
            html.append(f"<p>Not run: {report._esc(err)}</p>")
            continue
        txt = Path(p).read_text(encoding="utf-8").split("## Per-trial")[0]
        body = txt.split("\n", 1)[1]  # drop its title
        md.append(f"[full report]({name}/report.md)\n" + body)
        mj = json.loads((Path(p).parent / "metrics.json").read_text(encoding="utf-8"))
        fmts = {k: f for k, _l, _u, f in report.rows_for(beh)}
        rows = [dict(r, fmt=fmts.get(r["key"]), mean=_f(r["mean"]), std=_f(r["std"])) for r in mj["summary"]]
        falls = sum(1 for t in mj["trials"] if t.get("fell"))
        html.append(f"<p><a href='{name}/report.html'>full report (plots, video)</a> · "
                    f"falls {falls}/{len(mj['trials'])}</p>" + report.html_table(rows, beh, loop))
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text("".join(md), encoding="utf-8")
    (out / "report.html").write_text("".join(html) + "</body></html>\n", encoding="utf-8")
    return out / "report.md"


def _f(v):
    return float("nan") if v is None else float(v)


if __name__ == "__main__":
    sys.exit(main())
