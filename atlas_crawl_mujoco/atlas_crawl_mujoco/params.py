"""Load generate_parameter_library-style YAML defaults (with bounds validation) into a plain dict."""
from __future__ import annotations

import math
import os

import yaml

_HERE = os.path.dirname(os.path.abspath(__file__))


def default_param_file() -> str:
    cand = [os.path.join(_HERE, "..", "config", "mujoco_sim_parameters.yaml")]
    try:
        from ament_index_python.packages import get_package_share_directory
        cand.append(os.path.join(get_package_share_directory("atlas_crawl_mujoco"), "config",
                                 "mujoco_sim_parameters.yaml"))
    except Exception:
        pass
    for c in cand:
        if os.path.exists(c):
            return os.path.abspath(c)
    raise FileNotFoundError("mujoco_sim_parameters.yaml not found in " + str(cand))


def load_params(path: str | None = None, overrides: dict | None = None) -> dict:
    """Defaults from the YAML, then ``overrides``; every value is validated against its bounds/one_of.

    Raises ValueError naming the parameter on an unknown name or an out-of-bounds value.
    """
    path = path or default_param_file()
    with open(path) as f:
        spec = yaml.safe_load(f)
    (ns, entries), = spec.items()
    out = {k: v["default_value"] for k, v in entries.items()}
    for k, v in (overrides or {}).items():
        if k not in entries:
            raise ValueError(f"unknown parameter '{k}' (known: {sorted(entries)}) in {path}")
        out[k] = v
    for k, v in out.items():
        val = entries[k].get("validation", {})
        if "bounds<>" in val:
            lo, hi = val["bounds<>"]
            if not (isinstance(v, (int, float)) and math.isfinite(v) and lo <= v <= hi):
                raise ValueError(f"parameter '{k}'={v!r} outside bounds [{lo}, {hi}] ({path})")
        if "one_of<>" in val and v not in val["one_of<>"][0]:
            raise ValueError(f"parameter '{k}'={v!r} not one of {val['one_of<>'][0]} ({path})")
    return out
