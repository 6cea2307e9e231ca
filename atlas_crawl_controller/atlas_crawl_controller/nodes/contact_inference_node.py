"""contact_inference lifecycle node: /joint_states + /atlas/pelvis_pose (+ /atlas/reference, /atlas/height_map) →
/atlas/support_state.

Contact-point and CoM positions come from our forward kinematics (atlas_crawl_kinematics.RobotModel on the URDF)
placed in the world with the pelvis pose; the estimator (fusion / height / velocity / effort, parameter ``method``)
decides stance per limb; the support polygon, CoM projection and margin are computed in the world frame (z along
gravity, so the margin equals the one in the spatial frame). The fusion's measurements (clearance, contact-point
speed, joint-torque force) come from ``contact_inference.ContactEvidence``; its gait-phase prior is the stance of
the reference being executed (ControllerReference.stance; a hold: all four). The clearance is measured above the
height map's ground (``ground_height_source`` map, the latest map stamped on arrival; a malformed one is refused with
the reason and the previous one ages out to the plane at ``ground_height_m``); ``/diagnostics`` key ``ground`` says
``map`` or why not.

Lifecycle contract:

* unconfigured → configure: builds the robot model (parameter ``robot_description``; empty = atlas_description)
  and the estimator, creates the lifecycle publisher and the subscriptions.  A bad URDF → FAILURE (stays
  unconfigured, reason logged); an unexpected exception → ERROR → on_error cleans up → unconfigured.
* activate: resets the estimator, starts publishing at ``rate_hz`` (nothing is published while inactive: the
  publisher is a LifecyclePublisher and the timer callback checks the state).
* deactivate / cleanup / shutdown: stop; release everything (cleanup and shutdown).
* Parameters are validated (gpl YAML) and applied at run time (method switch, thresholds, rate).
"""
from __future__ import annotations

import threading
import time
from typing import Optional

import numpy as np
from atlas_crawl_msgs.msg import ContactState, ControllerReference, HeightMap, SupportState
from geometry_msgs.msg import PoseStamped
from rclpy.lifecycle import LifecycleState, TransitionCallbackReturn
from sensor_msgs.msg import JointState

from .. import contact_inference as ci
from ..cartesian import quat_xyzw_to_R
from ..height_map import HeightMapError
from ..parameters import load_parameter_file
from ..robot_info import CONTACT_FRAMES, JOINT_INDEX
from . import topics
from ._common import ReleasingLifecycleNode, declare_validated_parameters, spin_node
from .conversions import height_map_from_msg, pose_msg_to_array, support_to_msg

METHOD_CODE = {"height": ContactState.METHOD_HEIGHT, "velocity": ContactState.METHOD_VELOCITY,
               "effort": ContactState.METHOD_EFFORT, "fusion": ContactState.METHOD_FUSION}


_EVIDENCE_KEYS = ("ground_height_m", "fusion.speed_filter_tau_s", "fusion.torque_noise_nm", "fusion.force_prior_std_n",
                  "fusion.force_time_constant_s", "ground_height_source", "ground_map_max_age_s",
                  "fusion.horizontal_speed_weight")


def _evidence_changed(old, new) -> bool:
    return any(old[k] != new[k] for k in _EVIDENCE_KEYS)


def _pset():
    ps = load_parameter_file(ci.PARAMETER_FILE)
    from ..parameters import ParameterSpec
    ps.specs["robot_description"] = ParameterSpec(
        name="robot_description", type="string", default="",
        description="URDF of the robot for the contact-point forward kinematics; empty = "
                    "atlas_description.urdf_string() (or the kinematics package's reference stand-in).")
    return ps


