"""Kinematic authoring tool for the crawl/turn key-frame scripts (thesis §4.1 workflow, steps 2-4).

The thesis tuned joint angles by hand and checked the CoM afterwards. Here every key-frame is *solved*:
the stance contacts are held at their world positions, the swing limb gets a Cartesian target, and the whole-body
CoM is put where the next support triangle needs it (floating-base IK, :class:`~.kin.WholeBodyIK`). The result
is written as a plain YAML key-frame script (joint angles only) that the player runs open loop; the planned
CoM target and static margin of every key-frame are written as comments.

Cycle (tripod order of the thesis §4.1.3: left arm, right knee, right arm, left knee)::

    K0 stance (all four down; skipped by the part loop)
    for limb in (LW, RK, RW, LK):
        shift: all four down, CoM moved (relative to the stance centroid) to where the triangle without `limb`
               contains it with margin — back over the knees before a hand lifts, forward before a knee lifts
        lift : limb up by `lift_*_m` and half a stride forward (others held)
        place: limb down one stride ahead

Turning uses the same machinery with each limb's step being a rotation of its contact about the stance centre.
Run ``python -m atlas_crawl_mujoco.gait_design --help``.
"""
from __future__ import annotations

import argparse
import math
import os

import mujoco
import numpy as np
import yaml

from atlas_crawl_controller.keyframes import GAITS_DIR, KeyframeScript, Keyframe
from atlas_crawl_controller.robot_info import JOINT_NAMES, LIMB_NAMES, joint_limits

from .kin import WholeBodyIK, support_margin
from .sim import AtlasSim

#: The probe's four-point stance (reference/README.md), used as the IK seed.
SEED_JOINTS = {"*_leg_lhy": -1.5, "*_leg_kny": 2.0, "*_leg_uay": 0.6, "*_arm_usy": -1.3, "*_arm_shx": -0.5, "*_arm_elx": 0.6,
               "neck_ay": -0.6}
SEED_PITCH_RAD = 1.25

DEFAULTS = dict(
    hand_x_m=0.60, hand_y_m=0.35, knee_x_m=0.0, knee_y_m=0.25,   # nominal contacts, pelvis-centred frame
    com_x_stance_m=0.19,            # CoM x in the nominal stance (same frame)
    com_x_hand_lift_m=0.13,         # (unused by the automatic CoM placement; kept for hand-set experiments)
    com_x_knee_lift_m=0.33,
    free_shin=True,                 # knee contact is a sphere (atlas_description): shin orientation left free
    margin_target_m=0.04,           # planned static margin in every tripod (issue 3 target: >= 0.03 m)
    com_overshoot_m=0.0,            # extra CoM travel beyond the margin target
    com_y_bias_m=0.0,               # lateral CoM offset towards the stance side (+ = away from the swing limb)
    stride_m=0.20,                  # how far each contact moves per cycle
    turn_rad=0.0,                   # rotation of the stance per cycle (turning gaits), + = left
    lift_hand_m=0.08, lift_knee_m=0.06,
    t_stance_s=1.0, t_shift_s=0.5, t_lift_s=0.35, t_place_s=0.35,
    order=("LW", "RK", "RW", "LK"),
)


def _step_target(xy, centre, stride, dth, heading):
    """New contact position: rotate about the stance centre by dth, then move stride along the heading."""
    c, s = math.cos(dth), math.sin(dth)
    r = xy - centre
    out = centre + np.array([c * r[0] - s * r[1], s * r[0] + c * r[1]])
    return out + stride * np.array([math.cos(heading + dth), math.sin(heading + dth)])


def _com_for_triangle(com_xy, tri_xy, margin, heading, lateral, overshoot):
    """Closest CoM position to ``com_xy`` along the heading line (offset ``lateral``) whose margin in the
    support triangle ``tri_xy`` reaches ``margin`` (+ ``overshoot`` further); else the best-margin point."""
    u = np.array([math.cos(heading), math.sin(heading)])
    n = np.array([-u[1], u[0]])
    base = np.asarray(com_xy) + lateral * n
    s = np.linspace(-0.6, 0.6, 1201)
    pts = base[None, :] + s[:, None] * u[None, :]
    mg = np.array([support_margin(pt, tri_xy) for pt in pts])
    ok = np.flatnonzero(mg >= margin)
    if len(ok):
        i = ok[np.argmin(np.abs(s[ok]))]
        return pts[i] + np.sign(s[i]) * overshoot * u
    return pts[int(np.argmax(mg))]


