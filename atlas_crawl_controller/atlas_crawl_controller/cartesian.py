"""Cartesian crawling (thesis §4.2 "crawling by imitation" IIK and §4.3 CoM modulation) for the controller core and
the gait sequencer: thin adapters over atlas_crawl_kinematics and the crawl tracker (:mod:`.tracking`).

* :func:`make_cartesian_solver` → ``(solver, contact_fk, law)`` for :meth:`CrawlControllerCore.set_cartesian_solver`.
  ``law`` is a :class:`CartesianLaw`: the core's MODE_CARTESIAN runs its :class:`~.tracking.CrawlTracker` (the same
  law as the MuJoCo runner ``atlas_crawl_mujoco.iik_crawl``) on a :class:`SegmentPlan` per reference, with the
  sensed state from forward kinematics of the measured joints and pelvis pose (:class:`FKSensed`), and validates
  Cartesian references (:meth:`CartesianLaw.check`: reachable workspace, a stance set that can hold the robot).
  ``solver`` (one floating-base CoM-modulated IIK solve) is kept for benchmarks.
* :func:`cartesian_plan` samples a :class:`CartesianGait` at its phase boundaries (and at the apex of every swing)
  into the sequencer's steps: ``(name, targets (4,3) world, stance (4,), duration_s)``.  A shift step's stance is
  the support that will remain after the coming lift (the plan's lookahead: the CoM-modulated tracker then shifts
  the CoM into that triangle before the lift, as the runner's lookahead does).
"""
from __future__ import annotations

import math
from typing import List, Optional

import numpy as np

from .robot_info import CONTACT_FRAMES

