"""Record ROS 2 topics into an MCAP file from rclpy without ros2bag (not on PyPI): serialized CDR messages as
they arrive (``raw=True`` subscriptions) with ``ros2msg`` schemas, readable by Foxglove, ``ros2 bag`` (MCAP storage)
and ``mcap_ros2.reader``.

The schema text of a type is its .msg definition followed by every dependency (80 ``=`` separators and
``MSG: pkg/Type`` headers), the format ros2bag writes; definitions are read from the ``share/<pkg>/msg`` dirs on
AMENT_PREFIX_PATH (the venv of the PyPI wheels and our install/). Types whose package is not installed (tf2_msgs is
not on PyPI) get their top-level definition from :data:`KNOWN_DEFINITIONS`; their messages are written from plain
dicts with mcap_ros2's schema-driven CDR encoder (:meth:`McapRecorder.write_dict`).

Every channel carries ``offered_qos_profiles`` metadata as rosbag2 writes it (reliable, keep-last; durability
transient_local for latched topics such as /robot_description and /tf_static, else volatile), so a replay re-offers
latched topics as latched. ``clock`` (a callable returning nanoseconds) sets the log time of every message; the
embedded demo passes the recorder node's sim-time clock, so log times and header stamps agree (TF lookups in
Foxglove use header stamps).
"""
from __future__ import annotations

import os
import re
import threading
import time
from typing import Dict, Iterable, List, Optional

from mcap.writer import CompressionType, Writer
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

#: .msg text of types whose package is not installed in the embedded venv (standard definitions).
KNOWN_DEFINITIONS = {"tf2_msgs/msg/TFMessage": "geometry_msgs/TransformStamped[] transforms\n"}

PRIMITIVES = {"bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32",
              "int64", "uint64", "string", "wstring"}


def get_message(full_type: str):
    """'pkg/msg/Type' → message class (rosidl_runtime_py is not among the PyPI wheels)."""
    import importlib
    pkg, sub, name = full_type.split("/")
    return getattr(importlib.import_module(f"{pkg}.{sub}"), name)


def _find_msg_file(pkg: str, name: str) -> str:
    roots = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    if os.environ.get("VIRTUAL_ENV"):
        roots.append(os.environ["VIRTUAL_ENV"])
    for r in roots:
        f = os.path.join(r, "share", pkg, "msg", name + ".msg")
        if os.path.exists(f):
            return f
    raise FileNotFoundError(f"{pkg}/msg/{name}.msg not found on AMENT_PREFIX_PATH")


def _deps(pkg: str, text: str) -> List[str]:
    out = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) < 2 or "=" in parts[1]:
            continue  # constants
        t = re.sub(r"\[.*?\]$", "", parts[0])
        t = re.sub(r"<=\d+$", "", t)
        if t in PRIMITIVES or t.startswith("string<=") or t.startswith("wstring<="):
            continue
        if t == "Header":
            out.append("std_msgs/Header")
        elif "/" in t:
            p, n = t.split("/")[0], t.split("/")[-1]
            out.append(f"{p}/{n}")
        else:
            out.append(f"{pkg}/{t}")
    return out


def msgdef_text(full_type: str) -> str:
    """ros2msg schema text of e.g. 'sensor_msgs/msg/JointState' (with dependencies)."""
    pkg, _, name = full_type.split("/")
    try:
        main = open(_find_msg_file(pkg, name), encoding="utf-8").read()
    except FileNotFoundError:
        if full_type not in KNOWN_DEFINITIONS:
            raise
        main = KNOWN_DEFINITIONS[full_type]
    seen, order, stack = set(), [], _deps(pkg, main)
    while stack:
        d = stack.pop(0)
        if d in seen:
            continue
        seen.add(d)
        p, n = d.split("/")
        txt = open(_find_msg_file(p, n), encoding="utf-8").read()
        order.append((d, txt))
        stack.extend(_deps(p, txt))
    parts = [main.rstrip("\n")]
    for d, txt in order:
        parts.append("=" * 80 + f"\nMSG: {d}\n" + txt.rstrip("\n"))
    return "\n".join(parts) + "\n"


def qos_profiles_yaml(latched: bool, depth: int = 10) -> str:
    """``offered_qos_profiles`` channel metadata in rosbag2's YAML (rmw enums: history 1 keep_last, reliability
    1 reliable, durability 1 transient_local / 2 volatile, liveliness 1 automatic; zero = default durations)."""
    zero = "\n    sec: 0\n    nsec: 0"
    return (f"- history: 1\n  depth: {depth}\n  reliability: 1\n  durability: {1 if latched else 2}\n"
            f"  deadline:{zero}\n  lifespan:{zero}\n  liveliness: 1\n  liveliness_lease_duration:{zero}\n"
            "  avoid_ros_namespace_conventions: false\n")


