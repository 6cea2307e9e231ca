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
    joints (N,28), pelvis pose xyz+quat xyzw (N,7), the gait phase's expected stance (N,4), the goal's outcome,
    the ground-truth normal force per limb averaged over the sample period (N,4) [N], joint velocities (N,28), the
    gait phase (N,) in [0, 1] of the running step (NaN when idle), and the sample-period ground truth (N,4): the
    limb touched the floor in at least one physics step of the sample period.

    ``truth`` is MuJoCo's contact at the sampling instant. The contacts chatter at the millisecond scale (a limb
    bounces: 1-3 ms on/off runs at 1 kHz), so a 100 Hz snapshot aliases the bouncing; ``truth_period`` is the
    ground truth of the estimator's whole sample period."""
    t: np.ndarray
    pos: np.ndarray
    eff: np.ndarray
    truth: np.ndarray
    q: np.ndarray
    pose: np.ndarray
    expected: np.ndarray
    outcome: object = None
    force: np.ndarray = None
    qd: np.ndarray = None
    phase: np.ndarray = None
    truth_period: np.ndarray = None
    pose_est: np.ndarray = None


POSE_SOURCES = ("ground_truth", "estimate")


def record_run(gait: str = "crawl_forward", cycles: int = 3, speed: float = 1.0, rate_hz: float = 100.0,
               loop: str = "part", seed: int = 0, noise_rad: float = 0.0, pose_source: str = "ground_truth",
               estimate_in_loop: bool = True):
    """Simulate a crawl and return its :class:`Recording`. ``seed`` with ``noise_rad`` > 0: seeded uniform noise on
    the initial joint angles (AtlasSim.reset), so runs differ; with ``noise_rad`` 0 the run is deterministic.

    The gait-phase prior is what the node sees: the stance of the last reference the sequencer sent (all four while
    none runs) and the phase ``(t − t_sent) / duration_s`` of that reference, clipped to [0, 1].

    ``pose_source`` "estimate": the sim node's state estimator runs as it does there (noisy IMU every control period,
    joints at ``estimator.joint_rate_hz`` with the core's expected stance, the height map at 2 Hz; ≥ 2.5 s of
    rest, until aligned, before the goal) and ``pose_est`` records its pose; the controller and the sequencer read it too
    unless ``estimate_in_loop`` is False (then they read the ground truth). ``pose`` stays the ground truth."""
    if pose_source not in POSE_SOURCES:
        raise ValueError(f"pose_source must be one of {POSE_SOURCES}, got {pose_source!r}")
    sim = AtlasSim(seed=seed)
    script = load_script(gait)
    sim.fall_check = "none"
    sim.reset(script.keyframes[0].q, base_quat_wxyz=tuple(getattr(script, "start_quat_wxyz", None) or (1, 0, 0, 0)),
              noise_rad=noise_rad)
    core = CrawlControllerCore()
    core.configure()

    def pose_gt():
        p, q = sim.pelvis_pose()
        return np.array([p[0], p[1], p[2], q[1], q[2], q[3], q[0]])

    feed = None
    if pose_source == "estimate":
        from .estimator_eval import aligned_estimator
        est, feed = aligned_estimator(sim, lambda: core.expected_stance, seed=seed)
    else:
        sim.step(500)
    core.activate(sim.joint_q())
    n_ctrl = max(1, int(round(1.0 / (core.params["update_rate_hz"] * sim.dt))))
    seq = GaitSequencer(seq_params().values())

    def pose_estimate():
        e = est.estimate(sim.time)
        return np.full(7, np.nan) if e is None else e.pose7.copy()

    pose7 = pose_estimate if feed is not None and estimate_in_loop else pose_gt

    seq.start(MotionGoal(kind="crawl", script=gait, loop_mode=loop, cycles=cycles, time_scale=1.0 / speed,
                         max_cycles=cycles, direction=-1 if "backward" in gait else 1), 0.0, pose7())
    rows_t, rows_p, rows_e, rows_gt, rows_q, rows_pose, rows_exp = [], [], [], [], [], [], []
    rows_f, rows_qd, rows_ph, rows_period, rows_est = [], [], [], [], []
    acc_touch, acc_force, acc_n = np.zeros(4, bool), np.zeros(4), 0
    ref_stance, ref_t, ref_dur = np.ones(4, bool), None, 0.0
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
                ref_stance = np.asarray(out.reference.stance, bool).copy()
                ref_t, ref_dur = t, float(out.reference.duration_s)
            outcome = out.outcome
        if step % n_ctrl == 0:
            cmd = core.update(t, n_ctrl * sim.dt, sim.joint_q(), sim.joint_qd(), sim.joint_effort(), pose7())
            sim.set_joint_targets(cmd)
        touch, force = sim.limb_contacts()
        acc_touch |= touch
        acc_force += force
        acc_n += 1
        if step % n_log == 0:
            rows_t.append(t)
            rows_p.append(sim.contact_site_pos())
            rows_e.append(sim.joint_effort())
            rows_gt.append(touch)
            rows_period.append(acc_touch.copy())
            rows_f.append(acc_force / acc_n)
            acc_touch[:] = False
            acc_force[:] = 0.0
            acc_n = 0
            rows_q.append(sim.joint_q())
            rows_pose.append(pose_gt())
            if feed is not None:
                rows_est.append(pose_estimate())
            rows_exp.append(ref_stance.copy())
            rows_qd.append(sim.joint_qd())
            rows_ph.append(float(np.clip((t - ref_t) / ref_dur, 0.0, 1.0)) if ref_t is not None and ref_dur > 0
                           else float("nan"))
        sim.step(1)
        if feed is not None:
            feed(step)
        step += 1
    return Recording(t=np.array(rows_t), pos=np.array(rows_p), eff=np.array(rows_e), truth=np.array(rows_gt, bool),
                     q=np.array(rows_q), pose=np.array(rows_pose), expected=np.array(rows_exp, bool), outcome=outcome,
                     force=np.array(rows_f), qd=np.array(rows_qd), phase=np.array(rows_ph),
                     truth_period=np.array(rows_period, bool),
                     pose_est=np.array(rows_est) if feed is not None else None)


