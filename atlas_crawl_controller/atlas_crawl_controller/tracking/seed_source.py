"""Seed of each IIK solve: the IIK's own previous solution, or the sensed state."""
from __future__ import annotations

import numpy as np

from .errors import TrackerError

__all__ = ["InternalSeed", "SensedSeed", "seed_source"]


class InternalSeed:
    r"""Seed every solve with the previous solution (joints and base pose), thesis Eq. 4.14
    :math:`q_t = q_{t-1} + \Delta q`: the commands form one kinematically consistent trajectory the servos follow.

    The first seed is the sensed state at :meth:`start`; the command starts at the sensed joints."""

    name = "internal"

    def start(self, sensed, q_command: np.ndarray) -> np.ndarray:
        self.q, self.base_pos, self.base_rot = sensed.q.copy(), sensed.base_pos, sensed.base_rot
        return self.q.copy()

    def seed(self, sensed):
        return self.q, self.base_pos, self.base_rot

    def solved(self, q, base_pos, base_rot) -> None:
        self.q, self.base_pos, self.base_rot = q, base_pos, base_rot


class SensedSeed:
    """Seed every solve with the sensed joints and measured pelvis pose (servo sag and every wobble feed back into
    the plan). The command starts at the servos' current targets."""

    name = "sensed"

    def start(self, sensed, q_command: np.ndarray) -> np.ndarray:
        return q_command

    def seed(self, sensed):
        return sensed.q, sensed.base_pos, sensed.base_rot

    def solved(self, q, base_pos, base_rot) -> None:
        pass


def seed_source(name: str):
    """``internal`` → :class:`InternalSeed`, ``sensed`` → :class:`SensedSeed`."""
    if name == "internal":
        return InternalSeed()
    if name == "sensed":
        return SensedSeed()
    raise TrackerError("seed must be 'internal' or 'sensed'")
