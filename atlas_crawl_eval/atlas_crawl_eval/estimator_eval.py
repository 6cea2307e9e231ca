"""State-estimator benchmark (issue 14 §1): the estimate vs the simulator's ground truth, fresh simulator per run.

    python -m atlas_crawl_eval.estimator_eval [--behaviours crawl_forward crawl_backward turn_left] [--cycles 10]
        [--turn-cycles 12] [--imu-rate 250] [--joint-rate 250] [--contacts planned|ground_truth|all]
        [--seed 0] [--set leg.touchdown_settle_s=0.2 ...] [--noise imu.gyro_bias_initial_rad_per_s=0.01 ...]
        [--loop-mode full|part] [--json out.json]

Each run plays the key-frame gait (the same protocol as atlas_crawl_eval.run_trials: start pose with seeded joint
noise, 3 s rest, N cycles, 2.5 s rest) in a fresh AtlasSim. The simulated IMU (atlas_crawl_mujoco.sensors,
defaults of mujoco_sim_node_parameters.yaml) and the joint states feed
:class:`atlas_crawl_controller.estimation.StateEstimator` offline at ``--imu-rate`` / ``--joint-rate`` (sim time),
with the gait's planned stance as the contact states (what the controller knows: the gait phase). The estimator is
initialised 0.5 s into the first rest with the pelvis position and heading at that instant (the "initial pose") and
aligns for ``alignment_s``. The gait is open loop here (key-frames do not read the pose), so the two logs share the
same motion and differ only in what is measured.

Reported per run:

* position drift = |p_est − p_gt| (horizontal) at the end, in % of the distance travelled (path length of the
  Gaussian-smoothed ground-truth pelvis, σ = 50 samples at 100 Hz, thesis §4.1.3); also the maximum over the run;
* heading drift = |heading_est − heading_gt| at the end (the project's crawl heading, pelvis z projection), in °/m
  of the same distance, and in ° (the turn travels ~0 m: its °/m is not meaningful, ° per circle is given);
* the locomotion table (atlas_crawl_eval.metrics.trial_metrics) computed from the ground-truth log and from the
  same log with the pose, CoM and contact points re-expressed through the estimated pelvis pose, and their
  relative difference (target: within 10 %).

Targets (issue 14): drift ≤ 2 % of the distance, heading ≤ 1 °/m, locomotion metrics within 10 %.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass

import numpy as np

from atlas_crawl_controller.estimation import StateEstimator, default_params
from atlas_crawl_kinematics.rotations import quat_wxyz_to_R, R_to_quat_wxyz
from atlas_crawl_kinematics.support import crawl_heading_rad

from . import metrics
from .trial_log import TrialLog

TARGET_DRIFT_PCT = 2.0
TARGET_YAW_DEG_PER_M = 1.0
TARGET_METRIC_REL = 0.10
CRAWL_KEYS = ("velocity_m_s", "distance_per_gait_m", "progress_per_gait_m", "drift_per_gait_m", "turn_per_gait_deg")
TURN_KEYS = ("turn_per_cycle_deg", "time_per_circle_s", "radius_m", "drift_per_circle_m", "cycles_per_circle")


@dataclass
class EstimatorRun:
    behaviour: str
    gt: TrialLog
    est: TrialLog
    est_valid: np.ndarray          # (N,) the estimator had an estimate at the sample
    wall_s: float
    reasons: list


def _parse_sets(items) -> dict:
    out = {}
    for s in items or []:
        k, _, v = s.partition("=")
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def run(behaviour: str, cycles: int, seed: int = 0, imu_rate_hz: float = 250.0, joint_rate_hz: float = 250.0,
        contacts: str = "planned", est_overrides: dict | None = None, noise_overrides: dict | None = None,
        init_noise_rad: float = 0.01, settle_before_s: float = 3.0, settle_after_s: float = 2.5,
        init_at_s: float = 0.5, estimator: StateEstimator | None = None, scene: str | None = None,
        map_rate_hz: float = 2.0, loop_mode: str = "full") -> EstimatorRun:
    """One key-frame run with the estimator fed offline (see the module doc); ``loop_mode`` full or part (the
    gait's loops, as ``run_trials``)."""
    from atlas_crawl_controller import keyframes
    from atlas_crawl_controller.player import KeyframePlayer
    from atlas_crawl_mujoco.logger import Logger
    from atlas_crawl_mujoco.sensors import SensorNoise
    from atlas_crawl_mujoco.sim import AtlasSim
    from .run_trials import resolve_script

    name, reverse = resolve_script(behaviour)
    script = keyframes.load_script(name)
    sim = AtlasSim(params={"scene": scene} if scene else None, seed=seed)
    noise = SensorNoise(noise_overrides, seed=seed)
    n_map = max(1, int(round(1.0 / (map_rate_hz * sim.dt))))
    est = estimator or StateEstimator(default_params(est_overrides))
    pose = getattr(script, "start_pose", None)
    if pose:
        q0, quat0 = keyframes.named_pose(pose)
    else:
        q0 = script.keyframes[0].q
        quat0 = getattr(script, "start_quat_wxyz", None) or (1.0, 0.0, 0.0, 0.0)
    sim.reset(q0, base_quat_wxyz=tuple(float(v) for v in quat0), noise_rad=init_noise_rad)
    sim.set_joint_targets(q0)
    log = Logger(sim.params.get("log_rate_hz", 100.0))
    log.next_t = sim.time
    dt = sim.dt
    n_imu = max(1, int(round(1.0 / (imu_rate_hz * dt))))
    n_js = max(1, int(round(1.0 / (joint_rate_hz * dt))))
    est_rows, valid = [], []
    reasons: list = []
    k = 0
    initialised = False

    def feed(stance):
        nonlocal initialised
        t = sim.time
        if not initialised and t >= init_at_s - 1e-9:
            p, qw = sim.pelvis_pose()
            est.reset(np.array([p[0], p[1], p[2], qw[1], qw[2], qw[3], qw[0]]), t)
            noise.reset(seed)
            initialised = True
        if not initialised:
            return
        st = {"planned": stance, "ground_truth": sim.limb_contacts()[0], "all": np.ones(4, bool)}[contacts] \
            if k % n_js == 0 else None
        for why in feed_estimator(sim, est, noise, k, st, n_js, n_map, n_imu):
            if why not in reasons:
                reasons.append(why)

    def sample(stance, cyc, kf):
        before = len(log.rows["time_s"])
        log.maybe_sample(sim, stance, cyc, kf)
        if len(log.rows["time_s"]) > before:
            e = est.estimate()
            valid.append(e is not None)
            est_rows.append(None if e is None else (e.position.copy(), e.R.copy()))

    t_wall = time.perf_counter()
    rest = np.ones(4, bool)
    sim.fall_check = "none"
    for _ in range(int(round(settle_before_s / dt))):
        sim.step(1)
        feed(rest)
        sample(rest, -1, -1)
        k += 1
    sim.fall_check = getattr(script, "fall_check", "crawl")
    if loop_mode not in ("full", "part"):
        raise ValueError(f"loop_mode must be full or part, got {loop_mode!r}")
    pl = KeyframePlayer(script, loop_mode=loop_mode, cycles=cycles, reverse=reverse)
    pl.start(sim.joint_q(), sim.joint_effort(), sim.kp)
    after = int(round(settle_after_s / dt))
    fell, fall_t = False, math.nan
    while after > 0:
        if not pl.done:
            q, _ = pl.update(dt)
            sim.set_joint_targets(q)
        sim.step(1)
        stance = pl.planned_stance() if not pl.done else rest
        feed(stance)
        if pl.done:
            after -= 1
            sample(stance, -1, -1)
        else:
            sample(stance, pl.cycle, pl.keyframe_index)
        k += 1
        if k % 10 == 0 and not fell:
            f, _why = sim.fallen()
            if f:
                fell, fall_t = True, sim.time
                break
    wall = time.perf_counter() - t_wall
    meta = dict(gait=name + ("_reversed" if reverse else ""), loop_mode=loop_mode, cycles=cycles, seed=seed,
                fell=fell, fall_time_s=fall_t)
    arrays = log.arrays(meta)
    sim.close()
    gt = TrialLog(**{k_: v for k_, v in _trial_arrays(arrays).items()})
    est_arrays = _estimated_arrays(arrays, est_rows)
    est_log = TrialLog(**_trial_arrays(est_arrays))
    return EstimatorRun(behaviour, gt, est_log, np.array(valid, bool), wall, reasons)


def feed_estimator(sim, est, noise, k: int, stance, n_js: int, n_map: int, n_imu: int) -> list:
    """Physics step ``k``: feed ``est`` from ``sim`` as the sim node does — noisy joints with ``stance`` every
    ``n_js`` steps, the ground-truth height map (standing in for a lidar map) every ``n_map``, a noisy IMU sample
    (:class:`atlas_crawl_mujoco.sensors.SensorNoise` ``noise``) every ``n_imu``. Returns the reasons of refused
    updates."""
    from atlas_crawl_controller.height_map import HeightMap
    from atlas_crawl_mujoco.height_map import sample_height_map
    t, out = sim.time, []
    if k % n_js == 0 and not est.update_joints(t, *noise.joints(sim.joint_q(), sim.joint_qd()), stance) \
            and est.reason:
        out.append(est.reason)
    if k % n_map == 0:
        h, origin = sample_height_map(sim, sim.pelvis_pose()[0][:2], 2.0, 0.05)
        est.set_ground_map(HeightMap.from_fields(t, 0.05, h.shape[1], h.shape[0], origin[0], origin[1], h.ravel()))
    if k % n_imu == 0 and not est.update_imu(t, *noise.imu_from(sim, t, n_imu * sim.dt)) and est.reason:
        out.append(est.reason)
    return out


def aligned_estimator(sim, stance, seed: int = 0, est_overrides: dict | None = None,
                      noise_overrides: dict | None = None):
    """The sim node's state estimator on ``sim``: a :class:`StateEstimator` initialised at the simulator's pelvis
    pose, fed by :func:`feed_estimator` (noisy IMU seeded with ``seed``) for at least 2.5 s of rest until it has
    aligned (at most 8 s; RuntimeError otherwise). ``stance``: callable → the expected stance (4,) (e.g. the
    controller core's). Returns ``(est, feed)``; call ``feed(k)`` after physics step ``k`` from then on."""
    from atlas_crawl_mujoco.sensors import SensorNoise
    p, q = sim.pelvis_pose()
    est = StateEstimator(default_params(est_overrides or {}))
    noise = SensorNoise(noise_overrides, seed=seed)
    est.reset(np.array([p[0], p[1], p[2], q[1], q[2], q[3], q[0]]), sim.time)
    n_js = max(1, int(round(1.0 / (est.params["joint_rate_hz"] * sim.dt))))
    n_map, n_imu = int(round(0.5 / sim.dt)), max(1, int(round(1.0 / (noise.params["imu.rate_hz"] * sim.dt))))

    def feed(k):
        feed_estimator(sim, est, noise, k, stance(), n_js, n_map, n_imu)

    k = 0
    while not (est.running and k >= 2500) and k < 8000:     # ≥ 2.5 s; the robot must settle to align
        sim.step(1)
        feed(k)
        k += 1
    if not est.running:
        raise RuntimeError(f"state estimator did not align in 8 s: {est.reason}")
    return est, feed


def _trial_arrays(arrays: dict) -> dict:
    from .trial_log import ARRAY_KEYS, META_KEYS
    out = {k: arrays[k] for k in ARRAY_KEYS}
    for k, typ in META_KEYS.items():
        out[k] = typ(arrays[k].item())
    return out


def _estimated_arrays(arrays: dict, est_rows: list) -> dict:
    """The log with the pelvis pose replaced by the estimate; CoM and contact points moved rigidly with it (their
    pelvis-frame coordinates are kinematics, known to the robot). Samples without an estimate keep ground truth."""
    out = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in arrays.items()}
    for i, row in enumerate(est_rows):
        if row is None:
            continue
        p_e, R_e = row
        p_g = arrays["pelvis_pos_m"][i]
        R_g = quat_wxyz_to_R(arrays["pelvis_quat_wxyz"][i])
        M = R_e @ R_g.T
        out["pelvis_pos_m"][i] = p_e
        out["pelvis_quat_wxyz"][i] = R_to_quat_wxyz(R_e)
        out["com_pos_m"][i] = p_e + M @ (arrays["com_pos_m"][i] - p_g)
        out["contact_pos_m"][i] = p_e + (arrays["contact_pos_m"][i] - p_g) @ M.T
        gp = arrays["ground_points_m"][i]
        out["ground_points_m"][i] = p_e + (gp - p_g) @ M.T
    return out


