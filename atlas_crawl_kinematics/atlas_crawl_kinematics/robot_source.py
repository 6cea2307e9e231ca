"""Where the Atlas URDF string comes from.

:func:`atlas_urdf_string` returns the project description (``atlas_description.urdf_string``) when that package is
importable, otherwise a stand-in built from the reference files (``/work/shared/reference`` or the directory in the
environment variable ``ATLAS_REFERENCE_DIR``): the drcsim ``atlas_v1_simple_shapes.urdf`` with the MultiSense head
link (mass/inertia of ``multisense_sl.urdf``, lidar left out) attached by ``neck_ay``, plus provisional contact and
sole frames.  The provisional contact frames are *placeholders* until atlas_description lands (the description owns
the real ones); everything in this package takes a URDF *string*, so the switch is this one function.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["TEAM_JOINT_NAMES", "CONTACT_FRAMES", "SOLE_FRAMES", "atlas_urdf_string", "reference_urdf_string",
           "mujoco_compiler_tag"]

#: Team joint order (mirrors ``atlas_description.JOINT_NAMES``; conventions.md).
TEAM_JOINT_NAMES: tuple[str, ...] = (
    "back_lbz", "back_mby", "back_ubx", "neck_ay",
    "l_leg_uhz", "l_leg_mhx", "l_leg_lhy", "l_leg_kny", "l_leg_uay", "l_leg_lax",
    "r_leg_uhz", "r_leg_mhx", "r_leg_lhy", "r_leg_kny", "r_leg_uay", "r_leg_lax",
    "l_arm_usy", "l_arm_shx", "l_arm_ely", "l_arm_elx", "l_arm_uwy", "l_arm_mwx",
    "r_arm_usy", "r_arm_shx", "r_arm_ely", "r_arm_elx", "r_arm_uwy", "r_arm_mwx",
)
CONTACT_FRAMES: tuple[str, ...] = ("l_wrist_contact", "r_wrist_contact", "l_knee_contact", "r_knee_contact")
SOLE_FRAMES: tuple[str, ...] = ("l_sole", "r_sole")

_HEAD_LINK = """
  <link name="head">
    <inertial>
      <origin xyz="-0.075493 3.3383E-05 0.02774" rpy="0 0 0" />
      <mass value="1.41984" />
      <inertia iyy="0.0041178" ixy="-1.5797E-06" iyz="-6.8415E-07" ixx="0.0039688" ixz="-0.00089293" izz="0.0035243" />
    </inertial>
    <collision><origin xyz="-0.0503 0 -0.00195" rpy="0 0 0" /><geometry><box size="0.1311 0.12 0.0591"/></geometry></collision>
    <collision><origin xyz="-0.093 0 0.0868" rpy="0 0 0" /><geometry><box size="0.0468 0.12 0.1184"/></geometry></collision>
  </link>
"""

# Provisional frames (placeholders; atlas_description defines the real ones): wrist contact under the hand box,
# knee contact in front of the knee on the shin cylinder, soles under the foot boxes.
_PROVISIONAL_FRAMES = {
    "l_wrist_contact": ("l_hand", "0 0.05 -0.045"),
    "r_wrist_contact": ("r_hand", "0 -0.05 -0.045"),
    "l_knee_contact": ("l_lleg", "0.09 0 -0.05"),
    "r_knee_contact": ("r_lleg", "0.09 0 -0.05"),
    "l_sole": ("l_foot", "0.048 0 -0.081119"),
    "r_sole": ("r_foot", "0.048 0 -0.081119"),
}


def mujoco_compiler_tag() -> str:
    """The ``<mujoco>`` extension that keeps fixed frames as bodies when MuJoCo compiles the URDF."""
    return '<mujoco><compiler fusestatic="false" discardvisual="true" balanceinertia="false"/></mujoco>'


def _reference_dir() -> Path:
    return Path(os.environ.get("ATLAS_REFERENCE_DIR", "/work/shared/reference"))


def reference_urdf_string(sim: str = "mujoco") -> str:
    """The reference Atlas + head + provisional contact/sole frames as one URDF string.

    Args:
        sim: ``"mujoco"`` adds :func:`mujoco_compiler_tag`; ``"none"`` leaves it out.
    """
    text = (_reference_dir() / "atlas_v1_simple_shapes.urdf").read_text()
    text = re.sub(r"<\?xml[^>]*\?>", "", text)
    text = re.sub(r"<visual>.*?</visual>", "", text, flags=re.S)
    extra = [_HEAD_LINK]
    for name, (parent, xyz) in _PROVISIONAL_FRAMES.items():
        extra.append(
            f'  <link name="{name}"/>\n  <joint name="{name}_joint" type="fixed">'
            f'<parent link="{parent}"/><child link="{name}"/><origin xyz="{xyz}" rpy="0 0 0"/></joint>\n'
        )
    if sim == "mujoco":
        extra.append("  " + mujoco_compiler_tag() + "\n")
    idx = text.rfind("</robot>")
    return text[:idx] + "".join(extra) + text[idx:]


def atlas_urdf_string(sim: str = "mujoco") -> str:
    """Project URDF: ``atlas_description.urdf_string(sim=sim)`` if available, else :func:`reference_urdf_string`.

    The environment variable ``ATLAS_CRAWL_KIN_USE_REFERENCE=1`` forces the reference stand-in.
    """
    if os.environ.get("ATLAS_CRAWL_KIN_USE_REFERENCE", "0") != "1":
        try:
            import atlas_description  # type: ignore[import-not-found]

            return atlas_description.urdf_string(sim=sim)
        except (ImportError, AttributeError):
            pass
    return reference_urdf_string(sim=sim)
