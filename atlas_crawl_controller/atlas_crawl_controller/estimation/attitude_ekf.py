"""Attitude of the pelvis from a gyro and an accelerometer: multiplicative (error-state) EKF with gyro bias.

Nominal state: R (world ← pelvis) and the gyro bias b. Error state δx = [δθ, δb] with R_true = R·Exp(δθ) (δθ in the
pelvis frame), covariance P (6×6); the Kalman machinery (predict/update, Joseph form) is filterpy's KalmanFilter
run on the error state (Markley 2003; Solà, "Quaternion kinematics for the error-state Kalman filter", 2017, §7)::

    predict  (ω_m, Δt):  ω = ω_m − b,  R ← R·Exp(ω Δt)
             F = [[Exp(ω Δt)ᵀ, −I Δt], [0, I]],   Q = diag(σ_g² Δt I, σ_b² Δt I)
    update   (a_m):      a_m ≈ g Rᵀe₃ (specific force at rest),  y = a_m − g Rᵀe₃,  H = [g [Rᵀe₃]×, 0],
                         R_a = σ_a² I; skipped when | |a_m| − g | > gate (impact, push)
    or, windowed (``accel_window_s`` > 0; for a body that keeps accelerating, like a crawl):
                         m = mean over the window of R a_m (world frame) ≈ g e₃ + g e₃ × φ + ā_lin, φ = R δθ,
                         y = m − g e₃,  H = [g [e₃]× R, 0] (horizontal rows),  R_w = σ_w² I
                         (ā_lin, the mean linear acceleration over the window, is small: velocity is bounded)
    tilt     (φ, Σ):     φ (world x, y) the small world rotation that puts the stance contacts on the ground,
                         R_true ≈ Exp(φ)·R, so φ = R δθ:  y = φ,  H = [R[:2], 0],  R_φ = Σ
                         (it observes the tilt error an accelerometer bias leaves: b_a / g rad)
    inject:              R ← R·Exp(δθ̂), b ← b + δb̂, δx ← 0

The accelerometer observes roll and pitch (and the bias components about horizontal axes); heading is integrated
gyro only: its variance grows, and the node reports it.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np
from filterpy.kalman import KalmanFilter

from atlas_crawl_kinematics.rotations import rotvec_to_R

E3 = np.array([0.0, 0.0, 1.0])


def skew(v) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def tilt_aligned(R0: np.ndarray, up_body: np.ndarray) -> np.ndarray:
    """``R0`` corrected by the smallest world rotation that makes ``R @ up_body`` vertical (keeps R0's heading)."""
    u = np.asarray(up_body, float) / np.linalg.norm(up_body)
    w = R0 @ u
    axis = np.cross(w, E3)
    s, c = np.linalg.norm(axis), float(np.clip(w @ E3, -1.0, 1.0))
    if s < 1e-12:
        return R0.copy() if c > 0 else rotvec_to_R(np.array([math.pi, 0.0, 0.0])) @ R0
    return rotvec_to_R(axis / s * math.atan2(s, c)) @ R0


class AttitudeEKF:
    """See the module doc. ``sigma_*`` are continuous-time densities (units in the parameter names)."""

    def __init__(self, gyro_noise: float, gyro_bias_walk: float, accel_noise: float, accel_gate: float,
                 gravity: float = 9.81, accel_window_s: float = 0.0, accel_window_noise: float = 0.1):
        self.gyro_noise, self.gyro_bias_walk = float(gyro_noise), float(gyro_bias_walk)
        self.accel_noise, self.accel_gate, self.g = float(accel_noise), float(accel_gate), float(gravity)
        self.accel_window_s, self.accel_window_noise = float(accel_window_s), float(accel_window_noise)
        self._win_sum, self._win_n, self._win_t = np.zeros(3), 0, 0.0
        self.kf = KalmanFilter(dim_x=6, dim_z=3)
        self.R = np.eye(3)
        self.bias = np.zeros(3)
        self.accel_used = 0
        self.accel_rejected = 0
        self.tilt_used = 0

    def initialize(self, R0: np.ndarray, bias0, yaw_std: float, bias_std: float, tilt_std: float = 0.01) -> None:
        """Start at orientation R0 with bias ``bias0``; P: ``tilt_std`` about horizontal axes, ``yaw_std`` about the
        vertical (both as world-frame angles), ``bias_std`` per bias axis."""
        self.R = np.array(R0, float)
        self.bias = np.array(bias0, float).reshape(3)
        Pw = np.diag([tilt_std ** 2, tilt_std ** 2, yaw_std ** 2])      # world-frame angle covariance
        self.kf.x = np.zeros((6, 1))
        self.kf.P = np.zeros((6, 6))
        self.kf.P[:3, :3] = self.R.T @ Pw @ self.R                       # δθ is in the pelvis frame
        self.kf.P[3:, 3:] = np.eye(3) * bias_std ** 2
        self.accel_used = self.accel_rejected = self.tilt_used = 0
        self._win_sum, self._win_n, self._win_t = np.zeros(3), 0, 0.0

    def predict(self, gyro, dt: float) -> np.ndarray:
        """Propagate with one gyro sample over ``dt``; returns the bias-corrected angular velocity (pelvis frame)."""
        w = np.asarray(gyro, float).reshape(3) - self.bias
        dR = rotvec_to_R(w * dt)
        F = np.eye(6)
        F[:3, :3] = dR.T
        F[:3, 3:] = -np.eye(3) * dt
        Q = np.zeros((6, 6))
        Q[:3, :3] = np.eye(3) * self.gyro_noise ** 2 * dt
        Q[3:, 3:] = np.eye(3) * self.gyro_bias_walk ** 2 * dt
        self.kf.predict(F=F, Q=Q)
        self.R = self.R @ dR
        self._win_t += dt
        return w

    def update_accel(self, accel) -> bool:
        """Tilt correction from one accelerometer sample (or, windowed, from the window's mean once it is full);
        False when nothing changed (gated out, or the window is still filling)."""
        a = np.asarray(accel, float).reshape(3)
        if self.accel_window_s > 0:
            return self._update_window(a)
        if abs(np.linalg.norm(a) - self.g) > self.accel_gate:
            self.accel_rejected += 1
            return False
        up_b = self.R.T @ E3
        H = np.zeros((3, 6))
        H[:, :3] = self.g * skew(up_b)
        y = a - self.g * up_b
        self.kf.x = np.zeros((6, 1))
        # filterpy: residual z − H x with x = 0 is y
        self.kf.update(y.reshape(3, 1), R=np.eye(3) * self.accel_noise ** 2, H=H)
        self._inject()
        self.accel_used += 1
        return True

    def _update_window(self, a: np.ndarray) -> bool:
        self._win_sum += self.R @ a
        self._win_n += 1
        if self._win_t < self.accel_window_s:
            return False
        m = self._win_sum / self._win_n
        self._win_sum, self._win_n, self._win_t = np.zeros(3), 0, 0.0
        y = (m - self.g * E3)[:2]
        H = np.zeros((2, 6))
        H[:, :3] = (self.g * skew(E3) @ self.R)[:2]
        self.kf.x = np.zeros((6, 1))
        self.kf.dim_z = 2
        self.kf.update(y.reshape(2, 1), R=np.eye(2) * self.accel_window_noise ** 2, H=H)
        self.kf.dim_z = 3
        self._inject()
        self.accel_used += 1
        return True

    def update_tilt(self, phi_xy, cov) -> None:
        """Tilt correction measured outside the IMU (the stance contacts on the known ground): ``phi_xy`` (2,) the
        world-frame rotation [rad] about x and y that the estimate is missing, ``cov`` (2, 2) its covariance."""
        H = np.zeros((2, 6))
        H[:, :3] = self.R[:2]
        self.kf.x = np.zeros((6, 1))
        self.kf.dim_z = 2
        self.kf.update(np.asarray(phi_xy, float).reshape(2, 1), R=np.asarray(cov, float).reshape(2, 2), H=H)
        self.kf.dim_z = 3
        self._inject()
        self.tilt_used += 1

    def _inject(self) -> None:
        dx = self.kf.x.reshape(6)
        self.R = self.R @ rotvec_to_R(dx[:3])
        self.bias = self.bias + dx[3:]
        self.kf.x = np.zeros((6, 1))
        self._orthonormalise()

    def _orthonormalise(self) -> None:
        u, _s, vt = np.linalg.svd(self.R)
        self.R = u @ vt

    @property
    def P(self) -> np.ndarray:
        return self.kf.P

    def world_angle_covariance(self) -> np.ndarray:
        """3×3 covariance of the orientation error as a world-frame rotation vector (R δθ)."""
        return self.R @ self.kf.P[:3, :3] @ self.R.T

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        return self.R.copy(), self.bias.copy()

    def restore(self, R: np.ndarray, bias: np.ndarray, P: Optional[np.ndarray] = None) -> None:
        self.R, self.bias = np.array(R, float), np.array(bias, float)
        if P is not None:
            self.kf.P = np.array(P, float)
