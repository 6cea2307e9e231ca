import numpy as np
import pytest

from atlas_crawl_kinematics.pinv import (
    PinvError,
    inverse_mass_weights,
    nullspace_projector,
    weighted_pinv,
    weighted_pinv_apply,
    weighted_pinv_primal,
)
from atlas_description import CONTACT_FRAMES


def test_inverse_mass_weights_sum_to_one_and_order(model):
    w = inverse_mass_weights(model.mass_moved())
    assert w.sum() == pytest.approx(1.0)
    assert w[model.joint_index("back_lbz")] < w[model.joint_index("l_arm_mwx")]
    with pytest.raises(PinvError):
        inverse_mass_weights([1.0, 0.0])


def test_both_forms_of_eq_4_10_agree(model):
    rng = np.random.default_rng(0)
    for q in model.random_configurations(20, rng):
        J = model.forward(q).point_jacobians(CONTACT_FRAMES)
        w = inverse_mass_weights(model.mass_moved())
        c_inv = rng.uniform(1e-4, 1e-2, 12)
        A = weighted_pinv(J, w, c_inv)
        B = weighted_pinv_primal(J, np.diag(1.0 / w), np.diag(1.0 / c_inv))
        assert np.abs(A - B).max() < 1e-8 * max(1.0, np.abs(B).max())
        e = rng.normal(size=12)
        assert np.allclose(weighted_pinv_apply(J, w, c_inv, e), A @ e, atol=1e-10)


def test_pinv_tends_to_right_inverse_without_regularisation(model):
    q = model.random_configurations(1, 9)[0]
    J = model.forward(q).point_jacobians(CONTACT_FRAMES)
    assert np.linalg.matrix_rank(J) == 12
    w = inverse_mass_weights(model.mass_moved())
    for c_inv, tol in ((1e-12, 1e-6), (1e-3, None)):
        JJ = J @ weighted_pinv(J, w, c_inv)
        if tol is not None:
            assert np.abs(JJ - np.eye(12)).max() < tol
        else:  # with the thesis' regularisation, J J♯ is visibly not the identity
            assert np.abs(JJ - np.eye(12)).max() > 1e-3
    # null space: J N ≈ 0 when unregularised
    Jp = weighted_pinv(J, w, 1e-12)
    assert np.abs(J @ nullspace_projector(J, Jp)).max() < 1e-6


def test_pinv_bad_inputs():
    J = np.ones((3, 5))
    with pytest.raises(PinvError):
        weighted_pinv(J, np.ones(4))
    with pytest.raises(PinvError):
        weighted_pinv(np.full((3, 5), np.nan), np.ones(5))
    with pytest.raises(PinvError):
        weighted_pinv(J, np.ones(5), 0.0)  # rank-1 J without regularisation
