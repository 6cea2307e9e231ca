"""The crawl controller core: the object the ros2_control plugin wraps and the MuJoCo node hosts (DESIGN §2, §4).

Life cycle (mirrors ``controller_interface::ControllerInterface``)::

    core = CrawlControllerCore()
    core.configure(params)            # on_configure: parameters (validated), limits from the URDF
    core.activate(q_measured)         # on_activate: hold the measured pose (clamped into the limits)
    loop at update_rate_hz:
        cmd = core.update(time_s, period_s, position, velocity, effort, pelvis_pose)   # read → update → write
    core.set_reference(ref)           # from the reference topic (returns (accepted, reason))
    core.status()                     # for the status publisher
    core.deactivate()                 # on_deactivate: stop tracking, keep the last safe pose

``update`` takes and returns flat numpy arrays in the team joint order (``robot_info.JOINT_NAMES``): position,
velocity, effort (28,) each, ``pelvis_pose`` (7,) = ``[x, y, z, qx, qy, qz, qw]`` (world frame, ROS quaternion
order), and returns the joint position command (28,) (a view of an internal buffer — copy it if you keep it).  That
is exactly what a C++ plugin copies from its state interfaces and back to its command interfaces.

Guarantees (tested in test_controller_core.py):

* Every command is finite and inside ``[lower + limit_margin_rad, upper − limit_margin_rad]`` (final clamp; NaN
  guard: a non-finite intermediate result is replaced by the last safe command), and no joint's command changes by
  more than ``max_command_velocity_radps × period`` per update (rate limiter).
* Bad references (NaN/inf, wrong sizes, unknown/duplicate joints, targets outside the limits by more than
  ``limit_tolerance_rad``, non-positive or too long durations, unavailable modes, inactive controller) are
  rejected with a reason; the previous reference continues untouched.
* Non-finite measured state: the controller keeps its last safe command and reports the reason.
* Ownership: while one sender's motion runs (until its end plus ``reference_owner_lease_s``), references from
  any other sender (``Reference.sender``; "" is a sender too) are refused with a reason naming the owner.
* A rejected reference never touches the status of the running motion: :meth:`set_reference` returns the
  rejection, and :attr:`last_rejection` holds it as a :class:`Status` under the rejected reference's own
  ``sequence_id`` and ``sender`` (hosts publish it once).  ``rejected_references`` counts them.
* Watchdog: a reference is "alive" until ``duration_s + watchdog_timeout_s`` after it was received; if nothing
  new (a new reference or a ``MODE_HOLD`` keep-alive) arrives in time the controller enters ``WATCHDOG_HOLD``,
  freezing the last safe command until the next accepted reference.
* Queueing: a reference with ``queue`` set starts when the running motion is ``reached`` (at once when none runs),
  so a sender that sends the next step shortly before the current one ends loses no round trip between them. A
  later queued reference replaces an earlier one; a reference without ``queue`` preempts the running motion and
  drops the queued one; a ``MODE_HOLD`` keeps the running motion (keep-alive) and drops the queued one (a sender
  whose goal ends with a step queued holds with it).

Reference modes (atlas_crawl_msgs/ControllerReference):

* ``MODE_KEYFRAME`` — joint targets ``q*`` (all 28 or a named subset; the rest keep their command) reached after
  ``T`` s with SmoothMove's synchronised minimum-jerk profile (thesis §4.1; SmoothMove stretches ``T`` if a joint
  would exceed its velocity limit).  ``reached`` once the profile ended and the measured joints are within
  ``reached_tolerance_rad`` of their targets, or ``settle_timeout_s`` after the end (a position servo under load
  may never get inside the tolerance; the sequencer must not wait forever). Default 0: reached when the profile
  ends, the open-loop timing the key-frame scripts were tuned with.
* ``MODE_CARTESIAN`` — contact set-points + stance + ``T``: accepted only when a Cartesian solver is plugged in
  (:meth:`CrawlControllerCore.set_cartesian_solver`; the IIK / CoM-modulated IIK of atlas_crawl_kinematics); the
  solver runs at ``iik_rate_hz`` on a minimum-jerk interpolation of the set-points and the joint command is
  interpolated linearly between solves.  Without a solver the reference is rejected with that reason.
* ``MODE_HOLD`` — hold the current command (keep-alive for the watchdog).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Callable, Optional, Sequence, Tuple

import numpy as np

from .parameters import ParameterError, ParamValues, load_parameter_file
from .robot_info import JOINT_INDEX, JOINT_NAMES, joint_limits
from .smooth_move import min_jerk

__all__ = [
    "Mode",
    "State",
    "Reference",
    "Status",
    "CrawlControllerCore",
    "PARAMETER_FILE",
    "parameter_set",
]

PARAMETER_FILE = "crawl_controller_parameters.yaml"
MAX_SWING_LIFT_M = 0.3          # ControllerReference.swing_lift_m bound
N = len(JOINT_NAMES)


def parameter_set():
    return load_parameter_file(PARAMETER_FILE)


class Mode(IntEnum):
    """Same values as atlas_crawl_msgs/ControllerReference MODE_*."""
    HOLD = 0
    KEYFRAME = 1
    CARTESIAN = 2


class State(IntEnum):
    """Same values as atlas_crawl_msgs/ControllerStatus STATE_*."""
    INACTIVE = 0
    HOLDING = 1
    TRACKING = 2
    WATCHDOG_HOLD = 3
    ERROR = 4


def _field(ref, name: str, default, dtype) -> np.ndarray:
    """A per-contact field of ``ref`` as an array; absent or empty: 4 x ``default`` (a shape error is left to the
    caller's check)."""
    v = getattr(ref, name, None)
    if v is None or len(v) == 0:
        return np.full(4, default, dtype)
    try:
        return np.asarray(list(v), dtype)
    except (TypeError, ValueError):
        return np.full(0, default, dtype)


def _optional_float(ref, name: str):
    """An optional scalar field of ``ref``: None when unset, NaN when not a number."""
    v = getattr(ref, name, None)
    if v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


@dataclass
class Reference:
    mode: int
    sequence_id: int = 0
    joint_names: Sequence[str] = ()
    joint_positions_rad: Sequence[float] = ()
    duration_s: float = 0.0
    contact_targets: Optional[np.ndarray] = None   # (4, 3) world frame, LW RW LK RK
    stance: Sequence[bool] = (True, True, True, True)
    com_modulation: bool = False
    sender: str = ""                                # who sent it ("" = anonymous); see "Ownership" above
    queue: bool = False                             # start when the running motion is reached; see "Queueing"
    swing_lift_m: Sequence[float] = (0.0, 0.0, 0.0, 0.0)   # Cartesian: swing-arc apex per non-stance contact
    com_support: Sequence[bool] = (False, False, False, False)  # Cartesian: CoM planned in this support (all
    #                                                             false = the stance set)
    heading_rad: Optional[float] = None             # Cartesian: body heading at the end (None = the pattern's)
    drift_correction_max_m: Optional[float] = None  # Cartesian: world-drift shift bound asked (None = the tracker's)


@dataclass
class Status:
    sequence_id: int = 0
    sender: str = ""
    accepted: bool = True
    reached: bool = True
    reason: str = ""
    task_error_m: float = 0.0
    iterations: int = 0
    stability_margin_m: float = 0.0
    state: int = State.INACTIVE
    tracking_error_rad: float = 0.0
    duration_s: float = 0.0           # effective duration (after SmoothMove stretching)
    nonfinite_inputs: int = 0         # count of updates with non-finite state
    clamped_commands: int = 0         # count of updates where the final clamp/rate limit changed the command
    extra: dict = field(default_factory=dict)


# Solver signature for Cartesian references: (q_seed (28,), pelvis_pose (7,), targets (4,3) world, stance (4,),
# com_modulation) -> (q (28,), iterations, task_error_m, stability_margin_m)
CartesianSolver = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool], Tuple[np.ndarray, int, float, float]]
# Contact-point forward kinematics for the Cartesian interpolation start: (q, pelvis_pose) -> (4, 3) world
ContactFK = Callable[[np.ndarray, np.ndarray], np.ndarray]


