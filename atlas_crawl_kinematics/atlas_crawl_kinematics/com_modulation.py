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

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from atlas_description import CONTACT_FRAMES

from .cartesian_gait import margin_point
from .iik import IIKParams, IIKResult, IIKSolver, InvalidTargetError
from .model import RobotModel
from .support import stability_margin, support_polygon

__all__ = ["CoMModulatedIIK", "ModulationResult", "ROOT_CHOICES", "DIAGONAL", "support_centroid", "small_hull"]

ROOT_CHOICES = ("floating",) + CONTACT_FRAMES
#: diagonal partner of each contact (LW↔RK, RW↔LK)
DIAGONAL = {0: 3, 3: 0, 1: 2, 2: 1}
PELVIS_FRAME = "pelvis"


def support_centroid(points_xy: ArrayLike, stance: ArrayLike) -> NDArray[np.float64]:
    """Thesis §4.3.1 ``c_S = (1/|s_p|) Σ_{l ∈ s_p} x_l`` (horizontal)."""
    p = np.asarray(points_xy, float)[:, :2]
    s = np.asarray(stance, bool)
    if s.sum() == 0:
        raise InvalidTargetError("empty stance set")
    return p[s].mean(axis=0)


def small_hull(points_xy: ArrayLike) -> NDArray[np.float64]:
    """Convex hull (CCW) of 3 or 4 points by Andrew's monotone chain, ~20x faster than :func:`support_polygon`'s
    qhull path; the same vertex set (the first vertex may differ). Degenerate input (duplicates, collinear, other
    sizes) goes to :func:`support_polygon`."""
    p = np.asarray(points_xy, float)[:, :2]
    n = len(p)
    if n not in (3, 4) or not np.all(np.isfinite(p)):
        return support_polygon(p)
    order = sorted(range(n), key=lambda i: (p[i, 0], p[i, 1]))
    scale = float(np.ptp(p, axis=0).max())
    eps = 1e-12 * max(scale, 1e-300) ** 2

    def cross(o, a, b):
        return (p[a, 0] - p[o, 0]) * (p[b, 1] - p[o, 1]) - (p[a, 1] - p[o, 1]) * (p[b, 0] - p[o, 0])

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
        key = pts.tobytes()
        if self._hull_key != key:   # one convex hull per support set (the controller asks twice per solve)
            self._hull_key, self._hull = key, small_hull(pts)
        poly = self._hull
        c = margin_point(desired_xy, pts, self.margin_m, polygon=poly)
        return c, (stability_margin(c, poly) if len(poly) >= 3 else float("nan"))

    def solve(self, q: ArrayLike, base_pos: ArrayLike, base_rot: ArrayLike, targets: ArrayLike, stance: ArrayLike,
              com_desired_xy: ArrayLike | None = None, pelvis_target: ArrayLike | None = None,
              root: str = "floating", modulate: bool = True, support_xy: ArrayLike | None = None,
              orientations: dict | None = None, com_offset_xy: ArrayLike | None = None) -> ModulationResult:
        """Solve one control tick (see module doc). ``targets`` (4, 3) world; ``stance`` (4,) bool (the set s_p);
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
        c3 = None if c_cmd is None else np.r_[c_cmd, com_w[2]]
        if root == "floating":
            s = self.solver("floating", with_pelvis)
            r = s.solve(q, tg_all, weights=weights, com_target=c3, base_pos=bp, base_rot=bR,
                        orientations=orientations)
            root_used = "floating"
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
