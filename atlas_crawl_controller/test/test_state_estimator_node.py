"""state_estimator node (for hosts that publish an IMU topic): real rclpy node fed synthetic messages of a robot
resting in the crawl stance; it initialises from the ground-truth pose once, aligns, and publishes /odom there."""
import threading
import time

import pytest
import rclpy
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import Imu, JointState
from std_srvs.srv import Trigger

from atlas_crawl_controller.keyframes import named_pose
from atlas_crawl_controller.nodes import topics
from atlas_crawl_controller.nodes.state_estimator_node import StateEstimatorNode
from atlas_description import JOINT_NAMES


@pytest.fixture()
def graph():
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    from rclpy.parameter import Parameter
    # the synthetic pose is not the stance's real pelvis attitude: no flat-ground height measurement here
    node = StateEstimatorNode(context=ctx, parameter_overrides=[Parameter("leg.height_measurement", value=False)])
    feeder = rclpy.create_node("feeder", context=ctx)
    ex = SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    ex.add_node(feeder)
    th = threading.Thread(target=ex.spin, daemon=True)
    th.start()
    yield node, feeder
    ex.shutdown(timeout_sec=2.0)
    node.destroy_node()
    feeder.destroy_node()
    rclpy.shutdown(context=ctx)
    th.join(timeout=2.0)


def _stamp(msg, t):
    msg.header.stamp.sec = int(t)
    msg.header.stamp.nanosec = int(round((t - int(t)) * 1e9))
    return msg


def test_node_initialises_aligns_and_publishes_odom(graph):
    node, feeder = graph
    q, _quat = named_pose("crawl_stance")
    pub_imu = feeder.create_publisher(Imu, topics.IMU, 100)
    pub_js = feeder.create_publisher(JointState, topics.JOINT_STATES, 100)
    pub_gt = feeder.create_publisher(PoseStamped, topics.PELVIS_POSE, 10)
    odoms = []
    feeder.create_subscription(Odometry, topics.ODOM, odoms.append, 10)
    t_wait = time.monotonic() + 10
    while (pub_imu.get_subscription_count() == 0 or feeder.count_publishers(topics.ODOM) == 0) \
            and time.monotonic() < t_wait:
        time.sleep(0.05)
    gt = PoseStamped()
    gt.pose.position.x, gt.pose.position.y, gt.pose.position.z = 2.0, -1.0, 0.55
    gt.pose.orientation.w = 1.0
    for k in range(1, 320):                      # 3.2 s of input at 100 Hz (alignment 2 s), as fast as it goes
        t = 10.0 + 0.01 * k
        if k <= 3:
            pub_gt.publish(_stamp(gt, t))
        js = JointState(name=list(JOINT_NAMES), position=[float(v) for v in q], velocity=[0.0] * 28)
        pub_js.publish(_stamp(js, t))
        imu = Imu()
        imu.linear_acceleration.z = 9.81
        pub_imu.publish(_stamp(imu, t))
        time.sleep(0.004)
    t_wait = time.monotonic() + 5
    while not odoms and time.monotonic() < t_wait:
        time.sleep(0.05)
    assert odoms, f"no /odom; estimator: {node.est.reason!r}"
    p = odoms[-1].pose.pose.position
    assert abs(p.x - 2.0) < 0.01 and abs(p.y + 1.0) < 0.01 and abs(p.z - 0.55) < 0.01
    assert odoms[-1].header.frame_id == "odom" and odoms[-1].child_frame_id == "pelvis"
    # a NaN IMU sample is refused and counted, nothing published from it
    n = node.rejected
    bad = Imu()
    bad.angular_velocity.x = float("nan")
    pub_imu.publish(_stamp(bad, 13.5))
    t_wait = time.monotonic() + 5
    while node.rejected == n and time.monotonic() < t_wait:
        time.sleep(0.02)
    assert node.rejected > n
    # reset: waits for the next ground-truth pose, then aligns again
    cli = feeder.create_client(Trigger, topics.ESTIMATOR_RESET)
    assert cli.wait_for_service(timeout_sec=5.0)
    fut = cli.call_async(Trigger.Request())
    t_wait = time.monotonic() + 5
    while not fut.done() and time.monotonic() < t_wait:
        time.sleep(0.02)
    assert fut.done() and fut.result().success
    assert not node.est.running
