"""The IIK's own world against the measured one: where a swing lands."""
from __future__ import annotations

import math

import numpy as np

from .errors import TrackerError

__all__ = ["WorldDrift", "fit_planar_rigid"]

#: stance contacts in touch needed to measure the drift (two define a planar rigid map; three over-determine it)
MIN_CONTACTS = 3


def fit_planar_rigid(src_xy, dst_xy):
    r"""(θ, t): the planar rigid map :math:`x \mapsto R(\theta) x + t` that best maps the points ``src_xy`` (N, 2) to
    ``dst_xy`` (N, 2) in least squares (2-D Kabsch: :math:`\theta = \mathrm{atan2}(\sum a \times b, \sum a \cdot b)`
    over the centred pairs, :math:`t = \bar d - R \bar s`)."""
    s, d = np.asarray(src_xy, float), np.asarray(dst_xy, float)
    if s.shape != d.shape or s.ndim != 2 or s.shape[1] != 2 or len(s) < 2:
        raise ValueError("fit_planar_rigid: needs two (N, 2) arrays, N >= 2")
    sc, dc = s.mean(axis=0), d.mean(axis=0)
    a, b = s - sc, d - dc
    th = math.atan2(float(np.sum(a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0])), float(np.sum(a * b)))
    return th, dc - _rot(th) @ sc


def _rot(th: float) -> np.ndarray:
    """The planar rotation matrix :math:`R(\theta)`."""
    c, s = math.cos(th), math.sin(th)
    return np.array([[c, -s], [s, c]])


