"""lab/ (tuning, experiments, authoring; not installed, COLCON_IGNORE) stays runnable: every script answers --help
and lab/test passes. Run here because colcon does not see lab/."""
import subprocess
import sys
from pathlib import Path

import pytest

LAB = Path(__file__).resolve().parents[2] / "lab"
SCRIPTS = sorted(p.name for p in LAB.glob("*.py"))


def test_lab_is_ignored_by_colcon_and_has_scripts():
    assert (LAB / "COLCON_IGNORE").is_file()
    assert {"search_gait.py", "gait_design.py", "turn_tune.py", "jacobian_accuracy.py"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_lab_script_help(script):
    r = subprocess.run([sys.executable, str(LAB / script), "--help"], capture_output=True, text=True, timeout=300,
                       cwd=LAB.parent)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "usage:" in r.stdout


def test_lab_tests_pass():
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(LAB / "test")],
                       capture_output=True, text=True, timeout=1800, cwd=LAB.parent)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert " passed" in r.stdout
