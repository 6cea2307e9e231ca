r"""Support-margin rule (thesis §4.3, Fig. 4.23): before every lift the CoM moves into the support that remains.

One limb lifting: the CoM target of a step is the first point on the segment from the four-contact centroid towards
the tripod's max-margin point whose static margin reaches ``margin_m``
(:func:`atlas_crawl_kinematics.cartesian_gait.margin_point`). The lift gate: a limb may lift only when the measured
CoM has at least ``gate_margin_m`` in the measured tripod (the tracker's
:class:`~atlas_crawl_controller.tracking.com_gate.CoMGate` holds the plan clock until it does).

Two limbs lifting (a diagonal pair): the remaining support is the segment between the other two contacts, which has
no static margin. The target is the point of that segment nearest the four-contact centroid, so the body rides on
the support diagonal (a dynamic crawl: it relies on a short swing, as the key-frame diagonal gait does)."""
from __future__ import annotations

import numpy as np

from atlas_crawl_kinematics.cartesian_gait import margin_point
from atlas_crawl_kinematics.support import nearest_on_segment, stability_margin, support_polygon

__all__ = ["CoMPlan"]


def _lifting(lifting) -> set:
    return {int(lifting)} if np.ndim(lifting) == 0 else {int(i) for i in lifting}


class CoMPlan:
    def __init__(self, margin_m: float = 0.04):
        if not (np.isfinite(margin_m) and margin_m >= 0):
            raise ValueError("margin_m must be finite and >= 0")
        self.margin_m = float(margin_m)

    def target(self, contacts, lifting) -> np.ndarray:
        """CoM target (x, y) before ``lifting`` (a limb index or a sequence of them) lifts, contacts (4, 3) or
        (4, 2)."""
        c = np.asarray(contacts, float)[:, :2]
        up = _lifting(lifting)
        keep = [j for j in range(4) if j not in up]
        centroid = c.mean(axis=0)
        if len(keep) >= 3:
            return margin_point(centroid, c[keep], self.margin_m)
        if len(keep) == 2:
            return nearest_on_segment(centroid, c[keep[0]], c[keep[1]])
        raise ValueError(f"lifting {sorted(up)} leaves fewer than two contacts")

    @staticmethod
    def margin(com_xy, contacts, lifting: int) -> float:
        """Static margin (m) of ``com_xy`` in the tripod left when ``lifting`` lifts (< 0: outside)."""
        c = np.asarray(contacts, float)[:, :2]
        tri = [j for j in range(4) if j != lifting]
        return float(stability_margin(np.asarray(com_xy, float)[:2], support_polygon(c[tri])))

    def lift_allowed(self, com_xy, contacts, lifting: int, gate_margin_m: float) -> bool:
        return self.margin(com_xy, contacts, lifting) >= gate_margin_m
