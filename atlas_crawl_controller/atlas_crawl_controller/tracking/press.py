"""Preload of the stance contacts against the compliance of the position servos."""
from __future__ import annotations

import math

import numpy as np

from .errors import TrackerError

__all__ = ["Press"]


class Press:
    r"""Stance contacts are commanded ``depth_m`` below their planned point, :math:`z^*_l \leftarrow z^*_l - d` for
    :math:`l \in s_{plan}`, so all three contacts of a tripod stay loaded instead of the body rocking on a diagonal.
    ``depth_m = 0`` disables it."""

    def __init__(self, depth_m: float = 0.0):
        if not (math.isfinite(depth_m) and depth_m >= 0):
            raise TrackerError("press depth_m must be finite and >= 0")
        self.depth_m = float(depth_m)

    def apply(self, targets: np.ndarray, nxt) -> np.ndarray:
        if self.depth_m > 0:
            targets[nxt.stance, 2] -= self.depth_m
        return targets
