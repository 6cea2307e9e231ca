"""CoM-modulated IIK for crawling (thesis §4.3.1, Eq. 4.13–4.14; DESIGN §6 floating-base form) — issue 4 §4.

One call of :meth:`CoMModulatedIIK.solve` takes the *sensed* state (joints, pelvis pose in the world), world targets
of the four contacts, the stance set ``s_p`` and optionally a desired CoM / pelvis point, and returns the joint
configuration to command:

* stance contacts are **held** at their targets with a high task weight, swing contacts follow their targets with a
  low one (thesis §4.3.1: "weight the position of support limbs more than those limbs in flight");
* the **CoM task** (horizontal only: the component along gravity is removed, thesis §4.3.1) pulls the CoM to a
  margin-respecting point of the support polygon of ``s_p``: the desired CoM itself if its margin is already
  ≥ ``margin_m``, else the first point on the segment desired → max-margin point (triangle incentre / Chebyshev
  centre) whose margin reaches ``margin_m`` (:func:`~.cartesian_gait.margin_point`). The thesis used the support
  centroid ``c_S = mean(x_l, l ∈ s_p)``; the centroid of a triangle has less margin than its incentre;
* the posture (home pose, four-point stance) lives in the null space (IIK Eq. 4.9);
* **root form** (thesis Eq. 4.13–4.14): ``root=<contact frame>`` — every task, the CoM included, is expressed in the
  frame of a support limb ``l_i ∈ s_p`` that cannot move; ``Δc = P_{l_i→S}(c_S − m_S)`` is computed with its
  vertical component removed (``up`` = gravity direction seen from the root).  If the chosen root limb is not in
  stance, its diagonal partner is used (LW↔RK, RW↔LK: in a one-limb-at-a-time gait it is always in stance);
* **floating form** (DESIGN §6): ``root="floating"`` — 6 virtual base DOF + 28 joints, targets in the world frame,
  the measured pelvis pose as the base; generalises the root form (no limb is privileged).

``modulate=False`` gives the un-augmented IIK (thesis §4.2.3/§4.2.4): contacts (and the optional pelvis point) and,
if a planned CoM is given, that plan tracked as is (the IIK's built-in CoM task, no support-polygon check).
"""
from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from atlas_description import CONTACT_FRAMES

from . import iik_fast, iik_fast_floating
from .cartesian_gait import _chebyshev, margin_point
from .iik import IIKParams, IIKResult, IIKSolver, InvalidTargetError
from .iik_fast import _njit
from .model import RobotModel
from .support import stability_margin, support_polygon

__all__ = ["CoMModulatedIIK", "ModulationResult", "ROOT_CHOICES", "DIAGONAL", "support_centroid", "small_hull",
           "fast_margin_point"]

ROOT_CHOICES = ("floating",) + CONTACT_FRAMES
#: diagonal partner of each contact (LW↔RK, RW↔LK)
DIAGONAL = {0: 3, 3: 0, 1: 2, 2: 1}
PELVIS_FRAME = "pelvis"
_NO_FRAMES = np.zeros(0, dtype=np.int64)


def support_centroid(points_xy: ArrayLike, stance: ArrayLike) -> NDArray[np.float64]:
    """Thesis §4.3.1 ``c_S = (1/|s_p|) Σ_{l ∈ s_p} x_l`` (horizontal)."""
    p = np.asarray(points_xy, float)[:, :2]
    s = np.asarray(stance, bool)
    if s.sum() == 0:
        raise InvalidTargetError("empty stance set")
    return p[s].mean(axis=0)


