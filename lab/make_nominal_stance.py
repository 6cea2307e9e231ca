"""Author ``gaits/crawl_stance_nominal.yaml``: the sampling runner's start stance (``atlas_crawl_eval.iik_crawl.
start_stance``: the nominal contact pattern, the CoM 0.02 m ahead of its centroid, settled 1.5 s in MuJoCo on the flat
floor) as a one-key-frame script, so the ROS graph can start from it (the MuJoCo node's ``initial_pose``).

    python lab/make_nominal_stance.py [--out atlas_crawl_controller/atlas_crawl_controller/gaits/crawl_stance_nominal.yaml]

Why: the graph starts a Cartesian gait from ``crawl_stance`` (the key-frame crawl's staggered first key-frame) and
the runner from this stance; a graph-vs-runner comparison (issue 10 §2) from the same start separates the law from
the start posture.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from atlas_crawl_controller.robot_info import JOINT_NAMES
from atlas_crawl_eval.gen_crawl import make_sim
from atlas_crawl_eval.iik_crawl import robot_model, start_stance

OUT = Path(__file__).resolve().parents[1] / "atlas_crawl_controller" / "atlas_crawl_controller" / "gaits" / \
    "crawl_stance_nominal.yaml"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    sim = make_sim("", "none", 0)
    model = robot_model()
    q, _r = start_stance(sim, model)
    q = model.clip_to_limits(q)           # settled joints may sag a hair past a limit
    _p, quat_wxyz = sim.pelvis_pose()
    c = sim.contact_site_pos()
    com = sim.com()
    lines = [
        "# The sampling runner's start stance (atlas_crawl_eval.iik_crawl.start_stance: the nominal contact pattern with",
        "# the CoM 0.02 m ahead of its centroid, settled 1.5 s on the flat floor), written by lab/make_nominal_stance.py.",
        "# A start pose for the ROS graph's Cartesian gaits (MuJoCo node initial_pose: crawl_stance_nominal); the",
        "# key-frame gaits start from crawl_stance.",
        "name: crawl_stance_nominal",
        "description: >-",
        "  Symmetric four-point stance of the Cartesian gait generator (the sampling runner's start), one key-frame.",
        "fall_check: crawl",
        "start_quat_wxyz: [" + ", ".join(f"{v:.5f}" for v in quat_wxyz) + "]",
        "keyframes:",
        f"  # settled contacts LW/RW/LK/RK (x, y) relative to their centroid: "
        + "; ".join(f"({x:+.3f}, {y:+.3f})" for x, y in (c[:, :2] - c[:, :2].mean(axis=0))),
        f"  # CoM {com[0] - c[:, 0].mean():+.3f} m ahead of the centroid",
        "  - name: stance",
        "    duration_s: 0.600",
        "    stance: [LW, RW, LK, RK]",
        "    joints:",
    ]
    lines += [f"      {n}: {v:+.4f}" for n, v in zip(JOINT_NAMES, np.asarray(q, float))]
    Path(a.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
