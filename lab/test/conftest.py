"""Lab scripts are plain files in lab/ (not a package): put lab/ on sys.path so the tests import them by name."""
import sys
from pathlib import Path

import pytest

LAB = Path(__file__).resolve().parents[1]
if str(LAB) not in sys.path:
    sys.path.insert(0, str(LAB))


@pytest.fixture(scope="session")
def urdf() -> str:
    from atlas_description import model_urdf
    return model_urdf(sim="mujoco")


@pytest.fixture(scope="session")
def model(urdf):
    from atlas_crawl_kinematics.model import RobotModel
    return RobotModel.from_urdf_string(urdf)
