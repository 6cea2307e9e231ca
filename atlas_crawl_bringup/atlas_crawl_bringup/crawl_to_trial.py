"""Benchmark command: CrawlTo and /cmd_vel through the embedded graph (issue 12 §2). Not a test.

    python -m atlas_crawl_bringup.crawl_to_trial --forward 0.5 [--left 0] [--yaw 0] [--tol-m 0.05] [--tol-rad 0.035]
    python -m atlas_crawl_bringup.crawl_to_trial --cmd-vel 0.05 --wz 0 --seconds 30

Targets are relative to the start pose (forward/left along the start heading, yaw added to it), sent in the frame of
the pose the sequencer reads (the estimate's odom frame by default, ``--pose-source ground_truth`` for world). The
final error is printed in that frame and against the simulator's ground truth (the estimator is initialised at the
ground truth, so odom = world at the start).
"""
from __future__ import annotations

import argparse
import math
import threading
import time

import numpy as np


def _heading(q):
    from atlas_crawl_controller.gait_sequencer import heading_from_quat
    return heading_from_quat(q)


def _wrap(a):
    return (a + math.pi) % (2 * math.pi) - math.pi


def crawl_to(stack, forward, left, yaw, tol_m, tol_rad, max_cycles, timeout_wall_s):
    from atlas_crawl_controller.nodes.goal_client import SafeActionClient

    from atlas_crawl_controller.nodes import topics
    from atlas_crawl_msgs.action import CrawlTo
    node = stack.create_node("crawl_to_trial")
    cli = SafeActionClient(node, CrawlTo, topics.CRAWL_TO)
    if not cli.wait_for_server(timeout_sec=10.0):
        raise RuntimeError("no /crawl_to server")
    pose = stack.sequencer._pose.copy()
    h = _heading(pose[3:7])
    c, s = math.cos(h), math.sin(h)
    tx, ty = pose[0] + c * forward - s * left, pose[1] + s * forward + c * left
    tyaw = _wrap(h + yaw)
    g = CrawlTo.Goal(x_m=float(tx), y_m=float(ty), yaw_rad=float(tyaw), position_tolerance_m=tol_m,
                     yaw_tolerance_rad=tol_rad, max_cycles=max_cycles)
    t0s, t0w = stack.sim.sim_time(), time.monotonic()
    fb = []
    ev = threading.Event()
    fut = cli.send_goal_async(g, feedback_callback=lambda m: fb.append(m.feedback))
    fut.add_done_callback(lambda _f: ev.set())
    if not ev.wait(10.0) or not fut.result().accepted:
        raise RuntimeError("CrawlTo goal not accepted")
    done = threading.Event()
    res = fut.result().get_result_async()
    res.add_done_callback(lambda _f: done.set())
    last_cycle = -1
    while not done.wait(0.5):
        if fb and fb[-1].cycle != last_cycle:
            f = fb[-1]
            gt = stack.sim.sim.pelvis_pose()
            last_cycle = f.cycle
            print(f"  cycle {f.cycle}: remaining {f.remaining_distance_m:.3f} m, heading error "
                  f"{math.degrees(f.heading_error_rad):+.1f} deg, law {f.law_phase}, command "
                  f"({f.command_vx_m_per_s:.3f}, {f.command_vy_m_per_s:.3f}, {f.command_wz_rad_per_s:.3f}); ground "
                  f"truth: remaining {math.hypot(tx - gt[0][0], ty - gt[0][1]):.3f} m, heading error "
                  f"{math.degrees(_wrap(tyaw - _heading(np.r_[gt[1][1:4], gt[1][0]]))):+.1f} deg",
                  flush=True)
        if time.monotonic() - t0w > timeout_wall_s:
            raise RuntimeError("wall timeout")
    r = res.result().result
    gt = stack.sim.sim.pelvis_pose()
    gt_xy = np.asarray(gt[0][:2], float)
    gt_h = _heading(np.r_[gt[1][1:4], gt[1][0]]) if len(gt) > 1 else float("nan")
    return {"success": r.success, "reason": r.reason, "position_error_m": r.position_error_m,
            "yaw_error_deg": math.degrees(r.yaw_error_rad), "cycles": r.cycles_completed,
            "sim_s": stack.sim.sim_time() - t0s, "wall_s": time.monotonic() - t0w,
            "gt_position_error_m": float(math.hypot(tx - gt_xy[0], ty - gt_xy[1])),
            "gt_yaw_error_deg": math.degrees(_wrap(tyaw - gt_h))}


