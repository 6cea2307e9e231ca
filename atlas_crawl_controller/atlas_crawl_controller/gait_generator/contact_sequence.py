"""Contact sequence and timing of the static crawl (thesis §4.1.3): one limb at a time, each step a four-point CoM
shift then the swing. Forward and turning use the tripod order LW, RK, RW, LK (left arm, right leg, right arm, left
leg); backward reverses it (LK, RW, RK, LW) so the limb that steps is always the one the motion leaves behind."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ContactSequence", "LIMB_NAMES", "FORWARD_ORDER"]

LIMB_NAMES = ("LW", "RW", "LK", "RK")
FORWARD_ORDER = (0, 3, 1, 2)          # LW, RK, RW, LK (indices into LIMB_NAMES)


@dataclass(frozen=True)
class ContactSequence:
    """Step ``k`` lifts limb ``order[k % 4]``; its shift runs over ``[t_k, t_k + t_shift)``, its swing over
    ``[t_k + t_shift, t_k + T)``, ``t_k = t_start + k T``, ``T = t_shift + t_swing``."""
    t_shift_s: float
    t_swing_s: float
    t_start_s: float = 0.5
    backward: bool = False

    @property
    def step_s(self) -> float:
        return self.t_shift_s + self.t_swing_s

    @property
    def order(self) -> tuple:
        return tuple(reversed(FORWARD_ORDER)) if self.backward else FORWARD_ORDER

    def limb(self, k: int) -> int:
        return self.order[k % 4]

    def step_start_s(self, k: int) -> float:
        return self.t_start_s + k * self.step_s

    def step_at(self, t: float) -> int:
        """Index of the step running at ``t`` (−1 before the first)."""
        if t < self.t_start_s:
            return -1
        return int((t - self.t_start_s) // self.step_s)
