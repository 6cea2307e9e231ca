"""Report folder writer: mean ± std of every metric over N trials beside the thesis values and project targets.

    python -m atlas_crawl_eval.report --behaviour crawl_forward --loop full --out reports/x logs/*.npz

writes ``report.md`` (table, provenance, definitions, figures), ``report.html`` (the same as one self-contained page:
plots and the first trial's video embedded as base64), ``metrics.json`` (per-trial values) and PNG plots.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np

from . import _support, metrics, plots, thesis_values as tv
from .trial_log import TrialLog

# (key, label, unit, format) per behaviour family; every key is produced by metrics.trial_metrics
CRAWL_ROWS = [
    ("drift_per_gait_m", "Drift / gait", "m", "{:.4f}"),
    ("turn_per_gait_deg", "Turn / gait (signed, CCW +)", "deg", "{:.3f}"),
    ("abs_turn_per_gait_deg", "abs(Turn) / gait", "deg", "{:.3f}"),
    ("distance_per_gait_m", "Distance / gait", "m", "{:.4f}"),
    ("velocity_m_s", "Velocity", "m/s", "{:.4f}"),
    ("progress_per_gait_m", "Progress / gait along the initial heading (signed, + forward)", "m", "{:.4f}"),
    ("turn_per_gait_limbs_deg", "Turn / gait, limb heading (cross-check)", "deg", "{:.3f}"),
    ("total_lateral_drift_m", "Lateral drift over the whole trial", "m", "{:.4f}"),
]
TURN_ROWS = [
    ("drift_per_circle_m", "Drift / circle", "m", "{:.4f}"),
    ("time_per_circle_s", "Time / circle", "s", "{:.2f}"),
    ("radius_m", "Radius", "m", "{:.4f}"),
    ("cycles_per_circle", "Cycles / circle", "", "{:.3f}"),
    ("radius_cycle_starts_m", "Radius of the CoM at cycle starts (no intra-cycle sway; information)", "m", "{:.4f}"),
    ("n_circles", "Complete circles per trial", "", "{:.2f}"),
    ("time_per_circle_extrapolated_s", "Time / circle, extrapolated from yaw rate", "s", "{:.2f}"),
    ("cycles_per_circle_extrapolated", "Cycles / circle, extrapolated", "", "{:.3f}"),
    ("turn_per_cycle_deg", "Turn / cycle (signed, CCW +)", "deg", "{:.3f}"),
]
COMMON_ROWS = [
    ("fell", "Falls (fraction of trials)", "", "{:.2f}"),
    ("slip_mean_mm", "Slip of stance contacts, mean per interval", "mm", "{:.2f}"),
    ("slip_max_mm", "Slip of stance contacts, max per interval", "mm", "{:.2f}"),
    ("slip_max_excursion_mm", "Slip, max excursion within an interval", "mm", "{:.2f}"),
    ("margin_min_m", "Static margin, min over tripod phases", "m", "{:.4f}"),
    ("margin_mean_m", "Static margin, mean over tripod phases", "m", "{:.4f}"),
    ("planned_polygon_margin_min_m", "Static margin (planned stance polygon, thesis Fig 4.4), min", "m", "{:.4f}"),
    ("planned_polygon_margin_mean_m", "Static margin (planned stance polygon), mean", "m", "{:.4f}"),
    ("ground_margin_min_m", "Static margin (ground-contact polygon), min", "m", "{:.4f}"),
    ("ground_margin_mean_m", "Static margin (ground-contact polygon), mean", "m", "{:.4f}"),
    ("tripod_in_touch_fraction", "Tripod samples with all 3 planned contacts in touch", "", "{:.3f}"),
]
ROLL_ROWS = [
    ("roll_success", "Roll to back success (fraction)", "", "{:.2f}"),
    ("fell", "Falls (fraction of trials)", "", "{:.2f}"),
]

DEFINITIONS = {
    "drift_per_gait_m": "per cycle, |lateral component of x_fin − x_init| w.r.t. the heading at the cycle start "
                        "(thesis §4.1.3 d = |x_fin − x_fin^{r_init}|), mean over cycles",
    "turn_per_gait_deg": "per cycle θ_fin − θ_init of the smoothed pelvis heading (thesis §4.1.3), mean over cycles",
    "abs_turn_per_gait_deg": "mean over cycles of |θ_fin − θ_init| (no cancellation between cycles)",
    "distance_per_gait_m": "|x_final − x_init| / N_cycles over the whole gait (thesis §4.1.3)",
    "velocity_m_s": "|x_final − x_init| / (t_final − t_init) (thesis §4.1.3)",
    "turn_per_gait_limbs_deg": "as turn/gait with the heading knee-midpoint → wrist-midpoint",
    "progress_per_gait_m": "(x_final − x_init)·r_init / N_cycles: shows the direction (negative = backward)",
    "total_lateral_drift_m": "|x_final − x_init| component perpendicular to the initial heading",
    "drift_per_circle_m": "|x_init − x_fin| over one circle (thesis §4.1.2)",
    "time_per_circle_s": "t_fin − t_init, circle ends at the first sample with |Δθ| ≥ 2π (thesis §4.1.2)",
    "radius_m": "mean |x_i − centroid| over the circle's smoothed samples, centroid = their mean (thesis §4.1.2)",
    "cycles_per_circle": "gait cycles elapsed over the circle, fractional (thesis §4.1.2)",
    "radius_cycle_starts_m": "the radius formula applied to the smoothed CoM at the cycle starts within the circle",
    "n_circles": "complete 2π circles found in the trial (circle metrics average over them)",
    "time_per_circle_extrapolated_s": "360° / mean |yaw rate| over the gait (defined even without a full circle)",
    "cycles_per_circle_extrapolated": "360° / |turn per cycle|",
    "turn_per_cycle_deg": "total heading change / N_cycles",
    "fell": "backend's fall flag (meta_fell)",
    "slip_mean_mm": "per limb and interval in contact AND planned stance (≥ 0.1 s): |Δp_xy| start→end, mean",
    "slip_max_mm": "same, max",
    "slip_max_excursion_mm": "max over intervals of max_t |p_xy(t) − p_xy(start)|",
    "margin_min_m": "min over tripod samples (exactly 3 planned stance) of the signed distance of the raw CoM "
                    "projection to the hull of the planned∩in-touch contacts (positive inside)",
    "margin_mean_m": "same, mean",
    "planned_polygon_margin_min_m": "min over tripod samples of the signed distance of the raw CoM projection to "
                                    "the hull of the 3 planned stance contacts, touching or not (the thesis' "
                                    "support-polygon check, Fig 4.4)",
    "planned_polygon_margin_mean_m": "same, mean",
    "ground_margin_min_m": "same with the hull of the ground-truth floor contact points",
    "ground_margin_mean_m": "same, mean",
    "tripod_in_touch_fraction": "fraction of tripod samples whose 3 planned contacts are in touch",
    "roll_success": "pelvis front (+x) axis ≥ 45° up over the last 0.5 s and no fall",
}


def rows_for(behaviour: str):
    if behaviour in metrics.CRAWL_BEHAVIOURS:
        return CRAWL_ROWS + COMMON_ROWS
    if behaviour in metrics.TURN_BEHAVIOURS:
        return TURN_ROWS + COMMON_ROWS
    if behaviour in metrics.ROLL_BEHAVIOURS:
        return ROLL_ROWS
    raise ValueError(f"unknown behaviour {behaviour!r}")


# ------------------------------------------------------------------------------------------------ statistics
def mean_std(values) -> tuple[float, float, int]:
    """Mean and sample standard deviation (ddof=1; NaN for a single value) over the finite values."""
    v = np.asarray([x for x in values if x is not None], dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return float("nan"), float("nan"), 0
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else float("nan"), int(v.size)


def compare_to_thesis(key: str, ours: float, thesis: float) -> str:
    """'better' / 'worse' / 'equal' comparing magnitudes; higher is better for keys in HIGHER_IS_BETTER."""
    if not (math.isfinite(ours) and math.isfinite(thesis)):
        return "n/a"
    a, b = abs(ours), abs(thesis)
    if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12):
        return "equal"
    better = a > b if key in tv.HIGHER_IS_BETTER else a < b
    return "better" if better else "worse"


def check_target(key: str, ours: float, target) -> str:
    """'met' / 'not met' for a (op, value) target; magnitudes for turn/drift keys."""
    if target is None:
        return ""
    op, val = target
    if not math.isfinite(ours):
        return "not met (no value)"
    x = abs(ours) if ("turn" in key or "drift" in key) else ours
    ok = x <= val if op == "<=" else x >= val
    return "met" if ok else "not met"


def _fmt(fmt, m, s, n):
    if not math.isfinite(m):
        return "n/a"
    txt = fmt.format(m)
    if math.isfinite(s):
        txt += " ± " + fmt.format(s)
    return txt + (f" (n={n})" if n else "")


def _fmt_thesis(fmt, ref):
    if ref is None:
        return "—"
    m, s = ref
    return fmt.format(m) + ("" if s is None else " ± " + fmt.format(s))


# ------------------------------------------------------------------------------------------------ provenance
def git_commit(repo: Path | None = None) -> str:
    repo = repo or Path(__file__).resolve().parents[2]
    try:
        sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return (sha or "unknown") + ("-dirty" if dirty else "")
    except Exception:  # pragma: no cover
        return "unknown"


def provenance(logs, command: str | None = None) -> dict:
    return {
        "command": command or " ".join(shlex.quote(a) for a in sys.argv),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": platform.platform(),
        "python": platform.python_version(),
        "git_commit": git_commit(),
        "n_trials": len(logs),
        "cycles": sorted({int(lg.meta_cycles) for lg in logs}),
        "seeds": [int(lg.meta_seed) for lg in logs],
        "support_module": "SHIM (scipy ConvexHull)" if _support.USING_SHIM else "atlas_crawl_kinematics.support",
    }


# ------------------------------------------------------------------------------------------------ report
def evaluate_logs(logs, behaviour, heading_source="pelvis_z", slip_min_duration_s=0.1) -> list[dict]:
    """Per-trial metric dicts; a trial whose metrics cannot be computed gets {'error': ...} and NaNs."""
    out = []
    for lg in logs:
        try:
            d = metrics.trial_metrics(lg, behaviour, heading_source, slip_min_duration_s)
        except metrics.MetricError as e:
            d = {"error": str(e), "fell": float(lg.meta_fell), "seed": lg.meta_seed}
        d["source"] = lg.source
        out.append(d)
    return out


def summary_table(trials: list[dict], behaviour: str, loop: str = "full") -> list[dict]:
    """One row per metric: key, label, unit, ours (mean, std, n), thesis (mean, std) or None, comparisons."""
    ref = tv.thesis_reference(behaviour, loop)
    targets = tv.TARGETS.get(behaviour, {})
    rows = []
    for key, label, unit, fmt in rows_for(behaviour):
        m, s, n = mean_std([t.get(key, float("nan")) for t in trials])
        th = ref.get(key)
        rows.append({
            "key": key, "label": label, "unit": unit, "fmt": fmt, "mean": m, "std": s, "n": n,
            "thesis": th, "vs_thesis": compare_to_thesis(key, m, th[0]) if th else "",
            "target": targets.get(key), "target_status": check_target(key, m, targets.get(key)),
        })
    return rows


def markdown_table(rows, behaviour, loop) -> str:
    src = tv.THESIS_SOURCE.get(behaviour, "")
    iik = behaviour == "crawl_forward"  # thesis Table 4.6 (IIK forward crawl), for information
    head = (f"| Metric | Unit | Ours (mean ± std) | Thesis {src} {'(' + loop + ' loop)' if 'crawl' in behaviour else ''}"
            " | vs thesis | Target (issue 3 §4) | Target |" + (" Thesis IIK crawl (Table 4.6) |" if iik else "")
            + "\n|---|---|---|---|---|---|---|" + ("---|" if iik else "") + "\n")
    lines = []
    for r in rows:
        tgt = f"{r['target'][0]} {r['target'][1]:g}" if r["target"] else ""
        lines.append(f"| {r['label']} | {r['unit']} | {_fmt(r['fmt'], r['mean'], r['std'], r['n'])} | "
                     f"{_fmt_thesis(r['fmt'], r['thesis'])} | {r['vs_thesis']} | {tgt} | {r['target_status']} |"
                     + (f" {_fmt_thesis(r['fmt'], tv.IIK_CRAWL.get(r['key']))} |" if iik else ""))
    return head + "\n".join(lines) + "\n"


def write_report(logs, behaviour: str, out_dir, loop: str = "full", command: str | None = None,
                 video: str | None = None, heading_source: str = "pelvis_z", make_plots: bool = True,
                 slip_min_duration_s: float = 0.1, init_noise_rad: float | None = None,
                 extra_provenance: dict | None = None) -> Path:
    """Write ``out_dir/report.md``, ``metrics.json`` and figures for N trial logs of one behaviour."""
    logs = [lg if isinstance(lg, TrialLog) else TrialLog.load(lg) for lg in logs]
    if not logs:
        raise ValueError("write_report: no trial logs")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    trials = evaluate_logs(logs, behaviour, heading_source, slip_min_duration_s)
    rows = summary_table(trials, behaviour, loop)
    prov = provenance(logs, command)
    prov["init_noise_rad"] = init_noise_rad
    prov.update(extra_provenance or {})
    figs = []
    if make_plots:
        figs = _make_plots(logs, behaviour, out, heading_source)
    name = f"{behaviour} ({loop} loop)" if behaviour in metrics.CRAWL_BEHAVIOURS else behaviour
    md = [f"# Evaluation: {name}\n"]
    md.append(f"Provenance: `{prov['command']}` · {prov['date']} · {prov['machine']} (Python {prov['python']}) · "
              f"git {prov['git_commit']} · {prov['n_trials']} trials × {','.join(map(str, prov['cycles']))} cycles"
              f" · seeds {prov['seeds']}"
              + (f" (start-pose joint noise ±{init_noise_rad:g} rad)" if init_noise_rad is not None else "")
              + f" · support polygons: {prov['support_module']}"
              + "".join(f" · {k}: {v}" for k, v in (extra_provenance or {}).items()) + "\n")
    falls = sum(1 for lg in logs if lg.meta_fell)
    falls_line = (f"Falls: {falls}/{len(logs)} trials."
                  + (" Trials with errors: " + "; ".join(f"seed {t['seed']}: {t['error']}" for t in trials
                                                          if "error" in t)
                     if any("error" in t for t in trials) else ""))
    md.append(falls_line + "\n")
    md.append(markdown_table(rows, behaviour, loop))
    md.append("\n'vs thesis' compares magnitudes (|turn|, |drift|); higher is better for distance, velocity, margins."
              " Std is the sample std (ddof=1) over trials; n = trials with a finite value. Heading: "
              f"`{heading_source}` (thesis §4.1.2: pelvis orientation projected on the horizontal). Smoothing: "
              "Gaussian σ = 50 samples, ±200 samples, edge mode 'nearest'.\n")
    edge = [t.get("edge_samples", 0) for t in trials]
    if any(e and e > 0 for e in edge):
        md.append(f"\n**Warning**: {sum(1 for e in edge if e)} trial(s) evaluate the smoothed signals within 200 "
                  "samples of a log end (edge-padded smoothing; the backend should log ≥ 2 s of rest around the gait).\n")
    per_kf = {}
    for t in trials:
        for k, v in (t.get("margin_min_per_keyframe_m") or {}).items():
            per_kf.setdefault(int(k), []).append(v)
    if per_kf:
        md.append("\n## Static margin per key-frame (tripod samples; min over samples, then min / mean over trials)\n\n"
                  "| key-frame | min [m] | mean of trial minima [m] | ≥ 0.03 m |\n|---|---|---|---|\n")
        for k in sorted(per_kf):
            v = np.asarray(per_kf[k], dtype=float)
            md.append(f"| {k} | {v.min():+.4f} | {v.mean():+.4f} | {'yes' if v.min() >= 0.03 else 'no'} |\n")
    md.append("\n## Per-trial values\n")
    keys = [r["key"] for r in rows]
    md.append("| seed | " + " | ".join(keys) + " |\n|" + "---|" * (len(keys) + 1) + "\n")
    for t in trials:
        md.append(f"| {t.get('seed')} | " + " | ".join(_num(t.get(k)) for k in keys) + " |\n")
    md.append("\n## Definitions (thesis §4.1.2-4.1.3; smoothed CoM projection x_i, smoothed heading θ)\n")
    for k in keys:
        if k in DEFINITIONS:
            md.append(f"- `{k}`: {DEFINITIONS[k]}\n")
    if figs:
        md.append("\n## Figures\n")
        for f, cap in figs:
            md.append(f"\n{cap}\n\n![{cap}]({f.name})\n")
    if video:
        rel = os.path.relpath(video, out) if os.path.isabs(str(video)) else video
        md.append(f"\n## Video\n\n[{Path(video).name}]({rel})\n")
    md.append("\nThe same report as one self-contained page: [report.html](report.html)\n")
    (out / "report.md").write_text("".join(md), encoding="utf-8")
    html_prov = {"command": prov["command"], "date": prov["date"], "machine": prov["machine"],
                 "python": prov["python"], "git": prov["git_commit"],
                 "trials": f"{prov['n_trials']} × {','.join(map(str, prov['cycles']))} cycles",
                 "seeds": prov["seeds"], "support polygons": prov["support_module"]}
    if init_noise_rad is not None:
        html_prov["start-pose joint noise"] = f"±{init_noise_rad:g} rad"
    html_prov.update(extra_provenance or {})
    vpath = None
    if video:
        vpath = Path(video) if os.path.isabs(str(video)) else out / video
    write_html(out, f"Evaluation: {name}", html_prov, falls_line, rows, behaviour, loop, trials, figs, vpath,
               per_kf)
    (out / "metrics.json").write_text(json.dumps({
        "behaviour": behaviour, "loop": loop, "provenance": prov, "trials": trials,
        "summary": [{k: v for k, v in r.items() if k != "fmt"} for r in rows],
    }, indent=1, default=_json_default), encoding="utf-8")
    return out / "report.md"


def _num(v):
    if v is None:
        return ""
    try:
        return f"{float(v):.4g}"
    except (TypeError, ValueError):
        return str(v)


def _json_default(o):
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def _make_plots(logs, behaviour, out, heading_source):
    figs = []
    fwd = heading_source.split("_")[1] if heading_source.startswith("pelvis_") else "z"
    try:
        figs.append((plots.com_path(logs, out / "com_path.png", heading_source, f"CoM path, {behaviour}"),
                     "CoM path in the world, raw and smoothed, heading arrows at cycle starts (cf. Figs 4.5/4.9)"))
    except Exception as e:  # noqa: BLE001 - a plot must never kill the report; say it
        figs.append((Path("com_path.png"), f"CoM path plot failed: {e}"))
    if behaviour in metrics.ROLL_BEHAVIOURS:
        return figs
    for fn, fname, cap in (
        (lambda p: plots.limb_paths(logs[0], p, fwd), "limb_paths.png",
         "Limb contact paths in the pelvis frame over ≤ 10 cycles, start ● and loop ends ◇ (cf. Fig 4.10)"),
        (lambda p: plots.support_polygons(logs[0], p, fwd), "support_polygons.png",
         "Support polygons and CoM projection at each key-frame phase, spatial frame (cf. Fig 4.4)"),
        (lambda p: plots.margin_timeline(logs[0], p), "margin.png", "Static stability margin over time (trial 1)"),
    ):
        try:
            figs.append((fn(out / fname), cap))
        except Exception as e:  # noqa: BLE001
            figs.append((Path(fname), f"{fname} failed: {e}"))
    return figs


# ------------------------------------------------------------------------------------------------ HTML page
_CSS = """body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;margin:24px auto;max-width:1200px;color:#222;
padding:0 16px}h1{font-size:26px;margin-bottom:4px}h2{font-size:20px;border-bottom:1px solid #ccc;padding-bottom:3px;
margin-top:28px}table{border-collapse:collapse;font-size:14px;margin:8px 0}th,td{border:1px solid #ccc;
padding:4px 8px;text-align:left}th{background:#eef1f5}td.num{text-align:right;font-variant-numeric:tabular-nums;
white-space:nowrap}.met,.better{background:#dff3e0}.notmet,.worse{background:#fbe2e0}.prov{font-size:12px;
color:#555}figure{margin:14px 0}figure img{max-width:100%;border:1px solid #ddd}figcaption{font-size:13px;
color:#444}video{max-width:100%;border:1px solid #ddd}.falls{font-size:16px;font-weight:bold}"""


def _esc(x) -> str:
    import html
    return html.escape(str(x))


def _status_cls(text: str) -> str:
    return {"met": "met", "not met": "notmet", "better": "better", "worse": "worse"}.get(
        text.split(" (")[0], "")


def html_table(rows, behaviour: str, loop: str) -> str:
    """The summary table (same rows as the Markdown one) as HTML, status cells coloured."""
    src = tv.THESIS_SOURCE.get(behaviour, "")
    iik = behaviour == "crawl_forward"
    head = ["Metric", "Unit", "Ours (mean ± std)", f"Thesis {src}" + (f" ({loop} loop)" if "crawl" in behaviour
                                                                        else ""),
            "vs thesis", "Target (issue 3 §4)", "Target"] + (["Thesis IIK crawl (Table 4.6)"] if iik else [])
    out = ["<table><tr>" + "".join(f"<th>{_esc(h)}</th>" for h in head) + "</tr>"]
    for r in rows:
        fmt = r.get("fmt") or "{:.4g}"
        tgt = f"{r['target'][0]} {r['target'][1]:g}" if r.get("target") else ""
        cells = [f"<td>{_esc(r['label'])}</td>", f"<td>{_esc(r['unit'])}</td>",
                 f"<td class='num'>{_esc(_fmt(fmt, r['mean'], r['std'], r['n']))}</td>",
                 f"<td class='num'>{_esc(_fmt_thesis(fmt, r['thesis']))}</td>",
                 f"<td class='{_status_cls(r['vs_thesis'])}'>{_esc(r['vs_thesis'])}</td>",
                 f"<td>{_esc(tgt)}</td>",
                 f"<td class='{_status_cls(r['target_status'])}'>{_esc(r['target_status'])}</td>"]
        if iik:
            cells.append(f"<td class='num'>{_esc(_fmt_thesis(fmt, tv.IIK_CRAWL.get(r['key'])))}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    return "\n".join(out) + "</table>\n"


def _data_uri(path: Path, mime: str) -> str:
    import base64
    return f"data:{mime};base64," + base64.b64encode(Path(path).read_bytes()).decode("ascii")


def _video_poster(video: Path) -> str | None:
    """PNG data URI of a frame a third into the video (the still a page shows before play); None if unreadable."""
    try:
        import io

        import imageio.v2 as imageio
        from PIL import Image
        r = imageio.get_reader(str(video))
        n = r.count_frames()
        frame = r.get_data(max(0, n // 3))
        r.close()
        buf = io.BytesIO()
        Image.fromarray(frame).save(buf, format="PNG", optimize=True)
        import base64
        return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
    except Exception:  # noqa: BLE001 - the page works without a poster
        return None


def write_html(out: Path, title: str, prov: dict, falls_line: str, rows, behaviour: str, loop: str, trials,
               figs, video: Path | None, per_kf: dict, max_embed_mb: float = 25.0) -> Path:
    """Self-contained ``report.html``: tables beside the thesis, plots (base64 PNG), video of the first trial
    (embedded as base64 up to ``max_embed_mb``, else linked relative to the page)."""
    h = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{_esc(title)}</title>"
         f"<style>{_CSS}</style></head><body>", f"<h1>{_esc(title)}</h1>"]
    h.append("<p class='prov'>" + " · ".join(f"<b>{_esc(k)}</b>: {_esc(v)}" for k, v in prov.items()) + "</p>")
    h.append(f"<p class='falls'>{_esc(falls_line)}</p>")
    h.append("<h2>Summary beside the thesis</h2>" + html_table(rows, behaviour, loop))
    h.append("<p class='prov'>'vs thesis' compares magnitudes (|turn|, |drift|); higher is better for distance, "
             "velocity, margins. Std: sample std (ddof=1) over trials; n = trials with a finite value.</p>")
    if video is not None and Path(video).exists():
        v = Path(video)
        mb = v.stat().st_size / 1e6
        poster = _video_poster(v)
        src = _data_uri(v, "video/mp4") if mb <= max_embed_mb else os.path.relpath(v, out)
        h.append("<h2>Video of the first trial</h2><video controls muted loop preload='metadata' "
                 + (f"poster='{poster}' " if poster else "") + f"src='{src}'></video>"
                 f"<p class='prov'>{_esc(v.name)}, {mb:.1f} MB"
                 + (" (embedded)" if mb <= max_embed_mb else " (linked, too large to embed)") + "</p>")
    if figs:
        h.append("<h2>Figures</h2>")
        for f, cap in figs:
            fp = out / Path(f).name
            if "failed" not in cap and fp.exists():
                h.append(f"<figure><img src='{_data_uri(fp, 'image/png')}' alt='{_esc(cap)}'>"
                         f"<figcaption>{_esc(cap)}</figcaption></figure>")
            else:
                h.append(f"<p>{_esc(cap)}</p>")
    if per_kf:
        h.append("<h2>Static margin per key-frame</h2><table><tr><th>key-frame</th><th>min [m]</th>"
                 "<th>mean of trial minima [m]</th><th>&ge; 0.03 m</th></tr>")
        for k in sorted(per_kf):
            v = np.asarray(per_kf[k], dtype=float)
            ok = v.min() >= 0.03
            h.append(f"<tr><td>{k}</td><td class='num'>{v.min():+.4f}</td><td class='num'>{v.mean():+.4f}</td>"
                     f"<td class='{'met' if ok else 'notmet'}'>{'yes' if ok else 'no'}</td></tr>")
        h.append("</table>")
    keys = [r["key"] for r in rows]
    h.append("<details><summary><b>Per-trial values</b></summary><table><tr><th>seed</th>"
             + "".join(f"<th>{_esc(k)}</th>" for k in keys) + "</tr>")
    for t in trials:
        h.append(f"<tr><td>{_esc(t.get('seed'))}</td>"
                 + "".join(f"<td class='num'>{_esc(_num(t.get(k)))}</td>" for k in keys) + "</tr>")
    h.append("</table></details>")
    h.append("<details><summary><b>Definitions</b></summary><ul>"
             + "".join(f"<li><code>{_esc(k)}</code>: {_esc(DEFINITIONS[k])}</li>" for k in keys if k in DEFINITIONS)
             + "</ul></details>")
    h.append("</body></html>\n")
    p = out / "report.html"
    p.write_text("".join(h), encoding="utf-8")
    return p


def main(argv=None):
    ap = argparse.ArgumentParser(description="Write an evaluation report from trial logs (.npz)")
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--behaviour", required=True, choices=list(tv.PROTOCOL))
    ap.add_argument("--loop", default="full", choices=["full", "part"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--video")
    ap.add_argument("--heading", default="pelvis_z", choices=["pelvis_z", "pelvis_x", "limbs"])
    a = ap.parse_args(argv)
    p = write_report(a.logs, a.behaviour, a.out, a.loop, video=a.video, heading_source=a.heading)
    print(p.read_text(encoding="utf-8").split("## Per-trial")[0])


if __name__ == "__main__":
    main()
