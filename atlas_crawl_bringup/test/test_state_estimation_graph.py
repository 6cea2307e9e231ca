"""The graph on the state estimate (issue 14 §1): /atlas/imu and /odom are published, the sequencer and contact
inference read the estimate instead of the ground truth, a crawl succeeds on it and the estimate stays close."""
import math
import time

import numpy as np
import pytest


@pytest.fixture(scope="module")
def est_stack():
    from atlas_crawl_bringup.stack import Stack
    s = Stack(pose_source="estimate")
    yield s
    s.close()


def test_consumers_read_the_estimate_and_odom_is_published(est_stack):
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import Imu
    from atlas_crawl_controller.nodes import topics
    s = est_stack
    for node in (s.sequencer, s.contact):
        names = {sub.topic_name for sub in node.subscriptions}
        assert topics.POSE_ESTIMATE in names and topics.PELVIS_POSE not in names, names
    got = {"odom": [], "imu": []}
    probe = s.create_node("estimate_probe")
    probe.create_subscription(Odometry, topics.ODOM, got["odom"].append, 10)
    probe.create_subscription(Imu, topics.IMU, got["imu"].append, 10)
    t_end = time.monotonic() + 30
    while (len(got["odom"]) < 3 or len(got["imu"]) < 3) and time.monotonic() < t_end:
        time.sleep(0.05)
    od, imu = got["odom"][-1], got["imu"][-1]
    assert od.header.frame_id == "odom" and od.child_frame_id == "pelvis"
    cov = np.array(od.pose.covariance).reshape(6, 6)
    assert np.all(np.diag(cov) > 0) and np.all(np.isfinite(cov))
    assert imu.header.frame_id == "pelvis" and imu.orientation_covariance[0] == -1.0
    assert 9.0 < math.hypot(imu.linear_acceleration.x, imu.linear_acceleration.y, imu.linear_acceleration.z) < 10.6


def test_crawl_on_the_estimate_succeeds_and_the_estimate_tracks_ground_truth(est_stack):
    from atlas_crawl_controller.nodes.goal_client import GoalClient
    s = est_stack
    gc = GoalClient(s.create_node("estimate_goals"), sim_time=s.sim.sim_time)
    assert gc.wait_for_servers(10.0)
    rec = gc.run("crawl", {"cycles": 1}, result_timeout_s=90)
    assert rec.status == "succeeded", (rec.status, rec.result.reason)
    assert rec.result.distance_m > 0.1
    e = s.sim.estimator.estimate()
    p, _q = s.sim.sim.pelvis_pose()
    assert e is not None
    assert np.linalg.norm(e.position[:2] - p[:2]) < 0.05        # one cycle ≈ 0.4 m: within 12 % here (2 % target:
    #                                                              the benchmark, estimator_eval)