class McapRecorder:
    """Subscribe (serialized) to ``topics`` on ``node`` and write them to ``path``; :meth:`write_msg` /
    :meth:`write_dict` add messages made in this process. Call :meth:`close` at the end.

    ``clock``: callable returning the log time in ns (default: wall time)."""

    def __init__(self, node, path: str, topics: Dict[str, str], transient_local: Iterable[str] = (), clock=None):
        self.path = path
        self._f = open(path, "wb")
        self._w = Writer(self._f, compression=CompressionType.ZSTD)
        self._w.start(profile="ros2", library="atlas_crawl mcap_recorder")
        self._lock = threading.Lock()
        self._closed = False
        self._clock = clock or time.time_ns
        self.counts: Dict[str, int] = {}
        self._channels: Dict[str, int] = {}
        self._encoders: Dict[str, object] = {}
        self._subs = []
        self.node = node
        self._on_close = []
        for topic, type_name in topics.items():
            latched = topic in transient_local
            ch = self.channel(topic, type_name, latched)
            qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)
            self._subs.append(node.create_subscription(get_message(type_name), topic,
                                                       lambda data, c=ch, t=topic: self._write(c, t, data),
                                                       qos, raw=True))

    def channel(self, topic: str, type_name: str, latched: bool = False) -> int:
        """Channel id of ``topic`` (registered with its schema and QoS metadata on first use)."""
        with self._lock:
            if topic in self._channels:
                return self._channels[topic]
            schema_id = self._w.register_schema(name=type_name.replace("/msg/", "/"), encoding="ros2msg",
                                                data=msgdef_text(type_name).encode())
            ch = self._w.register_channel(topic=topic, message_encoding="cdr", schema_id=schema_id,
                                          metadata={"offered_qos_profiles": qos_profiles_yaml(latched)})
            self._channels[topic] = ch
            self.counts[topic] = 0
            return ch

    def now_ns(self) -> int:
        return int(self._clock())

    def _write(self, channel: int, topic: str, data: bytes, log_time: Optional[int] = None):
        now = self.now_ns() if log_time is None else int(log_time)
        with self._lock:
            if self._closed:
                return
            self._w.add_message(channel_id=channel, log_time=now, data=data, publish_time=now,
                                sequence=self.counts[topic])
            self.counts[topic] += 1

    def write_msg(self, topic: str, type_name: str, msg, latched: bool = False, log_time: Optional[int] = None):
        """Write a message object of an importable type (serialized with rclpy)."""
        from rclpy.serialization import serialize_message
        self._write(self.channel(topic, type_name, latched), topic, serialize_message(msg), log_time)

    def write_dict(self, topic: str, type_name: str, value: dict, latched: bool = False,
                   log_time: Optional[int] = None):
        """Write a message given as nested dicts, encoded from the schema text (no Python type needed)."""
        from mcap_ros2._dynamic import serialize_dynamic
        ch = self.channel(topic, type_name, latched)
        enc = self._encoders.get(type_name)
        if enc is None:
            short = type_name.replace("/msg/", "/")
            enc = self._encoders[type_name] = serialize_dynamic(short, msgdef_text(type_name))[short]
        self._write(ch, topic, enc(value), log_time)

    def add_close_hook(self, fn):
        """Called (before the file is finished) by :meth:`close`, e.g. to stop side-car subscriptions."""
        self._on_close.append(fn)

    def close(self):
        for fn in self._on_close:
            try:
                fn()
            except Exception:  # noqa: BLE001 - closing must finish the file
                pass
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for s in self._subs:
                try:
                    self.node.destroy_subscription(s)
                except Exception:
                    pass
            self._w.finish()
            self._f.close()


def summarize(path: str) -> Dict[str, int]:
    """Message count per topic, decoding every message with mcap_ros2 (proves the file is readable)."""
    from mcap_ros2.reader import read_ros2_messages
    counts: Dict[str, int] = {}
    for m in read_ros2_messages(path):
        counts[m.channel.topic] = counts.get(m.channel.topic, 0) + 1
    return counts


__all__ = ["McapRecorder", "msgdef_text", "summarize", "qos_profiles_yaml", "KNOWN_DEFINITIONS"]
