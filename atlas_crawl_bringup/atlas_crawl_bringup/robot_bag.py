"""What a replay tool needs to show the robot, added to an MCAP bag while it records (all standard types).

    rec = open_robot_bag(node, "demo.mcap")       # McapRecorder with RECORD_TYPES + the topics below
    ...
    rec.close()

Written by :class:`RobotBagExtras` from the recorded graph topics (``/joint_states``, ``/atlas/pelvis_pose``,
``/support_state``), with their header stamps:

* ``/robot_description``  std_msgs/String, latched (transient_local), once at start: ``atlas_description.urdf_string()``
  (primitive visuals, no mesh files needed);
* ``/tf_static``          tf2_msgs/TFMessage, latched, once at start: every fixed URDF joint parent -> child;
* ``/tf``                 tf2_msgs/TFMessage at ``tf_rate_hz`` of sim time: ``world -> pelvis`` from the ground-truth
  pelvis pose and every movable joint parent -> child from /joint_states through our forward kinematics
  (``atlas_crawl_kinematics.model.RobotModel`` of the same URDF);
* ``/support_markers``    visualization_msgs/MarkerArray (support polygon, CoM projection, contacts, margin text;
  the support_markers node's conversion);
* ``/support/in_contact`` std_msgs/Float64MultiArray, 1/0 per limb (layout label "LW RW LK RK");
* ``/support/stability_margin`` std_msgs/Float64 [m]; ``/support/polygon`` geometry_msgs/PolygonStamped (world);
* ``/com/speed``          std_msgs/Float64 [m/s], horizontal CoM-projection speed over the last 1 s of sim time;
* ``/com/path``           nav_msgs/Path (world): the CoM projection every 0.25 s of sim time (last 5 min),
  written every 1 s.

``/atlas/pelvis_odom`` (nav_msgs/Odometry) is recorded from the graph as it is. tf2_msgs has no PyPI wheel: its
messages are encoded from the schema text (:meth:`McapRecorder.write_dict`).
"""
from __future__ import annotations

import math
import threading
from collections import deque

import numpy as np

from .mcap_recorder import McapRecorder

#: Graph topics recorded as they are (type per topic).
RECORD_TYPES = {
    "/joint_states": "sensor_msgs/msg/JointState",
    "/atlas/pelvis_pose": "geometry_msgs/msg/PoseStamped",
    "/atlas/pelvis_odom": "nav_msgs/msg/Odometry",
    "/atlas/contacts_ground_truth": "atlas_crawl_msgs/msg/SupportState",
    "/support_state": "atlas_crawl_msgs/msg/SupportState",
    "/crawl_controller/reference": "atlas_crawl_msgs/msg/ControllerReference",
    "/crawl_controller/status": "atlas_crawl_msgs/msg/ControllerStatus",
    "/crawl_controller/commands": "std_msgs/msg/Float64MultiArray",
    "/gait_sequencer/goal_rejections": "std_msgs/msg/String",
    "/clock": "rosgraph_msgs/msg/Clock",
}
LATCHED = ("/gait_sequencer/goal_rejections",)

#: Topics :class:`RobotBagExtras` adds (type per topic); the bag test checks them.
EXTRA_TYPES = {
    "/robot_description": "std_msgs/msg/String",
    "/tf_static": "tf2_msgs/msg/TFMessage",
    "/tf": "tf2_msgs/msg/TFMessage",
    "/support_markers": "visualization_msgs/msg/MarkerArray",
    "/support/in_contact": "std_msgs/msg/Float64MultiArray",
    "/support/stability_margin": "std_msgs/msg/Float64",
    "/support/polygon": "geometry_msgs/msg/PolygonStamped",
    "/com/speed": "std_msgs/msg/Float64",
    "/com/path": "nav_msgs/msg/Path",
}
WORLD, PELVIS = "world", "pelvis"
MAX_PATH = 1200   # CoM path points kept (5 min at 0.25 s)


def matrix_to_quat_xyzw(R: np.ndarray) -> np.ndarray:
    """(n, 3, 3) rotation matrices -> (n, 4) unit quaternions x, y, z, w."""
    from scipy.spatial.transform import Rotation
    return Rotation.from_matrix(np.asarray(R, float)).as_quat()


