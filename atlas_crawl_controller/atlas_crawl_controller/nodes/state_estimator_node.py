"""state_estimator node: /atlas/imu + /joint_states + the expected contacts → /odom, /state_estimator/pelvis_pose, TF.

A thin adapter around :class:`atlas_crawl_controller.estimation.StateEstimator` (attitude EKF + leg-kinematics
Kalman filter, issue 14 §1); the numerics live there and are tested without ROS.

* in: ``/atlas/imu`` (sensor_msgs/Imu, frame pelvis), ``/joint_states`` (any joint order, by name),
  ``/atlas/height_map`` (the ground under the contacts), and the stance
  per ``contacts.source``: ``reference`` (``/crawl_controller/reference``: the gait phase's stance; a hold: all
  four), ``support_state`` (contact inference) or ``all``;
* out: ``/odom`` (nav_msgs/Odometry, ``odom`` → ``pelvis``, covariances), ``/state_estimator/pelvis_pose``
  (PoseStamped, the alias consumers read when bringup's ``pose_source`` is ``estimate``) and, when tf2_msgs is
  installed, ``odom → pelvis`` on ``/tf``; all at ``publish_rate_hz`` (input time);
* ``/state_estimator/reset`` (std_srvs/Trigger): re-initialise (call it after ``/sim/reset``).

Initial pose: ``/initialpose`` (geometry_msgs/PoseWithCovarianceStamped, as RViz's "2D Pose Estimate"), or with
``init_from_ground_truth`` (simulation) the next ``/atlas/pelvis_pose``: read once per (re)initialisation, never
while running. The odom frame then coincides with the world. After initialisation the robot must hold still for
``alignment_s``. Bad input (non-finite, malformed, time going backwards) is not integrated and counted; the node
then publishes nothing until valid input makes the estimate fresh again.
"""
from __future__ import annotations

import threading
from typing import Optional

import numpy as np
from atlas_crawl_msgs.msg import ControllerReference, HeightMap, SupportState
from geometry_msgs.msg import PoseStamped, PoseWithCovarianceStamped, TransformStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState
from std_srvs.srv import Trigger

from ..estimation import StateEstimator
from ..estimation.state_estimator import PARAMETER_FILE
from ..height_map import HeightMapError
from ..parameters import load_parameter_file
from atlas_description import JOINT_INDEX
from . import topics
from ._common import GuardedNodeMixin, declare_validated_parameters, spin_node
from .conversions import array_to_pose_msg, height_map_from_msg, pose_msg_to_array


