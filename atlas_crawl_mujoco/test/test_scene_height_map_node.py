"""The scene height-map node (Gazebo's /atlas/height_map): the same map as the MuJoCo sim node's for the same scene
and centre, around the latest good ground-truth pose; a NaN pose, a stale pose and a bad scene change nothing."""
import math
import os
import random
import time

import numpy as np
import pytest

from atlas_crawl_controller.parameters import config_path, load_parameter_file
from atlas_crawl_mujoco.height_map import sample_height_map
from atlas_crawl_mujoco.scene_height_map import SceneHeightMap
from atlas_crawl_mujoco.sim import AtlasSim

SCENE = "slope:angle_deg=8,direction_deg=30"


def test_the_scene_map_is_the_sim_nodes_map_of_the_same_scene():
    sim = AtlasSim(params={"scene": SCENE})
    sim.reset("crawl_forward")
    sim.step(200)
    c = sim.pelvis_pose()[0][:2]
    h_sim, origin = sample_height_map(sim, c, 1.0, 0.05)
    hm = SceneHeightMap(SCENE).sample(3.0, c, 1.0, 0.05)
    assert hm.stamp_s == 3.0 and np.allclose(hm.origin_xy, origin)
    assert np.all(np.isfinite(hm.heights)) and np.allclose(hm.heights, h_sim, atol=1e-6)
    assert np.ptp(hm.heights) > 0.05                      # a slope, not a flat floor (the test can fail)


def test_bad_scene_and_bad_centre_are_refused():
    with pytest.raises(ValueError):
        SceneHeightMap("slope:angle_deg=banana")
    m = SceneHeightMap("flat")
    for t, c in ((0.0, (math.nan, 0.0)), (math.inf, (0.0, 0.0))):
        with pytest.raises(ValueError):
            m.sample(t, c, 1.0, 0.1)


def test_map_defaults_are_the_mujoco_sim_nodes():
    from atlas_crawl_mujoco import scene_height_map_node as n, sim_node
    ours = load_parameter_file(config_path(n.PARAMETER_FILE, "atlas_crawl_mujoco", source_dir=n._PKG_DIR)).specs
    sims = load_parameter_file(config_path(sim_node.PARAMETER_FILE, "atlas_crawl_mujoco",
                                           source_dir=sim_node._PKG_DIR)).specs
    for k in ("height_map_rate_hz", "height_map_size_m", "height_map_resolution_m"):
        assert ours[k].default == sims[k].default, k


def test_node_publishes_around_the_latest_good_pose():
    rclpy = pytest.importorskip("rclpy")
    from geometry_msgs.msg import PoseStamped
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from atlas_crawl_msgs.msg import HeightMap
    from atlas_crawl_controller.nodes import topics
    from atlas_crawl_mujoco.scene_height_map_node import SceneHeightMapNode
    os.environ["ROS_DOMAIN_ID"] = str(random.SystemRandom().randint(1, 100))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    try:
        node = SceneHeightMapNode(context=ctx, parameter_overrides=[
            Parameter("scene", value=SCENE), Parameter("height_map_rate_hz", value=20.0),
            Parameter("height_map_size_m", value=1.0), Parameter("height_map_resolution_m", value=0.1)])
        io = rclpy.create_node("io", context=ctx)
        got = []
        io.create_subscription(HeightMap, topics.HEIGHT_MAP, got.append, 10)
        pub = io.create_publisher(PoseStamped, topics.PELVIS_POSE, 10)
        ex = SingleThreadedExecutor(context=ctx)
        ex.add_node(node)
        ex.add_node(io)

        def spin(s):
            t_end = time.monotonic() + s
            while time.monotonic() < t_end:
                ex.spin_once(timeout_sec=0.02)

        def pose(x, y):
            m = PoseStamped()
            m.header.stamp = node.get_clock().now().to_msg()
            m.header.frame_id = "world"
            m.pose.position.x, m.pose.position.y, m.pose.position.z = x, y, 0.5
            m.pose.orientation.w = 1.0
            pub.publish(m)

        spin(0.5)
        assert not got                                    # no pose yet: no map
        pose(1.0, 2.0)
        spin(0.5)
        pose(math.nan, 0.0)                               # rejected: the map stays around (1, 2)
        spin(0.5)
        assert got and node.health.rejected_inputs.get(topics.PELVIS_POSE) == 1
        m = got[-1]
        h = np.array(m.heights_m).reshape(m.size_y, m.size_x)
        cx = m.origin_x_m + 0.5 * (m.size_x - 1) * m.resolution_m
        cy = m.origin_y_m + 0.5 * (m.size_y - 1) * m.resolution_m
        assert abs(cx - 1.0) < 0.06 and abs(cy - 2.0) < 0.06 and m.header.frame_id == "world"
        ref = SceneHeightMap(SCENE).sample(0.0, (1.0, 2.0), 1.0, 0.1).heights
        assert np.allclose(h, ref, atol=1e-5)
        node.set_parameters([Parameter("max_pose_age_s", value=0.05)])   # the pose is now stale: no more maps
        spin(0.3)
        n = len(got)
        spin(0.5)
        assert len(got) == n
        assert not node.set_parameters([Parameter("scene", value="rough")])[0].successful
        res = node.set_parameters([Parameter("height_map_resolution_m", value=0.01),
                                   Parameter("height_map_size_m", value=10.0)])   # 1000 cells a side: refused
        assert not all(r.successful for r in res) and node.params["height_map_size_m"] == 1.0
        io.destroy_node()
        node.destroy_node()
    finally:
        rclpy.shutdown(context=ctx)
