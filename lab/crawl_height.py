"""Highest point of the robot while crawling (issue 13 tunnel scene): plays each gait on flat ground through the
evaluation's trial adapter settings and reports the max over time of the top of every robot collision geom.

    python lab/crawl_height.py [--gaits crawl_forward turn_left ...] [--cycles 2]
"""
from __future__ import annotations

import argparse

import mujoco
import numpy as np
from atlas_crawl_controller.player import KeyframePlayer
from atlas_crawl_mujoco.sim import AtlasSim

from atlas_crawl_controller import keyframes


def top_z(sim: AtlasSim) -> float:
    """Highest z over the robot's collision geoms (exact for boxes/cylinders/spheres)."""
    m, d = sim.model, sim.data
    best = -np.inf
    for g in range(m.ngeom):
        if sim.map.geom_limb[g] == -2 or m.geom_contype[g] == 0:
            continue
        R, c, s, t = d.geom_xmat[g].reshape(3, 3), d.geom_xpos[g], m.geom_size[g], m.geom_type[g]
        if t == mujoco.mjtGeom.mjGEOM_SPHERE:
            z = c[2] + s[0]
        elif t == mujoco.mjtGeom.mjGEOM_CYLINDER:
            z = c[2] + abs(R[2, 2]) * s[1] + s[0] * np.sqrt(max(0.0, 1 - R[2, 2] ** 2))
        elif t == mujoco.mjtGeom.mjGEOM_BOX:
            z = c[2] + np.sum(np.abs(R[2, :]) * s[:3])
        else:
            z = c[2] + m.geom_rbound[g]
        best = max(best, z)
    return float(best)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gaits", nargs="+", default=["crawl_forward", "crawl_forward_fast", "crawl_backward",
                                                     "turn_left", "turn_right"])
    ap.add_argument("--cycles", type=int, default=2)
    a = ap.parse_args(argv)
    for name in a.gaits:
        script = keyframes.load_script(name)
        sim = AtlasSim(seed=0)
        q0, quat0 = keyframes.named_pose(script.start_pose) if getattr(script, "start_pose", None) else \
            (script.keyframes[0].q, getattr(script, "start_quat_wxyz", None) or (1.0, 0.0, 0.0, 0.0))
        sim.reset(q0, base_quat_wxyz=tuple(float(v) for v in quat0))
        sim.step(1000)
        rest = top_z(sim)
        pl = KeyframePlayer(script, loop_mode="full", cycles=a.cycles)
        pl.start(sim.joint_q(), sim.joint_effort(), sim.kp)
        hi, k = rest, 0
        while not pl.done:
            q, _ = pl.update(sim.dt)
            sim.set_joint_targets(q)
            sim.step(1)
            k += 1
            if k % 10 == 0:
                hi = max(hi, top_z(sim))
        print(f"{name}: top of robot at rest {rest:.3f} m, max while crawling {a.cycles} cycles {hi:.3f} m "
              f"(sim {sim.time:.1f} s, fallen {sim.fallen()})", flush=True)


if __name__ == "__main__":
    main()
