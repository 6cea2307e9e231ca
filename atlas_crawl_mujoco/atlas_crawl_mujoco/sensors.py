"""Sensor noise of the simulated robot (issue 14 §1): IMU white noise + bias random walk, joint-state noise.

Per IMU axis (the continuous-time model of Kalibr / the EuRoC data set, Burri et al. 2016)::

    y(t_k) = x(t_k) + b(t_k) + n_k,        n_k ~ N(0, σ_w² / Δt)          (σ_w: noise density, Δt: sample period)
    b(t_k) = b(t_{k-1}) + σ_b √Δt ξ_k,     ξ_k ~ N(0, 1),  b(0) ~ N(0, σ_b0²)  (σ_b: bias random walk)

Joint states: y = q + N(0, σ_q²), ẏ = q̇ + N(0, σ_q̇²), independent per sample.  One ``numpy.random.Generator``
seeded at :meth:`SensorNoise.reset`: the same seed and the same sampling instants give the same noise.
Parameters: the ``imu.*`` and ``joint_noise.*`` groups of config/mujoco_sim_node_parameters.yaml.
"""
from __future__ import annotations

import math
import os

import numpy as np

from atlas_crawl_controller.parameters import config_path, load_param_dict

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NODE_PARAMETER_FILE = "mujoco_sim_node_parameters.yaml"
_GROUPS = ("imu.", "joint_noise.")


def default_noise_params(overrides: dict | None = None) -> dict:
    """The ``imu.*`` / ``joint_noise.*`` defaults of the sim node's YAML (validated), updated with ``overrides``."""
    path = config_path(NODE_PARAMETER_FILE, "atlas_crawl_mujoco", source_dir=_PKG_DIR)
    allp = load_param_dict(path, overrides)
    return {k: v for k, v in allp.items() if k.startswith(_GROUPS)}


class SensorNoise:
    """Noisy IMU and joint readings from the true ones (see the module doc). Stateful: the IMU biases walk."""

    def __init__(self, params: dict | None = None, seed: int = 0):
        self.params = default_noise_params(params)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """New trial: re-seed, draw the turn-on biases."""
        if seed is not None:
            self.seed = int(seed)
        self.rng = np.random.default_rng([self.seed, 14])   # own stream: independent of AtlasSim's reset noise
        p = self.params
        self.gyro_bias = self.rng.normal(0.0, p["imu.gyro_bias_initial_rad_per_s"], 3)
        self.accel_bias = self.rng.normal(0.0, p["imu.accel_bias_initial_m_per_s2"], 3)
        self._t_imu = None

    def set_params(self, params: dict) -> None:
        """New noise figures (validated against the YAML); biases keep their current values."""
        self.params = default_noise_params({k: v for k, v in params.items() if k.startswith(_GROUPS)})

    def imu(self, t: float, gyro_true, accel_true, period_s: float):
        """(gyro (3,) rad/s, accel (3,) m/s²) measured at sim time ``t``; ``period_s`` = the sample period Δt (the
        white-noise bandwidth); the biases walk over the time since the previous sample."""
        p = self.params
        if not period_s > 0:
            raise ValueError("SensorNoise.imu: period_s must be > 0")
        walk_dt = period_s if self._t_imu is None else max(0.0, t - self._t_imu)
        self._t_imu = t
        sq = math.sqrt(walk_dt)
        self.gyro_bias = self.gyro_bias + p["imu.gyro_bias_random_walk_rad_per_s2_sqrt_hz"] * sq * self.rng.standard_normal(3)
        self.accel_bias = self.accel_bias + p["imu.accel_bias_random_walk_m_per_s3_sqrt_hz"] * sq * \
            self.rng.standard_normal(3)
        k = 1.0 / math.sqrt(period_s)
        g = np.asarray(gyro_true, float) + self.gyro_bias + \
            p["imu.gyro_noise_density_rad_per_s_sqrt_hz"] * k * self.rng.standard_normal(3)
        a = np.asarray(accel_true, float) + self.accel_bias + \
            p["imu.accel_noise_density_m_per_s2_sqrt_hz"] * k * self.rng.standard_normal(3)
        return g, a

    def imu_from(self, sim, t: float, period_s: float):
        """:meth:`imu` of ``sim``'s IMU as ``imu.output`` says: the mean over the steps since the last sample
        (``AtlasSim.imu_mean``) or the instantaneous value (``AtlasSim.imu_true``)."""
        true = sim.imu_mean() if self.params["imu.output"] == "mean" else sim.imu_true()
        return self.imu(t, *true, period_s)

    def joints(self, q, qd):
        """(q, q̇) with white noise (a copy; unchanged when the stds are 0)."""
        q = np.array(q, float)
        qd = np.array(qd, float)
        sq, sv = self.params["joint_noise.position_std_rad"], self.params["joint_noise.velocity_std_rad_per_s"]
        if sq > 0:
            q += sq * self.rng.standard_normal(q.shape)
        if sv > 0:
            qd += sv * self.rng.standard_normal(qd.shape)
        return q, qd

    def imu_covariances(self, period_s: float):
        """Diagonal variances (gyro, accel) of the white noise per sample — for sensor_msgs/Imu covariances."""
        p = self.params
        return (p["imu.gyro_noise_density_rad_per_s_sqrt_hz"] ** 2 / period_s,
                p["imu.accel_noise_density_m_per_s2_sqrt_hz"] ** 2 / period_s)
