"""CoM gate: the closed-loop "wait for the CoM" before a lift."""
from __future__ import annotations

import math

from atlas_crawl_kinematics.support import stability_margin, support_polygon

from .errors import TrackerError

__all__ = ["CoMGate"]


class CoMGate:
    r"""Hold the plan clock before a lift until the measured CoM is inside the triangle that will remain.

    With the stance set now :math:`s` and one solve period ahead :math:`s'`, a lift is coming when
    :math:`|s \wedge s'| = 3 < |s|`. The gate holds while

    .. math:: m(c_{xy}, \mathrm{conv}\{x_l : l \in s \wedge s'\}) < m_{gate}

    (measured CoM :math:`c`, measured contacts :math:`x_l`, signed margin :math:`m`) and the hold has lasted less than
    ``timeout_s``. ``margin_m = 0`` disables it (open-loop timing).
    """

    def __init__(self, margin_m: float = 0.0, timeout_s: float = 2.0):
        if not (math.isfinite(margin_m) and margin_m >= 0 and math.isfinite(timeout_s) and timeout_s >= 0):
            raise TrackerError("gate margin_m and timeout_s must be finite and >= 0")
        self.margin_m = float(margin_m)
        self.timeout_s = float(timeout_s)
        self.wait_s = 0.0
        self.waits_s: list = []  #: per lift: how long the gate held the plan clock

    @property
    def enabled(self) -> bool:
        return self.margin_m > 0

    def holds(self, plan, t_plan: float, end_s: float, period_s: float, cur, sensed) -> bool:
        """True while the plan clock must stay at ``t_plan`` (call once per solve)."""
        if not self.enabled:
            return False
        nx = plan.sample(min(end_s, t_plan + period_s))
        coming = nx.stance & cur.stance
        if coming.sum() == 3 and coming.sum() < cur.stance.sum():
            mg = stability_margin(sensed.com_xy, support_polygon(sensed.contacts[coming, :2]))
            if mg < self.margin_m and self.wait_s < self.timeout_s:
                self.wait_s += period_s
                return True
            self.waits_s.append(self.wait_s)
            self.wait_s = 0.0
        return False

    def timeouts(self) -> int:
        return int(sum(w >= self.timeout_s - 1e-9 for w in self.waits_s))
