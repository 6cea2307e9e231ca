"""The package layering contract (/.importlinter, issue 10 §3) holds: `lint-imports` finds no upward import.

atlas_description -> atlas_crawl_kinematics -> atlas_crawl_controller -> atlas_crawl_mujoco -> atlas_crawl_bringup
-> atlas_crawl_eval, and only atlas_crawl_mujoco and above import MuJoCo. import-linter reads every import
statement, including lazy ones inside functions (the tool self-check below proves it on a throw-away tree).
"""
import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / ".importlinter"
LAYERS = ["atlas_crawl_eval", "atlas_crawl_bringup", "atlas_crawl_mujoco", "atlas_crawl_controller",
          "atlas_crawl_kinematics", "atlas_description"]


def _lint_imports() -> str:
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    if not Path(exe).exists():
        pytest.fail("lint-imports not installed: pip install -r atlas_crawl_bringup/requirements/requirements.txt")
    return exe


def _run(config: Path, cwd: Path, extra_path: str = "") -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if extra_path:
        env["PYTHONPATH"] = extra_path + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([_lint_imports(), str(config), "--no-cache"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_contract_lists_the_six_packages_in_order():
    cp = configparser.ConfigParser()
    cp.read(CONFIG)
    assert cp["importlinter:contract:layers"]["type"] == "layers"
    assert cp["importlinter:contract:layers"]["layers"].split() == LAYERS
    forbidden = cp["importlinter:contract:no-physics-below-the-simulator"]
    assert forbidden["type"] == "forbidden" and forbidden["forbidden_modules"].split() == ["mujoco"]
    assert forbidden["source_modules"].split() == LAYERS[:2:-1]


def test_no_upward_import_in_the_packages():
    r = _run(CONFIG, REPO)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 kept, 0 broken" in r.stdout


def test_lint_imports_catches_a_lazy_upward_import(tmp_path):
    """Tool self-check: an import inside a function body of the lower layer breaks the contract."""
    for pkg in ("lowpkg", "highpkg"):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / "highpkg" / "api.py").write_text("X = 1\n")
    (tmp_path / "lowpkg" / "core.py").write_text("def f():\n    from highpkg.api import X\n    return X\n")
    cfg = tmp_path / "contract.ini"
    cfg.write_text("[importlinter]\nroot_packages =\n    lowpkg\n    highpkg\n\n"
                   "[importlinter:contract:l]\nname = l\ntype = layers\nlayers =\n    highpkg\n    lowpkg\n")
    r = _run(cfg, tmp_path, extra_path=str(tmp_path))
    assert r.returncode != 0
    assert "lowpkg.core -> highpkg.api (l.2)" in r.stdout, r.stdout + r.stderr
