"""StateEstimator: pelvis pose and twist from the IMU, the joint states and the stance contacts (issue 14 §1).

Two filters in cascade, as legged_control's StateEstimateBase / KalmanFilterEstimate (orientation first, then the
linear Kalman filter with the orientation given):

1. :class:`AttitudeEKF` — orientation and gyro bias from gyro + accelerometer (tilt observable, heading integrated).
2. :class:`LegOdometryKF` — position, velocity and the four contact positions from the accelerometer (predict)
   and forward kinematics of the stance contacts (update), weighted by the stance with a touchdown ramp. While
   only a support diagonal is expected in stance (the dynamic diagonal crawls) and for a moment after, the
   ``leg.diagonal_support.*`` values replace their ``leg.*`` namesakes: those landings are hard.

Life cycle: :meth:`reset` (initial pose: position and heading, e.g. /initialpose or the simulator's spawn) →
static alignment for ``alignment_s`` (mean gyro = bias, mean accelerometer = tilt; the robot must hold still) →
running. Inputs: :meth:`update_imu` (predict, attitude correction) at the IMU rate and :meth:`update_joints`
(kinematic update) at the joint-state rate.

Bad input changes nothing (defined hold): a non-finite or malformed sample, time going backwards or a gap longer
than ``input_timeout_s`` is not integrated; the call returns False and :attr:`reason` says why. :meth:`estimate`
returns None while aligning, before the first sample, or when the last accepted IMU sample is older than
``input_timeout_s`` (stale).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..parameters import ParamValues, load_parameter_file
from .attitude_ekf import AttitudeEKF, tilt_aligned
from .contact_tilt import contact_tilt
from .leg_odometry_kf import LegOdometryKF

PARAMETER_FILE = "state_estimator_parameters.yaml"


def default_params(overrides: Optional[dict] = None) -> ParamValues:
    return load_parameter_file(PARAMETER_FILE).values(overrides or {})


def _sub(params: ParamValues, prefix: str) -> dict:
    return {k[len(prefix):]: v for k, v in params.as_dict().items() if k.startswith(prefix)}


@dataclass
class EstimatedState:
    """Pelvis state in the odom/world frame (z up). Twist: linear in the world and in the pelvis frame, angular in
    the pelvis frame (bias-corrected gyro). Covariances 6×6: pose [x y z rx ry rz] (rotation about world axes),
    twist [vx vy vz wx wy wz] in the pelvis frame (REP 105 / nav_msgs/Odometry)."""

    t: float
    position: np.ndarray
    R: np.ndarray
    quat_xyzw: np.ndarray
    velocity_world: np.ndarray
    velocity_body: np.ndarray
    angular_velocity_body: np.ndarray
    pose_covariance: np.ndarray
    twist_covariance: np.ndarray
    gyro_bias: np.ndarray
    contacts_world: np.ndarray
    stance_weight: np.ndarray
    pose7: np.ndarray = field(default=None)   # [x y z qx qy qz qw] (the controller core's pelvis_pose)


class StateEstimator:
    """See the module doc. ``kinematics``: callable (q, qd) -> (r (4,3), ṙ (4,3)) in the pelvis frame
    (default :class:`ContactKinematics` on the Atlas URDF)."""

    def __init__(self, params=None, kinematics=None):
        self.params = params if isinstance(params, ParamValues) else default_params(params)
        if kinematics is None:
            from .contact_kinematics import ContactKinematics
            kinematics = ContactKinematics(point=self.params["leg.contact_point"])
        self.kin = kinematics
        self.reason = "not initialised: no initial pose"
        self._state = "uninitialised"    # uninitialised | aligning | running
        self._make_filters()
        self._map = None
        self.map_reason = ""

    # ------------------------------------------------------------------ parameters
    def _make_filters(self) -> None:
        p = self.params
        self.attitude = AttitudeEKF(p["attitude.gyro_noise_density_rad_per_s_sqrt_hz"],
                                    p["attitude.gyro_bias_random_walk_rad_per_s2_sqrt_hz"],
                                    p["attitude.accel_noise_m_per_s2"], p["attitude.accel_gate_m_per_s2"],
                                    p["attitude.gravity_m_per_s2"], p["attitude.accel_window_s"],
                                    p["attitude.accel_window_noise_m_per_s2"])
        self.leg = LegOdometryKF(_sub(p, "leg."), p["attitude.gravity_m_per_s2"])
        pre = "leg.diagonal_support."
        self._diagonal_profile = {k[len(pre):]: v for k, v in p.as_dict().items()
                                  if k.startswith(pre) and k != pre + "hold_s"}

    def set_params(self, params: ParamValues) -> Optional[str]:
        """New parameter values (validated by the caller's ParameterSet); the filter states are kept."""
        try:
            att_state, att_P = self.attitude.state(), self.attitude.P.copy()
            leg_kf = self.leg.kf
            old = self.params
            self.params = params
            self._make_filters()
            self.attitude.restore(*att_state, att_P)
            self.leg.kf = leg_kf
        except Exception as e:   # noqa: BLE001 — a reason, nothing changed
            self.params = old
            self._make_filters()
            return f"{type(e).__name__}: {e}"
        return None

    # ------------------------------------------------------------------ life cycle
    @property
    def running(self) -> bool:
        return self._state == "running"

    @property
    def aligning(self) -> bool:
        return self._state == "aligning"

    def reset(self, initial_pose7, t: Optional[float] = None) -> None:
        """(Re)initialise at ``initial_pose7`` = [x y z qx qy qz qw] (position and heading; the tilt is measured
        during the alignment). Raises ValueError on a non-finite or zero-quaternion pose (nothing changed)."""
        from atlas_crawl_kinematics.rotations import quat_xyzw_to_R
        pose = np.asarray(initial_pose7, float).reshape(-1)
        if pose.shape != (7,) or not np.all(np.isfinite(pose)) or not np.linalg.norm(pose[3:]) > 1e-6:
            raise ValueError("StateEstimator.reset: the initial pose must be 7 finite values [x y z qx qy qz qw]")
        self._p0 = pose[:3].copy()
        self._R0 = quat_xyzw_to_R(pose[3:])
        self._state = "aligning"
        self._t_align0 = t
        self._gyro_sum = np.zeros(3)
        self._accel_sum = np.zeros(3)
        self._n_align = 0
        self._g_lp: Optional[np.ndarray] = None
        self._t_imu: Optional[float] = None
        self._joints = None            # last (r, ṙ) from valid joint states
        self._omega = np.zeros(3)
        self._stance = np.ones(4, bool)
        self._t_touchdown = np.full(4, -np.inf)
        self._weight = np.ones(4)        # stance weights with the touchdown ramp (contact source)
        self._used = np.zeros(4)         # weights after the slip gate, as used by the last kinematic update
        self._t_contact = None           # time of the last kinematic update that used a contact
        self._t_diagonal = -math.inf     # last time only a support diagonal was expected in stance
        self.leg.profile = {}
        self.tilt_reason = ""            # why the last contact tilt measurement was not used ("" = used)
        if hasattr(self.kin, "reset"):
            self.kin.reset()
        self.reason = "aligning: hold the robot still"
        self.imu_accepted = self.joints_accepted = 0

    def _finish_alignment(self) -> None:
        p = self.params
        if self._n_align > 0:
            bias0 = self._gyro_sum / self._n_align
            up = self._accel_sum / self._n_align
            R0 = tilt_aligned(self._R0, up) if np.linalg.norm(up) > 1e-6 else self._R0
        else:
            bias0, R0 = np.zeros(3), self._R0
        bias_std = max(p["attitude.initial_bias_std_rad_per_s"],
                       p["attitude.gyro_noise_density_rad_per_s_sqrt_hz"] / math.sqrt(max(p["alignment_s"], 1e-3)))
        self.attitude.initialize(R0, bias0, p["attitude.initial_yaw_std_rad"], bias_std,
                                 p["attitude.initial_tilt_std_rad"])
        if self.params["leg.contact_point"] == "lowest":    # the lowest points depend on the tilt
            self._joints = self.kin(self._q_last, self._qd_last, R=R0)
        r, _rd = self._joints
        self.leg.initialize(self._p0, R0, r)
        self._used = np.zeros(4)
        self._state = "running"
        self.reason = ""

    # ------------------------------------------------------------------ inputs
    def update_imu(self, t: float, gyro, accel) -> bool:
        """One IMU sample at time ``t`` [s]: gyro [rad/s], specific force [m/s²], both in the pelvis frame."""
        if self._state == "uninitialised":
            return False
        g = np.asarray(gyro, float).reshape(-1)
        a = np.asarray(accel, float).reshape(-1)
        if g.shape != (3,) or a.shape != (3,) or not (np.all(np.isfinite(g)) and np.all(np.isfinite(a))) \
                or not math.isfinite(t):
            self.reason = "non-finite or malformed IMU sample: not integrated (hold)"
            return False
        if self._state == "aligning" and self._t_align0 is not None and t < self._t_align0:
            self.reason = "IMU sample from before the initialisation: dropped"
            return False
        if self._t_imu is not None and t <= self._t_imu:
            self.reason = f"IMU time did not advance ({t:.6f} <= {self._t_imu:.6f} s): sample dropped (hold)"
            return False
        dt = None if self._t_imu is None else t - self._t_imu
        self._t_imu = t
        if self._state == "aligning":
            if self._t_align0 is None:
                self._t_align0 = t
            # stillness on the gyro low-passed over ~0.05 s (white noise alone would trip a per-sample test)
            k = 1.0 if dt is None else min(1.0, dt / 0.05)
            self._g_lp = g.copy() if self._g_lp is None else self._g_lp + k * (g - self._g_lp)
            if float(np.linalg.norm(self._g_lp)) > self.params["alignment_still_gyro_rad_per_s"]:
                # moving (e.g. the jolt of a controller activation): the mean gyro would not be the bias; restart
                self._t_align0, self._gyro_sum, self._accel_sum, self._n_align = t, np.zeros(3), np.zeros(3), 0
                self.reason = f"aligning: the robot moves (|gyro| {np.linalg.norm(self._g_lp):.3f} rad/s); " \
                              "hold it still"
                return True
            self._gyro_sum += g
            self._accel_sum += a
            self._n_align += 1
            if t - self._t_align0 >= self.params["alignment_s"] - 1e-9 and self._joints is not None:
                self._finish_alignment()
            return True
        if dt is None or dt > self.params["input_timeout_s"]:
            self.reason = f"IMU gap of {dt if dt is not None else float('nan'):.3f} s > input_timeout_s: " \
                          "not integrated (hold)"
            return False
        self._omega = self.attitude.predict(g, dt)
        self.attitude.update_accel(a)
        self._update_weights(t)
        self.leg.predict(self.attitude.R @ a, dt, self._used)
        self.imu_accepted += 1
        self.reason = ""
        return True

    def update_joints(self, t: float, q, qd, stance) -> bool:
        """Joint positions/velocities (28, team order) and the stance flags (4,) (LW, RW, LK, RK) at time ``t``."""
        q = np.asarray(q, float).reshape(-1)
        qd = np.asarray(qd, float).reshape(-1)
        st = np.asarray(stance, bool).reshape(-1)
        if q.shape != (28,) or qd.shape != (28,) or st.shape != (4,) or \
                not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd))):
            self.reason = "non-finite or malformed joint state / stance: kinematic update skipped (hold)"
            return False
        if self._state == "uninitialised":
            return False
        self._q_last, self._qd_last = q, qd
        running = self._state == "running"
        R = self.attitude.R if running else None
        r, rd = self.kin(q, qd, R=R)
        self._joints = (np.asarray(r, float), np.asarray(rd, float))
        switched = np.asarray(getattr(self.kin, "switched", np.zeros(4, bool)), bool) if running else np.zeros(4, bool)
        new_td = st & (~self._stance | switched)
        self._t_touchdown[new_td] = t if self._t_imu is None else self._t_imu
        self._stance = st.copy()
        if not running:
            if self._state == "aligning" and self._t_imu is not None and self._t_align0 is not None and \
                    self._t_imu - self._t_align0 >= self.params["alignment_s"] - 1e-9:
                self._finish_alignment()
            return True
        self._update_weights(self._t_imu)
        r, rd = self._joints
        t_now = t if self._t_imu is None else self._t_imu
        self._select_profile(st, t_now)
        if self._used.sum() > 0 or self._weight.sum() <= 0 or self._t_contact is None:
            self._t_contact = t_now       # the last update with a kinematic contact (or none expected)
        lim = self.leg.param("max_imu_only_s")
        used = self.leg.slip_gate(R, r, rd, self._omega, self._weight,
                                  consensus=lim > 0 and t_now - self._t_contact > lim)
        ground = self._ground_z(t)
        if self.params["leg.tilt_measurement"] and self._tilt_update(R, r, used, ground):
            R = self.attitude.R
        for i in np.flatnonzero((used > 0) & ((self._used <= 0) | switched)):
            self.leg.anchor(int(i), R @ r[i])       # touchdown, end of a slip or a new lowest point
        self.leg.update(R, r, rd, self._omega, used, height_weight=self._weight, ground_z=ground)
        self._used = used
        self.joints_accepted += 1
        return True

    def _select_profile(self, stance: np.ndarray, t: float) -> None:
        """The leg.diagonal_support.* values replace their leg.* namesakes while only a support diagonal (LW+RK or
        RW+LK) is expected in stance and for ``hold_s`` after: the dynamic crawl's landings (issue 14 §1)."""
        if stance.sum() == 2 and stance[0] == stance[3]:
            self._t_diagonal = t
        hold = self.params["leg.diagonal_support.hold_s"]
        self.leg.profile = self._diagonal_profile if hold > 0 and t - self._t_diagonal <= hold else {}

    @property
    def diagonal_support_profile(self) -> bool:
        """True while the leg.diagonal_support.* values are in use."""
        return bool(self.leg.profile)

    def _tilt_update(self, R: np.ndarray, r: np.ndarray, used: np.ndarray, ground) -> bool:
        """The attitude's tilt corrected by the slip-gated stance contacts on the known ground (contact_tilt)."""
        p = self.params
        g = np.full(4, p["leg.ground_height_m"]) if ground is None else np.asarray(ground, float)
        u = (R @ np.asarray(r, float).T).T
        res = g + p["leg.contact_height_offset_m"] - (self.leg.position[2] + u[:, 2])
        m, self.tilt_reason = contact_tilt(u, res, used, p["leg.tilt_height_noise_m"],
                                           p["leg.tilt_max_correction_rad"])
        if m is None:
            return False
        self.attitude.update_tilt(m.phi_xy, m.cov)
        return True

    def set_ground_map(self, height_map) -> None:
        """The ground under the robot for the contact-height measurement (``leg.ground_height_source`` map): any
        object with ``height_at(x, y)`` (NaN off the map) and ``stamp_s``, e.g. a received
        :class:`atlas_crawl_controller.height_map.HeightMap`. None forgets it."""
        self._map = height_map

    def _ground_z(self, t: Optional[float]):
        """(4,) ground heights under the contacts' estimated positions, or None for the flat ground_height_m."""
        if self.params["leg.ground_height_source"] != "map":
            return None
        m = getattr(self, "_map", None)
        if m is None or t is None or t - m.stamp_s > self.params["leg.ground_map_max_age_s"]:
            self.map_reason = "no fresh height map: contact heights not measured (z drifts)"
            return np.full(4, np.nan)
        self.map_reason = ""
        c = self.leg.contacts
        return np.array([m.height_at(float(c[i, 0]), float(c[i, 1])) for i in range(4)])

    def _update_weights(self, t: float) -> None:
        ramp = self.params["leg.touchdown_settle_s"]
        if ramp <= 0:
            self._weight = self._stance.astype(float)
        else:
            self._weight = np.where(self._stance, np.clip((t - self._t_touchdown) / ramp, 0.0, 1.0), 0.0)

    # ------------------------------------------------------------------ output
    def stale(self, t: float) -> bool:
        return self._t_imu is None or t - self._t_imu > self.params["input_timeout_s"]

    def estimate(self, t: Optional[float] = None) -> Optional[EstimatedState]:
        """The current estimate (None while not running, or stale at time ``t`` if given)."""
        from atlas_crawl_kinematics.rotations import R_to_quat_xyzw
        if self._state != "running" or (t is not None and self.stale(t)):
            return None
        R = self.attitude.R
        p, v = self.leg.position, self.leg.velocity
        pose_cov = np.zeros((6, 6))
        pose_cov[:3, :3] = self.leg.P[0:3, 0:3]
        pose_cov[3:, 3:] = self.attitude.world_angle_covariance()
        twist_cov = np.zeros((6, 6))
        twist_cov[:3, :3] = R.T @ self.leg.P[3:6, 3:6] @ R
        rate = 1.0 / max(self.params["input_timeout_s"], 1e-3)
        twist_cov[3:, 3:] = np.eye(3) * self.params["attitude.gyro_noise_density_rad_per_s_sqrt_hz"] ** 2 * rate \
            + self.attitude.P[3:, 3:]
        q = R_to_quat_xyzw(R)
        return EstimatedState(t=float(self._t_imu), position=p, R=R.copy(), quat_xyzw=q, velocity_world=v,
                              velocity_body=R.T @ v, angular_velocity_body=self._omega.copy(),
                              pose_covariance=pose_cov, twist_covariance=twist_cov,
                              gyro_bias=self.attitude.bias.copy(), contacts_world=self.leg.contacts,
                              stance_weight=self._used.copy(), pose7=np.concatenate([p, q]))
