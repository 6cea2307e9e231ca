"""lab/gait_design.py: the CoM target with a measured physics bias (moved from atlas_crawl_mujoco/test/test_gaits.py)."""
import numpy as np


def test_com_in_triangle_with_physics_bias():
    """With a measured CoM bias the chosen point has the margin after adding the bias, and the kinematic plan
    keeps kin_margin (what check_gaits measures)."""
    from gait_design import com_in_triangle
    from atlas_crawl_mujoco.kin import support_margin
    tri = np.array([[0.6, 0.3], [0.6, -0.3], [0.0, 0.12]])
    start = np.array([0.25, -0.2])
    plain = com_in_triangle(start, tri, 0.05)
    assert support_margin(plain, tri) >= 0.05 - 1e-3
    bias = np.array([0.03, -0.02])
    p = com_in_triangle(start, tri, 0.05, bias=bias, kin_margin=0.035)
    assert support_margin(p + bias, tri) >= 0.05 - 1e-3
    assert support_margin(p, tri) >= 0.035 - 1e-3
    assert not np.allclose(p, plain)
