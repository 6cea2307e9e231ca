"""The pelvis path, true and estimated, of a key-frame gait under several estimator settings (issue 14 §1).

    python lab/plot_estimator_paths.py [--behaviour crawl_forward_fast] [--cycles 10] [--seed 0] [--loop-mode full]
        [--config "before=leg.diagonal_support.hold_s=0" --config "after="] [--out estimator_paths.png]

Each ``--config`` is ``label=name=value,name=value`` (estimator overrides, empty for the defaults). Every config is
one :func:`atlas_crawl_eval.estimator_eval.run` (the same gait, start noise and IMU noise: only the estimator
differs, so the true paths coincide). The figure shows the top view with the error at the end of each, and the
horizontal error over time.
"""
from __future__ import annotations

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from atlas_crawl_eval import estimator_eval as ee  # noqa: E402


def parse_config(text: str) -> tuple[str, dict]:
    label, _, sets = text.partition("=")
    if not label:
        raise argparse.ArgumentTypeError(f"--config {text!r}: a label is needed, e.g. 'before=leg.x=1'")
    return label, ee._parse_sets([s for s in sets.split(",") if s])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--behaviour", default="crawl_forward_fast")
    ap.add_argument("--cycles", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--loop-mode", choices=["full", "part"], default="full")
    ap.add_argument("--config", type=parse_config, action="append",
                    help="label=name=value,... (repeatable; default: before (hold_s 0) and after (defaults))")
    ap.add_argument("--out", default="estimator_paths.png")
    a = ap.parse_args(argv)
    configs = a.config or [("before: leg.* everywhere", {"leg.diagonal_support.hold_s": 0.0}),
                           ("after: diagonal-support values", {})]
    fig, (top, err) = plt.subplots(1, 2, figsize=(12, 4.8), gridspec_kw={"width_ratios": [1.4, 1]})
    gt_drawn = False
    for label, sets in configs:
        r = ee.run(a.behaviour, a.cycles, seed=a.seed, est_overrides=sets, loop_mode=a.loop_mode)
        d = ee.drift_figures(r)
        ok = r.est_valid
        t = r.gt.time_s[ok] - r.gt.time_s[0]
        pg, pe = r.gt.pelvis_pos_m[ok], r.est.pelvis_pos_m[ok]
        if not gt_drawn:
            top.plot(pg[:, 0], pg[:, 1], "k-", lw=2, label="ground truth")
            gt_drawn = True
        line, = top.plot(pe[:, 0], pe[:, 1], lw=1.2, label=f"{label}: {d['drift_pct']:.2f} % of the path at the end")
        err.plot(t, 100 * np.linalg.norm(pe[:, :2] - pg[:, :2], axis=1), color=line.get_color(), label=label)
        print(f"{label}: {d['drift_pct']:.2f} % of {d['path_m']:.2f} m ({sets or 'defaults'})", flush=True)
    top.set(xlabel="x [m]", ylabel="y [m]", title=f"{a.behaviour}, {a.cycles} cycles ({a.loop_mode} loop), seed "
            f"{a.seed}: pelvis, top view")
    top.set_aspect("equal", adjustable="datalim")
    top.legend(fontsize=8)
    err.set(xlabel="time [s]", ylabel="horizontal position error [cm]", title="estimate - ground truth")
    err.grid(alpha=0.3)
    err.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
