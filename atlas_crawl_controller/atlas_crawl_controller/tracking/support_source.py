"""Contact points that form the support polygon of the CoM modulation."""
from __future__ import annotations

import numpy as np

from .errors import TrackerError

__all__ = ["SensedSupport", "TargetSupport", "support_source"]


class SensedSupport:
    """The measured contact points (the real world)."""

    name = "sensed"

    def points(self, contacts: np.ndarray, targets: np.ndarray) -> np.ndarray:
        return contacts.copy()


class TargetSupport:
    """The stance targets the IIK holds (its own, internal world: consistent with the internal seed even after a
    slip or a turn)."""

    name = "targets"

    def points(self, contacts: np.ndarray, targets: np.ndarray) -> np.ndarray:
        return targets.copy()


def support_source(name: str):
    """``sensed`` → :class:`SensedSupport`, ``targets`` → :class:`TargetSupport`."""
    if name == "sensed":
        return SensedSupport()
    if name == "targets":
        return TargetSupport()
    raise TrackerError("support must be 'sensed' or 'targets'")
