"""Alternative-root Jacobians (thesis Eq. 4.13) and floating-base columns against central finite differences."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from atlas_crawl_kinematics.model import KinematicsInputError
from atlas_description import CONTACT_FRAMES

H = 1e-6
FD_TOL = 1e-7  # central differences: O(h^2) truncation + O(eps/h) rounding


def _fd(model, q, fun):
    cols = []
    for j in range(model.n_joints):
        e = np.zeros(model.n_joints)
        e[j] = H
        cols.append((fun(model.forward(q + e)) - fun(model.forward(q - e))) / (2 * H))
    return np.array(cols).T


@pytest.mark.parametrize("root", ["l_knee_contact", "r_wrist_contact", "utorso", "l_foot", "pelvis"])
def test_root_change_point_and_com_jacobians(model, root):
    rng = np.random.default_rng(abs(hash(root)) % 2**32)
    for q in model.random_configurations(5, rng):
        k = model.forward(q)
        frames = list(CONTACT_FRAMES) + ["head"]
        J = k.point_jacobians(frames, root=root)
        Jn = _fd(model, q, lambda kk: kk.positions(frames, root=root).reshape(-1))
        assert np.abs(J - Jn).max() < FD_TOL
        Jc = k.com_jacobian(root=root)
        Jcn = _fd(model, q, lambda kk: kk.com(root=root))
        assert np.abs(Jc - Jcn).max() < FD_TOL
        # the root itself never moves in its own frame
        if root in frames:
            i = frames.index(root)
            assert np.abs(J[3 * i:3 * i + 3]).max() == 0.0
        # angular velocity of a frame relative to the root, in root coordinates
        f = "r_hand"
        Jr = k.rotation_jacobian(f, root=root)
        cols = []
        for j in range(model.n_joints):
            e = np.zeros(model.n_joints)
            e[j] = H
            Rp = model.forward(q + e).rotation(f, root=root)
            Rm = model.forward(q - e).rotation(f, root=root)
            cols.append(Rotation.from_matrix(Rp @ Rm.T).as_rotvec() / (2 * H))
        assert np.abs(Jr - np.array(cols).T).max() < FD_TOL


def test_pelvis_root_equals_default(model):
    q = model.random_configurations(1, 3)[0]
    k = model.forward(q)
    assert np.allclose(k.point_jacobians(CONTACT_FRAMES, root="pelvis"), k.point_jacobians(CONTACT_FRAMES))
    assert np.allclose(k.com_jacobian(root="pelvis"), k.com_jacobian())


def test_floating_base_pelvis_coordinates_fd(model):
    """Base columns in pelvis coordinates: perturb the base pose and differentiate world positions."""
    q = model.random_configurations(1, 5)[0]
    k = model.forward(q)
    J = k.point_jacobians(CONTACT_FRAMES, floating_base=True)
    p = k.positions(CONTACT_FRAMES)
    for a in range(3):
        w = np.zeros(3)
        w[a] = H
        dp = (p @ Rotation.from_rotvec(w).as_matrix().T - p @ Rotation.from_rotvec(-w).as_matrix().T) / (2 * H)
        assert np.abs(J[:, 3 + a] - dp.reshape(-1)).max() < FD_TOL
        assert np.allclose(J[:, a], np.tile(np.eye(3)[a], 4))
    Jc = k.com_jacobian(floating_base=True)
    assert Jc.shape == (3, 34)
    c = k.com()
    for a in range(3):
        assert np.allclose(Jc[:, 3 + a], np.cross(np.eye(3)[a], c))


def test_mass_moved_and_bad_inputs(model):
    mm = model.mass_moved("l_knee_contact")
    j = model.joint_index("l_leg_kny")
    # with the left knee held, l_leg_kny moves everything except the shin and below
    assert mm[j] == pytest.approx(model.total_mass - model.subtree_mass[j])
    assert model.mass_moved("r_hand")[j] == pytest.approx(model.subtree_mass[j])
    with pytest.raises(KinematicsInputError):
        model.forward(np.full(28, np.nan))
    with pytest.raises(KinematicsInputError):
        model.forward(np.zeros(27))
    with pytest.raises(KinematicsInputError):
        model.forward(np.zeros(28)).point_jacobian("no_such_frame")
    with pytest.raises(KinematicsInputError):
        model.forward(np.zeros(28)).point_jacobian("l_hand", root="l_foot", floating_base=True)
