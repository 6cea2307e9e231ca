"""support_markers node: /support_state + /atlas/pelvis_pose → /support_markers (MarkerArray) + /tf (world → pelvis).

Optional visualisation for RViz (config atlas_crawl_bringup/config/atlas_crawl.rviz, fixed frame ``world``).  The
geometry is computed by the plain class :class:`atlas_crawl_controller.support_markers.SupportMarkers` (frame
conversion, closed polygon outline, colours); this node only converts it to messages:

* ``/support_markers`` visualization_msgs/MarkerArray, frame ``world``, namespace ``support``:
  id 0 LINE_STRIP support-polygon outline on the ground (DELETE while there is no polygon), id 1 SPHERE CoM
  projection on the ground, id 2 SPHERE_LIST contact points (stance blue, swing grey), id 3 TEXT_VIEW_FACING margin
  text.  Polygon, CoM and text are green when ``statically_stable`` else red.  Stamp = the SupportState's.
* ``/tf`` tf2_msgs/TFMessage with ``world → pelvis`` from the ground-truth ``/atlas/pelvis_pose`` (plain publisher,
  no tf2_ros), so RViz shows the robot moving (robot_state_publisher provides pelvis → links).  tf2_msgs is not on
  PyPI: without it (the embedded default) the node logs a warning and publishes only the markers.

Plain (not lifecycle) node: it only observes.  Rate limits use the node clock, i.e. sim time with ``use_sim_time``.
Parameters (validated, changeable at run time): atlas_crawl_controller/config/support_markers_parameters.yaml.
Bad input (NaN, unknown frame, zero quaternion) is logged (throttled), counted in ``rejected`` and not drawn.
"""
from __future__ import annotations

import threading
from typing import Optional

from geometry_msgs.msg import Point, PoseStamped, TransformStamped
from rclpy.node import Node
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray
from atlas_crawl_msgs.msg import SupportState

from .. import support_markers as sm
from . import topics
from ._common import GuardedNodeMixin, declare_validated_parameters, spin_node
from .conversions import pose_msg_to_array

NAMESPACE = "support"
ID_POLYGON, ID_COM, ID_CONTACTS, ID_TEXT = 0, 1, 2, 3


def _color(rgba) -> ColorRGBA:
    r, g, b, a = (float(v) for v in rgba)
    return ColorRGBA(r=r, g=g, b=b, a=a)


def _point(p) -> Point:
    return Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))


def markers_from_geometry(g: sm.SupportGeometry, core: sm.SupportMarkers, stamp=None) -> MarkerArray:
    """:class:`SupportGeometry` (world frame) → MarkerArray (ids/types in the module docstring)."""
    def base(mid: int, mtype: int) -> Marker:
        m = Marker()
        m.header.frame_id = g.frame_id
        if stamp is not None:
            m.header.stamp = stamp
        m.ns = NAMESPACE
        m.id = mid
        m.type = mtype
        m.action = Marker.ADD
        m.pose.orientation.w = 1.0
        m.color = _color(g.rgba)
        return m

    poly = base(ID_POLYGON, Marker.LINE_STRIP)
    if g.outline.shape[0] >= 2:
        poly.points = [_point(p) for p in g.outline]
        poly.scale.x = core.scaled("line_width_m")
    else:
        poly.action = Marker.DELETE          # no stance contact: nothing to outline

    com = base(ID_COM, Marker.SPHERE)
    com.pose.position = _point(g.com)
    d = core.scaled("com_diameter_m")
    com.scale.x = com.scale.y = com.scale.z = d

    contacts = base(ID_CONTACTS, Marker.SPHERE_LIST)
    contacts.points = [_point(p) for p in g.contact_positions]
    contacts.colors = [_color(c) for c in g.contact_rgba]
    contacts.color = _color(sm.STANCE_RGBA)
    d = core.scaled("contact_diameter_m")
    contacts.scale.x = contacts.scale.y = contacts.scale.z = d

    text = base(ID_TEXT, Marker.TEXT_VIEW_FACING)
    text.pose.position = _point(g.text_position)
    text.text = g.text
    text.scale.z = core.scaled("text_height_m")
    return MarkerArray(markers=[poly, com, contacts, text])


