"""Support lookahead: the CoM-modulation support set anticipates the next lift."""
from __future__ import annotations

import math

import numpy as np

from .errors import TrackerError

__all__ = ["LiftLookahead"]


class LiftLookahead:
    r"""Support set of the CoM modulation: the stance set minus every limb the plan lifts within ``horizon_s``,

    .. math:: s_{used} = s \wedge \bigwedge_{k=1}^{6} s_{plan}(t + \delta_k),\quad
              \delta_k \in \mathrm{linspace}(T_{solve}, h, 6)

    kept only if at least three limbs remain (a quasi-static crawl must shift *before* the lift: with the current
    set only, the four-point polygon admits a CoM that the tripod will not). ``horizon_s = 0`` disables it."""

    def __init__(self, horizon_s: float = 0.6):
        if not (math.isfinite(horizon_s) and horizon_s >= 0):
            raise TrackerError("lookahead horizon_s must be finite and >= 0")
        self.horizon_s = float(horizon_s)

    def __call__(self, plan, t_plan: float, end_s: float, period_s: float, used: np.ndarray) -> np.ndarray:
        if self.horizon_s <= 0:
            return used
        ahead = used.copy()
        stance_at = getattr(plan, "stance_at", None)   # a plan may answer the stance without a full sample
        key = (period_s, self.horizon_s)
        if getattr(self, "_key", None) != key:
            self._key, self._offsets = key, np.linspace(period_s, self.horizon_s, 6).tolist()
        for dtl in self._offsets:
            t = min(end_s, t_plan + dtl)
            ahead &= plan.sample(t).stance if stance_at is None else stance_at(t)
        return ahead if ahead.sum() >= 3 else used
