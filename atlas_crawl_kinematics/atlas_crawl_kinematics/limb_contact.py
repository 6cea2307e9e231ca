"""Per-limb contact kinematics and the static joint-torque model of the contact force (no simulator, no ROS).

For each crawling limb (wrists, knees: ``atlas_description.LIMB_LINKS``) and one configuration (joints ``q``, pelvis
pose ``R_b, p_b`` in the world):

* the limb's lowest collision point ``c`` (clearance.py) and its clearance above a flat ground;
* that point as a material point of its link (frame ``f``, local coordinates ``r``), so its world velocity can be
  taken by finite differences between two configurations: ``v = (c_k − (R_b T_f)_{k−1} r) / Δt``. A limb that rolls
  on the ground has a moving lowest point but a still material point (thesis §4.3.2 uses the contact frame's speed;
  Bledt et al. 2018 the foot's);
* the limb's chain Jacobian ``J_i`` (3 × n_i, world rows) at ``c``: the columns of the limb's own joints between
  the torso/pelvis and the contact (back and neck joints excluded, they carry every contact above them);
* the static torque residual ``b_i = −(τ_i + Q_g,i)``, with ``Q_g = M J_comᵀ g`` the generalised gravity force
  (pelvis held, matches MuJoCo's ``qfrc_bias`` at rest). Joint statics ``τ + Q_g + Σ_k J_kᵀ f_k = 0`` restricted to
  limb ``i``'s joints, which only its own contact loads, give ``b_i = J_iᵀ f_i`` (thesis §5.4: contact forces from
  joint torques). Inertial and damping torques of a swinging limb are the model error.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .clearance import LimbClearance
from .model import RobotModel

__all__ = ["LimbContactModel", "LimbContactSample"]

GRAVITY_MPS2 = 9.81


@dataclass
class LimbContactSample:
    """One configuration's per-limb contact quantities (world frame); see the module doc."""
    clearance: NDArray[np.float64]        # (L,) [m] lowest collision point above the ground
    point: NDArray[np.float64]            # (L, 3) [m] that point, world
    frame: NDArray[np.int64]              # (L,) model frame index of the link holding it
    local: NDArray[np.float64]            # (L, 3) [m] the point in that link's frame
    jacobians: list                       # L × (3, n_i) world-row chain Jacobians at the point
    torque_bias: NDArray[np.float64]      # (n_joints,) −Q_g: the joint torques gravity alone needs
    frame_rot: NDArray[np.float64]        # (n_frames, 3, 3) world rotation of every model frame
    frame_pos: NDArray[np.float64]        # (n_frames, 3) [m] world origin of every model frame

    def material_velocity(self, previous: "LimbContactSample", dt_s: float) -> NDArray[np.float64]:
        """(L, 3) [m/s] world velocity of each limb's contact material point by a backward difference:
        ``v = (c_k − (p_f + R_f r)_{k−1}) / Δt`` with this sample's frame ``f`` and local point ``r``."""
        f = self.frame
        before = previous.frame_pos[f] + np.einsum("lij,lj->li", previous.frame_rot[f], self.local)
        return (self.point - before) / float(dt_s)


class LimbContactModel:
    """Evaluates :class:`LimbContactSample` for a configuration; the limb chains are fixed at construction."""

    def __init__(self, model: RobotModel, urdf: str, limb_links: Sequence[Sequence[str]],
                 exclude_joint_prefixes: Sequence[str] = ("back_", "neck_")):
        self.model = model
        self.clearance_model = LimbClearance(model, urdf, limb_links)
        self.n_limbs = len(limb_links)
        self._prim_frame = self.clearance_model._frame
        self._prim_limb = self.clearance_model._limb
        excl = tuple(exclude_joint_prefixes)
        self.chains: list[NDArray[np.int64]] = []
        for links in limb_links:
            js: list[int] = []
            for link in links:
                f = model.frame_index(link)
                while f > 0:
                    j = int(model.frame_joint[f])
                    if j >= 0 and j not in js and not model.joint_names[j].startswith(excl):
                        js.append(j)
                    f = int(model.frame_parent[f])
            self.chains.append(np.array(sorted(js), dtype=np.int64))

    def evaluate(self, q: ArrayLike, base_rot: ArrayLike, base_pos: ArrayLike,
                 ground_z: float = 0.0) -> LimbContactSample:
        """Contact quantities of every limb; ``q`` in the model's joint order, pelvis pose in the world."""
        m = self.model
        kin = m.forward(q)
        Rb = np.asarray(base_rot, dtype=float).reshape(3, 3)
        pb = np.asarray(base_pos, dtype=float).reshape(3)
        pts = self.clearance_model.lowest_points(kin, Rb, pb)
        L = self.n_limbs
        frame = np.zeros(L, dtype=np.int64)
        point = np.zeros((L, 3))
        for i in range(L):
            sel = np.flatnonzero(self._prim_limb == i)
            k = sel[int(np.argmin(pts[sel, 2]))]
            frame[i] = self._prim_frame[k]
            point[i] = pts[k]
        all_rot = Rb @ kin.rot                                   # (nf, 3, 3) world rotations
        all_pos = kin.pos @ Rb.T + pb                            # (nf, 3) world origins
        local = np.einsum("lji,lj->li", all_rot[frame], point - all_pos[frame])   # R_fᵀ (c − p_f)
        jac = []
        for i in range(L):
            J = kin.point_jacobians([int(frame[i])], points_local=local[i:i + 1])   # 3 × n, pelvis rows
            jac.append(Rb @ J[:, self.chains[i]])
        g_pelvis = Rb.T @ np.array([0.0, 0.0, -GRAVITY_MPS2])
        qg = m.total_mass * (kin.com_jacobian().T @ g_pelvis)    # generalised gravity force Q_g
        s = LimbContactSample(clearance=point[:, 2] - float(ground_z), point=point, frame=frame, local=local,
                              jacobians=jac, torque_bias=-qg, frame_rot=all_rot, frame_pos=all_pos)
        return s

    def force_residuals(self, sample: LimbContactSample, tau: ArrayLike) -> list:
        """Per limb ``b_i = −(τ_i + Q_g,i) = J_iᵀ f_i`` (n_i,) [N m] from measured joint torques ``τ`` (model order)."""
        t = np.asarray(tau, dtype=float)
        return [sample.torque_bias[c] - t[c] for c in self.chains]
