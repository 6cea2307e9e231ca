"""Merge robustness-matrix results (``atlas_crawl_eval.robustness`` ``robustness.json`` files) into one report: a gait
re-run on its own (after a change that touches only it) replaces its rows, and runs split over several commands give
one table and one heat-map.

    python lab/merge_robustness.py --out reports/rob_merged A/robustness.json:gen_forward,gen_backward \\
        B/robustness.json:gen_turn_left

Each input is ``FILE[:GAIT,...]`` (only those gaits' runs are taken). A run of a later input replaces one of an earlier
input with the same gait, scene, disturbance and seed. Every input must have the same cycles per run. Writes
``report.md``, ``robustness.json`` and ``heatmap.png`` to ``--out`` with each input's command and commit.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from atlas_crawl_eval.robustness import summarize, write_report


def merge(inputs: list[tuple[dict, set | None]]) -> tuple[list[dict], dict]:
    """(runs, info) of ``inputs`` = [(robustness.json content, gaits or None)]; raises ValueError on mixed cycles."""
    runs: dict[tuple, dict] = {}
    cycles = {d["cycles"] for d, _g in inputs}
    if len(cycles) != 1:
        raise ValueError(f"inputs differ in cycles per run: {sorted(cycles)}")
    for d, gaits in inputs:
        for r in d["runs"]:
            if gaits is None or r["gait"] in gaits:
                runs[(r["gait"], r["scene"], r["disturbance"], r["seed"])] = r
    info = {"command": " ; ".join(d["command"] + (f" [gaits {','.join(sorted(g))}]" if g else "") for d, g in inputs),
            "commit": " + ".join(d["commit"] for d, _g in inputs), "cycles": cycles.pop(),
            "num_cpus": max(d["num_cpus"] for d, _g in inputs), "wall_s": sum(d["wall_s"] for d, _g in inputs)}
    for k in ("push_ns", "push_s", "gain_scale", "mass_scale", "friction"):
        info[k] = inputs[0][0].get(k)
    return list(runs.values()), info


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="+", help="robustness.json[:gait,gait...]")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    inputs = []
    for spec in a.inputs:
        path, _sep, gaits = spec.partition(":")
        try:
            d = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            ap.error(f"{path}: {e}")
        if not isinstance(d, dict) or not {"runs", "cycles", "command", "commit"} <= set(d):
            ap.error(f"{path}: not a robustness.json (needs runs, cycles, command, commit)")
        inputs.append((d, set(gaits.split(",")) if gaits else None))
    try:
        runs, info = merge(inputs)
    except ValueError as e:
        ap.error(str(e))
    cells = summarize(runs)
    report = write_report(Path(a.out), runs, cells, info)
    ok = sum(r["success"] for r in runs)
    print(f"{len(runs)} runs, {ok} succeeded, {len(cells)} cells; {report}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
