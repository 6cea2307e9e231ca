"""support_markers_node live (real rclpy, one process): SupportState + pelvis pose in → MarkerArray (+ /tf) out,
rate limit on sim time (use_sim_time), bad input rejected."""
import math
import os
import random
import threading
import time

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("visualization_msgs")

from atlas_crawl_msgs.msg import ContactState, SupportState  # noqa: E402
from builtin_interfaces.msg import Time as TimeMsg  # noqa: E402
from geometry_msgs.msg import Point, PoseStamped  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

from atlas_crawl_controller.nodes import topics  # noqa: E402
from atlas_crawl_controller.nodes.support_markers_node import (ID_COM, ID_CONTACTS, ID_POLYGON, ID_TEXT,  # noqa: E402
                                                               SupportMarkersNode)
from atlas_crawl_controller.support_markers import STABLE_RGBA, STANCE_RGBA, SWING_RGBA, UNSTABLE_RGBA  # noqa: E402

try:
    from tf2_msgs.msg import TFMessage
except ImportError:          # not on PyPI: the embedded default has no tf2_msgs
    TFMessage = None

NAMES = ("l_wrist_contact", "r_wrist_contact", "l_knee_contact", "r_knee_contact")
# Pelvis at (1, 2, 0.8), yaw +90°, pitch +60° (hand-checked in test_support_markers.py): spatial x = world +y,
# spatial y = world -x, spatial z = world z.
POSE = (1.0, 2.0, 0.8, -math.sqrt(2) / 4, math.sqrt(2) / 4, math.sqrt(6) / 4, math.sqrt(6) / 4)
RATE_HZ = 5.0
WAIT_S = 15.0


def wait_for(pred, timeout_s=WAIT_S):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        if pred():
            return True
        time.sleep(0.01)
    return bool(pred())


def stamp(t):
    return TimeMsg(sec=int(t), nanosec=int(round((t - int(t)) * 1e9)))


def support_msg(t, frame="spatial", stable=True, empty=False, nan=False):
    m = SupportState()
    m.header.frame_id = frame
    m.header.stamp = stamp(t)
    pts = [(0.3, 0.2, -0.7), (0.3, -0.2, -0.7), (-0.3, 0.2, -0.7), (-0.3, -0.2, -0.7)]
    cs = []
    for i, n in enumerate(NAMES):
        c = ContactState(name=n, in_contact=(not empty) and (stable or i != 1), method=ContactState.METHOD_HEIGHT)
        c.position = Point(x=pts[i][0], y=pts[i][1], z=pts[i][2] if not (nan and i == 2) else float("nan"))
        cs.append(c)
    m.contacts = cs
    if not empty:
        m.support_polygon = [Point(x=0.3, y=-0.2), Point(x=0.3, y=0.2), Point(x=-0.3, y=0.2), Point(x=-0.3, y=-0.2)]
    m.com_projection = Point(x=0.1, y=0.05)
    m.stability_margin_m = 0.05 if not empty else -1e9
    m.statically_stable = stable
    return m


def spatial_to_world_xy(x, y):
    return 1.0 - y, 2.0 + x


@pytest.fixture(scope="module")
def live():
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(1, 200)))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    node = SupportMarkersNode(context=ctx, parameter_overrides=[
        Parameter("use_sim_time", value=True), Parameter("max_rate_hz", value=RATE_HZ),
        Parameter("tf_max_rate_hz", value=RATE_HZ)])
    probe = rclpy.create_node("support_markers_probe", context=ctx)
    got = {"markers": [], "tf": []}
    probe.create_subscription(MarkerArray, topics.SUPPORT_MARKERS, got["markers"].append, 50)
    if TFMessage is not None:
        probe.create_subscription(TFMessage, topics.TF, got["tf"].append, 100)
    pubs = {"clock": probe.create_publisher(Clock, topics.CLOCK, 10),
            "support": probe.create_publisher(SupportState, topics.SUPPORT_STATE, 10),
            "pose": probe.create_publisher(PoseStamped, topics.PELVIS_POSE, 10)}
    ex = SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    ex.add_node(probe)
    th = threading.Thread(target=ex.spin, daemon=True)
    th.start()
    assert wait_for(lambda: all(p.get_subscription_count() > 0 for p in pubs.values())), "discovery"
    assert wait_for(lambda: probe.count_publishers(topics.SUPPORT_MARKERS) > 0)

    def set_clock(t):
        """Publish sim time t and wait until the node's clock shows it."""
        target = int(round(t * 1e9))
        ok = wait_for(lambda: (pubs["clock"].publish(Clock(clock=stamp(t))) or
                               node.get_clock().now().nanoseconds == target), WAIT_S)
        assert ok, f"node clock did not reach sim time {t}"

    yield {"node": node, "probe": probe, "got": got, "pubs": pubs, "set_clock": set_clock}
    ex.shutdown(timeout_sec=5.0)
    th.join(timeout=5.0)
    node.destroy_node()
    probe.destroy_node()
    rclpy.shutdown(context=ctx)


def _pose_msg(t):
    p = PoseStamped()
    p.header.frame_id = "world"
    p.header.stamp = stamp(t)
    (p.pose.position.x, p.pose.position.y, p.pose.position.z, p.pose.orientation.x, p.pose.orientation.y,
     p.pose.orientation.z, p.pose.orientation.w) = POSE
    return p


def _by_id(arr: MarkerArray):
    return {m.id: m for m in arr.markers}


def _rgba(c):
    return (c.r, c.g, c.b, c.a)