def quat_xyzw_to_R(q) -> np.ndarray:
    x, y, z, w = (float(v) for v in q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def available() -> bool:
    """True when the kinematics package provides the CoM-modulated IIK and the Cartesian gait."""
    try:
        from atlas_crawl_kinematics.cartesian_gait import CartesianGait  # noqa: F401
        from atlas_crawl_kinematics.com_modulation import CoMModulatedIIK  # noqa: F401
        return True
    except Exception:
        return False


def pattern_heading_rad(targets) -> float:
    """Heading of a contact pattern: from the knees' midpoint to the wrists' midpoint (LW RW LK RK order)."""
    p = np.asarray(targets, float)
    d = p[:2, :2].mean(axis=0) - p[2:, :2].mean(axis=0)
    return math.atan2(d[1], d[0])


class SegmentSample:
    __slots__ = ("targets", "stance", "heading_rad", "com_xy", "pelvis_target", "cycle", "phase", "extra")

    def __init__(self, targets, stance, heading_rad, extra=None):
        self.targets = targets
        self.stance = stance
        self.heading_rad = heading_rad
        self.extra = extra          #: None or the tracker's per-plan requests (``drift_correction_max_m``)
        self.com_xy = None
        self.pelvis_target = None
        self.cycle = -1
        self.phase = -1


class SegmentPlan:
    r"""One Cartesian reference as a tracker plan: contacts :math:`p(t) = p_0 + s(t/T)(p_1 - p_0)` (minimum-jerk
    :math:`s`; a non-stance contact with ``swing_lift_m`` > 0 follows the gait's swing arc
    :func:`~atlas_crawl_kinematics.cartesian_gait.swing_arc` to that apex instead), a constant stance set, the body
    heading :math:`h(t) = h_0 + s(t/T)\,\mathrm{wrap}(h_1 - h_0)` (``heading0_rad`` / ``heading1_rad``, each by default
    the heading of the pattern, :func:`pattern_heading_rad`: the gait generator sends its planned heading, which leads
    the pattern's by half a step's yaw in a diagonal turn), and a CoM plan
    :math:`c(t) = c_0 + s(t/T)(c_1 - c_0)` from ``com0_xy`` (the previous segment's end, or the measured CoM) to the
    planner's rule of :class:`CartesianGait` applied to the end targets: the first point on the segment from the
    centroid of the four contacts towards the max-margin point of the stance polygon whose margin reaches
    ``com_margin_m`` (:func:`margin_point`), the polygon being ``com_support`` when any is set (a shift before a
    lift: all four contacts stay put while the CoM moves into the support that will remain). With two contacts (a
    diagonal pair of the dynamic crawl) the plan ends at the point of their segment nearest the centroid of the start
    contacts (:class:`~.gait_generator.CoMPlan`'s rule: the CoM rides the support diagonal where the shift put it).
    ``drift_correction_max_m``: the tracker's world-drift bound this reference asks for (samples' ``extra``)."""

    def __init__(self, p0, p1, stance, duration_s: float, com0_xy=None, com_margin_m: float = 0.04,
                 swing_lift_m=None, com_support=None, heading0_rad=None, heading1_rad=None,
                 drift_correction_max_m=None):
        self.p0 = np.asarray(p0, float).reshape(4, 3)
        self.p1 = np.asarray(p1, float).reshape(4, 3)
        self.stance = np.asarray(stance, bool).reshape(4)
        lift = np.zeros(4) if swing_lift_m is None else np.asarray(swing_lift_m, float).reshape(4)
        self.arcs = [i for i in range(4) if not self.stance[i] and lift[i] > 0]
        self.lift = lift
        sup = self.stance if com_support is None or not np.any(com_support) else \
            np.asarray(com_support, bool).reshape(4)
        self.duration_s = float(duration_s)
        self.h0 = pattern_heading_rad(self.p0) if heading0_rad is None else float(heading0_rad)
        dh = (pattern_heading_rad(self.p1) if heading1_rad is None else float(heading1_rad)) - self.h0
        self.dh = (dh + math.pi) % (2 * math.pi) - math.pi
        self.h1 = self.h0 + self.dh     #: heading at the end (the next segment's ``heading0_rad``)
        self.c0 = None if com0_xy is None else np.asarray(com0_xy, float).reshape(2)
        self.c1 = self.c0
        if self.c0 is not None and sup.sum() >= 3:
            from atlas_crawl_kinematics.com_modulation import fast_margin_point
            self.c1 = fast_margin_point(self.p1[:, :2].mean(axis=0), self.p1[sup, :2], com_margin_m)
        elif self.c0 is not None and sup.sum() == 2:
            from atlas_crawl_kinematics.support import nearest_on_segment
            a, b = self.p1[sup, :2]
            self.c1 = nearest_on_segment(self.p0[:, :2].mean(axis=0), a, b)
        self._dp = self.p1 - self.p0
        self.extra = None if drift_correction_max_m is None else \
            {"drift_correction_max_m": float(drift_correction_max_m)}

    def _s(self, t: float) -> float:
        """Minimum-jerk fraction at ``t`` (:func:`~.smooth_move.min_jerk`'s formula in Python floats: the same
        numbers, ~10x cheaper than the numpy call)."""
        if not self.duration_s > 0:
            return 1.0
        x = min(max(t / self.duration_s, 0.0), 1.0)
        return x ** 3 * (10 - 15 * x + 6 * x * x)

    def sample(self, t: float) -> SegmentSample:
        s = self._s(t)
        tg = self.p0 + s * self._dp
        if self.arcs:
            from atlas_crawl_kinematics.cartesian_gait import swing_arc
            tau = min(max(t / self.duration_s, 0.0), 1.0) if self.duration_s > 0 else 1.0
            for i in self.arcs:
                tg[i] = swing_arc(self.p0[i], self.p1[i], self.lift[i], tau)
        out = SegmentSample(tg, self.stance.copy(), self.h0 + s * self.dh, self.extra)
        if self.c0 is not None:
            out.com_xy = self.c0 + s * (self.c1 - self.c0)
        return out

    def stance_at(self, t: float) -> np.ndarray:
        """Stance set at ``t`` (constant within a segment; for the lookahead, without a full sample)."""
        return self.stance


class FKSensed:
    """The tracker's ``sensed`` view from the measured joints and pelvis pose ``[x y z qx qy qz qw]`` (forward
    kinematics, computed on first use): contact points, CoM, touch = contact point below ``touch_height_m``."""

    def __init__(self, model, q, pose7, touch_height_m: float):
        self.model = model
        self.q = np.asarray(q, float)
        pose7 = np.asarray(pose7, float)
        self.base_pos = pose7[:3].copy()
        quat = pose7[3:7]
        self.base_rot = quat_xyzw_to_R(quat / np.linalg.norm(quat))
        self.h = float(touch_height_m)
        self._k = None
        self._contacts = None
        self._com_xy = None
        self.force = None

    def _fk(self):
        if self._k is None:
            self._k = self.model.forward(self.q)
        return self._k

    def _points_com(self) -> None:
        from atlas_crawl_kinematics import iik_fast
        if iik_fast.HAVE_NUMBA and np.all(np.isfinite(self.q)):
            # compiled FK (~5 µs; RobotModel.forward ~40 µs): the same points to ~1e-16 m
            fm = iik_fast.FastModel.of(self.model)
            pts, com = iik_fast.fk_points_com(fm, self.q, self.model.frame_indices(CONTACT_FRAMES), self.base_pos,
                                              self.base_rot)
        else:
            k = self._fk()
            pts = (self.base_rot @ k.positions(CONTACT_FRAMES).T).T + self.base_pos
            com = self.base_rot @ k.com() + self.base_pos
        self._contacts, self._com_xy = pts, com[:2].copy()

    @property
    def contacts(self) -> np.ndarray:
        """(4, 3) world contact points (computed once; a fresh copy per access)."""
        if self._contacts is None:
            self._points_com()
        return self._contacts.copy()

    @property
    def com_xy(self) -> np.ndarray:
        if self._com_xy is None:
            self._points_com()
        return self._com_xy.copy()

    @property
    def touch(self) -> np.ndarray:
        return self.contacts[:, 2] < self.h


class CartesianLaw:
    """What MODE_CARTESIAN of the controller core runs: tracker factory, sensed view, reference checks.

    ``params``: crawl tracker parameters (config/crawl_tracker_parameters.yaml; validated)."""

    #: a target may lie at most this far below the ground plane z = 0 (press / seek offsets are smaller)
    MAX_BELOW_GROUND_M = 0.1
    #: the floating base may move this far within one reference to bring a limb's target into its reach (a
    #: measured crawl put a knee target 0.74 m from the pelvis with a 0.65 m chain)
    BASE_TRAVEL_M = 0.5

    def __init__(self, model=None, params=None):
        from atlas_crawl_kinematics.model import RobotModel
        from atlas_crawl_kinematics.robot_source import atlas_urdf_string
        from .tracking.crawl_tracker import parameter_set
        self.model = model or RobotModel(atlas_urdf_string())
        self.params = parameter_set().values(params or {})
        self.reach_m = self._reach()
        self._warm_up()

    def _warm_up(self) -> None:
        """One solve at configure time, so the compiled kernel (numba cache) is loaded before the first update."""
        from atlas_crawl_kinematics.iik import four_point_stance
        q = four_point_stance(self.model)
        tr = self.new_tracker(0.004, q, True)
        k = self.model.forward(q)
        tg = k.positions(list(CONTACT_FRAMES))
        tr.ik.solve(q, np.zeros(3), np.eye(3), tg, np.ones(4, bool), root=tr.root, modulate=True)

    def _reach(self) -> np.ndarray:
        """Upper bound of each contact point's distance from the pelvis: the sum of the link lengths along its chain
        (distances between consecutive frame origins do not depend on q)."""
        m = self.model
        k = m.forward(np.clip(np.zeros(m.n_joints), m.lower, m.upper))
        parent = np.asarray(m.frame_parent)
        out = []
        for f in CONTACT_FRAMES:
            i = m.frame_index(f)
            d = 0.0
            while parent[i] >= 0:
                d += float(np.linalg.norm(k.position(int(i)) - k.position(int(parent[i]))))
                i = int(parent[i])
            out.append(d)
        return np.array(out)

    def new_tracker(self, period_s: float, home_q, com_modulation: bool):
        from .tracking import CrawlTracker
        vals = dict(self.params.as_dict())
        vals["com_modulation"] = bool(com_modulation)
        return CrawlTracker.from_params(self.model, np.asarray(home_q, float).copy(), period_s, vals)

    def sensed(self, q, pose7) -> FKSensed:
        return FKSensed(self.model, q, pose7, self.params["touch_height_m"])

    def contact_fk(self, q, pose7) -> np.ndarray:
        return self.sensed(q, pose7).contacts

    def check(self, targets, stance, pose7=None) -> Optional[str]:
        """None if the reference can be tracked, else the reason: at least 3 stance contacts whose targets span a
        support polygon (no three collinear within 2 cm), or a diagonal pair (LW+RK, RW+LK: the swing of the dynamic
        diagonal-pair crawl, which has no support polygon and relies on a short swing), no target deeper than
        ``MAX_BELOW_GROUND_M`` under the ground, every target within its limb's reach (chain length) +
        ``BASE_TRAVEL_M`` of the measured pelvis (``pose7``) and every pair of targets within the sum of their
        reaches."""
        from atlas_crawl_kinematics.support import support_polygon
        tg = np.asarray(targets, float).reshape(4, 3)
        st = np.asarray(stance, bool).reshape(4)
        names = ("LW", "RW", "LK", "RK")
        diagonal = st.sum() == 2 and (st[0] and st[3] or st[1] and st[2])
        if st.sum() < 3 and not diagonal:
            return (f"stance {[n for n, s in zip(names, st) if s]} cannot hold the robot: a Cartesian reference "
                    "needs at least 3 stance contacts, or a diagonal pair (LW+RK or RW+LK) in the dynamic crawl")
        low = np.flatnonzero(tg[:, 2] < -self.MAX_BELOW_GROUND_M)
        if low.size:
            return (f"target of {names[low[0]]} at z = {tg[low[0], 2]:.3f} m is more than "
                    f"{self.MAX_BELOW_GROUND_M} m below the ground")
        for i in range(4):
            for j in range(i + 1, 4):
                d = float(np.linalg.norm(tg[i] - tg[j]))
                if d > self.reach_m[i] + self.reach_m[j]:
                    return (f"targets of {names[i]} and {names[j]} are {d:.3g} m apart, beyond the reachable "
                            f"{self.reach_m[i] + self.reach_m[j]:.2f} m")
        if pose7 is not None:
            p = np.asarray(pose7, float)[:3]
            if np.all(np.isfinite(p)):
                d = np.linalg.norm(tg - p, axis=1)
                far = np.flatnonzero(d > self.reach_m + self.BASE_TRAVEL_M)
                if far.size:
                    i = int(far[0])
                    return (f"target of {names[i]} is {d[i]:.3g} m from the pelvis, outside its reachable workspace "
                            f"({self.reach_m[i]:.2f} m chain + {self.BASE_TRAVEL_M} m base travel)")
        if diagonal:
            return None
        poly = support_polygon(tg[st, :2])
        if len(poly) < 3 or _min_height(tg[st, :2]) < 0.02:
            return "stance targets are (nearly) collinear: no support polygon to hold the robot"
        return None


def _min_height(pts) -> float:
    """Smallest distance of a point of ``pts`` (k, 2) to the line through two others (0 if collinear)."""
    best = math.inf
    k = len(pts)
    for a in range(k):
        for b in range(k):
            if b == a:
                continue
            u = pts[b] - pts[a]
            n = float(np.hypot(*u))
            if n < 1e-9:
                return 0.0
            for c in range(k):
                if c in (a, b):
                    continue
                v = pts[c] - pts[a]
                best = min(best, abs(u[0] * v[1] - u[1] * v[0]) / n)
    return best


def make_cartesian_solver(model=None, margin_m: float = 0.04, params=None):
    """(solver, contact_fk, law); see the module docstring."""
    from atlas_crawl_kinematics.com_modulation import CoMModulatedIIK
    law = CartesianLaw(model, params)
    model = law.model
    cm = CoMModulatedIIK(model, margin_m=margin_m)

    def solver(q_seed, pose7, targets, stance, com_modulation):
        pose7 = np.asarray(pose7, float)
        R = quat_xyzw_to_R(pose7[3:7])
        r = cm.solve(np.asarray(q_seed, float), pose7[:3], R, np.asarray(targets, float), np.asarray(stance, bool),
                     root="floating", modulate=bool(com_modulation))
        margin = r.planned_margin_m if math.isfinite(r.planned_margin_m) else 0.0
        return r.q, int(r.iik.iterations), float(r.iik.error_m), float(margin)

    return solver, law.contact_fk, law


#: nominal four-point stance of the Cartesian gait, relative to the knees' midpoint, heading +x (the MuJoCo runner's
#: start stance, atlas_crawl_eval.iik_crawl.NOMINAL): narrow hands, wide knees, so every tripod needs a short shift
NOMINAL_STANCE = np.array([[0.66, 0.22], [0.66, -0.22], [0.0, 0.26], [0.0, -0.26]])
#: gait parameters of the runner's command line defaults (stride 0.2 m, lifts 0.08/0.05 m, shift 0.8 s, swing
#: 0.6 s, planned margin 0.04 m); GaitParams' own shift/swing (0.45 s) made the modulated runner fall in 10 cycles
DEFAULT_GAIT = {"stride_m": 0.20, "lift_hand_m": 0.08, "lift_knee_m": 0.05, "t_shift_s": 0.8, "t_swing_s": 0.6,
                "margin_m": 0.04}


def reposition_steps(contacts0, heading0_rad: float, t_shift_s: float, t_swing_s: float, lift_hand_m: float,
                     lift_knee_m: float, tolerance_m: float = 0.03):
    """Steps that move the contacts one limb at a time (tripod order) to :data:`NOMINAL_STANCE` about the knees'
    midpoint, turned by the heading (a key-frame stance is not a pattern the Cartesian gait can start from: the
    crawl_forward stance gives the backward gait a collinear tripod). Each moved limb: a four-point shift whose
    stance already leaves the limb out (the CoM moves into the tripod), the swing apex, the touchdown. Limbs within
    ``tolerance_m`` stay. Returns (steps, contacts after)."""
    c = np.asarray(contacts0, float).reshape(4, 3).copy()
    ch, sh = math.cos(heading0_rad), math.sin(heading0_rad)
    R = np.array([[ch, -sh], [sh, ch]])
    goal = c.copy()
    goal[:, :2] = c[2:4, :2].mean(axis=0) + NOMINAL_STANCE @ R.T
    steps = []
    for limb in (0, 3, 1, 2):                     # LW, RK, RW, LK (thesis tripod order)
        if float(np.linalg.norm(goal[limb, :2] - c[limb, :2])) < tolerance_m:
            continue
        stance = np.ones(4, bool)
        stance[limb] = False
        name = ("LW", "RW", "LK", "RK")[limb]
        steps.append({"name": f"reposition_shift_{name}", "targets": c.copy(), "stance": stance.copy(),
                      "duration_s": t_shift_s})
        apex = c.copy()
        apex[limb] = 0.5 * (c[limb] + goal[limb])
        apex[limb, 2] += lift_hand_m if limb < 2 else lift_knee_m
        steps.append({"name": f"reposition_{name}_apex", "targets": apex, "stance": stance.copy(),
                      "duration_s": 0.5 * t_swing_s})
        c[limb] = goal[limb]
        steps.append({"name": f"reposition_{name}", "targets": c.copy(), "stance": stance.copy(),
                      "duration_s": 0.5 * t_swing_s})
    return steps, c


def cartesian_plan(contacts0, com0_xy, heading0_rad: float, cycles: int, direction: int = 1,
                   time_scale: float = 1.0, params: Optional[dict] = None, reposition: bool = True) -> List[dict]:
    """Steps of a Cartesian crawl: dicts with name, cycle, index, targets (4,3), stance (4,) bool, duration_s,
    last_in_cycle. ``time_scale`` multiplies every duration (1 / speed_scale). ``params``: GaitParams fields over
    :data:`DEFAULT_GAIT`. ``reposition``: first move the contacts to the nominal stance (:func:`reposition_steps`,
    part of cycle 0)."""
    from atlas_crawl_kinematics.cartesian_gait import CartesianGait, GaitParams
    gp = GaitParams(direction=int(direction), **{**DEFAULT_GAIT, **(params or {})})
    pre = []
    contacts0 = np.asarray(contacts0, float)
    if reposition:
        pre, contacts0 = reposition_steps(contacts0, float(heading0_rad), gp.t_shift_s, gp.t_swing_s,
                                          gp.lift_hand_m, gp.lift_knee_m)
        for st in pre:
            st.update(cycle=0, index=0, last_in_cycle=False, duration_s=st["duration_s"] * time_scale)
    g = CartesianGait(contacts0, np.asarray(com0_xy, float)[:2], float(heading0_rad), gp, cycles=int(cycles))
    dt = 0.005
    ts = np.arange(0.0, g.duration_s + 1e-9, dt)
    samples = [g.sample(float(t)) for t in ts]
    # phase segments [i0, i1)
    segs = []
    i0 = 0
    for i in range(1, len(samples) + 1):
        if i == len(samples) or samples[i].phase_name != samples[i0].phase_name or samples[i].cycle != samples[i0].cycle:
            segs.append((i0, i - 1))
            i0 = i
    steps = []
    t_prev = 0.0
    for i0, i1 in segs:
        s0 = samples[i0]
        if s0.phase_name == "start" or (i1 == i0):
            t_prev = ts[i1]
            continue
        cyc = max(0, s0.cycle)
        points = [i1]
        if s0.swing >= 0:
            points = [(i0 + i1) // 2, i1]          # apex, touchdown
        for k, j in enumerate(points):
            s = samples[j]
            dur = (ts[j] - t_prev) * time_scale
            t_prev = ts[j]
            if dur <= 0:
                continue
            name = s0.phase_name + ("_apex" if len(points) == 2 and k == 0 else "")
            steps.append({"name": name, "cycle": cyc, "index": 0, "targets": s.targets.copy(),
                          "stance": np.asarray(s0.stance, bool).copy(), "duration_s": float(dur),
                          "last_in_cycle": False})
    steps = pre + steps
    for i, st in enumerate(steps):
        nxt = steps[i + 1]["cycle"] if i + 1 < len(steps) else None
        st["last_in_cycle"] = nxt != st["cycle"]
    # lookahead: a four-point step right before a lift already carries the coming support (the limb's target stays
    # where it stands, with the swing weight), so the CoM moves into the coming triangle before the lift
    for i in range(len(steps) - 1):
        cur, nxt_st = steps[i]["stance"], steps[i + 1]["stance"]
        if cur.all() and (cur & nxt_st).sum() == 3:
            steps[i]["stance"] = cur & nxt_st
    idx = {}
    for st in steps:
        st["index"] = idx.get(st["cycle"], 0)
        idx[st["cycle"]] = st["index"] + 1
    return steps


def crawl_generator(contacts, com_xy, heading_rad: float, cycles: int, direction: int = 1,
                    turn_rad_per_s: float = 0.0, speed_m_per_s: Optional[float] = None, params: Optional[dict] = None):
    """The closed-loop gait generator (:class:`.gait_generator.CrawlGaitGenerator`) of a whole Cartesian crawl goal,
    from the contacts as they stand and the heading of travel; the command is ``direction * speed_m_per_s``
    (default: the YAML's crawl_speed_m_per_s) and ``turn_rad_per_s``. One generator for the whole goal: a fresh
    one per cycle would re-derive the pattern from the stretched contacts and repeat the first cycle's ramp-up."""
    from .gait_generator import CrawlCommand, CrawlGaitGenerator, parameter_set
    vals = parameter_set().values(params or {})
    v = vals["crawl_speed_m_per_s"] if speed_m_per_s is None else float(speed_m_per_s)
    cmd = CrawlCommand(float(direction) * v, 0.0, float(turn_rad_per_s))
    return CrawlGaitGenerator(np.asarray(contacts, float).reshape(4, 3), np.asarray(com_xy, float)[:2],
                              float(heading_rad), cmd, int(cycles), params)


def turn_generator(contacts, com_xy, heading_rad: float, cycles: int, sense: float, params: Optional[dict] = None):
    """:func:`crawl_generator` turning on the spot: the command is ``sense`` (+1 left, -1 right) times the YAML's
    turn_rate_rad_per_s, nothing else."""
    from .gait_generator import parameter_set
    rate = parameter_set().values(params or {})["turn_rate_rad_per_s"]
    return crawl_generator(contacts, com_xy, heading_rad, cycles, 1, float(sense) * rate, 0.0, params)


def generator_cycle(gen, cycle: int, time_scale: float = 1.0, feedback: bool = False) -> List[dict]:
    """Steps of ``cycle`` of ``gen``; ``feedback``: first the generator's placement feedback from the errors it
    tracked (:meth:`~.gait_generator.CrawlGaitGenerator.apply_feedback` at the cycle's first step, which keeps
    its ``feedback.every_cycles`` cadence, as :meth:`~.gait_generator.CrawlGaitGenerator.observe` does). Steps as
    :func:`cartesian_plan`."""
    gen.observed = max(gen.observed, gen.steps_per_cycle * int(cycle) - 1)
    if feedback:
        gen.apply_feedback(gen.steps_per_cycle * int(cycle))
    steps = gen.steps(time_scale, cycle)
    if cycle > 0:
        steps[0]["duration_s"] = gen.p["t_shift_s"] * time_scale
    for i, st in enumerate(steps):
        st.update(index=i, last_in_cycle=i == len(steps) - 1)
    return steps
