"""Record ROS 2 topics into an MCAP file from rclpy without ros2bag (not on PyPI): serialized CDR messages as
they arrive (``raw=True`` subscriptions) with ``ros2msg`` schemas, readable by Foxglove, ``ros2 bag`` (MCAP storage)
and ``mcap_ros2.reader``.

The schema text of a type is its .msg definition followed by every dependency (80 ``=`` separators and
``MSG: pkg/Type`` headers), the format ros2bag writes; definitions are read from the ``share/<pkg>/msg`` dirs on
AMENT_PREFIX_PATH (the venv of the PyPI wheels and our install/).
"""
from __future__ import annotations

import os
import re
import threading
import time
from typing import Dict, Iterable, List, Optional

from mcap.writer import CompressionType, Writer
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

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
    main = open(_find_msg_file(pkg, name)).read()
    seen, order, stack = set(), [], _deps(pkg, main)
    while stack:
        d = stack.pop(0)
        if d in seen:
            continue
        seen.add(d)
        p, n = d.split("/")
        txt = open(_find_msg_file(p, n)).read()
        order.append((d, txt))
        stack.extend(_deps(p, txt))
    parts = [main.rstrip("\n")]
    for d, txt in order:
        parts.append("=" * 80 + f"\nMSG: {d}\n" + txt.rstrip("\n"))
    return "\n".join(parts) + "\n"


class McapRecorder:
    """Subscribe (serialized) to ``topics`` on ``node`` and write them to ``path``. Call :meth:`close` at the end."""

    def __init__(self, node, path: str, topics: Dict[str, str], transient_local: Iterable[str] = ()):
        self.path = path
        self._f = open(path, "wb")
        self._w = Writer(self._f, compression=CompressionType.ZSTD)
        self._w.start(profile="ros2", library="atlas_crawl mcap_recorder")
        self._lock = threading.Lock()
        self._closed = False
        self.counts: Dict[str, int] = {}
        self._subs = []
        for topic, type_name in topics.items():
            schema_id = self._w.register_schema(name=type_name.replace("/msg/", "/"), encoding="ros2msg",
                                                data=msgdef_text(type_name).encode())
            ch = self._w.register_channel(topic=topic, message_encoding="cdr", schema_id=schema_id)
            qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL if topic in transient_local
                             else DurabilityPolicy.VOLATILE)
            self.counts[topic] = 0
            self._subs.append(node.create_subscription(get_message(type_name), topic,
                                                       lambda data, c=ch, t=topic: self._write(c, t, data),
                                                       qos, raw=True))
        self.node = node

    def _write(self, channel: int, topic: str, data: bytes):
        now = time.time_ns()
        with self._lock:
            if self._closed:
                return
            self._w.add_message(channel_id=channel, log_time=now, data=data, publish_time=now,
                                sequence=self.counts[topic])
            self.counts[topic] += 1

    def close(self):
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


__all__ = ["McapRecorder", "msgdef_text", "summarize"]
_ = Optional