def _t(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def odometry_msg(e, stamp, odom_frame: str, base_frame: str) -> Odometry:
    """:class:`EstimatedState` → nav_msgs/Odometry (pose in ``odom_frame``, twist in ``base_frame``, REP 105)."""
    od = Odometry()
    od.header.stamp = stamp
    od.header.frame_id = odom_frame
    od.child_frame_id = base_frame
    od.pose.pose = array_to_pose_msg(e.pose7)
    od.pose.covariance = [float(v) for v in e.pose_covariance.ravel()]
    v, w = e.velocity_body, e.angular_velocity_body
    od.twist.twist.linear.x, od.twist.twist.linear.y, od.twist.twist.linear.z = (float(x) for x in v)
    od.twist.twist.angular.x, od.twist.twist.angular.y, od.twist.twist.angular.z = (float(x) for x in w)
    od.twist.covariance = [float(x) for x in e.twist_covariance.ravel()]
    return od


def estimate_msgs(e, stamp, odom_frame: str, base_frame: str, pose_frame: str):
    """(nav_msgs/Odometry, the PoseStamped alias) of one :class:`EstimatedState` (every host publishes both)."""
    od = odometry_msg(e, stamp, odom_frame, base_frame)
    ps = PoseStamped()
    ps.header.stamp = stamp
    ps.header.frame_id = pose_frame
    ps.pose = od.pose.pose
    return od, ps


class StateEstimatorNode(GuardedNodeMixin, Node):
    """See the module docstring."""

    def __init__(self, node_name: str = "state_estimator", **kwargs):
        super().__init__(node_name, **kwargs)
        self.start_diagnostics()
        self._pset = load_parameter_file(PARAMETER_FILE)
        declare_validated_parameters(self, self._pset, self._apply_params)
        self._lock = threading.Lock()
        self.est = StateEstimator(self.params)
        self._stance = np.ones(4, bool)
        self._want_init = bool(self.params["init_from_ground_truth"])
        self._init_after = -np.inf   # ground-truth poses stamped before this (a reset) are not used
        self._next_pub: Optional[float] = None
        self.published = 0
        self.rejected = 0
        self.pub_odom = self.create_publisher(Odometry, topics.ODOM, 10)
        self.pub_pose = self.create_publisher(PoseStamped, topics.POSE_ESTIMATE, 10)
        self.pub_tf = None
        try:
            from tf2_msgs.msg import TFMessage
            self._tf_type = TFMessage
            self.pub_tf = self.create_publisher(TFMessage, topics.TF, 100)
        except ImportError:
            self.get_logger().warn("tf2_msgs is not installed (not on PyPI): no odom -> pelvis on /tf; "
                                   "/odom and the pose alias are published")
        self.create_subscription(Imu, topics.IMU, self._on_imu, 500)   # 2 s at 250 Hz: a stalled executor catches up
        self.create_subscription(JointState, topics.JOINT_STATES, self._on_js, 20)
        self.create_subscription(ControllerReference, topics.REFERENCE, self._on_reference, 10)
        self.create_subscription(SupportState, topics.SUPPORT_STATE, self._on_support, 10)
        self.create_subscription(PoseWithCovarianceStamped, "/initialpose", self._on_initialpose, 1)
        self.create_subscription(PoseStamped, topics.PELVIS_POSE, self._on_ground_truth, 1)
        self.create_subscription(HeightMap, topics.HEIGHT_MAP, self._on_height_map, 2)
        self.create_service(Trigger, topics.ESTIMATOR_RESET, self._on_reset)

    # ------------------------------------------------------------------ parameters
    def _apply_params(self, new) -> Optional[str]:
        if hasattr(self, "est"):
            with self._lock:
                reason = self.est.set_params(new)
            if reason:
                return reason
        self.params = new
        return None

    # ------------------------------------------------------------------ initialisation
    def _init(self, pose7, t: float, what: str) -> Optional[str]:
        try:
            with self._lock:
                self.est.reset(pose7, t)
        except ValueError as e:
            return str(e)
        self._want_init = False
        self._next_pub = None
        self.get_logger().info(f"initialised from {what} at t = {t:.3f} s: aligning for "
                               f"{self.params['alignment_s']:.2f} s (hold still)")
        return None

    def _on_initialpose(self, msg: PoseWithCovarianceStamped):
        reason = self._init(pose_msg_to_array(msg.pose.pose), _t(msg.header.stamp), "/initialpose")
        if reason:
            self.reject_input("/initialpose", reason)

    def _on_ground_truth(self, msg: PoseStamped):
        if not self._want_init or _t(msg.header.stamp) <= self._init_after:
            return          # ground truth is read once per (re)initialisation, never while running
        reason = self._init(pose_msg_to_array(msg.pose), _t(msg.header.stamp), topics.PELVIS_POSE)
        if reason:
            self.reject_input(topics.PELVIS_POSE, reason)

    def request_reset(self) -> str:
        """Drop the estimate; re-initialise from the next pose stamped after now (see the module doc)."""
        now = self.get_clock().now().nanoseconds * 1e-9
        with self._lock:
            self.est = StateEstimator(self.params, kinematics=self.est.kin)
            self._init_after = now
            self._want_init = bool(self.params["init_from_ground_truth"])
        return "re-initialising from the next ground-truth pelvis pose" if self._want_init else \
            "waiting for /initialpose"

    def _on_reset(self, request, response):
        response.message = self.request_reset()
        response.success = True
        return response

    # ------------------------------------------------------------------ inputs
    def _on_height_map(self, msg: HeightMap):
        try:
            hm = height_map_from_msg(msg, _t(msg.header.stamp))
        except HeightMapError as e:
            self.reject_input(topics.HEIGHT_MAP, str(e))
            return
        with self._lock:
            self.est.set_ground_map(hm)

    def _on_reference(self, msg: ControllerReference):
        if self.params["contacts.source"] == "reference":
            self._stance = np.ones(4, bool) if msg.mode == ControllerReference.MODE_HOLD else \
                np.array([bool(v) for v in msg.stance], bool)

    def _on_support(self, msg: SupportState):
        if self.params["contacts.source"] == "support_state" and len(msg.contacts) == 4:
            self._stance = np.array([bool(c.in_contact) and c.confidence >= self.params["contacts.min_confidence"]
                                     for c in msg.contacts], bool)

    def _stance_now(self) -> np.ndarray:
        return np.ones(4, bool) if self.params["contacts.source"] == "all" else self._stance

    def _on_js(self, msg: JointState):
        n = len(msg.name)
        if n == 0 or len(msg.position) != n or len(msg.velocity) != n:
            self.reject_input(topics.JOINT_STATES, "names, positions and velocities missing or of different lengths")
            self.rejected += 1
            return
        q = np.full(len(JOINT_INDEX), np.nan)
        qd = np.full(len(JOINT_INDEX), np.nan)
        for name, p, v in zip(msg.name, msg.position, msg.velocity):
            i = JOINT_INDEX.get(name)
            if i is not None:
                q[i], qd[i] = p, v
        with self._lock:
            ok = self.est.update_joints(_t(msg.header.stamp), q, qd, self._stance_now())
            reason = self.est.reason
        if not ok and reason and not reason.startswith("not initialised"):
            self.reject_input(topics.JOINT_STATES, reason)
            self.rejected += 1

    def _on_imu(self, msg: Imu):
        g = (msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z)
        a = (msg.linear_acceleration.x, msg.linear_acceleration.y, msg.linear_acceleration.z)
        t = _t(msg.header.stamp)
        with self._lock:
            ok = self.est.update_imu(t, g, a)
            reason = self.est.reason
            e = self.est.estimate(t) if ok else None
        if not ok:
            if reason and not reason.startswith("not initialised"):
                self.reject_input(topics.IMU, reason)
                self.rejected += 1
            return
        if e is not None and (self._next_pub is None or t + 1e-9 >= self._next_pub):
            self._next_pub = t + 1.0 / self.params["publish_rate_hz"]
            self._publish(e, msg.header.stamp)

    # ------------------------------------------------------------------ output
    def _publish(self, e, stamp) -> None:
        fr = self.params
        od, ps = estimate_msgs(e, stamp, fr["frames.odom_frame"], fr["frames.base_frame"], fr["frames.pose_frame"])
        self.pub_odom.publish(od)
        self.pub_pose.publish(ps)
        if self.pub_tf is not None:
            tf = TransformStamped()
            tf.header = od.header
            tf.child_frame_id = od.child_frame_id
            p, q = od.pose.pose.position, od.pose.pose.orientation
            tf.transform.translation.x, tf.transform.translation.y, tf.transform.translation.z = p.x, p.y, p.z
            tf.transform.rotation = q
            self.pub_tf.publish(self._tf_type(transforms=[tf]))
        self.published += 1


def main(args=None):
    spin_node(StateEstimatorNode, args=args)


if __name__ == "__main__":
    main()