@_njit
def _small_hull_kernel(p, hull):  # pragma: no cover - compiled
    """Andrew's monotone chain on 3 or 4 finite points (the arithmetic of :func:`small_hull`'s former Python
    loop); writes vertex indices into ``hull`` and returns their number, or -1 when degenerate."""
    n = p.shape[0]
    order = np.empty(n, dtype=np.int64)
    for i in range(n):          # insertion sort by (x, y): the order of sorted(key=(x, y)), stable
        order[i] = i
        k = i
        while k > 0:
            a, b = order[k - 1], order[k]
            if p[a, 0] > p[b, 0] or (p[a, 0] == p[b, 0] and p[a, 1] > p[b, 1]):
                order[k - 1], order[k] = b, a
                k -= 1
            else:
                break
    xmin, xmax, ymin, ymax = p[0, 0], p[0, 0], p[0, 1], p[0, 1]
    for i in range(1, n):
        xmin, xmax = min(xmin, p[i, 0]), max(xmax, p[i, 0])
        ymin, ymax = min(ymin, p[i, 1]), max(ymax, p[i, 1])
    scale = max(xmax - xmin, ymax - ymin)
    eps = 1e-12 * max(scale, 1e-300) ** 2
    chain = np.empty(2 * n + 2, dtype=np.int64)
    h = 0
    for sweep in range(2):
        base = h
        for u in range(n):
            i = order[u] if sweep == 0 else order[n - 1 - u]
            while h - base >= 2:
                o, a = chain[h - 2], chain[h - 1]
                cr = (p[a, 0] - p[o, 0]) * (p[i, 1] - p[o, 1]) - (p[a, 1] - p[o, 1]) * (p[i, 0] - p[o, 0])
                if cr <= eps:
                    h -= 1
                else:
                    break
            chain[h] = i
            h += 1
        h -= 1                  # drop each chain's last point (the other chain's first)
    if h < 3:
        return -1
    for i in range(h):
        for j in range(i):
            if chain[i] == chain[j]:
                return -1
        hull[i] = chain[i]
    return h


def small_hull(points_xy: ArrayLike) -> NDArray[np.float64]:
    """Convex hull (CCW) of 3 or 4 points by Andrew's monotone chain (compiled where numba is installed), ~20x faster
    than :func:`support_polygon`'s qhull path; the same vertex set (the first vertex may differ). Degenerate input
    (duplicates, collinear, other sizes) goes to :func:`support_polygon`."""
    p = np.ascontiguousarray(np.asarray(points_xy, float)[:, :2])
    n = len(p)
    if n not in (3, 4) or not np.all(np.isfinite(p)):
        return support_polygon(p)
    if iik_fast.HAVE_NUMBA:
        hull = np.empty(n, dtype=np.int64)
        h = _small_hull_kernel(p, hull)
        return support_polygon(p) if h < 0 else p[hull[:h]]
    xy = p.tolist()
    order = sorted(range(n), key=lambda i: (xy[i][0], xy[i][1]))
    xs, ys = [v[0] for v in xy], [v[1] for v in xy]
    scale = max(max(xs) - min(xs), max(ys) - min(ys))
    eps = 1e-12 * max(scale, 1e-300) ** 2

    def cross(o, a, b):
        return (xy[a][0] - xy[o][0]) * (xy[b][1] - xy[o][1]) - (xy[a][1] - xy[o][1]) * (xy[b][0] - xy[o][0])

    lower: list = []
    for i in order:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], i) <= eps:
            lower.pop()
        lower.append(i)
    upper: list = []
    for i in reversed(order):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], i) <= eps:
            upper.pop()
        upper.append(i)
    hull = lower[:-1] + upper[:-1]
    if len(hull) < 3 or len(set(hull)) != len(hull):
        return support_polygon(p)
    return p[hull].copy()


@_njit
def _dot2(a0, a1, b0, b1):  # pragma: no cover - compiled
    """Dot product of two 2-vectors (the compiled CoM target agrees with :func:`~.cartesian_gait.margin_point` to
    ~1e-15 m; numpy's BLAS may fuse a multiply-add, so not always in the last bit)."""
    return a0 * b0 + a1 * b1


