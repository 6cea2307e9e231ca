"""MuJoCo as an independent oracle / comparison for the kinematics (used by tests and the benchmark).

Imports ``mujoco`` lazily; nothing in the numerical core depends on it.  Joints and bodies are mapped by NAME.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from atlas_crawl_kinematics.model import RobotModel

__all__ = ["MjOracle", "ensure_mujoco_tag", "mujoco_compiler_tag"]


def mujoco_compiler_tag() -> str:
    """The ``<mujoco>`` extension that keeps fixed frames as bodies when MuJoCo compiles the URDF."""
    return '<mujoco><compiler fusestatic="false" discardvisual="true" balanceinertia="false"/></mujoco>'


def ensure_mujoco_tag(urdf: str) -> str:
    """Add ``<mujoco><compiler fusestatic="false" .../></mujoco>`` if the URDF has no ``<mujoco>`` block, so that
    fixed frames (contact frames) survive as bodies."""
    if "<mujoco>" in urdf:
        return urdf
    i = urdf.rfind("</robot>")
    return urdf[:i] + mujoco_compiler_tag() + "\n" + urdf[i:]


@dataclass
class MjOracle:
    """A MuJoCo model of the same URDF with index maps to a :class:`RobotModel`.

    ``floating=False``: the root link is welded to the world (MuJoCo frame = pelvis frame).
    ``floating=True``: a free joint on the root link (qpos[0:7] = pelvis position + quaternion).
    """

    model: RobotModel
    urdf: str
    floating: bool = False

    def __post_init__(self) -> None:
        import mujoco

        self.mj = mujoco
        spec = mujoco.MjSpec.from_string(ensure_mujoco_tag(self.urdf))
        if self.floating:
            spec.body(self.model.root_name).add_freejoint()
        self.m = spec.compile()
        self.d = mujoco.MjData(self.m)
        self.qadr = np.array([self.m.joint(n).qposadr[0] for n in self.model.joint_names])
        self.dadr = np.array([self.m.joint(n).dofadr[0] for n in self.model.joint_names])
        self.body = np.array([mujoco.mj_name2id(self.m, mujoco.mjtObj.mjOBJ_BODY, n) for n in self.model.frame_names])
        if np.any(self.body < 0):
            missing = [n for n, b in zip(self.model.frame_names, self.body) if b < 0]
            raise RuntimeError(f"MuJoCo model lacks bodies {missing} (fusestatic must be false)")
        self._jacp = np.zeros((3, self.m.nv))

    def set_q(self, q: NDArray[np.float64], base_pos=None, base_quat=None) -> None:
        self.d.qpos[self.qadr] = q
        if self.floating:
            self.d.qpos[0:3] = np.zeros(3) if base_pos is None else base_pos
            self.d.qpos[3:7] = np.array([1.0, 0, 0, 0]) if base_quat is None else base_quat
        self.mj.mj_kinematics(self.m, self.d)
        self.mj.mj_comPos(self.m, self.d)

    def positions(self) -> NDArray[np.float64]:
        return self.d.xpos[self.body]

    def rotations(self) -> NDArray[np.float64]:
        return self.d.xmat[self.body].reshape(-1, 3, 3)

    def point_jacobian(self, frame: str, full: bool = False) -> NDArray[np.float64]:
        b = self.body[self.model.frame_index(frame)]
        jacp = np.zeros((3, self.m.nv))
        self.mj.mj_jac(self.m, self.d, jacp, None, self.d.xpos[b], b)
        return jacp if full else jacp[:, self.dadr]

    def rotation_jacobian(self, frame: str) -> NDArray[np.float64]:
        b = self.body[self.model.frame_index(frame)]
        jacr = np.zeros((3, self.m.nv))
        self.mj.mj_jac(self.m, self.d, None, jacr, self.d.xpos[b], b)
        return jacr[:, self.dadr]

    def com(self) -> NDArray[np.float64]:
        return self.d.subtree_com[self.body[0]].copy()

    def com_jacobian(self, full: bool = False) -> NDArray[np.float64]:
        jacp = np.zeros((3, self.m.nv))
        self.mj.mj_jacSubtreeCom(self.m, self.d, jacp, self.body[0])
        return jacp if full else jacp[:, self.dadr]
