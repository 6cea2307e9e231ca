"""The ground-truth height map of a scene for a simulator that does not step this package's model (issue 13 §2).

Gazebo's world is written from a scene spec (``atlas_crawl_bringup.gazebo_world``). :class:`SceneHeightMap` builds
the MuJoCo model of the same spec once, never steps it, and samples its ground with the sim node's ray cast
(:func:`.height_map.sample_height_map`) around a centre the host gives (its ground-truth pelvis). So both simulators
publish the same map of the same ground. (In Gazebo a height field is resampled to 2^n + 1 samples: the map and the
Gazebo ground then differ by that resampling, a few millimetres on the rough floor.)
"""
from __future__ import annotations

import math

import mujoco
import numpy as np

from atlas_crawl_controller.height_map import HeightMap

from .height_map import sample_height_map
from .sim import AtlasSim

__all__ = ["SceneHeightMap"]


class SceneHeightMap:
    """``scene``: an ``atlas_crawl_mujoco.scenes`` spec or file. Raises ValueError with the reason on a bad scene."""

    def __init__(self, scene: str):
        self.scene = str(scene)
        self.sim = AtlasSim(params={"scene": self.scene})
        mujoco.mj_forward(self.sim.model, self.sim.data)   # the static geoms' world poses, for the rays

    def sample(self, t: float, center_xy, size_m: float, resolution_m: float) -> HeightMap:
        """The map at time ``t`` (the stamp), side ``size_m``, cell ``resolution_m``, centred (snapped to the grid)
        on ``center_xy``. Raises ValueError on a non-finite time or centre, or a bad size."""
        if not math.isfinite(float(t)):
            raise ValueError("height map: time must be finite")
        h, origin = sample_height_map(self.sim, np.asarray(center_xy, dtype=float), size_m, resolution_m)
        return HeightMap.from_fields(float(t), float(resolution_m), h.shape[1], h.shape[0], float(origin[0]),
                                     float(origin[1]), h.ravel())
