"""Contact sequence and timing of the crawl (thesis §4.1.3).

``one_limb`` (the static crawl): one limb at a time, each step a four-point CoM shift then the swing, in the tripod
order LW, RK, RW, LK (left arm, right leg, right arm, left leg). ``diagonal_pairs`` (the dynamic crawl): the same
order two limbs at a time, LW with RK then RW with LK (the crawl stance's stagger diagonals), two steps per cycle on
a two-contact support. Backward reverses the order, so the limbs that step are always the ones the motion leaves
behind. ``mirrored`` starts half a cycle later (RW with LK first; one limb: RW, LK, LW, RK): the order reflected
left/right, with which a right turn is the left turn's mirror image."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ContactSequence", "LIMB_NAMES", "FORWARD_ORDER", "FORWARD_PAIRS", "PATTERNS"]

LIMB_NAMES = ("LW", "RW", "LK", "RK")
FORWARD_ORDER = (0, 3, 1, 2)          # LW, RK, RW, LK (indices into LIMB_NAMES)
FORWARD_PAIRS = ((0, 3), (1, 2))      # LW+RK, then RW+LK
PATTERNS = ("one_limb", "diagonal_pairs")


@dataclass(frozen=True)
class ContactSequence:
    """Step ``k`` lifts the limbs ``group(k)``; its shift runs over ``[t_k, t_k + t_shift)``, its swing over
    ``[t_k + t_shift, t_k + T)``, ``t_k = t_start + k T``, ``T = t_shift + t_swing``; a cycle is
    :attr:`steps_per_cycle` steps (4 one limb at a time, 2 in pairs), so every limb steps once per cycle."""
    t_shift_s: float
    t_swing_s: float
    t_start_s: float = 0.5
    backward: bool = False
    pattern: str = "one_limb"
    mirrored: bool = False

    def __post_init__(self):
        if self.pattern not in PATTERNS:
            raise ValueError(f"pattern must be one of {PATTERNS}, got {self.pattern!r}")

    @property
    def step_s(self) -> float:
        return self.t_shift_s + self.t_swing_s

    @property
    def groups(self) -> tuple:
        """The limbs each step of a cycle lifts, in order."""
        g = FORWARD_PAIRS if self.pattern == "diagonal_pairs" else tuple((i,) for i in FORWARD_ORDER)
        if self.mirrored:                  # L<->R: LW+RK <-> RW+LK; one limb: LW, RK, RW, LK -> RW, LK, LW, RK
            g = g[len(g) // 2:] + g[:len(g) // 2]
        return tuple(reversed(g)) if self.backward else g

    @property
    def steps_per_cycle(self) -> int:
        return len(self.groups)

    @property
    def cycle_s(self) -> float:
        return self.steps_per_cycle * self.step_s

    def group(self, k: int) -> tuple:
        return self.groups[k % self.steps_per_cycle]

    def step_start_s(self, k: int) -> float:
        return self.t_start_s + k * self.step_s

    def step_at(self, t: float) -> int:
        """Index of the step running at ``t`` (−1 before the first)."""
        if t < self.t_start_s:
            return -1
        return int((t - self.t_start_s) // self.step_s)
