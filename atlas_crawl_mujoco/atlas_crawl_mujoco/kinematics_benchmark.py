"""Kinematics benchmark (issue 2 §5): our FK of all frames + 4 contact-point Jacobians + CoM Jacobian against
MuJoCo's C implementation doing the same (mj_kinematics + mj_comPos + 4 × mj_jac + mj_jacSubtreeCom), on the same
1000 random in-limit configurations.

Usage::

    python -m atlas_crawl_mujoco.kinematics_benchmark [--quick] [--configs N] [--repeats R] [--seed S]

Every configuration is timed ``R`` times (wall clock, ``time.perf_counter_ns``); the per-configuration minimum
filters out pre-emption by other processes on a shared machine, and the table reports the median over
configurations of those minima, plus the median of all single calls and the thread CPU time per call.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from atlas_crawl_kinematics.model import RobotModel
from atlas_description import CONTACT_FRAMES, model_urdf

from .mj_oracle import MjOracle


def _time(fn, Q: np.ndarray, repeats: int) -> dict[str, float]:
    for q in Q[:50]:  # warm-up
        fn(q)
    per_cfg_min = np.empty(len(Q))
    all_calls = np.empty((len(Q), repeats))
    cpu0 = time.thread_time_ns()
    for i, q in enumerate(Q):
        for r in range(repeats):
            t0 = time.perf_counter_ns()
            fn(q)
            all_calls[i, r] = time.perf_counter_ns() - t0
        per_cfg_min[i] = all_calls[i].min()
    cpu = (time.thread_time_ns() - cpu0) / (len(Q) * repeats)
    return {
        "median_min_us": float(np.median(per_cfg_min)) / 1e3,
        "median_us": float(np.median(all_calls)) / 1e3,
        "p99_us": float(np.percentile(all_calls, 99)) / 1e3,
        "cpu_us": cpu / 1e3,
    }


def run(n_configs: int = 1000, repeats: int = 5, seed: int = 0) -> dict[str, dict[str, float]]:
    urdf = model_urdf(sim="mujoco")
    model = RobotModel.from_urdf_string(urdf)
    oracle = MjOracle(model, urdf)
    Q = model.random_configurations(n_configs, seed)
    frames = CONTACT_FRAMES

    def ours(q):
        k = model.forward(q)
        k.point_jacobians(frames)
        k.com_jacobian()

    def ours_task(q):
        model.forward(q).task_jacobian(frames)

    mj, m, d = oracle.mj, oracle.m, oracle.d
    qadr = oracle.qadr
    bodies = [int(oracle.body[model.frame_index(f)]) for f in frames]
    root = int(oracle.body[0])
    jacp = np.zeros((3, m.nv))
    jacc = np.zeros((3, m.nv))

    def mujoco_c(q):
        d.qpos[qadr] = q
        mj.mj_kinematics(m, d)
        mj.mj_comPos(m, d)
        for b in bodies:
            mj.mj_jac(m, d, jacp, None, d.xpos[b], b)
        mj.mj_jacSubtreeCom(m, d, jacc, root)

    return {
        "ours: forward + 4 point_jacobians + com_jacobian": _time(ours, Q, repeats),
        "ours: forward + task_jacobian (same numbers, one pass)": _time(ours_task, Q, repeats),
        "MuJoCo C: mj_kinematics+mj_comPos+4 mj_jac+mj_jacSubtreeCom": _time(mujoco_c, Q, repeats),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="100 configurations, 3 repeats")
    ap.add_argument("--configs", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    n, r = (100, 3) if a.quick else (a.configs, a.repeats)
    res = run(n, r, a.seed)
    print(f"Kinematics benchmark: {n} random in-limit configurations x {r} repeats "
          f"({platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, "
          f"numpy {np.__version__})")
    print(f"{'implementation':64s} {'median(min/cfg)':>16s} {'median':>9s} {'p99':>9s} {'cpu/call':>9s}")
    for name, v in res.items():
        print(f"{name:64s} {v['median_min_us']:13.1f} us {v['median_us']:6.1f} us {v['p99_us']:6.1f} us"
              f" {v['cpu_us']:6.1f} us")
    keys = list(res)
    ratio = res[keys[0]]["median_min_us"] / res[keys[2]]["median_min_us"]
    ratio_task = res[keys[1]]["median_min_us"] / res[keys[2]]["median_min_us"]
    print(f"ratio ours/MuJoCo (median of per-config minima): {ratio:.1f}x (separate calls), "
          f"{ratio_task:.1f}x (task_jacobian)")
    target = res[keys[0]]["median_min_us"] <= 100.0
    print(f"target <= 100 us median for the full set: {'MET' if target else 'NOT MET'} "
          f"({res[keys[0]]['median_min_us']:.1f} us)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
