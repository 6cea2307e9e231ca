"""The Python side of the ros2_control plugin (atlas_crawl_ros2_control/CrawlController): a thin facade over
:class:`~atlas_crawl_controller.controller_core.CrawlControllerCore` shaped for an embedding C++ caller (issue 6 §1).

Why a facade instead of calling the core directly from C++: the C++ plugin then never builds Python objects on the
update path.  Everything it exchanges per control period lives in numpy buffers that are allocated **once** here
(``position``, ``velocity``, ``effort`` (28,), ``pelvis`` (7,) ``[x y z qx qy qz qw]``, ``command`` (28,),
``status`` (``len(STATUS_FIELDS)``,)); the plugin takes raw ``double*`` pointers to them in ``on_configure`` and
writes/reads them directly.  The buffers are never rebound (only written with ``[:]``), so those pointers stay valid
for the bridge's lifetime.  Per period the plugin makes exactly one Python call, :meth:`update` (GIL held only for
that call).  No import happens after construction.

Exact call sequence of the plugin (tested in test/test_ros2_control_bridge.py)::

    on_configure:  b = Ros2ControlBridge(params, cartesian)     # import + build + core.configure (validated)
                   b.joint_names, b.parameter_names             # command/state interface names, ROS params to pass
                   pointers to b.position/.velocity/.effort/.pelvis/.command/.status
    on_activate:   write b.position; b.activate()               # hold the measured pose; b.command = that pose
    update():      write b.position/.velocity/.effort/.pelvis
                   [new reference] ok = b.set_reference(mode, seq, names, positions, T, targets12, stance4, com,
                                                        sender, queue)
                                   (rejected → b.reason)
                   rc = b.update(time_s, period_s)              # RC_* bit set; b.command valid iff rc & RC_COMMAND
                   [rc & RC_STATUS_CHANGED] b.reason            # read the reason string only when it changed
    parameters:    reason = b.set_params({name: value})        # '' = applied (non-RT thread, core locked)
    on_deactivate: b.deactivate()

With ``pose_source="estimate"`` the bridge also hosts the state estimator (:class:`~.estimation.hosted.
HostedEstimator`, as the MuJoCo node does): per update the plugin also writes ``imu`` (6,) ``[gyro xyz, specific force
xyz]`` (pelvis frame, from gz_ros2_control's IMU state interfaces), and the core reads the estimate instead of
``pelvis``. ``pelvis`` (NaN until the plugin received a pose) is read once, to initialise the estimator at the
first pose (the spawn pose, as the MuJoCo node initialises at its reset pose). Afterwards ``odom``
(:data:`~.estimation.hosted.ODOM_SIZE`, layout :data:`~.estimation.hosted.ODOM_LAYOUT`) holds the estimate (NaN while
there is none: the core then holds), which the plugin publishes on ``odom_topic`` / ``pose_topic``.

Return code of :meth:`update` (bit set): ``RC_COMMAND`` the command buffer holds a new finite command;
``RC_STATUS_CHANGED`` (sequence_id, accepted, reached, state, reason) changed since the last call;
``RC_EXCEPTION`` the core raised (``last_error`` says what; command untouched); ``RC_NONFINITE`` the core returned
a non-finite command (command untouched).  Without ``RC_COMMAND`` the caller must hold its last safe command.
"""
from __future__ import annotations

import json
import math
from typing import Mapping, Optional, Sequence

import numpy as np

from atlas_description import JOINT_NAMES

from .controller_core import CrawlControllerCore, Reference
from .controller_core import parameter_set as controller_parameter_set
from .estimation.hosted import ODOM_SIZE, HostedEstimator
from .nodes import topics

__all__ = ["Ros2ControlBridge", "STATUS_FIELDS", "RC_COMMAND", "RC_STATUS_CHANGED", "RC_EXCEPTION", "RC_NONFINITE"]

#: Layout of the ``status`` buffer (doubles), read by the C++ plugin into atlas_crawl_msgs/ControllerStatus.
STATUS_FIELDS = ("sequence_id", "accepted", "reached", "state", "task_error_m", "iterations", "stability_margin_m",
                 "tracking_error_rad", "nonfinite_inputs", "clamped_commands")

RC_COMMAND = 1
RC_STATUS_CHANGED = 2
RC_EXCEPTION = 4
RC_NONFINITE = 8

