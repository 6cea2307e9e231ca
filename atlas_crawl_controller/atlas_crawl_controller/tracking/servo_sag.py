"""Integral of the joint tracking error (servo sag)."""
from __future__ import annotations

import math

import numpy as np

from .errors import TrackerError

__all__ = ["ServoSagIntegral", "sag_mask"]


class ServoSagIntegral:
    r"""Per control tick, :math:`I \leftarrow \mathrm{clip}(I + k_i\, dt\, (q_{des} - q),\ \pm I_{max})` on the
    joints of ``mask`` (all when None; the others keep :math:`I = 0`), and the servo command is :math:`q_{des} + I`.
    It starts bumpless: :math:`I_0 = \mathrm{clip}(q_{cmd} - q)`, the offset :math:`\tau/K_p` with which the servos
    hold the settled pose. ``ki_per_s = 0`` disables it.

    Why a mask: the four contacts close the kinematic chain, and where the IIK's stance targets do not match where
    the limbs really stand, no joint set reaches every command. The integral then builds force until a limb slides:
    the one-limb forward crawl skated ~6 cm per stance in 1 of 2 runs with every joint integrated."""

    def __init__(self, ki_per_s: float = 2.0, limit_rad: float = 0.15, mask=None):
        if not (math.isfinite(ki_per_s) and ki_per_s >= 0 and math.isfinite(limit_rad) and limit_rad >= 0):
            raise TrackerError("servo sag ki_per_s and limit_rad must be finite and >= 0")
        self.ki = float(ki_per_s)
        self.limit_rad = float(limit_rad)
        self.mask = None if mask is None else np.asarray(mask, bool).copy()
        self.value = None

    def start(self, q_command: np.ndarray, q_measured: np.ndarray) -> None:
        if self.mask is not None and self.mask.shape != np.shape(q_measured):
            raise TrackerError(f"servo sag mask has {self.mask.size} joints, the robot {np.size(q_measured)}")
        if self.ki > 0:
            self.value = np.clip(q_command - q_measured, -self.limit_rad, self.limit_rad)
            if self.mask is not None:
                self.value[~self.mask] = 0.0
        else:
            self.value = np.zeros(len(q_measured))

    def command(self, q_des: np.ndarray, q_measured: np.ndarray, dt: float) -> np.ndarray:
        if self.ki > 0:
            e = q_des - q_measured
            if self.mask is not None:
                e = np.where(self.mask, e, 0.0)
            v = self.value + self.ki * dt * e     # = np.clip(v, ±limit), cheaper per tick
            self.value = np.minimum(np.maximum(v, -self.limit_rad), self.limit_rad)
        return q_des + self.value


def sag_mask(model, joints) -> np.ndarray:
    """(n,) bool of the named joints of ``model``; raises TrackerError naming unknown joints."""
    names = list(model.joint_names)
    unknown = [j for j in joints if j not in names]
    if unknown:
        raise TrackerError(f"sag.joints {unknown} are not joints of the model")
    chosen = set(joints)
    return np.array([n in chosen for n in names])
