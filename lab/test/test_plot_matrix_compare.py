"""lab/plot_matrix_compare.py draws two matrices of one gait and refuses a gait that is not in them."""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import plot_matrix_compare as pmc  # noqa: E402


def _matrix(path, ok):
    cells = [dict(gait="g", scene=s, disturbance=d, success_rate=ok, speed_pct_flat=90.0, runs=5)
             for s in ("flat", "slope") for d in ("none", "push")]
    path.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    return str(path)


def test_two_matrices_side_by_side(tmp_path):
    a, b = _matrix(tmp_path / "a.json", 0.6), _matrix(tmp_path / "b.json", 1.0)
    scenes, dists, ok, pct, n_ok, n = pmc.grid(a, "g")
    assert scenes == ["flat", "slope"] and dists == ["none", "push"] and (n_ok, n) == (12, 20)
    out = tmp_path / "m.png"
    assert pmc.main([a, b, "--gait", "g", "--out", str(out)]) == 0
    assert out.stat().st_size > 10_000


def test_a_gait_not_in_the_matrix_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="no cell of gait 'other'"):
        pmc.grid(_matrix(tmp_path / "a.json", 1.0), "other")
