"""Rate limit of the modulated CoM target."""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from .errors import TrackerError

__all__ = ["CoMRateLimit"]


class CoMRateLimit:
    r"""The margin point :math:`c_{goal}` jumps when the support set switches (lookahead) and the IIK follows a jump
    within a few ticks — a lurch that unloads every contact. The limited target moves towards it at ``rate_m_s``:

    .. math:: c_{lim} \leftarrow c_{lim} + \frac{c_{goal} - c_{lim}}{\lVert c_{goal} - c_{lim} \rVert}\,
              \min(v T, \lVert c_{goal} - c_{lim} \rVert)

    starting at the measured CoM; the IIK gets the offset :math:`c_{lim} - c_{goal}` (added after its margin logic).
    ``rate_m_s = 0`` disables it."""

    def __init__(self, rate_m_s: float = 0.3):
        if not (math.isfinite(rate_m_s) and rate_m_s >= 0):
            raise TrackerError("CoM rate limit must be finite and >= 0")
        self.rate_m_s = float(rate_m_s)
        self.c_lim: Optional[np.ndarray] = None

    def offset(self, c_goal: np.ndarray, com_xy: np.ndarray, period_s: float) -> np.ndarray:
        """Offset to add to the CoM target ``c_goal`` (world xy)."""
        if self.c_lim is None:
            self.c_lim = com_xy.copy()
        d = c_goal - self.c_lim
        n = float(np.linalg.norm(d))
        step = self.rate_m_s * period_s
        self.c_lim = c_goal.copy() if n <= step else self.c_lim + d * (step / n)
        return self.c_lim - c_goal
