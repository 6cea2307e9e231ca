"""Live Gazebo check of a generated scene world: small boxes dropped on the rough world (a heightmap) come to rest on
the MuJoCo scene's ground, i.e. Gazebo reads the heightmap's placement, scale and orientation as
atlas_crawl_bringup.gazebo_world writes them. Skipped where ``gz`` (Gazebo Harmonic) is not installed: CI.
"""
import os
import shutil
import signal
import subprocess
import time

import numpy as np
import pytest

POINTS = [(-1.909, -0.699), (1.205, 0.753), (-0.516, -1.446), (-2.172, 2.322), (0.3, 0.2), (-0.8, 1.1)]
BOX = '''<model name="box{i}"><pose>{x} {y} 0.3 0 0 0</pose><link name="l"><inertial><mass>0.1</mass><inertia>
<ixx>1e-5</ixx><iyy>1e-5</iyy><izz>1e-5</izz></inertia></inertial><collision name="c"><geometry><box>
<size>0.03 0.03 0.02</size></box></geometry></collision></link></model>'''


def test_boxes_rest_on_the_mujoco_ground_of_the_rough_world(tmp_path):
    if shutil.which("gz") is None:
        pytest.skip("gz (Gazebo Harmonic) not installed: the live world check needs the full stack")
    import mujoco
    from atlas_crawl_bringup.gazebo_world import scene_world
    from atlas_crawl_mujoco.model import GROUND_GROUP, ModelMap, build_model
    scene = "rough:seed=2"
    w = scene_world(scene, str(tmp_path), stem="rough")
    boxes = "".join(BOX.format(i=i, x=x, y=y) for i, (x, y) in enumerate(POINTS))
    world = tmp_path / "rough_boxes.sdf"
    world.write_text(open(w.path).read().replace("</world>", boxes + "</world>"))
    gz = subprocess.Popen(["gz", "sim", "-s", "-r", "-v", "1", str(world)], cwd=tmp_path, stdout=subprocess.DEVNULL,
                          stderr=subprocess.STDOUT, start_new_session=True)
    try:
        time.sleep(12)
        rest = []
        for i in range(len(POINTS)):
            out = subprocess.run(["gz", "model", "-m", f"box{i}", "-p"], capture_output=True, text=True, timeout=30)
            lines = out.stdout.splitlines()
            k = next(j for j, s in enumerate(lines) if "Pose [" in s)
            rest.append([float(v) for v in lines[k + 1].strip().strip("[]").split()])
    finally:
        os.killpg(gz.pid, signal.SIGINT)
        gz.wait(timeout=30)
    m = build_model({"scene": scene})
    ModelMap(m)
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    groups = np.zeros(6, np.uint8)
    groups[GROUND_GROUP] = 1

    def ground(x, y):
        return 10.0 - mujoco.mj_ray(m, d, np.array([x, y, 10.0]), np.array([0, 0, -1.0]), groups, 1, -1,
                                    np.zeros(1, np.int32))
    for x, y, z in rest:
        under = [ground(x + dx, y + dy) for dx in (-0.015, 0.0, 0.015) for dy in (-0.015, 0.0, 0.015)]
        bottom = z - 0.01      # box 2 cm high: it rests (maybe tilted) between its centre's and its corners' ground
        assert min(under) - 0.008 <= bottom <= max(under) + 0.003, (x, y, bottom, min(under), max(under))
