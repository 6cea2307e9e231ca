"""Defaults of the evaluation harness from config/evaluation_parameters.yaml (generate_parameter_library format).

Thin wrapper over :mod:`atlas_crawl_controller.parameters` (the project's one gpl YAML loader and validator).
"""

from __future__ import annotations

import os

from atlas_crawl_controller.parameters import config_path, load_param_dict

_FILE = "evaluation_parameters.yaml"
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_param_file() -> str:
    """Absolute path of evaluation_parameters.yaml (source tree, else the installed share dir)."""
    return config_path(_FILE, "atlas_crawl_eval", source_dir=_PKG_DIR)


def load_params(path: str | None = None, overrides: dict | None = None) -> dict:
    """YAML defaults, then ``overrides``; unknown names and out-of-bounds values raise ValueError."""
    return load_param_dict(path or default_param_file(), overrides)
