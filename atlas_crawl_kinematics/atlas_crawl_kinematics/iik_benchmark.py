"""IIK benchmark (issue 4 §7): iteration time and time-to-convergence on random reachable targets for the four
contacts + the (horizontal) CoM, against mink (PyPI, MuJoCo-based differential IK with a QP) on the same targets
at equal final accuracy (max contact error and horizontal CoM error < 5 mm).

Usage::

    python -m atlas_crawl_kinematics.iik_benchmark [--quick] [--targets N] [--no-mink]

Targets: FK of configurations ``home + N(0, 0.25 rad)`` clipped to the limits (so they are reachable), pelvis frame
(fixed base).  Timings are wall clock per solve (``perf_counter``) divided by iterations for the per-iteration figure.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from .iik import IIKParams, IIKSolver, four_point_stance
from .model import RobotModel
from .robot_source import CONTACT_FRAMES, atlas_urdf_string

TOL_M = 0.005


def make_targets(model: RobotModel, n: int, seed: int = 0, sigma: float = 0.25):
    rng = np.random.default_rng(seed)
    home = four_point_stance(model)
    out = []
    for _ in range(n):
        q = model.clip_to_limits(home + rng.normal(0.0, sigma, model.n_joints))
        k = model.forward(q)
        out.append((k.positions(CONTACT_FRAMES).copy(), k.com()))
    return home, out


def bench_ours(model: RobotModel, home, targets) -> dict:
    # no_progress_m 1e-4: the thesis guard (1 mm/iteration) stops short of a 5 mm goal with a CoM task
    s = IIKSolver(model, params=IIKParams.improved(convergence_m=TOL_M, max_iterations=100, no_progress_m=1e-4))
    t_solve, t_iter, errs, ok = [], [], [], 0
    for x, c in targets:
        t0 = time.perf_counter()
        r = s.solve(home, x, com_target=c)
        dt = time.perf_counter() - t0
        t_solve.append(dt)
        t_iter.append(dt / max(r.iterations, 1))
        errs.append(max(r.error_m, r.com_error_m))
        ok += r.converged
    return _summary(t_solve, t_iter, errs, ok, len(targets))


def bench_mink(model: RobotModel, urdf: str, home, targets) -> dict:
    import mink

    from .mj_oracle import MjOracle

    orc = MjOracle(model, urdf)
    mjm = orc.m
    cfg = mink.Configuration(mjm)
    frame_tasks = [mink.FrameTask(f, "body", position_cost=1.0, orientation_cost=0.0) for f in CONTACT_FRAMES]
    com_task = mink.ComTask(cost=np.array([1.0, 1.0, 0.0]))
    posture = mink.PostureTask(mjm, cost=1e-3)
    limits = [mink.ConfigurationLimit(mjm)]
    q_home = np.zeros(mjm.nq)
    q_home[orc.qadr] = home
    bodies = [orc.body[model.frame_index(f)] for f in CONTACT_FRAMES]
    t_solve, t_iter, errs, ok = [], [], [], 0
    for x, c in targets:
        t0 = time.perf_counter()
        cfg.update(q_home.copy())
        posture.set_target(q_home)
        for f, tgt in zip(frame_tasks, x):
            f.set_target(mink.SE3.from_translation(tgt))
        com_task.set_target(c)
        tasks = frame_tasks + [com_task, posture]
        it = 0
        err = np.inf
        for it in range(1, 101):
            d = cfg.data
            err = max(np.linalg.norm(d.xpos[bodies] - x, axis=1).max(), np.linalg.norm(d.subtree_com[orc.body[0]][:2] - c[:2]))
            if err < TOL_M:
                break
            v = mink.solve_ik(cfg, tasks, 1.0, "daqp", damping=1e-6, limits=limits)
            cfg.integrate_inplace(v, 1.0)
        dt = time.perf_counter() - t0
        t_solve.append(dt)
        t_iter.append(dt / max(it, 1))
        errs.append(err)
        ok += err < TOL_M
    return _summary(t_solve, t_iter, errs, ok, len(targets))


def _summary(t_solve, t_iter, errs, ok, n) -> dict:
    ts, ti = np.array(t_solve) * 1e6, np.array(t_iter) * 1e6
    return {"iter_median_us": float(np.median(ti)), "iter_p99_us": float(np.percentile(ti, 99)),
            "solve_median_us": float(np.median(ts)), "solve_p99_us": float(np.percentile(ts, 99)),
            "err_median_m": float(np.median(errs)), "err_max_m": float(np.max(errs)), "converged": ok, "n": n}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="IIK benchmark vs mink")
    ap.add_argument("--quick", action="store_true", help="100 targets")
    ap.add_argument("--targets", type=int, default=1000)
    ap.add_argument("--no-mink", action="store_true")
    a = ap.parse_args(argv)
    n = 100 if a.quick else a.targets
    urdf = atlas_urdf_string(sim="mujoco")
    model = RobotModel.from_urdf_string(urdf)
    home, targets = make_targets(model, n)
    rows = {"ours (IIKSolver, improved params, pelvis frame)": bench_ours(model, home, targets)}
    if not a.no_mink:
        try:
            import mink

            rows[f"mink {getattr(mink, '__version__', '')} (daqp QP, damping 1e-6)"] = bench_mink(model, urdf, home,
                                                                                               targets)
        except ImportError:
            print("(mink not installed: pip install mink)")
    print(f"IIK benchmark: {n} random reachable targets (4 contacts + horizontal CoM), tolerance {TOL_M * 1e3:.0f} mm, "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"{'solver':55s} {'iter med':>9s} {'iter p99':>9s} {'solve med':>10s} {'solve p99':>10s} "
          f"{'err med':>8s} {'err max':>8s} {'conv':>9s}")
    for name, r in rows.items():
        print(f"{name:55s} {r['iter_median_us']:7.0f}us {r['iter_p99_us']:7.0f}us {r['solve_median_us'] / 1e3:8.2f}ms "
              f"{r['solve_p99_us'] / 1e3:8.2f}ms {r['err_median_m'] * 1e3:6.2f}mm {r['err_max_m'] * 1e3:6.2f}mm "
              f"{r['converged']:4d}/{r['n']}")
    if len(rows) == 2:
        a_, b_ = rows.values()
        print(f"ratio ours/mink: iteration {a_['iter_median_us'] / b_['iter_median_us']:.2f}x, "
              f"solve {a_['solve_median_us'] / b_['solve_median_us']:.2f}x (medians)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
