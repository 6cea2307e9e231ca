"""The Gazebo world of a scene stands on the same ground as the MuJoCo scene (issue 13 §1): heights read back from
the written SDF (an independent reader: scipy rotations, PIL, ray-box slabs; a heightmap read as gz-sim's Physics
and gz-physics' DART heightmap place it: collision pose, grey / image maximum x size z, image row 0 at +y) against
MuJoCo's ray casts. Checked once in Gazebo itself: balls dropped on the rough world came to rest on these heights.
"""
import os
import xml.etree.ElementTree as ET

import mujoco
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from atlas_crawl_bringup.gazebo_world import heightmap_samples, scene_world


def _floats(e):
    return np.array([float(v) for v in e.text.split()])


def _sdf_height(world_path, x, y):
    """Highest ground surface of the SDF world under (x, y): planes, boxes, heightmaps (what our scenes hold)."""
    from PIL import Image
    w = ET.parse(world_path).getroot().find("world")
    best = -np.inf
    for c in w.iter("collision"):
        pose = _floats(c.find("pose"))
        R, p = Rotation.from_euler("xyz", pose[3:]).as_matrix(), pose[:3]
        g = c.find("geometry")[0]
        if g.tag == "plane":
            n = R @ _floats(g.find("normal"))
            z = p[2] - (n[0] * (x - p[0]) + n[1] * (y - p[1])) / n[2]
        elif g.tag == "box":
            half = _floats(g.find("size")) / 2
            o, d = R.T @ (np.array([x, y, 10.0]) - p), R.T @ np.array([0, 0, -1.0])   # ray down, box frame
            with np.errstate(divide="ignore", invalid="ignore"):
                t1, t2 = (-half - o) / d, (half - o) / d
            t1 = np.where(np.isnan(t1), -np.inf, t1)
            t2 = np.where(np.isnan(t2), np.inf, t2)
            tn, tf = np.max(np.minimum(t1, t2)), np.min(np.maximum(t1, t2))
            if tn > tf or tf < 0:
                continue
            z = 10.0 - tn
        elif g.tag == "heightmap":
            img = np.asarray(Image.open(os.path.join(os.path.dirname(world_path), g.find("uri").text)), float) / 255
            sx, sy, sz = _floats(g.find("size"))
            assert not _floats(g.find("pos")).any()      # gz physics ignores <pos>: the pose carries the offset
            px, py, pz = p                               # lowest grey level at the collision pose (DART)
            n = img.shape[0]
            u, v = (x - px) / sx + 0.5, (y - py) / sy + 0.5      # image column along +x, row 0 at +y
            if not (0 <= u <= 1 and 0 <= v <= 1):
                continue
            c_, r_ = u * (n - 1), (1 - v) * (n - 1)
            c0, r0 = min(int(c_), n - 2), min(int(r_), n - 2)
            a, b = c_ - c0, r_ - r0
            h = (img[r0, c0] * (1 - a) * (1 - b) + img[r0, c0 + 1] * a * (1 - b) + img[r0 + 1, c0] * (1 - a) * b
                 + img[r0 + 1, c0 + 1] * a * b)
            z = pz + sz * h
        else:
            raise AssertionError(f"unexpected SDF shape {g.tag}")
        best = max(best, z)
    return best


def _mujoco_height(m, d, x, y):
    from atlas_crawl_mujoco.model import GROUND_GROUP
    groups = np.zeros(6, np.uint8)
    groups[GROUND_GROUP] = 1
    gid = np.zeros(1, np.int32)
    t = mujoco.mj_ray(m, d, np.array([x, y, 10.0]), np.array([0, 0, -1.0]), groups, 1, -1, gid)
    return 10.0 - t


@pytest.mark.parametrize("scene", ["flat", "slope:angle_deg=10,direction_deg=30", "rough:seed=2", "steps",
                                   "rubble", "friction"])
