"""The sim node publishes the ground-truth height map (atlas_crawl_msgs/HeightMap) and it decodes into a checked
HeightMap whose heights match the flat floor under the robot."""
import math
import threading

from atlas_crawl_controller.height_map import HeightMap
from atlas_crawl_controller.nodes import topics
from atlas_crawl_msgs.msg import HeightMap as HeightMapMsg
from ros_fixtures import stack  # noqa: F401


def test_height_map_topic(stack):  # noqa: F811
    node = stack.create_node("height_map_probe")
    got, ev = [], threading.Event()
    node.create_subscription(HeightMapMsg, topics.HEIGHT_MAP, lambda m: (got.append(m), ev.set()), 2)
    assert ev.wait(30.0), "no /atlas/height_map within 30 s"
    m = got[-1]
    hm = HeightMap.from_fields(m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec, m.resolution_m, m.size_x,
                               m.size_y, m.origin_x_m, m.origin_y_m, m.heights_m)
    assert m.size_x == m.size_y == 40 and m.header.frame_id == topics.WORLD_FRAME
    pos = stack.sim.sim.pelvis_pose()[0]
    h = hm.height_at(pos[0], pos[1])                 # under the robot: the floor, not the robot
    assert math.isfinite(h) and abs(h) < 1e-6, h


def test_the_sequencer_reports_planning_on_the_map(stack):  # noqa: F811
    """/diagnostics of gait_sequencer: terrain "map" once height maps arrive (issue 13 §2: otherwise "blind: why")."""
    from diagnostic_msgs.msg import DiagnosticArray
    node = stack.create_node("terrain_probe")
    seen, ev = [], threading.Event()

    def on_diag(msg):
        for st in msg.status:
            if "gait_sequencer" in st.name:
                kv = {k.key: k.value for k in st.values}
                if "terrain" in kv:
                    seen.append(kv["terrain"])
                    if kv["terrain"] == "map":
                        ev.set()
    node.create_subscription(DiagnosticArray, "/diagnostics", on_diag, 10)
    assert ev.wait(30.0), f"gait_sequencer never reported terrain 'map' (saw {seen[-3:]})"


def test_a_malformed_height_map_is_refused_with_a_reason(stack):  # noqa: F811
    """A map whose heights do not fill its grid: gait_sequencer refuses it (counted, reason on /diagnostics) and
    keeps planning on the last good one."""
    from diagnostic_msgs.msg import DiagnosticArray
    node = stack.create_node("bad_map_probe")
    pub = node.create_publisher(HeightMapMsg, topics.HEIGHT_MAP, 2)
    bad = HeightMapMsg()
    bad.header.frame_id = topics.WORLD_FRAME
    bad.resolution_m, bad.size_x, bad.size_y = 0.05, 4, 4
    bad.heights_m = [0.0] * 5
    seen, ev = {}, threading.Event()

    def on_diag(msg):
        for st in msg.status:
            if "gait_sequencer" in st.name:
                kv = {k.key: k.value for k in st.values}
                if "rejected /atlas/height_map" in kv:
                    seen.update(kv)
                    ev.set()
    node.create_subscription(DiagnosticArray, "/diagnostics", on_diag, 10)
    for _ in range(50):
        pub.publish(bad)
        if ev.wait(0.2):
            break
    assert ev.is_set(), "the malformed map was not reported as rejected"
    assert "5 heights for a 4 x 4 grid" in seen["last rejected /atlas/height_map"]
