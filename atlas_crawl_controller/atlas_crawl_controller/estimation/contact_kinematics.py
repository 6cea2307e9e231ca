"""Contact points relative to the pelvis from the joint states: rᵢ = FK(q) and ṙᵢ = Jᵢ(q) q̇ (pelvis frame).

Thesis §4.2 (point Jacobian column a_j × (p_e − p_j)); atlas_crawl_kinematics.RobotModel does the work. Two choices
of the point that is fixed in the world during stance (``point``):

* ``frame`` — the contact frames (l_wrist_contact, ..., r_knee_contact);
* ``lowest`` — per limb, the lowest point of its collision primitives given the pelvis tilt R
  (atlas_crawl_kinematics.clearance, thesis §4.1). A wrist or a shin rolls over the ground while the body moves:
  the material point touching the ground at an instant has zero velocity when it does not slip, a fixed frame on the
  limb does not. ṙᵢ is the velocity of that material point (point Jacobian with the point's offset in its link).
  When the lowest point jumps (another primitive, or along a cylinder lying flat) ``switched`` flags the limb.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from atlas_description import CONTACT_FRAMES, LIMB_LINKS

#: a lowest point that moved more than this in its link since the last call has "switched" [m]
JUMP_M = 0.02


class ContactKinematics:
    """(r (4,3), ṙ (4,3)) of the LW, RW, LK, RK stance points in the pelvis frame, team joint order."""

    def __init__(self, model=None, frames: Sequence[str] = CONTACT_FRAMES, point: str = "frame",
                 urdf: Optional[str] = None, limb_links=LIMB_LINKS):
        if point not in ("frame", "lowest"):
            raise ValueError(f"ContactKinematics: point must be 'frame' or 'lowest', got {point!r}")
        if model is None or (point == "lowest" and urdf is None):
            from atlas_crawl_kinematics.model import RobotModel
            from atlas_crawl_kinematics.robot_source import atlas_urdf_string
            urdf = urdf or atlas_urdf_string()
            model = model or RobotModel(urdf)
        self.model = model
        self.point = point
        self.frames = list(frames)
        self._idx = [model.frame_index(f) for f in self.frames]
        self.clearance = None
        if point == "lowest":
            from atlas_crawl_kinematics.clearance import LimbClearance
            self.clearance = LimbClearance(model, urdf, limb_links)
            self._limb = self.clearance._limb
            self._prim_frame = self.clearance._frame
        self._last = None            # (primitive index (4,), local point (4,3)) of the previous call
        self.switched = np.zeros(4, bool)

    def __call__(self, q, qd: Optional[np.ndarray] = None, R: Optional[np.ndarray] = None):
        """(r, ṙ) in the pelvis frame; ``R`` (world ← pelvis, only its tilt matters) selects the lowest points."""
        k = self.model.forward(np.asarray(q, float), check=False)
        if self.point == "frame" or R is None:
            r = k.positions(self._idx)
            if qd is None:
                return r, np.zeros_like(r)
            J = k.point_jacobians(self._idx)
            return r, (J @ np.asarray(qd, float)).reshape(len(self._idx), 3)
        R = np.asarray(R, float)
        pts = self.clearance.lowest_points(k, R, np.zeros(3))        # = R r, per primitive
        n = 4
        prim = np.zeros(n, int)
        for li in range(n):
            cand = np.flatnonzero(self._limb == li)
            prim[li] = cand[int(np.argmin(pts[cand, 2]))]
        r = pts[prim] @ R                                              # Rᵀ (R r) row-wise
        frames = self._prim_frame[prim]
        local = np.einsum("kji,kj->ki", k.rot[frames], r - k.pos[frames])   # point in its link frame
        if self._last is not None:
            self.switched = (prim != self._last[0]) | (np.linalg.norm(local - self._last[1], axis=1) > JUMP_M)
        self._last = (prim, local)
        if qd is None:
            return r, np.zeros_like(r)
        J = k.point_jacobians(list(frames), points_local=local)
        return r, (J @ np.asarray(qd, float)).reshape(n, 3)

    def reset(self) -> None:
        self._last = None
        self.switched = np.zeros(4, bool)
