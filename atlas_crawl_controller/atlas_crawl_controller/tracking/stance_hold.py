"""Where stance contacts are held: the planned world point, or where the limb touched down."""
from __future__ import annotations

import numpy as np

from .errors import TrackerError

__all__ = ["PlannedHold", "TouchdownHold", "stance_hold"]


class PlannedHold:
    """Stance contacts are held at their planned world points (the targets pass unchanged)."""

    name = "planned"

    def apply(self, targets: np.ndarray, cur, nxt, contacts: np.ndarray) -> np.ndarray:
        return targets


class TouchdownHold:
    r"""Stance contacts are held where they were sensed at touchdown (horizontal only):
    :math:`x^*_{l,xy} = x_{l,xy}(t_{touchdown})` for every limb in stance now and one solve ahead; a limb that swings
    forgets its point, and picks up the sensed one when it is in stance again."""

    name = "touchdown"

    def __init__(self):
        self.touchdown = None

    def apply(self, targets: np.ndarray, cur, nxt, contacts: np.ndarray) -> np.ndarray:
        if self.touchdown is None:
            self.touchdown = contacts.copy()
        for i in range(4):
            if not cur.stance[i]:
                self.touchdown[i] = np.nan
            elif np.isnan(self.touchdown[i, 0]):
                self.touchdown[i] = contacts[i]
            if nxt.stance[i] and not np.isnan(self.touchdown[i, 0]):
                targets[i, :2] = self.touchdown[i, :2]
        return targets


def stance_hold(name: str):
    """``planned`` → :class:`PlannedHold`, ``touchdown`` → :class:`TouchdownHold`."""
    if name == "planned":
        return PlannedHold()
    if name == "touchdown":
        return TouchdownHold()
    raise TrackerError("stance hold must be 'planned' or 'touchdown'")
