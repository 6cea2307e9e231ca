
import pytest

from atlas_crawl_kinematics.model import RobotModel
from atlas_description import model_urdf


@pytest.fixture(scope="session")
def urdf() -> str:
    return model_urdf(sim="mujoco")


@pytest.fixture(scope="session")
def model(urdf) -> RobotModel:
    return RobotModel.from_urdf_string(urdf)
