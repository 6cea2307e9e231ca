"""Conversions between the plain-Python types of the core and atlas_crawl_msgs / common ROS messages."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from atlas_crawl_msgs.msg import ContactState, ControllerReference, ControllerStatus, HeightMap, SupportState
from geometry_msgs.msg import Point, Pose

from atlas_description import CONTACT_FRAMES

from ..controller_core import Reference, Status
from ..height_map import HeightMap as HeightMapView


def pose_msg_to_array(p: Pose) -> np.ndarray:
    """geometry_msgs/Pose → (7,) [x y z qx qy qz qw]."""
    return np.array([p.position.x, p.position.y, p.position.z,
                     p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w], float)


def array_to_pose_msg(a) -> Pose:
    p = Pose()
    a = [float(v) for v in a]
    p.position.x, p.position.y, p.position.z = a[0:3]
    p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w = a[3:7]
    return p


def height_map_from_msg(m: HeightMap, stamp_s: float) -> HeightMapView:
    """atlas_crawl_msgs/HeightMap → the checked :class:`HeightMapView` stamped ``stamp_s`` (the receiver's choice:
    its header or the arrival time); raises HeightMapError with the reason on a malformed map."""
    return HeightMapView.from_fields(stamp_s, m.resolution_m, m.size_x, m.size_y, m.origin_x_m, m.origin_y_m,
                                     m.heights_m)


def height_map_to_msg(hm: HeightMapView, stamp, frame_id: str) -> HeightMap:
    """:class:`HeightMapView` → atlas_crawl_msgs/HeightMap (``stamp`` a builtin_interfaces/Time)."""
    m = HeightMap()
    m.header.stamp = stamp
    m.header.frame_id = frame_id
    m.resolution_m = float(hm.resolution_m)
    m.size_y, m.size_x = (int(v) for v in hm.heights.shape)
    m.origin_x_m, m.origin_y_m = (float(v) for v in hm.origin_xy)
    m.heights_m = hm.heights.ravel().tolist()
    return m


def reference_from_msg(m: ControllerReference) -> Reference:
    tg = None
    if len(m.contact_targets):
        tg = np.array([[p.x, p.y, p.z] for p in m.contact_targets], float)
    return Reference(mode=int(m.mode), sequence_id=int(m.sequence_id), joint_names=list(m.joint_names),
                     joint_positions_rad=np.asarray(m.joint_positions_rad, float), duration_s=float(m.duration_s),
                     contact_targets=tg, stance=[bool(s) for s in m.stance], com_modulation=bool(m.com_modulation),
                     sender=str(m.sender), queue=bool(m.queue), swing_lift_m=[float(v) for v in m.swing_lift_m],
                     com_support=[bool(s) for s in m.com_support],
                     heading_rad=float(m.heading_rad[0]) if len(m.heading_rad) else None,
                     drift_correction_max_m=float(m.drift_correction_max_m[0]) if len(m.drift_correction_max_m)
                     else None)


def reference_to_msg(r: Reference, stamp=None) -> ControllerReference:
    m = ControllerReference()
    if stamp is not None:
        m.header.stamp = stamp
    m.sequence_id = int(r.sequence_id) % (2 ** 32)
    m.sender = str(r.sender)
    m.mode = int(r.mode)
    m.joint_names = [str(n) for n in r.joint_names]
    m.joint_positions_rad = [float(v) for v in np.asarray(r.joint_positions_rad, float).reshape(-1)]
    m.duration_s = float(r.duration_s)
    if r.contact_targets is not None:
        m.contact_targets = [Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))
                             for p in np.asarray(r.contact_targets, float).reshape(-1, 3)]
    m.stance = [bool(s) for s in r.stance]
    m.com_modulation = bool(r.com_modulation)
    m.queue = bool(r.queue)
    m.swing_lift_m = [float(v) for v in np.asarray(r.swing_lift_m, float).reshape(4)]
    m.com_support = [bool(s) for s in r.com_support]
    m.heading_rad = [] if getattr(r, "heading_rad", None) is None else [float(r.heading_rad)]
    b = getattr(r, "drift_correction_max_m", None)
    m.drift_correction_max_m = [] if b is None else [float(b)]
    return m


def status_to_msg(s: Status, stamp=None) -> ControllerStatus:
    m = ControllerStatus()
    if stamp is not None:
        m.header.stamp = stamp
    m.sequence_id = int(s.sequence_id) % (2 ** 32)
    m.sender = str(s.sender)
    m.accepted = bool(s.accepted)
    m.reached = bool(s.reached)
    m.reason = str(s.reason)
    m.task_error_m = float(s.task_error_m) if np.isfinite(s.task_error_m) else 0.0
    m.iterations = int(s.iterations)
    m.stability_margin_m = float(s.stability_margin_m) if np.isfinite(s.stability_margin_m) else 0.0
    m.state = int(s.state)
    return m


def support_to_msg(in_contact, confidence, method: int, positions, polygon_xy, com_xy, margin: float,
                   stable: bool, frame_id: str, stamp=None) -> SupportState:
    m = SupportState()
    m.header.frame_id = frame_id
    if stamp is not None:
        m.header.stamp = stamp
    cs = []
    for i in range(4):
        c = ContactState()
        c.name = CONTACT_FRAMES[i]
        c.in_contact = bool(in_contact[i])
        c.method = int(method)
        c.confidence = float(confidence[i]) if np.isfinite(confidence[i]) else 0.0
        p = positions[i]
        if np.all(np.isfinite(p)):
            c.position = Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))
        cs.append(c)
    m.contacts = cs
    m.support_polygon = [Point(x=float(v[0]), y=float(v[1]), z=0.0) for v in np.asarray(polygon_xy).reshape(-1, 2)]
    if np.all(np.isfinite(com_xy)):
        m.com_projection = Point(x=float(com_xy[0]), y=float(com_xy[1]), z=0.0)
    m.stability_margin_m = float(margin) if np.isfinite(margin) else -1e9
    m.statically_stable = bool(stable)
    return m


def support_from_msg(m: SupportState, age_s: float = 0.0) -> SimpleNamespace:
    """The gait sequencer's view of a SupportState: ``in_contact`` (4,), ``stability_margin_m``,
    ``statically_stable``, ``age_s`` and the measured contact ``positions`` (4, 3) and ``com_xy`` (2,) (the gait
    generator re-syncs its footholds to these once per cycle)."""
    return SimpleNamespace(in_contact=np.array([c.in_contact for c in m.contacts], bool),
                           stability_margin_m=m.stability_margin_m, statically_stable=m.statically_stable,
                           age_s=float(age_s),
                           positions=np.array([[c.position.x, c.position.y, c.position.z] for c in m.contacts]),
                           com_xy=np.array([m.com_projection.x, m.com_projection.y]))
