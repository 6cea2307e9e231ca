"""contact_inference_node: an estimation error is logged while the graph runs, but a publish that fails because
Ctrl-C / a launch shutdown invalidated the context is a normal stop, not an error (seen at every Gazebo shutdown:
"estimation failed: RCLError: Failed to publish: publisher's context is invalid")."""
import time

import pytest

rclpy = pytest.importorskip("rclpy")

from geometry_msgs.msg import PoseStamped  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from atlas_crawl_controller.nodes.contact_inference_node import ContactInferenceNode  # noqa: E402
from atlas_crawl_controller.robot_info import JOINT_NAMES  # noqa: E402


class _Log:
    def __init__(self):
        self.errors = []

    def error(self, msg, **_kw):
        self.errors.append(msg)

    def __getattr__(self, _name):        # info, warning, ...: ignored
        return lambda *a, **k: None


def _active_node(ctx):
    node = ContactInferenceNode(context=ctx)
    from rclpy.lifecycle import TransitionCallbackReturn
    assert node.trigger_configure() == TransitionCallbackReturn.SUCCESS
    assert node.trigger_activate() == TransitionCallbackReturn.SUCCESS
    js = JointState(name=list(JOINT_NAMES), position=[0.0] * len(JOINT_NAMES), effort=[0.0] * len(JOINT_NAMES))
    pose = PoseStamped()
    pose.pose.position.z = 0.55
    pose.pose.orientation.w = 1.0
    node._js, node._pose = js, pose
    node._js_wall = node._pose_wall = time.monotonic()
    log = _Log()
    node.get_logger = lambda: log
    return node, log


def test_an_estimation_error_is_logged_but_a_shutdown_is_not():
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    node, log = _active_node(ctx)
    try:
        node._on_timer()                       # a real estimate is published
        assert node.published == 1 and not log.errors

        def boom(*_a):
            raise RuntimeError("kinematics failed")
        real = node.positions_world
        node.positions_world = boom
        node._on_timer()                       # a genuine failure while the graph runs: logged, nothing published
        assert node.published == 1 and len(log.errors) == 1 and "kinematics failed" in log.errors[0]
        node.positions_world = real
    finally:
        rclpy.shutdown(context=ctx)
    node._on_timer()                           # the context is gone: the publish fails, silently
    assert node.published == 1 and len(log.errors) == 1
    node.destroy_node()