#: candidate fractions of :func:`~.cartesian_gait.margin_point` (its default ``n = 61``)
_TS = np.linspace(0.0, 1.0, 61)


@_njit
def _poly_margin(px, py, poly):  # pragma: no cover - compiled
    """:func:`~.support.stability_margin` of a point in a CCW convex polygon (k ≥ 3, already validated), the same
    arithmetic: inside the smallest signed edge distance, outside minus the distance to the nearest edge segment."""
    k = poly.shape[0]
    dmin = np.inf
    inside = True
    for i in range(k):
        j = (i + 1) % k
        e0 = poly[j, 0] - poly[i, 0]
        e1 = poly[j, 1] - poly[i, 1]
        ln = np.sqrt(e0 * e0 + e1 * e1)
        d = (px - poly[i, 0]) * (-e1 / ln) + (py - poly[i, 1]) * (e0 / ln)
        if d < 0.0:
            inside = False
        if d < dmin:
            dmin = d
    if inside:
        return dmin
    best = np.inf
    for i in range(k):
        j = (i + 1) % k
        ab0 = poly[j, 0] - poly[i, 0]
        ab1 = poly[j, 1] - poly[i, 1]
        den = _dot2(ab0, ab1, ab0, ab1)
        t = 0.0
        if den != 0.0:
            t = _dot2(px - poly[i, 0], py - poly[i, 1], ab0, ab1) / den
            t = min(max(t, 0.0), 1.0)
        r0 = px - (poly[i, 0] + t * ab0)
        r1 = py - (poly[i, 1] + t * ab1)
        dd = np.sqrt(_dot2(r0, r1, r0, r1))
        if dd < best:
            best = dd
    return -best


@_njit
def _margin_point_kernel(start, poly, margin, ts, goal, out):  # pragma: no cover - compiled
    """:func:`~.cartesian_gait.margin_point` for a CCW convex polygon of k ≥ 3 vertices with the max-margin point
    ``goal`` given (``goal[0]`` NaN: not known). Returns 0 (``out`` = point, ``out[2]`` = its margin), or 1 when the
    start lacks the margin and ``goal`` is needed (4+ vertices: the caller's Chebyshev centre)."""
    sx, sy = start[0], start[1]
    m0 = _poly_margin(sx, sy, poly)
    if m0 >= margin:
        out[0], out[1], out[2] = sx, sy, m0
        return 0
    k = poly.shape[0]
    if np.isnan(goal[0]):
        if k != 3:
            return 1
        # incentre (cartesian_gait.incentre)
        d0 = poly[1, 0] - poly[2, 0]
        d1 = poly[1, 1] - poly[2, 1]
        a = np.sqrt(_dot2(d0, d1, d0, d1))
        d0 = poly[0, 0] - poly[2, 0]
        d1 = poly[0, 1] - poly[2, 1]
        b = np.sqrt(_dot2(d0, d1, d0, d1))
        d0 = poly[0, 0] - poly[1, 0]
        d1 = poly[0, 1] - poly[1, 1]
        c = np.sqrt(_dot2(d0, d1, d0, d1))
        s = a + b + c
        if s <= 0:
            goal[0] = (poly[0, 0] + poly[1, 0] + poly[2, 0]) / 3.0
            goal[1] = (poly[0, 1] + poly[1, 1] + poly[2, 1]) / 3.0
        else:
            goal[0] = (a * poly[0, 0] + b * poly[1, 0] + c * poly[2, 0]) / s
            goal[1] = (a * poly[0, 1] + b * poly[1, 1] + c * poly[2, 1]) / s
    g0 = goal[0] - sx
    g1 = goal[1] - sy
    for n in range(ts.shape[0]):
        t = ts[n]
        cx = sx + t * g0
        cy = sy + t * g1
        if margin > 0:
            ok = True
            for i in range(k):
                j = (i + 1) % k
                e0 = poly[j, 0] - poly[i, 0]
                e1 = poly[j, 1] - poly[i, 1]
                ln = np.sqrt(e0 * e0 + e1 * e1)
                d = (cx - poly[i, 0]) * (-e1 / ln) + (cy - poly[i, 1]) * (e0 / ln)
                if d < margin:
                    ok = False
                    break
            if ok:
                out[0], out[1] = cx, cy
                out[2] = _poly_margin(cx, cy, poly)
                return 0
        else:
            mm = _poly_margin(cx, cy, poly)
            if mm >= margin:
                out[0], out[1], out[2] = cx, cy, mm
                return 0
    out[0], out[1] = goal[0], goal[1]
    out[2] = _poly_margin(goal[0], goal[1], poly)
    return 0


