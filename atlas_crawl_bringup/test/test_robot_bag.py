"""Recorded MCAP bags open ready-made: /robot_description (latched), complete /tf + /tf_static, markers, odometry,
contact/support state in standard types (issue 15). One short live recording of the embedded graph (a crawl
cycle, ~4 s of sim time) is opened with the ``mcap`` library; a few offline checks need no graph."""
import math
import os

import numpy as np
import pytest
import yaml

from atlas_crawl_bringup import robot_bag
from atlas_crawl_bringup.mcap_recorder import McapRecorder, msgdef_text, qos_profiles_yaml


def _read(path):
    """{topic: [(log_time, decoded message)]}, {topic: channel}, {topic: schema} via mcap + mcap_ros2."""
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    msgs, chans, schemas = {}, {}, {}
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        summary = reader.get_summary()
        for ch in summary.channels.values():
            chans[ch.topic] = ch
            schemas[ch.topic] = summary.schemas[ch.schema_id]
        for _schema, ch, m, dec in reader.iter_decoded_messages():
            msgs.setdefault(ch.topic, []).append((m.log_time, dec))
    return msgs, chans, schemas


# ------------------------------------------------------------------ offline
def test_qos_metadata_yaml_latched_and_volatile():
    lat, vol = yaml.safe_load(qos_profiles_yaml(True))[0], yaml.safe_load(qos_profiles_yaml(False))[0]
    assert lat["durability"] == 1 and vol["durability"] == 2      # rmw: 1 transient_local, 2 volatile
    assert lat["reliability"] == 1 and lat["history"] == 1


def test_tfmessage_schema_without_tf2_msgs_package():
    txt = msgdef_text("tf2_msgs/msg/TFMessage")
    assert txt.startswith("geometry_msgs/TransformStamped[] transforms")
    for dep in ("MSG: geometry_msgs/TransformStamped", "MSG: geometry_msgs/Transform", "MSG: std_msgs/Header",
                "MSG: geometry_msgs/Quaternion"):
        assert dep in txt


def test_write_dict_and_msg_round_trip(tmp_path):
    from std_msgs.msg import String
    p = str(tmp_path / "x.mcap")
    rec = McapRecorder(None, p, {}, clock=lambda: 5)
    rec.write_msg("/robot_description", "std_msgs/msg/String", String(data="<robot/>"), latched=True)
    tf = {"transforms": [{"header": {"stamp": {"sec": 1, "nanosec": 2}, "frame_id": "world"},
                          "child_frame_id": "pelvis",
                          "transform": {"translation": {"x": 1.0, "y": 2.0, "z": 3.0},
                                        "rotation": {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0}}}]}
    rec.write_dict("/tf", "tf2_msgs/msg/TFMessage", tf)
    rec.close()
    msgs, chans, schemas = _read(p)
    assert schemas["/tf"].name == "tf2_msgs/TFMessage" and schemas["/tf"].encoding == "ros2msg"
    t = msgs["/tf"][0][1].transforms[0]
    assert (t.header.frame_id, t.child_frame_id, t.transform.translation.y, t.header.stamp.nanosec) == \
        ("world", "pelvis", 2.0, 2)
    assert msgs["/robot_description"][0] == (5, msgs["/robot_description"][0][1])
    assert yaml.safe_load(chans["/robot_description"].metadata["offered_qos_profiles"])[0]["durability"] == 1
    assert yaml.safe_load(chans["/tf"].metadata["offered_qos_profiles"])[0]["durability"] == 2


def test_robot_tf_matches_fk_chain():
    """Composing the parent->child transforms reproduces the FK pose of a contact frame in the pelvis frame."""
    import atlas_description
    from scipy.spatial.transform import Rotation
    tf = robot_bag.RobotTf(atlas_description.urdf_string())
    q = np.random.default_rng(3).uniform(-0.5, 0.5, tf.model.n_joints)
    par, ch, tr, qu = tf.relative(q, np.concatenate([tf.movable, tf.fixed]))
    edges = {c: (p, t, Rotation.from_quat(r).as_matrix()) for p, c, t, r in zip(par, ch, tr, qu)}
    frame, T = "l_wrist_contact", np.eye(4)
    while frame != tf.model.root_name:
        p, t, R = edges[frame]
        E = np.eye(4)
        E[:3, :3], E[:3, 3] = R, t
        T = E @ T
        frame = p
    np.testing.assert_allclose(T[:3, 3], tf.model.forward(q).position("l_wrist_contact"), atol=1e-9)