def _seed_q():
    from atlas_crawl_controller.keyframes import _pose_from_dict
    return _pose_from_dict(SEED_JOINTS)


class CrawlDesigner:
    def __init__(self, sim: AtlasSim | None = None):
        self.sim = sim or AtlasSim()
        self.m = self.sim.model
        self.ik = WholeBodyIK(self.m)
        # settle the seed stance once in physics to get the contact-frame heights when touching
        s = self.sim
        s.reset(_seed_q(), base_quat_wxyz=(math.cos(SEED_PITCH_RAD / 2), 0, math.sin(SEED_PITCH_RAD / 2), 0))
        s.step(1000)
        self.seed_qpos = s.data.qpos.copy()
        st = self.ik.state(self.seed_qpos)
        self.ground_offset = st["sites"][:, 2].copy()
        self.pelvis_R0 = st["pelvis_R"]
        self.pelvis_z0 = float(st["pelvis_p"][2])
        self.q_posture = self.seed_qpos[self.ik.map.qpos_adr].copy()

    def _solve(self, qpos, targets, com_xy, rots=None, heading=0.0):
        Rz = np.array([[math.cos(heading), -math.sin(heading), 0], [math.sin(heading), math.cos(heading), 0],
                       [0, 0, 1]])
        qp, info = self.ik.solve(qpos, targets, rots, com_xy=com_xy, pelvis_R=Rz @ self.pelvis_R0,
                                 pelvis_z=self.pelvis_z0, q_posture=self.q_posture, iters=300,
                                 w_site=np.full(4, 100.0))
        return qp, info

    def design(self, **kw):
        """Return (keyframes list of dicts, report lines). See DEFAULTS for the parameters."""
        p = dict(DEFAULTS, **kw)
        g = self.ground_offset
        nominal = np.array([[p["hand_x_m"], p["hand_y_m"], g[0]], [p["hand_x_m"], -p["hand_y_m"], g[1]],
                            [p["knee_x_m"], p["knee_y_m"], g[2]], [p["knee_x_m"], -p["knee_y_m"], g[3]]])
        centre0 = np.array([0.5 * (p["hand_x_m"] + p["knee_x_m"]), 0.0])
        com_rel = {"stance": p["com_x_stance_m"] - centre0[0], "hand": p["com_x_hand_lift_m"] - centre0[0],
                   "knee": p["com_x_knee_lift_m"] - centre0[0]}

        def pose_of(phase_heading, centre, rel_x, rel_y):
            c, s = math.cos(phase_heading), math.sin(phase_heading)
            return centre + np.array([c * rel_x - s * rel_y, s * rel_x + c * rel_y])

        kfs = []
        qpos, info = self._solve(self.seed_qpos, nominal, pose_of(0, centre0, com_rel["stance"], 0))
        st = self.ik.state(qpos)
        st_com = st["com"][:2].copy()
        rots = [None, None, None, None] if p["free_shin"] else [None, None, st["rots"][2], st["rots"][3]]
        kfs.append(self._kf("stance", qpos, info, nominal, "ALL", p["t_stance_s"], pose_of(0, centre0,
                                                                                            com_rel["stance"], 0)))
        contacts = nominal.copy()
        # per-limb step: translate by stride along the heading and rotate about the stance centre
        order = [LIMB_NAMES.index(n) for n in p["order"]]
        heading = 0.0
        for k, li in enumerate(order):
            is_hand = li < 2
            sign_y = (-1 if li in (0, 2) else 1)    # stance side is opposite to the swing limb
            centre = np.array([contacts[:, 0].mean(), contacts[:, 1].mean()])
            heading_now = heading
            tri = np.array([j != li for j in range(4)])
            u = np.array([math.cos(heading_now), math.sin(heading_now)])
            nrm = np.array([-u[1], u[0]])
            along = float(np.dot(st_com - centre, u))
            start = centre + along * u + sign_y * p["com_y_bias_m"] * nrm
            com_xy = _com_for_triangle(start, contacts[tri, :2], p["margin_target_m"], heading_now,
                                       0.0, p["com_overshoot_m"])
            name = LIMB_NAMES[li]
            qpos, info = self._solve(qpos, contacts, com_xy, rots, heading_now)
            st_com = self.ik.state(qpos)["com"][:2].copy()
            kfs.append(self._kf(f"shift_for_{name}", qpos, info, contacts, "ALL", p["t_shift_s"], com_xy, li))
            # each limb steps once per cycle: to its nominal place in the stance rotated by the whole turn and
            # advanced by the whole stride; the body heading target advances by a quarter turn per step
            heading += p["turn_rad"] / len(order)
            ct, stt = math.cos(p["turn_rad"]), math.sin(p["turn_rad"])
            rel = nominal[li, :2] - centre0
            goal = contacts[li].copy()
            goal[:2] = centre0 + np.array([p["stride_m"], 0.0]) + np.array([ct * rel[0] - stt * rel[1],
                                                                             stt * rel[0] + ct * rel[1]])
            mid = 0.5 * (contacts[li] + goal)
            mid[2] += p["lift_hand_m"] if is_hand else p["lift_knee_m"]
            tg = contacts.copy()
            tg[li] = mid
            stance = [n for j, n in enumerate(LIMB_NAMES) if j != li]
            wr = list(rots)
            qpos, info = self._solve(qpos, tg, com_xy, wr, heading_now)
            kfs.append(self._kf(f"lift_{name}", qpos, info, tg, stance, p["t_lift_s"], com_xy, li))
            tg[li] = goal
            qpos, info = self._solve(qpos, tg, com_xy, wr, heading)
            contacts = tg.copy()
            kfs.append(self._kf(f"place_{name}", qpos, info, contacts, stance, p["t_place_s"], com_xy, li))
        return kfs, p

    def _kf(self, name, qpos, info, contacts, stance, dur, com_xy, swing=None):
        st = self.ik.state(qpos)
        mask = np.ones(4, bool) if stance == "ALL" else np.array([n in stance for n in LIMB_NAMES])
        if swing is not None and stance == "ALL":
            # the margin that matters for a shift key-frame: the triangle of the limb about to lift
            tri = np.array([j != swing for j in range(4)])
        else:
            tri = mask
        margin = support_margin(st["com"][:2], contacts[tri, :2])
        return dict(name=name, qpos=qpos.copy(), q=qpos[self.ik.map.qpos_adr].copy(), stance=stance,
                    duration_s=dur, com_target=np.asarray(com_xy), com=st["com"], site_err=info["site_err"],
                    margin=margin, margin_triangle=[LIMB_NAMES[j] for j in range(4) if tri[j]])


