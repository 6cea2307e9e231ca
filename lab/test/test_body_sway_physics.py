"""No-slip body sway in MuJoCo (issue 4 §6): a forward sway with the notes' 11 joints keeps the contacts (< 2 mm)."""

import numpy as np
import pytest

from atlas_crawl_kinematics.model import RobotModel
from atlas_description import model_urdf
from body_sway_physics import run_sway


@pytest.fixture(scope="module")
def kin_model():
    return RobotModel.from_urdf_string(model_urdf(sim="mujoco"))


def test_forward_sway_in_physics_does_not_slip(kin_model):
    r = run_sway(kin_model, "forward", 1, "notes11", cap_m=0.05, hold_s=0.3)
    assert r["amplitude"] == pytest.approx(0.05, abs=1e-6)
    assert r["limit_joint"] == "l_arm_shx"  # kinematic stop of this direction
    assert not r["fell"] and all(r["touch0"]) and not any(r["lost_touch"])
    assert r["slip_max_m"] < 0.002
    assert abs(r["achieved"] - r["amplitude"]) < 0.3 * r["amplitude"]  # the torso really moved


def test_yaw_sway_slip_grows_with_amplitude(kin_model):
    """Quasi-static slip in yaw (knee contacts) grows with the amplitude: small sways stay under 2 mm."""
    small = run_sway(kin_model, "yaw", 1, "notes11", cap_rad=np.deg2rad(3), hold_s=0.2)
    big = run_sway(kin_model, "yaw", 1, "notes11", cap_rad=np.deg2rad(12), hold_s=0.2)
    assert small["slip_max_m"] < 0.0025
    assert big["slip_max_m"] > small["slip_max_m"]
