"""Floating-base kinematics on the MuJoCo model, for gait authoring and static checks (no physics stepping).

* :class:`WholeBodyIK` — damped weighted least squares over the 34 velocities (6 base + 28 joints):
  contact-site positions, limb-body orientations, horizontal CoM, pelvis orientation/height, posture.
  The floating-base form of the thesis' CoM modulation (DESIGN.md §6): stance contacts held, swing targets, CoM
  task, posture regularisation. Joint limits are enforced by clamping after each step.
* :func:`place_on_ground` — given joint angles and a stance, find the base pose that puts the stance contact
  frames on the floor (height + roll + pitch by Gauss-Newton; x, y, yaw are irrelevant for the static margin).
* :func:`support_margin` — signed distance of a point to the edges of the convex hull of 2-D contacts
  (positive inside), used for the thesis' stability criterion (§4.1: CoM projection inside the support polygon).
"""
from __future__ import annotations

import mujoco
import numpy as np

from atlas_description import JOINT_NAMES
from atlas_crawl_kinematics.support import stability_margin, support_polygon

from .model import LIMB_BODIES, ModelMap


def support_margin(point_xy, contacts_xy) -> float:
    """Signed distance (m) from ``point_xy`` to the boundary of conv(contacts_xy); > 0 inside
    (``atlas_crawl_kinematics.support.stability_margin``). Fewer than 3 contacts: minus the distance to the
    nearest contact (−inf for none), the convention of the gait-authoring checks."""
    pts = np.asarray(contacts_xy, float).reshape(-1, 2)
    p = np.asarray(point_xy, float)[:2]
    if len(pts) < 3:
        return -np.inf if len(pts) == 0 else -float(np.min(np.linalg.norm(pts - p, axis=1)))
    return float(stability_margin(p, support_polygon(pts)))


def _rot_err(R_target, R):
    """Rotation vector (world) taking R to R_target."""
    Re = R_target @ R.T
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, Re.flatten())
    v = np.zeros(3)
    mujoco.mju_quat2Vel(v, quat, 1.0)
    return v


