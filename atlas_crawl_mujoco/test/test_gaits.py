"""Tests of the shipped crawl/turn gait scripts and their design tools (gait_design.py, search_gait.py)."""
import numpy as np

from atlas_crawl_controller.keyframes import load_script


def test_crawl_stance_is_crawl_forward_start():
    """crawl_stance.yaml (target of the posture scripts) must stay the exact first key-frame of crawl_forward."""
    st, fw = load_script("crawl_stance"), load_script("crawl_forward")
    assert len(st) == 1
    assert np.allclose(st.keyframes[0].q, fw.keyframes[0].q, atol=1e-4)
    assert np.allclose(st.start_quat_wxyz, fw.start_quat_wxyz, atol=1e-4)
    assert st.keyframes[0].stance_mask().all()
