"""gait_sequencer lifecycle node: serves /crawl, /turn, /roll and drives the controller through references.

Wraps :class:`atlas_crawl_controller.gait_sequencer.GaitSequencer` (all decisions live there).

Goal policy (documented choice, issue 5 §4):

* **One motion goal at a time; a second goal is rejected with reason "busy"** while one runs — simple, and it never
  leaves two goals waiting on each other (the team notes' behaviour server hung when concurrent goals concluded
  together).  The acceptance decision and the busy flag are taken under one lock in the goal callback, so two goals
  arriving together cannot both be accepted.
* Bad goals (cycles ≤ 0, NaN, unknown direction/method/loop mode/side, speed_scale out of range, unavailable method)
  are **rejected in the goal callback**.  rclpy's goal callback can only answer ACCEPT/REJECT, so the reason is
  (a) logged, (b) published on ``/gait_sequencer/goal_rejections`` (std_msgs/String, JSON with the goal UUID,
  transient-local so a client that subscribes just before sending still gets it) — ``send_goal`` prints it — and
  (c) available to clients in-process through :func:`validate_goal` (same code).  We do not use
  accept-then-abort for bad goals: a rejected goal never occupies the sequencer.
* Goals are rejected ("inactive") unless the node is active.  Deactivating during a goal aborts it (reason
  given); the controller keeps holding the last reached key-frame.
* Cancel: accepted for the running goal; the sequencer finishes at the next statically stable stance (all four
  limbs down) and the goal ends CANCELED with the result filled in (distance etc. so far).
* Never hangs: the execute callback waits on an Event in ≤ 50 ms slices and gives up on (i) node deactivation or
  shutdown, (ii) no progress of sim time or controller status for ``stall_timeout_wall_s`` (wall clock), and every
  sequencer wait is bounded in sim time.  Action servers use a Reentrant callback group, so a long execute never
  blocks goal/cancel/result requests of other clients.

/cmd_vel and CrawlTo (issue 12 §2; policy):

* ``/cmd_vel`` is ``geometry_msgs/TwistStamped`` by default (``cmd_vel.stamped``; false = ``Twist``): the Jazzy
  convention of ros2_controllers' diff_drive_controller (stamped required since Jazzy) and of Nav2 with
  ``enable_stamped_cmd_vel`` (its default from Kilted on); ``teleop_twist_keyboard`` publishes Twist unless run with
  ``-p stamped:=true``.  Staleness is judged on the sim time of receipt, not the header stamp (teleop stamps wall
  time; the graph runs on sim time).
* A bad command (non-finite, beyond ``cmd_vel.max_*`` or the generator's stride/turn bounds) is refused with the
  reason (``reject_input``, counted) and changes nothing.
* While idle, a fresh non-zero command starts continuous crawling (the sequencer's velocity run, planned on a thread
  of its own); each cycle boundary reads the latest command.  A stale (> ``cmd_vel.timeout_s``) or zero command
  finishes the step in flight, ends in a four-point stance and stops.
* **First come, first served, one motion at a time** (the busy policy of the actions): while an action goal runs,
  /cmd_vel is ignored (throttled warning); while cmd_vel crawling runs, every action goal — CrawlTo included — is
  rejected "busy" with the hint to stop publishing (it stops within one step).  No preemption: a goal never starts
  on a robot caught mid-swing by another source.
* ``/crawl_to`` (atlas_crawl_msgs/action/CrawlTo) runs like the other actions (busy, cancel, reasons); it succeeds
  only within both tolerances at a cycle boundary and upright.

Action servers are created in the constructor and live as long as the node (rclpy action servers are not
lifecycle-managed entities); the lifecycle state gates them.  The reference publisher is a lifecycle publisher.
"""
from __future__ import annotations

import json
import math
import threading
import time
from typing import Optional

import numpy as np
import rclpy
from atlas_crawl_msgs.action import Crawl, CrawlTo, Recover, Roll, Turn
from atlas_crawl_msgs.msg import ControllerReference, ControllerStatus, HeightMap, SupportState
from geometry_msgs.msg import PoseStamped, Twist, TwistStamped
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.lifecycle import LifecycleState, TransitionCallbackReturn
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from std_msgs.msg import String

from .. import gait_sequencer as gs
from .. import velocity_command as vc
from ..controller_core import Mode, Reference
from ..gait_generator import parameter_set as gen_parameter_set
from ..height_map import HeightMapError
from . import topics
from ._common import ReleasingLifecycleNode, declare_validated_parameters, spin_node
from .conversions import (array_to_pose_msg, height_map_from_msg, pose_msg_to_array, reference_to_msg,
                          support_from_msg)

