"""contact_tilt (issue 14 §1): the tilt the stance contacts on known ground see, and the estimator using it."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from atlas_crawl_controller.estimation.contact_tilt import contact_tilt
from atlas_crawl_kinematics.rotations import rotvec_to_R

#: a crawl stance seen from the pelvis, world frame [m] (LW, RW, LK, RK)
U = np.array([[0.45, 0.25, -0.55], [0.45, -0.25, -0.55], [-0.35, 0.2, -0.55], [-0.35, -0.2, -0.55]])


def estimate_residuals(phi_xy, dz, p_est_z=0.55):
    """(u, e): the contacts seen from an estimate with R = I at height ``p_est_z`` when the truth is tilted by the
    world rotation ``phi_xy`` and ``dz`` higher, with every contact on the ground (z = 0) below ``U``'s layout."""
    R_true = rotvec_to_R([phi_xy[0], phi_xy[1], 0.0])
    p_true = np.array([0.0, 0.0, p_est_z + dz])
    c = np.column_stack([U[:, 0], U[:, 1], np.zeros(4)])          # the contacts, on the ground
    u = (R_true.T @ (c - p_true).T).T                             # r = R_trueᵀ (c − p); u = R_est r = r
    return u, 0.0 - (p_est_z + u[:, 2])


@settings(max_examples=60, deadline=None)
@given(st.floats(-0.015, 0.015), st.floats(-0.015, 0.015), st.floats(-0.01, 0.01), st.integers(0, 4))
def test_recovers_a_small_tilt_and_height_error(ax, ay, dz, lifted):
    u, e = estimate_residuals((ax, ay), dz)
    w = np.ones(4)
    if lifted < 4:
        w[lifted] = 0.0                                           # any three contacts are enough
    m, why = contact_tilt(u, e, w, noise_m=0.003, max_tilt_rad=0.05)
    assert m is not None, why
    assert np.allclose(m.phi_xy, [ax, ay], atol=3e-4)             # first order in φ
    assert abs(m.dz_m - dz) < 3e-3
    assert m.cov.shape == (2, 2) and np.all(np.linalg.eigvalsh(m.cov) > 0)
    assert m.rms_m < 1e-3


def test_refuses_what_it_cannot_see_with_a_reason():
    res = np.zeros(4)
    m, why = contact_tilt(U, res, np.array([1, 1, 0, 0.2]), 0.003, 0.05)
    assert m is None and "2 stance contacts" in why
    line = np.array([[0.4, 0.0, -0.5], [0.0, 0.0, -0.5], [-0.4, 0.0, -0.5], [0.2, 0.0, -0.5]])
    m, why = contact_tilt(line, res, np.ones(4), 0.003, 0.05)
    assert m is None and "one line" in why
    m, why = contact_tilt(U, np.array([0.0, 0.0, 0.0, 0.05]), np.ones(4), 0.003, 0.5)
    assert m is None and "off the plane" in why            # a limb 5 cm above the ground it is assumed on
    m, why = contact_tilt(U, U[:, 1] * 0.1, np.ones(4), 0.003, 0.05)
    assert m is None and "> max" in why                     # 0.1 rad: more than a contact error can explain
    m, why = contact_tilt(U, np.array([0.0, np.nan, 0.0, 0.0]), np.ones(4), 0.003, 0.05)
    assert m is not None                                    # a contact off the map is left out, three remain