def to_yaml(kfs, name, description, part_loop_start=1, fall_check="crawl", extra=None) -> str:
    extra = dict(extra or {})
    extra.setdefault("start_quat_wxyz", "[" + ", ".join(f"{v:.5f}" for v in kfs[0]["qpos"][3:7]) + "]")
    extra.setdefault("end_quat_wxyz", "[" + ", ".join(f"{v:.5f}" for v in kfs[-1]["qpos"][3:7]) + "]")
    lines = [f"# Generated by: python -m atlas_crawl_mujoco.gait_design {name} (floating-base IK, then verified",
             "# in physics with python -m atlas_crawl_mujoco.run_gait). Hand edits are fine: re-run check_gaits.",
             f"name: {name}", f"description: >-\n  {description}", f"fall_check: {fall_check}",
             f"part_loop_start: {part_loop_start}"]
    if extra:
        lines += [f"{k}: {v}" for k, v in extra.items()]
    lines.append("keyframes:")
    for k in kfs:
        lines.append(f"  # planned CoM ({k['com'][0]:+.3f}, {k['com'][1]:+.3f}) m; static margin in "
                     f"{'/'.join(k['margin_triangle'])}: {k['margin']:+.3f} m; IK contact error "
                     f"{np.max(k['site_err']) * 1000:.1f} mm")
        lines.append(f"  - name: {k['name']}")
        lines.append(f"    duration_s: {k['duration_s']:.3f}")
        st = LIMB_NAMES if k["stance"] == "ALL" else k["stance"]
        lines.append(f"    stance: [{', '.join(st)}]")
        lines.append("    joints:")
        lo, hi, _, _ = joint_limits()
        for n, v, a, b in zip(JOINT_NAMES, k["q"], lo, hi):
            lines.append(f"      {n}: {float(np.clip(v, a + 1e-4, b - 1e-4)):+.4f}")
    return "\n".join(lines) + "\n"
