"""World-frame geometry of the support situation for RViz (issue "optional RViz with support-polygon/CoM markers").

Plain Python/numpy (no ROS import); ``nodes/support_markers_node.py`` turns the result into a
``visualization_msgs/MarkerArray`` and the ground-truth pelvis pose into the ``world → pelvis`` transform.

Input: an ``atlas_crawl_msgs/SupportState`` (or anything with the same attributes; see :func:`support_input_from_msg`)
and the ground-truth pelvis pose in the world frame.  The points of a SupportState are in its ``header.frame_id``:

* ``world`` — what ``contact_inference`` (and the simulator's ground truth) publish: the contacts and the CoM are
  placed in the world with the pelvis pose there and the polygon/CoM projection are computed in the world frame
  (z along gravity, so margins equal the spatial-frame ones).  No conversion.
* ``spatial`` — the spatial frame of thesis §2.2.2 (origin at the pelvis, z opposite to gravity, x = horizontal
  projection of the pelvis forward axis), the frame the SupportState message documents as "normally" used.  Built
  with :func:`atlas_crawl_kinematics.support.spatial_frame` (parameter ``spatial_forward_axis``) from the pelvis pose.
* ``pelvis`` — the pelvis link frame: ``p_world = R_world←pelvis p + t``.

The support polygon and the CoM projection are projections along gravity; they are drawn on the ground
(``z = ground_height_m + lift_m``) whatever z they carried in their frame (``z = 0`` in the spatial frame is the
pelvis height).  The contact points keep their 3-D positions.  The outline is closed (first vertex repeated).
Colour of the polygon, CoM and text: green when ``statically_stable`` else red (thesis §2.3: ≥ 3 stance contacts and
the CoM projection inside their polygon).

Bad input (NaN/inf coordinates, a zero quaternion, an unknown frame, not 4 contacts) raises
:class:`SupportMarkerError` with the reason; nothing is kept between calls.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np
from atlas_crawl_kinematics.rotations import quat_xyzw_to_R

from .parameters import ParameterError, ParamValues, load_parameter_file

PARAMETER_FILE = "support_markers_parameters.yaml"

WORLD_FRAME = "world"
PELVIS_FRAME = "pelvis"
SPATIAL_FRAME = "spatial"

RGBA = Tuple[float, float, float, float]
STABLE_RGBA: RGBA = (0.1, 0.8, 0.1, 1.0)
UNSTABLE_RGBA: RGBA = (0.9, 0.1, 0.1, 1.0)
STANCE_RGBA: RGBA = (0.1, 0.35, 0.95, 1.0)
SWING_RGBA: RGBA = (0.6, 0.6, 0.6, 0.8)

#: |margin| at or above this is a "no margin" sentinel (contact_inference's conversion writes -1e9 for -inf).
MARGIN_SENTINEL_M = 1e6


class SupportMarkerError(ValueError):
    """The support state or pelvis pose cannot be drawn; the message says why."""


def parameter_set():
    return load_parameter_file(PARAMETER_FILE)


def default_parameters() -> ParamValues:
    return parameter_set().values()


@dataclass(frozen=True)
class SupportInput:
    """The fields of a SupportState the visualisation needs, as numpy arrays (points in ``frame_id``)."""
    frame_id: str
    contact_names: Tuple[str, ...]
    contact_positions: np.ndarray      # (4, 3)
    in_stance: np.ndarray              # (4,) bool
    polygon: np.ndarray                # (k, 3), k >= 0
    com_projection: np.ndarray         # (3,)
    margin_m: float
    statically_stable: bool


def _xyz(p) -> list:
    return [float(p.x), float(p.y), float(p.z)]


def support_input_from_msg(msg) -> SupportInput:
    """``atlas_crawl_msgs/SupportState`` (duck-typed: header.frame_id, contacts[].name/in_contact/position,
    support_polygon[], com_projection, stability_margin_m, statically_stable) → :class:`SupportInput`."""
    try:
        contacts = list(msg.contacts)
        return SupportInput(
            frame_id=str(msg.header.frame_id),
            contact_names=tuple(str(c.name) for c in contacts),
            contact_positions=np.array([_xyz(c.position) for c in contacts], float).reshape(-1, 3),
            in_stance=np.array([bool(c.in_contact) for c in contacts], bool),
            polygon=np.array([_xyz(p) for p in msg.support_polygon], float).reshape(-1, 3),
            com_projection=np.array(_xyz(msg.com_projection), float),
            margin_m=float(msg.stability_margin_m),
            statically_stable=bool(msg.statically_stable),
        )
    except AttributeError as e:
        raise SupportMarkerError(f"not a SupportState-like message: {e}") from None


@dataclass(frozen=True)
class SupportGeometry:
    """Everything to draw, in the world frame."""
    frame_id: str                      # always WORLD_FRAME
    outline: np.ndarray                # (k+1, 3) closed polygon outline on the ground; (0, 3) if no polygon
    com: np.ndarray                    # (3,) CoM projection on the ground
    contact_names: Tuple[str, ...]
    contact_positions: np.ndarray      # (4, 3)
    in_stance: np.ndarray              # (4,) bool
    contact_rgba: Tuple[RGBA, ...]     # per contact: STANCE_RGBA or SWING_RGBA
    margin_m: float                    # as received (NaN never; may be the no-margin sentinel)
    margin_valid: bool                 # False for the sentinel / ±inf (no polygon)
    statically_stable: bool
    rgba: RGBA                         # STABLE_RGBA or UNSTABLE_RGBA
    text: str
    text_position: np.ndarray          # (3,)


def _finite(name: str, a: np.ndarray) -> np.ndarray:
    if not np.all(np.isfinite(a)):
        raise SupportMarkerError(f"{name} has non-finite values (NaN/inf): {np.asarray(a).tolist()}")
    return a


def check_pose7(pose7) -> Tuple[np.ndarray, np.ndarray]:
    """(7,) [x y z qx qy qz qw] → (position (3,), R world←pelvis (3, 3)); the quaternion is normalised."""
    try:
        a = np.asarray(pose7, dtype=float).reshape(7)
    except (TypeError, ValueError):
        raise SupportMarkerError(f"pelvis pose must be 7 numbers [x y z qx qy qz qw], got {pose7!r}") from None
    _finite("pelvis pose", a)
    n = float(np.linalg.norm(a[3:7]))
    if n < 1e-6:
        raise SupportMarkerError(f"pelvis pose quaternion has zero norm: {a[3:7].tolist()}")
    return a[:3].copy(), quat_xyzw_to_R(a[3:7] / n)


def frame_to_world(frame_id: str, pelvis_pose7=None, forward_axis: str = "x") -> Tuple[np.ndarray, np.ndarray]:
    """``(t, R)`` with ``p_world = R @ p + t`` for a point ``p`` in ``frame_id`` (world / spatial / pelvis)."""
    f = str(frame_id).lstrip("/")
    if f == WORLD_FRAME:
        if pelvis_pose7 is not None:
            check_pose7(pelvis_pose7)   # a given pose must still be valid
        return np.zeros(3), np.eye(3)
    if f not in (SPATIAL_FRAME, PELVIS_FRAME):
        raise SupportMarkerError(f"unsupported frame {frame_id!r}: expected {WORLD_FRAME!r}, {SPATIAL_FRAME!r} or "
                                 f"{PELVIS_FRAME!r}")
    if pelvis_pose7 is None:
        raise SupportMarkerError(f"frame {f!r} needs the pelvis pose in the world (none received yet)")
    pos, R = check_pose7(pelvis_pose7)
    if f == PELVIS_FRAME:
        return pos, R
    from atlas_crawl_kinematics.support import InvalidSupportError, spatial_frame
    try:
        o, Rs = spatial_frame(pos, R, forward_axis=forward_axis)
    except InvalidSupportError as e:
        raise SupportMarkerError(f"spatial frame: {e}") from None
    return o, Rs


def close_polygon(points: np.ndarray) -> np.ndarray:
    """(k, 3) vertices → (k+1, 3) closed outline (first vertex repeated); (0, 3) stays empty."""
    p = np.asarray(points, float).reshape(-1, 3)
    if p.shape[0] == 0:
        return p.copy()
    return np.vstack([p, p[:1]])


def margin_text(margin_m: float, valid: bool, n_stance: int, n_contacts: int, stable: bool) -> str:
    m = f"margin {margin_m * 100.0:+.1f} cm" if valid else "margin n/a"
    return f"{m}, {n_stance}/{n_contacts} stance, {'STABLE' if stable else 'UNSTABLE'}"


class SupportMarkers:
    """Converts a support state (+ the pelvis pose) to world-frame geometry; see the module docstring."""

    def __init__(self, params: Optional[ParamValues] = None):
        self.params = params if params is not None else default_parameters()

    def set_params(self, params: ParamValues) -> Optional[str]:
        """Apply new (already type/bounds-validated) parameters; None on success, else a reason (nothing changed)."""
        try:
            parameter_set().values(params.as_dict())
        except ParameterError as e:
            return str(e)
        self.params = params
        return None

    def scaled(self, name: str) -> float:
        """A marker size parameter [m] times ``marker_scale``."""
        return float(self.params[name]) * float(self.params["marker_scale"])

    def geometry(self, support, pelvis_pose7=None) -> SupportGeometry:
        """World-frame geometry of ``support`` (a :class:`SupportInput` or a SupportState-like message).

        ``pelvis_pose7``: ground-truth pelvis pose in the world, (7,) [x y z qx qy qz qw]; needed for the
        ``spatial`` and ``pelvis`` frames.  Raises :class:`SupportMarkerError` on bad input.
        """
        s = support if isinstance(support, SupportInput) else support_input_from_msg(support)
        if not s.frame_id.strip():
            raise SupportMarkerError("support state header.frame_id is empty")
        P = np.asarray(s.contact_positions, float)
        if P.shape != (4, 3) or len(s.contact_names) != 4 or np.asarray(s.in_stance).shape != (4,):
            raise SupportMarkerError(f"expected 4 contacts (LW, RW, LK, RK), got {P.shape[0]}")
        _finite("contact positions", P)
        poly = _finite("support polygon", np.asarray(s.polygon, float).reshape(-1, 3))
        com = _finite("CoM projection", np.asarray(s.com_projection, float).reshape(3))
        margin = float(s.margin_m)
        if math.isnan(margin):
            raise SupportMarkerError("stability_margin_m is NaN")
        t, R = frame_to_world(s.frame_id, pelvis_pose7, self.params["spatial_forward_axis"])

        z_ground = float(self.params["ground_height_m"]) + float(self.params["lift_m"])
        contacts_w = P @ R.T + t
        poly_w = poly @ R.T + t
        poly_w[:, 2] = z_ground                      # projection along gravity onto the ground
        com_w = R @ com + t
        com_w[2] = z_ground
        stance = np.asarray(s.in_stance, bool).copy()
        stable = bool(s.statically_stable)
        valid = math.isfinite(margin) and abs(margin) < MARGIN_SENTINEL_M
        text_pos = com_w + np.array([0.0, 0.0, self.scaled("text_offset_m")])
        return SupportGeometry(
            frame_id=WORLD_FRAME,
            outline=close_polygon(poly_w),
            com=com_w,
            contact_names=tuple(s.contact_names),
            contact_positions=contacts_w,
            in_stance=stance,
            contact_rgba=tuple(STANCE_RGBA if b else SWING_RGBA for b in stance),
            margin_m=margin,
            margin_valid=valid,
            statically_stable=stable,
            rgba=STABLE_RGBA if stable else UNSTABLE_RGBA,
            text=margin_text(margin, valid, int(stance.sum()), 4, stable),
            text_position=text_pos,
        )


__all__ = ["SupportMarkers", "SupportInput", "SupportGeometry", "SupportMarkerError", "support_input_from_msg",
           "frame_to_world", "check_pose7", "close_polygon", "margin_text", "PARAMETER_FILE", "WORLD_FRAME",
           "PELVIS_FRAME", "SPATIAL_FRAME", "STABLE_RGBA", "UNSTABLE_RGBA", "STANCE_RGBA", "SWING_RGBA"]
