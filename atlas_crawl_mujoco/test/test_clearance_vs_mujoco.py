"""Limb ground clearance from our collision-geometry kinematics (atlas_crawl_kinematics.clearance) against MuJoCo's
own geom-to-floor distance (mujoco.mj_geomDistance, an independent implementation) on random configurations."""
import mujoco
import numpy as np
import pytest

from atlas_crawl_kinematics.clearance import LimbClearance, parse_collisions
from atlas_crawl_kinematics.model import RobotModel
from atlas_crawl_kinematics.rotations import quat_wxyz_to_R
from atlas_crawl_kinematics.urdf import UrdfError
from atlas_crawl_mujoco.sim import AtlasSim
from atlas_description import LIMB_LINKS, model_urdf


def test_clearance_matches_mujoco_geom_distance():
    urdf = model_urdf()
    model = RobotModel.from_urdf_string(urdf)
    lc = LimbClearance(model, urdf, LIMB_LINKS)
    sim = AtlasSim(seed=0)
    m, d = sim.model, sim.data
    floor = sim.map.floor_geom
    rng = np.random.default_rng(3)
    fromto = np.zeros(6)
    checked = 0
    for _ in range(40):
        q = rng.uniform(model.lower, model.upper)
        tilt = rng.normal(0.0, 0.4, 3)
        quat = np.r_[1.0, 0.5 * tilt] / np.linalg.norm(np.r_[1.0, 0.5 * tilt])
        sim.reset(q, base_pos=(0.0, 0.0, rng.uniform(0.3, 0.9)), base_quat_wxyz=tuple(quat))
        mujoco.mj_forward(m, d)
        pos, qw = sim.pelvis_pose()
        ours = lc.clearance(model.forward(sim.joint_q()), quat_wxyz_to_R(qw), pos)[0]
        for limb in range(4):
            geoms = np.flatnonzero(sim.map.geom_limb == limb)
            dist = min(mujoco.mj_geomDistance(m, d, int(g), floor, 2.0, fromto) for g in geoms)
            if dist < 2.0:
                assert ours[limb] == pytest.approx(dist, abs=1e-5), (limb, ours[limb], dist)
                checked += 1
    assert checked >= 100


def test_unsupported_or_missing_collision_geometry_is_rejected():
    urdf = model_urdf()
    with pytest.raises(UrdfError, match="no collision primitives"):
        parse_collisions(urdf, ["no_such_link"])
    with pytest.raises(UrdfError, match="not supported"):
        parse_collisions('<robot name="r"><link name="a"><collision><geometry><mesh filename="x.stl"/></geometry>'
                         '</collision></link></robot>', ["a"])
