r"""Foot-placement feedback from the measured pelvis pose: heading and lateral correction every step.

Heading is the horizontal projection of the pelvis z axis (the evaluation's ``pelvis_z`` heading, thesis §4.1.2).
At the start of step ``k`` with measured heading :math:`\psi_m`, desired :math:`\psi_d = \psi_0 + \omega t`, and
measured pelvis position :math:`p_m` against the desired :math:`p_d` (the command integrated in the world), the
corrections are integral in the step index (the pattern yaw is a position command, the slip an unknown drift):

.. math:: \Delta\theta_k = \Delta\theta_{k-1} - \mathrm{sat}(k_\psi\,\mathrm{wrap}(\psi_m - \psi_d))

The pelvis of the crawling robot twists against its contact pattern (measured: ~14° in the first cycle), so holding
the pelvis heading turns the pattern, and travel along the pattern would cross the desired line. The direction of
travel is therefore steered separately, proportionally to the lateral error (pure-pursuit-like, sign flipped when
crawling backward, :math:`\sigma = \mathrm{sign}(v_x)`):

.. math:: \varphi_k = -\sigma\,\mathrm{sat}(k_\varphi\,(e\cdot n)),\quad e = p_m - p_d

and without translation (turn on the spot) the reference is shifted back instead:

.. math:: \delta_k = \delta_{k-1} - \mathrm{sat}(k_p\, e),\quad
          \dot p_d = \omega \times (p_d - c_d),\quad c_d = p_d + R(\psi_d)\,\ell

with :math:`\ell = R(-\psi_0)(c - p_0)` the lever from the pelvis to the point :math:`c` the pattern turns about
(``pivot_xy``, the contact centroid; without one :math:`p_d` stays put): the pelvis, behind the centroid, circles
it, and holding the pelvis on its start point pushed the pattern round a circle (the figures are in the
``feedback.position_gain`` description).

``t``, ``n``: desired heading and its left normal. The desired point re-syncs along the path
(:math:`p_d \leftarrow p_d + (e\cdot t)t`), so a slower crawl is not chased, only held on its line.

On an arc (translation and turn: the command's circle of radius :math:`\rho = |v| / |\omega|` about the centre
:math:`c` fixed when the command starts) both errors are taken against the nearest point of the circle instead of
the time-integrated pose: :math:`e = (|p_m - c| - \rho)\,u`, :math:`u = (p_m - c)/|p_m - c|`, and the desired
heading is the tangent's there. A crawl slower than commanded then follows the circle at its own pace; with the
time-based heading, its pattern kept turning at :math:`\omega` and the path's radius missed by up to +79 %
(session 11).
The pelvis also sways ±25° within a cycle (one period per cycle, a different phase at each limb's step), so the
errors are the means over the last ``window_s`` of per-tick errors (:meth:`track`), not single samples; the
generator updates at cycle starts with ``window_s`` = ``feedback.window_cycles`` (0.05) of a cycle: the heading and
position at the cycle start, where the thesis measures heading, drift and turn (§4.1.3), not the cycle's means (a
turn on the spot: ``feedback.turn_window_cycles``, 1.0).
Signs: a robot yawed left (:math:`\psi_m > \psi_d`) gets its pattern turned right; a robot left of its line
(:math:`e\cdot n > 0`) crawling forward is steered right.
"""
from __future__ import annotations

import math

import numpy as np

