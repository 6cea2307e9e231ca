"""Replay a record of the ros2_control plugin's hosted estimator (``estimator_record_path``) offline, through the same
class (:class:`HostedEstimator`), with other estimator parameters or inputs (issue 14 §1: why the estimate drifts in
Gazebo).

    ros2 launch atlas_crawl_bringup gazebo.launch.py headless:=true pose_source:=estimate \\
        estimator_record_path:=/tmp/est.npz           # then a goal, e.g. graph_trial crawl "{cycles: 3}"
    python lab/replay_estimator_record.py /tmp/est.npz [--set leg.accel_noise_m_per_s2_sqrt_hz=2.0 ...]
        [--stance recorded|all] [--imu recorded|fresh] [--imu-check]

Prints, for the live estimate (as recorded) and for the replay: the position error at the end in % of the
Gaussian-smoothed ground-truth path (``pose_in``: the pose the plugin received, 100 Hz) and the yaw error per metre.
With no ``--set`` and the recorded inputs the replay must reproduce the live estimate (checked: the largest
difference is printed). ``--stance all``: every limb fed as in stance; ``--imu fresh``: an IMU sample equal to the
previous update's is treated as missing (NaN: the estimator skips it) instead of integrated again. ``--imu-check``: the
IMU's velocity change over 0.4 s windows of motion against the ground truth's (median and p90 error).
"""
from __future__ import annotations

import argparse
import math

import numpy as np

from atlas_crawl_controller.estimation.hosted import HostedEstimator
from atlas_crawl_controller.estimation.recorder import load_record
from atlas_crawl_controller.estimation.state_estimator import default_params
from atlas_crawl_eval import metrics
from atlas_crawl_eval.estimator_eval import _parse_sets
from atlas_crawl_kinematics.rotations import quat_xyzw_to_R
from atlas_crawl_kinematics.support import crawl_heading_rad

GRAVITY = default_params()["attitude.gravity_m_per_s2"]     # the estimator's gravity


def errors(est: np.ndarray, gt: np.ndarray) -> dict:
    ok = np.all(np.isfinite(est), axis=1) & np.all(np.isfinite(gt), axis=1)
    e, g = est[ok], gt[ok]
    path = float(np.sum(np.linalg.norm(np.diff(metrics.smooth(g[:, :2]), axis=0), axis=1)))
    err = np.linalg.norm(e[:, :2] - g[:, :2], axis=1)
    dh = crawl_heading_rad(quat_xyzw_to_R(e[-1, 3:])) - crawl_heading_rad(quat_xyzw_to_R(g[-1, 3:]))
    dh = math.degrees((dh + math.pi) % (2 * math.pi) - math.pi)
    return dict(path_m=path, end_m=float(err[-1]), end_pct=100.0 * float(err[-1]) / max(path, 1e-9),
                max_m=float(err.max()), yaw_deg=dh, yaw_deg_per_m=abs(dh) / max(path, 1e-9), rows=int(ok.sum()))


def imu_consistency(r: dict, window_s: float = 0.4, half_s: float = 0.05, moving_m_per_s: float = 0.02):
    """The recorded accelerometer against the received ground truth: over consecutive windows of ``window_s``, the
    velocity change the IMU integrates to (R a_m - g e3 summed over the updates, R from the ground truth) against the
    ground truth's (velocities from pose differences over ±``half_s``). Returns (windows where the pelvis moved,
    their |error| in m/s) (issue 14: how far the simulator's IMU is from the motion it measures)."""
    t, g = r["t"], r["pose_in"]
    ok = np.all(np.isfinite(g), axis=1)
    aw = np.zeros((len(t), 3))
    for i in np.flatnonzero(ok):
        aw[i] = quat_xyzw_to_R(g[i, 3:]) @ r["imu"][i, 3:] - np.array([0.0, 0.0, GRAVITY])
    dv_imu = np.cumsum(aw * np.r_[0.0, np.diff(t)][:, None], axis=0)

    def vel(x):
        i0, i1 = np.searchsorted(t, x - half_s), min(np.searchsorted(t, x + half_s), len(t) - 1)
        return (g[i1, :3] - g[i0, :3]) / max(t[i1] - t[i0], 1e-9)
    dv_gt, err = [], []
    edges = np.arange(t[0] + 1.0, t[-1] - 1.0, window_s)
    for a, b in zip(edges[:-1], edges[1:]):
        ia, ib = np.searchsorted(t, a), np.searchsorted(t, b)
        if not (ok[ia] and ok[ib]):
            continue
        d = vel(b) - vel(a)
        dv_gt.append(float(np.linalg.norm(d)))
        err.append(float(np.linalg.norm(dv_imu[ib] - dv_imu[ia] - d)))
    dv_gt, err = np.array(dv_gt), np.array(err)
    moving = dv_gt > moving_m_per_s
    return int(moving.sum()), err[moving]


