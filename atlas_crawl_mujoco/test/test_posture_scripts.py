"""Tests of the posture / transition scripts (prone, init_crawl_stance_from_prone, kneel, rolls) and the video path.

Physics tests run one script each (≈ 16-25 s of sim time). kneel's physics test is in test_kneel.py.
"""
import os

import numpy as np
import pytest

from atlas_crawl_controller.keyframes import load_script, mirror_q, named_pose
from atlas_crawl_mujoco.run_sequence import front_up, run_sequence

NEW_SCRIPTS = ["prone", "init_crawl_stance_from_prone", "lie_down", "roll_to_back_from_left",
               "roll_to_back_from_right", "roll_to_belly", "kneel"]


@pytest.mark.parametrize("name", NEW_SCRIPTS)
def test_script_loads_and_validates(name):
    s = load_script(name)
    assert s.name == name and len(s) >= 1
    assert s.fall_check == "none"          # lying scripts: torso on the floor by design
    for k in s.keyframes:
        assert k.q.shape == (28,) and np.all(np.isfinite(k.q)) and k.duration_s > 0


def test_prone_script_matches_reset_pose():
    q, quat = named_pose("prone")
    assert np.allclose(load_script("prone").keyframes[-1].q, q)
    # pelvis pitched +90 deg: its forward axis points down
    assert quat[2] == pytest.approx(np.sqrt(0.5))


def test_roll_right_is_mirror_of_left():
    left, right = load_script("roll_to_back_from_left"), load_script("roll_to_back_from_right")
    assert len(left) == len(right)
    for a, b in zip(left.keyframes, right.keyframes):
        assert np.allclose(mirror_q(a.q), b.q)
    assert not np.allclose(left.keyframes[1].q, right.keyframes[1].q)   # really mirrored, not a copy


def test_init_stance_ends_where_crawl_forward_begins():
    end = load_script("init_crawl_stance_from_prone").keyframes[-1].q
    start = load_script("crawl_forward").keyframes[0].q
    assert np.allclose(end, start, atol=1e-4), "crawl_forward's stance changed: update init_crawl_stance_from_prone"


def test_roll_to_back_from_left_ends_on_back_in_physics():
    res, sim = run_sequence(["roll_to_back_from_left"], seed=0, quiet=True)
    r = res[0]
    assert front_up(sim, "utorso") > 0.8 and front_up(sim, "pelvis") > 0.5, r.line()
    assert r.ok, r.line()


def test_init_crawl_stance_reaches_stance_in_physics():
    """prone -> crawl stance (≈ 23 s of sim time): all four limbs down, nothing else but the feet, margin ≥ 0.03 m,
    at rest (run_sequence's "stance" check). Measured 20/20 with ±0.02 rad noise (seeds 0-19)."""
    res, sim = run_sequence(["init_crawl_stance_from_prone"], seed=0, quiet=True)
    r = res[0]
    assert r.metrics["touch"] == "1111", r.line()
    assert r.metrics["margin_m"] >= 0.03, r.line()
    assert r.ok, r.line()


def test_lie_down_ends_prone_in_physics():
    """crawl stance -> prone (≈ 23 s of sim time), quasi-static: never a fast flop, ends prone and at rest."""
    res, sim = run_sequence(["lie_down"], seed=0, quiet=True)
    r = res[0]
    assert front_up(sim, "utorso") < -0.8 and front_up(sim, "pelvis") < -0.8, r.line()
    assert r.ok, r.line()


def test_roll_to_belly_ends_prone_in_physics():
    """supine -> prone over the left side (≈ 25 s of sim time). Measured 20/20 with ±0.02 rad noise."""
    res, sim = run_sequence(["roll_to_belly"], seed=0, quiet=True)
    r = res[0]
    assert front_up(sim, "utorso") < -0.8 and front_up(sim, "pelvis") < -0.8, r.line()
    assert r.ok, r.line()


def test_lie_down_ends_on_prone_pose_and_starts_on_crawl_stance():
    s = load_script("lie_down")
    assert np.allclose(s.keyframes[-1].q, named_pose("prone")[0], atol=1e-4)
    assert np.allclose(s.keyframes[0].q, load_script("crawl_forward").keyframes[0].q, atol=1e-4), \
        "crawl_forward's stance changed: update lie_down"


def _gl_ok():
    from atlas_crawl_mujoco.render import gl_backend_works
    return gl_backend_works(os.environ.get("MUJOCO_GL", "egl"))


def test_video_writer_frame_count(tmp_path):
    if not _gl_ok():
        pytest.skip(f"no offscreen GL backend (MUJOCO_GL={os.environ.get('MUJOCO_GL', 'egl')} failed to create a "
                    "context; install EGL or libosmesa6)")
    import imageio.v2 as imageio
    from atlas_crawl_mujoco.render import VideoRecorder
    from atlas_crawl_mujoco.sim import AtlasSim
    sim = AtlasSim()
    sim.reset("prone")
    out = tmp_path / "clip.mp4"
    rec = VideoRecorder(sim, str(out), fps=25, width=320, height=240)
    for _ in range(400):            # 0.4 s of sim time at 25 fps -> frames at t = 0, 0.04, ..., 0.36 (+0.40)
        sim.step(1)
        rec.maybe_capture()
    rec.close()
    assert out.stat().st_size > 1000
    frames = imageio.mimread(str(out))
    assert len(frames) == rec.n_frames
    assert rec.n_frames in (10, 11)
    assert frames[0].shape[:2] == (240, 320)
    assert frames[0].std() > 5          # not a blank image
