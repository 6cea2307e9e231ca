"""The state estimator in the loop of a Cartesian crawl, without ROS (issue 14 §1): AtlasSim (1 kHz) + the controller
core + the gait sequencer (``METHOD_IIK`` goal, the gait generator) + :class:`StateEstimator` fed as the sim node
feeds it (``atlas_crawl_eval.estimator_eval.feed_estimator``: noisy IMU every control period, joints at
``joint_rate_hz`` with the core's expected stance, the height map at 2 Hz). The core and the sequencer read the
estimate (``--ground-truth`` : the simulator's pose); the sequencer's support state is the simulator's contacts,
re-expressed through the pose it reads. Deterministic per ``--seed`` (the IMU noise stream).

    python lab/estimator_cartesian_loop.py [--direction 1|-1] [--cycles 10] [--seed 0] [--imu-output mean|sample]
        [--set leg.max_imu_only_s=0.3 ...] [--gen-set crawl_speed_m_per_s=0.005 ...]
        [--seq-set generator.max_limb_error_m=0 ...] [--scene slope:angle_deg=5] [--disturbance gains]
        [--push-ns 0 30 0 --push-at-s 20]
        [--gait diagonal]    # the gait generator's dynamic diagonal-pair crawl
        [--turn left|right]  # a Cartesian Turn goal instead (the generator turning on the spot)
        [--start runner]     # from the sampling runner's nominal stance instead of the graph's key-frame stance
        [--tracker-set orientation_reference= ...]   # crawl tracker parameters

Prints the position error at the end in % of the Gaussian-smoothed ground-truth path (the metric of
``atlas_crawl_eval.estimator_eval``) and the heading error.
"""
from __future__ import annotations

import argparse
import math
from types import SimpleNamespace

import numpy as np

from atlas_crawl_controller import contact_inference as ci
from atlas_crawl_controller.cartesian import make_cartesian_solver
from atlas_crawl_controller.controller_core import CrawlControllerCore
from atlas_crawl_controller.gait_sequencer import GaitSequencer, MotionGoal
from atlas_crawl_controller.gait_sequencer import parameter_set as seq_params
from atlas_crawl_controller.keyframes import load_script
from atlas_crawl_eval import metrics
from atlas_crawl_eval.estimator_eval import _parse_sets, aligned_estimator
from atlas_crawl_kinematics.rotations import quat_xyzw_to_R
from atlas_crawl_kinematics.support import crawl_heading_rad


