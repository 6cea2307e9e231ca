"""Retarget a BVH crawl to Atlas contact targets (thesis §4.2.4 pre-processing steps 1–4, issue 4 §5).

1. FK of the skeleton → world positions of wrists, knees and the pelvis (hips) per frame, unit scale to metres;
2. conversion to REP 103 (:func:`~.bvh.axes_matrix`, declared source axes; see :mod:`bvh` on the thesis' formula);
3. uniform scale to Atlas: ``s = atlas_hand_knee_m / human_hand_knee_m`` (distance wrist-midpoint → knee-midpoint
   in the first frame; the thesis used Autodesk MotionBuilder for this step);
4. per-limb height normalisation: each limb's minimum height → 0 (thesis step 2: the wrists "float" relative to
   the knees in the capture), then the robot's contact-frame ground height is added;
5. pelvis-frame trajectories (spatial frame of the data pelvis, thesis step 3) and stance by the velocity rule
   (§4.3.2, :func:`~.stance.velocity_stance`).

:class:`MocapPlan` places the retargeted motion in the robot's world (2-D rigid fit of the first-frame contacts to
the robot's start contacts) and serves it with the same ``sample(t)`` interface as the Cartesian gait.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .bvh import BVH, axes_matrix, to_rep103
from .cartesian_gait import GaitSample
from .stance import velocity_stance

__all__ = ["RetargetResult", "retarget", "MocapPlan", "DEFAULT_JOINTS"]

#: BVH joint names of (LW, RW, LK, RK, pelvis) for the common naming (and our synthetic file)
DEFAULT_JOINTS = ("LeftHand", "RightHand", "LeftLeg", "RightLeg", "Hips")


@dataclass
class RetargetResult:
    t: NDArray[np.float64]  #: (N,) s
    contacts: NDArray[np.float64]  #: (N, 4, 3) world (REP 103, metres, scaled, height-normalised)
    pelvis: NDArray[np.float64]  #: (N, 3) world
    contacts_pelvis_frame: NDArray[np.float64]  #: (N, 4, 3) in the data pelvis' spatial frame
    stance: NDArray[np.bool_]  #: (N, 4) velocity rule
    scale: float
    axes_det: float


def retarget(b: BVH, atlas_hand_knee_m: float = 0.62, unit_m: float = 0.01, forward: str = "z", left: str = "x",
             up: str = "y", joints=DEFAULT_JOINTS, stance_ratio: float = 0.1) -> RetargetResult:
    if not (np.isfinite(atlas_hand_knee_m) and atlas_hand_knee_m > 0 and unit_m > 0):
        raise ValueError("atlas_hand_knee_m and unit_m must be > 0")
    M, det = axes_matrix(forward, left, up)
    pos = b.positions(joints)  # (N, 5, 3) file units/axes
    P = to_rep103(pos, M, unit_m)
    c = P[:, :4].copy()
    pel = P[:, 4].copy()
    hk = np.linalg.norm(c[0, :2, :2].mean(axis=0) - c[0, 2:4, :2].mean(axis=0))
    if hk <= 0:
        raise ValueError("degenerate first frame (hands and knees coincide)")
    s = atlas_hand_knee_m / hk
    c *= s
    pel *= s
    zmin = c[:, :, 2].min(axis=0)
    c[:, :, 2] -= zmin  # per-limb height normalisation
    pel[:, 2] -= zmin.mean()
    # spatial frame of the data pelvis: heading from the knee-midpoint → wrist-midpoint direction
    fwd = c[:, 0:2, :2].mean(axis=1) - c[:, 2:4, :2].mean(axis=1)
    th = np.arctan2(fwd[:, 1], fwd[:, 0])
    cp = c - pel[:, None, :]
    ct, st_ = np.cos(-th), np.sin(-th)
    x = ct[:, None] * cp[:, :, 0] - st_[:, None] * cp[:, :, 1]
    y = st_[:, None] * cp[:, :, 0] + ct[:, None] * cp[:, :, 1]
    cpf = np.stack([x, y, cp[:, :, 2]], axis=2)
    stance = velocity_stance(c, stance_ratio)
    t = np.arange(b.n_frames) * b.frame_time_s
    return RetargetResult(t, c, pel, cpf, stance, float(s), det)


def _fit2d(src: NDArray, dst: NDArray):
    """Rigid 2-D transform (R, t) minimising |R src + t − dst|² (Kabsch)."""
    ms, md = src.mean(axis=0), dst.mean(axis=0)
    H = (src - ms).T @ (dst - md)
    U, _S, Vt = np.linalg.svd(H)
    R = Vt.T @ U.T
    if np.linalg.det(R) < 0:
        Vt[-1] *= -1
        R = Vt.T @ U.T
    return R, md - R @ ms


class MocapPlan:
    """Retargeted motion served like :class:`~.cartesian_gait.CartesianGait` (``sample``, ``duration_s``,
    ``trajectory``). ``start_contacts`` (4, 3) are the robot's contacts when the motion starts; the data's first
    frame is rigidly fitted onto them (yaw + translation), heights are the robot's contact heights + the data's
    normalised heights. The pelvis target is the data pelvis (fitted), at the robot's start pelvis height plus the
    data's height change. ``cycles`` = number of swings of the left wrist (one per gait cycle)."""

    def __init__(self, rt: RetargetResult, start_contacts: ArrayLike, start_pelvis: ArrayLike, hold_s: float = 0.0):
        sc = np.asarray(start_contacts, float)
        R, tr = _fit2d(rt.contacts[0, :, :2], sc[:, :2])
        self.R, self.tr = R, tr
        self.rt = rt
        self.hold_s = float(hold_s)
        C = rt.contacts.copy()
        C[:, :, :2] = C[:, :, :2] @ R.T + tr
        C[:, :, 2] += sc[:, 2]
        self.C = C
        Pp = rt.pelvis.copy()
        Pp[:, :2] = Pp[:, :2] @ R.T + tr
        Pp[:, 2] = float(np.asarray(start_pelvis)[2]) + (rt.pelvis[:, 2] - rt.pelvis[0, 2])
        self.P = Pp
        self.duration_s = float(rt.t[-1]) + self.hold_s
        self.yaw0 = math.atan2(R[1, 0], R[0, 0])
        # cycles: count left-wrist swings (stance → swing transitions)
        lw = rt.stance[:, 0]
        starts = np.flatnonzero(lw[:-1] & ~lw[1:])
        self.cycle_starts = rt.t[starts + 1] if len(starts) else np.array([0.0])
        self.cycles = max(1, len(starts))

    def _i(self, t):
        return int(np.clip(round((t - self.hold_s) / (self.rt.t[1] - self.rt.t[0])), 0, len(self.rt.t) - 1))

    def sample(self, t: float) -> GaitSample:
        if not math.isfinite(t):
            raise ValueError("t must be finite")
        i = self._i(t)
        td = t - self.hold_s
        cyc = int(np.searchsorted(self.cycle_starts, td, side="right") - 1) if td >= self.cycle_starts[0] else -1
        if t >= self.duration_s:
            cyc = -1
        st = self.rt.stance[i].copy()
        s = GaitSample(t, self.C[i].copy(), st, None, self.P[i, :2].copy(), self.yaw0, cyc, 0,
                       int(np.flatnonzero(~st)[0]) if (~st).any() else -1, "mocap")
        s.pelvis_target = self.P[i].copy()
        s.com_xy = None
        return s

    def trajectory(self, dt: float = 0.01):
        ts = np.arange(0.0, self.duration_s + 1e-9, dt)
        idx = [self._i(t) for t in ts]
        return ts, self.C[idx], self.rt.stance[idx]
