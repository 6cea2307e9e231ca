import os

import pytest

from atlas_crawl_kinematics.model import RobotModel
from atlas_crawl_kinematics.robot_source import atlas_urdf_string


@pytest.fixture(scope="session")
def urdf() -> str:
    return atlas_urdf_string(sim="mujoco")


@pytest.fixture(scope="session")
def model(urdf) -> RobotModel:
    return RobotModel.from_urdf_string(urdf)