def test_markers_content(live):
    node, got, pubs = live["node"], live["got"], live["pubs"]
    live["set_clock"](10.0)
    pubs["pose"].publish(_pose_msg(10.0))
    assert wait_for(lambda: node._pose7 is not None)
    pubs["support"].publish(support_msg(10.0))
    assert wait_for(lambda: len(got["markers"]) >= 1), "no MarkerArray on /support_markers"
    ms = _by_id(got["markers"][-1])
    assert set(ms) == {ID_POLYGON, ID_COM, ID_CONTACTS, ID_TEXT}
    z = node.params["ground_height_m"] + node.params["lift_m"]
    for m in ms.values():
        assert m.header.frame_id == "world" and m.header.stamp.sec == 10 and m.action == Marker.ADD
        assert m.pose.orientation.w == 1.0

    poly = ms[ID_POLYGON]
    assert poly.type == Marker.LINE_STRIP and len(poly.points) == 5 and poly.scale.x > 0
    xy = np.array([[p.x, p.y] for p in poly.points])
    np.testing.assert_allclose(xy[0], xy[-1])
    np.testing.assert_allclose(xy[:4], [spatial_to_world_xy(*v) for v in
                                        [(0.3, -0.2), (0.3, 0.2), (-0.3, 0.2), (-0.3, -0.2)]], atol=1e-9)
    assert all(abs(p.z - z) < 1e-9 for p in poly.points)
    assert _rgba(poly.color) == pytest.approx(STABLE_RGBA)

    com = ms[ID_COM]
    assert com.type == Marker.SPHERE and com.scale.x > 0
    np.testing.assert_allclose([com.pose.position.x, com.pose.position.y, com.pose.position.z],
                               [*spatial_to_world_xy(0.1, 0.05), z], atol=1e-9)
    assert _rgba(com.color) == pytest.approx(STABLE_RGBA)

    c = ms[ID_CONTACTS]
    assert c.type == Marker.SPHERE_LIST and len(c.points) == 4 and len(c.colors) == 4
    np.testing.assert_allclose([c.points[0].x, c.points[0].y, c.points[0].z], [0.8, 2.3, 0.1], atol=1e-9)
    assert all(_rgba(k) == pytest.approx(STANCE_RGBA) for k in c.colors)

    t = ms[ID_TEXT]
    assert t.type == Marker.TEXT_VIEW_FACING and "margin +5.0 cm" in t.text and "STABLE" in t.text
    assert t.pose.position.z > z


def test_rate_limit_runs_on_sim_time_and_unstable_colour(live):
    node, got, pubs = live["node"], live["got"], live["pubs"]
    live["set_clock"](10.0)
    n0 = node.published_markers
    n_msgs = len(got["markers"])
    # Sim time frozen at 10 s (where the last MarkerArray was published) while > 1 / RATE_HZ of wall time passes
    # (a wall-clock rate limit would let the next one through): dropped, however long we wait.
    time.sleep(3.0 / RATE_HZ)
    pubs["support"].publish(support_msg(10.0, stable=False))
    time.sleep(1.0)
    assert node.published_markers == n0 and len(got["markers"]) == n_msgs
    # Sim time advances by more than 1 / RATE_HZ: the next one goes out.
    live["set_clock"](10.5)
    pubs["support"].publish(support_msg(10.5, stable=False, empty=True))
    assert wait_for(lambda: len(got["markers"]) > n_msgs)
    ms = _by_id(got["markers"][-1])
    assert ms[ID_POLYGON].action == Marker.DELETE                     # no polygon → outline removed
    assert _rgba(ms[ID_COM].color) == pytest.approx(UNSTABLE_RGBA)
    assert all(_rgba(k) == pytest.approx(SWING_RGBA) for k in ms[ID_CONTACTS].colors)
    assert "margin n/a" in ms[ID_TEXT].text and "UNSTABLE" in ms[ID_TEXT].text


def test_nan_support_rejected_nothing_published(live):
    node, got, pubs = live["node"], live["got"], live["pubs"]
    live["set_clock"](20.0)
    r0, n_msgs = node.rejected, len(got["markers"])
    pubs["support"].publish(support_msg(20.0, nan=True))
    assert wait_for(lambda: node.rejected > r0)
    time.sleep(0.3)
    assert len(got["markers"]) == n_msgs
    pubs["support"].publish(support_msg(20.0))          # the slot was not used by the rejected message
    assert wait_for(lambda: len(got["markers"]) > n_msgs)


def test_parameters_validated_at_run_time(live):
    node = live["node"]
    r = node.set_parameters([Parameter("marker_scale", value=-1.0)])[0]
    assert not r.successful and "marker_scale" in r.reason
    r = node.set_parameters([Parameter("spatial_forward_axis", value="y")])[0]
    assert not r.successful
    assert node.set_parameters([Parameter("marker_scale", value=2.0)])[0].successful
    assert node.core.scaled("com_diameter_m") == pytest.approx(2.0 * node.params["com_diameter_m"])


@pytest.mark.skipif(TFMessage is None, reason="tf2_msgs not installed (not on PyPI; the embedded default has none)")
def test_tf_world_to_pelvis(live):
    node, got, pubs = live["node"], live["got"], live["pubs"]
    assert node.tf_available
    live["set_clock"](30.0)
    pubs["pose"].publish(_pose_msg(30.0))
    assert wait_for(lambda: any(m.transforms[0].header.stamp.sec == 30 for m in got["tf"])), "no world->pelvis"
    tf = [m for m in got["tf"] if m.transforms[0].header.stamp.sec == 30][-1].transforms[0]
    assert tf.header.frame_id == "world" and tf.child_frame_id == "pelvis"
    tr, q = tf.transform.translation, tf.transform.rotation
    np.testing.assert_allclose([tr.x, tr.y, tr.z, q.x, q.y, q.z, q.w], POSE, atol=1e-9)
