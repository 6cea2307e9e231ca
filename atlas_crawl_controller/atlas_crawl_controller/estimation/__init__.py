"""Pelvis state estimation (issue 14 §1): attitude EKF + leg-kinematics Kalman filter, plain classes (no ROS)."""
from .attitude_ekf import AttitudeEKF
from .contact_kinematics import ContactKinematics
from .hosted import HostedEstimator
from .leg_odometry_kf import LegOdometryKF
from .state_estimator import EstimatedState, StateEstimator, default_params

__all__ = ["AttitudeEKF", "ContactKinematics", "HostedEstimator", "LegOdometryKF", "EstimatedState", "StateEstimator", "default_params"]
