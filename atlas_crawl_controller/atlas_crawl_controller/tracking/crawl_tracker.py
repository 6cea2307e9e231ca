"""The closed-loop Cartesian crawl law (thesis §4.2.3, §4.3): one object, no ROS, no simulator.

Hosts: the controller core's MODE_CARTESIAN (ROS node and ros2_control plugin) and the MuJoCo runner
``atlas_crawl_mujoco.iik_crawl``. Per control tick of period ``period_s``::

    tracker.start(plan, sensed, q_command)            # once, in a settled pose
    while not tracker.finished(plan):
        q_cmd = tracker.step(t, plan, sensed)          # → the servos

``plan`` has ``sample(t)`` (→ ``targets`` (4, 3) world, ``stance`` (4,) bool, ``heading_rad``, optional ``com_xy``,
``pelvis_target``) and ``duration_s``; ``sensed`` has ``q`` (n,), ``base_pos`` (3,), ``base_rot`` (3, 3),
``com_xy`` (2,), ``contacts`` (4, 3) world, ``touch`` (4,) bool, ``force`` (4,) or None (hosts may compute them
lazily: ``q`` is read every tick, the rest only on solve ticks).

Every ``n = round(1 / (solve_rate_hz · period_s))`` ticks the CoM-modulated IIK (:class:`CoMModulatedIIK`) solves for
the plan one solve period ahead, :math:`t_{plan} + T`, from the seed (:mod:`.seed_source`): stance set
(:class:`StanceSource`, then :class:`.LiftLookahead` with modulation), the plan mapped into the IIK's own world by
the drift measured at the stance contacts (:class:`.WorldDrift`), stance targets (:mod:`.stance_hold`,
:class:`.Press`, :class:`.GroundSeek`), support polygon (:mod:`.support_source`), CoM target offsets
(:class:`.CoMRateLimit`, :class:`.CoMIntegral`), orientation tasks (:class:`.OrientationHolds`). Between solves the
command is interpolated, :math:`q_{des} = (1-a) q_{k-1} + a q_k`, :math:`a = \\min(1, i/n)`, and
:class:`.ServoSagIntegral` adds its integral. A tick runs at most ``iterations_per_update`` IIK iterations
(real-time budget); a longer solve goes on in the next ticks and, when it ends, is interpolated to from there (the
same iterate as in one go, one or two ticks later). The plan clock advances by ``period_s`` per tick unless the
:class:`.CoMGate` holds it. Deterministic: nothing depends on the wall clock (solve times are only measured).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Optional

import numpy as np

from atlas_crawl_kinematics.com_modulation import CoMModulatedIIK, ModulationResult
from atlas_crawl_kinematics.iik import IIKParams
from atlas_crawl_kinematics.stance import StanceSource

from ..parameters import ParamValues, load_parameter_file
from .com_gate import CoMGate
from .com_integral import CoMIntegral
from .com_rate_limit import CoMRateLimit
from .errors import TrackerError
from .ground_seek import GroundSeek
from .lift_lookahead import LiftLookahead
from .orientation_holds import OrientationHolds
from .press import Press
from .seed_source import seed_source as make_seed_source
from .servo_sag import ServoSagIntegral, sag_mask
from .stance_hold import stance_hold as make_stance_hold
from .support_source import support_source as make_support_source
from .world_drift import WorldDrift

__all__ = ["CrawlTracker", "SolveRecord", "PARAMETER_FILE", "parameter_set"]

PARAMETER_FILE = "crawl_tracker_parameters.yaml"


_PSET = None


def parameter_set():
    """The tracker's gpl parameter set (parsed once per process: a YAML parse costs ~10 ms, and a new tracker is
    built inside the controller's update when a Cartesian motion starts)."""
    global _PSET
    if _PSET is None:
        _PSET = load_parameter_file(PARAMETER_FILE)
    return _PSET


