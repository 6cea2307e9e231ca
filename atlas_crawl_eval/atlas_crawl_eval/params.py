"""Defaults of the evaluation harness from config/evaluation_parameters.yaml (generate_parameter_library format)."""

from __future__ import annotations

import math
import os

import yaml

_HERE = os.path.dirname(os.path.abspath(__file__))
_FILE = "evaluation_parameters.yaml"


def default_param_file() -> str:
    cand = [os.path.join(_HERE, "..", "config", _FILE)]
    try:
        from ament_index_python.packages import get_package_share_directory
        cand.append(os.path.join(get_package_share_directory("atlas_crawl_eval"), "config", _FILE))
    except Exception:  # noqa: BLE001 - ament index optional (no ROS at import time)
        pass
    for c in cand:
        if os.path.exists(c):
            return os.path.abspath(c)
    raise FileNotFoundError(f"{_FILE} not found in {cand}")


def load_params(path: str | None = None, overrides: dict | None = None) -> dict:
    """YAML defaults, then ``overrides``; unknown names and out-of-bounds values raise ValueError."""
    path = path or default_param_file()
    with open(path) as f:
        spec = yaml.safe_load(f)
    (_ns, entries), = spec.items()
    out = {k: v["default_value"] for k, v in entries.items()}
    for k, v in (overrides or {}).items():
        if k not in entries:
            raise ValueError(f"unknown parameter '{k}' (known: {sorted(entries)})")
        out[k] = v
    for k, v in out.items():
        val = entries[k].get("validation", {})
        if "bounds<>" in val:
            lo, hi = val["bounds<>"]
            if not (isinstance(v, (int, float)) and math.isfinite(v) and lo <= v <= hi):
                raise ValueError(f"parameter '{k}'={v!r} outside bounds [{lo}, {hi}]")
        if "one_of<>" in val and v not in val["one_of<>"][0]:
            raise ValueError(f"parameter '{k}'={v!r} not one of {val['one_of<>'][0]}")
    return out