N = len(JOINT_NAMES)
POSE_SOURCES = ("topic", "estimate")


def parse_overrides(items: Sequence[str]) -> dict:
    """``["name=value", ...]`` → {name: value}; values parsed as JSON where they are (numbers, booleans), else kept
    as strings. Raises ValueError naming an item without ``=``."""
    out = {}
    for item in items or ():
        name, sep, value = str(item).partition("=")
        if not sep or not name.strip():
            raise ValueError(f"estimator override {item!r} is not name=value")
        try:
            out[name.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[name.strip()] = value
    return out


class Ros2ControlBridge:
    """See the module docstring.  ``params``: core parameters (dotted names → values, as the ROS node holds them);
    ``pose_source``: ``topic`` (the pose the plugin receives) or ``estimate`` (the hosted state estimator, with
    ``estimator_overrides`` = ``name=value`` items of its parameters; ``estimator_record_path``: a .npz that records
    what the estimator is fed, :class:`~.estimation.recorder.InputRecorder`). Bad values raise with the reason."""

    def __init__(self, params: Optional[Mapping] = None, cartesian: bool = False, pose_source: str = "topic",
                 estimator_overrides: Sequence[str] = (), estimator_record_path: str = ""):
        if pose_source not in POSE_SOURCES:
            raise ValueError(f"pose_source must be one of {POSE_SOURCES}, got {pose_source!r}")
        self.core = CrawlControllerCore()
        self.core.configure(dict(params or {}))          # raises ParameterError with the reason
        self.cartesian_enabled = False
        if cartesian:
            from . import cartesian as cart
            if cart.available():
                self.core.set_cartesian_solver(*cart.make_cartesian_solver())
                self.cartesian_enabled = True
        self.joint_names = list(JOINT_NAMES)
        self.parameter_names = list(controller_parameter_set().specs.keys())
        self.position = np.zeros(N)
        self.velocity = np.zeros(N)
        self.effort = np.zeros(N)
        self.pelvis = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
        self.imu = np.full(6, np.nan)
        self.odom = np.full(ODOM_SIZE, np.nan)
        self.pose_source = pose_source
        self.estimator: Optional[HostedEstimator] = None
        self.odom_topic, self.pose_topic = topics.ODOM, topics.POSE_ESTIMATE
        self.odom_frame = self.base_frame = self.pose_frame = ""
        if pose_source == "estimate":
            self.estimator = HostedEstimator(parse_overrides(estimator_overrides))   # raises with the reason
            self.pelvis[:] = np.nan          # "no pose received yet" (the plugin writes received poses only)
            ep = self.estimator.params
            self.odom_frame, self.base_frame = ep["frames.odom_frame"], ep["frames.base_frame"]
            self.pose_frame = ep["frames.pose_frame"]
        self.recorder = None
        if estimator_record_path:
            if self.estimator is None:
                raise ValueError("estimator_record_path needs pose_source 'estimate'")
            from .estimation.recorder import InputRecorder
            self.recorder = InputRecorder(estimator_record_path,    # raises with the reason
                                          meta={"estimator_overrides": list(estimator_overrides)})
        self.command = np.zeros(N)
        self.status = np.zeros(len(STATUS_FIELDS))
        self.reason = ""
        self.rejected_reason = ""
        self.sender = ""
        self.last_error = ""
        self._key = None
        self._refresh_status()

    # ------------------------------------------------------------------------------------------------ lifecycle
    def activate(self) -> None:
        """Hold the measured pose (``position``); ``command`` = that pose (clamped into the limits)."""
        self.command[:] = self.core.activate(self.position)
        self._refresh_status()

    def deactivate(self) -> None:
        self.core.deactivate()
        self._refresh_status()
        if self.recorder is not None:
            self.recorder.close()

    def set_params(self, params: Mapping) -> str:
        """Runtime parameter change; '' when applied, else the reason (nothing changed)."""
        reason = self.core.set_params(dict(params))
        return reason or ""

    # ------------------------------------------------------------------------------------------------ reference
    def set_reference(self, mode: int, sequence_id: int, joint_names: Sequence[str],
                      joint_positions_rad: Sequence[float], duration_s: float, contact_targets: Sequence[float],
                      stance: Sequence[bool], com_modulation: bool, sender: str = "", queue: bool = False,
                      swing_lift_m: Sequence[float] = (), com_support: Sequence[bool] = (),
                      heading_rad: Sequence[float] = (), drift_correction_max_m: Sequence[float] = ()) -> bool:
        """atlas_crawl_msgs/ControllerReference fields (contact_targets flattened, 0 or 12 values) → the core.

        Returns accepted; on rejection ``rejected_reason`` holds why (the host publishes it once under the rejected
        reference's ``sequence_id`` and sender, as the MuJoCo node does); ``status`` and ``reason`` keep describing the
        running motion."""
        tg = np.asarray(contact_targets, float).reshape(-1)
        ref = Reference(mode=int(mode), sequence_id=int(sequence_id), joint_names=list(joint_names),
                        joint_positions_rad=np.asarray(joint_positions_rad, float),
                        duration_s=float(duration_s), contact_targets=tg.reshape(-1, 3) if tg.size else None,
                        stance=[bool(s) for s in stance] or [True] * 4, com_modulation=bool(com_modulation),
                        swing_lift_m=[float(v) for v in swing_lift_m] or [0.0] * 4,
                        com_support=[bool(s) for s in com_support] or [False] * 4,
                        heading_rad=float(heading_rad[0]) if len(heading_rad) else None,
                        drift_correction_max_m=float(drift_correction_max_m[0]) if len(drift_correction_max_m)
                        else None,
                        sender=str(sender), queue=bool(queue))
        ok, reason = self.core.set_reference(ref)
        self.rejected_reason = "" if ok else reason
        return bool(ok)

    # ------------------------------------------------------------------------------------------------ update
    def update(self, time_s: float, period_s: float) -> int:
        """One control period from the buffers; see the module docstring for the return code."""
        rc = 0
        pose = self.pelvis
        if self.estimator is not None:
            try:
                pose = self._estimate(time_s)
            except Exception as e:  # the estimator must never take the update down: hold, and report
                self.odom[:] = np.nan
                self.last_error = f"state estimator: {type(e).__name__}: {e}"
                return rc | RC_EXCEPTION
        try:
            cmd = self.core.update(time_s, period_s, self.position, self.velocity, self.effort, pose)
        except Exception as e:  # the plugin holds its last safe command and reports this
            self.last_error = f"{type(e).__name__}: {e}"
            rc |= RC_EXCEPTION
        else:
            if cmd.shape == self.command.shape and np.all(np.isfinite(cmd)):
                self.command[:] = cmd
                rc |= RC_COMMAND
            else:
                self.last_error = "controller core returned a non-finite or malformed command"
                rc |= RC_NONFINITE
        try:
            if self._refresh_status():
                rc |= RC_STATUS_CHANGED
        except Exception as e:  # status must never take the update down
            self.last_error = f"status: {type(e).__name__}: {e}"
            rc |= RC_EXCEPTION
        return rc

    def _estimate(self, time_s: float) -> np.ndarray:
        """Initialise the hosted estimator at the first received pose, then feed it this period's joints (with the
        core's expected stance) and IMU sample; the pose the core reads (NaN while there is no estimate)."""
        h = self.estimator
        if not h.initialised:
            p = self.pelvis
            if np.all(np.isfinite(p)) and 0.5 < float(np.linalg.norm(p[3:])) < 1.5:
                h.reset(p, time_s)
        else:
            h.step(time_s, self.position, self.velocity, self.core.expected_stance, self.imu[:3], self.imu[3:])
        h.odom_into(time_s, self.odom)
        if self.recorder is not None and h.initialised:
            self.recorder.append(time_s, self.position, self.velocity, self.core.expected_stance, self.imu,
                                 self.pelvis, self.odom[:7])
        return self.odom[:7]

    def _refresh_status(self) -> bool:
        s = self.core.status()
        vals = (s.sequence_id, s.accepted, s.reached, s.state, s.task_error_m, s.iterations, s.stability_margin_m,
                s.tracking_error_rad, s.nonfinite_inputs, s.clamped_commands)
        for i, v in enumerate(vals):
            v = float(v)
            self.status[i] = v if math.isfinite(v) else 0.0
        key = (int(s.sequence_id), bool(s.accepted), bool(s.reached), int(s.state), s.reason, s.sender)
        changed = key != self._key
        self._key = key
        if changed:
            self.reason = s.reason
            self.sender = s.sender
        return changed
