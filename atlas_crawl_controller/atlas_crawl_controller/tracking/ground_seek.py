"""Ground-seeking reflex of planned-stance limbs that sense no touch."""
from __future__ import annotations

import math

import numpy as np

from .errors import TrackerError

__all__ = ["GroundSeek"]


class GroundSeek:
    r"""A limb in planned stance (now and one solve ahead) that senses no touch has its target lowered at
    ``speed_m_s`` up to ``max_m``; once it touches (or swings) the offset is released at the same speed:

    .. math:: d_l \leftarrow \begin{cases} \min(d_l + v T, d_{max}) & l \in s \wedge s' \wedge \neg touch_l \\
              \max(d_l - v T, 0) & \text{else} \end{cases},\quad d_l = 0 \text{ for } l \notin s',\quad
              z^*_l \leftarrow z^*_l - d_l

    ``speed_m_s = 0`` disables it."""

    def __init__(self, speed_m_s: float = 0.0, max_m: float = 0.05):
        if not (math.isfinite(speed_m_s) and speed_m_s >= 0 and math.isfinite(max_m) and max_m >= 0):
            raise TrackerError("seek speed_m_s and max_m must be finite and >= 0")
        self.speed_m_s = float(speed_m_s)
        self.max_m = float(max_m)
        self.depth = np.zeros(4)

    def apply(self, targets: np.ndarray, cur, nxt, touch: np.ndarray, period_s: float) -> np.ndarray:
        if self.speed_m_s <= 0:
            return targets
        want = nxt.stance & cur.stance & ~touch
        self.depth = np.where(want, np.minimum(self.depth + self.speed_m_s * period_s, self.max_m),
                              np.maximum(self.depth - self.speed_m_s * period_s, 0.0))
        self.depth[~nxt.stance] = 0.0
        targets[:, 2] -= self.depth
        return targets
