"""MuJoCo simulation node: physics + the crawl controller core hosted exactly as controller_manager would.

A physics thread steps ``AtlasSim`` (1 kHz) as fast as possible or paced (``real_time_factor``); every control
period (``controller.update_rate_hz``) it does **read → update → write**: joint position/velocity/effort and the
pelvis pose are read from the simulator, ``CrawlControllerCore.update`` computes the joint position commands, and
they are written as servo targets.  It publishes ``/clock``, ``/joint_states``, the ground-truth pelvis pose
(``/atlas/pelvis_pose`` PoseStamped, ``/atlas/pelvis_odom`` Odometry), the ground-truth contacts
(``/atlas/contacts_ground_truth`` SupportState, METHOD_GROUND_TRUTH: a limb is in contact when it touched the ground
in any physics step since the previous message, :meth:`AtlasSim.touch_period`), the controller status, the pelvis IMU
(``/atlas/imu``, with the noise and bias model of :mod:`.sensors`), and serves ``/sim/reset`` (std_srvs/Trigger) for
fresh trials.  Names: atlas_crawl_controller/nodes/topics.py.

Measured vs true: the joint states the hosted controller reads and ``/joint_states`` carry the ``joint_noise.*``
noise. The host also runs the state estimator (:class:`atlas_crawl_controller.estimation.HostedEstimator`, as the
ros2_control plugin's bridge does with ``pose_source: estimate``; parameters
``estimator.*``) every control period on the noisy IMU and joint states with the controller's expected stance, as
legged_control's controller does (estimate → control), and publishes ``/odom`` and ``/state_estimator/pelvis_pose``.
In-process, because the single-threaded Python graph delivers ~70 messages/s per subscription and a 250 Hz IMU
stream would be decimated on its way to a separate node. ``pose_source`` selects the pelvis pose the hosted
controller reads: ``ground_truth`` (legged_control's "cheater" mode) or ``estimate`` (none yet, e.g. while
aligning: a non-finite pose, on which the core holds a Cartesian motion). The ground truth is published either way.
A reset re-initialises the estimator at the reset pose (the known spawn pose).

Sim time is monotonic: a reset restarts the physics at t = 0 but the published clock continues from where it was
(offset), so sim-time timers of the other nodes never see time jump backwards.

This node is not a lifecycle node: it plays the role of the simulator + controller_manager (the controller core
inside it has its own configure/activate cycle, driven by ``controller_autostart`` as a spawner would).
"""
from __future__ import annotations

import json
import os
import threading
import time
from typing import Optional

import numpy as np
import rclpy
from atlas_crawl_msgs.msg import ContactState, ControllerReference, ControllerStatus, HeightMap, SupportState
from builtin_interfaces.msg import Time as TimeMsg
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger

from atlas_crawl_controller import contact_inference as ci
from atlas_crawl_controller.controller_core import CrawlControllerCore
from atlas_crawl_controller.fall_detector import FallDetector
from atlas_crawl_controller.height_map import HeightMap as HeightMapView
from atlas_crawl_controller.controller_core import parameter_set as controller_parameter_set
from atlas_crawl_controller.estimation.hosted import HostedEstimator
from atlas_crawl_controller.estimation.state_estimator import PARAMETER_FILE as ESTIMATOR_PARAMETER_FILE
from atlas_crawl_controller.parameters import ParameterSet, config_path, declare_ros_parameters, load_parameter_file
from atlas_description import JOINT_NAMES
from atlas_crawl_controller.nodes import topics
from atlas_crawl_controller.nodes._common import GuardedNodeMixin, declare_validated_parameters, spin_node
from atlas_crawl_controller.nodes.conversions import (height_map_to_msg, reference_from_msg, status_to_msg,
                                                     support_to_msg)
from atlas_crawl_controller.nodes.state_estimator_node import estimate_msgs
from atlas_crawl_kinematics.rotations import quat_wxyz_to_R

from .height_map import sample_height_map
from .params import default_param_file
from .run_gait import start_state
from .sensors import SensorNoise
from .sim import AtlasSim