def test_the_gazebo_world_has_the_ground_of_the_mujoco_scene(scene, tmp_path):
    from atlas_crawl_mujoco.model import ModelMap, build_model
    w = scene_world(scene, str(tmp_path))
    m = build_model({"scene": scene})
    ModelMap(m)   # puts the ground geoms alone in GROUND_GROUP
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    rng = np.random.default_rng(0)
    pts = rng.uniform(-2.5, 2.5, (150, 2))
    err = [abs(_sdf_height(w.path, x, y) - _mujoco_height(m, d, x, y)) for x, y in pts]
    assert max(err) < 0.003, (scene, max(err))


def test_flat_world_physics_plugins_and_friction(tmp_path):
    w = ET.parse(scene_world("flat", str(tmp_path)).path).getroot().find("world")
    assert w.find("physics").get("type") == "dart"
    assert float(w.find("physics/max_step_size").text) == pytest.approx(0.001)
    plugins = {p.get("name") for p in w.findall("plugin")}
    assert {"gz::sim::systems::Physics", "gz::sim::systems::UserCommands", "gz::sim::systems::Imu",
            "gz::sim::systems::Contact"} <= plugins
    (col,) = w.findall("model/link/collision")
    assert float(col.find("surface/friction/ode/mu").text) == pytest.approx(1.0)
    slippery = ET.parse(scene_world("friction:friction=0.5", str(tmp_path)).path).getroot()
    assert float(slippery.find("world/model/link/collision/surface/friction/ode/mu").text) == pytest.approx(0.5)


def test_the_tunnel_ceiling_is_in_the_world(tmp_path):
    from atlas_crawl_mujoco.scenes import ROBOT_CRAWL_TOP_M
    w = ET.parse(scene_world("tunnel:clearance_m=0.1", str(tmp_path)).path).getroot().find("world")
    (ceil,) = [c for c in w.iter("collision") if c.get("name").startswith("scene_ceiling")]
    z, thick = _floats(ceil.find("pose"))[2], _floats(ceil.find("geometry/box/size"))[2]
    assert z - thick / 2 == pytest.approx(ROBOT_CRAWL_TOP_M + 0.1)


def test_a_bad_scene_is_refused_before_a_file_is_written(tmp_path):
    with pytest.raises(ValueError, match="angle_deg"):
        scene_world("slope:angle_deg=45", str(tmp_path))
    with pytest.raises(ValueError, match="not a built-in"):
        scene_world("moon", str(tmp_path))
    assert not list(tmp_path.iterdir())


def test_a_mesh_in_a_user_fragment_is_refused_with_the_reason(tmp_path):
    frag = tmp_path / "rock.xml"
    frag.write_text('<mujoco><asset><mesh name="tet" vertex="0 0 0 1 0 0 0 1 0 0 0 1"/></asset>'
                    '<worldbody><geom type="mesh" mesh="tet" pos="1 0 0"/></worldbody></mujoco>')
    with pytest.raises(ValueError, match="cannot be exported"):
        scene_world(str(frag), str(tmp_path / "out"))


def test_heightmap_resampling_keeps_the_corners_and_is_two_to_the_n_plus_one():
    h = np.random.default_rng(1).uniform(size=(401, 401))
    s = heightmap_samples(h)
    assert s.shape == (513, 513)
    assert s[0, 0] == pytest.approx(h[0, 0]) and s[-1, -1] == pytest.approx(h[-1, -1])
    assert s[0, -1] == pytest.approx(h[0, -1]) and s[-1, 0] == pytest.approx(h[-1, 0])


def test_the_gazebo_start_lies_on_the_slope():
    from atlas_crawl_bringup.gazebo_start import start_state
    _j, q_flat, z_flat = start_state("crawl_forward")
    _j, q_slope, z_slope = start_state("crawl_forward", scene="slope:angle_deg=10")
    tilt = Rotation.from_quat([*q_slope[1:], q_slope[0]]) * Rotation.from_quat([*q_flat[1:], q_flat[0]]).inv()
    assert np.degrees(tilt.magnitude()) == pytest.approx(10.0, abs=0.01)
    assert abs(z_slope - z_flat) < 0.2
