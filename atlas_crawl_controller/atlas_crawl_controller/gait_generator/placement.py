r"""Where each contact lands for a command (foot-placement of the static crawl; CHAMP / Raibert-style).

The contact pattern is a rigid body-frame pattern ``rel_i`` (offsets of LW, RW, LK, RK from the pattern reference,
heading +x) carried by a reference pose :math:`(r_k, \theta_k)` at step boundaries, advanced by the command
:math:`(v_x, v_y, \omega)` over one step time :math:`T`:

.. math:: \theta_{k+1} = \theta_k + \omega T,\qquad r_{k+1} = r_k + R(\theta_k + \tfrac12\omega T)\,[v_x, v_y]^T T

(exact chord of the arc at the mid heading). The limb stepping in step ``k`` lands one step ahead of the reference
(the lead that makes every limb move exactly one cycle's displacement per cycle):

.. math:: p_i = r_{k+1} + R(\theta_{k+1})\,\mathrm{rel}_i + \delta_k

with :math:`\delta_k` the feedback's position correction (the heading correction enters :math:`\theta`).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["FootPlacement", "rot2"]


def rot2(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s], [s, c]])


class FootPlacement:
    """Body-frame pattern from the start contacts (4, 3) and heading: ``rel_i = R(-θ0)(c_i - r0)``, ``r0`` the
    contact centroid."""

    def __init__(self, contacts0, heading0_rad: float):
        c0 = np.asarray(contacts0, float).reshape(4, 3)
        if not np.all(np.isfinite(c0)) or not math.isfinite(heading0_rad):
            raise ValueError("contacts0 and heading0_rad must be finite")
        self.r0 = c0[:, :2].mean(axis=0)
        self.theta0 = float(heading0_rad)
        self.rel = (c0[:, :2] - self.r0) @ rot2(-self.theta0).T

    @staticmethod
    def advance(r, theta: float, vx: float, vy: float, wz: float, dt: float):
        """Reference pose after ``dt`` of the command (chord at the mid heading)."""
        r = np.asarray(r, float) + rot2(theta + 0.5 * wz * dt) @ np.array([vx, vy]) * dt
        return r, theta + wz * dt

    def land(self, limb: int, r, theta: float, correction_xy=(0.0, 0.0)) -> np.ndarray:
        """Landing point (x, y) of ``limb`` for the reference ``(r, θ)`` plus the position correction."""
        return np.asarray(r, float) + rot2(theta) @ self.rel[limb] + np.asarray(correction_xy, float)