@dataclass
class SolveRecord:
    """What one solve saw and produced (for the host's statistics)."""
    result: ModulationResult
    cur: object              #: plan sample at the plan clock
    nxt: object              #: plan sample one solve period ahead (= cur while the gate holds)
    used: np.ndarray         #: stance set handed to the IIK
    touch: np.ndarray
    solve_time_s: float      #: wall time of the CoM target + IIK (measured only)


class CrawlTracker:
    """See the module docstring. Build with :meth:`from_params` (gpl parameters) or from policy objects."""

    def __init__(self, model, home_q, period_s: float, *, solve_rate_hz: float = 50.0, com_modulation: bool = False,
                 root: str = "floating", seed=None, stance_source: str = "planned", stance_hold=None,
                 support=None, orientation_holds: Optional[OrientationHolds] = None, lookahead=None,
                 com_rate_limit=None, com_integral=None, gate=None, servo_sag=None, press=None, seek=None,
                 iik_params: Optional[IIKParams] = None, weights: Optional[dict] = None, margin_m: float = 0.07,
                 iterations_per_update: int = 0, world_drift: Optional[WorldDrift] = None):
        if not (math.isfinite(period_s) and period_s > 0):
            raise TrackerError("period_s must be finite and > 0")
        if not (math.isfinite(solve_rate_hz) and solve_rate_hz > 0):
            raise TrackerError("solve_rate_hz must be finite and > 0")
        from atlas_crawl_kinematics.com_modulation import ROOT_CHOICES
        if root not in ROOT_CHOICES:
            raise TrackerError(f"root must be one of {ROOT_CHOICES}")
        from atlas_crawl_kinematics.stance import STANCE_SOURCES
        if stance_source not in STANCE_SOURCES:
            raise TrackerError(f"stance must be one of {STANCE_SOURCES}")
        self.model = model
        self.period_s = float(period_s)
        self.n_per_solve = max(1, int(round(1.0 / (solve_rate_hz * self.period_s))))
        self.solve_period_s = self.n_per_solve * self.period_s
        self.com_modulation = bool(com_modulation)
        self.root = root
        self.stance_source_name = stance_source
        self.seed = seed or make_seed_source("internal")
        self.stance_hold = stance_hold or make_stance_hold("planned")
        self.support = support or make_support_source("sensed")
        self.orientation = orientation_holds or OrientationHolds(("l_lleg", "r_lleg", "utorso"))
        self.orientation.check(model)
        self.lookahead = lookahead or LiftLookahead(0.6)
        self.com_rate_limit = com_rate_limit or CoMRateLimit(0.3)
        self.com_integral = com_integral or CoMIntegral(0.0)
        self.gate = gate or CoMGate(0.0)
        self.servo_sag = servo_sag or ServoSagIntegral(2.0)
        self.press = press or Press(0.0)
        self.seek = seek or GroundSeek(0.0)
        self.world_drift = world_drift or WorldDrift(False)
        w = {"stance": 10.0, "swing": 1.0, "pelvis": 0.3, "com": 10.0, **(weights or {})}
        self.ik = CoMModulatedIIK(model, iik_params or IIKParams.improved(max_iterations=30, convergence_m=0.002),
                                  home_q=home_q, stance_weight=w["stance"], swing_weight=w["swing"],
                                  pelvis_weight=w["pelvis"], com_weight=w["com"], margin_m=margin_m)
        if not (isinstance(iterations_per_update, int) and iterations_per_update >= 0):
            raise TrackerError("iterations_per_update must be an int >= 0")
        self.iterations_per_update = iterations_per_update
        self.end_s: Optional[float] = None   #: stop the plan clock here (default: the plan's duration)
        self._job = None                      #: the running solve (a generator), if any
        self.started = False

    @classmethod
    def from_params(cls, model, home_q, period_s: float, params=None) -> "CrawlTracker":
        """Build from the gpl parameters (``config/crawl_tracker_parameters.yaml``; dict of dotted names or
        ParamValues, validated: raises ParameterError with the reason)."""
        pset = parameter_set()
        p = pset.values(params.as_dict() if isinstance(params, ParamValues) else (params or {}))
        from atlas_crawl_kinematics import iik_fast
        if p["iik.backend"] == "numba" and not iik_fast.HAVE_NUMBA:
            raise TrackerError("iik.backend 'numba' needs numba, which is not installed (use 'numpy')")
        return cls(model, home_q, period_s, solve_rate_hz=p["solve_rate_hz"], com_modulation=p["com_modulation"],
                   root=p["root"], seed=make_seed_source(p["seed"]), stance_source=p["stance_source"],
                   stance_hold=make_stance_hold(p["stance_hold"]),
                   support=make_support_source(p["support_source"]),
                   orientation_holds=OrientationHolds(p["orientation_hold_frames"], p["orientation_tilt_frames"]),
                   lookahead=LiftLookahead(p["com.lookahead_s"]),
                   com_rate_limit=CoMRateLimit(p["com.rate_limit_m_per_s"]),
                   com_integral=CoMIntegral(p["com.ki_per_s"], p["com.integral_limit_m"]),
                   gate=CoMGate(p["gate.margin_m"], p["gate.timeout_s"]),
                   servo_sag=ServoSagIntegral(p["sag.ki_per_s"], p["sag.limit_rad"],
                                              sag_mask(model, p["sag.joints"])), press=Press(p["press_m"]),
                   seek=GroundSeek(p["seek.speed_m_per_s"], p["seek.max_m"]),
                   iik_params=IIKParams.improved(max_iterations=p["iik.max_iterations"],
                                                 convergence_m=p["iik.convergence_m"], backend=p["iik.backend"],
                                                 no_progress_m=p["iik.no_progress_m"]),
                   weights={k: p["weights." + k] for k in ("stance", "swing", "pelvis", "com")},
                   margin_m=p["com.margin_m"], iterations_per_update=p["iik.iterations_per_update"],
                   world_drift=WorldDrift(p["world_drift.enabled"], p["world_drift.time_constant_s"],
                                          p["world_drift.max_correction_m"]))

    # ------------------------------------------------------------------------------------------------ life cycle
    def start(self, plan, sensed, q_command: np.ndarray) -> None:
        """Begin ``plan`` at plan time 0 from the settled ``sensed`` state; ``q_command`` = the servos' targets now."""
        traj = None
        if self.stance_source_name == "velocity":
            _ts, traj, _st = plan.trajectory(0.01)
        self.stance_src = StanceSource(self.stance_source_name, traj=traj, dt_s=0.01)
        q_in = sensed.q
        self.servo_sag.start(q_command, q_in)
        self.q_prev = self.q_next = self.seed.start(sensed, q_command)
        self.t_plan = 0.0
        self.tick = 0
        self.hold = False
        self.since_solve = 0
        self.cur = plan.sample(0.0)
        self.orientation.start(self.model, q_in, sensed.base_rot, self.cur.heading_rad)
        self.world_drift.start()
        self.last: Optional[SolveRecord] = None
        self.solved = False
        self.solving = False
        self._job = None
        self.started = True

    def end_time(self, plan) -> float:
        return plan.duration_s if self.end_s is None else min(plan.duration_s, self.end_s)

    def finished(self, plan) -> bool:
        """True once the plan clock has passed the end of ``plan`` and no solve is still running."""
        return self.t_plan > self.end_time(plan) + 1e-9 and self._job is None

    def restart_clock(self) -> None:
        """Plan time back to 0 for a new plan (the controller core's next Cartesian segment); integrators, seed and
        holds keep their state. The next tick solves."""
        self.t_plan = 0.0
        self.tick = 0

    # ------------------------------------------------------------------------------------------------ tick
    def step(self, t: float, plan, sensed, dt: Optional[float] = None) -> np.ndarray:
        """One control tick at host time ``t`` (recorded only) of length ``dt`` (default ``period_s``): returns the
        joint command (n,)."""
        dt = self.period_s if dt is None else dt
        if not self.started:
            raise TrackerError("step() before start()")
        T = self.end_time(plan)
        self.solved = False
        self.solving = False
        if self.tick % self.n_per_solve == 0:
            while self._job is not None:   # overdue (a budget too small for the solve period): end it now
                self._advance()
            self._job = self._solve(plan, sensed, T, self.iterations_per_update)
            self._advance()
        elif self._job is not None:
            self._advance()
        self.since_solve += 1
        a = min(1.0, self.since_solve / self.n_per_solve)
        q_des = (1 - a) * self.q_prev + a * self.q_next
        q_cmd = self.servo_sag.command(q_des, sensed.q, dt)
        self.tick += 1
        if not self.hold:
            self.t_plan += dt
        return q_cmd

    def _advance(self) -> None:
        """Run the pending solve for its next slice of IIK iterations."""
        self.solving = True
        try:
            next(self._job)
        except StopIteration:
            self._job = None
        except BaseException:
            self._job = None
            raise

    def _solve(self, plan, sensed, T: float, budget: int):
        """One solve as a generator (:meth:`CoMModulatedIIK.solve_steps`): the tick that starts it samples the plan,
        the gate and the sensed state; the tick that ends it hands the result to the interpolation."""
        Ts = self.solve_period_s
        sites = sensed.contacts
        touch, force = sensed.touch, sensed.force
        tg = self.t_plan
        self.cur = cur = plan.sample(tg)
        self.hold = self.gate.holds(plan, tg, T, Ts, cur, sensed)
        q_s, bp, bR = self.seed.seed(sensed)
        nxt = cur if self.hold else plan.sample(min(T, tg + Ts))
        used = self.stance_src(tg, nxt.stance, touch, force)
        if self.com_modulation:
            used = self.lookahead(plan, tg, T, Ts, used)
        self.world_drift.observe(sites, touch, cur.stance, Ts)
        self.world_drift.set_bound((getattr(nxt, "extra", None) or {}).get("drift_correction_max_m"))
        targets = self.world_drift.targets(nxt.targets, cur.stance, nxt.stance)
        targets = self.stance_hold.apply(targets, cur, nxt, sites)
        targets = self.press.apply(targets, nxt)
        targets = self.seek.apply(targets, cur, nxt, touch, Ts)
        pelvis_t = self.world_drift.points_to_iik(getattr(nxt, "pelvis_target", None))
        com_des = self.world_drift.plan_com_to_iik(getattr(nxt, "com_xy", None))
        sup = self.support.points(self.world_drift.points_to_iik(sites), targets)
        t_solve = time.perf_counter()
        dt_solve = 0.0
        com_xy = np.array(self.world_drift.to_iik(np.asarray(sensed.com_xy, float)[:2]), dtype=float)
        ori = self.orientation.targets(self.world_drift.heading(nxt.heading_rad),
                                       (getattr(nxt, "extra", None) or {}).get("tilt_R"))
        off = self.com_integral.offset()
        if self.com_modulation and self.com_rate_limit.rate_m_s > 0 and used.sum() >= 3:
            c_goal = self.ik.com_target(com_xy if com_des is None else com_des, sup[used])[0]
            off = off + self.com_rate_limit.offset(c_goal, com_xy, Ts)
        steps = self.ik.solve_steps(q_s, bp, bR, targets, used, com_desired_xy=com_des, pelvis_target=pelvis_t,
                                    root=self.root, modulate=self.com_modulation, support_xy=sup, orientations=ori,
                                    com_offset_xy=off if np.any(off) else None, budget=budget)
        while True:
            try:
                next(steps)
            except StopIteration as stop:
                res = stop.value
                break
            dt_solve += time.perf_counter() - t_solve
            yield
            t_solve = time.perf_counter()
        dt_solve += time.perf_counter() - t_solve
        self.com_integral.update(res.com_target_xy, com_xy, Ts)
        self.q_prev = self.q_next
        self.q_next = res.q
        self.seed.solved(res.q, res.base_pos, res.base_rot)
        self.since_solve = 0
        self.last = SolveRecord(res, cur, nxt, used, touch, dt_solve)
        self.solved = True
