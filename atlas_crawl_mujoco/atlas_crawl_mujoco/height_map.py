"""Ground-truth height map around the robot from the simulator's scene (issue 13 §2), by ray casting.

Each cell centre is hit by a vertical ray from above (``mujoco.mj_ray``); hits on the robot or on an overhead
obstacle (a tunnel ceiling, ModelMap code -3) are passed through and the ray goes on down, so the map holds the
ground only (ModelMap code -2). A cell without ground below is NaN.
"""
from __future__ import annotations

import math

import mujoco
import numpy as np

__all__ = ["sample_height_map"]

_MAX_PASS_THROUGH = 64   # overlapping robot geoms under a cell: each is passed through


def sample_height_map(sim, center_xy, size_m: float, resolution_m: float, z_top_m: float = 5.0):
    """Heights (ny, nx) float32 of a square world-aligned grid of side ``size_m`` centred (snapped to the grid) on
    ``center_xy``; returns (heights, origin_xy of cell (0, 0)). Raises ValueError on a bad size or resolution."""
    if not (math.isfinite(size_m) and math.isfinite(resolution_m) and 0 < resolution_m <= size_m <= 50.0):
        raise ValueError(f"height map: need 0 < resolution_m <= size_m <= 50, got {resolution_m}, {size_m}")
    c = np.asarray(center_xy, dtype=float).reshape(2)
    if not np.all(np.isfinite(c)):
        raise ValueError("height map: centre must be finite")
    n = int(round(size_m / resolution_m))
    if n > 400:
        raise ValueError(f"height map: {n} x {n} cells is too many (at most 400 per side)")
    origin = np.round(c / resolution_m) * resolution_m - 0.5 * (n - 1) * resolution_m
    m, d, code = sim.model, sim.data, sim.map.geom_limb
    out = np.full((n, n), np.nan, dtype=np.float32)
    gid = np.zeros(1, dtype=np.int32)
    vec = np.array([0.0, 0.0, -1.0])
    for iy in range(n):
        for ix in range(n):
            pnt = np.array([origin[0] + ix * resolution_m, origin[1] + iy * resolution_m, z_top_m])
            for _ in range(_MAX_PASS_THROUGH):
                dist = mujoco.mj_ray(m, d, pnt, vec, None, 1, -1, gid)
                if gid[0] < 0 or dist < 0:
                    break
                if code[gid[0]] == -2:
                    out[iy, ix] = pnt[2] - dist
                    break
                pnt[2] -= dist + 1e-4          # robot or ceiling: go on below it
    return out, origin