class ContactInferenceNode(ReleasingLifecycleNode):
    def __init__(self, node_name: str = "contact_inference", **kwargs):
        super().__init__(node_name, **kwargs)
        self._pset = _pset()
        declare_validated_parameters(self, self._pset, self._apply_params)
        self._lock = threading.Lock()
        self._active = False
        self._estimator: Optional[ci.ContactInference] = None
        self._model = None
        self._urdf = None
        self._pub = None
        self._subs = []
        self._timer = None
        self._js = None
        self._pose = None
        self._js_wall = 0.0
        self._pose_wall = 0.0
        self._evidence = None
        self._expected = None     # (4,) bool: the running reference's stance (gait-phase prior); None = no prior
        self.published = 0

    # ------------------------------------------------------------------ parameters
    def _apply_params(self, new) -> Optional[str]:
        with self._lock:
            if new["robot_description"] != self.params["robot_description"] and self._model is not None:
                return "robot_description can only change while unconfigured (cleanup, set, configure)"
            if self._estimator is not None:
                try:
                    evidence = ci.make_evidence(new, self._model, self._urdf) if _evidence_changed(
                        self.params, new) else None
                except (ValueError, KeyError) as e:
                    return str(e)
                reason = self._estimator.set_params(new)
                if reason:
                    return reason
                if evidence is not None:
                    evidence.set_ground_map(self._evidence.ground_map)   # the latest map stays
                    self._evidence = evidence
            else:
                reason = ci.ContactInference(self.params).set_params(new)
                if reason:
                    return reason
            rate_changed = new["rate_hz"] != self.params["rate_hz"]
            self.params = new
        if rate_changed and self._timer is not None:
            self._restart_timer(new["rate_hz"])
        return None

    # ------------------------------------------------------------------ lifecycle
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        try:
            from atlas_crawl_kinematics.model import RobotModel
            urdf = self.params["robot_description"]
            if not urdf:
                from atlas_crawl_kinematics.robot_source import atlas_urdf_string
                urdf = atlas_urdf_string()
            try:
                model = RobotModel(urdf)
                for f in CONTACT_FRAMES:
                    model.frame_index(f)
            except Exception as e:
                self.get_logger().error(f"configure failed: cannot build the robot model: {e}")
                return TransitionCallbackReturn.FAILURE
            self._model = model
            self._urdf = urdf
            self._evidence = ci.make_evidence(self.params, model, urdf)
            self._estimator = ci.ContactInference(self.params)
            self._pub = self.create_lifecycle_publisher(SupportState, topics.SUPPORT_STATE, 10)
            self._subs = [
                self.create_subscription(JointState, topics.JOINT_STATES, self._on_js, 10),
                self.create_subscription(PoseStamped, topics.PELVIS_POSE, self._on_pose, 10),
                self.create_subscription(ControllerReference, topics.REFERENCE, self._on_reference, 10),
                self.create_subscription(HeightMap, topics.HEIGHT_MAP, self._on_height_map, 2),
            ]
            self._restart_timer(self.params["rate_hz"])
            self.get_logger().info(f"configured (method {self.params['method']})")
            return TransitionCallbackReturn.SUCCESS
        except Exception as e:
            self.get_logger().error(f"configure error: {type(e).__name__}: {e}")
            return TransitionCallbackReturn.ERROR

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        with self._lock:
            self._estimator.reset()
            self._evidence.reset()
            self._active = True
        return super().on_activate(state)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        with self._lock:
            self._active = False
        return super().on_deactivate(state)

    def _release(self):
        with self._lock:
            self._active = False
        self._destroy_timer_and_subscriptions()
        if self._pub is not None:
            self.destroy_lifecycle_publisher(self._pub)
            self._pub = None
        self._model = None
        self._evidence = None
        self._expected = None
        self._estimator = None
        self._js = self._pose = None

    # ------------------------------------------------------------------ data
    def _on_js(self, msg: JointState):
        if not (len(msg.name) and len(msg.position) == len(msg.name)):
            self.reject_input(topics.JOINT_STATES, "names and positions missing or of different lengths")
        elif not (np.all(np.isfinite(msg.position)) and np.all(np.isfinite(msg.effort))):
            # defined state: keep the last valid sample; it goes stale (state_timeout_s) and estimation pauses
            self.reject_input(topics.JOINT_STATES, "non-finite position or effort")
        else:
            self._js = msg
            self._js_wall = time.monotonic()

    def _on_height_map(self, msg: HeightMap):
        try:
            hm = height_map_from_msg(msg, self.get_clock().now().nanoseconds * 1e-9)
        except HeightMapError as e:
            self.reject_input(topics.HEIGHT_MAP, str(e))
            return
        with self._lock:
            if self._evidence is not None:
                self._evidence.set_ground_map(hm)

    def _on_reference(self, msg: ControllerReference):
        """The gait phase's expected contacts: the stance of the reference being executed (a hold: all four)."""
        self._expected = np.ones(4, bool) if msg.mode == ControllerReference.MODE_HOLD else \
            np.array([bool(v) for v in msg.stance], bool)

    def _on_pose(self, msg: PoseStamped):
        p = pose_msg_to_array(msg.pose)
        if not np.all(np.isfinite(p)) or not 0.5 < float(np.linalg.norm(p[3:7])) < 1.5:
            self.reject_input(topics.PELVIS_POSE, "non-finite or invalid pelvis pose")
            return
        self._pose = msg
        self._pose_wall = time.monotonic()

    def positions_world(self, q_team: np.ndarray, pose7: np.ndarray):
        """(contact points (4,3), CoM (3,)) in the world from team-order joints and the pelvis pose."""
        k = self._model.forward(q_team)   # RobotModel's default joint order is the team order
        P = k.positions(list(CONTACT_FRAMES))
        c = k.com()
        R = quat_xyzw_to_R(pose7[3:7])
        return (R @ P.T).T + pose7[:3], R @ c + pose7[:3]

    def _on_timer(self):
        if not self._active or self._pub is None:
            return
        js, pose = self._js, self._pose
        now = time.monotonic()
        if js is None or pose is None or now - self._js_wall > self.params["state_timeout_s"] * 10 or \
                now - self._pose_wall > self.params["state_timeout_s"] * 10:
            return  # stale (wall clock; generous because sim time may run slower than real time)
        try:
            q = np.zeros(28)
            eff = np.zeros(28)
            have_eff = len(js.effort) == len(js.name)
            for i, n in enumerate(js.name):
                j = JOINT_INDEX.get(n)
                if j is not None:
                    q[j] = js.position[i]
                    if have_eff:
                        eff[j] = js.effort[i]
            pose7 = pose_msg_to_array(pose.pose)
            pts, com = self.positions_world(q, pose7)
            t = js.header.stamp.sec + js.header.stamp.nanosec * 1e-9
            with self._lock:
                if self._estimator is None or self._evidence is None:
                    return
                ev = self._evidence.update(t, q, pose7, eff if have_eff else None)
                est = self._estimator.update(t, pts, eff if have_eff else None, clearance=ev.clearance,
                                             expected=self._expected, speed=ev.speed, force=ev.force,
                                             force_var=ev.force_var)
                min_margin = self.params["min_margin_m"]
                self._health().extra["ground"] = self._evidence.ground_reason or "map"
            why = ev.reasons + est.reasons
            if why:
                self.get_logger().warning("contact inference held: " + "; ".join(why), throttle_duration_sec=1.0)
            sup = ci.support_from_contacts(est.in_contact, pts, com, min_margin)
            msg = support_to_msg(est.in_contact, est.confidence, METHOD_CODE[est.method], pts, sup.polygon_xy,
                                 sup.com_xy, sup.margin_m, sup.statically_stable, topics.WORLD_FRAME,
                                 js.header.stamp)
            self._pub.publish(msg)
            self.published += 1
        except Exception as e:
            if not self.context.ok():   # Ctrl-C / launch shutdown invalidated the publisher: a normal stop
                return
            self.get_logger().error(f"estimation failed: {type(e).__name__}: {e}", throttle_duration_sec=1.0)


def main(args=None):
    spin_node(ContactInferenceNode, args=args)


if __name__ == "__main__":
    main()
