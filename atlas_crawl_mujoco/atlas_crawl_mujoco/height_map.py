"""Ground-truth height map around the robot from the simulator's scene (issue 13 §2), by ray casting.

Each cell centre is hit by a vertical ray from above (``mujoco.mj_ray``) that sees only the ground geoms (ModelMap
code -2, alone in geom group ``GROUND_GROUP``): the robot and overhead obstacles (a tunnel ceiling, code -3) are not
seen, so the map holds the ground only. A cell without ground below is NaN. (Rays that passed through robot geoms
and went on from below them read the ground wrong where a limb sinks a little into it: up to 3 cm on the rough
floor, under the hands.)
"""
from __future__ import annotations

import math

import mujoco
import numpy as np

from atlas_crawl_controller.height_map import HeightMap
from atlas_crawl_controller.parameters import config_path, load_param_dict

from .sensors import _PKG_DIR, NODE_PARAMETER_FILE

__all__ = ["sample_height_map", "ground_height", "HeightMapFeed"]



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
    """The scene's ground height under ``xy``: a vertical ray from ``z_top_m`` that sees only the ground geoms (geom
    group ``sim.map.ground_group``: the robot and ceilings are not in it); NaN without ground there. Needs the
    simulator's positions computed (any step or forward after a reset)."""
    gid = np.zeros(1, dtype=np.int32)
    mask = np.zeros(6, dtype=np.uint8)
    mask[sim.map.ground_group] = 1
    pnt = np.array([float(xy[0]), float(xy[1]), z_top_m])
    dist = mujoco.mj_ray(sim.model, sim.data, pnt, np.array([0.0, 0.0, -1.0]), mask, 1, -1, gid)
    if gid[0] < 0 or dist < 0:
        return math.nan
    return float(z_top_m - dist)


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
