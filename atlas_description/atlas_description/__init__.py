"""atlas_description: the project's URDF/xacro of the 28-joint DRC Atlas and its Python access points.

Figures (masses, inertias, joint origins/axes/limits, collision primitives) come from
``../shared/reference/atlas_v1_simple_shapes.urdf`` and ``multisense_sl_head.urdf`` (see
``config/atlas_figures.yaml``). The contact frames are the wrist and knee support points of the thesis'
wrist-and-knees crawl (thesis §4.1: "the four support joints (wrists and knees)").

Public API (team contract, notes/conventions.md):

* :data:`JOINT_NAMES` -- the 28 actuated joints in the team order; every ``q`` vector uses it.
* :data:`CONTACT_FRAMES` -- ``("l_wrist_contact", "r_wrist_contact", "l_knee_contact", "r_knee_contact")``
  (limb order LW, RW, LK, RK).
* :data:`SOLE_FRAMES` -- ``("l_sole", "r_sole")``.
* :data:`LIMB_NAMES` -- ``("LW", "RW", "LK", "RK")``, the limbs of :data:`CONTACT_FRAMES` in the same order.
* :data:`LIMB_LINKS` -- per limb, the links whose collision primitives touch the ground in the crawl.
* :data:`JOINT_INDEX` -- joint name -> index in :data:`JOINT_NAMES`.
* :func:`joint_limits` -- (lower, upper, velocity, effort) arrays in team order, from ``config/joint_limits.yaml``
  (the file the xacro takes its ``<limit>`` tags from).
* :func:`model_urdf` -- :func:`urdf_string` for a simulator, cached: the URDF the kinematic model and MuJoCo use.
* :func:`xacro_path` -- absolute path of ``urdf/atlas.urdf.xacro`` (installed share dir or source tree).
* :func:`urdf_string` -- the expanded URDF as a string (PyPI ``xacro``).

No ROS import is needed: ``ament_index_python`` is used only if importable.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

__all__ = [
    "JOINT_NAMES",
    "CONTACT_FRAMES",
    "SOLE_FRAMES",
    "LIMB_NAMES",
    "LIMB_LINKS",
    "JOINT_INDEX",
    "SIM_CHOICES",
    "PACKAGE_NAME",
    "share_dir",
    "xacro_path",
    "config_path",
    "urdf_string",
    "model_urdf",
    "joint_limits",
]

PACKAGE_NAME = "atlas_description"

JOINT_NAMES: tuple[str, ...] = (
    "back_lbz", "back_mby", "back_ubx", "neck_ay",
    "l_leg_uhz", "l_leg_mhx", "l_leg_lhy", "l_leg_kny", "l_leg_uay", "l_leg_lax",
    "r_leg_uhz", "r_leg_mhx", "r_leg_lhy", "r_leg_kny", "r_leg_uay", "r_leg_lax",
    "l_arm_usy", "l_arm_shx", "l_arm_ely", "l_arm_elx", "l_arm_uwy", "l_arm_mwx",
    "r_arm_usy", "r_arm_shx", "r_arm_ely", "r_arm_elx", "r_arm_uwy", "r_arm_mwx",
)

#: Support points of the wrist-and-knees crawl, limb order LW, RW, LK, RK.
CONTACT_FRAMES: tuple[str, ...] = ("l_wrist_contact", "r_wrist_contact", "l_knee_contact", "r_knee_contact")
#: Parent link of each contact frame (same order as CONTACT_FRAMES).
CONTACT_FRAME_PARENTS: tuple[str, ...] = ("l_hand", "r_hand", "l_lleg", "r_lleg")
SOLE_FRAMES: tuple[str, ...] = ("l_sole", "r_sole")
SOLE_FRAME_PARENTS: tuple[str, ...] = ("l_foot", "r_foot")
#: Links whose collision geometry forms each limb's support contact (limb order LW, RW, LK, RK): a limb touches
#: the ground when any collision primitive of these links does.
LIMB_LINKS: tuple[tuple[str, ...], ...] = (("l_hand", "l_farm"), ("r_hand", "r_farm"), ("l_lleg",), ("r_lleg",))
#: Limb names of the contact frames (same order as CONTACT_FRAMES).
LIMB_NAMES: tuple[str, ...] = ("LW", "RW", "LK", "RK")
JOINT_INDEX: dict[str, int] = {n: i for i, n in enumerate(JOINT_NAMES)}

SIM_CHOICES: tuple[str, ...] = ("none", "gazebo", "mujoco")

_XACRO_REL = Path("urdf") / "atlas.urdf.xacro"
_FILE_ARGS = ("initial_positions_file", "controllers_file", "controllers_overrides_file", "imu_file")


def _source_share() -> Path:
    # source tree: <pkg>/atlas_description/__init__.py -> <pkg>/
    return Path(__file__).resolve().parent.parent


def share_dir() -> Path:
    """Directory holding ``urdf/`` and ``config/``.

    Order: ``$ATLAS_DESCRIPTION_SHARE`` if set; the tree this module was loaded from (source tree, or the
    install prefix's ``share/atlas_description``); the ament index, if ``ament_index_python`` is importable
    and knows the package.
    A candidate is accepted only if it actually contains ``urdf/atlas.urdf.xacro``.
    """
    candidates: list[Path] = []
    env = os.environ.get("ATLAS_DESCRIPTION_SHARE")
    if env:
        candidates.append(Path(env))
    # 1. the tree this module lives in: source tree (<pkg>/atlas_description/__init__.py -> <pkg>/) ...
    candidates.append(_source_share())
    # ... or the install prefix (<prefix>/lib/python3.x/site-packages/atlas_description -> <prefix>/share/<pkg>)
    here = Path(__file__).resolve().parent
    for parent in here.parents:
        if parent.name == "lib":
            candidates.append(parent.parent / "share" / PACKAGE_NAME)
            break
    # 2. the ament index, if ROS' ament_index_python is importable and configured
    try:
        from ament_index_python.packages import get_package_share_directory
        candidates.append(Path(get_package_share_directory(PACKAGE_NAME)))
    except Exception:  # ImportError, PackageNotFoundError, unset AMENT_PREFIX_PATH (OSError), ...
        pass
    for c in candidates:
        if (c / _XACRO_REL).is_file():
            return c
    raise FileNotFoundError(
        f"{PACKAGE_NAME}: cannot find {_XACRO_REL} in any of: " + ", ".join(str(c) for c in candidates)
    )


def xacro_path() -> str:
    """Absolute path of the top-level xacro ``urdf/atlas.urdf.xacro``."""
    return str(share_dir() / _XACRO_REL)


def config_path(name: str) -> str:
    """Absolute path of a file in the package's ``config/`` directory (e.g. ``joint_limits.yaml``)."""
    p = share_dir() / "config" / name
    if not p.is_file():
        raise FileNotFoundError(f"{PACKAGE_NAME}: no config file {p}")
    return str(p)


def _arg_str(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return str(value)


def urdf_string(ros2_control: bool = False, sim: str = "none", **xacro_args) -> str:
    """Expand ``atlas.urdf.xacro`` with the PyPI ``xacro`` package and return the URDF text.

    Args:
        ros2_control: add the ``<ros2_control name="AtlasSystem">`` block (28 joints, position command,
            position/velocity/effort state interfaces).
        sim: ``"none"`` (mock_components hardware if ros2_control), ``"gazebo"`` (gz_ros2_control hardware,
            gz plugins and surface tags) or ``"mujoco"`` (``<mujoco><compiler .../></mujoco>`` block, no visuals).
        **xacro_args: further xacro arguments (``visuals``, ``initial_positions_file``, ``controllers_file``,
            ``controllers_overrides_file``, ``pelvis_plugin``, ``pelvis_pose_topic``, ``pelvis_pose_rate_hz``,
            ``imu_file``); bools become ``"true"``/``"false"``.

    Raises:
        ValueError: unknown ``sim`` or unknown xacro argument name.
        FileNotFoundError: ``initial_positions_file`` does not exist (relative paths are taken relative to
            the current working directory; the controllers files are only made absolute, Gazebo reads them later).
    """
    if sim not in SIM_CHOICES:
        raise ValueError(f"sim must be one of {SIM_CHOICES}, got {sim!r}")
    known = {"visuals", "initial_positions_file", "controllers_file", "controllers_overrides_file", "pelvis_plugin",
             "pelvis_pose_topic", "pelvis_pose_rate_hz", "imu_file"}
    unknown = set(xacro_args) - known
    if unknown:
        raise ValueError(f"unknown xacro argument(s) {sorted(unknown)}; known: {sorted(known)}")
    import xacro  # PyPI xacro (2.x); imported lazily so importing this module stays cheap

    mappings = {"ros2_control": _arg_str(bool(ros2_control)), "sim": sim}
    for k, v in xacro_args.items():
        v = _arg_str(v)
        if k in _FILE_ARGS and v:
            # xacro resolves relative paths against the xacro file's directory; make them relative to the
            # caller's working directory instead, and fail early with a clear message.
            v = os.path.abspath(os.path.expanduser(v))
            if k in ("initial_positions_file", "imu_file") and not os.path.isfile(v):  # read by xacro now
                raise FileNotFoundError(f"xacro argument {k}: no such file {v}")
        mappings[k] = v
    doc = xacro.process_file(xacro_path(), mappings=mappings)
    return doc.toprettyxml(indent="  ")


@functools.lru_cache(maxsize=8)
def model_urdf(sim: str = "mujoco") -> str:
    """``urdf_string(sim=sim)``, expanded once per ``sim`` (the kinematic model and the simulator build from it)."""
    return urdf_string(sim=sim)


@functools.lru_cache(maxsize=1)
def joint_limits():
    """(lower, upper, velocity, effort), four read-only (28,) arrays in team order [rad, rad, rad/s, N m].

    Read from ``config/joint_limits.yaml``, the table the xacro writes the URDF ``<limit>`` tags from.
    Raises ValueError if a joint of :data:`JOINT_NAMES` is missing from the table.
    """
    import numpy as np
    import yaml

    with open(config_path("joint_limits.yaml"), encoding="utf-8") as f:
        table = yaml.safe_load(f)["limits"]
    missing = [n for n in JOINT_NAMES if n not in table]
    if missing:
        raise ValueError(f"joint_limits.yaml lacks joints {missing}")
    out = tuple(np.array([float(table[n][k]) for n in JOINT_NAMES]) for k in ("lower", "upper", "velocity", "effort"))
    for a in out:
        a.setflags(write=False)
    return out


def main(argv=None) -> int:
    """Console script ``atlas-description-urdf``: print the expanded URDF."""
    import argparse
    import sys

    p = argparse.ArgumentParser(prog="atlas-description-urdf", description=main.__doc__)
    p.add_argument("--ros2-control", action="store_true", help="add the <ros2_control> block")
    p.add_argument("--sim", choices=SIM_CHOICES, default="none")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    p.add_argument("args", nargs="*", metavar="name:=value", help="further xacro arguments")
    ns = p.parse_args(argv)
    extra = {}
    for a in ns.args:
        if ":=" not in a:
            p.error(f"expected name:=value, got {a!r}")
        k, v = a.split(":=", 1)
        extra[k] = v
    try:
        text = urdf_string(ros2_control=ns.ros2_control, sim=ns.sim, **extra)
    except (ValueError, FileNotFoundError) as e:
        p.error(str(e))
    if ns.output:
        Path(ns.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0
