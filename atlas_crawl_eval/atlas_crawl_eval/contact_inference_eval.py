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
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from atlas_crawl_controller import contact_inference as ci
from atlas_crawl_controller.controller_core import CrawlControllerCore
from atlas_crawl_controller.gait_sequencer import GaitSequencer, MotionGoal
from atlas_crawl_controller.gait_sequencer import parameter_set as seq_params
from atlas_crawl_controller.keyframes import load_script
from atlas_description import LIMB_NAMES
from atlas_crawl_mujoco.sim import AtlasSim


@dataclass
class Recording:
    """A crawl sampled at ``rate_hz``: times (N,), contact sites (N,4,3), efforts (N,28), ground-truth stance (N,4),
    joints (N,28), pelvis pose xyz+quat xyzw (N,7), the gait phase's expected stance (N,4), the goal's outcome."""
    t: np.ndarray
    pos: np.ndarray
    eff: np.ndarray
    truth: np.ndarray
    q: np.ndarray
    pose: np.ndarray
    expected: np.ndarray
    outcome: object = None


def record_run(gait: str = "crawl_forward", cycles: int = 3, speed: float = 1.0, rate_hz: float = 100.0,
               loop: str = "part", seed: int = 0):
    """Simulate a crawl and return its :class:`Recording`."""
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
    rows_t, rows_p, rows_e, rows_gt, rows_q, rows_pose, rows_exp = [], [], [], [], [], [], []
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
            rows_q.append(sim.joint_q())
            rows_pose.append(pose7())
            rows_exp.append(seq.expected_stance())
        sim.step(1)
        step += 1
    return Recording(t=np.array(rows_t), pos=np.array(rows_p), eff=np.array(rows_e), truth=np.array(rows_gt, bool),
                     q=np.array(rows_q), pose=np.array(rows_pose), expected=np.array(rows_exp, bool), outcome=outcome)


def clearances(rec: Recording) -> np.ndarray:
    """(N, 4) limb clearance above the ground from the recorded joints and pelvis pose (our kinematics, not MuJoCo)."""
    from atlas_crawl_kinematics.clearance import LimbClearance
    from atlas_crawl_kinematics.model import RobotModel
    from atlas_crawl_kinematics.rotations import quat_xyzw_to_R
    from atlas_description import LIMB_LINKS, model_urdf
    model = RobotModel.from_urdf_string(model_urdf())
    lc = LimbClearance(model, model_urdf(), LIMB_LINKS)
    return np.array([lc.clearance(model.forward(q), quat_xyzw_to_R(p[3:]), p[:3])[0] for q, p in zip(rec.q, rec.pose)])


def predictions(rec: Recording, params=None, clearance_noise_m: float = 0.0, seed: int = 0) -> dict:
    """{method: (N, 4) stance decisions} of every estimator on a recording; ``clearance_noise_m`` adds white noise
    to the clearance the fusion sees (pose / joint-encoder error)."""
    p = params or ci.default_parameters()
    clear = clearances(rec)
    if clearance_noise_m > 0:
        clear = clear + clearance_noise_m * np.random.default_rng(seed).standard_normal(clear.shape)
    out = {}
    for m in ci.METHODS:
        est = ci.ContactInference(p.replace(method=m))
        out[m] = np.array([est.update(rec.t[k], rec.pos[k], rec.eff[k], clearance=clear[k],
                                      expected=rec.expected[k]).in_contact for k in range(len(rec.t))])
    return out


def evaluate(rec: Recording, params=None, clearance_noise_m: float = 0.0) -> dict:
    """{method: precision_recall dict} for every estimator on a recording."""
    return {m: ci.precision_recall(pred, rec.truth)
            for m, pred in predictions(rec, params, clearance_noise_m).items()}


def touchdown_latency_s(pred, truth, t, window_s: float = 0.3) -> np.ndarray:
    """Per true touchdown (swing → stance of the truth), the delay until the prediction is stance (negative = early);
    touchdowns with no predicted touchdown within ``window_s`` count as ``window_s``."""
    out = []
    for i in range(truth.shape[1]):
        for k in np.flatnonzero(~truth[:-1, i] & truth[1:, i]) + 1:
            near = np.flatnonzero(pred[:, i] & (np.abs(t - t[k]) <= window_s))
            after = near[t[near] >= t[k] - window_s]
            out.append(min(window_s, float(np.min(np.abs(t[after] - t[k]))) if after.size else window_s))
    return np.array(out)


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
    ap.add_argument("--clearance-noise-m", type=float, default=0.0,
                    help="white noise added to the clearance the fusion estimator sees (pose/encoder error)")
    args = ap.parse_args(argv)
    if args.load:
        d = np.load(args.load, allow_pickle=False)
        rec = Recording(**{k: d[k] for k in ("t", "pos", "eff", "truth", "q", "pose", "expected")})
        print(f"log {args.load}: {len(rec.t)} samples")
    else:
        rec = record_run(args.gait, args.cycles, args.speed, args.rate_hz)
        o = rec.outcome
        print(f"{args.gait}: {args.cycles} cycles at speed {args.speed}: {o.status if o else 'timeout'} "
              f"{o.reason if o else ''}; {len(rec.t)} samples at {args.rate_hz} Hz, distance "
              f"{o.distance_m if o else float('nan'):.3f} m")
        if args.save:
            np.savez_compressed(args.save, t=rec.t, pos=rec.pos, eff=rec.eff, truth=rec.truth, q=rec.q,
                                pose=rec.pose, expected=rec.expected)
    truth = rec.truth
    frac = truth.mean(axis=0)
    flips = np.sum(np.diff(truth.astype(int), axis=0) != 0, axis=0)
    print("ground truth stance fraction: " + ", ".join(f"{limb} {f:.2f}" for limb, f in zip(LIMB_NAMES, frac)))
    print("ground truth contact changes: " + ", ".join(f"{limb} {n}" for limb, n in zip(LIMB_NAMES, flips)))
    preds = predictions(rec, clearance_noise_m=args.clearance_noise_m)
    print(f"\n{'method':<9} {'limb':<4} {'precision':>9} {'recall':>7} {'F1':>6} {'accuracy':>8} {'MCC':>6}"
          f"  touchdown latency median/p95 [ms]")
    for m, pred in preds.items():
        table = ci.precision_recall(pred, truth)
        lat = touchdown_latency_s(pred, truth, rec.t) * 1e3
        for limb in list(LIMB_NAMES) + ["all"]:
            s = table[limb]
            tail = f"  {np.median(lat):.0f} / {np.percentile(lat, 95):.0f}" if limb == "all" and lat.size else ""
            print(f"{m:<9} {limb:<4} {s['precision']:9.3f} {s['recall']:7.3f} {s['f1']:6.3f} {s['accuracy']:8.3f} "
                  f"{s['mcc']:6.3f}{tail}")
    eff = rec.eff
    print("\neffort load metric [N m] (for calibrating effort.on/off_threshold_nm):")
    for limb, s in effort_statistics(eff, truth).items():
        print(f"  {limb}: stance p10 {s['stance_p10']:.1f}, median {s['stance_median']:.1f}; swing median "
              f"{s['swing_median']:.1f}, p90 {s['swing_p90']:.1f} ({s['swing_samples']} swing samples)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
