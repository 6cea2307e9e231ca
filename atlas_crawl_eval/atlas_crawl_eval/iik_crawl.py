"""Cartesian crawl tracked by the IIK in MuJoCo physics (issue 4 §3/§4; thesis §4.2.3, §4.3).

    python -m atlas_crawl_eval.iik_crawl --cycles 10 [--com-modulation] [--stance planned|sensed|velocity] \
        [--root floating|l_wrist_contact|r_wrist_contact|l_knee_contact|r_knee_contact] [--unfriendly 0.25] \
        --out reports/iik_crawl

Loop (physics 1 kHz): every ``1/solve_hz`` s (default 50 Hz, thesis Table 4.4: ≥ 50 Hz) the IIK solves for the gait
targets one solve period ahead, seeded (``--seed-mode internal``, default) by its own previous solution — joints and
base pose, thesis Eq. 4.14 ``q_t = q_{t−1} + …`` — so the commands form one kinematically consistent trajectory;
``--seed-mode sensed`` re-seeds from the sensed joints and measured pelvis pose every tick (the colleague's first
loop: servo sag and every wobble feed back into the plan; it fell in cycle 0). The command is interpolated between
solves at the 1 kHz servo rate, plus a slow integral of the joint tracking error (servo sag, ``--sag-ki``) that starts
bumpless (θ_cmd = θ + τ/Kp of the settled pose). Orientation holds (``--hold-ori``: shins parallel to the floor so
the feet stay off it, the upper torso level so the CoM task cannot fold the back — thesis §4.3.3's "bending the whole
body at the back").

Stance contacts are held at their planned world positions, the swing contact follows the parabolic arc, the CoM
target is the gait's planned one (``--com-modulation`` off: tracked as given, the IIK's built-in CoM task) or the
margin-respecting point of the support polygon of the stance set (``--com-modulation``, :mod:`com_modulation`;
anticipating the next lift by ``--lookahead`` s, rate limited to ``--com-rate`` m/s, optional CoM-error integral
``--com-ki``). Optional closed-loop "wait for the CoM" gate (``--gate-margin``): the plan clock stops before a lift
until the measured CoM has that margin in the measured coming triangle. Deterministic (no wall-clock dependence).

Writes ``<out>/logs/trial_00.npz`` (the 100 Hz log contract), the atlas_crawl_eval report (``report.md`` with
velocity/drift/turn/slip/margins beside the thesis), ``iik_stats.json`` (solve rate, iterations, IIK error,
tracking error, stance slip, per-tripod-phase margins) and ``support_stances.png`` (Fig 4.23 style).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from atlas_crawl_kinematics.cartesian_gait import CartesianGait, GaitParams, LIMB_NAMES
from atlas_crawl_kinematics.com_modulation import ROOT_CHOICES, CoMModulatedIIK
from atlas_crawl_kinematics.iik import IIKParams
from atlas_crawl_kinematics.model import RobotModel
from atlas_crawl_mujoco.height_map import ground_height
from atlas_description import JOINT_NAMES, model_urdf as atlas_urdf_string
from atlas_crawl_kinematics.stance import STANCE_SOURCES
from atlas_crawl_kinematics.support import stability_margin, support_polygon
from atlas_crawl_controller.parameters import ParameterError
from atlas_crawl_controller.tracking import CrawlTracker
from atlas_crawl_controller.tracking.crawl_tracker import parameter_set as tracker_parameter_set

from atlas_crawl_mujoco.logger import Logger
from atlas_crawl_mujoco.sim import AtlasSim

SEED_JOINTS = {"l_leg_lhy": -1.5, "r_leg_lhy": -1.5, "l_leg_kny": 2.0, "r_leg_kny": 2.0, "l_leg_uay": 0.6,
               "r_leg_uay": 0.6, "l_arm_usy": -1.3, "r_arm_usy": -1.3, "l_arm_shx": -0.5, "r_arm_shx": 0.5,
               "l_arm_elx": 0.6, "r_arm_elx": -0.6, "neck_ay": -0.6}
SEED_PITCH_RAD = 1.25
#: nominal four-point stance (contacts relative to the knee midpoint, heading +x): narrow hands (±0.22 m) and wide
#: knees (±0.26 m) put the crossing of the diagonals near the CoM, so every tripod needs only a short CoM shift
#: (the earlier ±0.36/±0.22 pattern put the CoM 0.12 m ahead of the crossing: a hand lift needed a 0.17 m
#: backward shift, which the IIK made by folding the back)
NOMINAL = np.array([[0.66, 0.22], [0.66, -0.22], [0.0, 0.26], [0.0, -0.26]])

_MODEL = None


def robot_model() -> RobotModel:
    global _MODEL
    if _MODEL is None:
        _MODEL = RobotModel.from_urdf_string(atlas_urdf_string("mujoco"))
    return _MODEL


def quat_to_R(qwxyz) -> np.ndarray:
    w, x, y, z = qwxyz
    return Rotation.from_quat([x, y, z, w]).as_matrix()


def R_to_quat(R) -> np.ndarray:
    x, y, z, w = Rotation.from_matrix(R).as_quat()
    return np.array([w, x, y, z])


def sensed_base(sim: AtlasSim):
    p, qu = sim.pelvis_pose()
    return p, quat_to_R(qu)


def _seed_q(model: RobotModel) -> np.ndarray:
    q = np.zeros(model.n_joints)
    for n, v in SEED_JOINTS.items():
        q[model.joint_index(n)] = v
    return model.clip_to_limits(q)


def start_stance(sim: AtlasSim, model: RobotModel, nominal=NOMINAL, settle_s: float = 1.5):
    """Put the robot on hands and knees in the nominal stance: settle the probe stance in physics, solve the
    floating IIK for the nominal contact pattern (CoM over the four-point centroid), reset there and settle.
    Returns the home posture (joint angles of the settled nominal stance)."""
    sim.fall_check = "none"
    sim.reset(_seed_q(model), base_quat_wxyz=(math.cos(SEED_PITCH_RAD / 2), 0, math.sin(SEED_PITCH_RAD / 2), 0))
    sim.step(1000)
    q0 = sim.joint_q()
    bp, bR = sensed_base(sim)
    c = sim.contact_site_pos()
    knee_mid = c[2:4, :2].mean(axis=0)
    tg = c.copy()
    tg[:, :2] = knee_mid + nominal
    # each contact keeps its height above the scene's ground (on a slope or rough floor the nominal pattern's
    # points are not at the probe contacts' heights)
    g0 = np.array([ground_height(sim, p) for p in c[:, :2]])
    g1 = np.array([ground_height(sim, p) for p in tg[:, :2]])
    ok = np.isfinite(g0) & np.isfinite(g1)
    tg[ok, 2] += g1[ok] - g0[ok]
    ctl = CoMModulatedIIK(model, IIKParams.improved(max_iterations=200), home_q=q0, margin_m=0.0)
    r = ctl.solve(q0, bp, bR, tg, np.ones(4, bool), com_desired_xy=tg[:, :2].mean(axis=0) + [0.02, 0.0],
                  modulate=False)
    bp1, bR1 = r.iik.base_pos, r.iik.base_rot
    sim.reset(r.q, base_quat_wxyz=R_to_quat(bR1), base_xy=bp1[:2])
    sim.step(int(settle_s / sim.dt))
    return sim.joint_q(), r


#: the crawl tracker's defaults (atlas_crawl_controller/config/crawl_tracker_parameters.yaml): the runner runs the
#: controller's law with the controller's parameters unless told otherwise
_D = tracker_parameter_set().defaults()


@dataclass
class TrackConfig:
    """The runner's view of the tracker's parameters (defaults: the parameter file; see its descriptions)."""
    solve_hz: float = _D["solve_rate_hz"]
    com_modulation: bool = _D["com_modulation"]
    stance: str = _D["stance_source"]
    root: str = _D["root"]
    margin_m: float = _D["com.margin_m"]
    sag_ki: float = _D["sag.ki_per_s"]
    sag_limit_rad: float = _D["sag.limit_rad"]
    sag_joints: tuple = tuple(_D["sag.joints"])
    stance_weight: float = _D["weights.stance"]
    swing_weight: float = _D["weights.swing"]
    pelvis_weight: float = _D["weights.pelvis"]
    com_weight: float = _D["weights.com"]
    rest_s: float = 2.5  #: logged rest before and after the gait (cycle_index −1, eval harness convention)
    hold: str = _D["stance_hold"]
    hold_orientation: tuple = tuple(_D["orientation_hold_frames"])
    world_drift: bool = _D["world_drift.enabled"]
    world_drift_time_constant_s: float = _D["world_drift.time_constant_s"]
    world_drift_max_correction_m: float = _D["world_drift.max_correction_m"]
    lookahead_s: float = _D["com.lookahead_s"]
    seed: str = _D["seed"]
    convergence_m: float = _D["iik.convergence_m"]
    iterations_per_update: int = _D["iik.iterations_per_update"]
    gate_margin_m: float = _D["gate.margin_m"]
    gate_timeout_s: float = _D["gate.timeout_s"]
    com_ki: float = _D["com.ki_per_s"]
    com_i_limit_m: float = _D["com.integral_limit_m"]
    com_rate_m_s: float = _D["com.rate_limit_m_per_s"]
    press_m: float = _D["press_m"]
    seek_m_s: float = _D["seek.speed_m_per_s"]
    seek_max_m: float = _D["seek.max_m"]
    support: str = _D["support_source"]
    stop_after_s: float = math.inf  #: end the run at this plan time (short tests); default: the whole plan


@dataclass
class TrackStats:
    solves: int = 0
    solve_time_s: list = field(default_factory=list)
    iterations: list = field(default_factory=list)
    iik_error_m: list = field(default_factory=list)
    track_err_m: list = field(default_factory=list)  #: (n, 4) |sensed contact − target| per limb at solve ticks
    stance_mask: list = field(default_factory=list)
    planned_margin_m: list = field(default_factory=list)
    com_target_xy: list = field(default_factory=list)
    com_xy: list = field(default_factory=list)
    support_sets: list = field(default_factory=list)  #: (t, planned (4,), used (4,), touch (4,))
    roots_used: dict = field(default_factory=dict)
    gate_wait_s: list = field(default_factory=list)  #: per lift: how long the CoM gate held the plan clock


class SimSensed:
    """The tracker's ``sensed`` view of the simulator at one tick (ground truth: MuJoCo CoM, contact sites and
    touch flags); read lazily, so the ticks between solves only read the joints."""

    def __init__(self, sim: AtlasSim):
        self.sim = sim
        self.q = sim.joint_q()
        self._touch = None

    @property
    def base_pos(self):
        return sensed_base(self.sim)[0]

    @property
    def base_rot(self):
        return sensed_base(self.sim)[1]

    @property
    def com_xy(self):
        return self.sim.com()[:2]

    @property
    def contacts(self):
        return self.sim.contact_site_pos()

    def _limb(self):
        if self._touch is None:
            self._touch = self.sim.limb_contacts()
        return self._touch

    @property
    def touch(self):
        return self._limb()[0]

    @property
    def force(self):
        return self._limb()[1]


def tracker_params(cfg: TrackConfig) -> dict:
    """The runner's configuration as the tracker's gpl parameters (config/crawl_tracker_parameters.yaml)."""
    return {"solve_rate_hz": cfg.solve_hz, "com_modulation": cfg.com_modulation, "root": cfg.root,
            "seed": cfg.seed, "stance_source": cfg.stance, "stance_hold": cfg.hold, "support_source": cfg.support,
            "orientation_hold_frames": list(cfg.hold_orientation), "world_drift.enabled": cfg.world_drift,
            "world_drift.time_constant_s": cfg.world_drift_time_constant_s,
            "world_drift.max_correction_m": cfg.world_drift_max_correction_m,
            "iik.max_iterations": _D["iik.max_iterations"],
            "iik.convergence_m": cfg.convergence_m, "iik.iterations_per_update": cfg.iterations_per_update,
            "weights.stance": cfg.stance_weight, "weights.swing": cfg.swing_weight,
            "weights.pelvis": cfg.pelvis_weight, "weights.com": cfg.com_weight,
            "com.margin_m": cfg.margin_m, "com.lookahead_s": cfg.lookahead_s, "com.rate_limit_m_per_s": cfg.com_rate_m_s,
            "com.ki_per_s": cfg.com_ki, "com.integral_limit_m": cfg.com_i_limit_m, "gate.margin_m": cfg.gate_margin_m,
            "gate.timeout_s": cfg.gate_timeout_s, "sag.ki_per_s": cfg.sag_ki, "sag.limit_rad": cfg.sag_limit_rad,
            "sag.joints": list(cfg.sag_joints),
            "press_m": cfg.press_m, "seek.speed_m_per_s": cfg.seek_m_s, "seek.max_m": cfg.seek_max_m}


def track(sim: AtlasSim, model: RobotModel, plan, cfg: TrackConfig, home_q, gait_name="iik_crawl", seed=0,
          quiet=False, video=None, on_tick=None):
    """Run ``plan`` (object with ``sample(t)``, ``duration_s``, ``trajectory(dt)``) in physics with the controller's
    :class:`~atlas_crawl_controller.tracking.CrawlTracker`: rest, then per physics tick sense → tracker → servos,
    then rest. ``on_tick(sim)``, optional: called every tick before the plan observes (e.g. a height-map feed).
    Returns (log arrays dict, TrackStats, summary dict). Deterministic (no wall-clock dependence)."""
    try:
        tracker = CrawlTracker.from_params(model, home_q, sim.dt, tracker_params(cfg))
    except ParameterError as e:
        raise ValueError(str(e)) from e
    logger = Logger(sim.params["log_rate_hz"])
    rec = None
    if video:
        from atlas_crawl_mujoco.render import VideoRecorder
        rec = VideoRecorder(sim, video)
    st = TrackStats()
    sim.fall_check = "crawl"
    logger.start(sim.time)
    t_rest0 = sim.time
    # rest before (logged)
    while sim.time - t_rest0 < cfg.rest_s - 1e-9:
        sim.step(1)
        logger.maybe_sample(sim, np.ones(4, bool), -1, -1)
        if rec:
            rec.maybe_capture()
    tracker.start(plan, SimSensed(sim), sim.joint_targets())
    tracker.end_s = cfg.stop_after_s if math.isfinite(cfg.stop_after_s) else None
    t0 = sim.time
    T = tracker.end_time(plan)
    fell, fall_t, reason = False, math.nan, ""
    k = 0
    observe = getattr(plan, "observe", None)  # closed-loop gait generators re-plan from the measured pelvis
    while not tracker.finished(plan):
        sensed = SimSensed(sim)
        if on_tick is not None:
            on_tick(sim)
        if observe is not None:
            observe(tracker.t_plan, *sensed_base(sim))
        sim.set_joint_targets(tracker.step(sim.time, plan, sensed))
        if tracker.solved:
            _record(st, tracker.last, sensed, sim.time - t0)
        sim.step(1)
        k += 1
        s = plan.sample(min(tracker.t_plan, T))
        logger.maybe_sample(sim, s.stance, max(s.cycle, 0) if s.cycle >= 0 else -1, s.phase)
        if rec:
            rec.maybe_capture()
        if k % 10 == 0:
            f, why = sim.fallen()
            if f:
                fell, fall_t, reason = True, sim.time, why
                if not quiet:
                    print(f"FALL at t={sim.time:.2f}s: {why}", file=sys.stderr)
                break
    st.gate_wait_s = tracker.gate.waits_s
    # rest after (logged), holding the last command
    t1 = sim.time
    while not fell and sim.time - t1 < cfg.rest_s - 1e-9:
        sim.step(1)
        logger.maybe_sample(sim, np.ones(4, bool), -1, -1)
        if rec:
            rec.maybe_capture()
    meta = dict(gait=gait_name, loop_mode="full", cycles=getattr(plan, "cycles", 1), seed=seed, fell=fell,
                fall_time_s=fall_t)
    arr = logger.arrays(meta)
    summary = dict(fell=fell, fall_time_s=fall_t, fall_reason=reason, gait_time_s=t1 - t0,
                   gate_wait_s_total=float(np.sum(st.gate_wait_s)) if st.gate_wait_s else 0.0,
                   gate_timeouts=tracker.gate.timeouts(), config=asdict(cfg))
    if rec:
        summary["video"] = rec.close()
    return arr, st, summary


def _record(st: TrackStats, r, sensed: SimSensed, t: float) -> None:
    res = r.result
    st.solve_time_s.append(r.solve_time_s)
    st.solves += 1
    st.iterations.append(res.iik.iterations)
    st.iik_error_m.append(res.iik.error_m)
    st.track_err_m.append(np.linalg.norm(sensed.contacts - r.cur.targets, axis=1))
    st.stance_mask.append(r.cur.stance.copy())
    st.planned_margin_m.append(res.planned_margin_m)
    st.com_target_xy.append(np.full(2, np.nan) if res.com_target_xy is None else res.com_target_xy)
    st.com_xy.append(sensed.com_xy)
    st.support_sets.append((t, r.nxt.stance.copy(), r.used.copy(), r.touch.copy()))
    st.roots_used[res.root_used] = st.roots_used.get(res.root_used, 0) + 1


# ---------------------------------------------------------------------------------------------- analysis
def tripod_phase_margins(arr) -> list[dict]:
    """Per tripod phase (contiguous samples with exactly 3 planned stance limbs): min signed margin of the measured
    CoM to the triangle of the *measured* positions of the planned stance contacts, and whether they stayed in touch."""
    ps = arr["planned_stance"]
    tri = ps.sum(axis=1) == 3
    out = []
    i = 0
    n = len(tri)
    while i < n:
        if not tri[i]:
            i += 1
            continue
        j = i
        while j < n and tri[j] and np.array_equal(ps[j], ps[i]):
            j += 1
        mg = []
        for k in range(i, j):
            pts = arr["contact_pos_m"][k][ps[k], :2]
            try:
                mg.append(stability_margin(arr["com_pos_m"][k][:2], support_polygon(pts)))
            except Exception:  # noqa: BLE001 - degenerate polygon
                mg.append(-np.inf)
        swing = LIMB_NAMES[int(np.flatnonzero(~ps[i])[0])]
        lost = float(np.mean(np.any(ps[i:j] & ~arr["contact_in_touch"][i:j], axis=1)))
        out.append(dict(t0=float(arr["time_s"][i]), t1=float(arr["time_s"][j - 1]), swing=swing,
                        cycle=int(arr["cycle_index"][i]), min_margin_m=float(np.min(mg)),
                        stance_lost_fraction=lost))
        i = j
    return out


def stance_slip_mm(arr) -> dict:
    """Slip of stance contacts: per limb and per interval of continuous planned stance AND touch (≥ 0.1 s), the
    horizontal displacement start → end and the max excursion from the start point (mm)."""
    ps = arr["planned_stance"] & arr["contact_in_touch"]
    cyc = arr["cycle_index"]
    d_end, d_exc = [], []
    for l in range(4):
        m = ps[:, l] & (cyc >= 0)
        i = 0
        while i < len(m):
            if not m[i]:
                i += 1
                continue
            j = i
            while j < len(m) and m[j]:
                j += 1
            if j - i >= 10:
                p = arr["contact_pos_m"][i:j, l, :2]
                d_end.append(np.linalg.norm(p[-1] - p[0]))
                d_exc.append(np.linalg.norm(p - p[0], axis=1).max())
            i = j
    if not d_end:
        return dict(mean_mm=float("nan"), max_mm=float("nan"), max_excursion_mm=float("nan"), n=0)
    return dict(mean_mm=1e3 * float(np.mean(d_end)), max_mm=1e3 * float(np.max(d_end)),
                max_excursion_mm=1e3 * float(np.max(d_exc)), n=len(d_end))


def eval_metrics(arr, behaviour="crawl_forward") -> dict:
    from . import metrics
    lg = trial_log_of(arr)
    try:
        return metrics.trial_metrics(lg, behaviour)
    except metrics.MetricError as e:
        return {"error": str(e)}


def trial_log_of(arr):
    """The log arrays of :func:`track` as a checked :class:`~.trial_log.TrialLog` (through a temporary .npz)."""
    import tempfile
    from .trial_log import TrialLog
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "log.npz")
        np.savez(f, **arr)
        return TrialLog.load(f)


def stats_summary(st: TrackStats, arr, sim_dt=0.001) -> dict:
    te = np.array(st.track_err_m) if st.track_err_m else np.zeros((0, 4))
    sm = np.array(st.stance_mask) if st.stance_mask else np.zeros((0, 4), bool)
    ph = tripod_phase_margins(arr)
    pm = np.array([p for p in st.planned_margin_m if np.isfinite(p)])
    return dict(
        solves=st.solves,
        solve_rate_hz_sim=None,
        solve_time_ms_median=1e3 * float(np.median(st.solve_time_s)) if st.solve_time_s else float("nan"),
        solve_time_ms_p99=1e3 * float(np.percentile(st.solve_time_s, 99)) if st.solve_time_s else float("nan"),
        iterations_median=float(np.median(st.iterations)) if st.iterations else float("nan"),
        iik_error_mm_median=1e3 * float(np.median(st.iik_error_m)) if st.iik_error_m else float("nan"),
        iik_error_mm_p95=1e3 * float(np.percentile(st.iik_error_m, 95)) if st.iik_error_m else float("nan"),
        track_err_stance_mm_median=1e3 * float(np.median(te[sm])) if sm.any() else float("nan"),
        track_err_swing_mm_median=1e3 * float(np.median(te[~sm])) if (~sm).any() else float("nan"),
        track_err_swing_mm_p95=1e3 * float(np.percentile(te[~sm], 95)) if (~sm).any() else float("nan"),
        slip=stance_slip_mm(arr),
        tripod_phases=len(ph),
        tripod_min_margin_m=min((p["min_margin_m"] for p in ph), default=float("nan")),
        tripod_phases_margin_ge_0_02=sum(p["min_margin_m"] >= 0.02 for p in ph),
        tripod_phases_margin_gt_0=sum(p["min_margin_m"] > 0 for p in ph),
        planned_com_target_margin_min_m=float(pm.min()) if len(pm) else float("nan"),
        roots_used=st.roots_used,
        phases=ph,
    )


def stance_agreement(st: TrackStats) -> dict:
    """How often the planned (desired) stance set and the sensed contacts agree, per limb (thesis §5.4)."""
    if not st.support_sets:
        return {}
    P = np.array([s[1] for s in st.support_sets])
    U = np.array([s[2] for s in st.support_sets])
    Tt = np.array([s[3] for s in st.support_sets])
    return dict(planned_vs_sensed_agree=float(np.mean(P == Tt)),
                planned_stance_not_touching=float(np.mean(P & ~Tt)),
                planned_swing_touching=float(np.mean(~P & Tt)),
                used_vs_planned_agree=float(np.mean(U == P)),
                per_limb_agree={LIMB_NAMES[i]: float(np.mean(P[:, i] == Tt[:, i])) for i in range(4)})


def plot_support_stances(arr, st: TrackStats, path, title="", n_phases=4):
    """Fig 4.23 style: for a few tripod phases, the desired support triangle (planned contact targets, ●) and the
    actual one (measured contacts in touch, ■), the CoM target (×) and the measured CoM (★), spatial-ish frame
    (world axes, translated to the stance centroid)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ph = tripod_phase_margins(arr)
    if not ph:
        return None
    # choose the first n_phases phases of the 2nd cycle if available
    sel = [p for p in ph if p["cycle"] == 1][:n_phases] or ph[:n_phases]
    fig, axs = plt.subplots(1, len(sel), figsize=(4.2 * len(sel), 4.2), squeeze=False)
    t = arr["time_s"]
    for ax, p in zip(axs[0], sel):
        i = int(np.searchsorted(t, 0.5 * (p["t0"] + p["t1"])))
        ps = arr["planned_stance"][i]
        c = arr["contact_pos_m"][i]
        touch = arr["contact_in_touch"][i]
        origin = c[ps, :2].mean(axis=0)
        tri_d = c[ps, :2] - origin
        des = getattr(st, "desired_xy", None)
        if des is not None:
            j = int(np.clip(np.searchsorted(t, t[i]) , 0, len(des) - 1))
            tri_d = des[j][ps, :2] - origin
        poly = support_polygon(tri_d)
        ax.fill(*np.vstack([poly, poly[:1]]).T, alpha=0.15, color="tab:blue")
        ax.plot(*np.vstack([poly, poly[:1]]).T, "o-", color="tab:blue", label="desired support (●)")
        act = c[ps & touch, :2] - origin
        if len(act) >= 3:
            pa = support_polygon(act)
            ax.plot(*np.vstack([pa, pa[:1]]).T, "s--", color="tab:orange", label="actual support (■, in touch)")
        elif len(act):
            ax.plot(act[:, 0], act[:, 1], "s", color="tab:orange", label="actual (■, <3 in touch)")
        sw = c[~ps, :2] - origin
        ax.plot(sw[:, 0], sw[:, 1], "^", color="grey", label="swing limb")
        com = arr["com_pos_m"][i][:2] - origin
        ax.plot(com[0], com[1], "*", ms=14, color="tab:red", label="CoM (measured)")
        ax.set_title(f"cycle {p['cycle']}, {p['swing']} swings\nmin margin {p['min_margin_m']*100:+.1f} cm")
        ax.set_aspect("equal")
        ax.grid(alpha=0.3)
        ax.set_xlabel("x (m, from stance centroid)")
    axs[0][0].set_ylabel("y (m)")
    axs[0][0].legend(fontsize=7, loc="lower left")
    fig.suptitle(title)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_compare(run_dirs, path, labels=None):
    """Without vs with modulation (Fig 4.23 companion): per tripod phase the min margin of the measured CoM in the
    measured support triangle (bars; the 0.02 m goal dashed), and the top view of the measured CoM path over the
    contacts. ``run_dirs``: output directories of this runner (``logs/trial_00.npz``)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = labels or [Path(d).name for d in run_dirs]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 4.5))
    w = 0.8 / len(run_dirs)
    for k, (d, lab) in enumerate(zip(run_dirs, labels)):
        arr = dict(np.load(Path(d) / "logs" / "trial_00.npz"))
        ph = tripod_phase_margins(arr)
        x = np.arange(len(ph))
        a1.bar(x + k * w, [p["min_margin_m"] for p in ph], w, label=lab)
        if k == 0:
            a1.set_xticks(x + 0.4 - w / 2, [f"c{p['cycle']} {p['swing']}" for p in ph], rotation=60, fontsize=7)
        m = arr["cycle_index"] >= 0
        a2.plot(arr["com_pos_m"][m, 0], arr["com_pos_m"][m, 1], "-", lw=1.5, label=f"CoM, {lab}")
        tch = arr["contact_in_touch"] & m[:, None]
        for i in range(4):
            a2.plot(arr["contact_pos_m"][tch[:, i], i, 0], arr["contact_pos_m"][tch[:, i], i, 1], ".", ms=1.5,
                    color=f"C{k}", alpha=0.3)
    a1.axhline(0.02, ls="--", color="k", lw=0.8, label="goal 0.02 m")
    a1.axhline(0.0, color="k", lw=0.5)
    a1.set_ylabel("min tripod margin (m)")
    a1.legend(fontsize=7)
    a1.grid(alpha=0.3)
    a2.set_aspect("equal")
    a2.set_xlabel("x (m)")
    a2.set_ylabel("y (m)")
    a2.legend(fontsize=7)
    a2.grid(alpha=0.3)
    a2.set_title("measured CoM path; dots: contacts in touch")
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def print_table(rows: list[dict], cols: list[tuple[str, str, str]]) -> str:
    head = "| " + " | ".join(c[1] for c in cols) + " |\n|" + "---|" * len(cols) + "\n"
    body = ""
    for r in rows:
        vals = []
        for key, _lab, fmt in cols:
            v = r.get(key, "")
            try:
                vals.append(fmt.format(v))
            except (ValueError, TypeError):
                vals.append(str(v))
        body += "| " + " | ".join(vals) + " |\n"
    return head + body


CRAWL_COLS = [("label", "run", "{}"), ("velocity_m_s", "velocity m/s", "{:.4f}"),
              ("distance_per_gait_m", "dist/gait m", "{:.4f}"), ("drift_per_gait_m", "drift/gait m", "{:.4f}"),
              ("turn_per_gait_deg", "turn/gait deg", "{:+.2f}"), ("fell", "fell", "{}"),
              ("tripod_min_margin_m", "min tripod margin m", "{:+.4f}"),
              ("phases_ok", "tripod phases ≥0.02 m", "{}"), ("slip_mean_mm", "slip mean mm", "{:.1f}"),
              ("slip_max_mm", "slip max mm", "{:.1f}"), ("solve_ms", "solve ms (median)", "{:.2f}"),
              ("iik_err_mm", "IIK err mm (median)", "{:.2f}"), ("swing_track_mm", "swing track err mm", "{:.1f}"),
              ("stance_track_mm", "stance track err mm", "{:.1f}")]


def row_from(label, arr, st, summ) -> dict:
    em = eval_metrics(arr)
    ss = stats_summary(st, arr)
    return dict(label=label, velocity_m_s=em.get("velocity_m_s", float("nan")),
                distance_per_gait_m=em.get("distance_per_gait_m", float("nan")),
                drift_per_gait_m=em.get("drift_per_gait_m", float("nan")),
                turn_per_gait_deg=em.get("turn_per_gait_deg", float("nan")), fell=bool(summ["fell"]),
                tripod_min_margin_m=ss["tripod_min_margin_m"],
                phases_ok=f"{ss['tripod_phases_margin_ge_0_02']}/{ss['tripod_phases']}",
                slip_mean_mm=ss["slip"]["mean_mm"], slip_max_mm=ss["slip"]["max_mm"],
                solve_ms=ss["solve_time_ms_median"], iik_err_mm=ss["iik_error_mm_median"],
                swing_track_mm=ss["track_err_swing_mm_median"], stance_track_mm=ss["track_err_stance_mm_median"],
                eval=em, stats=ss, summary=summ)


def gait_params_from_args(a) -> GaitParams:
    return GaitParams(stride_m=a.stride, lift_hand_m=a.lift_hand, lift_knee_m=a.lift_knee, t_shift_s=a.t_shift,
                      t_swing_s=a.t_swing, direction=-1 if a.backward else 1, turn_rad_per_cycle=math.radians(a.turn_deg),
                      margin_m=a.plan_margin, com_forward_bias_m=a.unfriendly)


def run_one(a, label=None, quiet=False, video=None):
    model = robot_model()
    sim = AtlasSim(seed=a.seed)
    nominal = np.array([[a.hand_x, a.hand_y], [a.hand_x, -a.hand_y], [0.0, a.knee_y], [0.0, -a.knee_y]])
    home, _ = start_stance(sim, model, nominal=nominal)
    c0 = sim.contact_site_pos()
    plan = CartesianGait(c0, sim.com()[:2], 0.0, gait_params_from_args(a), cycles=a.cycles)
    cfg = track_config_from_args(a)
    t = time.perf_counter()
    arr, st, summ = track(sim, model, plan, cfg, home, gait_name="iik_crawl", seed=a.seed, quiet=quiet, video=video)
    summ["wall_s"] = time.perf_counter() - t
    summ["solve_rate_hz"] = a.solve_hz
    label = label or (f"{'mod' if a.com_modulation else 'plain'} stance={a.stance} root={a.root}"
                      + (f" unfriendly={a.unfriendly}" if a.unfriendly else ""))
    return arr, st, summ, row_from(label, arr, st, summ)


def add_gait_args(ap):
    ap.add_argument("--cycles", type=int, default=10)
    ap.add_argument("--hand-x", type=float, default=0.66, help="m, nominal wrists ahead of the knee midpoint")
    ap.add_argument("--hand-y", type=float, default=0.22, help="m, nominal half width of the wrists")
    ap.add_argument("--knee-y", type=float, default=0.26, help="m, nominal half width of the knees")
    ap.add_argument("--stride", type=float, default=0.20, help="m per cycle")
    ap.add_argument("--lift-hand", type=float, default=0.08)
    ap.add_argument("--lift-knee", type=float, default=0.05)
    ap.add_argument("--t-shift", type=float, default=0.8, help="s, CoM shift before each lift")
    ap.add_argument("--t-swing", type=float, default=0.6, help="s, swing")
    ap.add_argument("--backward", action="store_true")
    ap.add_argument("--turn-deg", type=float, default=0.0, help="yaw of the contact pattern per cycle, deg")
    ap.add_argument("--plan-margin", type=float, default=0.04, help="planned CoM margin in each tripod, m")
    ap.add_argument("--unfriendly", type=float, default=0.0,
                    help="CoM-unfriendly plan: CoM target rides this far (m) ahead of the contact centroid, no "
                         "margin logic (the thesis' failure mode, Fig 4.23)")


def track_config_from_args(a) -> TrackConfig:
    return TrackConfig(solve_hz=a.solve_hz, com_modulation=a.com_modulation, stance=a.stance, root=a.root,
                       margin_m=a.margin, sag_ki=a.sag_ki, sag_limit_rad=a.sag_limit,
                       sag_joints=tuple(JOINT_NAMES) if a.sag_joints == "all" else tuple(a.sag_joints.split(",")),
                       hold=a.hold, seed=a.seed_mode,
                       gate_margin_m=a.gate_margin, gate_timeout_s=a.gate_timeout, com_ki=a.com_ki,
                       press_m=a.press, seek_m_s=a.seek, support=a.support, lookahead_s=a.lookahead, com_rate_m_s=a.com_rate, stance_weight=a.stance_weight, com_weight=a.com_weight,
                       hold_orientation=tuple(a.hold_ori.split(",")) if a.hold_ori else (),
                       world_drift=a.world_drift, world_drift_time_constant_s=a.world_drift_time_constant,
                       world_drift_max_correction_m=a.world_drift_max_correction,
                       iterations_per_update=a.iterations_per_update)


def add_track_args(ap):
    ap.add_argument("--seed-mode", choices=["internal", "sensed"], default=_D["seed"],
                    help="IIK seed per tick: its own previous solution (thesis Eq. 4.14) or the sensed state")
    ap.add_argument("--gate-margin", type=float, default=_D["gate.margin_m"],
                    help="m; hold the plan before each lift until the measured CoM has this margin (0: off)")
    ap.add_argument("--gate-timeout", type=float, default=_D["gate.timeout_s"],
                    help="s, longest CoM-gate hold per lift")
    ap.add_argument("--com-ki", type=float, default=_D["com.ki_per_s"],
                    help="1/s, integral of the CoM error (modulation only)")
    ap.add_argument("--press", type=float, default=_D["press_m"], help="m, stance contacts commanded below the floor")
    ap.add_argument("--support", choices=["sensed", "targets"], default=_D["support_source"],
                    help="modulation support polygon: measured contacts or the IIK's stance targets")
    ap.add_argument("--seek", type=float, default=_D["seek.speed_m_per_s"],
                    help="m/s, ground-seeking reflex of untouched stance limbs")
    ap.add_argument("--com-rate", type=float, default=_D["com.rate_limit_m_per_s"],
                    help="m/s, rate limit of the modulated CoM target")
    ap.add_argument("--lookahead", type=float, default=_D["com.lookahead_s"],
                    help="s, modulation anticipates lifts this far ahead")
    ap.add_argument("--hold-ori", default=",".join(_D["orientation_hold_frames"]),
                    help="comma-separated frames whose world orientation is held (yawed with the heading)")
    ap.add_argument("--world-drift", action=argparse.BooleanOptionalAction, default=_D["world_drift.enabled"],
                    help="map swing targets into the IIK's world by the world drift measured at the stance contacts")
    ap.add_argument("--world-drift-time-constant", type=float, default=_D["world_drift.time_constant_s"],
                    help="s, filter of the measured world drift")
    ap.add_argument("--world-drift-max-correction", type=float, default=_D["world_drift.max_correction_m"],
                    help="m, how far the drift mapping may move a swing or CoM target from where the held support "
                         "puts it (10: unbounded)")
    ap.add_argument("--stance-weight", type=float, default=_D["weights.stance"])
    ap.add_argument("--com-weight", type=float, default=_D["weights.com"])
    ap.add_argument("--com-modulation", action="store_true")
    ap.add_argument("--stance", choices=STANCE_SOURCES, default=_D["stance_source"])
    ap.add_argument("--root", choices=ROOT_CHOICES, default=_D["root"])
    ap.add_argument("--margin", type=float, default=_D["com.margin_m"], help="CoM modulation margin, m")
    ap.add_argument("--solve-hz", type=float, default=_D["solve_rate_hz"])
    ap.add_argument("--iterations-per-update", type=int, default=_D["iik.iterations_per_update"],
                    help="IIK iterations per control tick (real-time slicing; 0 = whole solves, as before session 9)")
    ap.add_argument("--sag-ki", type=float, default=_D["sag.ki_per_s"])
    ap.add_argument("--sag-limit", type=float, default=_D["sag.limit_rad"], help="rad; bound of the servo-sag integral")
    ap.add_argument("--sag-joints", default=",".join(_D["sag.joints"]),
                    help="comma-separated joints whose servo sag is integrated, or 'all'")
    ap.add_argument("--hold", choices=["planned", "touchdown"], default=_D["stance_hold"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--video", action="store_true", help="film the run (gen_crawl: one mp4 per trial in --out)")


def write_outputs(out: Path, arr, st, summ, row, title, behaviour="crawl_forward", command=None):
    out.mkdir(parents=True, exist_ok=True)
    (out / "logs").mkdir(exist_ok=True)
    np.savez(out / "logs" / "trial_00.npz", **arr)
    try:
        from .report import write_report
        write_report([str(out / "logs" / "trial_00.npz")], behaviour, out, command=command)
    except Exception as e:  # noqa: BLE001
        print(f"eval report failed: {e}", file=sys.stderr)
    plot_support_stances(arr, st, out / "support_stances.png", title)
    js = dict(row={k: v for k, v in row.items() if k not in ("eval", "stats", "summary")}, eval=row["eval"],
              stats=row["stats"], summary=summ, stance_agreement=stance_agreement(st), command=command)
    (out / "iik_stats.json").write_text(json.dumps(js, indent=1, default=_json), encoding="utf-8")


def _json(o):
    if isinstance(o, (np.floating, np.integer, np.bool_)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_gait_args(ap)
    add_track_args(ap)
    ap.add_argument("--out", default="reports/iik_crawl")
    ap.add_argument("--compare", nargs="+", metavar="RUN_DIR",
                    help="only plot per-phase margins + CoM paths of finished runs into <out>/compare.png")
    a = ap.parse_args(argv)
    out = Path(a.out)
    if a.compare:
        print(plot_compare(a.compare, out / "compare.png"))
        return 0
    cmd = "python -m atlas_crawl_eval.iik_crawl " + " ".join(argv if argv is not None else sys.argv[1:])
    arr, st, summ, row = run_one(a, video=str(out / "video.mp4") if a.video else None)
    write_outputs(out, arr, st, summ, row, row["label"], command=cmd)
    print(print_table([row], CRAWL_COLS))
    ss = row["stats"]
    print(f"solves {ss['solves']} at {a.solve_hz:g} Hz (sim time), solve {ss['solve_time_ms_median']:.2f} ms median /"
          f" {ss['solve_time_ms_p99']:.2f} ms p99, {ss['iterations_median']:.0f} iterations median; "
          f"swing tracking p95 {ss['track_err_swing_mm_p95']:.1f} mm; slip max excursion "
          f"{ss['slip']['max_excursion_mm']:.1f} mm; wall {summ['wall_s']:.1f} s; "
          f"thesis IIK crawl: 0.0314 m/s, drift 0.093 m/gait, turn 13.3 deg/gait; targets >= 0.20 m/s, "
          f"<= 0.02 m, <= 1 deg")
    print(f"report: {out / 'report.md'}  stats: {out / 'iik_stats.json'}  plot: {out / 'support_stances.png'}")
    return 1 if summ["fell"] else 0


if __name__ == "__main__":
    sys.exit(main())
