"""scene_height_map node: ``/atlas/height_map`` for Gazebo, whose world was written from a scene spec (issue 13 §2).

The MuJoCo sim node publishes the scene's ground-truth height map itself. A Gazebo graph (``gazebo.launch.py
scene:=...``) runs this node instead: it ray casts the same scene (:class:`.scene_height_map.SceneHeightMap`)
around the latest ground-truth ``/atlas/pelvis_pose`` (the pelvis plugin's) at ``height_map_rate_hz`` of its clock
(sim time), in frame ``world``. The map stands in for a lidar map, as in MuJoCo.

Bad input changes nothing: a non-finite pose is rejected (counted, logged) and the last good one kept; no map is
published until a pose arrives, nor while the latest is older than ``max_pose_age_s``, so the consumers fall back to
their blind mode with a reason. A bad scene stops the node at start with the reason. Parameters:
atlas_crawl_mujoco/config/scene_height_map_parameters.yaml (``scene`` read-only, the rest changeable at run time).
"""
from __future__ import annotations

import math
import os
from typing import Optional

from geometry_msgs.msg import PoseStamped
from rclpy.node import Node

from atlas_crawl_msgs.msg import HeightMap
from atlas_crawl_controller.nodes import topics
from atlas_crawl_controller.nodes._common import GuardedNodeMixin, declare_validated_parameters, spin_node
from atlas_crawl_controller.nodes.conversions import height_map_to_msg
from atlas_crawl_controller.parameters import config_path, load_parameter_file

from .scene_height_map import SceneHeightMap
from .sim_node import _stamp

PARAMETER_FILE = "scene_height_map_parameters.yaml"
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _t(stamp) -> float:
    return stamp.sec + 1e-9 * stamp.nanosec


def _grid_reason(p) -> str:
    """Why the map's size and resolution cannot go together ('' if they can: at most 400 cells per side)."""
    n = round(p["height_map_size_m"] / p["height_map_resolution_m"])
    return f"height map of {n} x {n} cells: at most 400 per side (size / resolution)" if n > 400 else ""


class SceneHeightMapNode(GuardedNodeMixin, Node):
    """See the module docstring."""

    def __init__(self, node_name: str = "scene_height_map", **kwargs):
        super().__init__(node_name, **kwargs)
        self.start_diagnostics()
        self._pset = load_parameter_file(config_path(PARAMETER_FILE, "atlas_crawl_mujoco", source_dir=_PKG_DIR))
        declare_validated_parameters(self, self._pset, self._apply_params)
        if _grid_reason(self.params):
            raise ValueError(_grid_reason(self.params))
        self.map = SceneHeightMap(self.params["scene"])          # ValueError (the reason) on a bad scene
        self._pose: Optional[tuple] = None                       # (stamp s, x, y) of the latest good pose
        self.published = 0
        self.pub = self.create_publisher(HeightMap, topics.HEIGHT_MAP, 2)
        self.create_subscription(PoseStamped, topics.PELVIS_POSE, self._on_pose, 10)
        self._timer = None
        self._start_timer()
        self.get_logger().info(f"height map of scene {self.params['scene']!r} around {topics.PELVIS_POSE}")

    def _apply_params(self, new) -> Optional[str]:
        reason = _grid_reason(new)
        if reason:
            return reason
        old = getattr(self, "params", None)
        self.params = new
        if old is not None and new["height_map_rate_hz"] != old["height_map_rate_hz"]:
            self._start_timer()
        return None

    def _start_timer(self):
        if self._timer is not None:
            self.destroy_timer(self._timer)
            self._timer = None
        if self.params["height_map_rate_hz"] > 0:
            self._timer = self.create_timer(1.0 / self.params["height_map_rate_hz"], self._publish)

    def _on_pose(self, msg: PoseStamped):
        t, x, y = _t(msg.header.stamp), msg.pose.position.x, msg.pose.position.y
        if not all(math.isfinite(v) for v in (t, x, y)):
            self.reject_input(topics.PELVIS_POSE, "non-finite stamp or position: kept the last good pose")
            return
        self._pose = (t, x, y)

    def _publish(self):
        if self._pose is None:
            return
        now = self.get_clock().now().nanoseconds * 1e-9
        t, x, y = self._pose
        if now - t > self.params["max_pose_age_s"]:
            return                               # stale pose: no map (the consumers go blind, with a reason)
        p = self.params
        hm = self.map.sample(t, (x, y), p["height_map_size_m"], p["height_map_resolution_m"])
        self.pub.publish(height_map_to_msg(hm, _stamp(t), topics.WORLD_FRAME))
        self.published += 1


def main(args=None):
    spin_node(SceneHeightMapNode, args=args)


if __name__ == "__main__":
    main()