from .placement import rot2

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

    def __init__(self, heading_gain=0.5, lateral_gain_rad_per_m=2.0, max_steer_rad=0.2, position_gain=0.3,
                 max_heading_step_rad=0.05, max_position_step_m=0.02, max_total_position_m=0.15,
                 window_s: float = 5.6, pivot_xy=None):
        vals = (heading_gain, lateral_gain_rad_per_m, max_steer_rad, position_gain, max_heading_step_rad,
                max_position_step_m, max_total_position_m)
        if not all(math.isfinite(v) and v >= 0 for v in vals):
            raise ValueError("feedback gains and limits must be finite and >= 0")
        self.k_psi, self.k_phi, self.max_phi, self.k_p = heading_gain, lateral_gain_rad_per_m, max_steer_rad, position_gain
        self.max_dpsi, self.max_dp, self.max_p = max_heading_step_rad, max_position_step_m, max_total_position_m
        self.started = False
        self.dtheta = 0.0
        self.phi = 0.0
        self.delta = np.zeros(2)
        self.log = []
        self.window_s = float(window_s)
        self._buf = []          # (t, e_psi, e_x, e_y) per tick (+ the path heading there, on an arc)
        self._arc = None        # (command, centre, radius, sense, beta) of the running arc
        self.lever = None       # pelvis -> pivot in the start pelvis frame (set by start)
        self.pivot_xy = None if pivot_xy is None else np.asarray(pivot_xy, float).reshape(-1)[:2].copy()
        if self.pivot_xy is not None and not np.all(np.isfinite(self.pivot_xy)):
            raise ValueError("pivot_xy must be finite")

    def start(self, pelvis_xy, pelvis_R) -> None:
        self.psi0 = pelvis_heading_rad(pelvis_R)
        self.p_d = np.asarray(pelvis_xy, float)[:2].copy()
        self.lever = None if self.pivot_xy is None else rot2(-self.psi0) @ (self.pivot_xy - self.p_d)
        self.psi_d = self.psi0
        self.dtheta, self.delta = 0.0, np.zeros(2)
        self._arc = None
        self.started = True

    def advance_desired(self, vx, vy, wz, dt) -> None:
        """Integrate the command into the desired pelvis pose (world frame); turning on the spot, the desired
        pelvis turns about the desired pivot (the pivot's lever in the start pelvis frame)."""
        if vx == 0.0 and vy == 0.0 and wz != 0.0 and self.lever is not None:
            c = self.p_d + rot2(self.psi_d) @ self.lever
            self.p_d = c + rot2(wz * dt) @ (self.p_d - c)
            self.psi_d += wz * dt
            return
        a = self.psi_d + 0.5 * wz * dt
        c, s = math.cos(a), math.sin(a)
        self.p_d = self.p_d + np.array([c * vx - s * vy, s * vx + c * vy]) * dt
        self.psi_d += wz * dt

    def track(self, t: float, dt: float, pelvis_xy, pelvis_R, vx=0.0, vy=0.0, wz=0.0) -> None:
        """Every tick: advance the desired pose by the command over ``dt`` and record the errors (a non-finite
        measurement is skipped)."""
        p = np.asarray(pelvis_xy, float)[:2]
        R = np.asarray(pelvis_R, float)
        if not (np.all(np.isfinite(p)) and np.all(np.isfinite(R)) and math.isfinite(t) and math.isfinite(dt)):
            return
        if not self.started:
            self.start(p, R)
        self.advance_desired(vx, vy, wz, dt)
        arc = self._arc_of(vx, vy, wz)
        if arc is None:
            e = p - self.p_d
            self._buf.append((t, wrap(pelvis_heading_rad(R) - self.psi_d), e[0], e[1]))
        else:
            _cmd, c, rho, sense, beta = arc
            d = p - c
            r = float(np.hypot(d[0], d[1]))
            if r < 1e-6:
                return
            u = d / r
            psi_t = math.atan2(sense * u[0], -sense * u[1]) - beta     # heading whose travel is the tangent
            e = (r - rho) * u
            self._buf.append((t, wrap(pelvis_heading_rad(R) - psi_t), e[0], e[1], psi_t))
        while self._buf and self._buf[0][0] < t - self.window_s:
            self._buf.pop(0)

    def _arc_of(self, vx, vy, wz):
        """The running arc (command, centre, radius, sense ±1, travel angle β) for a command with translation and
        turn, else None; a new command starts a new circle through the desired pose."""
        v = math.hypot(vx, vy)
        if v == 0.0 or wz == 0.0:
            self._arc = None
            return None
        cmd = (vx, vy, wz)
        if self._arc is None or self._arc[0] != cmd:
            beta = math.atan2(vy, vx)
            sense = 1.0 if wz > 0 else -1.0
            rho = v / abs(wz)
            a = self.psi_d + beta
            centre = self.p_d + sense * rho * np.array([-math.sin(a), math.cos(a)])
            self._arc = (cmd, centre, rho, sense, beta)
        return self._arc

    def update(self, travel_sign: float = 1.0):
        """New corrections (Δθ, φ, δ) from the window's mean errors; ``travel_sign``: sign of vx (0: no translation,
        the reference is held on the start point). Without samples nothing changes."""
        if not self._buf:
            return self.dtheta, self.phi, self.delta.copy()
        if self._arc is not None:
            arc_rows = [x for x in self._buf if len(x) == 5]
            if arc_rows:
                return self._update_arc(arc_rows, travel_sign)
        self._buf = [x for x in self._buf if len(x) == 4]    # samples taken on a line (or held)
        if not self._buf:
            return self.dtheta, self.phi, self.delta.copy()
        b = np.array(self._buf)
        e_psi = float(np.mean(b[:, 1]))
        e = b[:, 2:4].mean(axis=0)
        self.dtheta -= float(np.clip(self.k_psi * e_psi, -self.max_dpsi, self.max_dpsi))
        t = np.array([math.cos(self.psi_d), math.sin(self.psi_d)])
        n = np.array([-t[1], t[0]])
        e_t, e_n = float(e @ t), float(e @ n)
        if travel_sign != 0.0:
            self.phi = -math.copysign(1.0, travel_sign) * float(np.clip(self.k_phi * e_n, -self.max_phi, self.max_phi))
            self.p_d = self.p_d + e_t * t            # re-sync along the path (speed is not chased)
            self._buf = [(tt, ep, ex - e_t * t[0], ey - e_t * t[1]) for tt, ep, ex, ey in self._buf]
        else:
            self.phi = 0.0
            step = self.k_p * e
            nrm = float(np.linalg.norm(step))
            if nrm > self.max_dp:
                step *= self.max_dp / nrm
            self.delta = self.delta - step
            tot = float(np.linalg.norm(self.delta))
            if tot > self.max_p:
                self.delta *= self.max_p / tot
        self.log.append((e_psi, e_n, e_t, self.dtheta, self.phi, *self.delta))
        return self.dtheta, self.phi, self.delta.copy()

    def _update_arc(self, rows, travel_sign: float):
        """:meth:`update` on an arc: the window's errors against the circle (each sample in its own path frame; no
        re-sync, the errors are already taken at the nearest point of the path)."""
        b = np.array(rows)
        e_psi = float(np.mean(b[:, 1]))
        c, s = np.cos(b[:, 4]), np.sin(b[:, 4])
        e_t = float(np.mean(b[:, 2] * c + b[:, 3] * s))
        e_n = float(np.mean(-b[:, 2] * s + b[:, 3] * c))
        self.dtheta -= float(np.clip(self.k_psi * e_psi, -self.max_dpsi, self.max_dpsi))
        sign = travel_sign if travel_sign != 0.0 else 1.0
        self.phi = -math.copysign(1.0, sign) * float(np.clip(self.k_phi * e_n, -self.max_phi, self.max_phi))
        self.log.append((e_psi, e_n, e_t, self.dtheta, self.phi, *self.delta))
        return self.dtheta, self.phi, self.delta.copy()