def fast_margin_point(start_xy: ArrayLike, support_xy: ArrayLike, margin_m: float) -> NDArray[np.float64]:
    """:func:`~.cartesian_gait.margin_point` on :func:`small_hull` with the compiled kernel (~10 µs instead of
    ~1 ms). The hull may start at another vertex than :func:`~.support.support_polygon`'s, which changes the
    incentre's summation order: the point can differ in the last bit."""
    start = np.asarray(start_xy, float).reshape(-1)[:2]
    pts = np.asarray(support_xy, float)[:, :2]
    poly = small_hull(pts)
    if not (iik_fast.HAVE_NUMBA and len(poly) >= 3 and np.all(np.isfinite(start)) and _convex_ccw(poly)):
        return margin_point(start, pts, margin_m, polygon=poly)
    goal, out = np.full(2, np.nan), np.empty(3)
    if _margin_point_kernel(start, poly, float(margin_m), _TS, goal, out) == 1:
        goal[:] = _chebyshev(poly)
        _margin_point_kernel(start, poly, float(margin_m), _TS, goal, out)
    return out[:2].copy()


@_njit
def _convex_ccw_kernel(poly):  # pragma: no cover - compiled
    k = poly.shape[0]
    area2 = 0.0
    lmax = 0.0
    for i in range(k):
        j = (i + 1) % k
        e0 = poly[j, 0] - poly[i, 0]
        e1 = poly[j, 1] - poly[i, 1]
        ln = np.sqrt(e0 * e0 + e1 * e1)
        if not ln > 0.0:
            return False
        lmax = max(lmax, ln)
        area2 += poly[i, 0] * poly[j, 1] - poly[j, 0] * poly[i, 1]
    if not area2 > 0.0:
        return False
    for i in range(k):
        j = (i + 1) % k
        n = (j + 1) % k
        e0 = poly[j, 0] - poly[i, 0]
        e1 = poly[j, 1] - poly[i, 1]
        f0 = poly[n, 0] - poly[j, 0]
        f1 = poly[n, 1] - poly[j, 1]
        if e0 * f1 - e1 * f0 < -1e-12 * lmax * lmax:
            return False
    return True


def _convex_ccw(poly: NDArray) -> bool:
    """True for a convex CCW polygon with positive area and no repeated consecutive vertex (the polygons
    :func:`~.support.stability_margin` accepts; its checks, compiled)."""
    p = np.ascontiguousarray(poly, dtype=float)
    if p.ndim != 2 or p.shape[0] < 3 or p.shape[1] != 2 or not np.all(np.isfinite(p)):
        return False
    return bool(_convex_ccw_kernel(p))


@dataclass
class ModulationResult:
    q: NDArray[np.float64]
    iik: IIKResult
    com_target_xy: NDArray[np.float64] | None  #: world CoM target actually used (None without modulation)
    root_used: str
    planned_margin_m: float  #: margin of the CoM target in the stance polygon (NaN without modulation)
    predicted_com_xy: NDArray[np.float64]  #: world CoM of the solution (kinematic prediction)
    #: world pelvis pose of the solution: floating form = the solved virtual base; root form = the pose that keeps
    #: the root limb where it was (the thesis' immovable support limb) — the seed of the next tick when the IIK
    #: runs on its own (internal) state, thesis Eq. 4.14 ``q_t = q_{t−1} + …``
    base_pos: NDArray[np.float64] | None = None
    base_rot: NDArray[np.float64] | None = None


