"""Cartesian crawling (thesis §4.2 "crawling by imitation" IIK and §4.3 CoM modulation) for the controller core and
the gait sequencer: thin adapters over atlas_crawl_kinematics (IIK, CoMModulatedIIK, CartesianGait).

* :func:`make_cartesian_solver` → ``(solver, contact_fk)`` for :meth:`CrawlControllerCore.set_cartesian_solver`.
  The solver is the floating-base CoM-modulated IIK (DESIGN §6): world targets of the four contacts, stance
  contacts held with a high weight, swing contacts following their targets, and — when the reference asks for CoM
  modulation — the horizontal CoM pulled to a margin-respecting point of the stance polygon; without it, the plain
  IIK (contacts + posture in the null space).  The measured pelvis pose is the base estimate; only the joint
  solution is commanded.
* :func:`cartesian_plan` samples a :class:`CartesianGait` at its phase boundaries (and at the apex of every swing)
  into the sequencer's steps: ``(name, targets (4,3) world, stance (4,), duration_s)``.  The controller interpolates
  between consecutive set-points with a minimum-jerk profile and re-solves the IIK at ``iik_rate_hz``.
"""
from __future__ import annotations

import math
from typing import List, Optional

import numpy as np

from .robot_info import CONTACT_FRAMES


def quat_xyzw_to_R(q) -> np.ndarray:
    x, y, z, w = (float(v) for v in q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def available() -> bool:
    """True when the kinematics package provides the CoM-modulated IIK and the Cartesian gait."""
    try:
        from atlas_crawl_kinematics.cartesian_gait import CartesianGait  # noqa: F401
        from atlas_crawl_kinematics.com_modulation import CoMModulatedIIK  # noqa: F401
        return True
    except Exception:
        return False


def make_cartesian_solver(model=None, margin_m: float = 0.04):
    """(solver, contact_fk) closures; see the module docstring."""
    from atlas_crawl_kinematics.com_modulation import CoMModulatedIIK
    from atlas_crawl_kinematics.model import RobotModel
    from atlas_crawl_kinematics.robot_source import atlas_urdf_string
    model = model or RobotModel(atlas_urdf_string())
    cm = CoMModulatedIIK(model, margin_m=margin_m)
    frames = list(CONTACT_FRAMES)

    def solver(q_seed, pose7, targets, stance, com_modulation):
        pose7 = np.asarray(pose7, float)
        R = quat_xyzw_to_R(pose7[3:7])
        r = cm.solve(np.asarray(q_seed, float), pose7[:3], R, np.asarray(targets, float), np.asarray(stance, bool),
                     root="floating", modulate=bool(com_modulation))
        margin = r.planned_margin_m if math.isfinite(r.planned_margin_m) else 0.0
        return r.q, int(r.iik.iterations), float(r.iik.error_m), float(margin)

    def contact_fk(q, pose7):
        pose7 = np.asarray(pose7, float)
        k = model.forward(np.asarray(q, float))
        P = k.positions(frames)
        return (quat_xyzw_to_R(pose7[3:7]) @ P.T).T + pose7[:3]

    return solver, contact_fk


def cartesian_plan(contacts0, com0_xy, heading0_rad: float, cycles: int, direction: int = 1,
                   time_scale: float = 1.0, params: Optional[dict] = None) -> List[dict]:
    """Steps of a Cartesian crawl: dicts with name, cycle, index, targets (4,3), stance (4,) bool, duration_s,
    last_in_cycle. ``time_scale`` multiplies every duration (1 / speed_scale)."""
    from atlas_crawl_kinematics.cartesian_gait import CartesianGait, GaitParams
    gp = GaitParams(direction=int(direction), **(params or {}))
    g = CartesianGait(np.asarray(contacts0, float), np.asarray(com0_xy, float)[:2], float(heading0_rad), gp,
                      cycles=int(cycles))
    dt = 0.005
    ts = np.arange(0.0, g.duration_s + 1e-9, dt)
    samples = [g.sample(float(t)) for t in ts]
    # phase segments [i0, i1)
    segs = []
    i0 = 0
    for i in range(1, len(samples) + 1):
        if i == len(samples) or samples[i].phase_name != samples[i0].phase_name or samples[i].cycle != samples[i0].cycle:
            segs.append((i0, i - 1))
            i0 = i
    steps = []
    t_prev = 0.0
    for i0, i1 in segs:
        s0, s1 = samples[i0], samples[i1]
        if s0.phase_name == "start" or (i1 == i0):
            t_prev = ts[i1]
            continue
        cyc = max(0, s0.cycle)
        points = [i1]
        if s0.swing >= 0:
            points = [(i0 + i1) // 2, i1]          # apex, touchdown
        for k, j in enumerate(points):
            s = samples[j]
            dur = (ts[j] - t_prev) * time_scale
            t_prev = ts[j]
            if dur <= 0:
                continue
            name = s0.phase_name + ("_apex" if len(points) == 2 and k == 0 else "")
            steps.append({"name": name, "cycle": cyc, "index": 0, "targets": s.targets.copy(),
                          "stance": np.asarray(s0.stance, bool).copy(), "duration_s": float(dur),
                          "last_in_cycle": False})
    for i, st in enumerate(steps):
        nxt = steps[i + 1]["cycle"] if i + 1 < len(steps) else None
        st["last_in_cycle"] = nxt != st["cycle"]
    idx = {}
    for st in steps:
        st["index"] = idx.get(st["cycle"], 0)
        idx[st["cycle"]] = st["index"] + 1
    return steps
