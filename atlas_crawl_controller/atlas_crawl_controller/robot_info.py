"""Robot facts the controller needs without any simulator: joint names (team order), limits.

The single source is the URDF from ``atlas_description.urdf_string()``. Until that package lands, the
reference URDF in /work/shared/reference is used (switch: :func:`urdf_source`). Nothing here imports ROS.
"""
from __future__ import annotations

import functools
import os
import re
import xml.etree.ElementTree as ET

import numpy as np

#: Team joint order (conventions.md, ``atlas_description.JOINT_NAMES``).
JOINT_NAMES = (
    "back_lbz", "back_mby", "back_ubx", "neck_ay",
    "l_leg_uhz", "l_leg_mhx", "l_leg_lhy", "l_leg_kny", "l_leg_uay", "l_leg_lax",
    "r_leg_uhz", "r_leg_mhx", "r_leg_lhy", "r_leg_kny", "r_leg_uay", "r_leg_lax",
    "l_arm_usy", "l_arm_shx", "l_arm_ely", "l_arm_elx", "l_arm_uwy", "l_arm_mwx",
    "r_arm_usy", "r_arm_shx", "r_arm_ely", "r_arm_elx", "r_arm_uwy", "r_arm_mwx",
)
CONTACT_FRAMES = ("l_wrist_contact", "r_wrist_contact", "l_knee_contact", "r_knee_contact")
LIMB_NAMES = ("LW", "RW", "LK", "RK")
SOLE_FRAMES = ("l_sole", "r_sole")
JOINT_INDEX = {n: i for i, n in enumerate(JOINT_NAMES)}

REFERENCE_DIR = os.environ.get("ATLAS_REFERENCE_DIR", "/work/shared/reference")


def _description():
    try:
        import atlas_description  # noqa: F401
        if hasattr(atlas_description, "urdf_string"):
            return atlas_description
    except Exception:  # pragma: no cover - depends on the workspace state
        pass
    return None


def reference_urdf_string() -> str:
    """The reference URDF (drcsim atlas_simple_shapes) with the MultiSense SL head link merged in.

    The head link is taken from multisense_sl_head.urdf (mass, inertia, collision boxes; visuals and the
    spinning lidar are left out), as /work/shared/reference/README.md describes.
    """
    with open(os.path.join(REFERENCE_DIR, "atlas_v1_simple_shapes.urdf")) as f:
        body = f.read()
    with open(os.path.join(REFERENCE_DIR, "multisense_sl_head.urdf")) as f:
        head = f.read()
    m = re.search(r'<link name="head">.*?</link>', head, re.S)
    head_link = re.sub(r"<visual>.*?</visual>", "", m.group(0), flags=re.S)
    body = re.sub(r"<visual>.*?</visual>", "", body, flags=re.S)
    return body.replace("</robot>", head_link + "\n</robot>")


@functools.lru_cache(maxsize=4)
def urdf_source(sim: str = "mujoco") -> str:
    """URDF text of the robot. One-line switch: atlas_description when it exists, else the reference."""
    desc = _description()
    if desc is not None:
        return desc.urdf_string(sim=sim)
    return reference_urdf_string()


@functools.lru_cache(maxsize=4)
def joint_limits(sim: str = "mujoco"):
    """(lower (28,), upper (28,), velocity (28,), effort (28,)) in team order, from the URDF."""
    root = ET.fromstring(urdf_source(sim))
    lo = np.full(28, np.nan)
    hi = np.full(28, np.nan)
    vel = np.full(28, np.nan)
    eff = np.full(28, np.nan)
    for j in root.iter("joint"):
        name = j.get("name")
        if name in JOINT_INDEX:
            lim = j.find("limit")
            i = JOINT_INDEX[name]
            lo[i] = float(lim.get("lower"))
            hi[i] = float(lim.get("upper"))
            vel[i] = float(lim.get("velocity", "12"))
            eff[i] = float(lim.get("effort"))
    missing = [JOINT_NAMES[i] for i in range(28) if np.isnan(lo[i])]
    if missing:
        raise ValueError(f"URDF lacks limits for joints {missing}")
    for a in (lo, hi, vel, eff):
        a.setflags(write=False)
    return lo, hi, vel, eff