def cmd_vel(stack, vx, wz, seconds, settle_s=2.0):
    """Publish (vx, wz) on /cmd_vel for ``seconds`` of sim time, then stop. The pose change at the stop is a
    sample within a cycle (the pelvis sways ±25° and ±5 cm in each); the ``settled_*`` figures are taken
    ``settle_s`` after the run has ended in its four-point stance."""
    from geometry_msgs.msg import TwistStamped

    from atlas_crawl_controller.nodes import topics
    node = stack.create_node("cmd_vel_trial")
    pub = node.create_publisher(TwistStamped, topics.CMD_VEL, 10)
    seq = stack.sequencer
    p0 = stack.sim.sim.pelvis_pose()
    t0 = None
    while True:
        m = TwistStamped()
        m.twist.linear.x, m.twist.angular.z = vx, wz
        pub.publish(m)
        time.sleep(0.05)
        if t0 is None and seq.cmd_vel_counters["runs_started"] > 0:
            t0 = stack.sim.sim_time()
        if t0 is not None and stack.sim.sim_time() - t0 > seconds:
            break
    t_stop = stack.sim.sim_time()
    p1 = stack.sim.sim.pelvis_pose()
    while seq._vel_mode:
        time.sleep(0.05)
    t_end = stack.sim.sim_time()
    while stack.sim.sim_time() < t_end + settle_s:
        time.sleep(0.05)
    p2 = stack.sim.sim.pelvis_pose()         # settled in the four-point stance the run ends with

    def change(p):
        d = np.asarray(p[0][:2]) - np.asarray(p0[0][:2])
        h0 = _heading(np.r_[p0[1][1:4], p0[1][0]])
        h1 = _heading(np.r_[p[1][1:4], p[1][0]])
        return d, float(-math.sin(h0) * d[0] + math.cos(h0) * d[1]), math.degrees(_wrap(h1 - h0))
    d, lateral, dh = change(p1)
    d2, lateral2, dh2 = change(p2)
    return {"sim_s": t_stop - t0, "distance_m": float(np.linalg.norm(d)), "lateral_m": lateral,
            "heading_change_deg": dh, "speed_m_per_s": float(np.linalg.norm(d)) / (t_stop - t0),
            "settled_distance_m": float(np.linalg.norm(d2)), "settled_lateral_m": lateral2,
            "settled_heading_change_deg": dh2,
            "stop_latency_s": t_end - t_stop, "last_run": seq._vel_last_outcome.reason,
            "runs": seq.cmd_vel_counters["runs_started"]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--forward", type=float, default=0.5, help="[m] target ahead of the start pose")
    ap.add_argument("--left", type=float, default=0.0, help="[m] target left of the start pose")
    ap.add_argument("--yaw", type=float, default=0.0, help="[rad] target heading relative to the start")
    ap.add_argument("--tol-m", type=float, default=0.05)
    ap.add_argument("--tol-rad", type=float, default=math.radians(2.0))
    ap.add_argument("--max-cycles", type=int, default=0)
    ap.add_argument("--cmd-vel", type=float, default=None, help="[m/s] instead: crawl on /cmd_vel at this vx")
    ap.add_argument("--wz", type=float, default=0.0)
    ap.add_argument("--seconds", type=float, default=30.0, help="[s] (sim) of /cmd_vel crawling")
    ap.add_argument("--pose-source", default="estimate", choices=("estimate", "ground_truth"))
    ap.add_argument("--timeout-wall-s", type=float, default=1200.0)
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="gait_sequencer parameter override (repeatable), e.g. crawl_to.yaw_gain=0.5")
    a = ap.parse_args(argv)
    from .stack import Stack
    import yaml
    over = {}
    for kv in a.param:
        k, _, v = kv.partition("=")
        over[k.strip()] = yaml.safe_load(v)
    with Stack(pose_source=a.pose_source, node_params={"gait_sequencer": over} if over else None) as st:
        if a.cmd_vel is not None:
            out = cmd_vel(st, a.cmd_vel, a.wz, a.seconds)
        else:
            out = crawl_to(st, a.forward, a.left, a.yaw, a.tol_m, a.tol_rad, a.max_cycles, a.timeout_wall_s)
    for k, v in out.items():
        print(f"{k}: {v:.4f}" if isinstance(v, float) else f"{k}: {v}")


if __name__ == "__main__":
    main()
