"""No-slip body sway (issue 4 §6; team notes 002, "Crawl Jacobian"): move the torso forward/back, sideways or in yaw
with all four contacts (wrists, knees) fixed in the world, and find how far each direction goes before a joint limit
(or a singularity) stops it.

Formulation (position level, so nothing drifts): unknowns = the pelvis' world pose (6, floating base) + the chosen
joints; equations = the four contact points at their initial world positions (12) + the utorso frame's two
horizontal coordinates along the sway axes (2) + its orientation (3).  With the notes' 11 joints
(``NOTES_JOINTS``: back_lbz, l/r_leg_uhz, l/r_leg_lhy, l/r_arm_usy, l/r_arm_shx, l/r_arm_elx) that is 17 equations in
17 unknowns — exactly the notes' count (they eliminate the base by working in the utorso frame and leave the utorso
height free, as here); all other joints stay frozen.  With the full body (``joints="full"``) it is 17 equations in 34
unknowns, solved by minimum-norm Gauss–Newton (redundancy used to stay away from limits: a joint reaching a limit is
locked there and the rest re-solved).

Each direction is swept in small increments (default 5 mm / 1°); at every increment Gauss–Newton converges to
1e-10 (contacts exactly fixed).  The sweep ends when a joint would leave its limits (notes' set: it is reported as
the limiting joint, as ``jointCmdsInRange()`` in the notes' code does; full body: the problem becomes infeasible
after locking, the first locked joint is reported too), when the equations become singular, or at ``max_travel``.

Directions: "forward" = horizontal projection of the utorso z axis (the spine, as in the notes' test harness),
"lateral" = world z × forward (left), "yaw" = rotation about world z (positive = counter-clockwise seen from above).

Usage::

    python lab/body_sway.py [--keyframe crawl_forward.yaml] [--step 0.005]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from atlas_crawl_kinematics.model import RobotModel
from atlas_crawl_kinematics.rotations import quat_wxyz_to_R
from atlas_description import CONTACT_FRAMES, model_urdf

__all__ = ["NOTES_JOINTS", "TORSO_FRAME", "SwayResult", "sway", "sway_table", "rotvec", "expmap"]

NOTES_JOINTS = ("back_lbz", "l_leg_uhz", "r_leg_uhz", "l_leg_lhy", "r_leg_lhy", "l_arm_usy", "r_arm_usy",
                "l_arm_shx", "r_arm_shx", "l_arm_elx", "r_arm_elx")
TORSO_FRAME = "utorso"
DIRECTIONS = ("forward", "lateral", "yaw")

#: The crawl stance used by default: the first key-frame ("stance") of atlas_crawl_controller/gaits/crawl_forward.yaml
#: as committed in 33b494f, pinned here so the sway numbers do not change when that gait is redesigned.
CRAWL_STANCE_JOINTS = {
    "back_lbz": 0.0007, "back_mby": -0.1486, "back_ubx": -0.0022, "neck_ay": -0.6057, "l_leg_uhz": 0.2597,
    "l_leg_mhx": 0.1403, "l_leg_lhy": -1.44, "l_leg_kny": 1.8668, "l_leg_uay": 0.5991, "l_leg_lax": 0.0,
    "r_leg_uhz": -0.261, "r_leg_mhx": -0.1386, "r_leg_lhy": -1.4399, "r_leg_kny": 1.8668, "r_leg_uay": 0.5991,
    "r_leg_lax": 0.0001, "l_arm_usy": -1.3142, "l_arm_shx": -0.9559, "l_arm_ely": 0.0071, "l_arm_elx": 0.4265,
    "l_arm_uwy": 0.0006, "l_arm_mwx": -0.0573, "r_arm_usy": -1.3109, "r_arm_shx": 0.9559, "r_arm_ely": 0.0058,
    "r_arm_elx": -0.426, "r_arm_uwy": 0.0005, "r_arm_mwx": 0.0574}
CRAWL_STANCE_QUAT_WXYZ = (0.81314, 0.00003, 0.58207, 0.00014)


def expmap(w: NDArray) -> NDArray:
    """Rotation matrix of the rotation vector ``w`` (Rodrigues)."""
    th = float(np.linalg.norm(w))
    if th < 1e-12:
        return np.eye(3)
    k = w / th
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * K @ K


def rotvec(R: NDArray) -> NDArray:
    """Rotation vector of a rotation matrix (angle < π)."""
    c = np.clip((np.trace(R) - 1) / 2, -1.0, 1.0)
    th = np.arccos(c)
    v = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    if th < 1e-9:
        return 0.5 * v
    return th / (2 * np.sin(th)) * v


@dataclass
class SwayResult:
    direction: str
    sign: int
    joints: str  #: "notes11" or "full"
    reach: float  #: reachable sway (m, or rad for yaw) in this signed direction
    reason: str  #: "limit", "singular", "max_travel"
    limit_joint: str | None  #: joint that hit its limit first (None if none did)
    s: NDArray = field(repr=False)  #: sway values of the converged increments
    q_path: NDArray = field(repr=False)  #: (n, 28) joint configurations
    base_pos_path: NDArray = field(repr=False)  #: (n, 3)
    base_rot_path: NDArray = field(repr=False)  #: (n, 3, 3)
    contact_residual_max_m: float = 0.0  #: max contact displacement over the path (kinematic, should be ~0)
    locked: list[str] = field(default_factory=list)


def _axes(R_u: NDArray) -> tuple[NDArray, NDArray]:
    f = R_u[:, 2].copy()
    f[2] = 0.0
    n = np.linalg.norm(f)
    if n < 1e-6:
        raise ValueError("utorso spine is vertical: forward direction undefined")
    f /= n
    lat = np.cross([0.0, 0.0, 1.0], f)
    return f, lat


def sway(model: RobotModel, q0: NDArray, base_pos: NDArray, base_rot: NDArray, direction: str, sign: int = 1,
         joints: str | Sequence[str] = "notes11", step: float | None = None, max_travel: float | None = None,
         tol: float = 1e-10, max_newton: int = 30) -> SwayResult:
    """Sweep the torso in ``direction`` (× ``sign``) with all contacts fixed.  See the module docstring."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    if sign not in (1, -1):
        raise ValueError("sign must be +1 or -1")
    q = np.asarray(q0, dtype=float).copy()
    bp = np.asarray(base_pos, dtype=float).copy()
    bR = np.asarray(base_rot, dtype=float).copy()
    if q.shape != (model.n_joints,) or bp.shape != (3,) or bR.shape != (3, 3):
        raise ValueError("q0 (28,), base_pos (3,), base_rot (3,3) expected")
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(bp)) and np.all(np.isfinite(bR))):
        raise ValueError("q0/base pose must be finite")
    if np.any(q < model.lower - 1e-9) or np.any(q > model.upper + 1e-9):
        raise ValueError("q0 outside the joint limits")
    if joints == "notes11":
        names, label = NOTES_JOINTS, "notes11"
    elif joints == "full":
        names, label = model.joint_names, "full"
    else:
        names, label = tuple(joints), "custom"
    sel = np.array([model.joint_index(n) for n in names])
    is_yaw = direction == "yaw"
    step = (np.deg2rad(1.0) if is_yaw else 0.005) if step is None else float(step)
    max_travel = (np.deg2rad(60.0) if is_yaw else 0.40) if max_travel is None else float(max_travel)
    if not (step > 0 and max_travel > 0):
        raise ValueError("step and max_travel must be > 0")

    iu = model.frame_index(TORSO_FRAME)

    def world(k, bp_, bR_):
        x = k.positions(CONTACT_FRAMES) @ bR_.T + bp_
        pu = bR_ @ k.pos[iu] + bp_
        Ru = bR_ @ k.rot[iu]
        return x, pu, Ru

    k = model.forward(q)
    x_star, pu0, Ru0 = world(k, bp, bR)
    ef, el = _axes(Ru0)
    free = np.ones(sel.size, dtype=bool)
    locked: list[str] = []
    first_limit: str | None = None
    s_list, q_list, bp_list, bR_list = [0.0], [q.copy()], [bp.copy()], [bR.copy()]
    res_max = 0.0
    s = 0.0
    reason = "max_travel"
    while s + step <= max_travel + 1e-12:
        s_new = s + step
        if is_yaw:
            Rz = expmap(np.array([0.0, 0.0, sign * s_new]))
            pu_t, Ru_t = pu0, Rz @ Ru0  # yaw about the utorso origin's vertical
        else:
            pu_t = pu0 + sign * s_new * (ef if direction == "forward" else el)
            Ru_t = Ru0
        # Gauss–Newton at this increment (with limit locking for redundant sets)
        while True:
            qn, bpn, bRn = q.copy(), bp.copy(), bR.copy()
            ok = False
            cols = np.r_[np.arange(6), 6 + sel[free]]
            for _ in range(max_newton):
                kk = model.forward(qn, check=False)
                x, pu, Ru = world(kk, bpn, bRn)
                r = np.r_[(x_star - x).reshape(-1), ef @ (pu_t - pu), el @ (pu_t - pu), rotvec(Ru_t @ Ru.T)]
                if np.abs(r).max() < tol:
                    ok = True
                    break
                Jc = kk.point_jacobians(CONTACT_FRAMES, floating_base=True, base_rot=bRn)
                Jp = kk.point_jacobians([TORSO_FRAME], floating_base=True, base_rot=bRn)
                Jr = np.zeros((3, 6 + model.n_joints))
                Jr[:, 3:6] = np.eye(3)
                Jr[:, 6:] = bRn @ kk.rotation_jacobian(TORSO_FRAME)
                J = np.vstack([Jc, ef @ Jp, el @ Jp, Jr])[:, cols]
                # minimum-norm Gauss–Newton step (square for the notes' set), tiny damping for robustness
                dx = J.T @ np.linalg.solve(J @ J.T + 1e-12 * np.eye(J.shape[0]), r)
                full = np.zeros(6 + model.n_joints)
                full[cols] = dx
                bpn = bpn + full[0:3]
                bRn = expmap(full[3:6]) @ bRn
                qn = qn + full[6:]
            if not ok:
                reason = "singular"
                break
            viol = [i for i, j in enumerate(sel) if free[i] and not (model.lower[j] - 1e-9 <= qn[j] <= model.upper[j] + 1e-9)]
            if not viol:
                break
            # the joint that went furthest past its limit hit it first within this increment
            over = [max(model.lower[sel[i]] - qn[sel[i]], qn[sel[i]] - model.upper[sel[i]]) for i in viol]
            i0 = viol[int(np.argmax(over))]
            if first_limit is None:
                first_limit = model.joint_names[sel[i0]]
            if label == "full" and free.sum() > 11:
                # lock it exactly at its limit and re-solve this increment with the others
                j0 = sel[i0]
                q[j0] = np.clip(qn[j0], model.lower[j0], model.upper[j0])
                free[i0] = False
                locked.append(model.joint_names[j0])
                continue
            reason = "limit"
            ok = False
            break
        if not ok:
            break
        q, bp, bR, s = qn, bpn, bRn, s_new
        kk = model.forward(q, check=False)
        x, _, _ = world(kk, bp, bR)
        res_max = max(res_max, float(np.linalg.norm(x - x_star, axis=1).max()))
        s_list.append(s)
        q_list.append(q.copy())
        bp_list.append(bp.copy())
        bR_list.append(bR.copy())
    if reason == "singular" and label == "full" and locked:
        reason = "limit"  # infeasible once the limiting joints were locked
    return SwayResult(direction, sign, label, s, reason, first_limit, np.array(s_list), np.array(q_list),
                      np.array(bp_list), np.array(bR_list), res_max, locked)