class CoMModulatedIIK:
    """See module doc.

    Args:
        model: the robot model.
        params: IIK parameters (default :meth:`IIKParams.improved` with at most 30 iterations per solve).
        home_q: null-space posture.
        stance_weight / swing_weight / pelvis_weight: task weights (C⁻¹ row scaling) of stance contacts, swing
            contacts and the optional pelvis point.
        com_weight: weight of the CoM rows.
        margin_m: margin the CoM target keeps from the support polygon's edges.
    """

    def __init__(self, model: RobotModel, params: IIKParams | None = None, home_q: ArrayLike | None = None,
                 stance_weight: float = 10.0, swing_weight: float = 1.0, pelvis_weight: float = 0.3,
                 com_weight: float = 10.0, margin_m: float = 0.04):
        self.model = model
        self.params = params or IIKParams.improved(max_iterations=30)
        self.params.com_weight = com_weight
        self.home_q = home_q
        self.w = dict(stance=float(stance_weight), swing=float(swing_weight), pelvis=float(pelvis_weight))
        for k, v in self.w.items():
            if not (np.isfinite(v) and v > 0):
                raise InvalidTargetError(f"{k} weight must be finite and > 0")
        if not (np.isfinite(margin_m) and margin_m >= 0):
            raise InvalidTargetError("margin_m must be finite and >= 0")
        self.margin_m = float(margin_m)
        self._solvers: dict = {}
        self._hull_key: bytes | None = None
        self._hull = None
        self._hull_ok = False
        self._goal = np.full(2, np.nan)      #: max-margin point of the cached hull (NaN: not computed yet)
        self._out = np.empty(3)
        self._ct_key: bytes | None = None    #: desired point of the cached CoM target
        self._ct = None

    def solver(self, root: str, with_pelvis: bool) -> IIKSolver:
        key = (root, with_pelvis)
        if key not in self._solvers:
            frames = CONTACT_FRAMES + ((PELVIS_FRAME,) if with_pelvis else ())
            if root == "floating":
                s = IIKSolver(self.model, frames, self.params, self.home_q, mode="floating")
            else:
                s = IIKSolver(self.model, frames, self.params, self.home_q, mode="root", root=root)
            self._solvers[key] = s
        return self._solvers[key]

    def com_target(self, desired_xy: ArrayLike, support_xy: ArrayLike) -> tuple[NDArray, float]:
        """Margin-respecting CoM target (world xy) and its margin in the support polygon."""
        pts = np.ascontiguousarray(np.asarray(support_xy, float)[:, :2])
        des = np.asarray(desired_xy, float).reshape(-1)[:2]
        key = pts.tobytes()
        if self._hull_key != key:   # one convex hull per support set (the controller asks twice per solve)
            self._hull_key, self._hull = key, small_hull(pts)
            self._hull_ok = len(self._hull) >= 3 and _convex_ccw(self._hull)
            self._goal = np.full(2, np.nan)
            self._ct_key = None
        poly = self._hull
        ckey = des.tobytes()
        if self._ct_key == ckey:    # same support set and desired point as the last call
            return self._ct[0].copy(), self._ct[1]
        if iik_fast.HAVE_NUMBA and self._hull_ok and np.all(np.isfinite(des)):
            # compiled margin_point + stability_margin (same arithmetic; the numpy path costs ~0.3 ms per call)
            st = _margin_point_kernel(des, poly, self.margin_m, _TS, self._goal, self._out)
            if st == 1:
                self._goal[:] = _chebyshev(poly)
                _margin_point_kernel(des, poly, self.margin_m, _TS, self._goal, self._out)
            c, mg = self._out[:2].copy(), float(self._out[2])
        else:
            c = margin_point(des, pts, self.margin_m, polygon=poly)
            mg = stability_margin(c, poly) if len(poly) >= 3 else float("nan")
        self._ct_key, self._ct = ckey, (c.copy(), mg)
        return c, mg

    def solve(self, q: ArrayLike, base_pos: ArrayLike, base_rot: ArrayLike, targets: ArrayLike, stance: ArrayLike,
              com_desired_xy: ArrayLike | None = None, pelvis_target: ArrayLike | None = None,
              root: str = "floating", modulate: bool = True, support_xy: ArrayLike | None = None,
              orientations: dict | None = None, com_offset_xy: ArrayLike | None = None) -> ModulationResult:
        """Solve one control tick: :meth:`solve_steps` run to its end."""
        return iik_fast_floating.drain(self.solve_steps(q, base_pos, base_rot, targets, stance, com_desired_xy,
                                                        pelvis_target, root, modulate, support_xy, orientations,
                                                        com_offset_xy))

    def solve_steps(self, q: ArrayLike, base_pos: ArrayLike, base_rot: ArrayLike, targets: ArrayLike,
                    stance: ArrayLike, com_desired_xy: ArrayLike | None = None, pelvis_target: ArrayLike | None = None,
                    root: str = "floating", modulate: bool = True, support_xy: ArrayLike | None = None,
                    orientations: dict | None = None, com_offset_xy: ArrayLike | None = None,
                    budget: int = 0) -> Generator[None, None, ModulationResult]:
        """Solve one control tick (see module doc), as a generator sliced by ``budget`` IIK iterations
        (:meth:`IIKSolver.solve_steps`); it returns the :class:`ModulationResult`. ``targets`` (4, 3) world;
        ``stance`` (4,) bool (the set s_p);
        ``support_xy`` (4, 2|3) the contact positions that form the support polygon (default: the targets);
        ``com_desired_xy`` the desired CoM (default: the current CoM); ``pelvis_target`` (3,) world, optional;
        ``orientations`` ``{frame: world rotation}`` (e.g. the shins, so the feet stay off the floor, and the pelvis);
        ``com_offset_xy`` (2,) is added to the CoM target handed to the IIK *after* the margin logic (e.g. the
        integral of the measured CoM error, so a servo sag that keeps the physical CoM behind the target is
        trimmed out); ``com_target_xy`` / ``planned_margin_m`` report the target before the offset."""
        m = self.model
        q = np.asarray(q, float)
        bp = np.asarray(base_pos, float).reshape(3)
        bR = np.asarray(base_rot, float).reshape(3, 3)
        tg = np.asarray(targets, float)
        st = np.asarray(stance, bool).reshape(-1)
        for name, a in (("q", q), ("base_pos", bp), ("base_rot", bR), ("targets", tg)):
            if not np.all(np.isfinite(a)):
                raise InvalidTargetError(f"{name} contains NaN/inf: refused (nothing changed)")
        if tg.shape != (4, 3) or st.shape != (4,):
            raise InvalidTargetError("targets must be (4, 3) and stance (4,)")
        if root not in ROOT_CHOICES:
            raise InvalidTargetError(f"root must be one of {ROOT_CHOICES}, got {root!r}")
        if st.sum() < 1:
            raise InvalidTargetError("stance set is empty")
        fast = root == "floating" and iik_fast.HAVE_NUMBA
        if fast:   # compiled FK + CoM (~5 µs instead of ~40 µs)
            k = None
            com_w = iik_fast.fk_points_com(iik_fast.FastModel.of(m), q, _NO_FRAMES, bp, bR)[1]
        else:
            k = m.forward(q)
            com_w = bR @ k.com() + bp
        c_tgt = None
        pm = float("nan")
        if not modulate and com_desired_xy is not None:
            # the un-modulated IIK's built-in CoM task: the planned CoM, tracked as given (no support check)
            c_tgt = np.asarray(com_desired_xy, float).reshape(-1)[:2].copy()
            if not np.all(np.isfinite(c_tgt)):
                raise InvalidTargetError("com_desired_xy contains NaN/inf")
        if modulate:
            sup = tg if support_xy is None else np.asarray(support_xy, float)
            if not np.all(np.isfinite(sup)):
                raise InvalidTargetError("support_xy contains NaN/inf")
            des = com_w[:2] if com_desired_xy is None else np.asarray(com_desired_xy, float).reshape(-1)[:2]
            if not np.all(np.isfinite(des)):
                raise InvalidTargetError("com_desired_xy contains NaN/inf")
            if st.sum() >= 3:
                c_tgt, pm = self.com_target(des, sup[st])
            else:
                c_tgt = support_centroid(sup, st)
        weights = np.where(st, self.w["stance"], self.w["swing"])
        with_pelvis = pelvis_target is not None
        if with_pelvis:
            pt = np.asarray(pelvis_target, float).reshape(3)
            if not np.all(np.isfinite(pt)):
                raise InvalidTargetError("pelvis_target contains NaN/inf")
            weights = np.r_[weights, self.w["pelvis"]]
            tg_all = np.vstack([tg, pt])
        else:
            tg_all = tg
        c_cmd = c_tgt
        if c_tgt is not None and com_offset_xy is not None:
            off = np.asarray(com_offset_xy, float).reshape(-1)[:2]
            if not np.all(np.isfinite(off)):
                raise InvalidTargetError("com_offset_xy contains NaN/inf")
            c_cmd = c_tgt + off
        c3 = None if c_cmd is None else np.array((c_cmd[0], c_cmd[1], com_w[2]))
        if root == "floating":
            s = self.solver("floating", with_pelvis)
            r = yield from s.solve_steps(q, tg_all, weights=weights, com_target=c3, base_pos=bp, base_rot=bR,
                                         orientations=orientations, budget=budget)
            root_used = "floating"
            if fast:
                pred = iik_fast.fk_points_com(iik_fast.FastModel.of(m), r.q, _NO_FRAMES, r.base_pos,
                                              r.base_rot)[1][:2]
            else:
                kq = m.forward(r.q)
                pred = (r.base_rot @ kq.com() + r.base_pos)[:2]
            nbp, nbR = r.base_pos, r.base_rot
        else:
            li = CONTACT_FRAMES.index(root)
            if not st[li]:
                li = DIAGONAL[li]
            root_used = CONTACT_FRAMES[li]
            T = k.transform(root_used)
            Rw = bR @ T[:3, :3]
            pw = bR @ T[:3, 3] + bp
            tg_r = (tg_all - pw) @ Rw  # R_wᵀ (x − p)
            up_r = Rw.T @ np.array([0.0, 0.0, 1.0])
            c_r = None if c3 is None else Rw.T @ (c3 - pw)
            s = self.solver(root_used, with_pelvis)
            ori_r = None if orientations is None else {f: Rw.T @ np.asarray(R, float) for f, R in orientations.items()}
            r = s.solve(q, tg_r, weights=weights, com_target=c_r, up=up_r, orientations=ori_r)
            kq = m.forward(r.q)
            pred = (Rw @ kq.com(root=root_used) + pw)[:2]
            Tn = kq.transform(root_used)
            nbR = Rw @ Tn[:3, :3].T
            nbp = pw - nbR @ Tn[:3, 3]
        return ModulationResult(q=r.q, iik=r, com_target_xy=c_tgt, root_used=root_used, planned_margin_m=pm,
                                predicted_com_xy=pred, base_pos=nbp, base_rot=nbR)

    @staticmethod
    def valid_roots() -> Sequence[str]:
        return ROOT_CHOICES
