"""No-slip body sway in MuJoCo physics (issue 4 §6): the kinematic sway of
lab/body_sway.py played on the simulated robot in its four-point crawl stance, measuring how
far the contacts slip (goal < 2 mm).

Protocol, per (joint set, direction, sign):

1. fresh :class:`AtlasSim`, reset to the crawl stance (the first key-frame of ``crawl_forward.yaml`` as committed in
   33b494f, pinned in ``body_sway.CRAWL_STANCE_JOINTS``; ``--keyframe`` for another YAML),
   settle ``settle_s`` with the servos holding it;
2. take the *settled* joint angles and pelvis pose as the kinematic start (not the commanded ones: the servos sag
   under gravity), compute the no-slip sway path from there (contacts held at their settled world positions);
3. command ``ctrl = ctrl₀ + (q_path(s) − q_path(0))`` (keeps the servos' steady-state offset), with ``s`` going
   0 → amplitude → 0 on a cosine profile over ``2 × move_s`` plus a ``hold_s`` at the extreme;
4. slip of a limb = max horizontal displacement of its contact site from its settled position while the sway runs;
   also reported: whether every limb kept touching the floor, the torso displacement reached vs commanded.

The amplitude is ``fraction`` (0.7) of the kinematic reach of that direction, capped at 8 cm / 12°.

Usage::

    python lab/body_sway_physics.py [--quick] [--joints notes11|full|both]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from body_sway import DIRECTIONS, TORSO_FRAME, _axes, stance_from_keyframe, sway
from atlas_crawl_kinematics.model import RobotModel
from atlas_crawl_kinematics.rotations import R_to_quat_wxyz, quat_wxyz_to_R
from atlas_description import model_urdf

from atlas_crawl_mujoco.sim import AtlasSim

__all__ = ["run_sway", "main"]


def run_sway(model: RobotModel, direction: str, sign: int = 1, joints: str = "notes11", fraction: float = 0.7,
             cap_m: float = 0.08, cap_rad: float = np.deg2rad(12.0), settle_s: float = 2.0, move_s: float = 2.0,
             hold_s: float = 0.5, q_kf=None, quat_kf=None) -> dict:
    """One sway in physics; returns a dict of measurements (see module docstring)."""
    if q_kf is None:
        q_kf, R_kf = stance_from_keyframe(model)
        quat_kf = R_to_quat_wxyz(R_kf)
    sim = AtlasSim()
    sim.reset(np.asarray(q_kf), base_quat_wxyz=tuple(quat_kf))
    dt = sim.dt
    sim.step(int(round(settle_s / dt)))
    ctrl0 = sim.joint_targets()
    q_set = model.clip_to_limits(sim.joint_q())
    bp, bq = sim.pelvis_pose()
    bR = quat_wxyz_to_R(bq)
    c0 = sim.contact_site_pos()
    touch0, _ = sim.limb_contacts()
    # kinematic reach from the settled state, then the path up to the amplitude
    is_yaw = direction == "yaw"
    step = np.deg2rad(0.5) if is_yaw else 0.0025
    reach = sway(model, q_set, bp, bR, direction, sign, joints, step=step)
    amp = min(fraction * reach.reach, cap_rad if is_yaw else cap_m)
    path = sway(model, q_set, bp, bR, direction, sign, joints, step=step, max_travel=max(amp, step))
    s_path, q_path = path.s, path.q_path
    amp = float(min(amp, s_path[-1]))  # fraction 0 = hold still (baseline drift of the settled stance)
    # torso reference for the achieved displacement
    iu = sim.map.utorso
    pu0 = sim.data.xpos[iu].copy()
    Ru0 = sim.data.xmat[iu].reshape(3, 3).copy()
    ef, el = _axes(Ru0)
    slip = np.zeros(4)
    lost_touch = np.zeros(4, dtype=bool)
    n_move, n_hold = int(round(move_s / dt)), int(round(hold_s / dt))
    profile = np.r_[0.5 - 0.5 * np.cos(np.linspace(0, np.pi, n_move)), np.ones(n_hold),
                    0.5 + 0.5 * np.cos(np.linspace(0, np.pi, n_move)), np.zeros(int(round(0.5 / dt)))]
    achieved = 0.0
    for i, p in enumerate(profile):
        s = p * amp
        # interpolate the joint path at s
        k = int(np.clip(np.searchsorted(s_path, s), 1, len(s_path) - 1))
        t = (s - s_path[k - 1]) / max(s_path[k] - s_path[k - 1], 1e-12)
        q_cmd = q_path[k - 1] + np.clip(t, 0, 1) * (q_path[k] - q_path[k - 1])
        sim.set_joint_targets(ctrl0 + (q_cmd - q_path[0]))
        sim.step(1)
        c = sim.contact_site_pos()
        slip = np.maximum(slip, np.linalg.norm((c - c0)[:, :2], axis=1))
        if i % 20 == 0:
            touch, _ = sim.limb_contacts()
            lost_touch |= touch0 & ~touch
        if i == n_move + n_hold // 2:  # middle of the hold
            if is_yaw:
                Ru = sim.data.xmat[iu].reshape(3, 3)
                f1, _ = _axes(Ru)
                achieved = float(np.arctan2(np.cross(ef, f1)[2], ef @ f1))
            else:
                d = sim.data.xpos[iu] - pu0
                achieved = float(d @ (ef if direction == "forward" else el))
    fell, why = sim.fallen()
    sim.close()
    return {"joints": joints, "direction": direction, "sign": sign, "reach_kin": reach.reach,
            "limit_joint": reach.limit_joint, "stopped_by": reach.reason, "amplitude": amp,
            "achieved": achieved, "slip_m": slip.tolist(), "slip_max_m": float(slip.max()),
            "lost_touch": lost_touch.tolist(), "touch0": touch0.tolist(), "fell": bool(fell), "fell_reason": why}


def _fmt(v, yaw):
    return f"{np.rad2deg(v):+.1f} deg" if yaw else f"{v * 100:+.1f} cm"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="No-slip body sway in MuJoCo: contact slip per direction")
    ap.add_argument("--joints", choices=("notes11", "full", "both"), default="both")
    ap.add_argument("--quick", action="store_true", help="forward+ and yaw+ with the notes' joints only")
    ap.add_argument("--out", default=None, help="also write the markdown table here")
    ap.add_argument("--keyframe", default=None, help="gait YAML whose first key-frame is the stance")
    a = ap.parse_args(argv)
    model = RobotModel.from_urdf_string(model_urdf(sim="mujoco"))
    sets = ("notes11", "full") if a.joints == "both" else (a.joints,)
    q_kf, R_kf = stance_from_keyframe(model, a.keyframe)
    kf = {"q_kf": q_kf, "quat_kf": R_to_quat_wxyz(R_kf)}
    cases = [(j, d, s) for j in sets for d in DIRECTIONS for s in (1, -1)]
    if a.quick:
        cases = [("notes11", "forward", 1), ("notes11", "yaw", 1)]
    t0 = time.time()
    base = run_sway(model, "forward", 1, "notes11", fraction=0.0, **kf)
    print(f"  baseline (no sway, same duration): slip max {base['slip_max_m'] * 1e3:.2f} mm", flush=True)
    rows = []
    for j, d, s in cases:
        r = run_sway(model, d, s, j, **kf)
        rows.append(r)
        print(f"  {j} {d} {s:+d}: slip max {r['slip_max_m'] * 1e3:.2f} mm", flush=True)
    L = [f"No-slip body sway in MuJoCo (robot settled in the crawl stance {a.keyframe or 'CRAWL_STANCE_JOINTS'}; amplitude = 0.7 × "
         "kinematic reach, capped 8 cm / 12 deg; cosine 2 s out, 0.5 s hold, 2 s back)", "",
         "| joints | direction | kinematic reach | first limit joint (stopped by) | commanded | achieved (torso) | "
         "slip LW/RW/LK/RK [mm] | max slip | all contacts kept | fell |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        yaw = r["direction"] == "yaw"
        L.append(f"| {r['joints']} | {r['direction']} {'+' if r['sign'] > 0 else '-'} | "
                 f"{_fmt(r['sign'] * r['reach_kin'], yaw)} | {r['limit_joint'] or '—'} ({r['stopped_by']}) | "
                 f"{_fmt(r['sign'] * r['amplitude'], yaw)} | {_fmt(r['achieved'], yaw)} | "
                 + "/".join(f"{v * 1e3:.2f}" for v in r["slip_m"])
                 + f" | {r['slip_max_m'] * 1e3:.2f} mm {'OK' if r['slip_max_m'] < 0.002 else '> 2 mm'} | "
                 f"{'yes' if not any(r['lost_touch']) else 'NO'} | {'YES ' + r['fell_reason'] if r['fell'] else 'no'} |")
    L += ["", "Baseline (settled stance, no sway, same duration): slip LW/RW/LK/RK "
          + "/".join(f"{v * 1e3:.2f}" for v in base["slip_m"]) + " mm."]
    text = "\n".join(L)
    print(text)
    print(f"\n{len(rows)} runs in {time.time() - t0:.0f} s (load {os.getloadavg()[0]:.1f})")
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
