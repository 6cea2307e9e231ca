"""Issue 11 on the real embedded graph, beyond the storm (test_storm.py runs rows 1-5 of the issue with a fresh
crawl after each): foreign references are answered under their own sender, /diagnostics from every node, and a
stale pose is a defined state."""
import math
import threading
import time

from atlas_crawl_msgs.msg import ControllerReference, ControllerStatus
from diagnostic_msgs.msg import DiagnosticArray

from atlas_crawl_controller.nodes import topics
from ros_fixtures import goals, stack  # noqa: F401

ANSWER_S = 5.0   # hang guard for one service answer (the storm command measures the 0.2 s target)


def _call(node, srv_type, name, req, timeout_s=ANSWER_S):
    cli = node.create_client(srv_type, name)
    assert cli.wait_for_service(timeout_sec=10.0), name
    ev = threading.Event()
    fut = cli.call_async(req)
    fut.add_done_callback(lambda _f: ev.set())
    t0 = time.monotonic()
    answered = ev.wait(timeout_s)
    node.destroy_client(cli)
    return (fut.result() if answered else None), time.monotonic() - t0


def _crawl_one(goals):  # noqa: F811
    rec = goals.run("crawl", {"cycles": 1}, result_timeout_s=120)
    assert rec.status == "succeeded", (rec.status, rec.result, rec.rejection_reason)


def test_foreign_nan_reference_does_not_abort_running_goal(goals, stack):  # noqa: F811
    node = stack.create_node("foreign_sender")
    pub = node.create_publisher(ControllerReference, topics.REFERENCE, 10)
    statuses = []
    node.create_subscription(ControllerStatus, topics.STATUS, statuses.append, 50)
    sent = threading.Event()

    def inject(_fb):
        if not sent.is_set():
            sent.set()
            ref = ControllerReference(sequence_id=1, sender="intruder", mode=ControllerReference.MODE_KEYFRAME,
                                      joint_names=["neck_ay"], joint_positions_rad=[math.nan], duration_s=0.5)
            for seq in range(1, 40):     # also every sequence id the sequencer is likely to be at
                ref.sequence_id = seq
                pub.publish(ref)
        return False

    rec = goals.run("crawl", {"cycles": 1}, result_timeout_s=120, cancel_when=inject)
    assert sent.is_set()
    assert rec.status == "succeeded", (rec.status, rec.result)
    rejections = [s for s in statuses if s.sender == "intruder"]
    assert rejections and all(not s.accepted and "non-finite" in s.reason for s in rejections)
    assert not any(s.sender == "gait_sequencer" and not s.accepted for s in statuses)


def test_diagnostics_published_by_every_node(stack):  # noqa: F811
    node = stack.create_node("diag_listener")
    names = set()
    node.create_subscription(DiagnosticArray, "/diagnostics", lambda m: names.update(s.name for s in m.status), 50)
    t_end = time.monotonic() + 10.0
    want = {"atlas_crawl: mujoco_sim", "atlas_crawl: gait_sequencer", "atlas_crawl: contact_inference"}
    while time.monotonic() < t_end and not want <= names:
        time.sleep(0.1)
    assert want <= names, names


def test_stale_pelvis_pose_aborts_goal_with_reason(goals, stack):  # noqa: F811
    """A pose that stops arriving (here: 1 Hz instead of 100 Hz, with pose_timeout_s = 0.7 s) is a defined state:
    the running goal aborts with the reason; back at 100 Hz a fresh crawl succeeds."""
    from rclpy.parameter import Parameter
    assert stack.sequencer.set_parameters([Parameter("pose_timeout_s", value=0.7)])[0].successful
    slowed = []
    # the pose the sequencer reads: the estimator's (pose_source estimate) or the ground truth
    rate = "estimator.publish_rate_hz" if stack.pose_source == "estimate" else "pelvis_pose_rate_hz"

    def slow_pose(_fb):
        if not slowed:
            slowed.append(stack.sim.set_parameters([Parameter(rate, value=1.0)])[0].successful)
        return False
    try:
        rec = goals.run("crawl", {"cycles": 2}, result_timeout_s=120, cancel_when=slow_pose)
    finally:
        stack.sim.set_parameters([Parameter(rate, value=100.0)])
        stack.sequencer.set_parameters([Parameter("pose_timeout_s", value=2.0)])
    assert slowed == [True]
    assert rec.status == "aborted" and "stale pelvis pose" in rec.result.reason, (rec.status, rec.result)
    # the abort left the robot wherever the step was (possibly a lifted limb); a crawl started from an arbitrary
    # mid-step pose can tip over (a gait limitation, measured by the storm), so the check starts a fresh trial
    assert stack.reset_sim()
    assert stack.wait_sim_time(1.5)   # a fall flag (if the abort tipped it) clears after fall.clear_s upright
    _crawl_one(goals)


def test_a_refused_parameter_stops_the_stack_with_its_reason_not_a_crash():
    """A node that refuses an override (a string for a double) ends the Stack's construction with rclpy's reason; the
    nodes built before it are destroyed, and the process exits normally (it died with SIGSEGV at exit before)."""
    import subprocess
    import sys
    code = ("from atlas_crawl_bringup.stack import Stack\n"
            "Stack(node_params={'gait_sequencer': {'generator.diagonal_turn_max_resync_m': 'abc'}}, "
            "pose_source='ground_truth')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])
    assert "expecting type 'DOUBLE'" in r.stderr
