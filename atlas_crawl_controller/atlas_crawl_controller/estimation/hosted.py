"""The state estimator inside a controller host, fed every control period (legged_control's
``LeggedController::update``: estimate, then control): the period's IMU sample, and the joint states at
``joint_rate_hz`` with the controller's expected stance. The MuJoCo sim node and the ros2_control plugin's bridge
both host it, so both run one estimator the same way (issue 14 §1)."""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..parameters import ParamValues
from .state_estimator import StateEstimator, default_params

__all__ = ["HostedEstimator", "ODOM_LAYOUT", "ODOM_SIZE"]

#: layout of :meth:`HostedEstimator.odom_into`'s buffer: pose [x y z qx qy qz qw] in the odom frame, twist [vx vy vz
#: wx wy wz] in the pelvis frame, then the 6×6 pose and twist covariances row-major (nav_msgs/Odometry, REP 105)
ODOM_LAYOUT = (("pose", 7), ("twist", 6), ("pose_covariance", 36), ("twist_covariance", 36))
ODOM_SIZE = sum(n for _name, n in ODOM_LAYOUT)


class HostedEstimator:
    """:class:`StateEstimator` with the host's feeding policy. ``params``: estimator parameter overrides (dotted
    names of ``config/state_estimator_parameters.yaml``), validated: a bad one raises ParameterError with the
    reason."""

    def __init__(self, params=None):
        self.params = params if isinstance(params, ParamValues) else default_params(params)
        self.est = StateEstimator(self.params)
        self._next_joints: Optional[float] = None

    def set_params(self, params: ParamValues) -> Optional[str]:
        """New (validated) parameter values; the filter states are kept. None, or the reason nothing changed."""
        reason = self.est.set_params(params)
        if reason is None:
            self.params = params
        return reason

    @property
    def initialised(self) -> bool:
        return self.est.running or self.est.aligning

    def reset(self, initial_pose7, t: float) -> None:
        """(Re)start at a known pose (the spawn or reset pose); the robot must then hold still for the alignment.
        Raises ValueError on a non-finite or zero-quaternion pose (nothing changed)."""
        self.est.reset(initial_pose7, t)
        self._next_joints = None

    def step(self, t: float, q, qd, stance, gyro, accel) -> None:
        """One control period at time ``t``: the joint states (at ``joint_rate_hz``) with the stance the controller
        expects, then the IMU sample (gyro [rad/s], specific force [m/s²], pelvis frame). A bad sample is not
        integrated (the estimator's defined hold; its ``reason`` says why)."""
        if self._next_joints is None or t + 1e-9 >= self._next_joints:
            self._next_joints = t + 1.0 / self.params["joint_rate_hz"]
            self.est.update_joints(t, q, qd, stance)
        self.est.update_imu(t, gyro, accel)

    def pose7(self, t: float) -> np.ndarray:
        """The pelvis pose the controller reads: the estimate, or NaN (the core's defined hold) while there is
        none (aligning, stale)."""
        e = self.est.estimate(t)
        return np.full(7, np.nan) if e is None else e.pose7.copy()

    def odom_into(self, t: float, out: np.ndarray) -> bool:
        """Write the estimate into ``out`` (:data:`ODOM_SIZE`, layout :data:`ODOM_LAYOUT`); NaN and False while
        there is none."""
        e = self.est.estimate(t)
        if e is None:
            out[:] = math.nan
            return False
        out[0:7] = e.pose7
        out[7:10] = e.velocity_body
        out[10:13] = e.angular_velocity_body
        out[13:49] = np.asarray(e.pose_covariance, float).ravel()
        out[49:85] = np.asarray(e.twist_covariance, float).ravel()
        return True