@dataclass
class Noise:
    """Sensor noise added to a recording before estimation (white, seeded): joint encoders [rad], pelvis position
    [m] and orientation [rad] (the estimated pose a state estimator would give), joint efforts [N m]."""
    joint_rad: float = 0.0
    pose_pos_m: float = 0.0
    pose_rot_rad: float = 0.0
    effort_nm: float = 0.0
    seed: int = 0

    def apply(self, rec: Recording):
        """(q, pose, eff) of ``rec`` with this noise."""
        from atlas_crawl_kinematics.rotations import quat_xyzw_to_R, R_to_quat_xyzw
        rng = np.random.default_rng(self.seed)
        q = rec.q + self.joint_rad * rng.standard_normal(rec.q.shape)
        eff = rec.eff + self.effort_nm * rng.standard_normal(rec.eff.shape)
        pose = rec.pose.copy()
        pose[:, :3] += self.pose_pos_m * rng.standard_normal((len(pose), 3))
        if self.pose_rot_rad > 0:
            for k in range(len(pose)):
                w = self.pose_rot_rad * rng.standard_normal(3)
                a = float(np.linalg.norm(w))
                K = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]]) / max(a, 1e-12)
                dR = np.eye(3) + np.sin(a) * K + (1 - np.cos(a)) * K @ K
                pose[k, 3:] = R_to_quat_xyzw(dR @ quat_xyzw_to_R(pose[k, 3:]))
        return q, pose, eff


def evidence(rec: Recording, params=None, noise: Noise | None = None) -> list:
    """The fusion's :class:`~atlas_crawl_controller.contact_inference.Evidence` per sample, computed exactly as the
    node does (ContactEvidence on our URDF model; the joints, pose and efforts optionally with ``noise``)."""
    from atlas_crawl_kinematics.model import RobotModel
    from atlas_description import model_urdf
    p = params or ci.default_parameters()
    model = RobotModel.from_urdf_string(model_urdf())
    ev = ci.make_evidence(p, model, model_urdf())
    q, pose, eff = noise.apply(rec) if noise is not None else (rec.q, rec.pose, rec.eff)
    if rec.pose_est is not None:   # recorded with pose_source "estimate": the pose the node would have seen
        pose = rec.pose_est + (pose - rec.pose)
    return [ev.update(rec.t[k], q[k], pose[k], eff[k]) for k in range(len(rec.t))]


