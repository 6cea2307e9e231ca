"""Cartesian crawl gait generator (thesis §4.2.3, issue 4 §3): world-frame targets for the four contact points.

The thesis fed recorded end-effector positions of its hand-tuned crawl into the IIK (§4.2.3). Here the gait is
*generated* in Cartesian space, one limb at a time in the tripod order of thesis §4.1.3 (left arm, right leg,
right arm, left leg = LW, RK, RW, LK), each step made of two phases:

* **shift** (all four contacts in stance): the CoM target moves to a point of the support triangle that will remain
  when the limb lifts (margin-respecting: the first point along the segment quad-centroid → triangle incentre whose
  margin reaches ``margin_m``);
* **swing**: the limb's contact moves from its stance position to one stride ahead on a lifted arc — horizontal
  minimum-jerk profile, vertical parabola ``z = z0 + (z1 − z0)·s(τ) + h·4τ(1 − τ)`` (the parabolic lift of the
  ladder-climbing seed 004, so a swinging hand does not scrape), while the other three stay fixed in the world.

Each limb moves exactly ``stride_m`` per cycle along the body heading (``direction`` = +1 forward, −1 backward) and
the nominal contact pattern turns by ``turn_rad_per_cycle`` about the body reference point (+ = left, CCW).
A planned pelvis path (the body reference advancing linearly) is also given, for gaits that track the pelvis
instead of the CoM (the "CoM-unfriendly" variant of issue 4 §4: ``com_forward_bias_m`` puts the body ahead).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .support import stability_margin, support_polygon

__all__ = ["GaitParams", "GaitSample", "CartesianGait", "LIMB_NAMES", "TRIPOD_ORDER", "min_jerk",
           "swing_arc", "margin_point", "incentre"]

LIMB_NAMES = ("LW", "RW", "LK", "RK")
#: thesis §4.1.3 order: left arm, right leg, right arm, left leg
TRIPOD_ORDER = ("LW", "RK", "RW", "LK")


class GaitError(ValueError):
    """Invalid gait parameters or inputs (non-finite, wrong shape, non-positive durations)."""


def min_jerk(tau):
    """Minimum-jerk time scaling s(τ) = 10τ³ − 15τ⁴ + 6τ⁵, τ clipped to [0, 1]."""
    t = np.clip(tau, 0.0, 1.0)
    return t**3 * (10 - 15 * t + 6 * t * t)


def swing_arc(p0: ArrayLike, p1: ArrayLike, lift_m: float, tau: float) -> NDArray[np.float64]:
    """Contact position on the lifted arc at phase τ ∈ [0, 1] (horizontal min-jerk, parabolic lift, seed 004)."""
    p0 = np.asarray(p0, float)
    p1 = np.asarray(p1, float)
    s = float(min_jerk(tau))
    t = float(np.clip(tau, 0.0, 1.0))
    p = p0 + (p1 - p0) * s
    p[2] = p0[2] + (p1[2] - p0[2]) * s + lift_m * 4.0 * t * (1.0 - t)
    return p


def incentre(tri_xy: ArrayLike) -> NDArray[np.float64]:
    """Incentre of a triangle (the point of maximum margin). For other polygons: the vertex mean."""
    P = np.asarray(tri_xy, float)[:, :2]
    if len(P) != 3:
        return P.mean(axis=0)
    a = np.linalg.norm(P[1] - P[2])
    b = np.linalg.norm(P[0] - P[2])
    c = np.linalg.norm(P[0] - P[1])
    s = a + b + c
    if s <= 0:
        return P.mean(axis=0)
    return (a * P[0] + b * P[1] + c * P[2]) / s


def margin_point(start_xy: ArrayLike, support_xy: ArrayLike, margin_m: float, n: int = 61,
                 polygon: ArrayLike | None = None) -> NDArray[np.float64]:
    """The first point on the segment ``start → max-margin point`` of the support polygon whose static margin is at
    least ``margin_m``; ``start`` itself if it already is; the max-margin point if the polygon is too small.
    ``polygon``: ``support_polygon(support_xy)`` if the caller has it already."""
    start = np.asarray(start_xy, float)[:2]
    pts = np.asarray(support_xy, float)[:, :2]
    poly = support_polygon(pts) if polygon is None else np.asarray(polygon, float)
    if len(poly) < 3:
        return poly.mean(axis=0)
    if stability_margin(start, poly) >= margin_m:
        return start.copy()
    goal = incentre(poly) if len(poly) == 3 else _chebyshev(poly)
    ts = np.linspace(0.0, 1.0, n)
    if margin_m > 0:
        # vectorised over the candidates (the per-point loop below costs ~5 ms): a point with margin >= margin_m > 0
        # lies inside, where the margin is the smallest signed distance to the edge lines
        a = poly
        e = np.roll(poly, -1, axis=0) - a
        n_in = np.stack([-e[:, 1], e[:, 0]], axis=1) / np.linalg.norm(e, axis=1)[:, None]
        cand = start[None, :] + ts[:, None] * (goal - start)[None, :]
        d = (cand[:, None, 0] - a[None, :, 0]) * n_in[None, :, 0] + (cand[:, None, 1] - a[None, :, 1]) * n_in[None, :, 1]
        ok = np.flatnonzero(d.min(axis=1) >= margin_m)
        return start + ts[ok[0]] * (goal - start) if ok.size else goal
    for t in ts:
        p = start + t * (goal - start)
        if stability_margin(p, poly) >= margin_m:
            return p
    return goal


def _chebyshev(poly: NDArray) -> NDArray:
    """Chebyshev centre (max inscribed circle) of a convex CCW polygon by LP."""
    from scipy.optimize import linprog
    a, b = poly, np.roll(poly, -1, axis=0)
    e = b - a
    n_in = np.stack([-e[:, 1], e[:, 0]], 1) / np.linalg.norm(e, axis=1)[:, None]
    # maximise r s.t. n_i·(p − a_i) ≥ r  ⇔  −n_i·p + r ≤ −n_i·a_i
    A = np.c_[-n_in, np.ones(len(poly))]
    bb = -np.einsum("ij,ij->i", n_in, a)
    res = linprog([0, 0, -1], A_ub=A, b_ub=bb, bounds=[(None, None)] * 3)
    return res.x[:2] if res.success else poly.mean(axis=0)


@dataclass
class GaitParams:
    """Parameters of the Cartesian crawl (units in the names). Defaults: a quasi-static forward crawl."""

    stride_m: float = 0.20  #: distance each contact (and the body) advances per cycle
    lift_hand_m: float = 0.08  #: swing apex height above the straight line, wrists
    lift_knee_m: float = 0.05  #: same, knees
    t_shift_s: float = 0.45  #: CoM shift before each lift (four-point stance)
    t_swing_s: float = 0.45  #: swing duration
    t_start_s: float = 0.5  #: initial four-point hold before the first shift
    direction: int = 1  #: +1 forward, −1 backward
    turn_rad_per_cycle: float = 0.0  #: yaw of the contact pattern per cycle (+ = left / CCW)
    margin_m: float = 0.04  #: planned static margin of the CoM target in every tripod
    com_forward_bias_m: float = 0.0  #: CoM target offset along the heading (the CoM-unfriendly variant: > 0)
    order: tuple[str, ...] = TRIPOD_ORDER

    def validate(self) -> None:
        for k in ("stride_m", "lift_hand_m", "lift_knee_m", "t_shift_s", "t_swing_s", "t_start_s", "margin_m",
                  "turn_rad_per_cycle", "com_forward_bias_m"):
            v = getattr(self, k)
            if not np.isfinite(v):
                raise GaitError(f"GaitParams.{k} must be finite, got {v!r}")
        if self.t_shift_s <= 0 or self.t_swing_s <= 0 or self.t_start_s < 0:
            raise GaitError("phase durations must be > 0 (t_start_s >= 0)")
        if self.stride_m < 0 or self.lift_hand_m < 0 or self.lift_knee_m < 0:
            raise GaitError("stride and lifts must be >= 0 (use direction=-1 to go backwards)")
        if self.direction not in (1, -1):
            raise GaitError("direction must be +1 or -1")
        if sorted(self.order) != sorted(LIMB_NAMES):
            raise GaitError(f"order must be a permutation of {LIMB_NAMES}")

    @property
    def step_s(self) -> float:
        return self.t_shift_s + self.t_swing_s

    @property
    def cycle_s(self) -> float:
        return len(self.order) * self.step_s


@dataclass
class GaitSample:
    t: float
    targets: NDArray[np.float64]  #: (4, 3) world targets LW, RW, LK, RK
    stance: NDArray[np.bool_]  #: (4,) planned stance
    com_xy: NDArray[np.float64]  #: (2,) planned CoM (horizontal)
    pelvis_xy: NDArray[np.float64]  #: (2,) planned body reference point
    heading_rad: float
    cycle: int  #: −1 before the first cycle / after the last
    phase: int  #: index of the phase inside the cycle (0..7: shift, swing per limb)
    swing: int  #: swinging limb index or −1
    phase_name: str = ""
    extra: dict = field(default_factory=dict)


class CartesianGait:
    """Precomputed Cartesian crawl over ``cycles`` cycles, sampled with :meth:`sample` (see module doc).

    Args:
        contacts0: (4, 3) world positions of LW, RW, LK, RK at the start (all in stance).
        com0_xy: (2,) start CoM projection.
        heading0_rad: start heading (direction of travel for ``direction = +1``).
        params: :class:`GaitParams`.
        cycles: number of gait cycles.
    """

    def __init__(self, contacts0: ArrayLike, com0_xy: ArrayLike, heading0_rad: float, params: GaitParams | None = None,
                 cycles: int = 1):
        c0 = np.asarray(contacts0, float)
        if c0.shape != (4, 3) or not np.all(np.isfinite(c0)):
            raise GaitError("contacts0 must be a finite (4, 3) array")
        com0 = np.asarray(com0_xy, float).reshape(-1)[:2]
        if not np.all(np.isfinite(com0)) or not math.isfinite(heading0_rad):
            raise GaitError("com0_xy and heading0_rad must be finite")
        if int(cycles) < 1:
            raise GaitError("cycles must be >= 1")
        self.p = params or GaitParams()
        self.p.validate()
        self.cycles = int(cycles)
        self.contacts0 = c0.copy()
        self.heading0 = float(heading0_rad)
        # body reference: centroid of the contacts, heading0; nominal contacts relative to it
        self.ref0 = c0[:, :2].mean(axis=0)
        R = _rot2(-self.heading0)
        self.rel = (c0[:, :2] - self.ref0) @ R.T  # body-frame nominal offsets
        self._build(com0)

    # ------------------------------------------------------------------ plan
    def _ref(self, c: float):
        """Body reference (xy, heading) after ``c`` cycles (fractional allowed, linear in c)."""
        p = self.p
        th = self.heading0 + p.turn_rad_per_cycle * c
        if abs(p.turn_rad_per_cycle) < 1e-12:
            d = p.direction * p.stride_m * c * np.array([math.cos(self.heading0), math.sin(self.heading0)])
            return self.ref0 + d, th
        # arc: constant curvature, chord per cycle of length stride at the mid heading
        xy = self.ref0.copy()
        n = int(math.floor(c))
        for k in range(n + 1):
            frac = min(1.0, c - k)
            if frac <= 0:
                break
            hm = self.heading0 + p.turn_rad_per_cycle * (k + 0.5 * frac)
            xy = xy + p.direction * p.stride_m * frac * np.array([math.cos(hm), math.sin(hm)])
        return xy, th

    def _build(self, com0):
        p = self.p
        order = [LIMB_NAMES.index(n) for n in p.order]
        contacts = self.contacts0.copy()
        com = com0.copy()
        self.phases = []  # (t0, t1, kind, limb, contacts_before, goal, com_from, com_to, cycle, phase_idx)
        t = p.t_start_s
        for c in range(self.cycles):
            ref1, th1 = self._ref(c + 1)
            for k, li in enumerate(order):
                tri = [j for j in range(4) if j != li]
                start = contacts[:, :2].mean(axis=0)
                u = np.array([math.cos(self.heading0 + p.turn_rad_per_cycle * (c + k / 4)),
                              math.sin(self.heading0 + p.turn_rad_per_cycle * (c + k / 4))])
                start = start + p.com_forward_bias_m * u
                if p.com_forward_bias_m != 0.0:
                    com_to = start  # unfriendly: no margin logic, the CoM just rides ahead of the centroid
                else:
                    com_to = margin_point(start, contacts[tri, :2], p.margin_m)
                self.phases.append((t, t + p.t_shift_s, "shift", li, contacts.copy(), None, com.copy(),
                                    com_to.copy(), c, 2 * k))
                t += p.t_shift_s
                goal = contacts[li].copy()
                goal[:2] = ref1 + _rot2(th1) @ self.rel[li]
                self.phases.append((t, t + p.t_swing_s, "swing", li, contacts.copy(), goal, com_to.copy(),
                                    com_to.copy(), c, 2 * k + 1))
                t += p.t_swing_s
                contacts[li] = goal
                com = com_to
        self.t_end = t
        self.final_contacts = contacts
        self.final_com = com
        self._t0 = np.array([ph[0] for ph in self.phases])

    @property
    def duration_s(self) -> float:
        return self.t_end

    # ------------------------------------------------------------------ sample
    def sample(self, t: float) -> GaitSample:
        """Targets at time ``t`` (s, from the gait start). Before the first phase: hold; after the last: hold."""
        if not math.isfinite(t):
            raise GaitError("t must be finite")
        p = self.p
        if t < self.p.t_start_s or not self.phases:
            ref, th = self._ref(0)
            return GaitSample(t, self.contacts0.copy(), np.ones(4, bool), self.phases[0][6].copy(), ref, th, -1,
                              -1, -1, "start")
        if t >= self.t_end:
            ref, th = self._ref(self.cycles)
            return GaitSample(t, self.final_contacts.copy(), np.ones(4, bool), self.final_com.copy(), ref, th,
                              -1, -1, -1, "end")
        i = int(np.searchsorted(self._t0, t, side="right") - 1)
        t0, t1, kind, li, cb, goal, cf, ct, cyc, ph = self.phases[i]
        tau = (t - t0) / (t1 - t0)
        targets = cb.copy()
        stance = np.ones(4, bool)
        if kind == "shift":
            com = cf + (ct - cf) * float(min_jerk(tau))
            swing = -1
        else:
            lift = p.lift_hand_m if li < 2 else p.lift_knee_m
            targets[li] = swing_arc(cb[li], goal, lift, tau)
            stance[li] = False
            com = ct.copy()
            swing = li
        ref, th = self._ref(cyc + (ph + tau) / 8.0)
        return GaitSample(t, targets, stance, com, ref, th, cyc, ph, swing, f"{kind}_{LIMB_NAMES[li]}")

    def trajectory(self, dt: float = 0.01):
        """(times (N,), targets (N, 4, 3), planned stance (N, 4)) sampled every ``dt`` over the whole gait."""
        ts = np.arange(0.0, self.t_end + 1e-9, dt)
        S = [self.sample(t) for t in ts]
        return ts, np.array([s.targets for s in S]), np.array([s.stance for s in S])


def _rot2(a: float) -> NDArray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s], [s, c]])