class WorldDrift:
    r"""Swing targets mapped into the IIK's world by the drift measured at the stance contacts.

    With the internal seed (thesis Eq. 4.14) the IIK keeps a world of its own: its stance targets stay put while the
    real contacts slip, so the two worlds part by a planar rigid map :math:`D` (yaw :math:`\delta`, shift
    :math:`d`), measured at every solve from the stance contacts in touch (:func:`fit_planar_rigid` from the IIK's
    stance targets to the sensed contacts, at least :data:`MIN_CONTACTS`; first-order filter of time constant
    ``time_constant_s``). A plan in the measured world (the gait generator's feedback) is mapped back per limb,
    :math:`x^*_{l} = D_l^{-1} x_{plan,l}`, with :math:`D_l` latched when limb ``l`` lifts off: a swing lands where the
    plan wants it in the real world, and a limb in stance keeps its target (moving it would drag the limb). The heading
    of the orientation holds maps with the current :math:`D`, as do the sensed CoM and contacts (the CoM modulation's
    support polygon). The fit compares the IIK's targets with the sensed contact sites, so it takes in a limb that
    landed off its target as well as slip (composing the slip of the sensed sites alone, which also move as a knee or
    wrist rolls, made a 1 m arc close at 0.73 m).
    Without it, a 1 m arc drifted 47° between the two worlds in 10 cycles and closed at 0.65 m (README, issue 12).

    **Bounded correction.** While the contacts slide (a slope at friction 0.5) :math:`D` runs away from the
    :math:`D_l` the stance limbs latched, and a full mapping both steps ever further to make up the slip, which
    slides the contacts more (a one-limb turn: D's yaw to −80° in 3 cycles, the robot turning the wrong way), and puts
    the CoM target off the support the IIK holds. So a swing target and the plan's CoM go where the held support
    puts them, :math:`F` (:func:`fit_planar_rigid` from the plan's held stance contacts to the IIK's targets for them),
    moved towards the full mapping by at most ``max_correction_m``:
    :math:`x^* = F x + \mathrm{clip}(D^{-1} x - F x, c_{max})`. With a steady drift :math:`F \approx D^{-1}` and
    nothing changes.

    **A plan's own bound** (:meth:`set_bound`, a reference's ``drift_correction_max_m``; the gait generator asks it
    for a straight crawl): :math:`F x` is first turned about the held support's centroid :math:`c` by the yaw
    :math:`D` and :math:`F` differ in, :math:`a = c + R(-\delta - \theta_F)(F x - c)`, and only the shift is bounded:
    :math:`x^* = a + \mathrm{clip}(D^{-1} x - a, b)`. A straight crawl's rotational slip is made up in full (from
    the graph's key-frame start its pattern slips ~2° a cycle, about 2.6 cm at a hand; bounding it by 0.005 m left the
    robot 0.13 m off its line in 10 cycles), its sideways slip by at most ``b``."""

    def __init__(self, enabled: bool = False, time_constant_s: float = 0.5, max_correction_m: float = math.inf):
        if not (math.isfinite(time_constant_s) and time_constant_s >= 0):
            raise TrackerError(f"drift time constant must be finite and >= 0, got {time_constant_s}")
        if not max_correction_m >= 0:
            raise TrackerError(f"drift max_correction_m must be >= 0, got {max_correction_m}")
        self.enabled = bool(enabled)
        self.time_constant_s = float(time_constant_s)
        self.default_max_correction_m = float(max_correction_m)
        self.max_correction_m = self.default_max_correction_m     #: the bound of the current solve
        self.yaw_in_full = False                                   #: the current solve maps D's yaw in full
        self.start()

    def set_bound(self, max_correction_m=None) -> None:
        """The next solves': ``max_correction_m`` (>= 0, the plan's request) bounds the shift, D's yaw in full; None:
        the configured bound on the whole correction."""
        if max_correction_m is None:
            self.max_correction_m, self.yaw_in_full = self.default_max_correction_m, False
            return
        b = float(max_correction_m)
        if not b >= 0:
            raise TrackerError(f"drift max_correction_m must be >= 0, got {max_correction_m}")
        self.max_correction_m, self.yaw_in_full = b, True

    def start(self) -> None:
        self.yaw = 0.0                      #: current drift D: yaw (rad) and shift (m), IIK world -> measured
        self.shift = np.zeros(2)
        self.limb = [(0.0, np.zeros(2)) for _ in range(4)]     #: D latched per limb at its last lift-off
        self.last = None                    #: the stance targets of the last solve (IIK world)
        self._plan = None                   #: the plan's targets of the last solve (measured world)
        self._stance = np.ones(4, bool)
        self.max_correction_m, self.yaw_in_full = self.default_max_correction_m, False

    @staticmethod
    def inverse(yaw, shift, xy):
        """:math:`D^{-1}` of the map (yaw, shift) applied to the points ``xy`` (..., 2)."""
        return (np.asarray(xy, float) - shift) @ _rot(yaw)

    def observe(self, sensed_contacts, touch, stance, dt_s: float) -> None:
        """Update :math:`D` from the stance contacts in touch (sensed, measured world) against the targets the IIK
        held for them at the last solve; fewer than :data:`MIN_CONTACTS` or non-finite data: unchanged."""
        if not self.enabled or self.last is None:
            return
        use = np.asarray(stance, bool) & np.asarray(touch, bool) & self._stance
        if use.sum() < MIN_CONTACTS:
            return
        src, dst = self.last[use, :2], np.asarray(sensed_contacts, float)[use, :2]
        if not (np.all(np.isfinite(src)) and np.all(np.isfinite(dst))):
            return
        th, t = fit_planar_rigid(src, dst)
        a = 1.0 if self.time_constant_s <= 0 else min(1.0, dt_s / self.time_constant_s)
        dy = (th - self.yaw + math.pi) % (2 * math.pi) - math.pi
        self.yaw += a * dy
        self.shift = self.shift + a * (t - self.shift)

    def targets(self, targets, cur_stance, nxt_stance) -> np.ndarray:
        """The plan's targets (4, 3), measured world, in the IIK's world; a limb swinging now or one solve ahead
        takes the current :math:`D` (latched for its stance to come)."""
        out = np.asarray(targets, float).copy()
        if not self.enabled:
            return out
        fit = self._support_fit(np.asarray(cur_stance, bool) & np.asarray(nxt_stance, bool))
        for i in range(4):
            if not cur_stance[i] or not nxt_stance[i]:
                if fit is None:
                    self.limb[i] = (self.yaw, self.shift.copy())
                else:       # D_l: the rigid map (F's rotation) that sends the plan's point to the bounded target
                    to = self._bounded(out[i, :2], fit)
                    self.limb[i] = (-fit[0], out[i, :2] - _rot(-fit[0]) @ to)
            y, s = self.limb[i]
            out[i, :2] = self.inverse(y, s, out[i, :2])
        self.last = out
        self._plan = np.array(targets, float)
        self._stance = np.asarray(nxt_stance, bool).copy()
        return out

    def plan_com_to_iik(self, xy):
        """The plan's CoM target (2,) or None in the IIK's world: where the held support puts it, moved towards the
        current :math:`D` by at most ``max_correction_m`` (the class docstring; the current :math:`D` alone with fewer
        than two limbs held in stance)."""
        if xy is None or not self.enabled:
            return xy
        fit = self._support_fit(self._stance)
        return self.to_iik(xy) if fit is None else self._bounded(np.asarray(xy, float)[:2], fit)

    def _support_fit(self, held):
        """:math:`F` (θ, t, c): the fit from the plan's contacts to the IIK's targets of the last solve over the limbs
        ``held`` in stance then and now, and the centroid of those targets; None when unbounded, before a solve or with
        fewer than two."""
        if not math.isfinite(self.max_correction_m) or self.last is None:
            return None
        h = np.asarray(held, bool) & self._stance
        if h.sum() < 2:
            return None
        return (*fit_planar_rigid(self._plan[h, :2], self.last[h, :2]), self.last[h, :2].mean(axis=0))

    def _bounded(self, xy, fit):
        r""":math:`F x + \mathrm{clip}(D^{-1} x - F x, c_{max})` of the plan point ``xy`` (2,); with
        :attr:`yaw_in_full`, :math:`F x` turned about the held centroid by D's yaw first (the class docstring)."""
        at = _rot(fit[0]) @ xy + fit[1]
        if self.yaw_in_full:
            dth = (-self.yaw - fit[0] + math.pi) % (2 * math.pi) - math.pi
            at = fit[2] + _rot(dth) @ (at - fit[2])
        d = self.inverse(self.yaw, self.shift, xy) - at
        n = float(np.linalg.norm(d))
        return at + (d if n <= self.max_correction_m else d * (self.max_correction_m / n))

    def heading(self, heading_rad: float) -> float:
        return heading_rad - self.yaw if self.enabled else heading_rad

    def points_to_iik(self, points):
        """Measured-world points (..., 3) in the IIK's world (heights unchanged); None stays None."""
        if points is None or not self.enabled:
            return points
        out = np.asarray(points, float).copy()
        out[..., :2] = self.inverse(self.yaw, self.shift, out[..., :2])
        return out

    def to_iik(self, xy):
        """A measured-world point (2,) or None in the IIK's world."""
        if xy is None or not self.enabled:
            return xy
        return self.inverse(self.yaw, self.shift, np.asarray(xy, float)[:2])