ACTIONS = {gs.CRAWL: (Crawl, topics.CRAWL), gs.TURN: (Turn, topics.TURN), gs.ROLL: (Roll, topics.ROLL),
           gs.RECOVER: (Recover, topics.RECOVER), gs.CRAWL_TO: (CrawlTo, topics.CRAWL_TO)}
REJECTIONS_QOS = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE,
                            durability=DurabilityPolicy.TRANSIENT_LOCAL)

_tls = threading.local()


def validate_goal(kind: str, goal, params, iik_available: bool = False):
    """(MotionGoal, "") or (None, reason) for a Crawl/Turn/Roll goal message (shared with the CLI client)."""
    if kind == gs.CRAWL:
        return gs.validate_crawl(goal, params, iik_available)
    if kind == gs.TURN:
        return gs.validate_turn(goal, params, iik_available)
    if kind == gs.RECOVER:
        return gs.validate_recover(goal, params)
    if kind == gs.CRAWL_TO:
        return gs.validate_crawl_to(goal, params, iik_available)
    return gs.validate_roll(goal, params)


class _UuidActionServer(ActionServer):
    """ActionServer that exposes the goal UUID to the goal callback (thread-local), for rejection reasons.

    Relies on rclpy's ``_execute_goal_request`` (Jazzy); if that private method changes, the UUID is just empty.
    """

    async def _execute_goal_request(self, request_header_and_message):
        try:
            _tls.goal_id = bytes(request_header_and_message[1].goal_id.uuid).hex()
        except Exception:
            _tls.goal_id = ""
        return await super()._execute_goal_request(request_header_and_message)


