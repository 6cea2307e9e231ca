"""atlas_crawl_kinematics.rotations against scipy.spatial.transform.Rotation on random rotations."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from atlas_crawl_kinematics import rotations as rot

N = 500


@pytest.fixture(scope="module")
def rs():
    r = Rotation.random(N, random_state=7)
    extra = Rotation.from_rotvec([[np.pi, 0, 0], [0, np.pi, 0], [0, 0, np.pi], [0, 0, 0], [1e-9, 0, 0]])
    return Rotation.concatenate([r, extra])


def test_quat_to_matrix_both_orders_single_and_batch(rs):
    xyzw = rs.as_quat()
    wxyz = xyzw[:, [3, 0, 1, 2]]
    assert np.allclose(rot.quat_xyzw_to_R(xyzw), rs.as_matrix(), atol=1e-12)
    assert np.allclose(rot.quat_wxyz_to_R(wxyz), rs.as_matrix(), atol=1e-12)
    assert np.allclose(rot.quat_wxyz_to_R(wxyz[3]), rs[3].as_matrix(), atol=1e-12)
    assert np.allclose(rot.quat_wxyz_to_R(3.0 * wxyz[:4]), rs[:4].as_matrix(), atol=1e-12)  # normalised


def test_matrix_to_quat_round_trip_with_w_non_negative(rs):
    q = rot.R_to_quat_wxyz(rs.as_matrix())
    assert np.all(q[:, 0] >= 0) and np.allclose(np.linalg.norm(q, axis=1), 1.0)
    ref = rs.as_quat()[:, [3, 0, 1, 2]]
    ref = ref * np.where(ref[:, :1] < 0, -1.0, 1.0)
    same = np.isclose(np.abs(np.sum(q * ref, axis=1)), 1.0, atol=1e-12)   # q and -q are one rotation (w = 0)
    assert same.all()
    assert np.allclose(rot.quat_wxyz_to_R(q), rs.as_matrix(), atol=1e-12)
    assert np.allclose(rot.R_to_quat_xyzw(rs.as_matrix()[0]), rot.wxyz_to_xyzw(q[0]))


def test_rpy_and_product(rs):
    wxyz = rs.as_quat()[:, [3, 0, 1, 2]]
    rpy = rot.quat_wxyz_to_rpy(wxyz[:N])
    assert np.allclose(Rotation.from_euler("ZYX", rpy[:, ::-1]).as_matrix(), rs[:N].as_matrix(), atol=1e-9)
    a, b = wxyz[:N], wxyz[::-1][:N]
    prod = rot.quat_wxyz_to_R(rot.quat_mul_wxyz(a, b))
    assert np.allclose(prod, rs[:N].as_matrix() @ rs[::-1][:N].as_matrix(), atol=1e-12)


@pytest.mark.parametrize("bad", [[0, 0, 0, 0], [np.nan, 0, 0, 1], [1, 0, 0]])
def test_bad_quaternions_are_rejected(bad):
    with pytest.raises(ValueError):
        rot.quat_wxyz_to_R(bad)


def test_rotvec_to_R_matches_scipy_and_refuses_non_finite():
    import numpy as np
    import pytest
    from scipy.spatial.transform import Rotation

    from atlas_crawl_kinematics.rotations import rotvec_to_R
    rng = np.random.default_rng(0)
    for v in list(rng.normal(0, 1.5, (200, 3))) + [np.zeros(3), np.array([1e-10, 0, -2e-10])]:
        assert np.allclose(rotvec_to_R(v), Rotation.from_rotvec(v).as_matrix(), atol=1e-12)
    with pytest.raises(ValueError):
        rotvec_to_R([np.nan, 0, 0])


def test_R_between_matches_scipy_align_vectors_and_refuses_degenerate():
    rng = np.random.default_rng(1)
    for _ in range(200):
        a, b = rng.normal(0, 1, 3), rng.normal(0, 1, 3)
        R = rot.R_between(a, b)
        assert np.allclose(R @ (a / np.linalg.norm(a)), b / np.linalg.norm(b), atol=1e-12)
        ref, _ = Rotation.align_vectors([b], [a])        # the smallest rotation too (one vector pair)
        assert np.allclose(R, ref.as_matrix(), atol=1e-9)
    assert np.allclose(rot.R_between([0, 0, 1], [0, 0, 2]), np.eye(3))
    for a, b in (([0, 0, 1], [0, 0, -1]), ([0, 0, 0], [0, 0, 1]), ([np.nan, 0, 1], [0, 0, 1])):
        with pytest.raises(ValueError):
            rot.R_between(a, b)