# ------------------------------------------------------------------ live recording
@pytest.fixture(scope="module")
def bag(tmp_path_factory):
    os.environ.setdefault("ROS_DOMAIN_ID", "47")
    from atlas_crawl_bringup.stack import Stack
    from atlas_crawl_controller.nodes.goal_client import GoalClient
    path = str(tmp_path_factory.mktemp("bag") / "run.mcap")
    stack = Stack()
    try:
        rec = robot_bag.open_robot_bag(stack.create_node("test_bag_recorder"), path)
        gc = GoalClient(stack.create_node("test_bag_client"))
        assert gc.wait_for_servers(20.0)
        assert stack.wait_sim_time(1.0)
        r = gc.run("crawl", {"cycles": 1, "direction": 0, "loop_mode": 1}, result_timeout_s=300.0)
        assert r.status == "succeeded", r
        assert stack.wait_sim_time(0.5)
        rec.close()
    finally:
        stack.close()
    return _read(path)


def test_bag_has_every_replay_topic_with_standard_schema(bag):
    msgs, chans, schemas = bag
    want = dict(robot_bag.EXTRA_TYPES)
    want["/atlas/pelvis_odom"] = "nav_msgs/msg/Odometry"
    want["/joint_states"] = "sensor_msgs/msg/JointState"
    for topic, type_name in want.items():
        assert topic in chans, f"{topic} missing"
        assert schemas[topic].name == type_name.replace("/msg/", "/")
        assert schemas[topic].encoding == "ros2msg" and chans[topic].message_encoding == "cdr"
        assert "offered_qos_profiles" in chans[topic].metadata
        assert msgs.get(topic), f"{topic}: no message"
    for topic in ("/robot_description", "/tf_static"):
        assert len(msgs[topic]) == 1
        assert yaml.safe_load(chans[topic].metadata["offered_qos_profiles"])[0]["durability"] == 1
    assert "<robot" in msgs["/robot_description"][0][1].data


def test_bag_tf_tree_is_complete(bag):
    """Every link of /robot_description is reachable from 'world' through /tf_static + one /tf message."""
    import xml.etree.ElementTree as ET
    msgs = bag[0]
    links = {e.get("name") for e in ET.fromstring(msgs["/robot_description"][0][1].data).iter("link")}
    parent = {t.child_frame_id: t.header.frame_id for t in msgs["/tf_static"][0][1].transforms}
    parent.update({t.child_frame_id: t.header.frame_id for t in msgs["/tf"][-1][1].transforms})
    for link in links:
        f, n = link, 0
        while f != "world" and n < 100:
            assert f in parent, f"{link}: no transform to {f}'s parent"
            f, n = parent[f], n + 1
        assert f == "world"


def test_bag_tf_puts_the_wrist_where_the_simulator_saw_it(bag):
    """world->pelvis (ground truth) composed with our FK chain vs the simulator's contact site (ground truth)."""
    from scipy.spatial.transform import Rotation
    msgs = bag[0]
    static = {t.child_frame_id: t for t in msgs["/tf_static"][0][1].transforms}
    gt = msgs["/atlas/contacts_ground_truth"]
    gt_t = np.array([_stamp(m.header.stamp) for _, m in gt])
    errs = []
    for _, tfm in msgs["/tf"][::50]:
        edges = dict(static)
        edges.update({t.child_frame_id: t for t in tfm.transforms})
        stamp = _stamp(tfm.transforms[0].header.stamp)
        T, f = np.eye(4), "l_wrist_contact"
        while f != "world":
            e = edges[f]
            E = np.eye(4)
            r = e.transform.rotation
            E[:3, :3] = Rotation.from_quat([r.x, r.y, r.z, r.w]).as_matrix()
            E[:3, 3] = [e.transform.translation.x, e.transform.translation.y, e.transform.translation.z]
            T = E @ T
            f = e.header.frame_id
        k = int(np.argmin(np.abs(gt_t - stamp)))
        if abs(gt_t[k] - stamp) > 0.011:
            continue
        c = gt[k][1].contacts[0]
        assert c.name == "l_wrist_contact"
        errs.append(np.linalg.norm(T[:3, 3] - [c.position.x, c.position.y, c.position.z]))
    assert len(errs) >= 3
    assert max(errs) < 0.02, errs      # same instant within 10 ms; the wrist moves < 1 m/s


