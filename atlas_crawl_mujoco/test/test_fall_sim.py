"""The simulator's fall flag is the controller's FallDetector on ground truth: quiet while crawling, raised (with
the reason) after a side push, and the debounced detector flags within 100 ms of the simulator's first fall sample."""
import numpy as np
import pytest

from atlas_crawl_controller.fall_detector import FallDetector
from atlas_crawl_controller.keyframes import load_script
from atlas_crawl_controller.player import KeyframePlayer
from atlas_crawl_mujoco.run_gait import start_state
from atlas_crawl_mujoco.sim import AtlasSim


def crawl(push_ns=None, t_push=1.5, t_end=3.5):
    sc = load_script("crawl_forward")
    sim = AtlasSim()
    start_state(sim, sc)
    pl = KeyframePlayer(sc, loop_mode="full", cycles=3)
    pl.start(sim.joint_q(), sim.joint_effort(), sim.kp)
    det = FallDetector()
    first, flagged = None, None
    t0 = sim.time
    while sim.time - t0 < t_end:
        q, _ = pl.update(sim.dt)
        sim.set_joint_targets(q)
        sim.step(1)
        if push_ns is not None and sim.time - t0 >= t_push:
            sim.push(push_ns)
            push_ns = None
        f, why = sim.fallen()
        if f and first is None:
            first = (sim.time, why)
        if int(round(sim.time / sim.dt)) % 10 == 0:            # the 100 Hz pose / contacts the graph sees
            s = det.update(sim.time, sim.pelvis_pose_xyzw(), sim.floor_bodies(), sim.limb_contacts()[0])
            if s.fallen and flagged is None:
                flagged = (s.flagged_t, s.reason)
    return sim, det, first, flagged


def test_crawl_is_not_a_fall():
    sim, det, first, flagged = crawl()
    assert first is None and flagged is None and det.state.posture == "crawl"


def test_side_push_is_a_fall_flagged_within_100_ms():
    sim, det, first, flagged = crawl(push_ns=[0.0, 120.0, 0.0])
    assert first is not None, "a 120 N·s side push at the pelvis did not tip the crawl over"
    assert "roll about the spine" in first[1] or "touches the floor" in first[1] or "pelvis height" in first[1]
    assert flagged is not None and 0.0 <= flagged[0] - first[0] <= 0.1, (first, flagged)
    assert det.state.fallen and det.state.posture != "crawl"


def test_push_rejects_bad_input():
    sim = AtlasSim()
    with pytest.raises(ValueError):
        sim.push([np.nan, 0, 0])
    with pytest.raises(ValueError):
        sim.push([1, 0, 0], duration_s=0.0)