class CrawlControllerCore:
    """Joint-position controller core for the crawling Atlas (see the module docstring for the contract)."""

    def __init__(self):
        lo, hi, vel, _ = joint_limits()
        self.urdf_lower = np.array(lo, float)
        self.urdf_upper = np.array(hi, float)
        self.urdf_velocity = np.array(vel, float)
        self.params: Optional[ParamValues] = None
        self._pset = parameter_set()
        self._solver: Optional[CartesianSolver] = None
        self._contact_fk: Optional[ContactFK] = None
        self._law = None                 # CartesianLaw: the crawl tracker MODE_CARTESIAN runs (cartesian.py)
        self._last_pose: Optional[np.ndarray] = None
        self._cmd = np.zeros(N)          # output buffer (returned by update)
        self._safe = np.zeros(N)         # last safe command
        self._state = State.INACTIVE
        self._status = Status(state=State.INACTIVE, reached=False, reason="not configured")
        self._configured = False
        self._owner: Optional[str] = None
        self._owner_until = -math.inf
        self.rejected_references = 0
        self.last_rejection: Optional[Status] = None
        self._reset_motion()

    # ------------------------------------------------------------------------------------------------ lifecycle
    def configure(self, params=None) -> None:
        """Validate and store parameters (dict of dotted names / nested dicts, ParamValues, or None = defaults).

        Raises ParameterError with the reason; nothing changes then.
        """
        values = self._validate_params(params)
        self.params = values
        self._apply_limits()
        self._configured = True
        self._state = State.INACTIVE
        self._status = Status(state=State.INACTIVE, reached=False, reason="configured, not active")

    def _validate_params(self, params) -> ParamValues:
        if isinstance(params, ParamValues):
            values = self._pset.values(params.as_dict())
        else:
            values = self._pset.values(params or {})
        if values["iik_rate_hz"] > values["update_rate_hz"]:
            raise ParameterError(f"iik_rate_hz ({values['iik_rate_hz']}) must be <= update_rate_hz "
                                 f"({values['update_rate_hz']})")
        return values

    def set_params(self, params) -> Optional[str]:
        """Runtime parameter change: returns None when applied, else the reason (nothing changed)."""
        try:
            values = self._validate_params(params)
        except ParameterError as e:
            return str(e)
        self.params = values
        self._apply_limits()
        return None

    def _apply_limits(self):
        m = self.params["limit_margin_rad"]
        self.lower = self.urdf_lower + m
        self.upper = self.urdf_upper - m
        bad = self.lower > self.upper
        mid = 0.5 * (self.urdf_lower + self.urdf_upper)
        self.lower[bad] = mid[bad]
        self.upper[bad] = mid[bad]

    def activate(self, position) -> np.ndarray:
        """Start holding the measured pose (clamped into the limits; non-finite joints → range midpoint)."""
        if not self._configured:
            raise RuntimeError("activate() before configure()")
        q = np.asarray(position, float).reshape(-1)
        if q.shape != (N,):
            raise ValueError(f"position must have shape ({N},), got {q.shape}")
        mid = 0.5 * (self.lower + self.upper)
        q = np.where(np.isfinite(q), q, mid)
        self._safe[:] = np.clip(q, self.lower, self.upper)
        self._cmd[:] = self._safe
        self._reset_motion()
        self._hold_target = self._safe.copy()
        self._state = State.HOLDING
        self._last_time = None
        self._owner, self._owner_until = None, -math.inf
        self._status = Status(state=State.HOLDING, reached=True)
        return self._cmd

    def deactivate(self) -> None:
        self._reset_motion()
        self._state = State.INACTIVE
        self._status.state = State.INACTIVE
        self._status.reason = "deactivated"

    @property
    def state(self) -> State:
        return self._state

    @property
    def active(self) -> bool:
        return self._state != State.INACTIVE

    def last_command(self) -> np.ndarray:
        return self._safe.copy()

    def set_cartesian_solver(self, solver: Optional[CartesianSolver], contact_fk: Optional[ContactFK],
                             law=None) -> None:
        """Plug in MODE_CARTESIAN: ``law`` (:class:`~.cartesian.CartesianLaw`, what the hosts plug in via
        ``set_cartesian_solver(*cartesian.make_cartesian_solver())``) runs the crawl tracker and validates the
        references' workspace and stance. Without a law, the bare ``solver`` is re-solved at ``iik_rate_hz`` on the
        interpolated set-points (a test double for the reference plumbing, not the crawl law)."""
        self._solver = solver
        self._contact_fk = contact_fk
        self._law = law
        self._cart = None

    # ------------------------------------------------------------------------------------------------ references
    def _reset_motion(self):
        self._mode = Mode.HOLD
        self._q0 = None
        self._q1 = None
        self._t_ref = 0.0          # time since the reference started (advanced by period), capped at duration
        self._t_elapsed = 0.0      # same, not capped
        self._duration = 0.0
        self._pending: Optional[Reference] = None
        self._queued: Optional[Reference] = None     # starts when the running motion is reached
        self._ref_received_time: Optional[float] = None
        self._alive_until: Optional[float] = None
        self._done_time: Optional[float] = None
        self._hold_target = None
        self._cart = None
        self._tracker = None
        self._expected_stance = np.ones(4, bool)

    @property
    def expected_stance(self) -> np.ndarray:
        """(4,) bool, LW RW LK RK: the stance of the motion reference being executed (the gait phase's expected
        contacts; all four when holding) — the state estimator's contact prior."""
        return self._expected_stance.copy()

    def set_reference(self, ref: Reference) -> Tuple[bool, str]:
        """Validate and queue a reference; it starts at the next update. Returns (accepted, reason)."""
        try:
            ok, reason, prepared = self._check_reference(ref)
        except Exception as e:  # malformed object: a rejection, never an exception into the host's callback
            ok, reason, prepared = False, f"malformed reference ({type(e).__name__}: {e})", None
        if ok and self._owner is not None and prepared.sender != self._owner and (
                (self._state == State.TRACKING and not self._status.reached) or (self._last_time if self._last_time is not None else -math.inf)
                < self._owner_until):
            ok, reason = False, (f"refused: the controller is owned by '{self._owner or '(anonymous)'}' while its "
                                 f"motion runs (+{self.params['reference_owner_lease_s']} s); reference from "
                                 f"'{prepared.sender or '(anonymous)'}'")
        if not ok:
            # Reported under the rejected reference's own id and sender; the running motion's status is untouched.
            self.rejected_references += 1
            try:
                seq = int(getattr(ref, "sequence_id", 0) or 0)
            except (TypeError, ValueError, OverflowError):
                seq = 0
            self.last_rejection = Status(sequence_id=seq, sender=str(getattr(ref, "sender", "") or ""),
                                         accepted=False, reached=False, reason=reason, state=self._state)
            return False, reason
        if prepared.mode == Mode.HOLD and self._pending is not None and self._pending.mode != Mode.HOLD:
            self._queued = None
            return True, ""   # a keep-alive never displaces a motion about to start (it refreshes the watchdog)
        if prepared.mode != Mode.HOLD and prepared.queue and self._motion_running():
            self._queued = prepared
            return True, ""
        self._queued = None
        self._pending = prepared
        return True, ""

    def _motion_running(self) -> bool:
        """A motion reference waits to start or runs and is not reached yet."""
        if self._pending is not None and self._pending.mode != Mode.HOLD:
            return True
        return self._state == State.TRACKING and self._mode != Mode.HOLD and not self._status.reached

    def _check_reference(self, ref):
        if not self._configured or self._state == State.INACTIVE:
            return False, "controller inactive", None
        try:
            mode = Mode(int(ref.mode))
        except (ValueError, TypeError):
            return False, f"unknown reference mode {getattr(ref, 'mode', None)!r}", None
        seq = int(ref.sequence_id)
        sender = str(getattr(ref, "sender", "") or "")
        if mode == Mode.HOLD:
            return True, "", Reference(mode=Mode.HOLD, sequence_id=seq, sender=sender)
        T = float(ref.duration_s)
        if not math.isfinite(T) or T <= 0.0:
            return False, f"duration_s must be finite and > 0 (got {ref.duration_s})", None
        if T > self.params["max_duration_s"]:
            return False, f"duration_s {T} exceeds max_duration_s {self.params['max_duration_s']}", None
        if mode == Mode.KEYFRAME:
            names = list(ref.joint_names)
            vals = np.asarray(list(ref.joint_positions_rad), float).reshape(-1)
            if len(names) == 0 and vals.size == N:
                names = list(JOINT_NAMES)
            if len(names) != vals.size or vals.size == 0:
                return False, (f"joint_names ({len(names)}) and joint_positions_rad ({vals.size}) must be "
                               "non-empty and of equal length"), None
            if len(set(names)) != len(names):
                return False, "duplicate joint names in the reference", None
            unknown = [n for n in names if n not in JOINT_INDEX]
            if unknown:
                return False, f"unknown joints {unknown}", None
            if not np.all(np.isfinite(vals)):
                bad = [names[i] for i in np.flatnonzero(~np.isfinite(vals))]
                return False, f"non-finite joint targets for {bad}", None
            idx = np.array([JOINT_INDEX[n] for n in names])
            tol = self.params["limit_tolerance_rad"]
            lo, hi = self.urdf_lower[idx], self.urdf_upper[idx]
            out = (vals < lo - tol) | (vals > hi + tol)
            if np.any(out):
                k = int(np.flatnonzero(out)[0])
                return False, (f"target {vals[k]:.4f} rad for {names[k]} outside its limits "
                               f"[{lo[k]:.4f}, {hi[k]:.4f}] by more than {tol} rad"), None
            stance = np.asarray(list(getattr(ref, "stance", (True,) * 4)), bool)
            if stance.shape != (4,):
                return False, "stance must have 4 entries", None
            return True, "", Reference(mode=Mode.KEYFRAME, sequence_id=seq, joint_names=idx,
                                       joint_positions_rad=np.clip(vals, self.lower[idx], self.upper[idx]),
                                       duration_s=T, sender=sender, stance=stance,
                                       queue=bool(getattr(ref, "queue", False)))
        # Cartesian
        if self._solver is None or self._contact_fk is None:
            return False, ("Cartesian references need the IIK solver, which is not plugged into this controller "
                           "(CrawlControllerCore.set_cartesian_solver)"), None
        tg = np.asarray(ref.contact_targets, float) if ref.contact_targets is not None else np.zeros(0)
        if tg.size != 12:
            return False, f"contact_targets must hold 4 points (LW RW LK RK), got {tg.size // 3}", None
        tg = tg.reshape(4, 3)
        if not np.all(np.isfinite(tg)):
            return False, "non-finite contact targets", None
        stance = np.asarray(list(ref.stance), bool)
        if stance.shape != (4,):
            return False, "stance must have 4 entries", None
        lift = _field(ref, "swing_lift_m", 0.0, float)
        if lift.shape != (4,) or not np.all(np.isfinite(lift)) or np.any(lift < 0) or np.any(lift > MAX_SWING_LIFT_M):
            return False, (f"swing_lift_m must be 4 finite values in [0, {MAX_SWING_LIFT_M}] m, got "
                           f"{lift.tolist()}"), None
        csup = _field(ref, "com_support", False, bool)
        if csup.shape != (4,):
            return False, "com_support must have 4 entries", None
        if csup.any() and np.any(csup & ~stance):
            return False, "com_support must be a subset of the stance set", None
        heading = _optional_float(ref, "heading_rad")
        if heading is not None and not math.isfinite(heading):
            return False, f"heading_rad must be finite (or unset), got {getattr(ref, 'heading_rad', None)!r}", None
        bound = _optional_float(ref, "drift_correction_max_m")
        if bound is not None and not (math.isfinite(bound) and bound >= 0):
            return False, (f"drift_correction_max_m must be finite and >= 0 (or unset), got "
                           f"{getattr(ref, 'drift_correction_max_m', None)!r}"), None
        if self._law is not None:
            why = self._law.check(tg, stance, self._last_pose)
            if not why and csup.any():
                why = self._law.check(tg, csup, self._last_pose)
                why = f"com_support: {why}" if why else ""
            if why:
                return False, why, None
        return True, "", Reference(mode=Mode.CARTESIAN, sequence_id=seq, contact_targets=tg, stance=stance,
                                   duration_s=T, com_modulation=bool(ref.com_modulation), sender=sender,
                                   queue=bool(getattr(ref, "queue", False)), swing_lift_m=lift, com_support=csup,
                                   heading_rad=heading, drift_correction_max_m=bound)

    def _start(self, ref: Reference, time_s: float, position: np.ndarray, pelvis_pose: np.ndarray):
        self._ref_received_time = time_s
        st = self._status
        if ref.mode == Mode.HOLD:
            # keep-alive: status keeps describing the last motion reference (its sequence id and reached flag)
            # keep-alive: keep the running motion if any, else hold
            self._alive_until = time_s + self.params["watchdog_timeout_s"] + (
                self._duration - self._t_ref if self._mode != Mode.HOLD else 0.0)
            if self._state == State.WATCHDOG_HOLD:
                self._state = State.HOLDING
            return
        st.sequence_id = ref.sequence_id
        st.sender = ref.sender
        self._expected_stance = np.array([bool(v) for v in ref.stance], bool)
        st.accepted = True
        st.reason = ""
        st.iterations = 0
        st.task_error_m = 0.0
        self._mode = Mode(ref.mode)
        self._q0 = self._safe.copy()
        self._t_ref = 0.0
        self._t_elapsed = 0.0
        self._done_time = None
        if ref.mode == Mode.KEYFRAME:
            self._cart = None
            q1 = self._safe.copy()
            q1[ref.joint_names] = ref.joint_positions_rad
            self._q1 = q1
            v = np.maximum(self.urdf_velocity * self.params["velocity_limit_scale"], 1e-6)
            t_min = float(np.max(1.875 * np.abs(q1 - self._q0) / v))
            self._duration = max(ref.duration_s, t_min)
        elif self._law is not None:
            self._duration = ref.duration_s
            self._start_tracked(ref, time_s, position, pelvis_pose)
        else:
            self._duration = ref.duration_s
            p0 = np.asarray(self._contact_fk(self._safe.copy(), pelvis_pose), float).reshape(4, 3)
            self._cart = {"p0": p0, "p1": ref.contact_targets, "stance": ref.stance, "com": ref.com_modulation,
                          "q_prev": self._safe.copy(), "q_next": self._safe.copy(), "t_solve": -1.0,
                          "solve_period": 1.0 / self.params["iik_rate_hz"]}
            self._q1 = self._safe.copy()
        st.duration_s = self._duration
        st.reached = False
        self._alive_until = time_s + self._duration + self.params["watchdog_timeout_s"]
        self._owner = ref.sender
        self._owner_until = time_s + self._duration + self.params["reference_owner_lease_s"]
        self._state = State.TRACKING

    # ------------------------------------------------------------------------------------------------ update
    def update(self, time_s: float, period_s: float, position, velocity=None, effort=None,
               pelvis_pose=None) -> np.ndarray:
        """One control period: returns the joint position command (28,), always finite and within limits."""
        if not self.active:
            return self._cmd  # inactive: keep the last command (never NaN; zeros before first activation)
        q = np.asarray(position, float).reshape(-1)
        pose = np.asarray(pelvis_pose if pelvis_pose is not None else (0, 0, 0, 0, 0, 0, 1), float).reshape(-1)
        dt = float(period_s)
        t = float(time_s)
        st = self._status
        if q.shape != (N,) or not np.all(np.isfinite(q)) or not math.isfinite(t) or not math.isfinite(dt) \
                or dt < 0.0:
            st.nonfinite_inputs += 1
            st.reason = "non-finite or malformed joint state/time: holding the last safe command"
            self._cmd[:] = self._safe
            return self._cmd
        if self._mode == Mode.CARTESIAN and self._state == State.TRACKING and \
                (pose.shape != (7,) or not np.all(np.isfinite(pose))):
            st.nonfinite_inputs += 1
            st.reason = "non-finite or malformed pelvis pose in a Cartesian motion: holding the last safe command"
            self._cmd[:] = self._safe
            return self._cmd
        if self._last_time is not None and t < self._last_time:
            # time jumped backwards (simulator reset): hold the measured pose, drop the motion
            self._last_time = t
            self.activate(q)
            st = self._status
            st.reason = "time went backwards (reset): holding the measured pose"
            return self._cmd
        self._last_time = t
        self._last_pose = pose

        if self._pending is not None:
            ref, self._pending = self._pending, None
            if self._state == State.WATCHDOG_HOLD and ref.mode != Mode.HOLD:
                self._state = State.TRACKING
            self._start(ref, t, q, pose)

        target = self._safe.copy()
        if self._state == State.TRACKING and self._mode != Mode.HOLD:
            self._t_ref = min(self._t_ref + dt, self._duration)
            self._t_elapsed += dt
            tau = self._t_ref / self._duration if self._duration > 0 else 1.0
            if self._mode == Mode.KEYFRAME:
                s = float(min_jerk(tau)[0])
                target = self._q0 + s * (self._q1 - self._q0)
            else:
                target = self._cartesian_step(tau, pose, q, t, dt)
            if self._t_ref >= self._duration - 1e-12:
                if self._done_time is None:
                    self._done_time = t
                moved = np.abs(self._q1 - self._q0) > 0
                err = float(np.max(np.abs(q - self._q1)[moved])) if np.any(moved) else 0.0
                st.tracking_error_rad = err
                if err <= self.params["reached_tolerance_rad"] or \
                        t - self._done_time >= self.params["settle_timeout_s"]:
                    st.reached = True
                if st.reached and self._queued is not None and self._pending is None:
                    self._pending, self._queued = self._queued, None     # starts at the next update
        # watchdog
        if self._alive_until is not None and t > self._alive_until and self._state in (State.TRACKING,
                                                                                       State.HOLDING):
            self._state = State.WATCHDOG_HOLD
            self._mode = Mode.HOLD
            st.reason = (f"watchdog: no reference for {self.params['watchdog_timeout_s']} s after the last one "
                         "ended; holding the last safe pose")
        if self._state == State.WATCHDOG_HOLD:
            target = self._safe.copy()
        self._write(target, dt)
        st.state = self._state
        return self._cmd

    def _start_tracked(self, ref: Reference, time_s: float, position: np.ndarray, pelvis_pose: np.ndarray):
        """A Cartesian reference for the crawl tracker: a :class:`~.cartesian.SegmentPlan` from the previous
        reference's targets (or the contact FK of the current command) to the new ones. Consecutive Cartesian
        references continue one tracker run (seed, integrators and holds keep their state); after anything else
        (key-frame, watchdog hold, a gap) a new run starts from the measured state and the current command."""
        from .cartesian import SegmentPlan
        c = self._cart
        period = 1.0 / self.params["update_rate_hz"]
        cont = (self._tracker is not None and c is not None and c.get("tracked")
                and c.get("t_last", -math.inf) >= time_s - 0.1)
        if cont:
            p0, com0, h0 = c["p1"], c["plan"].c1, c["plan"].h1
        else:
            sensed = self._law.sensed(self._safe.copy(), pelvis_pose)
            p0, com0, h0 = sensed.contacts, sensed.com_xy, None
        plan = SegmentPlan(p0, ref.contact_targets, ref.stance, ref.duration_s, com0,
                           self._law.params["com.plan_margin_m"], swing_lift_m=ref.swing_lift_m,
                           com_support=ref.com_support, heading0_rad=h0, heading1_rad=ref.heading_rad,
                           drift_correction_max_m=ref.drift_correction_max_m)
        if cont:
            self._tracker.restart_clock()
            self._tracker.com_modulation = bool(ref.com_modulation)
        else:
            self._tracker = self._law.new_tracker(period, self._safe.copy(), ref.com_modulation)
            self._tracker.start(plan, self._law.sensed(position, pelvis_pose), self._safe.copy())
        self._cart = {"tracked": True, "plan": plan, "p1": np.asarray(ref.contact_targets, float).copy(),
                      "t_last": time_s}
        self._q1 = self._safe.copy()

    def _tracked_step(self, pose: np.ndarray, q: np.ndarray, t: float, dt: float) -> np.ndarray:
        """One tick of the crawl tracker; the reference's clock is the tracker's plan clock (the CoM gate may hold
        it)."""
        c = self._cart
        c["t_last"] = t
        tr = self._tracker
        try:
            cmd = np.asarray(tr.step(t, c["plan"], self._law.sensed(q, pose), dt), float).reshape(N)
            if not np.all(np.isfinite(cmd)):
                raise FloatingPointError("tracker returned non-finite joints")
        except Exception as e:  # the tracker must never take the controller down
            self._status.reason = f"IIK failed ({type(e).__name__}: {e}); holding"
            return self._safe.copy()
        if tr.solved:
            r = tr.last.result
            self._status.iterations = int(r.iik.iterations)
            self._status.task_error_m = float(r.iik.error_m)
            self._status.stability_margin_m = float(r.planned_margin_m) if math.isfinite(r.planned_margin_m) \
                else 0.0
            self._q1 = np.clip(tr.q_next, self.lower, self.upper)
        self._t_ref = min(tr.t_plan, self._duration)
        return cmd

    def _cartesian_step(self, tau: float, pose: np.ndarray, q=None, t=None, dt=None) -> np.ndarray:
        """The crawl tracker (with a law), else the bare solver at iik_rate_hz on the min-jerk interpolated
        set-points with linear joint interpolation in between."""
        c = self._cart
        if c.get("tracked"):
            return self._tracked_step(pose, q, t, dt)
        t = self._t_elapsed
        due = c["t_solve"] < 0 or t - c["t_solve"] >= c["solve_period"] - 1e-12
        if (due and not c.get("final")) or (tau >= 1.0 and not c.get("final")):
            # look one solve period ahead so the interpolation arrives at the solution when the next solve is due
            t_goal = min(self._duration, t + c["solve_period"])
            s = float(min_jerk(t_goal / max(self._duration, 1e-9))[0])
            x = c["p0"] + s * (c["p1"] - c["p0"])
            c["q_prev"] = self._safe.copy()
            try:
                q_sol, iters, err, margin = self._solver(c["q_next"].copy(), pose, x, c["stance"], c["com"])
                q_sol = np.asarray(q_sol, float).reshape(N)
                if not np.all(np.isfinite(q_sol)):
                    raise FloatingPointError("solver returned non-finite joints")
                c["q_next"] = np.clip(q_sol, self.lower, self.upper)
                self._status.iterations = int(iters)
                self._status.task_error_m = float(err)
                self._status.stability_margin_m = float(margin)
            except Exception as e:  # the solver must never take the controller down
                c["q_next"] = self._safe.copy()
                self._status.reason = f"IIK failed ({type(e).__name__}: {e}); holding"
            c["t_solve"] = t
            c["t_arrive"] = max(t_goal - t, 1e-9)
            c["final"] = t_goal >= self._duration - 1e-12
            self._q1 = c["q_next"].copy()
        a = min(1.0, (t - c["t_solve"] + 1e-12) / c["t_arrive"]) if c["t_solve"] < t else 0.0
        return c["q_prev"] + a * (c["q_next"] - c["q_prev"])

    def _write(self, target: np.ndarray, dt: float):
        """Final guard: NaN → last safe, rate limit, clamp; updates the last safe command."""
        cmd = np.where(np.isfinite(target), target, self._safe)
        vmax = self.params["max_command_velocity_radps"] * max(dt, 0.0)
        # np.minimum/np.maximum: np.clip's result at ~1/5 of its dispatch cost (this runs every tick)
        limited = np.minimum(np.maximum(cmd, self._safe - vmax), self._safe + vmax)
        out = np.minimum(np.maximum(limited, self.lower), self.upper)
        if not np.array_equal(out, cmd):
            self._status.clamped_commands += 1
        self._cmd[:] = out
        self._safe[:] = out

    # ------------------------------------------------------------------------------------------------ status
    def status(self) -> Status:
        s = self._status
        s.state = self._state
        return Status(**{k: (dict(v) if isinstance(v, dict) else v) for k, v in s.__dict__.items()})
