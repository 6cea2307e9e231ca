"""Tests of the shipped crawl/turn gait scripts (their design tools are in lab/: lab/test/test_gait_design.py)."""
import numpy as np

from atlas_crawl_controller.keyframes import load_script


def test_crawl_stance_is_crawl_forward_start():
    """crawl_stance.yaml (target of the posture scripts) must stay the exact first key-frame of crawl_forward."""
    st, fw = load_script("crawl_stance"), load_script("crawl_forward")
    assert len(st) == 1
    assert np.allclose(st.keyframes[0].q, fw.keyframes[0].q, atol=1e-4)
    assert np.allclose(st.start_quat_wxyz, fw.start_quat_wxyz, atol=1e-4)
    assert st.keyframes[0].stance_mask().all()


def _short(gait):
    from atlas_crawl_mujoco.run_gait import run
    r = run(gait, 2, "part", quiet=True)
    assert not r["fell"], gait
    assert r["final_pelvis_z_m"] > 0.45
    return r


def test_shipped_forward_2_cycles():
    """Measured (seed 0, 2 part-loop cycles): along +0.753 m, drift 0.016 m/cycle, -0.43 deg/cycle, physics min
    tripod margin +0.031 m, stance loss 0.44."""
    r = _short("crawl_forward")
    assert r["along_m"] > 0.6
    assert r["drift_per_cycle_m"] < 0.04
    assert abs(r["turn_per_cycle_deg"]) < 1.5
    assert r["min_tripod_margin_m"] > 0.02


def test_shipped_backward_2_cycles():
    """Measured: along -0.404 m, drift 0.050 m/cycle (10-cycle: 0.019), +1.4 deg/cycle, margin +0.028 m."""
    r = _short("crawl_backward")
    assert r["along_m"] < -0.34
    assert abs(r["turn_per_cycle_deg"]) < 3.0
    assert r["min_tripod_margin_m"] > 0.018


def test_shipped_turns_2_cycles_mirror():
    """Measured: turn_left +33.59, turn_right -33.63 deg/cycle, drift 0.026 m/cycle, margins +0.034/+0.035 m."""
    rl, rr = _short("turn_left"), _short("turn_right")
    assert rl["turn_per_cycle_deg"] > 28 and rr["turn_per_cycle_deg"] < -28
    assert abs(rl["turn_per_cycle_deg"] + rr["turn_per_cycle_deg"]) < 2.0
    for r in (rl, rr):
        assert r["drift_per_cycle_m"] < 0.05
        assert r["min_tripod_margin_m"] > 0.025
