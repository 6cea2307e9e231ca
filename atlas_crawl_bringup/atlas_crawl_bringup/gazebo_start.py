"""Start state of the Gazebo variant, computed the way the MuJoCo node computes it (no Gazebo import here).

The MuJoCo node starts every trial from ``initial_pose`` (default ``crawl_forward``: the script's first key-frame
and its ``start_quat_wxyz``), lowered until the lowest geometry is a few mm above the floor.  The Gazebo launch
file uses :func:`start_state` so both simulators start from the same pose:

* joint angles → a ``{initial_positions: {joint: rad}}`` YAML for atlas_description's ``initial_positions_file``
  xacro argument (gz_ros2_control sets the joints to the state interfaces' ``initial_value``),
* pelvis orientation → roll/pitch/yaw for ``ros_gz_sim create``,
* ``pose_source`` → the controllers overrides file (:func:`write_controller_overrides`),
* the IMU noise → ``imu_file`` for atlas_description's gz imu sensor (:func:`write_imu_file`),
* spawn height (and, on a slope, the tilt) → from MuJoCo's placement of the same model on the same ``scene``
  (``atlas_crawl_bringup.gazebo_world`` writes that scene's SDF world) when atlas_crawl_mujoco is importable, else
  ``fallback_z_m``.
"""
from __future__ import annotations

import math
import os
import tempfile
from typing import Dict, Tuple

import yaml

__all__ = ["start_state", "quat_wxyz_to_rpy", "write_initial_positions", "gz_imu_figures", "write_imu_file",
           "write_controller_overrides"]

#: [s] correlation time of gz-sensors' Gauss-Markov bias: far longer than a trial, so the bias walks as the
#: MuJoCo model's random walk does (per step the Gauss-Markov variance is σ² τ/2 (1 - e^{-2Δt/τ}) ≈ σ² Δt).
GZ_BIAS_CORRELATION_TIME_S = 3600.0


def quat_wxyz_to_rpy(q) -> Tuple[float, float, float]:
    """ZYX Euler angles (roll, pitch, yaw) of a unit quaternion (w, x, y, z) — what ``create -R -P -Y`` expects."""
    from atlas_crawl_kinematics.rotations import quat_wxyz_to_rpy as rpy
    roll, pitch, yaw = (float(v) for v in rpy(q))
    return roll, pitch, yaw


def start_state(initial_pose: str = "crawl_forward", fallback_z_m: float = 0.7, clearance_m: float = 0.01,
                scene: str = "flat") -> Tuple[Dict[str, float], Tuple[float, float, float, float], float]:
    """(joint angles by name, pelvis quaternion wxyz, pelvis spawn height [m]) of ``initial_pose`` on ``scene``."""
    from atlas_crawl_controller.keyframes import NAMED_POSES, load_script, named_pose
    from atlas_description import JOINT_NAMES
    if initial_pose in NAMED_POSES:
        q, quat = named_pose(initial_pose)
    else:
        script = load_script(initial_pose)
        q = script.keyframes[0].q
        quat = tuple(getattr(script, "start_quat_wxyz", None) or (1.0, 0.0, 0.0, 0.0))
    z = fallback_z_m
    try:
        from atlas_crawl_mujoco.sim import AtlasSim
    except ImportError:  # MuJoCo not installed (a Gazebo-only machine): the fallback height, flat ground only
        if scene != "flat":
            raise ValueError(f"start_state: scene {scene!r} needs atlas_crawl_mujoco to place the robot") from None
    else:
        sim = AtlasSim(params={"scene": scene})
        sim.reset(q, base_quat_wxyz=tuple(quat), drop_clearance_m=clearance_m)
        pos, quat = sim.pelvis_pose()
        z = float(pos[2])
    return {n: float(v) for n, v in zip(JOINT_NAMES, q)}, tuple(float(v) for v in quat), z


def write_initial_positions(joints: Dict[str, float], path: str | None = None) -> str:
    """Write the xacro ``initial_positions_file`` YAML; returns its path."""
    if path is None:
        fd, path = tempfile.mkstemp(prefix="atlas_initial_positions_", suffix=".yaml")
        os.close(fd)
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump({"initial_positions": {k: float(v) for k, v in joints.items()}}, f)
    return path


