"""Real-time cost of the controller core in Cartesian mode (issue 10 §1), beside the key-frame update cost, on a
crawl in MuJoCo physics hosted the way the sim node hosts the core (update at ``update_rate_hz``, physics between).

Usage::

    python lab/cartesian_core_benchmark.py [--cycles 1] [--com-modulation] [--backward] [--keyframe-cycles 1]
        [--trials 1] [--noise-rad 0.01]
        [--set name=value ...]     # crawl tracker parameters (config/crawl_tracker_parameters.yaml)

Cartesian: the start stance of ``atlas_crawl_eval.iik_crawl`` (nominal four-point stance), then the references
of ``cartesian.cartesian_plan`` sent one by one to ``CrawlControllerCore`` (next one when the status says reached),
i.e. the gait sequencer's Cartesian goal without ROS. Key-frame: ``crawl_forward`` key-frames from its first
key-frame pose. Timed: wall clock (``perf_counter``) of every ``core.update`` (``thread_time`` is a slow system call
here and was dropped);
"solve updates" are the updates that ran IIK iterations (``iik.iterations_per_update`` slices a long solve over
several updates; ``--set iik.iterations_per_update=0`` solves whole); "per solve" sums one solve's CoM target + IIK
time over its updates. Also printed: distance, heading change and
fall of the Cartesian crawl (the core-hosted law in physics).
"""
from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

from atlas_crawl_controller.cartesian import cartesian_plan, make_cartesian_solver
from atlas_crawl_controller.controller_core import CrawlControllerCore, Reference
from atlas_crawl_controller.keyframes import load_script
from atlas_crawl_eval.iik_crawl import robot_model, start_stance
from atlas_crawl_mujoco.sim import AtlasSim


def _pose7(sim):
    p, qw = sim.pelvis_pose()
    return np.array([p[0], p[1], p[2], qw[1], qw[2], qw[3], qw[0]])


def _host(sim, core, refs, rate_hz, t_max_s, track_solves=None):
    """Sim-node style loop; returns (update wall s, solved flags, fell, reason, refs sent)."""
    n = max(1, int(round(1.0 / (rate_hz * sim.dt))))
    period = n * sim.dt
    wall, solved, per_solve = [], [], []
    i = 0
    sent = 0
    t0 = sim.time
    fell, reason = False, ""
    core.set_reference(refs[0])
    sent = 1
    while sim.time - t0 < t_max_s:
        st = core.status()
        if st.reached and st.sequence_id == refs[i].sequence_id:
            i += 1
            if i >= len(refs):
                break
            ok, why = core.set_reference(refs[i])
            if not ok:   # the controller's reference check said no (as the sequencer would abort the goal)
                reason = f"reference {i + 1} rejected: {why}"
                break
            sent += 1
        q, qd, tau = sim.joint_q(), sim.joint_qd(), sim.joint_effort()
        pose = _pose7(sim)
        w0 = time.perf_counter()
        cmd = core.update(sim.time, period, q, qd, tau, pose)
        wall.append(time.perf_counter() - w0)
        tr = getattr(core, "_tracker", None)
        solved.append(bool(tr is not None and tr.solving))   # the update ran IIK iterations
        if tr is not None and tr.solved:
            per_solve.append(tr.last.solve_time_s)
        sim.set_joint_targets(cmd)
        sim.step(n)
        f, why = sim.fallen()
        if f:
            fell, reason = True, why
            break
    if track_solves is not None:
        track_solves.extend(per_solve)
    return np.array(wall), np.array(solved), fell, reason, sent


def _stats(a_s) -> str:
    if len(a_s) == 0:
        return "n 0"
    ms = 1e3 * np.asarray(a_s)
    return (f"n {len(ms):5d}  p50 {np.percentile(ms, 50):7.3f}  p99 {np.percentile(ms, 99):7.3f}  "
            f"max {ms.max():7.3f} ms")


def run_cartesian(a, overrides, trial=0):
    sim = AtlasSim(seed=trial)
    if a.start == "nominal":
        start_stance(sim, robot_model())
        if trial > 0 and a.noise_rad > 0:   # seeded servo-target noise, settled (trial 0: the exact stance)
            q = sim.joint_q() + np.random.default_rng(trial).uniform(-a.noise_rad, a.noise_rad, sim.joint_q().shape)
            sim.set_joint_targets(q)
            sim.step(500)
    else:   # what the embedded graph starts from (sim node initial_pose)
        script = load_script(a.start)
        quat = getattr(script, "start_quat_wxyz", None) or (1.0, 0.0, 0.0, 0.0)
        sim.reset(script.keyframes[0].q, base_quat_wxyz=tuple(quat))
        sim.step(1500)
    core = CrawlControllerCore()
    core.configure({"update_rate_hz": a.rate})
    core.set_cartesian_solver(*make_cartesian_solver(params=overrides))
    core.activate(sim.joint_q())
    sim.set_joint_targets(core.last_command())
    sim.fall_check = "crawl"
    p0 = _pose7(sim)
    c0 = sim.contact_site_pos()
    head0 = sim.heading_rad()
    steps = cartesian_plan(c0, sim.com()[:2], head0, a.cycles, -1 if a.backward else 1)
    refs = [Reference(mode=2, sequence_id=k + 1, contact_targets=s["targets"], stance=s["stance"],
                      duration_s=s["duration_s"], com_modulation=a.com_modulation) for k, s in enumerate(steps)]
    T = sum(s["duration_s"] for s in steps)
    per_solve = []
    wall, solved, fell, reason, sent = _host(sim, core, refs, a.rate, 2.0 * T + 5.0, per_solve)
    p1 = _pose7(sim)
    head1 = sim.heading_rad()
    d = p1[:2] - p0[:2]
    fwd = np.array([math.cos(head0), math.sin(head0)])
    return dict(wall=wall, solved=solved, per_solve=np.array(per_solve), fell=fell, reason=reason, sent=sent, n_refs=len(refs),
                forward_m=float(d @ fwd), lateral_m=float(fwd[0] * d[1] - fwd[1] * d[0]),
                turn_deg=math.degrees((head1 - head0 + math.pi) % (2 * math.pi) - math.pi),
                pelvis_z=float(p1[2]), sim_s=float(len(wall) / a.rate), plan_s=T)


