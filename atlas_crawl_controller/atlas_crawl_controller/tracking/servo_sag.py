"""Integral of the joint tracking error (servo sag)."""
from __future__ import annotations

import math

import numpy as np

from .errors import TrackerError

__all__ = ["ServoSagIntegral"]


class ServoSagIntegral:
    r"""Per control tick, :math:`I \leftarrow \mathrm{clip}(I + k_i\, dt\, (q_{des} - q),\ \pm I_{max})` and the
    servo command is :math:`q_{des} + I`. It starts bumpless: :math:`I_0 = \mathrm{clip}(q_{cmd} - q)`, the offset
    :math:`\tau/K_p` with which the servos hold the settled pose. ``ki_per_s = 0`` disables it."""

    def __init__(self, ki_per_s: float = 2.0, limit_rad: float = 0.15):
        if not (math.isfinite(ki_per_s) and ki_per_s >= 0 and math.isfinite(limit_rad) and limit_rad >= 0):
            raise TrackerError("servo sag ki_per_s and limit_rad must be finite and >= 0")
        self.ki = float(ki_per_s)
        self.limit_rad = float(limit_rad)
        self.value = None

    def start(self, q_command: np.ndarray, q_measured: np.ndarray) -> None:
        if self.ki > 0:
            self.value = np.clip(q_command - q_measured, -self.limit_rad, self.limit_rad)
        else:
            self.value = np.zeros(len(q_measured))

    def command(self, q_des: np.ndarray, q_measured: np.ndarray, dt: float) -> np.ndarray:
        if self.ki > 0:
            v = self.value + self.ki * dt * (q_des - q_measured)   # = np.clip(v, ±limit), cheaper per tick
            self.value = np.minimum(np.maximum(v, -self.limit_rad), self.limit_rad)
        return q_des + self.value