def gz_imu_figures(overrides: dict | None = None, publish_rate_hz: float | None = None) -> dict:
    """The MuJoCo node's IMU model (``imu.*`` of mujoco_sim_node_parameters.yaml, atlas_crawl_mujoco.sensors) as
    gz-sensors' per-sample gaussian noise: white noise std = density · √rate, turn-on bias std = the initial bias,
    bias random walk = the Gauss-Markov ``dynamic_bias_stddev`` over :data:`GZ_BIAS_CORRELATION_TIME_S`; ``output``
    (``imu.output``): ``mean`` adds the gz_plugins ImuMean plugin (the mean motion over the sample period).
    ``publish_rate_hz`` (``mean`` only; default ``imu.rate_hz``): how often gz publishes that mean, each time over
    the last sample period (a sliding window, same noise), so a reader at ``imu.rate_hz`` whose read and the
    asynchronous gz message cross gets a window shifted by one publish period instead of a repeated or lost one."""
    from atlas_crawl_controller.nodes import topics
    from atlas_crawl_mujoco.sensors import default_noise_params
    p = default_noise_params(overrides)
    rate = float(p["imu.rate_hz"])
    if rate <= 0:
        raise ValueError("gz_imu_figures: imu.rate_hz is 0 (no IMU); the Gazebo IMU needs a rate")
    pub = rate if publish_rate_hz is None else float(publish_rate_hz)
    if not (math.isfinite(pub) and pub >= rate):
        raise ValueError(f"gz_imu_figures: publish_rate_hz must be finite and >= imu.rate_hz ({rate:g}), got {pub!r}")
    if pub != rate and p["imu.output"] != "mean":
        raise ValueError("gz_imu_figures: publish_rate_hz above imu.rate_hz needs imu.output mean (a sliding mean); "
                         "with sample each message is one physics step")

    def axis(kind, density, walk, initial):
        return {"stddev": p[f"imu.{kind}_{density}"] * rate ** 0.5, "bias_stddev": p[f"imu.{kind}_{initial}"],
                "dynamic_bias_stddev": p[f"imu.{kind}_{walk}"],
                "dynamic_bias_correlation_time_s": GZ_BIAS_CORRELATION_TIME_S}
    return {"rate_hz": rate, "publish_rate_hz": pub, "topic": topics.IMU, "output": p["imu.output"],
            "gyro": axis("gyro", "noise_density_rad_per_s_sqrt_hz", "bias_random_walk_rad_per_s2_sqrt_hz",
                         "bias_initial_rad_per_s"),
            "accel": axis("accel", "noise_density_m_per_s2_sqrt_hz", "bias_random_walk_m_per_s3_sqrt_hz",
                          "bias_initial_m_per_s2")}


def write_imu_file(overrides: dict | None = None, path: str | None = None,
                   publish_rate_hz: float | None = None) -> str:
    """Write the xacro ``imu_file`` YAML ({imu: :func:`gz_imu_figures`}); returns its path."""
    fig = gz_imu_figures(overrides, publish_rate_hz)
    if path is None:
        fd, path = tempfile.mkstemp(prefix="atlas_imu_", suffix=".yaml")
        os.close(fd)
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump({"imu": fig}, f)
    return path


def write_controller_overrides(base_file: str, pose_source: str = "ground_truth", path: str | None = None,
                               scene: str = "flat", estimator_overrides: tuple = (),
                               estimator_record_path: str = "") -> str:
    """``base_file`` (config/controllers_gazebo.yaml) plus, when ``pose_source`` is ``estimate``, the controller
    plugin's hosted state estimator (``pose_source: estimate``: the gz IMU through gz_ros2_control + the joint states,
    every update; it publishes /odom and /state_estimator/pelvis_pose). On the ``flat`` scene the estimator measures
    the contact heights against the flat floor (``leg.ground_height_source=flat``); on other scenes the plugin has no
    height map, so z is not measured. The tilt from the stance contacts is off (``leg.tilt_measurement=false``): in
    Gazebo it made the estimate worse (key-frame crawl, 3 cycles: 9.5 / 9.1 % of the path with it, 4.4 / 6.8 / 8.3 %
    without; session 28). ``estimator_overrides``: more ``name=value`` items for the hosted estimator
    (after those); ``estimator_record_path``: the plugin's record of the estimator's inputs (debugging). Returns the
    written file's path."""
    if pose_source not in ("ground_truth", "estimate"):
        raise ValueError(f"pose_source must be ground_truth or estimate, got {pose_source!r}")
    with open(base_file, encoding="utf-8") as f:
        doc = yaml.safe_load(f) or {}
    if pose_source == "estimate":
        ctl = doc.setdefault("crawl_controller", {}).setdefault("ros__parameters", {})
        ctl["pose_source"] = "estimate"
        ctl["estimator_overrides"] = (["leg.ground_height_source=flat"] if scene == "flat" else []) + \
            ["leg.tilt_measurement=false"] + [str(o) for o in estimator_overrides]
        if estimator_record_path:
            ctl["estimator_record_path"] = str(estimator_record_path)
    elif estimator_record_path:
        raise ValueError("estimator_record_path needs pose_source estimate")
    if path is None:
        fd, path = tempfile.mkstemp(prefix="atlas_controllers_gazebo_", suffix=".yaml")
        os.close(fd)
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(doc, f)
    return path
