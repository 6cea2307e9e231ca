"""Ground-truth height map by ray casting: a slope gives its plane, the robot and a tunnel ceiling are seen through."""
import numpy as np
import pytest

from atlas_crawl_mujoco.height_map import sample_height_map
from atlas_crawl_mujoco.sim import AtlasSim


def test_slope_map_is_the_plane_and_ignores_the_robot():
    sim = AtlasSim(params={"scene": "slope:angle_deg=10,direction_deg=0"})
    sim.reset("crawl_forward")
    h, origin = sample_height_map(sim, sim.pelvis_pose()[0][:2], size_m=1.0, resolution_m=0.1)
    assert h.shape == (10, 10) and np.all(np.isfinite(h))
    # a plane rising along +x by tan(10 deg): constant along y, linear along x (the robot above it is ignored)
    slope = np.diff(h, axis=1) / 0.1
    assert np.allclose(slope, np.tan(np.radians(10.0)), atol=2e-3), slope
    assert np.allclose(np.diff(h, axis=0), 0.0, atol=1e-4)


def test_tunnel_ceiling_is_not_ground_and_bad_sizes_are_rejected():
    sim = AtlasSim(params={"scene": "tunnel"})
    sim.reset("crawl_forward")
    h, _ = sample_height_map(sim, (0.0, 0.0), size_m=0.5, resolution_m=0.25)
    assert np.allclose(h, 0.0, atol=1e-6), h
    for size, res in ((0.0, 0.1), (1.0, 0.0), (100.0, 0.1), (float("nan"), 0.1)):
        with pytest.raises(ValueError):
            sample_height_map(sim, (0.0, 0.0), size, res)


def test_the_ground_under_a_limb_that_sinks_into_it_is_read_right():
    """The robot pushed 1 cm into the ground (positions only): the map is the map without the robot (a ray passing
    through a limb and going on from below it started under the ground: NaN cells on the plane here, and on the
    rough floor the height field's base, 3 cm low, next to the hands of the evaluation's start stance)."""
    import mujoco
    for scene in ("flat", "rough"):
        sim = AtlasSim(params={"scene": scene})
        sim.reset("crawl_forward")
        sim.step(500)
        c = sim.pelvis_pose()[0][:2].copy()
        sim.data.qpos[2] += 2.0                     # the robot far above: the map without it
        mujoco.mj_forward(sim.model, sim.data)
        free, _ = sample_height_map(sim, c, size_m=2.0, resolution_m=0.02)
        sim.data.qpos[2] -= 2.01
        mujoco.mj_forward(sim.model, sim.data)
        sunk, _ = sample_height_map(sim, c, size_m=2.0, resolution_m=0.02)
        assert np.all(np.isfinite(free)) and np.array_equal(sunk, free), (scene, np.isnan(sunk).sum())