def drift_figures(r: EstimatorRun) -> dict:
    """Position / heading drift of the estimate (see the module doc)."""
    gt, es = r.gt, r.est
    ok = r.est_valid
    if not ok.any():
        raise RuntimeError("the estimator never produced an estimate")
    i0 = int(np.flatnonzero(ok)[0])
    xy = metrics.smooth(gt.pelvis_pos_m[i0:, :2])
    path = float(np.sum(np.linalg.norm(np.diff(xy, axis=0), axis=1)))
    err = np.linalg.norm(es.pelvis_pos_m[i0:, :2] - gt.pelvis_pos_m[i0:, :2], axis=1)
    err3 = np.linalg.norm(es.pelvis_pos_m[i0:] - gt.pelvis_pos_m[i0:], axis=1)

    def heading(q):
        return crawl_heading_rad(quat_wxyz_to_R(q))
    dh = np.array([(heading(a) - heading(b) + math.pi) % (2 * math.pi) - math.pi
                   for a, b in zip(es.pelvis_quat_wxyz[i0:], gt.pelvis_quat_wxyz[i0:])])
    tilt = []
    for a, b in zip(es.pelvis_quat_wxyz[i0:], gt.pelvis_quat_wxyz[i0:]):
        ua, ub = quat_wxyz_to_R(a).T @ [0, 0, 1], quat_wxyz_to_R(b).T @ [0, 0, 1]
        tilt.append(math.degrees(math.acos(float(np.clip(ua @ ub, -1, 1)))))
    turned = float(np.degrees(abs(np.unwrap([heading(q) for q in gt.pelvis_quat_wxyz[i0:]])[-1] -
                                  heading(gt.pelvis_quat_wxyz[i0]))))
    return dict(path_m=path, final_error_m=float(err[-1]), max_error_m=float(err.max()),
                final_error_3d_m=float(err3[-1]), z_error_final_m=float(es.pelvis_pos_m[-1, 2] - gt.pelvis_pos_m[-1, 2]),
                drift_pct=100.0 * float(err[-1]) / path if path > 0 else float("inf"),
                max_drift_pct=100.0 * float(err.max()) / path if path > 0 else float("inf"),
                yaw_error_final_deg=float(np.degrees(dh[-1])), yaw_error_max_deg=float(np.degrees(np.abs(dh).max())),
                yaw_deg_per_m=float(np.degrees(abs(dh[-1]))) / path if path > 0 else float("inf"),
                tilt_error_max_deg=float(max(tilt)), turned_deg=turned,
                yaw_deg_per_circle=float(np.degrees(abs(dh[-1]))) / (turned / 360.0) if turned > 1 else float("nan"))


