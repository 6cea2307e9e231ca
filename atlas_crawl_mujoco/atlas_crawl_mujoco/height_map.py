"""Ground-truth height map around the robot from the simulator's scene (issue 13 §2), by ray casting.

Each cell centre is hit by a vertical ray from above (``mujoco.mj_ray``); hits on the robot or on an overhead
obstacle (a tunnel ceiling, ModelMap code -3) are passed through and the ray goes on down, so the map holds the
ground only (ModelMap code -2). A cell without ground below is NaN.
"""
from __future__ import annotations

import math

import mujoco
import numpy as np

from atlas_crawl_controller.height_map import HeightMap
from atlas_crawl_controller.parameters import config_path, load_param_dict

from .sensors import _PKG_DIR, NODE_PARAMETER_FILE

__all__ = ["sample_height_map", "ground_height", "HeightMapFeed"]

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
    out = np.full((n, n), np.nan, dtype=np.float32)
    for iy in range(n):
        for ix in range(n):
            out[iy, ix] = ground_height(sim, (origin[0] + ix * resolution_m, origin[1] + iy * resolution_m), z_top_m)
    return out, origin


def ground_height(sim, xy, z_top_m: float = 5.0) -> float:
    """The scene's ground height under ``xy`` (a vertical ray from ``z_top_m`` through the robot and ceilings);
    NaN without ground there. Needs the simulator's positions computed (any step or forward after a reset)."""
    m, d, code = sim.model, sim.data, sim.map.geom_limb
    gid = np.zeros(1, dtype=np.int32)
    vec = np.array([0.0, 0.0, -1.0])
    pnt = np.array([float(xy[0]), float(xy[1]), z_top_m])
    for _ in range(_MAX_PASS_THROUGH):
        dist = mujoco.mj_ray(m, d, pnt, vec, None, 1, -1, gid)
        if gid[0] < 0 or dist < 0:
            return math.nan
        if code[gid[0]] == -2:
            return float(pnt[2] - dist)
        pnt[2] -= dist + 1e-4          # robot or ceiling: go on below it
    return math.nan


class HeightMapFeed:
    """The sim node's /atlas/height_map without ROS (for hosts that run the controller in-process: the evaluation):
    the same ray-cast map, side and resolution, at the same rate in sim time (the ``height_map_*`` parameters of
    mujoco_sim_node_parameters.yaml, ``overrides`` on top). :meth:`poll` returns a new
    :class:`~atlas_crawl_controller.height_map.HeightMap` when one is due, else None."""

    def __init__(self, sim, overrides: dict | None = None):
        p = load_param_dict(config_path(NODE_PARAMETER_FILE, "atlas_crawl_mujoco", source_dir=_PKG_DIR), overrides)
        self.sim = sim
        self.rate_hz = float(p["height_map_rate_hz"])
        self.size_m = float(p["height_map_size_m"])
        self.resolution_m = float(p["height_map_resolution_m"])
        self._next_s = -math.inf

    def poll(self):
        if self.rate_hz <= 0 or self.sim.time < self._next_s:
            return None
        self._next_s = self.sim.time + 1.0 / self.rate_hz
        h, origin = sample_height_map(self.sim, self.sim.pelvis_pose()[0][:2], self.size_m, self.resolution_m)
        return HeightMap.from_fields(self.sim.time, self.resolution_m, h.shape[1], h.shape[0], origin[0], origin[1],
                                     h.ravel())