def clearances(rec: Recording) -> np.ndarray:
    """(N, 4) limb clearance above the ground from the recorded joints and pelvis pose (our kinematics, not MuJoCo)."""
    return np.array([e.clearance for e in evidence(rec)])


def run_fusion(rec: Recording, params=None, evid: list | None = None, prior: bool = True) -> np.ndarray:
    """(N, 4) stance decisions of the fusion estimator on a recording (``evid`` from :func:`evidence`)."""
    p = params or ci.default_parameters()
    evid = evid if evid is not None else evidence(rec, p)
    est = ci.ContactInference(p.replace(method="fusion"))
    return np.array([est.update(rec.t[k], rec.pos[k], rec.eff[k], clearance=e.clearance,
                                expected=rec.expected[k] if prior else None, speed=e.speed,
                                force=e.force, force_var=e.force_var).in_contact for k, e in enumerate(evid)])


def predictions(rec: Recording, params=None, noise: Noise | None = None) -> dict:
    """{method: (N, 4) stance decisions} of every estimator on a recording (``noise`` on the fusion's inputs;
    the single-cue estimators see the recorded contact points and efforts)."""
    p = params or ci.default_parameters()
    out = {}
    for m in ci.METHODS:
        if m == "fusion":
            out[m] = run_fusion(rec, p, evidence(rec, p, noise))
            continue
        est = ci.ContactInference(p.replace(method=m))
        out[m] = np.array([est.update(rec.t[k], rec.pos[k], rec.eff[k]).in_contact for k in range(len(rec.t))])
    return out


def evaluate(rec: Recording, params=None, truth: str = "period") -> dict:
    """{method: precision_recall dict} for every estimator on a recording, against ``truth`` ("period": contact in
    the sample period; "snapshot": contact at the sampling instant)."""
    tr = rec.truth_period if truth == "period" else rec.truth
    return {m: ci.precision_recall(pred, tr) for m, pred in predictions(rec, params).items()}


def touchdown_events(truth, t, min_swing_s: float = 0.05) -> list:
    """[(limb, sample)] of the true touchdowns: swing → stance after at least ``min_swing_s`` of swing (a bounce
    shorter than that is not a touchdown)."""
    out = []
    for i in range(truth.shape[1]):
        for k in np.flatnonzero(~truth[:-1, i] & truth[1:, i]) + 1:
            j = k - 1
            while j >= 0 and not truth[j, i]:
                j -= 1
            if t[k - 1] - t[j + 1] + (t[1] - t[0] if len(t) > 1 else 0.0) >= min_swing_s - 1e-9:
                out.append((i, int(k)))
    return out


def touchdown_latency_s(pred, truth, t, window_s: float = 0.1, min_swing_s: float = 0.05) -> np.ndarray:
    """Per true touchdown (:func:`touchdown_events`), the signed delay [s] of the nearest predicted swing → stance
    change within ±``window_s`` (negative = early); NaN when there is none (missed: e.g. the estimator never saw the
    lift-off, or saw the touchdown more than ``window_s`` away)."""
    pred = np.asarray(pred, bool)
    out = []
    for i, k in touchdown_events(truth, t, min_swing_s):
        td = np.flatnonzero(~pred[:-1, i] & pred[1:, i]) + 1
        td = td[np.abs(t[td] - t[k]) <= window_s + 1e-9]
        out.append(float(t[td[np.argmin(np.abs(t[td] - t[k]))]] - t[k]) if td.size else float("nan"))
    return np.array(out)