class GaitSequencerNode(ReleasingLifecycleNode):
    def __init__(self, node_name: str = "gait_sequencer", **kwargs):
        super().__init__(node_name, **kwargs)
        self._pset = gs.parameter_set()
        declare_validated_parameters(self, self._pset, self._apply_params)
        # the hosted gait generator's parameters (config/gait_generator_parameters.yaml) as gait_generator.*
        self._gen_pset = gen_parameter_set().prefixed("gait_generator")
        declare_validated_parameters(self, self._gen_pset, self._apply_gen_params, attr="gen_params")
        self._lock = threading.RLock()
        self._active = False
        self._busy: Optional[str] = None            # description of the running goal (set in the goal callback)
        self._seq: Optional[gs.GaitSequencer] = None
        self._status: Optional[ControllerStatus] = None
        self._status_wall = 0.0
        self._support: Optional[SupportState] = None
        self._support_wall = 0.0
        self._support_stamp: Optional[float] = None
        self._pose: Optional[np.ndarray] = None
        self._pose_t: Optional[float] = None        # sim time of the last valid pelvis pose
        self._outcome: Optional[gs.Outcome] = None
        self._feedback: Optional[dict] = None
        self._event = threading.Event()
        self._progress_wall = time.monotonic()
        self._last_tick_t: Optional[float] = None
        self._last_keepalive = -1e9
        self._pub_ref = None
        self._subs = []
        self._timer = None
        self.counters = {"accepted": 0, "rejected": 0, "succeeded": 0, "canceled": 0, "aborted": 0}
        #: /cmd_vel: commands accepted / refused / ignored (goal running), velocity runs started / ended
        self.cmd_vel_counters = {"accepted": 0, "refused": 0, "ignored": 0, "runs_started": 0, "runs_ended": 0}
        self._cmd_in = None          # (CrawlCommand, sim time of receipt) not yet handed to the sequencer
        self._hmap_in = None         # HeightMap (stamped on arrival) not yet handed to the sequencer
        self._terrain_t = -math.inf  # last terrain status update (diagnostics)
        self._vel_mode = False       # the running sequencer run is a velocity run (no action goal behind it)
        self._vel_planning = False
        self._vel_last_outcome: Optional[gs.Outcome] = None
        self._gen_vals = None
        from ..cartesian import available as cartesian_available
        self._iik_available = cartesian_available()
        self._cb_actions = ReentrantCallbackGroup()
        self._cb_timer = MutuallyExclusiveCallbackGroup()
        # the inputs that are only stored get their own group: a timer that is always due (sim time running faster
        # than the node) must not starve them
        self._cb_inputs = MutuallyExclusiveCallbackGroup()
        self._pub_rej = self.create_publisher(String, topics.GOAL_REJECTIONS, REJECTIONS_QOS)
        self._servers = []
        for kind, (atype, name) in ACTIONS.items():
            self._servers.append(_UuidActionServer(
                self, atype, name,
                execute_callback=self._execute_callback(kind),
                goal_callback=self.guard(lambda goal, k=kind: self._on_goal(k, goal), f"goal callback {kind}",
                                         default=GoalResponse.REJECT),
                cancel_callback=self.guard(self._on_cancel, "cancel callback", default=CancelResponse.ACCEPT),
                callback_group=self._cb_actions))

    # ------------------------------------------------------------------ parameters
    def _apply_params(self, new) -> Optional[str]:
        seq = self._seq
        if seq is not None:   # file reads (bounded by the file guards) happen without the lock
            reason = seq.check_scripts(new)
            if reason:
                return reason
        with self._lock:
            if self._seq is not None:
                reason = self._seq.set_params(new, scripts_checked=self._seq is seq)
                if reason:
                    return reason
            rate_changed = new["rate_hz"] != self.params["rate_hz"]
            self.params = new
        if rate_changed and self._timer is not None:
            self._restart_timer(new["rate_hz"], callback_group=self._cb_timer)
        return None

    def _generator_overrides(self, values=None) -> dict:
        return (values or self.gen_params).gait_generator.as_dict()

    def _apply_gen_params(self, new) -> Optional[str]:
        """gait_generator.* changes: used by the goals planned from now on (a running goal keeps its generator)."""
        vals = self._generator_overrides(new)
        with self._lock:
            self.gen_params = new
            self._gen_vals = gen_parameter_set().values(vals)
            if self._seq is not None:
                self._seq.set_generator_params(vals)
        return None

    # ------------------------------------------------------------------ lifecycle
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        try:
            seq = gs.GaitSequencer(self.params)
            seq.sender = self.get_name()
            seq.set_generator_params(self._generator_overrides())
            missing = []
            for k, v in self.params.as_dict().items():
                if k.startswith("gaits."):
                    try:
                        seq._load(v)
                    except Exception as e:  # a missing script only disables that goal kind
                        missing.append(f"{k}={v} ({type(e).__name__})")
            if missing:
                self.get_logger().warn("key-frame scripts not available (those goals will abort): "
                                       + "; ".join(missing))
            with self._lock:
                self._seq = seq
            self._pub_ref = self.create_lifecycle_publisher(
                ControllerReference, topics.REFERENCE, QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE))
            self._subs = [
                self.create_subscription(ControllerStatus, topics.STATUS, self._on_status, 50,
                                         callback_group=self._cb_timer),
                self.create_subscription(SupportState, topics.SUPPORT_STATE if self.params["support_source"] ==
                                         "estimate" else topics.CONTACTS_GT, self._on_support, 10,
                                         callback_group=self._cb_inputs),
                self.create_subscription(PoseStamped, topics.PELVIS_POSE, self._on_pose, 10,
                                         callback_group=self._cb_inputs),
                self.create_subscription(HeightMap, topics.HEIGHT_MAP, self._on_height_map, 2,
                                         callback_group=self._cb_inputs),
            ]
            if self.params["cmd_vel.enabled"]:
                self._gen_vals = gen_parameter_set().values(self._generator_overrides())
                self._cmd_vel_stamped = bool(self.params["cmd_vel.stamped"])
                self._subs.append(self.create_subscription(
                    TwistStamped if self._cmd_vel_stamped else Twist, topics.CMD_VEL, self._on_cmd_vel, 10,
                    callback_group=self._cb_inputs))
            self._restart_timer(self.params["rate_hz"], callback_group=self._cb_timer)
            return TransitionCallbackReturn.SUCCESS
        except Exception as e:
            self.get_logger().error(f"configure error: {type(e).__name__}: {e}")
            return TransitionCallbackReturn.ERROR

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        with self._lock:
            self._active = True
        return super().on_activate(state)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._stop_goal("gait_sequencer deactivated")
        with self._lock:
            self._active = False
        return super().on_deactivate(state)

    def _stop_goal(self, reason: str):
        with self._lock:
            if self._seq is not None and self._seq.busy:
                out = self._seq.abort(reason, self._now_s(), self._pose_or_zero())
                if out is not None and self._vel_mode:
                    self._velocity_ended(out)
                elif out is not None:
                    self._outcome = out
                    self._event.set()

    def _release(self):
        self._stop_goal("gait_sequencer cleaned up / shut down")
        with self._lock:
            self._active = False
        self._destroy_timer_and_subscriptions()
        if self._pub_ref is not None:
            self.destroy_lifecycle_publisher(self._pub_ref)
            self._pub_ref = None
        with self._lock:
            self._seq = None

    # ------------------------------------------------------------------ inputs
    def _on_status(self, msg: ControllerStatus):
        self._status = msg
        self._status_wall = time.monotonic()
        self._progress_wall = self._status_wall
        with self._lock:
            self._tick_locked()   # react to "reached" without waiting for the next timer period

    def _on_support(self, msg: SupportState):
        self._support = msg
        self._support_wall = time.monotonic()
        self._support_stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9

    def _on_pose(self, msg: PoseStamped):
        pose = pose_msg_to_array(msg.pose)
        if not np.all(np.isfinite(pose)) or not 0.5 < float(np.linalg.norm(pose[3:7])) < 1.5:
            # defined state: the pose is unknown; a running goal is aborted with the reason, the controller holds
            why = f"non-finite or invalid pelvis pose on {topics.PELVIS_POSE}"
            self.reject_input(topics.PELVIS_POSE, why)
            self._stop_goal(why)
            return
        self._pose = pose
        self._pose_t = self._now_s()
        self._observe_pose(msg, pose)

    def _on_height_map(self, msg: HeightMap):
        """Check and keep the latest height map for the next tick (stamped on arrival, in this node's clock; a
        malformed one is refused with the reason and the previous one stays, ageing towards blind placement)."""
        try:
            hm = height_map_from_msg(msg, self._now_s())
        except HeightMapError as e:
            self.reject_input(topics.HEIGHT_MAP, str(e))
            return
        self._hmap_in = hm

    def _on_cmd_vel(self, msg):
        """Store a valid command for the next tick (never blocks: no lock, no planning here)."""
        tw = msg.twist if self._cmd_vel_stamped else msg
        cmd, why = vc.validate_cmd_vel((tw.linear.x, tw.linear.y, tw.linear.z),
                                       (tw.angular.x, tw.angular.y, tw.angular.z), self.params, self._gen_vals)
        if cmd is None:
            self.cmd_vel_counters["refused"] += 1
            self.reject_input(topics.CMD_VEL, why + " (command ignored; the crawl goes on with the previous one)")
            return
        if self._busy is not None and not self._vel_mode:
            self.cmd_vel_counters["ignored"] += 1
            self.get_logger().warn(f"{topics.CMD_VEL} ignored: action goal '{self._busy}' is running (one motion at "
                                   "a time; cancel it first)", throttle_duration_sec=self.params["cmd_vel.warn_period_s"])
            return
        self.cmd_vel_counters["accepted"] += 1
        self._cmd_in = (cmd, self._now_s())

    def _maybe_start_velocity(self, t: float) -> None:
        """Under the lock, idle: a fresh non-zero command starts a velocity run, planned on a thread of its own
        (~50 ms: generator + reposition), started at the next tick it is ready; goals are refused "busy" meanwhile."""
        seq = self._seq
        if self._vel_planning or self._busy is not None or seq.busy or not seq.velocity_active(t):
            return
        cmd = seq.velocity_command(t)
        mg = gs.velocity_goal(self.params, cmd.vx_m_per_s)
        if self._pose is None or self._support is None or not self._support_current() or \
                t - (self._pose_t if self._pose_t is not None else -math.inf) > self.params["start_pose_max_age_s"]:
            self.get_logger().warn(f"{topics.CMD_VEL}: no fresh pelvis pose / support state yet; not crawling",
                                   throttle_duration_sec=self.params["cmd_vel.warn_period_s"])
            return
        why = seq.posture_rejection(mg, self._pose)
        if why:
            self.get_logger().warn(f"{topics.CMD_VEL} ignored: {why}",
                                   throttle_duration_sec=self.params["cmd_vel.warn_period_s"])
            return
        self._busy = ("cmd_vel crawling (publish a zero twist or stop publishing /cmd_vel: it stops after the step in "
                      "flight)")
        self._vel_mode = True
        self._vel_planning = True
        pose = self._pose.copy()
        sup = support_from_msg(self._support)

        def work():
            run, err = None, None
            try:
                run = seq.prepare(mg, pose, sup)
            except Exception as e:  # noqa: BLE001 — logged; the robot keeps holding
                err = f"{type(e).__name__}: {e}"
            with self._lock:
                self._vel_planning = False
                if err is None and self._active and self._seq is seq and not seq.busy:
                    try:
                        seq.start_prepared(run, self._now_s())
                        self.cmd_vel_counters["runs_started"] += 1
                        self._tick_locked()
                        return
                    except Exception as e:  # noqa: BLE001
                        err = f"{type(e).__name__}: {e}"
                if err is not None:
                    self.get_logger().error(f"cmd_vel crawling cannot start: {err}")
                self._busy = None
                self._vel_mode = False
        threading.Thread(target=work, name="cmd_vel_planner", daemon=True).start()

    def _velocity_ended(self, out: gs.Outcome) -> None:
        self._vel_last_outcome = out
        self.cmd_vel_counters["runs_ended"] += 1
        self._vel_mode = False
        self._busy = None
        log = self.get_logger().info if out.status == "succeeded" else self.get_logger().warn
        log(f"cmd_vel crawling {out.status}: {out.reason} ({out.cycles_completed} cycles, {out.distance_m:.3f} m, "
            f"{out.duration_s:.1f} s)")

    def _on_callback_error(self, what: str, exc: BaseException) -> None:
        self._stop_goal(f"internal error in {what}: {type(exc).__name__}: {exc}")

    @property
    def last_support_stamp_s(self) -> Optional[float]:
        """Stamp (sim time of its data) of the last support state received (None: none yet)."""
        return self._support_stamp

    @property
    def last_pose_time_s(self) -> Optional[float]:
        """Sim time at which the last valid pelvis pose arrived (None: none yet)."""
        return self._pose_t

    def _pose_or_zero(self) -> np.ndarray:
        return self._pose if self._pose is not None else np.array([0, 0, 0, 0, 0, 0, 1.0])

    def _now_s(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    # ------------------------------------------------------------------ goals
    def _reject(self, kind: str, reason: str) -> GoalResponse:
        gid = getattr(_tls, "goal_id", "")
        self.counters["rejected"] += 1
        self.get_logger().warn(f"{kind} goal {gid[:8]} rejected: {reason}")
        self._pub_rej.publish(String(data=json.dumps({"action": kind, "goal_id": gid, "reason": reason})))
        return GoalResponse.REJECT

    @property
    def inputs_ready(self) -> bool:
        """True once a pelvis pose and a support state have arrived (a goal's posture can be checked)."""
        return self._pose is not None and self._support is not None

    def _on_goal(self, kind: str, goal) -> GoalResponse:
        with self._lock:
            if not self._active or self._seq is None:
                return self._reject(kind, "inactive: the gait_sequencer node is not active")
            mg, reason = validate_goal(kind, goal, self.params, self._iik_available)
            if mg is None:
                return self._reject(kind, reason)
            reason = self._posture_rejection(mg)
            if reason:
                return self._reject(kind, reason)
            why = self._seq.keyframe_ground(mg, self._pose, self._now_s())
            if why:
                mg, reason = gs.ground_alternative(kind, goal, why, self.params, self._iik_available)
                if mg is None:
                    return self._reject(kind, reason)
                self.get_logger().warn(f"{kind} goal runs as '{mg.description}' (keyframe_ground.policy cartesian)")
            if self._busy is not None:
                return self._reject(kind, f"busy: already executing '{self._busy}' (one motion goal at a time; "
                                          "cancel it or wait)")
            self._busy = mg.description
            self._pending_goal = mg
            self.counters["accepted"] += 1
            return GoalResponse.ACCEPT

    def _on_cancel(self, goal_handle) -> CancelResponse:
        return CancelResponse.ACCEPT

    def _execute_callback(self, kind: str):
        async def execute(goal_handle):
            return await self._execute_off_executor(kind, goal_handle)
        return execute

    async def _execute_off_executor(self, kind: str, goal_handle):
        """The goal's wait loop runs on a thread of its own and the execute coroutine only awaits its result, so no
        executor thread is held for the length of a goal: the node runs on a SingleThreadedExecutor too (the
        embedded stack's; rclpy's MultiThreadedExecutor costs ~10x the graph's speed in GIL time)."""
        fut = Future(executor=self.executor)
        fut.add_done_callback(lambda _f: None)   # completing it schedules a task: that wakes the executor

        def work():
            try:
                fut.set_result(self._execute(kind, goal_handle))
            except BaseException as e:  # noqa: BLE001 — handed to the awaiting coroutine
                fut.set_exception(e)
        threading.Thread(target=work, name=f"goal_{kind}", daemon=True).start()
        return await fut

    def _execute(self, kind: str, goal_handle):
        atype = ACTIONS[kind][0]
        try:
            return self._execute_inner(kind, atype, goal_handle)
        except Exception as e:  # never leave a goal without a terminal state
            self.get_logger().error(f"{kind} execution error: {type(e).__name__}: {e}")
            with self._lock:
                if self._seq is not None and self._seq.busy:
                    self._seq.abort(f"internal error: {e}", self._now_s(), self._pose_or_zero())
            res = atype.Result(success=False, reason=f"internal error: {type(e).__name__}: {e}")
            if goal_handle.is_active:
                goal_handle.abort()
            return res
        finally:
            with self._lock:
                self._busy = None
                self._outcome = None
                self._feedback = None

    def _wait_settled(self, mg, goal_handle) -> Optional[str]:
        """Before planning: wait while GaitSequencer.settle_wait says the pelvis still moves (bounded by
        ``start_settle.timeout_s`` of sim time and the wall stall bound). Returns a reason only when the goal was
        cancelled meanwhile (nothing moved)."""
        t0, wall0, why = self._now_s(), time.monotonic(), None
        while True:
            with self._lock:
                seq = self._seq
                if seq is None or not self._active:
                    return None
                waited = self._now_s() - t0
                why_now = seq.settle_wait(mg, waited)
                timeout = self.params["start_settle.timeout_s"]
            if why_now is None:
                if why is not None and waited >= timeout:
                    self.get_logger().warn(f"{mg.description}: the robot did not settle within start_settle.timeout_s "
                                           f"= {timeout} s ({why}); starting anyway")
                return None
            why = why_now
            if goal_handle.is_cancel_requested:
                return f"canceled while waiting for the robot to settle ({why}); nothing moved"
            if time.monotonic() - wall0 > self.params["stall_timeout_wall_s"] or not rclpy.ok(context=self.context):
                return None
            time.sleep(0.02)

    def _support_current(self) -> bool:
        """The support state is no older than ``support_max_lag_s`` behind the last pelvis pose (sim time)."""
        return (self._support_stamp is not None and self._pose_t is not None
                and self._support_stamp >= self._pose_t - self.params["support_max_lag_s"])

    def _wait_support(self, goal_handle) -> Optional[str]:
        """Before planning: wait up to ``plan_support_wait_s`` (wall) for a support state as recent as the pose (after
        /sim/reset the last one can be the previous trial's). Returns a reason only when the goal was cancelled."""
        wall0 = time.monotonic()
        while True:
            with self._lock:
                if self._support is None or self._support_current():
                    return None
            if goal_handle.is_cancel_requested:
                return "canceled while waiting for a current support state; nothing moved"
            if time.monotonic() - wall0 > self.params["plan_support_wait_s"] or not rclpy.ok(context=self.context):
                return None
            time.sleep(0.01)

    def _plan_off_lock(self, mg, goal_handle):
        """Plan the goal on a planner thread without the node lock (goal, cancel and parameter requests keep being
        answered), bounded by ``planning_timeout_s`` of wall time. Returns (seq, run, error, canceled). A support
        state older than the pose (``support_max_lag_s``) is not used: a Cartesian goal then fails with the reason."""
        with self._lock:
            seq = self._seq
            if not self._active or seq is None:
                return None, None, "inactive", False
            pose = self._pose_or_zero()
            sup = None
            if self._support is not None and self._support_current():
                sup = support_from_msg(self._support)
            elif self._support is not None:
                lag = self._pose_t - self._support_stamp if self._pose_t is not None else math.nan
                self.get_logger().warn(f"{mg.description}: the support state is {lag:.2f} s older than the pelvis "
                                       f"pose (support_max_lag_s = "
                                       f"{self.params['support_max_lag_s']} s); planning without it")
        box = {}

        def work():
            try:
                box["run"] = seq.prepare(mg, pose, sup)
            except Exception as e:  # noqa: BLE001 — reported as the goal's reason
                box["error"] = f"cannot start '{mg.description}': {type(e).__name__}: {e}"
            done.set()

        done = threading.Event()
        threading.Thread(target=work, name="goal_planner", daemon=True).start()
        deadline = time.monotonic() + self.params["planning_timeout_s"]
        while not done.wait(0.02):
            if goal_handle.is_cancel_requested:
                return seq, None, "canceled while planning; nothing moved", True
            if not self._active or not rclpy.ok(context=self.context):
                return seq, None, "inactive", False
            if time.monotonic() > deadline:
                return seq, None, (f"planning '{mg.description}' took longer than planning_timeout_s = "
                                   f"{self.params['planning_timeout_s']} s (wall clock); nothing moved"), False
        return seq, box.get("run"), box.get("error"), False

    def _execute_inner(self, kind, atype, goal_handle):
        with self._lock:
            mg = self._pending_goal
            self._outcome = None
            self._feedback = None
            self._event.clear()
        seq, run, start_error, canceled = None, None, self._wait_settled(mg, goal_handle), False
        if start_error is None:
            start_error = self._wait_support(goal_handle)
        if start_error is None:
            seq, run, start_error, canceled = self._plan_off_lock(mg, goal_handle)
        else:
            canceled = True
        with self._lock:
            if start_error is None and (not self._active or self._seq is not seq):
                start_error = "inactive"
            if start_error is None:
                try:
                    seq.start_prepared(run, self._now_s())
                except Exception as e:  # noqa: BLE001
                    start_error = f"cannot start '{mg.description}': {type(e).__name__}: {e}"
            self._progress_wall = time.monotonic()
            if start_error is None:
                self._tick_locked()
        if start_error is not None:
            if canceled and goal_handle.is_cancel_requested:
                goal_handle.canceled()
                self.counters["canceled"] += 1
            else:
                goal_handle.abort()
                self.counters["aborted"] += 1
            return atype.Result(success=False, reason=start_error)
        period_fb = 1.0 / self.params["feedback_rate_hz"]
        last_fb = 0.0
        cancel_sent = False
        while True:
            self._event.wait(0.05)
            self._event.clear()
            with self._lock:
                out = self._outcome
                fb = self._feedback
                if out is None and goal_handle.is_cancel_requested and not cancel_sent and self._seq is not None:
                    self._seq.request_cancel()
                    cancel_sent = True
                if out is None and (not rclpy.ok(context=self.context) or self._seq is None):
                    if self._seq is not None:
                        out = self._seq.abort("shutting down", self._now_s(), self._pose_or_zero())
                    out = out or gs.Outcome(status="aborted", reason="node shutting down")
                if out is None and time.monotonic() - self._progress_wall > self.params["stall_timeout_wall_s"]:
                    out = self._seq.abort(f"stalled: no sim-time or controller progress for "
                                          f"{self.params['stall_timeout_wall_s']} s (wall clock); is the simulator "
                                          "running?", self._now_s(), self._pose_or_zero())
            if out is not None:
                return self._finish(kind, atype, goal_handle, out)
            now = time.monotonic()
            if fb is not None and now - last_fb >= period_fb:
                last_fb = now
                try:
                    goal_handle.publish_feedback(self._feedback_msg(kind, atype, fb))
                except Exception as e:  # a vanished client must not kill the goal
                    self.get_logger().warn(f"feedback failed: {e}", throttle_duration_sec=5.0)

    def _feedback_msg(self, kind, atype, fb):
        m = atype.Feedback()
        m.phase = str(fb["phase"])
        m.progress = float(fb["progress"])
        m.base_pose = array_to_pose_msg(fb["base_pose"])
        if kind == gs.CRAWL_TO:
            m.cycle = int(fb["cycle"])
            m.law_phase = str(fb.get("law_phase", ""))
            for f in ("remaining_distance_m", "heading_error_rad", "bearing_error_rad"):
                setattr(m, f, float(fb.get(f, float("nan"))))
            c = fb.get("command")
            if c is not None:
                m.command_vx_m_per_s, m.command_vy_m_per_s = float(c.vx_m_per_s), float(c.vy_m_per_s)
                m.command_wz_rad_per_s = float(c.wz_rad_per_s)
            return m
        m.keyframe = int(fb["keyframe"])
        if kind == gs.RECOVER:
            m.stage = int(fb["cycle"])
            m.posture = self._seq.fall_detector.posture(fb["base_pose"]) if self._seq is not None else ""
        elif kind != gs.ROLL:
            m.cycle = int(fb["cycle"])
            mm = fb["stability_margin_m"]
            m.stability_margin_m = float(mm) if math.isfinite(mm) else float("nan")
        return m

    def _finish(self, kind, atype, goal_handle, out: gs.Outcome):
        if out.support_violations:
            self.get_logger().warn(f"{kind} goal: {out.support_violations} key-frames lifted a limb without a "
                                   f"confirmed support state (support_timeout_policy=proceed)")
        r = atype.Result()
        r.success = out.status == "succeeded"
        r.reason = out.reason
        r.duration_s = float(out.duration_s)
        if kind == gs.CRAWL:
            r.distance_m = float(out.distance_m)
            r.lateral_drift_m = float(out.lateral_drift_m)
            r.heading_change_rad = float(out.heading_change_rad)
            r.cycles_completed = int(out.cycles_completed)
        elif kind == gs.TURN:
            r.heading_change_rad = float(out.heading_change_rad)
            r.drift_m = float(out.drift_m)
            r.cycles_completed = int(out.cycles_completed)
        elif kind == gs.RECOVER:
            self._recover_result(r, out)
        elif kind == gs.CRAWL_TO:
            r.position_error_m = float(out.position_error_m)
            r.yaw_error_rad = float(out.yaw_error_rad)
            r.cycles_completed = int(out.cycles_completed)
            if out.final_pose is not None and np.all(np.isfinite(out.final_pose)):
                r.final_pose = array_to_pose_msg(out.final_pose)
        else:
            r.final_roll_rad = float(out.final_roll_rad)
        if out.status == "succeeded":
            goal_handle.succeed()
        elif out.status == "canceled" and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:
            goal_handle.abort()
        self.counters[out.status if out.status in self.counters else "aborted"] += 1
        return r

    # ------------------------------------------------------------------ ticking
    def _on_timer(self):
        with self._lock:
            self._tick_locked()

    def _tick_locked(self):
        if not self._active or self._seq is None or self._pub_ref is None:
            return
        t = self._now_s()
        if self._last_tick_t is None or t > self._last_tick_t:
            self._progress_wall = max(self._progress_wall, time.monotonic()) if self._seq.busy else time.monotonic()
        self._last_tick_t = t
        cin = self._cmd_in
        if cin is not None:
            self._cmd_in = None
            self._seq.command_velocity(*cin)
        hm = self._hmap_in
        if hm is not None:
            self._hmap_in = None
            self._seq.set_height_map(hm, hm.stamp_s)
        if t - self._terrain_t >= 1.0:              # diagnostics go out at 1 Hz
            self._terrain_t = t
            self._health().extra["terrain"] = self._seq.terrain_status(t)
            self._health().extra["keyframe_ground"] = self._seq.ground_status(self._pose, t)
        if not self._seq.busy:
            self._maybe_start_velocity(t)
            if self._busy is None and t - self._last_keepalive >= self.params["keepalive_period_s"]:
                self._last_keepalive = t
                self._publish_ref(Reference(mode=Mode.HOLD, sequence_id=0))
            return
        if self._pose_t is not None and t - self._pose_t > self.params["pose_timeout_s"]:
            self._stop_goal(f"stale pelvis pose: none valid for {t - self._pose_t:.2f} s of sim time "
                            f"(pose_timeout_s = {self.params['pose_timeout_s']} s)")
            return
        st = self._status
        support = None
        if self._support is not None:
            # with the measured contact positions: the gait generator re-syncs to them once per cycle (without
            # them the graph's backward Cartesian crawl ran its footholds out of reach, "target of LK is 1.17 m")
            support = support_from_msg(self._support, time.monotonic() - self._support_wall)
        out = self._seq.tick(t, st, support, self._pose_or_zero())
        if out.reference is not None:
            self._publish_ref(out.reference)
        if out.feedback is not None:
            self._feedback = out.feedback
        if out.outcome is not None and self._vel_mode:
            self._velocity_ended(out.outcome)
        elif out.outcome is not None:
            self._outcome = out.outcome
            self._event.set()

    # ------------------------------------------------------------------ falls (issue 14 §3)
    def _observe_pose(self, msg: PoseStamped, pose) -> None:
        """Feed every pelvis pose sample to the fall detector at its stamp (sim time of the sample, not of its
        processing); on a fall during a goal, tick at once (abort + protective key-frame) instead of at the next
        timer period."""
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        with self._lock:
            seq = self._seq
            if seq is None:
                return
            seq.feed_fall_in_tick = False
            st = seq.observe(stamp if stamp > 0 else self._now_s(), pose)
            if st.fallen and seq.busy:
                self._tick_locked()

    def _posture_rejection(self, mg) -> str:
        """Why a goal cannot start from the current posture (gait_sequencer.posture_rejection; a Crawl/Turn while
        down is accepted when auto_recover is on: the sequencer recovers first)."""
        if mg.kind == gs.RECOVER:
            return ""
        if self._pose is None:
            return f"no pelvis pose received yet on {topics.PELVIS_POSE}: the posture cannot be checked"
        age = self._now_s() - self._pose_t if self._pose_t is not None else math.inf
        if age > self.params["start_pose_max_age_s"]:
            return (f"stale pelvis pose: the last valid one on {topics.PELVIS_POSE} is {age:.2f} s old (sim time; "
                    f"start_pose_max_age_s = {self.params['start_pose_max_age_s']} s), e.g. the state estimator "
                    f"re-aligning after a reset; send the goal again once it publishes")
        why = self._seq.posture_rejection(mg, self._pose)
        if why and self.params["auto_recover"] and self._seq.needs_recovery(mg, self._pose):
            return ""
        return why

    @staticmethod
    def _recover_result(r, out: gs.Outcome):
        r.initial_posture = out.initial_posture
        r.final_posture = out.final_posture
        r.stages = list(out.stages)
        r.final_roll_rad = float(out.final_roll_rad)
        r.final_pelvis_height_m = float(out.final_pelvis_height_m)

    def _publish_ref(self, ref: Reference):
        ref.sender = self.get_name()
        if self._pub_ref is not None:
            self._pub_ref.publish(reference_to_msg(ref, self.get_clock().now().to_msg()))

    def destroy_node(self):
        self._stop_goal("node destroyed")
        for s in self._servers:
            try:
                s.destroy()
            except Exception:
                pass
        return super().destroy_node()


def main(args=None):
    spin_node(GaitSequencerNode, args=args)


if __name__ == "__main__":
    main()