def stance_from_keyframe(model: RobotModel, path: str | None = None) -> tuple[NDArray, NDArray]:
    """(q, world←pelvis rotation) of the crawl stance: the pinned :data:`CRAWL_STANCE_JOINTS` (default) or the first
    key-frame of the gait YAML at ``path`` (its ``start_quat_wxyz`` for the pelvis)."""
    if path is None:
        q = np.array([CRAWL_STANCE_JOINTS[n] for n in model.joint_names])
        return model.clip_to_limits(q), quat_wxyz_to_R(CRAWL_STANCE_QUAT_WXYZ)
    import yaml

    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    kf = doc["keyframes"][0]["joints"]
    q = np.array([float(kf[n]) for n in model.joint_names])
    return model.clip_to_limits(q), quat_wxyz_to_R([float(v) for v in doc["start_quat_wxyz"]])


def sway_table(model: RobotModel, q0: NDArray, base_rot: NDArray, step_m: float = 0.005,
               step_rad: float = np.deg2rad(1.0)) -> list[SwayResult]:
    """All 3 directions × both signs × {notes' 11 joints, full body}."""
    out = []
    for joints in ("notes11", "full"):
        for d in DIRECTIONS:
            for sg in (1, -1):
                out.append(sway(model, q0, np.zeros(3), base_rot, d, sg, joints,
                                step=step_rad if d == "yaw" else step_m))
    return out


def format_table(rows: list[SwayResult]) -> str:
    L = ["| joints | direction | reach | stopped by | first joint at its limit | max contact drift (kinematic) |",
         "|---|---|---|---|---|---|"]
    for r in rows:
        reach = f"{np.rad2deg(r.reach):+.0f} deg" if r.direction == "yaw" else f"{r.reach * 100:+.1f} cm"
        reach = ("+" if r.sign > 0 else "-") + reach[1:]
        L.append(f"| {r.joints} | {r.direction} {'+' if r.sign > 0 else '-'} | {reach} | {r.reason} | "
                 f"{r.limit_joint or '—'} | {r.contact_residual_max_m:.1e} m |")
    return "\n".join(L)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="No-slip body sway ranges (kinematic)")
    ap.add_argument("--keyframe", default=None,
                    help="gait YAML whose first key-frame is the stance (default: the pinned CRAWL_STANCE_JOINTS)")
    ap.add_argument("--step", type=float, default=0.005, help="translation increment (m); yaw uses 1 deg")
    a = ap.parse_args(argv)
    model = RobotModel.from_urdf_string(model_urdf(sim="mujoco"))
    q0, R0 = stance_from_keyframe(model, a.keyframe)
    rows = sway_table(model, q0, R0, a.step)
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