def latency_summary(lat_s) -> dict:
    """median / p95 of |latency| [ms] over detected touchdowns, share within 20 ms (of all), missed count."""
    lat = np.asarray(lat_s, float)
    det = lat[np.isfinite(lat)]
    return {"n": int(lat.size), "missed": int(np.sum(~np.isfinite(lat))),
            "median_ms": float(np.median(det) * 1e3) if det.size else float("nan"),
            "p95_abs_ms": float(np.percentile(np.abs(det), 95) * 1e3) if det.size else float("nan"),
            "within_20ms": float(np.mean(np.abs(np.nan_to_num(lat, nan=1.0)) <= 0.020 + 1e-9)) if lat.size
            else float("nan")}


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


GAITS = ("crawl_forward", "crawl_backward", "turn_left")
_FIELDS = ("t", "pos", "eff", "truth", "q", "pose", "expected", "force", "qd", "phase", "truth_period", "pose_est")


def save_recording(rec: Recording, path: str):
    np.savez_compressed(path, **{k: getattr(rec, k) for k in _FIELDS if getattr(rec, k) is not None})


def load_recording(path: str) -> Recording:
    d = np.load(path, allow_pickle=False)
    return Recording(**{k: d[k] for k in _FIELDS if k in d.files})


def _table_row(name, limb, s, tail=""):
    return (f"{name:<9} {limb:<4} {s['precision']:9.3f} {s['recall']:7.3f} {s['f1']:6.3f} {s['accuracy']:8.3f} "
            f"{s['mcc']:6.3f}{tail}")