def replay(r: dict, sets: dict, stance: str = "recorded", imu: str = "recorded") -> np.ndarray:
    h = HostedEstimator(sets or None)
    h.reset(r["pose_in"][0], float(r["t"][0]))
    out = np.full((len(r["t"]), 7), np.nan)
    out[0] = h.pose7(float(r["t"][0]))
    prev = None
    for i in range(1, len(r["t"])):
        t = float(r["t"][i])
        st = r["stance"][i] > 0.5 if stance == "recorded" else np.ones(4, bool)
        s = r["imu"][i].copy()
        if imu == "fresh" and prev is not None and np.array_equal(s, prev):
            s_in = np.full(6, np.nan)
        else:
            s_in = s
        prev = s
        h.step(t, r["q"][i], r["qd"][i], st, s_in[:3], s_in[3:])
        out[i] = h.pose7(t)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("record")
    ap.add_argument("--set", nargs="*", default=[], help="state estimator parameters, name=value")
    ap.add_argument("--stance", choices=("recorded", "all"), default="recorded")
    ap.add_argument("--imu", choices=("recorded", "fresh"), default="recorded")
    ap.add_argument("--imu-check", action="store_true",
                    help="also print the IMU's velocity change over 0.4 s windows against the ground truth's")
    a = ap.parse_args(argv)
    r = load_record(a.record)
    dt = np.diff(r["t"])
    same = np.all(np.diff(r["imu"], axis=0) == 0, axis=1)
    print(f"{len(r['t'])} updates over {r['t'][-1] - r['t'][0]:.1f} s (dt median {np.median(dt) * 1e3:.2f} ms, max "
          f"{dt.max() * 1e3:.1f} ms); IMU sample unchanged from the previous update in {100 * same.mean():.1f} % of "
          f"updates; expected stance all four in {100 * np.mean(np.all(r['stance'] > 0.5, axis=1)):.1f} %"
          f"{'; TRUNCATED' if bool(r['truncated']) else ''}")
    if a.imu_check:
        n, e = imu_consistency(r)
        print(f"IMU velocity change over 0.4 s windows with motion ({n}): error vs ground truth median "
              f"{np.median(e) if n else math.nan:.3f} m/s, p90 {np.percentile(e, 90) if n else math.nan:.3f} m/s")
    live = errors(r["estimate"], r["pose_in"])
    print(f"live estimate:  end {live['end_pct']:.2f} % of a {live['path_m']:.2f} m path (max {live['max_m']:.3f} m), "
          f"yaw {live['yaw_deg']:+.2f} deg ({live['yaw_deg_per_m']:.2f} deg/m)")
    recorded = _parse_sets(r["meta"].get("estimator_overrides", []))
    sets = {**recorded, **_parse_sets(a.set)}
    est = replay(r, sets, a.stance, a.imu)
    rep = errors(est, r["pose_in"])
    print(f"replay ({sets or 'defaults'}; recorded overrides {recorded or 'none'}), stance {a.stance}, "
          f"IMU {a.imu}): end {rep['end_pct']:.2f} % (max "
          f"{rep['max_m']:.3f} m), yaw {rep['yaw_deg']:+.2f} deg ({rep['yaw_deg_per_m']:.2f} deg/m)")
    if sets == recorded and a.stance == "recorded" and a.imu == "recorded":
        ok = np.all(np.isfinite(est), axis=1) & np.all(np.isfinite(r["estimate"]), axis=1)
        d = float(np.max(np.abs(est[ok, :3] - r["estimate"][ok, :3]))) if ok.any() else math.nan
        print(f"replay vs live: largest position difference {d:.2e} m over {int(ok.sum())} rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
