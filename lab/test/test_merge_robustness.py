"""merge_robustness: a later input replaces an earlier run with the same key; gait filters; mixed cycles refused."""
import json

import pytest

import merge_robustness as mr


def _doc(cycles, runs, cmd="c"):
    return {"command": cmd, "commit": "abc", "cycles": cycles, "num_cpus": 2, "wall_s": 1.0, "runs": runs}


def _run(gait, seed, speed, success=True, scene="flat", dist="none"):
    return {"gait": gait, "scene": scene, "disturbance": dist, "seed": seed, "fell": not success, "fall_time_s": None,
            "ceiling_touches": 0, "pushes": [], "error": "", "speed": speed, "drift_m": 0.01, "sim_s": 1.0,
            "wrong_way": False, "success": success, "wall_s": 1.0}


def test_merge_replaces_and_filters(tmp_path):
    a = _doc(3, [_run("gen_forward", 0, 0.2), _run("gen_turn_left", 0, 30.0, success=False)], "A")
    b = _doc(3, [_run("gen_turn_left", 0, 33.0), _run("gen_forward", 0, 9.9)], "B")
    runs, info = mr.merge([(a, {"gen_forward"}), (b, {"gen_turn_left"})])
    by = {r["gait"]: r for r in runs}
    assert by["gen_forward"]["speed"] == 0.2 and by["gen_turn_left"]["speed"] == 33.0 and len(runs) == 2
    assert "A" in info["command"] and "B" in info["command"] and info["cycles"] == 3
    with pytest.raises(ValueError, match="cycles"):
        mr.merge([(a, None), (_doc(6, []), None)])
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(b))
    assert mr.main([f"{pa}:gen_forward", f"{pb}:gen_turn_left", "--out", str(tmp_path / "m")]) == 0
    assert (tmp_path / "m" / "heatmap.png").exists() and "gen_turn_left" in (tmp_path / "m" / "report.md").read_text()
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(SystemExit):
        mr.main([str(tmp_path / "bad.json"), "--out", str(tmp_path / "x")])