def transform_from_pose(msg: PoseStamped) -> TransformStamped:
    """world → pelvis TransformStamped from the ground-truth pelvis pose (validated; quaternion normalised)."""
    a = pose_msg_to_array(msg.pose)
    pos, _ = sm.check_pose7(a)
    q = a[3:7] / float((a[3:7] ** 2).sum()) ** 0.5
    t = TransformStamped()
    t.header.stamp = msg.header.stamp
    t.header.frame_id = topics.WORLD_FRAME
    t.child_frame_id = topics.PELVIS_FRAME
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = (float(v) for v in pos)
    (t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z,
     t.transform.rotation.w) = (float(v) for v in q)
    return t


class SupportMarkersNode(GuardedNodeMixin, Node):
    """See the module docstring."""

    def __init__(self, node_name: str = "support_markers", **kwargs):
        super().__init__(node_name, **kwargs)
        self.start_diagnostics()
        self._pset = sm.parameter_set()
        declare_validated_parameters(self, self._pset, self._apply_params)
        self.core = sm.SupportMarkers(self.params)
        self._lock = threading.Lock()
        self._pose7 = None
        self._last_markers_ns: Optional[int] = None
        self._last_tf_ns: Optional[int] = None
        self.published_markers = 0
        self.published_tf = 0
        self.rejected = 0
        self.pub_markers = self.create_publisher(MarkerArray, topics.SUPPORT_MARKERS, 10)
        self._tf_type = None
        self.pub_tf = None
        try:
            from tf2_msgs.msg import TFMessage
            self._tf_type = TFMessage
            self.pub_tf = self.create_publisher(TFMessage, topics.TF, 100)
        except ImportError:
            self.get_logger().warn("tf2_msgs is not installed (not on PyPI): no world -> pelvis on /tf; "
                                   "markers are still published in frame 'world'")
        self.create_subscription(SupportState, topics.SUPPORT_STATE, self._on_support, 10)
        self.create_subscription(PoseStamped, topics.PELVIS_POSE, self._on_pose, 10)

    @property
    def tf_available(self) -> bool:
        return self.pub_tf is not None

    # ------------------------------------------------------------------ parameters
    def _apply_params(self, new) -> Optional[str]:
        with self._lock:
            reason = self.core.set_params(new)
            if reason:
                return reason
            self.params = new
        return None

    # ------------------------------------------------------------------ helpers
    def _due(self, attr: str, rate_hz: float) -> bool:
        """Rate limit on the node clock (sim time with use_sim_time); a clock jump backwards restarts it."""
        now = self.get_clock().now().nanoseconds
        last = getattr(self, attr)
        if last is None or now < last or now - last >= 1e9 / rate_hz:
            setattr(self, attr, now)
            return True
        return False

    def _reject(self, what: str, err: Exception) -> None:
        self.rejected += 1
        self.get_logger().error(f"{what} rejected: {err}", throttle_duration_sec=1.0)

    # ------------------------------------------------------------------ callbacks
    def _on_pose(self, msg: PoseStamped) -> None:
        frame = msg.header.frame_id.lstrip("/")
        try:
            if frame not in ("", topics.WORLD_FRAME):
                raise sm.SupportMarkerError(f"pelvis pose must be in frame {topics.WORLD_FRAME!r}, got {frame!r}")
            tf = transform_from_pose(msg)   # validates (NaN, zero quaternion)
        except sm.SupportMarkerError as e:
            self._reject("pelvis pose", e)
            return
        with self._lock:
            self._pose7 = pose_msg_to_array(msg.pose)
            publish = self.pub_tf is not None and self.params["publish_tf"] and \
                self._due("_last_tf_ns", self.params["tf_max_rate_hz"])
        if publish:
            self.pub_tf.publish(self._tf_type(transforms=[tf]))
            self.published_tf += 1

    def _on_support(self, msg: SupportState) -> None:
        with self._lock:
            pose7 = self._pose7
            try:
                g = self.core.geometry(msg, pose7)
            except sm.SupportMarkerError as e:
                self._reject("support state", e)
                return
            if not self._due("_last_markers_ns", self.params["max_rate_hz"]):
                return
            out = markers_from_geometry(g, self.core, msg.header.stamp)
        self.pub_markers.publish(out)
        self.published_markers += 1


def main(args=None):
    spin_node(SupportMarkersNode, args=args)


if __name__ == "__main__":
    main()
