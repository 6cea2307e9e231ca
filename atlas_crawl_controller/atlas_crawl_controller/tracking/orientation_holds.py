"""World orientations of chosen frames held at their start value, yawed with the gait heading (and tilted with the
ground when the plan carries a tilt)."""
from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from .errors import TrackerError

__all__ = ["OrientationHolds"]


class OrientationHolds:
    r"""Orientation tasks :math:`R^*_f(t) = R_z(\psi(t) - \psi_0)\, R_f(0)` for each frame ``f`` in ``frames``, with
    :math:`R_f(0)` the world orientation at :meth:`start` and :math:`\psi` the plan's heading.

    Typical frames: the shins (parallel to the floor, so the feet stay off it: the IIK knows nothing of the feet),
    the pelvis and the upper torso (level, so the CoM task cannot fold the back — thesis §4.3.3)."""

    def __init__(self, frames: Sequence[str] = (), tilt_frames: Sequence[str] = ()):
        self.frames = tuple(frames)
        if len(set(self.frames)) != len(self.frames):
            raise TrackerError(f"orientation hold frames must be unique, got {self.frames}")
        self.tilt_frames = frozenset(tilt_frames)
        self.R0: dict = {}
        self.heading0 = 0.0

    def check(self, model) -> None:
        unknown = [f for f in self.frames + tuple(sorted(self.tilt_frames)) if f not in model.frame_names]
        if unknown:
            raise TrackerError(f"orientation hold frames {unknown} are not frames of the model")

    def start(self, model, q: np.ndarray, base_rot: np.ndarray, heading0_rad: float) -> None:
        k = model.forward(q)
        self.R0 = {f: base_rot @ k.rotation(f) for f in self.frames}
        self.heading0 = heading0_rad

    def targets(self, heading_rad: float, tilt_R=None) -> Optional[dict]:
        r"""``tilt_R`` (3, 3), optional: the ground's tilt since the start (the plan's ``extra["tilt_R"]``, issue 13
        §2), applied after the yaw to the ``tilt_frames``: :math:`R^*_f = R_{tilt} R_z(\psi - \psi_0) R_f(0)`."""
        dz = heading_rad - self.heading0
        Rz = np.array([[math.cos(dz), -math.sin(dz), 0], [math.sin(dz), math.cos(dz), 0], [0, 0, 1]])
        Rt = Rz if tilt_R is None else np.asarray(tilt_R, float) @ Rz
        return {f: (Rt if f in self.tilt_frames else Rz) @ R for f, R in self.R0.items()} or None