def metric_comparison(r: EstimatorRun) -> dict:
    """{metric: (ground truth, estimate, relative difference)} for the behaviour's locomotion table."""
    keys = TURN_KEYS if r.behaviour in metrics.TURN_BEHAVIOURS else CRAWL_KEYS
    mg = metrics.trial_metrics(r.gt, r.behaviour)
    me = metrics.trial_metrics(r.est, r.behaviour)
    out = {}
    for k in keys:
        a, b = float(mg[k]), float(me[k])
        rel = abs(b - a) / abs(a) if abs(a) > 1e-12 else (0.0 if abs(b) < 1e-12 else float("inf"))
        out[k] = (a, b, rel)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--behaviours", nargs="+", default=["crawl_forward", "crawl_backward", "turn_left"])
    ap.add_argument("--cycles", type=int, default=10, help="crawl cycles")
    ap.add_argument("--turn-cycles", type=int, default=12, help="turn cycles (one circle needs ~11 at 33°/cycle)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--imu-rate", type=float, default=250.0)
    ap.add_argument("--joint-rate", type=float, default=250.0)
    ap.add_argument("--contacts", choices=["planned", "ground_truth", "all"], default="planned")
    ap.add_argument("--set", nargs="*", default=[], help="estimator parameter overrides name=value")
    ap.add_argument("--noise", nargs="*", default=[], help="sensor noise overrides (imu.*, joint_noise.*)")
    ap.add_argument("--scene", default=None, help="terrain scene (atlas_crawl_mujoco/config/scenes, or a file)")
    ap.add_argument("--loop-mode", choices=["full", "part"], default="full", help="the gait's loop (default full)")
    ap.add_argument("--json", default=None, help="write the figures as JSON")
    a = ap.parse_args(argv)
    est_over, noise_over = _parse_sets(a.set), _parse_sets(a.noise)
    results, ok_all = [], True
    for beh in a.behaviours:
        cyc = a.turn_cycles if beh in metrics.TURN_BEHAVIOURS else a.cycles
        r = run(beh, cyc, seed=a.seed, imu_rate_hz=a.imu_rate, joint_rate_hz=a.joint_rate, contacts=a.contacts,
                est_overrides=est_over, noise_overrides=noise_over, scene=a.scene, loop_mode=a.loop_mode)
        d = drift_figures(r)
        cmp_ = metric_comparison(r)
        fell = bool(r.gt.meta_fell)
        is_turn = beh in metrics.TURN_BEHAVIOURS
        ok_d = d["drift_pct"] <= TARGET_DRIFT_PCT or is_turn
        ok_y = (d["yaw_deg_per_m"] <= TARGET_YAW_DEG_PER_M) if not is_turn else True
        ok_m = all(v[2] <= TARGET_METRIC_REL for v in cmp_.values())
        ok_all &= ok_d and ok_y and ok_m and not fell
        print(f"\n== {beh}: {cyc} cycles, seed {a.seed}, IMU {a.imu_rate:g} Hz, joints {a.joint_rate:g} Hz, "
              f"contacts {a.contacts}; wall {r.wall_s:.1f} s{'; FELL' if fell else ''}")
        print(f"  path {d['path_m']:.3f} m, turned {d['turned_deg']:.1f} deg")
        print(f"  position drift: final {d['final_error_m'] * 100:.2f} cm = {d['drift_pct']:.2f} % of the path "
              f"(max {d['max_error_m'] * 100:.2f} cm = {d['max_drift_pct']:.2f} %; z {d['z_error_final_m'] * 100:+.2f} cm)"
              f"  target <= {TARGET_DRIFT_PCT} %{'' if is_turn else (' OK' if ok_d else ' MISSED')}")
        print(f"  heading drift: final {d['yaw_error_final_deg']:+.3f} deg (max {d['yaw_error_max_deg']:.3f}), "
              f"{d['yaw_deg_per_m']:.3f} deg/m" + (f", {d['yaw_deg_per_circle']:.3f} deg/circle" if is_turn else "")
              + f"  target <= {TARGET_YAW_DEG_PER_M} deg/m{'' if is_turn else (' OK' if ok_y else ' MISSED')}; "
              f"tilt error max {d['tilt_error_max_deg']:.3f} deg")
        print(f"  {'metric':<22}{'ground truth':>14}{'estimate':>14}{'rel diff':>10}")
        for k_, (g, e, rel) in cmp_.items():
            print(f"  {k_:<22}{g:>14.4f}{e:>14.4f}{rel * 100:>9.1f}%{'' if rel <= TARGET_METRIC_REL else '  >10%'}")
        if r.reasons:
            print("  holds:", "; ".join(r.reasons[:3]))
        results.append(dict(behaviour=beh, cycles=cyc, fell=fell, wall_s=r.wall_s, **d,
                            metrics={k_: dict(ground_truth=v[0], estimate=v[1], rel=v[2]) for k_, v in cmp_.items()}))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(dict(args=vars(a), results=results), f, indent=1)
    print("\nall targets met" if ok_all else "\nsome targets MISSED (see above)")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
