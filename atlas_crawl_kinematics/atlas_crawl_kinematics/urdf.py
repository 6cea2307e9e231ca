"""Minimal URDF parser (xml.etree) producing the static data of a kinematic tree.

Only what kinematics needs: links (mass, CoM, inertia in the link frame), joints (type, parent, child, origin,
axis, limits).  Geometry, visuals, transmissions and simulator tags are ignored.  URDF conventions (REP 103/120):
the child link frame coincides with the joint frame; ``<origin rpy>`` is the fixed-axis roll-pitch-yaw
``R = Rz(yaw) Ry(pitch) Rx(roll)``; the joint axis is expressed in the joint (= child) frame.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

__all__ = ["UrdfError", "UrdfLink", "UrdfJoint", "parse_urdf", "rpy_to_matrix"]

MOVABLE_TYPES = ("revolute", "continuous")


class UrdfError(ValueError):
    """The URDF string is malformed or describes something this package does not support."""


@dataclass
class UrdfLink:
    name: str
    mass: float = 0.0
    com: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))
    inertia: NDArray[np.float64] = field(default_factory=lambda: np.zeros((3, 3)))  # about the CoM, link axes


@dataclass
class UrdfJoint:
    name: str
    type: str
    parent: str
    child: str
    origin: NDArray[np.float64]  # 4x4 parent <- joint frame
    axis: NDArray[np.float64]  # unit axis in the joint frame
    lower: float = -np.inf
    upper: float = np.inf
    effort: float = np.inf
    velocity: float = np.inf


def rpy_to_matrix(rpy: NDArray[np.float64] | tuple[float, float, float]) -> NDArray[np.float64]:
    """URDF fixed-axis roll/pitch/yaw: ``R = Rz(y) @ Ry(p) @ Rx(r)``."""
    r, p, y = (float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def _vec(text: str | None, default: tuple[float, ...]) -> NDArray[np.float64]:
    if text is None:
        return np.array(default, dtype=float)
    vals = [float(t) for t in text.split()]
    if len(vals) != len(default):
        raise UrdfError(f"expected {len(default)} numbers, got {text!r}")
    return np.array(vals)


def _origin(elem: ET.Element | None) -> NDArray[np.float64]:
    T = np.eye(4)
    if elem is not None:
        T[:3, :3] = rpy_to_matrix(_vec(elem.get("rpy"), (0.0, 0.0, 0.0)))
        T[:3, 3] = _vec(elem.get("xyz"), (0.0, 0.0, 0.0))
    return T


def parse_urdf(urdf: str) -> tuple[str, dict[str, UrdfLink], dict[str, UrdfJoint]]:
    """Parse a URDF string. Returns ``(robot_name, links, joints)`` (dicts keep document order)."""
    try:
        root = ET.fromstring(urdf)
    except ET.ParseError as exc:
        raise UrdfError(f"URDF is not valid XML: {exc}") from exc
    if root.tag != "robot":
        raise UrdfError(f"URDF root element must be <robot>, got <{root.tag}>")
    links: dict[str, UrdfLink] = {}
    for le in root.findall("link"):
        name = le.get("name")
        if not name:
            raise UrdfError("<link> without a name")
        link = UrdfLink(name)
        ine = le.find("inertial")
        if ine is not None:
            o = _origin(ine.find("origin"))
            me = ine.find("mass")
            link.mass = float(me.get("value", "0")) if me is not None else 0.0
            link.com = o[:3, 3].copy()
            ie = ine.find("inertia")
            if ie is not None:
                g = {k: float(ie.get(k, "0")) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
                I = np.array(
                    [[g["ixx"], g["ixy"], g["ixz"]], [g["ixy"], g["iyy"], g["iyz"]], [g["ixz"], g["iyz"], g["izz"]]]
                )
                link.inertia = o[:3, :3] @ I @ o[:3, :3].T
        if name in links:
            raise UrdfError(f"duplicate link {name!r}")
        links[name] = link
    joints: dict[str, UrdfJoint] = {}
    for je in root.findall("joint"):
        name = je.get("name")
        jtype = je.get("type", "")
        pe, ce = je.find("parent"), je.find("child")
        if not name or pe is None or ce is None:
            raise UrdfError(f"malformed <joint> {name!r}")
        if jtype not in MOVABLE_TYPES + ("fixed",):
            raise UrdfError(f"joint {name!r}: type {jtype!r} not supported (revolute/continuous/fixed only)")
        axis = _vec(je.find("axis").get("xyz") if je.find("axis") is not None else None, (1.0, 0.0, 0.0))
        n = np.linalg.norm(axis)
        if jtype != "fixed" and n == 0.0:
            raise UrdfError(f"joint {name!r} has a zero axis")
        j = UrdfJoint(name, jtype, pe.get("link", ""), ce.get("link", ""), _origin(je.find("origin")),
                      axis / n if n > 0 else axis)
        lim = je.find("limit")
        if lim is not None:
            j.effort = float(lim.get("effort", "inf"))
            j.velocity = float(lim.get("velocity", "inf"))
            if jtype == "revolute":
                j.lower = float(lim.get("lower", "0"))
                j.upper = float(lim.get("upper", "0"))
        for ln in (j.parent, j.child):
            if ln not in links:
                raise UrdfError(f"joint {name!r} references unknown link {ln!r}")
        if name in joints:
            raise UrdfError(f"duplicate joint {name!r}")
        joints[name] = j
    return root.get("name", ""), links, joints
