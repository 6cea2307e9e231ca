r"""Foot-placement feedback from the measured pelvis pose: heading and lateral correction every step.

Heading is the horizontal projection of the pelvis z axis (the evaluation's ``pelvis_z`` heading, thesis §4.1.2).
At the start of step ``k`` with measured heading :math:`\psi_m`, desired :math:`\psi_d = \psi_0 + \omega t`, and
measured pelvis position :math:`p_m` against the desired :math:`p_d` (the command integrated in the world), the
corrections are integral in the step index (the pattern yaw is a position command, the slip an unknown drift):

.. math:: \Delta\theta_k = \Delta\theta_{k-1} - \mathrm{sat}(k_\psi\,\mathrm{wrap}(\psi_m - \psi_d))

.. math:: \delta_k = \delta_{k-1} - \mathrm{sat}(k_y (e\cdot n) n + k_x (e\cdot t) t),\quad e = p_m - p_d

``t``, ``n``: desired heading and its left normal. With ``k_x = 0`` the desired point re-syncs along the path
(:math:`p_d \leftarrow p_d + (e\cdot t)t`), so a slower crawl is not chased, only held on its line.
The sign: a robot yawed left (:math:`\psi_m > \psi_d`) gets its pattern turned right.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["PlacementFeedback", "pelvis_heading_rad", "wrap"]


def wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi


def pelvis_heading_rad(R) -> float:
    """atan2 of the horizontal projection of the pelvis z axis (x axis if z is vertical)."""
    R = np.asarray(R, float)
    f = R[:2, 2]
    if np.hypot(*f) < 1e-6:
        f = R[:2, 0]
    return math.atan2(f[1], f[0])


class PlacementFeedback:
    """Integral placement corrections; :meth:`update` once per step with the measured pelvis (position, R)."""

    def __init__(self, heading_gain=0.5, lateral_gain=0.3, along_gain=0.0, max_heading_step_rad=0.05,
                 max_lateral_step_m=0.02, max_total_lateral_m=0.15):
        vals = (heading_gain, lateral_gain, along_gain, max_heading_step_rad, max_lateral_step_m, max_total_lateral_m)
        if not all(math.isfinite(v) and v >= 0 for v in vals):
            raise ValueError("feedback gains and limits must be finite and >= 0")
        self.k_psi, self.k_y, self.k_x = heading_gain, lateral_gain, along_gain
        self.max_dpsi, self.max_dy, self.max_y = max_heading_step_rad, max_lateral_step_m, max_total_lateral_m
        self.started = False
        self.dtheta = 0.0
        self.delta = np.zeros(2)
        self.log = []

    def start(self, pelvis_xy, pelvis_R) -> None:
        self.psi0 = pelvis_heading_rad(pelvis_R)
        self.p_d = np.asarray(pelvis_xy, float)[:2].copy()
        self.psi_d = self.psi0
        self.dtheta, self.delta = 0.0, np.zeros(2)
        self.started = True

    def advance_desired(self, vx, vy, wz, dt) -> None:
        """Integrate the command into the desired pelvis pose (world frame)."""
        a = self.psi_d + 0.5 * wz * dt
        c, s = math.cos(a), math.sin(a)
        self.p_d = self.p_d + np.array([c * vx - s * vy, s * vx + c * vy]) * dt
        self.psi_d += wz * dt

    def update(self, pelvis_xy, pelvis_R):
        """New corrections (Δθ, δ) from the measured pelvis; a non-finite measurement changes nothing."""
        p = np.asarray(pelvis_xy, float)[:2]
        R = np.asarray(pelvis_R, float)
        if not (np.all(np.isfinite(p)) and np.all(np.isfinite(R))):
            return self.dtheta, self.delta.copy()
        if not self.started:
            self.start(p, R)
            return self.dtheta, self.delta.copy()
        e_psi = wrap(pelvis_heading_rad(R) - self.psi_d)
        self.dtheta -= float(np.clip(self.k_psi * e_psi, -self.max_dpsi, self.max_dpsi))
        t = np.array([math.cos(self.psi_d), math.sin(self.psi_d)])
        n = np.array([-t[1], t[0]])
        e = p - self.p_d
        e_t, e_n = float(e @ t), float(e @ n)
        step = self.k_y * e_n * n + self.k_x * e_t * t
        nrm = float(np.linalg.norm(step))
        if nrm > self.max_dy:
            step *= self.max_dy / nrm
        self.delta = self.delta - step
        tot = float(np.linalg.norm(self.delta))
        if tot > self.max_y:
            self.delta *= self.max_y / tot
        if self.k_x == 0.0:
            self.p_d = self.p_d + e_t * t
        self.log.append((e_psi, e_n, e_t, self.dtheta, *self.delta))
        return self.dtheta, self.delta.copy()