def test_bag_support_topics_consistent(bag):
    msgs = bag[0]
    ss = msgs["/support_state"]
    inc = msgs["/support/in_contact"]
    poly = msgs["/support/polygon"]
    assert len(inc) == len(poly) and len(inc) >= 0.8 * len(ss)   # own subscription: may start a little later
    by_stamp = {}
    for _, m in ss:                          # several support states may share a pose stamp
        by_stamp.setdefault(_stamp(m.header.stamp), []).append([1.0 if c.in_contact else 0.0 for c in m.contacts])
    for (_, p), (_, b) in zip(poly, inc):    # written together by one callback
        assert list(b.data) in by_stamp[_stamp(p.header.stamp)]
    margins = [m.data for _, m in msgs["/support/stability_margin"]]
    assert all(math.isfinite(v) for v in margins)
    path = msgs["/com/path"][-1][1]
    assert path.header.frame_id == "world" and len(path.poses) >= 4
    dx = path.poses[-1].pose.position.x - path.poses[0].pose.position.x
    assert dx > 0.1, dx                 # one crawl cycle forward moves the CoM
    markers = msgs["/support_markers"][-1][1].markers
    assert {m.ns for m in markers} == {"support"} and len(markers) == 4
    assert all(0.0 <= m.data < 1.0 for _, m in msgs["/com/speed"])


def _stamp(s):
    return s.sec + 1e-9 * s.nanosec


# ------------------------------------------------------------------ shipped replay configs
_CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config")
_BAG_TOPICS = set(robot_bag.RECORD_TYPES) | set(robot_bag.EXTRA_TYPES)


def _layout_topics(node):
    """Every topic a Foxglove layout names: 'topic' values, keys of 'topics' and message paths' roots."""
    out = set()
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "topics" and isinstance(v, dict):
                out |= set(v)
            elif k in ("topic", "value") and isinstance(v, str) and v.startswith("/"):
                out.add(v.split(".", 1)[0])
            else:
                out |= _layout_topics(v)
    elif isinstance(node, list):
        for v in node:
            out |= _layout_topics(v)
    return out


def test_foxglove_layout_uses_only_recorded_topics():
    import json
    lay = json.load(open(os.path.join(_CONFIG, "foxglove_layout.json")))
    topics = _layout_topics(lay["configById"])
    assert {"/robot_description", "/support_markers", "/com/path", "/com/speed", "/support/stability_margin",
            "/support/in_contact"} <= topics
    assert topics <= _BAG_TOPICS, topics - _BAG_TOPICS
    panels = set(lay["configById"])

    def leaves(n):
        return {n} if isinstance(n, str) else leaves(n["first"]) | leaves(n["second"])
    assert leaves(lay["layout"]) == panels          # every panel is placed, none missing
    urdf = [la for la in lay["configById"]["3D!robot"]["layers"].values() if la["layerId"] == "foxglove.Urdf"]
    assert urdf and urdf[0]["sourceType"] == "topic" and urdf[0]["topic"] == "/robot_description"


def test_replay_rviz_config_uses_only_recorded_topics():
    cfg = yaml.safe_load(open(os.path.join(_CONFIG, "atlas_crawl_replay.rviz")))
    vm = cfg["Visualization Manager"]
    assert vm["Global Options"]["Fixed Frame"] == "world"
    topics = {}
    for d in vm["Displays"]:
        t = d.get("Topic") or d.get("Description Topic")
        if t:
            topics[t["Value"]] = t
    assert {"/robot_description", "/support_markers", "/com/path"} <= set(topics)
    assert set(topics) <= _BAG_TOPICS
    assert topics["/robot_description"]["Durability Policy"] == "Transient Local"   # latched in the bag