class RobotTf:
    """Parent -> child transforms of every URDF joint from a joint vector (our FK)."""

    def __init__(self, urdf: str):
        from atlas_crawl_kinematics.model import RobotModel
        self.model = m = RobotModel.from_urdf_string(urdf)
        kids = [i for i in range(m.n_frames) if m.frame_parent[i] >= 0]
        self.movable = np.array([i for i in kids if m.frame_joint[i] >= 0], dtype=int)
        self.fixed = np.array([i for i in kids if m.frame_joint[i] < 0], dtype=int)
        self.names = m.frame_names
        self._index_cache = {}

    def q_from(self, names, positions) -> np.ndarray:
        """Team-order joint vector from a JointState's names/positions (unknown names are an error)."""
        key = tuple(names)
        idx = self._index_cache.get(key)
        if idx is None:
            idx = self._index_cache[key] = np.array([self.model.joint_index(n) for n in names], dtype=int)
        q = np.zeros(self.model.n_joints)
        q[idx] = np.asarray(positions, float)
        return q

    def relative(self, q, frames: np.ndarray):
        """(parent names, child names, (n,3) translations, (n,4) quaternions xyzw) for the given child frames."""
        T = self.model.forward(q).T
        par = self.model.frame_parent[frames]
        Tp_inv = np.linalg.inv(T[par])
        rel = Tp_inv @ T[frames]
        return ([self.names[i] for i in par], [self.names[i] for i in frames], rel[:, :3, 3],
                matrix_to_quat_xyzw(rel[:, :3, :3]))


