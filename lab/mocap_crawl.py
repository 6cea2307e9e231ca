"""Retargeted motion-capture crawl tracked by the IIK in physics, with or without CoM modulation (issue 4 §4–§5,
thesis §4.2.4 / Fig 4.23).

    python lab/mocap_crawl.py --bvh atlas_crawl_kinematics/data/synthetic_human_crawl.bvh \
        [--com-modulation] [--stance planned|sensed|velocity] [--root floating|...] --out reports/mocap

The BVH is retargeted (:mod:`atlas_crawl_kinematics.retarget`: FK, REP 103, scale, per-limb height normalisation,
velocity-rule stance), the robot is put on hands and knees in the data's first-frame contact pattern, and every
tick the IIK tracks the data's contacts (stance limbs held, swing limbs on the data path) and the data's pelvis
(low weight). Without modulation that is the thesis' IIK replay; with ``--com-modulation`` a horizontal CoM task
towards a margin-respecting point of the support polygon of the stance set is added (weight above the pelvis).
``planned`` stance = the velocity rule on the data (the data's own stance), ``velocity`` is the same rule on the
target trajectory as sampled at 100 Hz, ``sensed`` = MuJoCo contacts.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

from atlas_crawl_kinematics.bvh import load_bvh
from atlas_crawl_kinematics.retarget import MocapPlan, retarget

from atlas_crawl_eval.iik_crawl import (CRAWL_COLS, AtlasSim, add_track_args, print_table, robot_model, row_from, start_stance,
                        track, track_config_from_args, write_outputs)

DEFAULT_BVH = Path(__file__).resolve().parents[2] / "atlas_crawl_kinematics" / "data" / "synthetic_human_crawl.bvh"


def run(a, quiet=False):
    b = load_bvh(a.bvh)
    rt = retarget(b, atlas_hand_knee_m=a.hand_knee, forward=a.forward, left=a.left, up=a.up)
    c0 = rt.contacts[0]
    fwd = c0[0:2, :2].mean(axis=0) - c0[2:4, :2].mean(axis=0)
    th = math.atan2(fwd[1], fwd[0])
    Rm = np.array([[math.cos(-th), -math.sin(-th)], [math.sin(-th), math.cos(-th)]])
    nominal = (c0[:, :2] - c0[2:4, :2].mean(axis=0)) @ Rm.T
    model = robot_model()
    sim = AtlasSim(seed=a.seed)
    home, _ = start_stance(sim, model, nominal=nominal)
    plan = MocapPlan(rt, sim.contact_site_pos(), sim.pelvis_pose()[0])
    cfg = track_config_from_args(a)
    t = time.perf_counter()
    arr, st, summ = track(sim, model, plan, cfg, home, gait_name="mocap_crawl", seed=a.seed, quiet=quiet)
    summ["wall_s"] = time.perf_counter() - t
    summ["retarget_scale"] = rt.scale
    summ["axes_det"] = rt.axes_det
    label = f"mocap {'mod' if a.com_modulation else 'plain'} stance={a.stance} root={a.root}"
    return arr, st, summ, row_from(label, arr, st, summ)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bvh", default=str(DEFAULT_BVH))
    ap.add_argument("--hand-knee", type=float, default=0.62, help="Atlas wrist-midpoint → knee-midpoint distance, m")
    ap.add_argument("--forward", default="z", help="source axis pointing forward (BVH convention: z)")
    ap.add_argument("--left", default="x", help="source axis pointing to the character's left")
    ap.add_argument("--up", default="y")
    add_track_args(ap)
    ap.add_argument("--out", default="reports/mocap")
    a = ap.parse_args(argv)
    out = Path(a.out)
    cmd = "python lab/mocap_crawl.py " + " ".join(argv if argv is not None else sys.argv[1:])
    arr, st, summ, row = run(a)
    write_outputs(out, arr, st, summ, row, row["label"], command=cmd)
    print(print_table([row], CRAWL_COLS))
    print(f"retarget scale {summ['retarget_scale']:.3f}, axes det {summ['axes_det']:+.0f}; report {out / 'report.md'};"
          f" plot {out / 'support_stances.png'}")
    return 1 if summ["fell"] else 0


if __name__ == "__main__":
    sys.exit(main())
