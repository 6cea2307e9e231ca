"""Start state of the Gazebo variant, computed the way the MuJoCo node computes it (no Gazebo import here).

The MuJoCo node starts every trial from ``initial_pose`` (default ``crawl_forward``: the script's first key-frame
and its ``start_quat_wxyz``), lowered until the lowest geometry is a few mm above the floor.  The Gazebo launch
file uses :func:`start_state` so both simulators start from the same pose:

* joint angles → a ``{initial_positions: {joint: rad}}`` YAML for atlas_description's ``initial_positions_file``
  xacro argument (gz_ros2_control sets the joints to the state interfaces' ``initial_value``),
* pelvis orientation → roll/pitch/yaw for ``ros_gz_sim create``,
* spawn height (and, on a slope, the tilt) → from MuJoCo's placement of the same model on the same ``scene``
  (``atlas_crawl_bringup.gazebo_world`` writes that scene's SDF world) when atlas_crawl_mujoco is importable, else
  ``fallback_z_m``.
"""
from __future__ import annotations

import os
import tempfile
from typing import Dict, Tuple

import yaml

__all__ = ["start_state", "quat_wxyz_to_rpy", "write_initial_positions"]


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
