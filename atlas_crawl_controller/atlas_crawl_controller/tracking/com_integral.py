"""Integral of the horizontal CoM error."""
from __future__ import annotations

import math

import numpy as np

from .errors import TrackerError

__all__ = ["CoMIntegral"]


class CoMIntegral:
    r""":math:`I \leftarrow \mathrm{clip}(I + k_i T (c^* - c),\ \pm I_{max})` with the modulated target :math:`c^*` and
    the measured CoM :math:`c`; :math:`I` is added to the CoM target handed to the IIK, so a servo sag that keeps the
    physical CoM behind the target is trimmed out. ``ki_per_s = 0`` disables it."""

    def __init__(self, ki_per_s: float = 0.0, limit_m: float = 0.06):
        if not (math.isfinite(ki_per_s) and ki_per_s >= 0 and math.isfinite(limit_m) and limit_m >= 0):
            raise TrackerError("CoM integral ki_per_s and limit_m must be finite and >= 0")
        self.ki = float(ki_per_s)
        self.limit_m = float(limit_m)
        self.value = np.zeros(2)

    def offset(self) -> np.ndarray:
        return self.value.copy() if self.ki > 0 else np.zeros(2)

    def update(self, com_target_xy, com_xy: np.ndarray, period_s: float) -> None:
        if self.ki > 0 and com_target_xy is not None:
            e = com_target_xy - com_xy
            self.value = np.clip(self.value + self.ki * period_s * e, -self.limit_m, self.limit_m)
