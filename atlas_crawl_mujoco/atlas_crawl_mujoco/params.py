"""MuJoCo backend parameters: config/mujoco_sim_parameters.yaml (generate_parameter_library format) as a plain dict.

Thin wrapper over :mod:`atlas_crawl_controller.parameters` (the project's one gpl YAML loader and validator).
"""
from __future__ import annotations

import os

from atlas_crawl_controller.parameters import config_path, load_param_dict

_FILE = "mujoco_sim_parameters.yaml"
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_param_file() -> str:
    """Absolute path of mujoco_sim_parameters.yaml (source tree, else the installed share dir)."""
    return config_path(_FILE, "atlas_crawl_mujoco", source_dir=_PKG_DIR)


def load_params(path: str | None = None, overrides: dict | None = None) -> dict:
    """Defaults from the YAML, then ``overrides``; every value is validated against its type and bounds/one_of.

    Raises ValueError naming the parameter on an unknown name or an out-of-bounds value.
    """
    return load_param_dict(path or default_param_file(), overrides)