def _stamp(sec_ns: int) -> dict:
    return {"sec": int(sec_ns // 1_000_000_000), "nanosec": int(sec_ns % 1_000_000_000)}


def _tf_dict(stamp_ns, parents, children, trans, quats) -> dict:
    return {"transforms": [
        {"header": {"stamp": _stamp(stamp_ns), "frame_id": p}, "child_frame_id": c,
         "transform": {"translation": {"x": float(t[0]), "y": float(t[1]), "z": float(t[2])},
                       "rotation": {"x": float(r[0]), "y": float(r[1]), "z": float(r[2]), "w": float(r[3])}}}
        for p, c, t, r in zip(parents, children, trans, quats)]}


def _ns(stamp) -> int:
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


class RobotBagExtras:
    """Adds the topics of the module doc to ``rec`` from subscriptions on ``node``."""

    def __init__(self, rec: McapRecorder, node, urdf: str | None = None, tf_rate_hz: float = 50.0,
                 path_period_s: float = 0.25):
        from atlas_crawl_msgs.msg import SupportState
        from geometry_msgs.msg import PoseStamped
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String
        if urdf is None:
            import atlas_description
            urdf = atlas_description.urdf_string()
        if not tf_rate_hz > 0:
            raise ValueError(f"tf_rate_hz must be > 0, got {tf_rate_hz}")
        self.rec, self.node = rec, node
        self.tf = RobotTf(urdf)
        self.tf_period_ns = int(1e9 / tf_rate_hz)
        self.path_period_ns = int(path_period_s * 1e9)
        self._lock = threading.Lock()
        self._pose = None          # latest pelvis pose message
        self._next_tf = -1
        self._next_path = -1
        self._path = deque(maxlen=MAX_PATH)
        self._n_path = 0
        self._speed = deque()
        self.errors = 0
        from atlas_crawl_controller import support_markers as sm
        self._sm = sm
        self._markers = sm.SupportMarkers()
        now = rec.now_ns()
        rec.write_msg("/robot_description", "std_msgs/msg/String", String(data=urdf), latched=True, log_time=now)
        par, ch, tr, qu = self.tf.relative(np.zeros(self.tf.model.n_joints), self.tf.fixed)
        rec.write_dict("/tf_static", "tf2_msgs/msg/TFMessage", _tf_dict(now, par, ch, tr, qu), latched=True,
                       log_time=now)
        for topic, type_name in EXTRA_TYPES.items():
            rec.channel(topic, type_name, latched=topic in ("/robot_description", "/tf_static"))
        self._subs = [node.create_subscription(PoseStamped, "/atlas/pelvis_pose", self._on_pose, 50),
                      node.create_subscription(JointState, "/joint_states", self._on_joints, 50),
                      node.create_subscription(SupportState, "/support_state", self._on_support, 50)]
        rec.add_close_hook(self.close)

    def close(self):
        for s in self._subs:
            try:
                self.node.destroy_subscription(s)
            except Exception:  # noqa: BLE001
                pass
        self._subs = []

    # ------------------------------------------------------------------ callbacks
    def _on_pose(self, msg):
        with self._lock:
            self._pose = msg

    def _on_joints(self, msg):
        t = _ns(msg.header.stamp)
        with self._lock:
            if t < self._next_tf or self._pose is None:
                return
            self._next_tf = t + self.tf_period_ns
            pose = self._pose
        try:
            q = self.tf.q_from(msg.name, msg.position)
            par, ch, tr, qu = self.tf.relative(q, self.tf.movable)
        except Exception:  # noqa: BLE001 - a bad message must not stop the recording; counted
            self.errors += 1
            return
        p, o = pose.pose.position, pose.pose.orientation
        par = [WORLD] + par
        ch = [PELVIS] + ch
        tr = np.vstack([[p.x, p.y, p.z], tr])
        qu = np.vstack([[o.x, o.y, o.z, o.w], qu])
        self.rec.write_dict("/tf", "tf2_msgs/msg/TFMessage", _tf_dict(t, par, ch, tr, qu))

    def _on_support(self, msg):
        from geometry_msgs.msg import Point32, PolygonStamped, PoseStamped
        from nav_msgs.msg import Path
        from std_msgs.msg import Float64, Float64MultiArray, MultiArrayDimension

        from atlas_crawl_controller.nodes.support_markers_node import markers_from_geometry
        rec = self.rec
        t = _ns(msg.header.stamp)
        with self._lock:
            pose = self._pose
        pose7 = None
        if pose is not None:
            p, o = pose.pose.position, pose.pose.orientation
            pose7 = [p.x, p.y, p.z, o.x, o.y, o.z, o.w]
        try:
            g = self._markers.geometry(msg, pose7)
        except self._sm.SupportMarkerError:
            self.errors += 1
            return
        rec.write_msg("/support_markers", EXTRA_TYPES["/support_markers"],
                      markers_from_geometry(g, self._markers, msg.header.stamp))
        arr = Float64MultiArray(data=[1.0 if c.in_contact else 0.0 for c in msg.contacts])
        arr.layout.dim = [MultiArrayDimension(label="LW RW LK RK", size=len(msg.contacts), stride=1)]
        rec.write_msg("/support/in_contact", EXTRA_TYPES["/support/in_contact"], arr)
        m = float(msg.stability_margin_m)
        if math.isfinite(m) and abs(m) < self._sm.MARGIN_SENTINEL_M:
            rec.write_msg("/support/stability_margin", EXTRA_TYPES["/support/stability_margin"], Float64(data=m))
        poly = PolygonStamped()
        poly.header.stamp = msg.header.stamp
        poly.header.frame_id = g.frame_id
        poly.polygon.points = [Point32(x=float(v[0]), y=float(v[1]), z=float(v[2])) for v in g.outline[:-1]]
        rec.write_msg("/support/polygon", EXTRA_TYPES["/support/polygon"], poly)
        c = g.com
        h = self._speed
        h.append((t, c[0], c[1]))
        while len(h) > 2 and t - h[0][0] > 1_000_000_000:
            h.popleft()
        dt = (h[-1][0] - h[0][0]) * 1e-9
        if dt > 0.2:
            v = math.hypot(h[-1][1] - h[0][1], h[-1][2] - h[0][2]) / dt
            rec.write_msg("/com/speed", EXTRA_TYPES["/com/speed"], Float64(data=v))
        if t >= self._next_path:   # a point every path_period_s; the Path (last MAX_PATH points) every 4th point
            self._next_path = t + self.path_period_ns
            ps = PoseStamped()
            ps.header.stamp = msg.header.stamp
            ps.header.frame_id = WORLD
            ps.pose.position.x, ps.pose.position.y, ps.pose.position.z = float(c[0]), float(c[1]), float(c[2])
            ps.pose.orientation.w = 1.0
            self._path.append(ps)
            self._n_path += 1
            if self._n_path % 4 == 1:
                path = Path()
                path.header.stamp = msg.header.stamp
                path.header.frame_id = WORLD
                path.poses = list(self._path)
                rec.write_msg("/com/path", EXTRA_TYPES["/com/path"], path)


def open_robot_bag(node, path: str, use_sim_time: bool = True, tf_rate_hz: float = 50.0,
                   topics: dict | None = None) -> McapRecorder:
    """An :class:`McapRecorder` of ``topics`` (default :data:`RECORD_TYPES`) plus :class:`RobotBagExtras`.

    ``use_sim_time``: log times from ``node``'s clock with use_sim_time set (the /clock of the graph), so they
    match the header stamps; else wall time."""
    if use_sim_time:
        from rclpy.parameter import Parameter
        node.set_parameters([Parameter("use_sim_time", value=True)])
        clock = node.get_clock()
        rec = McapRecorder(node, path, topics or RECORD_TYPES, transient_local=LATCHED,
                           clock=lambda: clock.now().nanoseconds)
    else:
        rec = McapRecorder(node, path, topics or RECORD_TYPES, transient_local=LATCHED)
    RobotBagExtras(rec, node, tf_rate_hz=tf_rate_hz)
    return rec


__all__ = ["open_robot_bag", "RobotBagExtras", "RobotTf", "RECORD_TYPES", "EXTRA_TYPES", "LATCHED"]
