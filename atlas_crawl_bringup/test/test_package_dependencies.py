"""Every package declares in its package.xml what its code imports (issue 10 §3): exec_depend for the installed
modules (and launch files), exec_depend or test_depend for the tests. ROS packages are declared by name,
Python libraries by their rosdep key; the PyPI-only ones (no rosdep key) must be pinned in requirements.txt."""
import ast
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ["atlas_description", "atlas_crawl_kinematics", "atlas_crawl_controller", "atlas_crawl_mujoco",
            "atlas_crawl_bringup", "atlas_crawl_eval"]
ROSDEP = {"numpy": "python3-numpy", "yaml": "python3-yaml", "scipy": "python3-scipy", "matplotlib": "python3-matplotlib",
          "imageio": "python3-imageio", "PIL": "python3-pil", "tqdm": "python3-tqdm", "pytest": "python3-pytest",
          "hypothesis": "python3-hypothesis", "packaging": "python3-packaging"}
PYPI_ONLY = {"mujoco": "mujoco", "numba": "numba", "mcap": "mcap", "mcap_ros2": "mcap-ros2-support", "ray": "ray",
             "imageio_ffmpeg": "imageio-ffmpeg", "filterpy": "filterpy"}
ROS_PREFIXES = ("rclpy", "launch", "launch_ros", "ament_index_python", "xacro", "atlas_")


def _imports(files):
    mods = set()
    for f in files:
        for n in ast.walk(ast.parse(f.read_text())):
            if isinstance(n, ast.Import):
                mods |= {a.name.split(".")[0] for a in n.names}
            elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
                mods.add(n.module.split(".")[0])
    return {m for m in mods if m not in sys.stdlib_module_names}


def _key(mod):
    if mod in ROSDEP:
        return ROSDEP[mod]
    if mod.endswith(("_msgs", "_srvs", "_interfaces")) or mod.startswith(ROS_PREFIXES):
        return mod
    return None


def _declared(pkg):
    xml = (REPO / pkg / "package.xml").read_text()
    xml = re.sub(r"<!--.*?-->", "", xml, flags=re.S)
    deps = re.findall(r"<(exec_depend|test_depend|depend)>([^<]+)</", xml)
    return {v for k, v in deps if k in ("exec_depend", "depend")}, {v for k, v in deps if k in ("test_depend", "depend")}


def _missing(pkg, mods, declared):
    pinned = (REPO / "atlas_crawl_bringup" / "requirements" / "requirements.txt").read_text().lower()
    out = []
    for m in sorted(mods - {pkg, "ros_fixtures"}):
        if m in PYPI_ONLY:
            if f"\n{PYPI_ONLY[m]}==" not in "\n" + pinned:
                out.append(f"{m} (PyPI-only: not pinned in requirements.txt)")
        elif _key(m) is None:
            out.append(f"{m} (no rosdep key known: add it to ROSDEP or PYPI_ONLY here)")
        elif _key(m) not in declared:
            out.append(f"{m} -> <{_key(m)}>")
    return out


@pytest.mark.parametrize("pkg", PACKAGES)
def test_exec_dependencies_declared(pkg):
    files = list((REPO / pkg / pkg).rglob("*.py")) + list((REPO / pkg).glob("launch/*.py"))
    exec_deps, _ = _declared(pkg)
    missing = _missing(pkg, _imports(files), exec_deps)
    assert not missing, f"{pkg}/package.xml lacks exec_depend for {missing}"


@pytest.mark.parametrize("pkg", PACKAGES)
def test_test_dependencies_declared(pkg):
    exec_deps, test_deps = _declared(pkg)
    missing = _missing(pkg, _imports(list((REPO / pkg / "test").rglob("*.py"))), exec_deps | test_deps)
    assert not missing, f"{pkg}/package.xml lacks test_depend for {missing}"


def test_the_check_sees_a_missing_dependency():
    assert _missing("x", {"numpy", "geometry_msgs", "atlas_description"}, {"python3-numpy"}) == [
        "atlas_description -> <atlas_description>", "geometry_msgs -> <geometry_msgs>"]