def run_keyframe(a):
    sim = AtlasSim(seed=0)
    script = load_script("crawl_forward")
    kf0 = script.keyframes[0]
    quat = getattr(script, "start_quat_wxyz", None) or (1.0, 0.0, 0.0, 0.0)
    sim.reset(kf0.q, base_quat_wxyz=tuple(quat))
    sim.step(1500)
    core = CrawlControllerCore()
    core.configure({"update_rate_hz": a.rate})
    core.activate(sim.joint_q())
    sim.set_joint_targets(core.last_command())
    refs = []
    for c in range(a.keyframe_cycles):
        for kf in script.keyframes:
            refs.append(Reference(mode=1, sequence_id=len(refs) + 1, joint_positions_rad=kf.q,
                                  duration_s=kf.duration_s))
    T = sum(r.duration_s for r in refs)
    wall, _s, fell, reason, sent = _host(sim, core, refs, a.rate, 2.0 * T + 5.0)
    return dict(wall=wall, fell=fell, sent=sent, n_refs=len(refs))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cycles", type=int, default=1)
    ap.add_argument("--com-modulation", action="store_true")
    ap.add_argument("--backward", action="store_true")
    ap.add_argument("--rate", type=float, default=250.0, help="core update rate, Hz")
    ap.add_argument("--keyframe-cycles", type=int, default=1)
    ap.add_argument("--start", default="nominal",
                    help="start pose of the Cartesian crawl: nominal (iik_crawl's start stance) or a gait script's "
                         "first key-frame, e.g. crawl_forward (the embedded graph's initial pose)")
    ap.add_argument("--trials", type=int, default=1, help="fresh simulators; timings pooled")
    ap.add_argument("--noise-rad", type=float, default=0.01, help="start noise of trials k > 0")
    ap.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE",
                    help="crawl tracker parameters, e.g. iik.max_iterations=2 solve_rate_hz=250")
    a = ap.parse_args(argv)
    import yaml
    overrides = {k: yaml.safe_load(v) for k, v in (s.split("=", 1) for s in a.set)}
    runs = [run_cartesian(a, overrides, k) for k in range(a.trials)]
    kf = run_keyframe(a)
    print(f"Cartesian crawl ({a.cycles} cycle(s), {'backward' if a.backward else 'forward'}, com_modulation "
          f"{a.com_modulation}, tracker overrides {overrides or 'none'}), core at {a.rate:g} Hz, {a.trials} trial(s) "
          f"(trial k > 0: seeded ±{a.noise_rad:g} rad servo-target noise at the start):")
    for k, c in enumerate(runs):
        print(f"  trial {k}: references {c['sent']}/{c['n_refs']}, plan {c['plan_s']:.2f} s, ran {c['sim_s']:.2f} s; "
              f"forward {c['forward_m']:+.3f} m ({c['forward_m'] / c['sim_s']:.4f} m/s), lateral {c['lateral_m']:+.3f} m, "
              f"turn {c['turn_deg']:+.1f} deg, pelvis z {c['pelvis_z']:.3f} m, fell {c['fell']} {c['reason']}")
    if len(runs) > 1:
        v = [c["forward_m"] / c["sim_s"] for c in runs]
        print(f"  mean over trials: {np.mean(v):.4f} m/s, |lateral| {np.mean([abs(c['lateral_m']) for c in runs]):.3f} m, "
              f"|turn| {np.mean([abs(c['turn_deg']) for c in runs]):.1f} deg, falls {sum(c['fell'] for c in runs)}")
    cart = dict(wall=np.concatenate([c["wall"] for c in runs]), solved=np.concatenate([c["solved"] for c in runs]))
    s = cart["solved"]
    print(f"  all updates       wall {_stats(cart['wall'])}")
    print(f"  solve updates     wall {_stats(cart['wall'][s])}   (updates that ran IIK iterations)")
    print(f"  non-solve updates wall {_stats(cart['wall'][~s])}")
    ps = np.concatenate([c["per_solve"] for c in runs])
    print(f"  per solve, summed over its updates (CoM target + IIK) {_stats(ps)}")
    print(f"Key-frame crawl_forward ({kf['sent']}/{kf['n_refs']} key-frames, fell {kf['fell']}):")
    print(f"  all updates       wall {_stats(kf['wall'])}")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
