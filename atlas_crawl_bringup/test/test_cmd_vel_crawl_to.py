"""/cmd_vel and CrawlTo through the real composed graph (rclpy + MuJoCo + state estimate), issue 12 §2.

One short live test per feature: a real rclpy publisher on /cmd_vel (TwistStamped, the default) crawls the robot
forward, a Crawl goal is refused "busy" meanwhile, a NaN twist is refused with the reason, and silence stops it in a
four-point stance; then one CrawlTo to a target 0.15 m ahead with a loose 0.12 m tolerance (the pelvis sways +-5 cm about the
settled pose at a cycle boundary; one cycle then suffices; the figures at 5 cm / 2 deg are in the README).
"""
import math
import threading
import time

import numpy as np

from ros_fixtures import goals, stack  # noqa: F401  (pytest fixtures)


def _wait(pred, timeout_wall_s):
    t_end = time.monotonic() + timeout_wall_s
    while time.monotonic() < t_end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def test_cmd_vel_crawls_then_holds_when_stale(stack, goals):  # noqa: F811
    from geometry_msgs.msg import TwistStamped

    from atlas_crawl_controller.nodes import topics
    seq = stack.sequencer
    node = stack.create_node("cmd_vel_publisher")
    pub = node.create_publisher(TwistStamped, topics.CMD_VEL, 10)
    assert _wait(lambda: pub.get_subscription_count() > 0, 10.0)
    p0 = stack.sim.sim.pelvis_pose()
    x0 = p0[0][:2].copy()

    def send(vx, wz=0.0):
        m = TwistStamped()
        m.header.stamp = node.get_clock().now().to_msg()
        m.twist.linear.x, m.twist.angular.z = vx, wz
        pub.publish(m)

    refused0 = seq.cmd_vel_counters["refused"]
    send(math.nan)
    assert _wait(lambda: seq.cmd_vel_counters["refused"] > refused0, 5.0)
    assert seq.cmd_vel_counters["runs_started"] == 0                   # a refused command changes nothing
    stop = threading.Event()

    def publisher():           # 20 Hz wall, like teleop_twist_keyboard's repeat
        while not stop.is_set():
            send(0.05)
            time.sleep(0.05)
    th = threading.Thread(target=publisher, daemon=True)
    th.start()
    try:
        assert _wait(lambda: seq.cmd_vel_counters["runs_started"] >= 1, 20.0)
        rec = goals.run("crawl", {"cycles": 1}, result_timeout_s=10)
        assert rec.status == "rejected" and "busy" in rec.rejection_reason and "cmd_vel" in rec.rejection_reason, rec
        t_run = stack.sim.sim_time()
        # one generator cycle (5.6 s) plus the repositioning
        assert _wait(lambda: stack.sim.sim_time() - t_run > 8.0, 90.0)
    finally:
        stop.set()
        th.join(2.0)
    t_silent = stack.sim.sim_time()
    assert _wait(lambda: seq.cmd_vel_counters["runs_ended"] >= 1 and not seq._vel_mode, 30.0)
    out = seq._vel_last_outcome
    stopped_after = stack.sim.sim_time() - t_silent
    assert out.status == "succeeded" and "stale" in out.reason, out
    assert stopped_after < 0.5 + 1.5 + 0.5, stopped_after      # timeout + the step in flight (+ settle, lag)
    p1 = stack.sim.sim.pelvis_pose()
    moved = float(np.linalg.norm(p1[0][:2] - x0))
    assert moved > 0.05, moved
    # holds: no motion over 1 s of sim time once stopped, upright
    t1 = stack.sim.sim_time()
    assert _wait(lambda: stack.sim.sim_time() - t1 > 1.0, 20.0)
    p2 = stack.sim.sim.pelvis_pose()
    assert float(np.linalg.norm(p2[0][:2] - p1[0][:2])) < 0.02
    assert not seq._seq.fall_detector.state.fallen
    assert seq.cmd_vel_counters["runs_started"] == 1


def test_crawl_to_a_target_ahead(stack):  # noqa: F811
    from action_msgs.msg import GoalStatus
    from atlas_crawl_controller.nodes.goal_client import SafeActionClient

    from atlas_crawl_controller.gait_sequencer import heading_from_quat
    from atlas_crawl_controller.nodes import topics
    from atlas_crawl_msgs.action import CrawlTo
    seq = stack.sequencer
    node = stack.create_node("crawl_to_client")
    cli = SafeActionClient(node, CrawlTo, topics.CRAWL_TO)
    assert cli.wait_for_server(timeout_sec=10.0)
    pose = seq._pose.copy()                         # the pose the sequencer reads (estimate, odom frame)
    h = heading_from_quat(pose[3:7])
    g = CrawlTo.Goal(x_m=float(pose[0] + 0.15 * math.cos(h)), y_m=float(pose[1] + 0.15 * math.sin(h)),
                     yaw_rad=float(h), position_tolerance_m=0.12, yaw_tolerance_rad=0.25, max_cycles=4)
    fb = []
    ev = threading.Event()
    send = cli.send_goal_async(g, feedback_callback=lambda m: fb.append(m.feedback))
    send.add_done_callback(lambda _f: ev.set())
    assert ev.wait(10.0)
    gh = send.result()
    assert gh.accepted
    # /cmd_vel while a goal runs: ignored (counted, throttled warning), never starts crawling afterwards
    from geometry_msgs.msg import TwistStamped
    pub = node.create_publisher(TwistStamped, topics.CMD_VEL, 10)
    runs0, ignored0 = seq.cmd_vel_counters["runs_started"], seq.cmd_vel_counters["ignored"]
    tw = TwistStamped()
    tw.twist.linear.x = 0.05

    def ignored():
        pub.publish(tw)
        return seq.cmd_vel_counters["ignored"] > ignored0
    assert _wait(ignored, 10.0)
    done = threading.Event()
    res = gh.get_result_async()
    res.add_done_callback(lambda _f: done.set())
    assert done.wait(120.0)
    r = res.result()
    assert r.status == GoalStatus.STATUS_SUCCEEDED, (r.status, r.result)
    assert r.result.success and r.result.position_error_m <= 0.12 and abs(r.result.yaw_error_rad) <= 0.25
    assert fb and all(math.isfinite(f.remaining_distance_m) for f in fb)
    assert fb[0].remaining_distance_m > 0.12 and r.result.cycles_completed >= 1
    t1 = stack.sim.sim_time()
    assert _wait(lambda: stack.sim.sim_time() - t1 > 1.0, 20.0)
    assert seq.cmd_vel_counters["runs_started"] == runs0 and not seq._vel_mode
