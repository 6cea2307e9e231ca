"""Precision/recall of the contact estimators against the simulator's ground truth over a crawl run (no ROS).

    python -m atlas_crawl_eval.contact_inference_eval [--gait crawl_forward] [--cycles 3] [--speed 1.0]
                                                            [--rate-hz 100] [--save log.npz]

Runs the plain-Python stack exactly as the nodes compose it — AtlasSim (1 kHz physics), CrawlControllerCore
(read → update → write at its update rate), GaitSequencer (key-frames, support gating on ground truth) — and, at
``rate_hz``, feeds every estimator (height §3.4.1, velocity §4.3.2, effort) with the contact-point positions
(world) and the joint efforts, scoring "stance" (positive class) against ``AtlasSim.limb_contacts()`` (a limb is in
contact when any of its support geoms touches the floor).  Prints a per-limb and overall table, plus the load
metric statistics the effort thresholds are calibrated from.
"""
from __future__ import annotations

import argparse
import sys
from types import SimpleNamespace

import numpy as np

from atlas_crawl_controller import contact_inference as ci
from atlas_crawl_controller.controller_core import CrawlControllerCore
from atlas_crawl_controller.gait_sequencer import GaitSequencer, MotionGoal
from atlas_crawl_controller.gait_sequencer import parameter_set as seq_params
from atlas_crawl_controller.keyframes import load_script
from atlas_description import LIMB_NAMES
from atlas_crawl_mujoco.sim import AtlasSim


def record_run(gait: str = "crawl_forward", cycles: int = 3, speed: float = 1.0, rate_hz: float = 100.0,
               loop: str = "part", seed: int = 0):
    """Simulate a crawl and return (t, contact_pos (N,4,3), efforts (N,28), truth (N,4), outcome)."""
    sim = AtlasSim(seed=seed)
    script = load_script(gait)
    sim.fall_check = "none"
    sim.reset(script.keyframes[0].q, base_quat_wxyz=tuple(getattr(script, "start_quat_wxyz", None) or (1, 0, 0, 0)))
    sim.step(500)
    core = CrawlControllerCore()
    core.configure()
    core.activate(sim.joint_q())
    n_ctrl = max(1, int(round(1.0 / (core.params["update_rate_hz"] * sim.dt))))
    seq = GaitSequencer(seq_params().values())

    def pose7():
        p, q = sim.pelvis_pose()
        return np.array([p[0], p[1], p[2], q[1], q[2], q[3], q[0]])

    seq.start(MotionGoal(kind="crawl", script=gait, loop_mode=loop, cycles=cycles, time_scale=1.0 / speed,
                         max_cycles=cycles), 0.0, pose7())
    rows_t, rows_p, rows_e, rows_gt = [], [], [], []
    n_log = max(1, int(round(1.0 / (rate_hz * sim.dt))))
    n_seq = max(1, int(round(1.0 / (100.0 * sim.dt))))
    step = 0
    t0 = sim.time
    outcome = None
    while outcome is None and sim.time - t0 < 600:
        t = sim.time - t0
        if step % n_seq == 0:
            touch, _f = sim.limb_contacts()
            pts = sim.contact_site_pos()
            sup = ci.support_from_contacts(touch, pts, sim.com())
            out = seq.tick(t, core.status(), SimpleNamespace(in_contact=touch, stability_margin_m=sup.margin_m,
                                                             statically_stable=sup.statically_stable, age_s=0.0),
                           pose7())
            if out.reference is not None:
                core.set_reference(out.reference)
            outcome = out.outcome
        if step % n_ctrl == 0:
            cmd = core.update(t, n_ctrl * sim.dt, sim.joint_q(), sim.joint_qd(), sim.joint_effort(), pose7())
            sim.set_joint_targets(cmd)
        if step % n_log == 0:
            rows_t.append(t)
            rows_p.append(sim.contact_site_pos())
            rows_e.append(sim.joint_effort())
            rows_gt.append(sim.limb_contacts()[0])
        sim.step(1)
        step += 1
    return (np.array(rows_t), np.array(rows_p), np.array(rows_e), np.array(rows_gt, bool), outcome)


def evaluate(t, pos, eff, truth, params=None):
    """{method: precision_recall dict} for the three estimators on recorded data."""
    p = params or ci.default_parameters()
    out = {}
    for m in ci.METHODS:
        est = ci.make_estimator(m, p)
        pred = np.array([est.update(t[k], pos[k], eff[k]).in_contact for k in range(len(t))])
        out[m] = ci.precision_recall(pred, truth)
    return out


def effort_statistics(eff, truth, params=None):
    """Per limb: load metric (as the effort estimator computes it) percentiles in stance and in swing."""
    p = params or ci.default_parameters()
    est = ci.make_estimator("effort", p)
    load = np.array([est.load(e) for e in eff])
    stats = {}
    for i, limb in enumerate(LIMB_NAMES):
        st, sw = load[truth[:, i], i], load[~truth[:, i], i]
        stats[limb] = {"stance_p10": float(np.percentile(st, 10)) if st.size else float("nan"),
                       "stance_median": float(np.median(st)) if st.size else float("nan"),
                       "swing_median": float(np.median(sw)) if sw.size else float("nan"),
                       "swing_p90": float(np.percentile(sw, 90)) if sw.size else float("nan"),
                       "swing_samples": int(sw.size)}
    return stats


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gait", default="crawl_forward")
    ap.add_argument("--cycles", type=int, default=3)
    ap.add_argument("--speed", type=float, default=1.0)
    ap.add_argument("--rate-hz", type=float, default=100.0)
    ap.add_argument("--load", help="score a saved log (npz from --save) instead of simulating")
    ap.add_argument("--save", help="save the recorded log (npz)")
    args = ap.parse_args(argv)
    if args.load:
        d = np.load(args.load)
        t, pos, eff, truth = d["t"], d["pos"], d["eff"], d["truth"]
        print(f"log {args.load}: {len(t)} samples")
    else:
        t, pos, eff, truth, outcome = record_run(args.gait, args.cycles, args.speed, args.rate_hz)
        print(f"{args.gait}: {args.cycles} cycles at speed {args.speed}: {outcome.status if outcome else 'timeout'} "
              f"{outcome.reason if outcome else ''}; {len(t)} samples at {args.rate_hz} Hz, distance "
              f"{outcome.distance_m if outcome else float('nan'):.3f} m")
        if args.save:
            np.savez_compressed(args.save, t=t, pos=pos, eff=eff, truth=truth)
    frac = truth.mean(axis=0)
    print("ground truth stance fraction: " + ", ".join(f"{limb} {f:.2f}" for limb, f in zip(LIMB_NAMES, frac)))
    res = evaluate(t, pos, eff, truth)
    print(f"\n{'method':<9} {'limb':<4} {'precision':>9} {'recall':>7} {'F1':>6} {'accuracy':>8} {'MCC':>6}")
    for m, table in res.items():
        for limb in list(LIMB_NAMES) + ["all"]:
            s = table[limb]
            print(f"{m:<9} {limb:<4} {s['precision']:9.3f} {s['recall']:7.3f} {s['f1']:6.3f} {s['accuracy']:8.3f} "
                  f"{s['mcc']:6.3f}")
    print("\neffort load metric [N m] (for calibrating effort.on/off_threshold_nm):")
    for limb, s in effort_statistics(eff, truth).items():
        print(f"  {limb}: stance p10 {s['stance_p10']:.1f}, median {s['stance_median']:.1f}; swing median "
              f"{s['swing_median']:.1f}, p90 {s['swing_p90']:.1f} ({s['swing_samples']} swing samples)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