def run(direction: int = 1, cycles: int = 10, seed: int = 0, imu_output: str = "mean", est_set: dict | None = None,
        ground_truth: bool = False, gen_set: dict | None = None, seq_set: dict | None = None, scene: str = "",
        disturbance: str = "none", push_ns=None, push_at_s: float = 20.0, gait: str = "static", turn: int = 0,
        start: str = "keyframe", tracker_set: dict | None = None) -> dict:
    from atlas_crawl_eval.gen_crawl import make_sim
    sim = make_sim(scene, disturbance, seed)
    if start == "runner":                      # the sampling runner's nominal stance (iik_crawl.start_stance)
        from atlas_crawl_eval.iik_crawl import robot_model, start_stance
        start_stance(sim, robot_model())
    else:
        script = load_script("crawl_forward")     # the embedded graph's start pose
        sim.reset(script.keyframes[0].q,
                  base_quat_wxyz=tuple(getattr(script, "start_quat_wxyz", None) or (1, 0, 0, 0)))
    sim.fall_check = "crawl"
    core = CrawlControllerCore()
    core.configure()
    core.set_cartesian_solver(*make_cartesian_solver(params=tracker_set or None))

    def pose_gt():
        p, q = sim.pelvis_pose()
        return np.array([p[0], p[1], p[2], q[1], q[2], q[3], q[0]])

    est, feed = aligned_estimator(sim, lambda: core.expected_stance, seed=seed, est_overrides=est_set,
                                  noise_overrides={"imu.output": imu_output})
    core.activate(sim.joint_q())

    def pose_est():
        e = est.estimate(sim.time)
        return np.full(7, np.nan) if e is None else e.pose7.copy()

    pose7 = pose_gt if ground_truth else pose_est

    def in_frame(x):
        """World points re-expressed through the pose the loop reads (rigidly with the pelvis)."""
        pg, pe = pose_gt(), pose7()
        if not np.all(np.isfinite(pe)):
            return np.asarray(x)
        M = quat_xyzw_to_R(pe[3:]) @ quat_xyzw_to_R(pg[3:]).T
        return (np.asarray(x) - pg[:3]) @ M.T + pe[:3]

    def support():
        touch, _ = sim.limb_contacts()
        pts, com = in_frame(sim.contact_site_pos()), in_frame(sim.com())
        s = ci.support_from_contacts(touch, pts, com)
        return SimpleNamespace(in_contact=touch, stability_margin_m=s.margin_m, statically_stable=s.statically_stable,
                               age_s=0.0, positions=pts, com_xy=com[:2])

    seq = GaitSequencer(seq_params().values(seq_set or {}))
    seq.set_generator_params(gen_set or None)
    seq.start(MotionGoal(kind="turn" if turn else "crawl", script="", method="iik", direction=direction,
                         cycles=cycles, max_cycles=cycles, gait=gait, turn_sense=turn), 0.0, pose7(), support())
    n_ctrl = max(1, int(round(1.0 / (core.params["update_rate_hz"] * sim.dt))))
    n_seq = max(1, int(round(0.01 / sim.dt)))
    gt, es = [], []
    step, t0, outcome, fell = 0, sim.time, None, ""
    pushed = push_ns is None
    while outcome is None and sim.time - t0 < 60.0 * cycles:
        t = sim.time - t0
        if not pushed and t >= push_at_s:
            sim.push(push_ns, 0.1)
            pushed = True
        if step % n_seq == 0:
            out = seq.tick(t, core.status(), support(), pose7())
            if out.reference is not None:
                core.set_reference(out.reference)
            outcome = out.outcome
            gt.append(pose_gt())
            es.append(pose_est())
        if step % n_ctrl == 0:
            cmd = core.update(t, n_ctrl * sim.dt, sim.joint_q(), sim.joint_qd(), sim.joint_effort(), pose7())
            sim.set_joint_targets(cmd)
        sim.step(1)
        feed(step)
        step += 1
        f, why = sim.fallen()
        if f:
            fell = why
            break
    gt, es = np.array(gt), np.array(es)
    ok = np.all(np.isfinite(es), axis=1)
    path = float(np.sum(np.linalg.norm(np.diff(metrics.smooth(gt[:, :2]), axis=0), axis=1)))
    err = np.linalg.norm(es[ok, :2] - gt[ok, :2], axis=1)
    dh = [crawl_heading_rad(quat_xyzw_to_R(es[ok][-1, 3:])) - crawl_heading_rad(quat_xyzw_to_R(gt[ok][-1, 3:]))]
    dh = math.degrees((dh[0] + math.pi) % (2 * math.pi) - math.pi)
    h = [crawl_heading_rad(quat_xyzw_to_R(g[3:])) for g in (gt[0], gt[-1])]
    r0 = np.array([math.cos(h[0]), math.sin(h[0])])
    d = gt[-1, :2] - gt[0, :2]
    return dict(outcome=getattr(outcome, "status", None), reason=getattr(outcome, "reason", ""), fell=fell,
                turn_deg=math.degrees((h[1] - h[0] + math.pi) % (2 * math.pi) - math.pi),
                along_m=float(r0 @ d), lateral_m=float(r0[0] * d[1] - r0[1] * d[0]),
                sim_s=float(sim.time - t0), path_m=path, end_error_m=float(err[-1]), max_error_m=float(err.max()),
                end_error_pct=100.0 * float(err[-1]) / max(path, 1e-9), heading_error_deg=dh,
                progress_m=float(np.linalg.norm(gt[-1, :2] - gt[0, :2])))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--direction", type=int, choices=(1, -1), default=1)
    ap.add_argument("--turn", choices=("", "left", "right"), default="",
                    help="a Cartesian Turn goal (turn on the spot) instead of the crawl")
    ap.add_argument("--cycles", type=int, default=10)
    ap.add_argument("--seed", type=int, nargs="+", default=[0])
    ap.add_argument("--imu-output", choices=("mean", "sample"), default="mean")
    ap.add_argument("--set", nargs="*", default=[], help="state estimator parameters, name=value")
    ap.add_argument("--ground-truth", action="store_true", help="the core and sequencer read the ground truth")
    ap.add_argument("--seq-set", nargs="*", default=[], help="gait sequencer parameters, name=value")
    ap.add_argument("--scene", default="", help="simulator scene, e.g. slope:angle_deg=5")
    ap.add_argument("--disturbance", default="none", help="gains | mass | friction_low | friction_high")
    ap.add_argument("--push-ns", type=float, nargs=3, default=None, help="a world-frame push impulse (N s), 0.1 s")
    ap.add_argument("--push-at-s", type=float, default=20.0, help="when the push starts (s after the goal)")
    ap.add_argument("--gait", choices=("static", "diagonal"), default="static",
                    help="the Crawl goal's gait (diagonal: the gait generator's diagonal pairs; started here directly, "
                         "the graph's goal check, generator.diagonal_enabled, is not in this loop)")
    ap.add_argument("--gen-set", nargs="*", default=[], help="gait generator parameters, name=value (e.g. "
                    "crawl_speed_m_per_s=0.005: stepping nearly in place)")
    ap.add_argument("--tracker-set", nargs="*", default=[], help="crawl tracker parameters, name=value (e.g. "
                    "orientation_reference=: hold the start orientations)")
    ap.add_argument("--start", choices=("keyframe", "runner"), default="keyframe",
                    help="start posture: the crawl_forward key-frame stance (the graph's) or the sampling runner's "
                         "nominal stance")
    a = ap.parse_args(argv)
    est_set = _parse_sets(a.set)
    pcts = []
    for s in a.seed:
        r = run(a.direction, a.cycles, s, a.imu_output, est_set, a.ground_truth, _parse_sets(a.gen_set),
                _parse_sets(a.seq_set), a.scene, a.disturbance, a.push_ns, a.push_at_s, a.gait,
                {"": 0, "left": 1, "right": -1}[a.turn], a.start, _parse_sets(a.tracker_set))
        pcts.append(r["end_error_pct"])
        print(f"seed {s}: {r['outcome']} {r['reason'] or ''}{' FELL ' + r['fell'] if r['fell'] else ''}; "
              f"{r['sim_s']:.1f} s, progress {r['progress_m']:.2f} m, path {r['path_m']:.3f} m; position error at the "
              f"end {100 * r['end_error_m']:.1f} cm = {r['end_error_pct']:.2f} % of the path (max "
              f"{100 * r['max_error_m']:.1f} cm); heading error {r['heading_error_deg']:+.2f} deg; ground truth: "
              f"{r['along_m']:+.3f} m along the start heading, {r['lateral_m']:+.3f} m across, turned "
              f"{r['turn_deg']:+.1f} deg", flush=True)
    print(f"mean {np.mean(pcts):.2f} %, worst {np.max(pcts):.2f} % over {len(pcts)} seed(s) "
          f"(direction {a.direction}, IMU {a.imu_output}, set {est_set or 'none'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