PARAMETER_FILE = "mujoco_sim_node_parameters.yaml"
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _prefixed(pset: ParameterSet, prefix: str, read_only: bool = False) -> ParameterSet:
    from dataclasses import replace
    return ParameterSet(pset.namespace, [replace(s, name=prefix + s.name, read_only=read_only or s.read_only)
                                         for s in pset.specs.values()])


def _unprefixed(values, prefix: str) -> dict:
    return {k[len(prefix):]: v for k, v in values.as_dict().items() if k.startswith(prefix)}


def _stamp(t: float) -> TimeMsg:
    ns = int(round(t * 1e9))   # rounding the fraction alone turned 13.9999999996 s into 13.000 s
    return TimeMsg(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


class MujocoSimNode(GuardedNodeMixin, Node):
    """See the module docstring."""

    def __init__(self, node_name: str = "mujoco_sim", sim_overrides: Optional[dict] = None, **kwargs):
        super().__init__(node_name, **kwargs)
        self.start_diagnostics()
        self._pset = load_parameter_file(config_path(PARAMETER_FILE, "atlas_crawl_mujoco", source_dir=_PKG_DIR))
        self._ctrl_pset = _prefixed(controller_parameter_set(), "controller.")
        self._est_base = load_parameter_file(ESTIMATOR_PARAMETER_FILE)
        self._est_pset = _prefixed(self._est_base, "estimator.")
        phys = _physics_parameter_set()
        declare_validated_parameters(self, self._pset, self._apply_params)
        declare_validated_parameters(self, self._ctrl_pset, self._apply_ctrl_params, attr="ctrl_params")
        declare_validated_parameters(self, self._est_pset, self._apply_est_params, attr="est_params")
        # read-only (declared after the two callbacks, which pass parameters of other sets through untouched)
        self.phys_params = declare_ros_parameters(self, phys) if phys is not None else None

        physics = dict(sim_overrides or {})
        if self.phys_params is not None:
            physics = {**_unprefixed(self.phys_params, "physics."), **physics}
        self.sim = AtlasSim(params=physics, seed=self.params["seed"])
        self.core = CrawlControllerCore()
        self._cartesian = None
        if self.params["controller_cartesian"]:
            from atlas_crawl_controller import cartesian
            if cartesian.available():
                self._cartesian = cartesian.make_cartesian_solver()
            else:
                self.get_logger().warn("atlas_crawl_kinematics IIK not available: Cartesian references rejected")
        self._lock = threading.RLock()
        self._time_offset = 0.0
        self._published_t = 0.0
        self._stop = threading.Event()
        self._trials = 0
        self.fall = FallDetector()            # the controller's fall definition on ground truth (fall_state())
        self.fall_events = []
        self.pub_fall = None
        self.noise = SensorNoise({k: v for k, v in self.params.as_dict().items()
                                  if k.startswith(("imu.", "joint_noise."))}, seed=self.params["seed"])
        self.hosted = HostedEstimator(self._est_base.values(_unprefixed(self.est_params, "estimator.")))
        self.estimator = self.hosted.est
        self._q_meas = self._qd_meas = None
        self._imu_meas = None
        self._reset_locked()

        self.pub_clock = self.create_publisher(Clock, topics.CLOCK, 10)
        self.pub_js = self.create_publisher(JointState, topics.JOINT_STATES, 10)
        self.pub_pose = self.create_publisher(PoseStamped, topics.PELVIS_POSE, 10)
        self.pub_odom = self.create_publisher(Odometry, topics.PELVIS_ODOM, 10)
        self.pub_gt = self.create_publisher(SupportState, topics.CONTACTS_GT, 10)
        self.pub_hmap = self.create_publisher(HeightMap, topics.HEIGHT_MAP, 2)
        self.pub_status = self.create_publisher(ControllerStatus, topics.STATUS, 50)
        self.pub_cmd = self.create_publisher(Float64MultiArray, topics.COMMANDS, 10)
        self.pub_imu = self.create_publisher(Imu, topics.IMU, 50)
        self.pub_est_odom = self.create_publisher(Odometry, topics.ODOM, 10)
        self.pub_est_pose = self.create_publisher(PoseStamped, topics.POSE_ESTIMATE, 10)
        self.pub_fall = self.create_publisher(String, topics.FALL_GT, QoSProfile(
            depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        cg = MutuallyExclusiveCallbackGroup()
        self.create_subscription(ControllerReference, topics.REFERENCE, self._on_reference,
                                 QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE), callback_group=cg)
        self.create_service(Trigger, topics.SIM_RESET, self._on_reset, callback_group=cg)
        self._last_status_key = None
        self._echo_t: Optional[float] = None   # last /clock delivered back by this node's executor (pacing)
        self._echo_wall = 0.0
        self.create_subscription(Clock, topics.CLOCK, self._on_clock_echo, 10,
                                 callback_group=MutuallyExclusiveCallbackGroup())
        self._next = {}
        self._thread = threading.Thread(target=self._physics_loop, name="mujoco_physics", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ parameters
    def _apply_params(self, new) -> Optional[str]:
        for k in ("initial_pose", "pose_source"):
            if new[k] != self.params[k]:
                return f"{k} is read-only"
        if hasattr(self, "noise"):
            with self._lock:
                self.noise.set_params(new.as_dict())
        self.params = new
        return None

    def _apply_est_params(self, new) -> Optional[str]:
        try:
            est_values = self._est_base.values(_unprefixed(new, "estimator."))
        except Exception as e:   # noqa: BLE001 — a reason, nothing changed
            return str(e)
        if hasattr(self, "estimator"):
            with self._lock:
                reason = self.hosted.set_params(est_values)
            if reason:
                return reason
        self.est_params = new
        return None

    def _apply_ctrl_params(self, new) -> Optional[str]:
        with self._lock:
            reason = self.core.set_params(_unprefixed(new, "controller."))
        if reason:
            return reason
        self.ctrl_params = new
        return None

    # ------------------------------------------------------------------ reset
    def _reset_locked(self):
        from atlas_crawl_controller.keyframes import NAMED_POSES, load_script, named_pose
        name = self.params["initial_pose"]
        self.sim.fall_check = "none"
        if name in NAMED_POSES:
            q, quat = named_pose(name)
            self.sim.reset(q, base_quat_wxyz=quat)
        else:
            script = load_script(name)
            q = script.keyframes[0].q
            quat = getattr(script, "start_quat_wxyz", None) or (1.0, 0.0, 0.0, 0.0)
            self.sim.reset(q, base_quat_wxyz=tuple(quat))
        _ = start_state
        n_settle = int(round(self.params["settle_s"] / self.sim.dt))
        if n_settle:
            self.sim.step(n_settle)
        self._sim_t0 = self.sim.time  # physics time at which the published clock resumes
        self.core.configure(_unprefixed(self.ctrl_params, "controller."))
        if self._cartesian is not None:
            self.core.set_cartesian_solver(*self._cartesian)
        if self.params["controller_autostart"]:
            self.core.activate(self.sim.joint_q())
        self.sim.set_joint_targets(self.core.last_command() if self.core.active else self.sim.joint_q())
        self._last_ctrl_t = None
        self._trials += 1
        self.fall.reset()
        self.fall_events = []
        self.noise.reset(self.params["seed"] + self._trials)   # new turn-on biases per trial, seeded
        pos, quat_wxyz = self.sim.pelvis_pose()              # the known start pose; then IMU + kinematics only
        self.hosted.reset([pos[0], pos[1], pos[2], quat_wxyz[1], quat_wxyz[2], quat_wxyz[3], quat_wxyz[0]],
                          self.sim_time())

    def _on_reset(self, request, response):
        with self._lock:
            self._time_offset = self._published_t
            try:
                self._reset_locked()
            except Exception as e:  # report, never crash the service
                response.success = False
                response.message = f"reset failed: {type(e).__name__}: {e}"
                return response
        self._next = {}
        response.success = True
        response.message = f"trial {self._trials}: reset to '{self.params['initial_pose']}' at sim time " \
                           f"{self._time_offset:.3f} s"
        return response

    # ------------------------------------------------------------------ references
    def _on_reference(self, msg: ControllerReference):
        with self._lock:
            ok, reason = self.core.set_reference(reference_from_msg(msg))
            t = self._published_t
            rej = self.core.last_rejection
            n_rej = self.core.rejected_references
        if not ok:   # answered under the rejected reference's own id and sender; the running status is untouched
            self.pub_status.publish(status_to_msg(rej, _stamp(t)))
            self.get_logger().warn(f"reference {msg.sequence_id} from '{msg.sender}' rejected ({n_rej} so far): "
                                   f"{reason}", throttle_duration_sec=1.0)

    def _estimate(self, t: float, q, qd) -> None:
        """Feed the state estimator this period's IMU sample and (at ``estimator.joint_rate_hz``) joint states."""
        period = 1.0 / self.params["imu.rate_hz"] if self.params["imu.rate_hz"] > 0 else None
        if period is None:
            self._imu_meas = None
            return
        g, a = self.noise.imu_from(self.sim, t, period)
        self._imu_meas = (g, a, period)
        self.hosted.step(t, q, qd, self.core.expected_stance, g, a)

    def _measured_pose(self, t: float) -> np.ndarray:
        """The pelvis pose the hosted controller reads (``pose_source``; see the module doc)."""
        if self.params["pose_source"] == "estimate":
            return self.hosted.pose7(t)
        pos, quat_wxyz = self.sim.pelvis_pose()
        return np.array([pos[0], pos[1], pos[2], quat_wxyz[1], quat_wxyz[2], quat_wxyz[3], quat_wxyz[0]])

    # ------------------------------------------------------------------ physics thread
    def sim_time(self) -> float:
        return self._time_offset + (self.sim.time - self._sim_t0)

    def _due(self, key: str, t: float, rate_hz: float) -> bool:
        nxt = self._next.get(key)
        if nxt is not None and nxt - t > 1.0 / rate_hz + 1e-9:
            nxt = None   # the rate went up: the new rate applies at once, not after the old period ran out
        if nxt is None or t + 1e-9 >= nxt:
            self._next[key] = (nxt if nxt is not None and t - nxt < 1.0 / rate_hz else t) + 1.0 / rate_hz
            return True
        return False

    def _physics_loop(self):
        wall0 = time.perf_counter()
        sim0 = None
        last_yield = wall0
        while not self._stop.is_set() and rclpy.ok(context=self.context):
            try:
                with self._lock:
                    self._control_period()
                    t = self.sim_time()
            except Exception as e:  # keep the node alive; report once per second
                self.get_logger().error(f"physics loop error: {type(e).__name__}: {e}", throttle_duration_sec=1.0)
                time.sleep(0.01)
                continue
            rtf = self.params["real_time_factor"]
            now = time.perf_counter()
            if rtf > 0:
                if sim0 is None or getattr(self, "_rtf_last", None) != rtf:
                    wall0, sim0, self._rtf_last = now, t, rtf
                lead = (t - sim0) / rtf - (now - wall0)
                if lead > 0:
                    time.sleep(min(lead, 0.1))
                elif lead < -0.5:  # fell behind (e.g. after a pause): re-anchor instead of racing
                    wall0, sim0 = now, t
            else:
                sim0 = None
                self._wait_for_graph(t)
                if now - last_yield > self.params["max_lead_s"]:
                    time.sleep(0.0005)  # let the executor threads run (GIL)
                    last_yield = time.perf_counter()

    def _on_clock_echo(self, msg: Clock):
        self._echo_t = msg.clock.sec + msg.clock.nanosec * 1e-9
        self._echo_wall = time.monotonic()

    def _wait_for_graph(self, t: float) -> None:
        """As fast as possible = as fast as the graph follows: wait while the executor lags the published clock by
        more than max_graph_lag_s (bounded: 0.5 s wall per period; off when no echo arrived for 5 s, e.g. a node
        that nobody spins)."""
        lag_max = self.params["max_graph_lag_s"]
        if lag_max <= 0 or self._echo_t is None or time.monotonic() - self._echo_wall > 5.0:
            return
        w_end = time.monotonic() + 0.5
        while t - self._echo_t > lag_max and time.monotonic() < w_end and not self._stop.is_set():
            time.sleep(0.0005)

    def _control_period(self):
        sim = self.sim
        n = max(1, int(round(1.0 / (self.ctrl_params["controller.update_rate_hz"] * sim.dt))))
        # read
        t = self.sim_time()
        q, qd = self.noise.joints(sim.joint_q(), sim.joint_qd())
        tau = sim.joint_effort()
        self._q_meas, self._qd_meas = q, qd
        self._estimate(t, q, qd)
        pose = self._measured_pose(t)
        # update
        period = (t - self._last_ctrl_t) if self._last_ctrl_t is not None else n * sim.dt
        self._last_ctrl_t = t
        cmd = self.core.update(t, period, q, qd, tau, pose)
        # write
        if self.core.active:
            sim.set_joint_targets(cmd)
        sim.step(n)
        self._publish(self.sim_time())

    def _publish(self, t: float):
        self._published_t = t
        stamp = _stamp(t)
        p = self.params
        if self._due("clock", t, p["clock_rate_hz"]):
            self.pub_clock.publish(Clock(clock=stamp))
        if self._due("js", t, p["joint_state_rate_hz"]):
            js = JointState()
            js.header.stamp = stamp
            js.name = list(JOINT_NAMES)
            js.position = (self.sim.joint_q() if self._q_meas is None else self._q_meas).tolist()
            js.velocity = (self.sim.joint_qd() if self._qd_meas is None else self._qd_meas).tolist()
            js.effort = self.sim.joint_effort().tolist()
            self.pub_js.publish(js)
            self.pub_cmd.publish(Float64MultiArray(data=self.core.last_command().tolist()))
        if self._due("pose", t, p["pelvis_pose_rate_hz"]):
            self._publish_pose(stamp)
        if p["imu.rate_hz"] > 0 and self._imu_meas is not None and self._due("imu", t, p["imu.rate_hz"]):
            self._publish_imu(stamp)
        if self._due("odom", t, self.est_params["estimator.publish_rate_hz"]):
            self._publish_estimate(t, stamp)
        if self._due("gt", t, p["contacts_rate_hz"]):
            self._publish_contacts(stamp)
        if p["height_map_rate_hz"] > 0 and self._due("hmap", t, p["height_map_rate_hz"]):
            self._publish_height_map(stamp)
        if self._due("fall", t, p["pelvis_pose_rate_hz"]):
            self._update_fall(t)
        st = self.core.status()
        key = (st.sequence_id, st.reached, st.accepted, st.state, st.reason)
        if key != self._last_status_key or self._due("status", t, p["status_rate_hz"]):
            self._last_status_key = key
            self.pub_status.publish(status_to_msg(st, stamp))

    def _publish_height_map(self, stamp):
        """Ground-truth height map around the pelvis (height_map.sample_height_map): stands in for a lidar map."""
        p = self.params
        h, origin = sample_height_map(self.sim, self.sim.pelvis_pose()[0][:2], p["height_map_size_m"],
                                      p["height_map_resolution_m"])
        hm = HeightMapView.from_fields(self.sim_time(), float(p["height_map_resolution_m"]), h.shape[1], h.shape[0],
                                       float(origin[0]), float(origin[1]), h.ravel())
        self.pub_hmap.publish(height_map_to_msg(hm, stamp, topics.WORLD_FRAME))
        # the same map for the hosted estimator's contact heights (leg.ground_height_source map)
        self.estimator.set_ground_map(hm)

    def _publish_pose(self, stamp):
        pos, q = self.sim.pelvis_pose()  # wxyz
        ps = PoseStamped()
        ps.header.stamp = stamp
        ps.header.frame_id = topics.WORLD_FRAME
        ps.pose.position.x, ps.pose.position.y, ps.pose.position.z = (float(v) for v in pos)
        ps.pose.orientation.w, ps.pose.orientation.x, ps.pose.orientation.y, ps.pose.orientation.z = \
            (float(v) for v in q)
        self.pub_pose.publish(ps)
        od = Odometry()
        od.header = ps.header
        od.child_frame_id = topics.PELVIS_FRAME
        od.pose.pose = ps.pose
        v_w, w_w = self.sim.pelvis_twist()
        R = quat_wxyz_to_R(q)
        v_b, w_b = R.T @ v_w, R.T @ w_w       # REP 105: odometry twist in the child frame
        od.twist.twist.linear.x, od.twist.twist.linear.y, od.twist.twist.linear.z = (float(v) for v in v_b)
        od.twist.twist.angular.x, od.twist.twist.angular.y, od.twist.twist.angular.z = (float(v) for v in w_b)
        self.pub_odom.publish(od)

    def _publish_estimate(self, t: float, stamp) -> None:
        """/odom (odom → pelvis, covariances) and the PoseStamped alias, while the estimate is valid."""
        e = self.estimator.estimate(t)
        if e is None:
            return
        ep = self.est_params
        od, ps = estimate_msgs(e, stamp, ep["estimator.frames.odom_frame"], ep["estimator.frames.base_frame"],
                               ep["estimator.frames.pose_frame"])
        self.pub_est_odom.publish(od)
        self.pub_est_pose.publish(ps)

    def _publish_imu(self, stamp):
        """sensor_msgs/Imu at the pelvis origin, pelvis axes: the MuJoCo gyro and accelerometer of the last physics
        step plus the noise model, as the estimator read it (orientation not provided: covariance[0] = -1, REP 145)."""
        g, a, period = self._imu_meas
        vg, va = self.noise.imu_covariances(period)
        m = Imu()
        m.header.stamp = stamp
        m.header.frame_id = topics.PELVIS_FRAME
        m.orientation_covariance[0] = -1.0
        m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z = (float(v) for v in g)
        m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z = (float(v) for v in a)
        for i in (0, 4, 8):
            m.angular_velocity_covariance[i] = vg
            m.linear_acceleration_covariance[i] = va
        self.pub_imu.publish(m)

    def _publish_contacts(self, stamp):
        touch = self.sim.touch_period()     # in contact in any physics step since the previous message
        pts = self.sim.contact_site_pos()
        com = self.sim.com()
        sup = ci.support_from_contacts(touch, pts, com)
        conf = np.where(touch, 1.0, 1.0)
        msg = support_to_msg(touch, conf, ContactState.METHOD_GROUND_TRUTH, pts, sup.polygon_xy, sup.com_xy,
                             sup.margin_m, sup.statically_stable, topics.WORLD_FRAME, stamp)
        self.pub_gt.publish(msg)

    # ------------------------------------------------------------------ falls (ground truth)
    def _update_fall(self, t: float):
        was = self.fall.state.fallen
        st = self.fall.update(t, self.sim.pelvis_pose_xyzw(), self.sim.floor_bodies(), self.sim.limb_contacts()[0])
        if st.fallen != was:
            if st.fallen:
                self.fall_events.append({"onset_t": st.onset_t, "flagged_t": st.flagged_t, "reason": st.reason})
                self.get_logger().warn(f"fall at sim time {st.onset_t:.3f} s: {st.reason} ({st.posture})")
            if self.pub_fall is not None:
                self.pub_fall.publish(String(data=json.dumps(self.fall_state())))

    def fall_state(self) -> dict:
        """Ground-truth fall flag: {fallen, reason, posture, onset_t, flagged_t, events (since the last reset)}."""
        with self._lock:
            s = self.fall.state
            return {"fallen": bool(s.fallen), "reason": s.reason, "posture": s.posture,
                    "onset_t": None if s.onset_t != s.onset_t else float(s.onset_t),
                    "flagged_t": None if s.flagged_t != s.flagged_t else float(s.flagged_t),
                    "events": [dict(e) for e in self.fall_events]}

    def push(self, impulse_ns, duration_s: float = 0.1):
        """Push the pelvis (AtlasSim.push) from another thread: a world impulse (3,) N·s over duration_s."""
        with self._lock:
            self.sim.push(impulse_ns, duration_s)

    # ------------------------------------------------------------------ shutdown
    def destroy_node(self):
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=2.0)
        return super().destroy_node()


def _physics_parameter_set() -> Optional[ParameterSet]:
    """atlas_crawl_mujoco's physics parameters (read-only here: changing them needs a new model)."""
    try:
        ps = load_parameter_file(default_param_file())
        return _prefixed(ps, "physics.", read_only=True)
    except Exception:
        return None


def main(args=None):
    spin_node(MujocoSimNode, args=args)


if __name__ == "__main__":
    main()