class WholeBodyIK:
    """Floating-base IK on a MuJoCo model (own MjData; the model's qpos layout: free joint first)."""

    def __init__(self, model: mujoco.MjModel):
        self.m = model
        self.d = mujoco.MjData(model)
        self.map = ModelMap(model)
        self.limb_body = [model.body(b[0]).id for b in LIMB_BODIES]   # hand / lower leg
        self.jlo = model.jnt_range[[model.joint(n).id for n in JOINT_NAMES], 0]
        self.jhi = model.jnt_range[[model.joint(n).id for n in JOINT_NAMES], 1]

    def forward(self, qpos):
        self.d.qpos[:] = qpos
        mujoco.mj_kinematics(self.m, self.d)
        mujoco.mj_comPos(self.m, self.d)
        return self.d

    def state(self, qpos):
        """Dict: sites (4,3), limb rotations (4,3,3), com (3,), pelvis rotation (3,3), pelvis pos (3,)."""
        d = self.forward(qpos)
        return dict(sites=d.site_xpos[self.map.site_contact].copy(),
                    rots=np.array([d.xmat[b].reshape(3, 3).copy() for b in self.limb_body]),
                    com=d.subtree_com[0].copy(),
                    pelvis_R=d.xmat[self.map.pelvis].reshape(3, 3).copy(),
                    pelvis_p=d.xpos[self.map.pelvis].copy())

    def solve(self, qpos0, site_targets, rot_targets=None, com_xy=None, pelvis_R=None, pelvis_z=None,
              q_posture=None, w_site=None, w_rot=0.3, w_com=3.0, w_pelvis_rot=0.05, w_pelvis_z=0.5,
              w_posture=None, iters=200, damping=1e-3, tol=1e-5):
        """Return (qpos, info). ``site_targets`` (4,3) world targets of LW,RW,LK,RK (rows of NaN = free)."""
        m, nv = self.m, self.m.nv
        qpos = np.array(qpos0, float)
        w_site = np.ones(4) * 10.0 if w_site is None else np.asarray(w_site, float)
        if w_posture is None:
            w_posture = np.full(28, 0.01)
        jac_p = np.zeros((3, nv))
        jac_r = np.zeros((3, nv))
        jc = np.zeros((3, nv))
        for it in range(iters):
            d = self.forward(qpos)
            rows, errs = [], []
            for i in range(4):
                if np.any(np.isnan(site_targets[i])):
                    continue
                mujoco.mj_jacSite(m, d, jac_p, None, self.map.site_contact[i])
                rows.append(w_site[i] * jac_p.copy())
                errs.append(w_site[i] * (site_targets[i] - d.site_xpos[self.map.site_contact[i]]))
                if rot_targets is not None and rot_targets[i] is not None:
                    b = self.limb_body[i]
                    mujoco.mj_jacBody(m, d, None, jac_r, b)
                    rows.append(w_rot * jac_r.copy())
                    errs.append(w_rot * _rot_err(rot_targets[i], d.xmat[b].reshape(3, 3)))
            if com_xy is not None:
                mujoco.mj_jacSubtreeCom(m, d, jc, 0)
                rows.append(w_com * jc[:2].copy())
                errs.append(w_com * (np.asarray(com_xy) - d.subtree_com[0][:2]))
            if pelvis_R is not None:
                mujoco.mj_jacBody(m, d, None, jac_r, self.map.pelvis)
                rows.append(w_pelvis_rot * jac_r.copy())
                errs.append(w_pelvis_rot * _rot_err(pelvis_R, d.xmat[self.map.pelvis].reshape(3, 3)))
            if pelvis_z is not None:
                mujoco.mj_jacBody(m, d, jac_p, None, self.map.pelvis)
                rows.append(w_pelvis_z * jac_p[2:3].copy())
                errs.append(w_pelvis_z * np.array([pelvis_z - d.xpos[self.map.pelvis][2]]))
            if q_posture is not None:
                J = np.zeros((28, nv))
                J[np.arange(28), self.map.dof_adr] = 1.0
                rows.append(w_posture[:, None] * J)
                errs.append(w_posture * (q_posture - qpos[self.map.qpos_adr]))
            A = np.vstack(rows)
            e = np.concatenate(errs)
            dv = np.linalg.solve(A.T @ A + damping * np.eye(nv), A.T @ e)
            n = np.max(np.abs(dv))
            if n > 0.2:
                dv *= 0.2 / n
            mujoco.mj_integratePos(m, qpos, dv, 1.0)
            qj = qpos[self.map.qpos_adr]
            qpos[self.map.qpos_adr] = np.clip(qj, self.jlo, self.jhi)
            if n < tol:
                break
        st = self.state(qpos)
        site_err = np.array([np.linalg.norm(st["sites"][i] - site_targets[i]) if not np.any(np.isnan(site_targets[i]))
                             else 0.0 for i in range(4)])
        return qpos, dict(site_err=site_err, com=st["com"], iters=it + 1)


def place_on_ground(ik: WholeBodyIK, q28, stance_mask, ground_offset=None, qpos_guess=None, iters=60):
    """Base pose (height, roll, pitch; x, y, yaw kept from ``qpos_guess``) that puts the stance contact frames
    at the floor (site z = ground_offset[limb], the frame's height above the floor when touching).
    Returns (qpos, residual (m), state dict)."""
    m = ik.m
    qpos = np.zeros(m.nq) if qpos_guess is None else np.array(qpos_guess, float)
    if qpos_guess is None:
        qpos[3] = 1.0
        qpos[2] = 0.5
    qpos[ik.map.qpos_adr] = q28
    off = np.zeros(4) if ground_offset is None else np.asarray(ground_offset, float)
    idx = np.flatnonzero(stance_mask)
    jac = np.zeros((3, m.nv))
    for _ in range(iters):
        d = ik.forward(qpos)
        rows, errs = [], []
        for i in idx:
            mujoco.mj_jacSite(m, d, jac, None, ik.map.site_contact[i])
            rows.append(jac[2, [2, 3, 4, 5]])     # base z + the 3 base rotations (free-joint angular dofs are local)
            errs.append(off[i] - d.site_xpos[ik.map.site_contact[i]][2])
        A, e = np.array(rows), np.array(errs)
        dx = np.linalg.lstsq(A, e, rcond=None)[0] if len(idx) >= 3 else np.array([e.mean() if len(e) else 0, 0, 0, 0])
        dv = np.zeros(m.nv)
        dv[[2, 3, 4, 5]] = dx
        mujoco.mj_integratePos(m, qpos, dv, 1.0)
        if np.max(np.abs(dx)) < 1e-7:
            break
    st = ik.state(qpos)
    res = float(np.max(np.abs(st["sites"][idx, 2] - off[idx]))) if len(idx) else 0.0
    return qpos, res, st
