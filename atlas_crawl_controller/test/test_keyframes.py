import math

import numpy as np
import pytest
import yaml

from atlas_crawl_controller.keyframes import (KeyframeScriptError, list_gaits, load_script, mirror_q,
                                              parse_script)
from atlas_crawl_controller.player import KeyframePlayer
from atlas_description import JOINT_INDEX


def script(joints, duration=1.0):
    return {"name": "bad_script", "keyframes": [
        {"name": "ok", "duration_s": 1.0, "joints": {"l_leg_kny": 1.0}},
        {"name": "broken", "duration_s": duration, "joints": joints}]}


@pytest.mark.parametrize("joints,duration,needle", [
    ({"l_leg_knee": 1.0}, 1.0, "unknown joint name 'l_leg_knee'"),
    ({"r_leg_kny": float("nan")}, 1.0, "'r_leg_kny' angle is nan"),
    ({"r_leg_kny": float("inf")}, 1.0, "'r_leg_kny' angle is inf"),
    ({"l_leg_kny": 3.0}, 1.0, "'l_leg_kny' angle 3.0000 rad outside its limits"),
    ({"*_arm_elx": 2.5}, 1.0, "'l_arm_elx' angle 2.5000 rad outside"),
    ({"l_leg_kny": 1.0}, 0.0, "duration_s must be a finite positive number"),
    ({"l_leg_kny": 1.0}, -1.0, "duration_s must be a finite positive number"),
])
def test_bad_scripts_rejected_with_names(tmp_path, joints, duration, needle):
    p = tmp_path / "bad_script.yaml"
    p.write_text(yaml.safe_dump(script(joints, duration)))
    with pytest.raises(KeyframeScriptError) as e:
        load_script(str(p))
    msg = str(e.value)
    assert needle in msg
    assert "bad_script" in msg and "key-frame 1 'broken'" in msg


def test_rejected_before_anything_moves(tmp_path):
    # the loader is the only way to a player: an invalid script never yields one, so no command is produced
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(script({"l_leg_kny": math.nan})))
    player = None
    with pytest.raises(KeyframeScriptError):
        player = KeyframePlayer(load_script(str(p)))
    assert player is None


def test_mirror_and_star_notation():
    s = parse_script({"keyframes": [{"duration_s": 1, "stance": ["LW", "LK", "RK"],
                                     "joints": {"*_arm_shx": -0.5, "*_leg_lhy": -1.0, "~_arm_usy": 0.3}},
                                    {"mirror_of": "kf0", "duration_s": 1}]}, "t.yaml")
    q0, q1 = s.keyframes[0].q, s.keyframes[1].q
    assert q0[JOINT_INDEX["l_arm_shx"]] == -0.5 and q0[JOINT_INDEX["r_arm_shx"]] == 0.5
    assert q0[JOINT_INDEX["r_leg_lhy"]] == -1.0 and q0[JOINT_INDEX["r_arm_usy"]] == 0.3
    np.testing.assert_allclose(q1, mirror_q(q0))
    np.testing.assert_allclose(mirror_q(mirror_q(q0)), q0)
    assert s.keyframes[1].stance == ("RW", "LK", "RK")


def test_reverse_and_loop_modes():
    s = parse_script({"part_loop_start": 1, "keyframes": [
        {"name": "a", "duration_s": 0.1, "joints": {"l_leg_kny": 0.5}},
        {"name": "b", "duration_s": 0.2, "joints": {"l_leg_kny": 1.0}},
        {"name": "c", "duration_s": 0.3, "joints": {"l_leg_kny": 1.5}}]}, "t.yaml")
    r = s.reversed()
    assert r.names() == ["c", "b", "a"]
    assert [k.duration_s for k in r.keyframes] == [0.1, 0.3, 0.2]
    for mode, expected in (("full", ["a", "b", "c", "a", "b", "c"]), ("part", ["a", "b", "c", "b", "c"])):
        p = KeyframePlayer(s, loop_mode=mode, cycles=2)
        p.start(np.zeros(28) + np.where(np.arange(28) == JOINT_INDEX["l_leg_kny"], 0.5, 0.0))
        seen = [p.current().name]
        for _ in range(5000):
            p.update(0.001)
            if p.current().name != seen[-1]:
                seen.append(p.current().name)
            if p.done:
                break
        assert p.done and seen == expected


def test_shipped_gaits_load():
    names = list_gaits()
    assert "crawl_forward" in names
    for n in names:
        s = load_script(n)
        assert len(s) >= 1
        for k in s.keyframes:
            assert np.all(np.isfinite(k.q))
