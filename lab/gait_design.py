"""Kinematic authoring tool for the crawl/turn key-frame scripts (thesis §4.1 workflow, steps 2-4).

The thesis tuned joint angles by hand and checked the CoM afterwards. Here every key-frame is *solved* with a
floating-base whole-body IK: the stance contacts are held at fixed world positions, the swing limb gets a Cartesian
target, and the whole-body CoM is put where the next support triangle needs it (thesis "planning ahead", with a
planned static margin ``margin_m`` in every tripod). The result is a plain YAML key-frame script (joint angles
only) that the player runs open loop; the planned CoM and static margin of every key-frame are written as comments.

Contact points are the *centres* of the wrist and knee contact spheres of atlas_description (target height =
sphere radius), so a contact stays on the floor whatever the limb's orientation.

Crawl cycle (:meth:`CrawlDesigner.crawl`; thesis §4.1.3 order left arm, right knee, right arm, left knee)::

    K0 stance (all four down; skipped by the part loop) -- the *staggered* base stance: the first diagonal pair of
       the order (LW, RK) a quarter stride behind its nominal place, the other pair (RW, LK) a quarter stride ahead
    first half, for limb in (LW, RK):
        shift: all four down, CoM moved to the closest point that has margin_m in the triangle without `limb`
        lift : limb up and part of the way to its goal (others held, CoM held)
        place: limb on its goal one stride ahead, pressed ``press_m`` into the floor (servo sag)
    second half = the left/right MIRROR image of the first half (``mirror_of`` key-frames), which is exactly
        periodic because the staggered stance after the first half is the mirror image of K0 advanced by half a
        stride. Yaw and lateral effects of the first half are cancelled by the second half to first order.

A negative stride gives a backward crawl designed as its own cycle (use ``order=("LK", "RW", "RK", "LW")``, the
thesis order reversed).

Turn cycle (:meth:`CrawlDesigner.turn`, thesis §4.1.2): same tripod sequence; each limb steps to its place in the
stance rotated by ``turn_rad`` about the contact centroid, the pelvis heading advancing a quarter turn per step;
the cycle closes because the final stance is K0's rotated by ``turn_rad`` (same joint angles).

    python lab/gait_design.py crawl_forward [--set stride_m=0.3 ...] [--out path.yaml]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys

import mujoco
import numpy as np

from atlas_crawl_controller.keyframes import GAITS_DIR, mirror_q
from atlas_description import JOINT_NAMES, LIMB_NAMES, joint_limits

from atlas_crawl_mujoco.kin import WholeBodyIK, _rot_err, support_margin
from atlas_crawl_mujoco.sim import AtlasSim

#: The probe's four-point stance (reference/README.md), used as the IK seed.
SEED_JOINTS = {"*_leg_lhy": -1.5, "*_leg_kny": 2.0, "*_leg_uay": 0.6, "*_arm_usy": -1.3, "*_arm_shx": -0.5,
               "*_arm_elx": 0.6, "neck_ay": -0.6}
SEED_PITCH_RAD = 1.25

#: Contact spheres (body, sphere name prefix) per limb LW, RW, LK, RK.
CONTACT_BODIES = ("l_hand", "r_hand", "l_lleg", "r_lleg")
#: diagonal partner of each limb (LW-RK, RW-LK)
DIAGONAL = (3, 2, 1, 0)

CRAWL_DEFAULTS = dict(
    stride_m=0.20,            # contact advance per cycle (negative = backward)
    hand_x_m=0.60, hand_y_m=0.30,   # nominal sphere-centre positions (pelvis-start frame, before staggering)
    knee_x_m=0.0, knee_y_m=0.12,
    com_x_m=0.24,             # CoM x of the K0 stance (same frame)
    pelvis_dz_m=0.0,          # pelvis height change w.r.t. the settled probe stance
    pitch_deg=0.0,            # pelvis pitch change w.r.t. the probe stance (+ = nose down)
    margin_m=0.045,           # planned static margin in every tripod (issue target >= 0.03 m)
    com_lead_m=0.0,           # extra CoM travel along the direction of motion at each shift
    lift_hand_m=0.07, lift_knee_m=0.05,
    swing_frac=0.5,           # the lift key-frame puts the limb this fraction of the way to its goal
    press_m=0.01,             # place targets this far below the floor-touching height (servo sag)
    sag_comp=1.0,             # servo-sag compensation factor (command = IK angles + sag_comp * tau/Kp)
    com_bias=None,            # {limb: [dx, dy]} measured physics CoM error at that limb's lift (search_gait ilc)
    kin_margin_m=0.035,       # with com_bias: the kinematic plan keeps at least this margin (check_gaits)
    press_diag_m=0.0,         # lift/place: the stance limb diagonal to the swing limb is targeted this far below
                              # the floor (it unloads first when the body rocks about the other diagonal)
    t_stance_s=0.6, t_shift_s=0.5, t_lift_s=0.3, t_place_s=0.3,
    t_shift_knee_s=0.0,       # > 0: own duration of the shifts before a knee lift (the CoM lags most there)
    t_hold_s=0.0,             # > 0: hold the shifted pose this long before the lift (the body settles)
    order=("LW", "RK", "RW", "LK"),
    turn_rad=0.0,
)

TURN_DEFAULTS = dict(CRAWL_DEFAULTS, stride_m=0.0, turn_rad=0.35, centre_x_m=None, centre_y_m=None)

#: Parameter sets that produced the shipped scripts (updated from search_gait results).
PRESETS = {
    # search_gait crawl_forward --params stride_m t_shift_s t_lift_s t_place_s margin_m (23 evaluations, 3 cycles)
    # + CoM lead 0.04 m (the knees reach their goals: IK error 81 -> 39 mm) and low swings (3.5/3.0 cm);
    # the start stance (K0 = crawl_stance.yaml) is unchanged by these
    "crawl_forward": dict(stride_m=0.273, t_shift_s=0.382, t_lift_s=0.21, t_place_s=0.209, margin_m=0.057,
                          com_lead_m=0.04, lift_hand_m=0.035, lift_knee_m=0.03),
    # low swings (3.5/3.0 cm) allow 0.2 s lifts/places; sag_comp 0.6; short stance dwell (full loop)
    "crawl_backward": dict(stride_m=-0.26, com_x_m=0.20, order=("LK", "RW", "RK", "LW"), margin_m=0.038,
                           lift_hand_m=0.035, lift_knee_m=0.03, sag_comp=0.6, t_stance_s=0.2, t_shift_s=0.46,
                           t_lift_s=0.2, t_place_s=0.2),
    "turn_left": dict(turn_rad=0.65, margin_m=0.06, lift_hand_m=0.035, lift_knee_m=0.03, t_shift_s=0.55,
                      t_lift_s=0.18, t_place_s=0.18, t_stance_s=0.2),
    # NOT shipped: turn_tune's centre-under-CoM variant (centre_x_m=0.2511, centre_y_m=0.0054, turn_rad=0.6533,
    # t_shift_s=0.5277) met the turning targets in the player evaluation (39.2 s/circle, radius 0.060 m) but through
    # the ROS graph, right after a crawl, it turned the wrong way and slid 1.19 m (embedded --quick)
}


def _seed_q():
    from atlas_crawl_controller.keyframes import _pose_from_dict
    return _pose_from_dict(SEED_JOINTS)


def _rotz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])




def com_in_triangle(com_xy, tri_xy, margin, lead_dir=None, lead=0.0, step=0.004, bias=None, kin_margin=None):
    """Point closest to ``com_xy + lead * lead_dir`` whose static margin in ``tri_xy`` is >= ``margin``
    (grid search); the best-margin point if none reaches it.

    ``bias`` (2,): measured physics CoM error (physics − plan, see ``search_gait ilc``). Then the point is chosen
    so that ``point + bias`` has the margin ``margin`` AND the point itself (the kinematic plan) keeps at least
    ``kin_margin`` (default ``margin``; check_gaits measures the plan)."""
    tri = np.asarray(tri_xy, float)
    goal = np.asarray(com_xy, float) + (0 if lead_dir is None else lead * np.asarray(lead_dir, float))
    lo, hi = tri.min(0), tri.max(0)
    xs = np.arange(lo[0], hi[0] + step, step)
    ys = np.arange(lo[1], hi[1] + step, step)
    X, Y = np.meshgrid(xs, ys)
    pts = np.stack([X.ravel(), Y.ravel()], 1)
    # signed distance to the edges of a triangle (CCW orientation fixed here)
    a, b, c = tri
    if (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]) < 0:
        b, c = c, b
    mg = np.full(len(pts), np.inf)
    for p0, p1 in ((a, b), (b, c), (c, a)):
        e = p1 - p0
        n = np.array([-e[1], e[0]]) / np.linalg.norm(e)
        mg = np.minimum(mg, (pts - p0) @ n)
    if bias is not None and np.any(bias):
        mgb = np.full(len(pts), np.inf)
        pb = pts + np.asarray(bias, float)
        for p0, p1 in ((a, b), (b, c), (c, a)):
            e = p1 - p0
            n = np.array([-e[1], e[0]]) / np.linalg.norm(e)
            mgb = np.minimum(mgb, (pb - p0) @ n)
        km = margin if kin_margin is None else kin_margin
        ok = (mgb >= margin) & (mg >= km)
        if not np.any(ok):
            return pts[int(np.argmax(np.minimum(mgb, mg)))]
        cand = pts[ok]
        return cand[int(np.argmin(np.linalg.norm(cand - goal, axis=1)))]
    ok = mg >= margin
    if not np.any(ok):
        return pts[int(np.argmax(mg))]
    cand = pts[ok]
    return cand[int(np.argmin(np.linalg.norm(cand - goal, axis=1)))]


class CrawlDesigner:
    """Whole-body-IK key-frame designer (see module doc)."""

    def __init__(self, sim: AtlasSim | None = None, sag_comp: float = 1.0):
        self.sim = sim or AtlasSim()
        #: servo-sag compensation: key-frame command = IK angles + sag_comp * τ_static / Kp (team notes'
        #: θ_cmd = θ + τ/Kp applied to the planned static load, so the loaded robot reaches the planned pose)
        self.sag_comp = float(sag_comp)
        self.m = self.sim.model
        self.ik = WholeBodyIK(self.m)
        m = self.m
        # contact spheres: (body id, centre in body frame, radius)
        self.spheres = []
        for b in CONTACT_BODIES:
            bid = m.body(b).id
            cands = [g for g in range(m.ngeom) if m.geom_bodyid[g] == bid and m.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE]
            g = cands[0]
            self.spheres.append((bid, m.geom_pos[g].copy(), float(m.geom_size[g][0])))
        # settle the seed stance once in physics
        s = self.sim
        s.reset(_seed_q(), base_quat_wxyz=(math.cos(SEED_PITCH_RAD / 2), 0, math.sin(SEED_PITCH_RAD / 2), 0))
        s.step(1000)
        self.seed_qpos = s.data.qpos.copy()
        self.seed_qpos[0:2] = 0.0
        st = self.ik.state(self.seed_qpos)
        self.pelvis_R0 = st["pelvis_R"]
        self.pelvis_z0 = float(st["pelvis_p"][2])
        self.q_posture = self.seed_qpos[self.ik.map.qpos_adr].copy()
        self.sole_z0 = self.ik.forward(self.seed_qpos).site_xpos[self.ik.map.site_sole][:, 2].copy()
        self.sole_tol_m = 0.08
        #: relative posture weights: keep the back and neck near the probe stance (trunk roll wastes margin)
        self.w_posture = np.array([3.0 if n == "neck_ay" else 1.0 for n in JOINT_NAMES])
        self.radius = np.array([sp[2] for sp in self.spheres])
        self.dof = self.ik.map.dof_adr
        self.qadr = self.ik.map.qpos_adr
        self.jlo, self.jhi = self.ik.jlo, self.ik.jhi

    # ------------------------------------------------------------------ kinematics
    def centres(self, qpos):
        d = self.ik.forward(qpos)
        return np.array([d.xpos[b] + d.xmat[b].reshape(3, 3) @ p for b, p, _r in self.spheres])

    def com(self, qpos):
        return self.ik.forward(qpos).subtree_com[0].copy()

    def solve(self, qpos0, targets, com_xy, heading, pelvis_z, pitch, iters=400, w_site=100.0, w_com=20.0,
              w_prot=0.5, w_pz=1.0, w_post=0.05, damping=1e-4, w_sole=30.0, sole_lift=(0.0, 0.0)):
        """Whole-body IK: sphere centres -> ``targets`` (4,3), CoM xy, pelvis orientation (heading, pitch offset
        on the probe's), pelvis height, posture. Joint limits by clamping. Returns (qpos, max contact error m)."""
        m, d, nv = self.m, self.ik.d, self.m.nv
        qpos = np.array(qpos0, float)
        Rp = _rotz(heading) @ np.array([[math.cos(pitch), 0, math.sin(pitch)], [0, 1, 0],
                                        [-math.sin(pitch), 0, math.cos(pitch)]]) @ self.pelvis_R0
        jp, jr, jc = np.zeros((3, nv)), np.zeros((3, nv)), np.zeros((3, nv))
        Jpost = np.zeros((28, nv))
        Jpost[np.arange(28), self.dof] = 1.0
        for _ in range(iters):
            d = self.ik.forward(qpos)
            rows, errs = [], []
            for i, (b, p, _r) in enumerate(self.spheres):
                pw = d.xpos[b] + d.xmat[b].reshape(3, 3) @ p
                mujoco.mj_jac(m, d, jp, None, pw, b)
                rows.append(w_site * jp.copy())
                errs.append(w_site * (targets[i] - pw))
            for j, sid in enumerate(self.ik.map.site_sole):   # feet clear of the floor: sole height as in the probe
                e_s = self.sole_z0[j] - self.sole_tol_m + sole_lift[j] - d.site_xpos[sid][2]
                if e_s <= 0:      # one-sided: only keep the foot from dropping below the probe height - tol
                    continue
                mujoco.mj_jacSite(m, d, jp, None, sid)
                rows.append(w_sole * jp[2:3].copy())
                errs.append(w_sole * np.array([e_s]))
            mujoco.mj_jacSubtreeCom(m, d, jc, 0)
            rows.append(w_com * jc[:2].copy())
            errs.append(w_com * (np.asarray(com_xy) - d.subtree_com[0][:2]))
            pb = self.ik.map.pelvis
            mujoco.mj_jacBody(m, d, jp, jr, pb)
            rows.append(w_prot * jr.copy())
            errs.append(w_prot * _rot_err(Rp, d.xmat[pb].reshape(3, 3)))
            rows.append(w_pz * jp[2:3].copy())
            errs.append(w_pz * np.array([pelvis_z - d.xpos[pb][2]]))
            rows.append(w_post * self.w_posture[:, None] * Jpost)
            errs.append(w_post * self.w_posture * (self.q_posture - qpos[self.qadr]))
            A = np.vstack(rows)
            e = np.concatenate(errs)
            dv = np.linalg.solve(A.T @ A + damping * np.eye(nv), A.T @ e)
            n = np.max(np.abs(dv))
            if n > 0.1:
                dv *= 0.1 / n
            mujoco.mj_integratePos(m, qpos, dv, 1.0)
            qpos[self.qadr] = np.clip(qpos[self.qadr], self.jlo, self.jhi)
            if n < 1e-6:
                break
        err = float(np.max(np.linalg.norm(self.centres(qpos) - targets, axis=1)))
        return qpos, err

    def static_torques(self, qpos, stance_mask, w_tangential=4.0):
        """Joint torques (28, team order) holding ``qpos`` statically on the stance contacts, and the contact
        forces (n,3). Equilibrium of the floating base: Jc_base^T f = g_base (6 equations); f = weighted
        minimum-norm solution (tangential components weighted ``w_tangential``), τ = g_joints − Jc_joints^T f."""
        m = self.m
        d = self.ik.forward(qpos)
        d.qvel[:] = 0.0
        d.qacc[:] = 0.0
        bias = np.zeros(m.nv)
        mujoco.mj_rne(m, d, 0, bias)
        idx = np.flatnonzero(stance_mask)
        jp = np.zeros((3, m.nv))
        J = []
        for i in idx:
            b, p, r = self.spheres[i]
            pw = d.xpos[b] + d.xmat[b].reshape(3, 3) @ p - np.array([0, 0, r])
            mujoco.mj_jac(m, d, jp, None, pw, b)
            J.append(jp.copy())
        J = np.vstack(J)                       # (3n, nv)
        A = J[:, :6].T                         # (6, 3n)
        w = np.tile([w_tangential, w_tangential, 1.0], len(idx))
        Winv = np.diag(1.0 / w)
        f = Winv @ A.T @ np.linalg.solve(A @ Winv @ A.T + 1e-9 * np.eye(6), bias[:6])
        tau = bias - J.T @ f
        return tau[self.dof], f.reshape(-1, 3)

    # ------------------------------------------------------------------ key-frames
    def _kf(self, name, qpos, contacts, stance_mask, dur, err, next_tri=None, mirror_of=None):
        com = self.com(qpos)[:2]
        tri = stance_mask if next_tri is None else next_tri
        margin = support_margin(com, contacts[tri, :2])
        tau, f = self.static_torques(qpos, stance_mask)
        q = qpos[self.qadr].copy()
        q_cmd = q + self.sag_comp * tau / self.sim.kp
        return dict(name=name, qpos=qpos.copy(), q=q, q_cmd=q_cmd, tau=tau, forces=f, stance=stance_mask.copy(),
                    duration_s=float(dur), com=com, margin=float(margin), err=err,
                    tri=[LIMB_NAMES[j] for j in range(4) if tri[j]], mirror_of=mirror_of)

    def _nominal(self, p):
        r = self.radius
        return np.array([[p["hand_x_m"], p["hand_y_m"], r[0]], [p["hand_x_m"], -p["hand_y_m"], r[1]],
                         [p["knee_x_m"], p["knee_y_m"], r[2]], [p["knee_x_m"], -p["knee_y_m"], r[3]]])

    def crawl(self, **kw):
        """Periodic, mirror-symmetric crawl cycle. Returns (key-frame dicts, parameters)."""
        p = dict(CRAWL_DEFAULTS, **kw)
        self.sag_comp = float(p["sag_comp"])
        s = float(p["stride_m"])
        order = [LIMB_NAMES.index(n) for n in p["order"]]
        first = order[:2]
        if set(LIMB_NAMES[i] for i in order[2:]) != {LIMB_NAMES[i].translate(str.maketrans("LR", "RL")) for i in first}:
            raise ValueError("order: the second half must be the mirror image of the first (e.g. LW,RK,RW,LK)")
        contacts = self._nominal(p)
        for i in range(4):
            contacts[i, 0] += (-0.25 if i in first else 0.25) * s
        pz = self.pelvis_z0 + p["pelvis_dz_m"]
        pitch = math.radians(p["pitch_deg"])
        qpos, err = self.solve(self.seed_qpos, contacts, (p["com_x_m"], 0.0), 0.0, pz, pitch, iters=400)
        kfs = [self._kf("stance", qpos, contacts, np.ones(4, bool), p["t_stance_s"], err)]
        u = np.array([1.0, 0.0]) * (1 if s >= 0 else -1)
        for li in first:
            name = LIMB_NAMES[li]
            tri = np.array([j != li for j in range(4)])
            com_xy = com_in_triangle(self.com(qpos)[:2], contacts[tri, :2], p["margin_m"], u, p["com_lead_m"],
                                     bias=(p["com_bias"] or {}).get(name), kin_margin=p["kin_margin_m"])
            qpos, err = self.solve(qpos, contacts, com_xy, 0.0, pz, pitch)
            t_sh = p["t_shift_knee_s"] if (li >= 2 and p["t_shift_knee_s"] > 0) else p["t_shift_s"]
            kfs.append(self._kf(f"shift_for_{name}", qpos, contacts, np.ones(4, bool), t_sh, err, tri))
            if p["t_hold_s"] > 0:
                kfs.append(self._kf(f"hold_for_{name}", qpos, contacts, np.ones(4, bool), p["t_hold_s"], err, tri))
            goal = contacts[li].copy()
            goal[0] += s
            lift = contacts[li] + p["swing_frac"] * (goal - contacts[li])
            lift[2] += p["lift_hand_m"] if li < 2 else p["lift_knee_m"]
            tg = contacts.copy()
            tg[li] = lift
            tg[DIAGONAL[li], 2] -= p["press_diag_m"]
            qpos, err = self.solve(qpos, tg, com_xy, 0.0, pz, pitch)
            kfs.append(self._kf(f"lift_{name}", qpos, tg, tri, p["t_lift_s"], err))
            tg[li] = goal - np.array([0, 0, p["press_m"]])
            qpos, err = self.solve(qpos, tg, com_xy, 0.0, pz, pitch)
            contacts = contacts.copy()
            contacts[li] = goal
            kfs.append(self._kf(f"place_{name}", qpos, contacts, tri, p["t_place_s"], err))
        # second half: mirror images (world mirror y -> -y, then half a stride ahead)
        n1 = len(kfs)
        for k in kfs[1:n1]:
            mq = mirror_q(k["q"])
            qp = k["qpos"].copy()
            qp[self.qadr] = mq
            qp[1] = -qp[1]
            qp[3:7] = [qp[3], -qp[4], qp[5], -qp[6]]
            qp[0] += 0.5 * s
            st = k["stance"][[1, 0, 3, 2]]
            mname = k["name"].replace("LW", "#").replace("RW", "LW").replace("#", "RW") \
                .replace("LK", "#").replace("RK", "LK").replace("#", "RK")
            cts = self.centres(qp)
            cts[:, 2] = self.radius
            tri_names = [LIMB_NAMES[[1, 0, 3, 2][LIMB_NAMES.index(t)]] for t in k["tri"]]
            tri = np.array([n in tri_names for n in LIMB_NAMES])
            kfs.append(self._kf(mname, qp, cts, st, k["duration_s"], k["err"], tri, mirror_of=k["name"]))
        return kfs, p

    def turn(self, **kw):
        """Periodic turn-on-the-spot cycle (rotation ``turn_rad`` per cycle, + = left) about the centre
        ``(centre_x_m, centre_y_m)`` in the pelvis-start frame (None = the contact centroid). A centre under the
        cycle's mean CoM rather than the centroid (which lies ahead of it) shrinks the CoM circle; the K0 stance
        does not depend on it."""
        p = dict(TURN_DEFAULTS, **kw)
        self.sag_comp = float(p["sag_comp"])
        th = float(p["turn_rad"])
        order = [LIMB_NAMES.index(n) for n in p["order"]]
        nominal = self._nominal(p)
        contacts = nominal.copy()
        centre = contacts[:, :2].mean(0)
        if p["centre_x_m"] is not None:
            centre[0] = float(p["centre_x_m"])
        if p["centre_y_m"] is not None:
            centre[1] = float(p["centre_y_m"])
        pz = self.pelvis_z0 + p["pelvis_dz_m"]
        pitch = math.radians(p["pitch_deg"])
        qpos, err = self.solve(self.seed_qpos, contacts, (p["com_x_m"], 0.0), 0.0, pz, pitch, iters=400)
        kfs = [self._kf("stance", qpos, contacts, np.ones(4, bool), p["t_stance_s"], err)]
        heading = 0.0
        c, s_ = math.cos(th), math.sin(th)
        for li in order:
            name = LIMB_NAMES[li]
            tri = np.array([j != li for j in range(4)])
            com_xy = com_in_triangle(self.com(qpos)[:2], contacts[tri, :2], p["margin_m"],
                                     bias=(p["com_bias"] or {}).get(name), kin_margin=p["kin_margin_m"])
            qpos, err = self.solve(qpos, contacts, com_xy, heading, pz, pitch)
            kfs.append(self._kf(f"shift_for_{name}", qpos, contacts, np.ones(4, bool), p["t_shift_s"], err, tri))
            r = nominal[li, :2] - centre
            goal = contacts[li].copy()
            goal[:2] = centre + np.array([c * r[0] - s_ * r[1], s_ * r[0] + c * r[1]])
            lift = contacts[li] + p["swing_frac"] * (goal - contacts[li])
            lift[2] += p["lift_hand_m"] if li < 2 else p["lift_knee_m"]
            tg = contacts.copy()
            tg[li] = lift
            tg[DIAGONAL[li], 2] -= p["press_diag_m"]
            heading += th / 4
            qpos, err = self.solve(qpos, tg, com_xy, heading - th / 8, pz, pitch)
            kfs.append(self._kf(f"lift_{name}", qpos, tg, tri, p["t_lift_s"], err))
            tg[li] = goal - np.array([0, 0, p["press_m"]])
            qpos, err = self.solve(qpos, tg, com_xy, heading, pz, pitch)
            contacts = contacts.copy()
            contacts[li] = goal
            kfs.append(self._kf(f"place_{name}", qpos, contacts, tri, p["t_place_s"], err))
        return kfs, p

    def design(self, gait: str, **kw):
        if gait.startswith("turn"):
            kw = dict(PRESETS.get("turn_left", {}), **kw)
            if gait == "turn_right":
                kw["turn_rad"] = -abs(kw.get("turn_rad", TURN_DEFAULTS["turn_rad"]))
            return self.turn(**kw)
        return self.crawl(**dict(PRESETS.get(gait, {}), **kw))


def _fmt_params(p):
    return json.dumps({k: (list(v) if isinstance(v, tuple) else (round(v, 4) if isinstance(v, float) else v))
                       for k, v in p.items()})


def to_yaml(kfs, name, description, params, tool="gait_design", objective=None, measured=None,
            part_loop_start=1, fall_check="crawl") -> str:
    q0, qe = kfs[0]["qpos"][3:7], kfs[-1]["qpos"][3:7]
    lines = [f"# Generated by: python lab/{tool}.py (whole-body IK key-frames, thesis 4.1 workflow).",
             f"# Design parameters: {_fmt_params(params)}"]
    if objective:
        lines.append(f"# Search objective: {objective}")
    if measured:
        lines.append(f"# Measured (run_gait): {measured}")
    lines += ["# Hand edits are fine: re-run python -m atlas_crawl_mujoco.check_gaits.",
              f"name: {name}", f"description: >-\n  {description}", f"fall_check: {fall_check}",
              f"part_loop_start: {part_loop_start}",
              "start_quat_wxyz: [" + ", ".join(f"{v:.5f}" for v in q0) + "]",
              "end_quat_wxyz: [" + ", ".join(f"{v:.5f}" for v in qe) + "]",
              "keyframes:"]
    lo, hi, _, _ = joint_limits()
    for k in kfs:
        lines.append(f"  # planned CoM ({k['com'][0]:+.3f}, {k['com'][1]:+.3f}) m; static margin in "
                     f"{'/'.join(k['tri'])}: {k['margin']:+.3f} m; IK contact error {k['err'] * 1000:.1f} mm")
        lines.append(f"  - name: {k['name']}")
        lines.append(f"    duration_s: {k['duration_s']:.3f}")
        st = [n for n, b in zip(LIMB_NAMES, k["stance"]) if b]
        lines.append(f"    stance: [{', '.join(st)}]")
        if k.get("mirror_of"):
            lines.append(f"    mirror_of: {k['mirror_of']}")
            continue
        lines.append("    joints:")
        for n, v, a, b in zip(JOINT_NAMES, k["q_cmd"], lo, hi):
            lines.append(f"      {n}: {float(np.clip(v, a + 1e-4, b - 1e-4)):+.4f}")
    return "\n".join(lines) + "\n"


DESCRIPTIONS = {
    "crawl_forward": "Tripod crawl on wrists and knees, thesis order LW, RK, RW, LK (4.1.3). Periodic staggered "
                     "cycle designed with whole-body IK: stance contacts fixed in the world, CoM moved into the next "
                     "support triangle with the planned margin before every lift; the second half-cycle is the "
                     "left/right mirror image of the first (yaw/drift cancel).",
    "crawl_backward": "Backward tripod crawl designed as its own cycle (negative stride, thesis order reversed: LK, "
                      "RW, RK, LW); otherwise as crawl_forward (IK-designed, mirror-symmetric half-cycles).",
    "turn_left": "Turn on the spot to the left (thesis 4.1.2): same tripod sequence; each limb steps to its place in "
                 "the stance rotated about the contact centroid; the CoM is moved into the next support triangle "
                 "(towards the opposite limbs, 'bend into the opposite arm') before every lift.",
    "turn_right": "Turn on the spot to the right: as turn_left with the rotation reversed.",
}


def parse_sets(sets):
    out = {}
    for s in sets or []:
        k, v = s.split("=", 1)
        if k == "order":
            out[k] = tuple(v.split(","))
        elif k == "com_bias":
            out[k] = json.loads(v)
        else:
            out[k] = float(v)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gait", choices=["crawl_forward", "crawl_backward", "turn_left", "turn_right"])
    ap.add_argument("--set", nargs="*", default=[], help="parameter overrides key=value (see CRAWL_DEFAULTS)")
    ap.add_argument("--out", default=None, help="output YAML (default: print)")
    ap.add_argument("--name", default=None)
    a = ap.parse_args(argv)
    d = CrawlDesigner()
    kfs, p = d.design(a.gait, **parse_sets(a.set))
    for k in kfs:
        print(f"{k['name']:16s} margin({'/'.join(k['tri'])}) {k['margin']:+.3f} com ({k['com'][0]:+.3f},"
              f"{k['com'][1]:+.3f}) err {k['err'] * 1000:.1f} mm", file=sys.stderr)
    txt = to_yaml(kfs, a.name or a.gait, DESCRIPTIONS[a.gait], p)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(txt)
    else:
        print(txt)
    return 0


if __name__ == "__main__":
    sys.exit(main())
