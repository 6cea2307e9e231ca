"""IIK benchmark (issue 4 §7): iteration time and time-to-convergence on random reachable targets for the four
contacts + the (horizontal) CoM, against mink (PyPI, MuJoCo-based differential IK with a QP) on the same targets
at equal final accuracy (max contact error and horizontal CoM error < 5 mm).

Usage::

    python lab/iik_benchmark.py [--quick] [--targets N] [--no-mink]

Targets: FK of configurations ``home + N(0, 0.25 rad)`` clipped to the limits (so they are reachable), pelvis frame
(fixed base).  Timings: wall clock per solve (``perf_counter``) and thread CPU time per solve (``thread_time``, not
inflated by other processes on a loaded machine); per-iteration figure = solve time / iterations.  Rows:

* ours, compiled kernel (:mod:`.iik_fast`, numba) with ``IIKParams.improved()`` and ``IIKParams.tuned()``;
* ours, numpy path (``backend="numpy"``, same numbers as the kernel) — where the interpreter time goes;
* mink (daqp QP) on the same targets to the same 5 mm.

``--profile`` prints a cProfile of the numpy path (100 targets).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from atlas_crawl_kinematics import iik_fast
from atlas_crawl_kinematics.iik import IIKParams, IIKSolver, four_point_stance
from atlas_crawl_kinematics.model import RobotModel
from atlas_description import CONTACT_FRAMES, model_urdf

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


def bench_ours(model: RobotModel, home, targets, params: IIKParams | None = None) -> dict:
    s = IIKSolver(model, params=params or IIKParams.improved(convergence_m=TOL_M, max_iterations=100))
    s.solve(home, targets[0][0], com_target=targets[0][1])  # warm-up (JIT compile / load the numba cache)
    t_solve, t_cpu, iters, errs, ok = [], [], [], [], 0
    for x, c in targets:
        c0 = time.thread_time()
        t0 = time.perf_counter()
        r = s.solve(home, x, com_target=c)
        dt = time.perf_counter() - t0
        t_cpu.append(time.thread_time() - c0)
        t_solve.append(dt)
        iters.append(r.iterations)
        errs.append(max(r.error_m, r.com_error_m))
        ok += r.converged
    return _summary(t_solve, t_cpu, iters, errs, ok, len(targets))


def bench_mink(model: RobotModel, urdf: str, home, targets) -> dict:
    import mink

    from atlas_crawl_mujoco.mj_oracle import MjOracle

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
    t_solve, t_cpu, iters, errs, ok = [], [], [], [], 0
    for x, c in targets:
        c0 = time.thread_time()
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
        t_cpu.append(time.thread_time() - c0)
        t_solve.append(dt)
        iters.append(max(it, 1))
        errs.append(err)
        ok += err < TOL_M
    return _summary(t_solve, t_cpu, iters, errs, ok, len(targets))


def _summary(t_solve, t_cpu, iters, errs, ok, n) -> dict:
    ts, tc, it = np.array(t_solve) * 1e6, np.array(t_cpu) * 1e6, np.array(iters, dtype=float)
    ti, tci = ts / it, tc / it
    return {"iter_median_us": float(np.median(ti)), "iter_p99_us": float(np.percentile(ti, 99)),
            "iter_cpu_median_us": float(np.median(tci)),
            "solve_median_us": float(np.median(ts)), "solve_p99_us": float(np.percentile(ts, 99)),
            "solve_cpu_median_us": float(np.median(tc)), "solve_cpu_p99_us": float(np.percentile(tc, 99)),
            "iters_median": float(np.median(it)), "iters_p99": float(np.percentile(it, 99)),
            "err_median_m": float(np.median(errs)), "err_max_m": float(np.max(errs)), "converged": ok, "n": n}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="IIK benchmark vs mink")
    ap.add_argument("--quick", action="store_true", help="100 targets")
    ap.add_argument("--targets", type=int, default=1000)
    ap.add_argument("--no-mink", action="store_true")
    ap.add_argument("--no-numpy", action="store_true", help="skip the (slow) numpy-path row")
    ap.add_argument("--profile", action="store_true", help="cProfile the numpy path on 100 targets and exit")
    a = ap.parse_args(argv)
    n = 100 if a.quick else a.targets
    urdf = model_urdf(sim="mujoco")
    model = RobotModel.from_urdf_string(urdf)
    home, targets = make_targets(model, n)
    if a.profile:
        import cProfile
        import pstats

        pr = cProfile.Profile()
        pr.enable()
        bench_ours(model, home, targets[:100], IIKParams.improved(max_iterations=100, backend="numpy"))
        pr.disable()
        pstats.Stats(pr).sort_stats("tottime").print_stats(20)
        return 0
    load0 = os.getloadavg()[0]
    rows = {}
    kern = "numba " + str(iik_fast.NUMBA_VERSION) if iik_fast.HAVE_NUMBA else "numba MISSING -> numpy"
    rows[f"ours improved() [{kern}]"] = bench_ours(model, home, targets,
                                                  IIKParams.improved(convergence_m=TOL_M, max_iterations=100))
    rows[f"ours tuned() [{kern}]"] = bench_ours(model, home, targets,
                                               IIKParams.tuned(convergence_m=TOL_M, max_iterations=100))
    if not a.no_numpy:
        rows["ours tuned() [numpy path]"] = bench_ours(
            model, home, targets, IIKParams.tuned(convergence_m=TOL_M, max_iterations=100, backend="numpy"))
    if not a.no_mink:
        try:
            import mink

            rows[f"mink {getattr(mink, '__version__', '')} (daqp QP, damping 1e-6)"] = bench_mink(model, urdf, home,
                                                                                               targets)
        except ImportError:
            print("(mink not installed: pip install mink)")
    load1 = os.getloadavg()[0]
    print(f"IIK benchmark: {n} random reachable targets (4 contacts + horizontal CoM), tolerance {TOL_M * 1e3:.0f} mm; "
          f"{platform.machine()}, {os.cpu_count()} CPUs, load avg {load0:.2f} -> {load1:.2f}, numpy {np.__version__}")
    print("wall = perf_counter (inflated by other processes), cpu = thread CPU time; per iteration = solve / iterations")
    hdr = (f"{'solver':42s} {'it wall':>8s} {'it cpu':>7s} {'solve med':>9s} {'solve p99':>9s} {'cpu med':>8s} "
           f"{'cpu p99':>8s} {'its':>6s} {'err med':>7s} {'err max':>7s} {'conv':>9s}")
    print(hdr)
    for name, r in rows.items():
        print(f"{name:42s} {r['iter_median_us']:6.1f}us {r['iter_cpu_median_us']:5.1f}us "
              f"{r['solve_median_us'] / 1e3:7.3f}ms {r['solve_p99_us'] / 1e3:7.3f}ms "
              f"{r['solve_cpu_median_us'] / 1e3:6.3f}ms {r['solve_cpu_p99_us'] / 1e3:6.3f}ms "
              f"{r['iters_median']:2.0f}/{r['iters_p99']:<3.0f} {r['err_median_m'] * 1e3:5.2f}mm {r['err_max_m'] * 1e3:5.2f}mm "
              f"{r['converged']:4d}/{r['n']}")
    names = list(rows)
    mk = [k for k in names if k.startswith("mink")]
    if mk:
        b_ = rows[mk[0]]
        for k in names:
            if k.startswith("ours"):
                r = rows[k]
                print(f"ratio {k} / mink: iteration {r['iter_cpu_median_us'] / b_['iter_cpu_median_us']:.3f}x (cpu), "
                      f"solve {r['solve_cpu_median_us'] / b_['solve_cpu_median_us']:.3f}x (cpu median), "
                      f"{r['solve_median_us'] / b_['solve_median_us']:.3f}x (wall median)")
    best = rows[names[1]]
    print(f"targets: iteration <= 50 us median: {'MET' if best['iter_median_us'] <= 50 else 'NOT MET'} "
          f"({best['iter_median_us']:.1f} us wall, {best['iter_cpu_median_us']:.1f} us cpu); convergence to 5 mm <= 2 ms "
          f"p99: wall {'MET' if best['solve_p99_us'] <= 2000 else 'NOT MET'} ({best['solve_p99_us'] / 1e3:.2f} ms), "
          f"cpu {'MET' if best['solve_cpu_p99_us'] <= 2000 else 'NOT MET'} ({best['solve_cpu_p99_us'] / 1e3:.2f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
