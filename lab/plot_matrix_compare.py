"""Two robustness matrices of one gait side by side: scenes × disturbances, the colour the success rate, the text
success % and speed in % of the flat-floor speed (``robustness.json`` of ``python -m atlas_crawl_eval.robustness``).

    python lab/plot_matrix_compare.py BEFORE/robustness.json AFTER/robustness.json --labels before after \
        --gait gen_diagonal_forward --out atlas_crawl_eval/doc/robustness_matrix_gen_diagonal_forward_s30.png
"""
from __future__ import annotations

import argparse
import json
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def grid(path: str, gait: str):
    """(scenes, disturbances, success (S, D), % flat (S, D), runs succeeded, runs) of ``gait`` in the matrix at
    ``path``."""
    cells = [c for c in json.load(open(path, encoding="utf-8"))["cells"] if c["gait"] == gait]
    if not cells:
        raise SystemExit(f"{path}: no cell of gait {gait!r}")
    scenes = list(dict.fromkeys(c["scene"] for c in cells))
    dists = list(dict.fromkeys(c["disturbance"] for c in cells))
    ok, pct = np.full((len(scenes), len(dists)), np.nan), np.full((len(scenes), len(dists)), np.nan)
    for c in cells:
        i, j = scenes.index(c["scene"]), dists.index(c["disturbance"])
        ok[i, j], pct[i, j] = c["success_rate"], c["speed_pct_flat"]
    n = sum(int(c["runs"]) for c in cells)
    return scenes, dists, ok, pct, round(sum(c["success_rate"] * int(c["runs"]) for c in cells)), n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("matrices", nargs=2)
    ap.add_argument("--labels", nargs=2, default=["before", "after"])
    ap.add_argument("--gait", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), sharey=True)
    for ax, path, label in zip(axes, a.matrices, a.labels):
        scenes, dists, ok, pct, n_ok, n = grid(path, a.gait)
        ax.imshow(ok, cmap="RdYlGn", vmin=0.0, vmax=1.0, aspect="auto")
        for i in range(len(scenes)):
            for j in range(len(dists)):
                p = "–" if math.isnan(pct[i, j]) else f"{pct[i, j]:.0f} %"
                weight = "bold" if ok[i, j] == 1.0 and pct[i, j] >= 70 else "normal"
                ax.text(j, i, f"{100 * ok[i, j]:.0f} % ok\n{p} flat", ha="center", va="center", fontsize=9,
                        fontweight=weight)
        ax.set_xticks(range(len(dists)), dists, rotation=30)
        names = ["slope 10°, dir 0" if sc == "slope" else sc.replace("slope:direction_deg=", "slope 10°, dir ")
                 for sc in scenes]
        ax.set_yticks(range(len(scenes)), names)
        ax.set_title(f"{label}\n{n_ok}/{n} runs ok; bold: 100 % ok and ≥ 70 % of the flat speed", fontsize=10)
    fig.suptitle(f"{a.gait}: success rate (colour) and speed in % of flat (text)")
    fig.tight_layout()
    fig.savefig(a.out, dpi=90)
    print(a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
