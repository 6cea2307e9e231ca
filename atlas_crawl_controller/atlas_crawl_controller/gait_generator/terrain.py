r"""What the gait generator takes from a height map (issue 13 §2; thesis §5.4: foothold planning on a map).

A :class:`Terrain` wraps a checked :class:`~atlas_crawl_controller.height_map.HeightMap` with the generator's
``terrain.*`` parameters and answers four questions:

* **foothold** — near a nominal landing point :math:`p`, the candidate :math:`c` (grid of the map's resolution within
  ``search_radius_m``) minimising

  .. math:: J(c) = \frac{d_a^2}{r_a^2} + \frac{d_c^2}{r_c^2} + \frac{\Delta h(c)}{\Delta h_{max}},\qquad
            \Delta h(c) = \max_{B(c, r_p)} h - \min_{B(c, r_p)} h

  (:math:`d_a, d_c` the offset along and across the travel direction; a sideways shift costs more, it is drift) over
  the candidates inside that ellipse (radii ``search_radius_m``, ``search_radius_cross_m``) whose patch
  :math:`B(c, r_p)` (radius ``patch_radius_hand_m`` / ``patch_radius_knee_m``) is fully known and whose height spread
  :math:`\Delta h` stays within ``max_step_m`` (an edge or a steep spot). The contact is placed at its resting
  height there: the highest ground within ``contact_radius_m``. No candidate within ``max_step_m``: the known one of
  least cost (the least uneven nearby); none known: the nominal point, at its resting height if known there.
* **swing clearance** — the apex :math:`a` of the swing arc (lift :math:`a\,b(\tau)`, :math:`b = 4\tau(1-\tau)`, over
  the min-jerk line :math:`z_{line}(\tau)`) that clears the ground under its path by the clearance :math:`c\,b(\tau)`
  (``swing_clearance_m``; zero at lift-off and touchdown):

  .. math:: a = \max_\tau \frac{\max(0,\, h(x(\tau)) + o - z_{line}(\tau))}{b(\tau)} + c

  with :math:`o` the contact point's height above the ground and :math:`h(x)` the highest ground within
  ``swing_pad_m`` of :math:`x` along the path (the limb's body, not only its contact point); the generator adds :math:`\max(0, a - l)` to the
  nominal lift :math:`l`, within ``max_lift_m``.
* **ground normal** — the least-squares plane :math:`z = a x + b y + d` through the ground under the contacts,
  :math:`n \propto (-a, -b, 1)`, tilted at most ``max_tilt_deg``.
* **speed** — the scale of the command (vx, vy and wz alike, so an arc keeps its radius) on ground sloping by :math:`\alpha = \operatorname{atan}(|n \cdot d| / n_z)` along
  the travel direction :math:`d` (up or down; with ``across_slope_weight`` :math:`w` > 0 the slope across it counts
  too, :math:`\alpha = \operatorname{atan}(\sqrt{(n \cdot d)^2 + w^2 (n \cdot d_\perp)^2} / n_z)`): 1 up to
  ``slow_from_slope_deg``, falling linearly to
  ``slowest_speed_scale`` at ``slowest_slope_deg`` and beyond (a fast dynamic crawl stalls uphill and falls downhill
  at full speed). Also scaled, by the same rule in metres, when the ground in the corridor from the knees to
  ``lookahead_m`` ahead of the hands leaves the plane through the ground under the contacts by more than
  ``slow_from_step_m`` (down to ``slowest_speed_scale`` at ``slowest_step_m``): a step or a block ahead is met
  slowly, while a plain slope leaves that plane by nothing. The smaller of the two scales applies.

Heights off the map or next to an unknown cell are NaN; the generator then keeps its blind (flat-ground) plan for
that contact.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from atlas_crawl_kinematics.cartesian_gait import min_jerk

from ..height_map import HeightMap, fit_plane

__all__ = ["Terrain"]


class Terrain:
    """Args: ``height_map`` (a checked HeightMap), ``p``: the generator's parameter values (``terrain.*`` read)."""

    def __init__(self, height_map: HeightMap, p):
        if not isinstance(height_map, HeightMap):
            raise TypeError("Terrain needs an atlas_crawl_controller.height_map.HeightMap")
        self.map = height_map
        self.search_radius_m = float(p["terrain.search_radius_m"])
        self.patch_radius_m = ([float(p["terrain.patch_radius_hand_m"])] * 2
                               + [float(p["terrain.patch_radius_knee_m"])] * 2)
        self.max_step_m = float(p["terrain.max_step_m"])
        self.clearance_m = float(p["terrain.swing_clearance_m"])
        self.max_tilt_rad = math.radians(float(p["terrain.max_tilt_deg"]))
        self.max_lift_m = float(p["terrain.max_lift_m"])
        self.pad_m = float(p["terrain.swing_pad_m"])
        self.search_cross_m = min(float(p["terrain.search_radius_cross_m"]), self.search_radius_m)
        self.slow_from_rad = math.radians(float(p["terrain.slow_from_slope_deg"]))
        self.slowest_rad = max(math.radians(float(p["terrain.slowest_slope_deg"])), self.slow_from_rad)
        self.slowest_scale = float(p["terrain.slowest_speed_scale"])
        self.across_w = float(p["terrain.across_slope_weight"])
        self.slow_from_step_m = float(p["terrain.slow_from_step_m"])
        self.slowest_step_m = max(float(p["terrain.slowest_step_m"]), self.slow_from_step_m)
        self.lookahead_m = float(p["terrain.lookahead_m"])
        # candidates and patches on the map's grid, but no finer than 2.5 / 2 cm (a fine user map would otherwise
        # cost ~1e6 lookups per foothold)
        res = max(self.map.resolution_m, 0.025)
        n = int(math.floor(self.search_radius_m / res + 1e-9))
        g = np.arange(-n, n + 1) * res
        #: candidate offsets (along, across) the travel direction, in the ellipse of the two search radii
        ra, rc = max(self.search_radius_m, 1e-9), max(self.search_cross_m, 1e-9)
        cand = np.array([(a, c) for c in g for a in g if (a / ra) ** 2 + (c / rc) ** 2 <= 1.0 + 1e-9])
        self._cand = cand[np.argsort(np.hypot(cand[:, 0] / ra, cand[:, 1] / rc), kind="stable")]
        self._cost = np.hypot(self._cand[:, 0] / ra, self._cand[:, 1] / rc) ** 2
        self._patch = [self._disc(self.patch_radius_m[i], max(self.map.resolution_m, 0.02)) for i in range(4)]
        rc, a = float(p["terrain.contact_radius_m"]), np.linspace(0.0, 2 * math.pi, 8, endpoint=False)
        self._rest = np.vstack([[0.0, 0.0], rc * np.c_[np.cos(a), np.sin(a)], 0.5 * rc * np.c_[np.cos(a), np.sin(a)]])

    @staticmethod
    def _disc(radius: float, res: float) -> np.ndarray:
        m = int(math.ceil(radius / res - 1e-9))
        g = np.arange(-m, m + 1) * res
        d = np.array([(x, y) for y in g for x in g if x * x + y * y <= radius ** 2 + 1e-12])
        return d if len(d) else np.zeros((1, 2))

    def height(self, xy) -> float:
        """Resting height of a contact at ``xy``: the highest ground within ``contact_radius_m`` (a knee or a fist
        rests on the highest point under it, not on the ground below its centre); NaN if any of it is unknown."""
        h = self.map.heights_at(np.asarray(xy, float).reshape(1, 2) + self._rest)
        return float(h.max()) if np.all(np.isfinite(h)) else math.nan

    def foothold(self, xy, limb: int, heading_rad: float = 0.0) -> tuple[np.ndarray, float]:
        """(chosen xy, ground z there) of ``limb`` (0..3: LW, RW, LK, RK) near the nominal ``xy``, travelling along
        ``heading_rad``; z NaN where the ground is unknown."""
        p = np.asarray(xy, float).reshape(2)
        c, s = math.cos(heading_rad), math.sin(heading_rad)
        cand = p + self._cand @ np.array([[c, s], [-s, c]])                # (M, 2), nearest first
        patch = self._patch[limb]
        h = self.map.heights_at((cand[:, None, :] + patch[None]).reshape(-1, 2)).reshape(len(cand), -1)
        known = np.all(np.isfinite(h), axis=1)
        spread = np.full(len(cand), np.inf)
        spread[known] = h[known].max(axis=1) - h[known].min(axis=1)
        j = self._cost + spread / max(self.max_step_m, 1e-9)
        ok = spread <= self.max_step_m
        if not ok.any():
            if not known.any():
                return p.copy(), self.height(p)
            ok = known                   # no patch within max_step_m: the least uneven one
        best = cand[int(np.argmin(np.where(ok, j, np.inf)))]
        return best.copy(), self.height(best)

    def extra_lift(self, p0, p1, offset_m: float, lift_m: float, samples: int = 16) -> float:
        """Apex height to add to ``lift_m`` so the swing arc from ``p0`` to ``p1`` (contact points (3,); the arc of
        :func:`~atlas_crawl_kinematics.cartesian_gait.swing_arc`: min-jerk along the line, parabolic lift in time)
        clears the ground (+ ``offset_m``, the contact point's height above it) by the clearance; at most
        ``terrain.max_lift_m`` in all."""
        p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
        tau = np.linspace(0.0, 1.0, samples + 2)[1:-1]
        s = np.array([float(min_jerk(t)) for t in tau])
        d = p1[:2] - p0[:2]
        L = float(np.linalg.norm(d))
        # ground under the limb's body, not only its contact point: the highest ground within swing_pad_m along the
        # path of each sample (a knee is ~0.15 m long along the path), lift-off to touchdown
        w = np.linspace(-self.pad_m, self.pad_m, 2 * int(math.ceil(self.pad_m / self.map.resolution_m)) + 1)
        u = np.clip(s[:, None] + (w[None, :] / L if L > 1e-9 else 0.0 * w[None, :]), 0.0, 1.0)
        hw = self.map.heights_at((p0[:2] + u.reshape(-1, 1) * d)).reshape(u.shape)
        h = np.where(np.all(np.isnan(hw), axis=1), np.nan, np.nanmax(np.where(np.isnan(hw), -np.inf, hw), axis=1))
        b = 4.0 * tau * (1.0 - tau)                            # the parabola's shape in time
        above = np.maximum(h + offset_m - (p0[2] + s * (p1[2] - p0[2])), 0.0)   # ground above the line
        need = above / b + self.clearance_m                  # apex clearing it by clearance_m * b
        need = need[np.isfinite(need)]
        need = float(need.max()) if need.size else 0.0
        return float(np.clip(need - lift_m, 0.0, max(0.0, self.max_lift_m - lift_m)))

    def speed_scale(self, normal, heading_rad: float) -> float:
        """Scale of the commanded speed on the ground of unit normal ``normal`` (None: 1) travelling along
        ``heading_rad`` (see the module doc)."""
        if normal is None:
            return 1.0
        n = np.asarray(normal, float)
        c, s = math.cos(heading_rad), math.sin(heading_rad)
        along, across = n[0] * c + n[1] * s, -n[0] * s + n[1] * c
        a = math.atan2(math.hypot(along, self.across_w * across), max(n[2], 1e-9))
        return self._ramp(a, self.slow_from_rad, self.slowest_rad)

    def _ramp(self, x: float, lo: float, hi: float) -> float:
        """1 up to ``lo``, ``slowest_speed_scale`` from ``hi`` on, linear between."""
        if x <= lo:
            return 1.0
        if x >= hi:
            return self.slowest_scale
        return 1.0 + (x - lo) / (hi - lo) * (self.slowest_scale - 1.0)

    def step_ahead_m(self, contacts_xy, heading_rad: float) -> float:
        """Largest height of the known ground off the plane through the ground under ``contacts_xy`` (4, 2), in the
        corridor from the rearmost contact to ``lookahead_m`` ahead of the foremost one along ``heading_rad`` and as
        wide as the contacts (the map's grid, no finer than 2.5 cm); 0 when fewer than 3 contacts are on the map."""
        xy = np.asarray(contacts_xy, float).reshape(-1, 2)
        plane = self._ground_plane(xy)
        if plane is None:
            return 0.0
        a, b, d = plane
        t = np.array([math.cos(heading_rad), math.sin(heading_rad)])
        n = np.array([-t[1], t[0]])
        along, across = xy @ t, xy @ n
        res = max(float(self.map.resolution_m), 0.025)      # as the foothold grid: a fine map costs no more
        s = np.arange(along.min(), along.max() + self.lookahead_m + 1e-9, res)
        w = np.arange(across.min(), across.max() + 1e-9, res)
        S, W = np.meshgrid(s, w, indexing="ij")
        pts = S.reshape(-1, 1) * t + W.reshape(-1, 1) * n
        h = self.map.heights_at(pts)
        k = np.isfinite(h)
        if not k.any():
            return 0.0
        off = np.abs(h[k] - (a * pts[k, 0] + b * pts[k, 1] + d))
        return float(off.max())

    def step_scale(self, contacts_xy, heading_rad: float) -> float:
        """Scale of the commanded speed for the step ahead (:meth:`step_ahead_m`; see the module doc)."""
        if self.slow_from_step_m >= 1.0:
            return 1.0
        return self._ramp(self.step_ahead_m(contacts_xy, heading_rad), self.slow_from_step_m, self.slowest_step_m)

    def _ground_plane(self, xy):
        """(a, b, d) of the least-squares plane z = a x + b y + d through the known ground under ``xy`` (N, 2);
        None if fewer than 3 of them are on the map."""
        z = self.map.heights_at(xy)
        ok = np.isfinite(z)
        if ok.sum() < 3:
            return None
        return fit_plane(xy[ok], z[ok])[:3]

    def normal(self, contacts_xy) -> Optional[np.ndarray]:
        """Unit ground normal of the plane through the ground under ``contacts_xy`` (N >= 3, (N, 2)), tilt clamped;
        None if fewer than 3 of them are on the map."""
        plane = self._ground_plane(np.asarray(contacts_xy, float).reshape(-1, 2))
        if plane is None:
            return None
        a, b, _d = plane
        n = np.array([-a, -b, 1.0])
        n /= np.linalg.norm(n)
        tilt = math.acos(min(1.0, n[2]))
        if tilt > self.max_tilt_rad and tilt > 0:
            h = n[:2] / np.linalg.norm(n[:2])
            n = np.array([h[0] * math.sin(self.max_tilt_rad), h[1] * math.sin(self.max_tilt_rad),
                          math.cos(self.max_tilt_rad)])
        return n