def report(rec: Recording, label: str, noise: Noise | None = None, all_methods: bool = False,
           show_effort: bool = False) -> dict:
    """Print the tables for one recording; returns {"mcc": {limb: fusion MCC (period truth)}, "latency": summary,
    "mcc_snapshot": {...}}."""
    truth = rec.truth_period if rec.truth_period is not None else rec.truth
    flips = np.sum(np.diff(truth.astype(int), axis=0) != 0, axis=0)
    print(f"\n== {label}: {len(rec.t)} samples; ground truth = contact in the sample period; stance fraction "
          + ", ".join(f"{limb} {f:.2f}" for limb, f in zip(LIMB_NAMES, truth.mean(axis=0)))
          + "; contact changes " + ", ".join(f"{limb} {n}" for limb, n in zip(LIMB_NAMES, flips)))
    p = ci.default_parameters()
    preds = {"fusion": run_fusion(rec, p, evidence(rec, p, noise))}
    if all_methods:
        preds.update({m: v for m, v in predictions(rec, p).items() if m != "fusion"})
    print(f"{'method':<9} {'limb':<4} {'precision':>9} {'recall':>7} {'F1':>6} {'accuracy':>8} {'MCC':>6}"
          f"  touchdowns: n, missed, median / p95|.| latency [ms], within 20 ms")
    out = {}
    for m, pred in preds.items():
        table = ci.precision_recall(pred, truth)
        for i, limb in enumerate(list(LIMB_NAMES) + ["all"]):
            lat = touchdown_latency_s(pred[:, [i]] if i < 4 else pred, truth[:, [i]] if i < 4 else truth, rec.t)
            ls = latency_summary(lat)
            tail = (f"  {ls['n']:3d} {ls['missed']:3d}  {ls['median_ms']:5.0f} / {ls['p95_abs_ms']:4.0f}  "
                    f"{100 * ls['within_20ms']:4.0f} %")
            print(_table_row(m, limb, table[limb], tail))
        if m == "fusion":
            out = {"mcc": {limb: table[limb]["mcc"] for limb in list(LIMB_NAMES) + ["all"]},
                   "latency": latency_summary(touchdown_latency_s(pred, truth, rec.t))}
            snap = ci.precision_recall(pred, rec.truth)
            out["mcc_snapshot"] = {limb: snap[limb]["mcc"] for limb in list(LIMB_NAMES) + ["all"]}
            print("fusion MCC vs the instantaneous (snapshot) contact: "
                  + ", ".join(f"{limb} {snap[limb]['mcc']:.3f}" for limb in list(LIMB_NAMES) + ["all"]))
    if show_effort:
        print("effort load metric [N m] (for calibrating effort.on/off_threshold_nm):")
        for limb, st in effort_statistics(rec.eff, truth).items():
            print(f"  {limb}: stance p10 {st['stance_p10']:.1f}, median {st['stance_median']:.1f}; swing median "
                  f"{st['swing_median']:.1f}, p90 {st['swing_p90']:.1f} ({st['swing_samples']} swing samples)")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gait", nargs="+", default=list(GAITS), help="gait scripts to record (default: %(default)s)")
    ap.add_argument("--cycles", type=int, default=3)
    ap.add_argument("--speed", type=float, default=1.0)
    ap.add_argument("--rate-hz", type=float, default=100.0)
    ap.add_argument("--seed", type=int, default=0, help="simulator seed (initial joint noise with --init-noise-rad)")
    ap.add_argument("--init-noise-rad", type=float, default=0.0, help="seeded noise on the initial joint angles")
    ap.add_argument("--all-methods", action="store_true", help="also score height / velocity / effort")
    ap.add_argument("--load", help="score a saved log (npz from --save) instead of simulating")
    ap.add_argument("--save", help="save the recorded log (npz; one gait only)")
    ap.add_argument("--joint-noise-rad", type=float, default=0.0, help="white noise on the joints the fusion sees")
    ap.add_argument("--pose-noise-m", type=float, default=0.0, help="white noise on the pelvis position")
    ap.add_argument("--pose-noise-rad", type=float, default=0.0, help="white noise on the pelvis orientation")
    ap.add_argument("--effort-noise-nm", type=float, default=0.0, help="white noise on the joint efforts")
    ap.add_argument("--pose-source", choices=POSE_SOURCES, default="ground_truth",
                    help="the pelvis pose the controller, sequencer and fusion read: the simulator's, or the state "
                         "estimator's (IMU with noise + leg odometry, as the sim node hosts it)")
    args = ap.parse_args(argv)
    noise = Noise(args.joint_noise_rad, args.pose_noise_m, args.pose_noise_rad, args.effort_noise_nm, args.seed)
    noise = noise if (noise.joint_rad or noise.pose_pos_m or noise.pose_rot_rad or noise.effort_nm) else None
    results = {}
    if args.load:
        rec = load_recording(args.load)
        results[args.load] = report(rec, f"log {args.load}", noise, args.all_methods, args.all_methods)
    else:
        if args.save and len(args.gait) != 1:
            ap.error("--save needs exactly one --gait")
        for g in args.gait:
            rec = record_run(g, args.cycles, args.speed, args.rate_hz, seed=args.seed, noise_rad=args.init_noise_rad,
                             pose_source=args.pose_source)
            o = rec.outcome
            label = (f"{g}: {args.cycles} cycles at speed {args.speed}, seed {args.seed}: "
                     f"{o.status if o else 'timeout'} {o.reason if o else ''}, distance "
                     f"{o.distance_m if o else float('nan'):.3f} m")
            if args.save:
                save_recording(rec, args.save)
            if rec.pose_est is not None:
                ok = np.all(np.isfinite(rec.pose_est), axis=1)
                dz = rec.pose_est[ok, 2] - rec.pose[ok, 2]
                label += (f"; estimate − truth: z {1e3 * np.mean(dz):+.1f} ± {1e3 * np.std(dz):.1f} mm, "
                          f"horizontal end {1e2 * np.linalg.norm(rec.pose_est[-1, :2] - rec.pose[-1, :2]):.1f} cm")
            results[g] = report(rec, label, noise, args.all_methods, args.all_methods)
    print("\nsummary: fusion MCC per contact (LW RW LK RK | all) vs the sample-period ground truth; touchdown latency"
          + (f"; noise {noise}" if noise else ""))
    for g, r in results.items():
        m, lat = r["mcc"], r["latency"]
        print(f"  {g:<15} " + " ".join(f"{m[limb]:.3f}" for limb in LIMB_NAMES) + f" | {m['all']:.3f}   "
              f"touchdowns {lat['n']}, missed {lat['missed']}, median {lat['median_ms']:.0f} ms, "
              f"p95 |latency| {lat['p95_abs_ms']:.0f} ms, within 20 ms {100 * lat['within_20ms']:.0f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
