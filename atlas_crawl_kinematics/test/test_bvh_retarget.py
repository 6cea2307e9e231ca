"""BVH loader, handedness conversion, velocity stance, retargeting (issue 4 §5)."""
from pathlib import Path

import numpy as np
import pytest

from atlas_crawl_kinematics.bvh import THESIS_SWAP, BVHError, axes_matrix, load_bvh, parse_bvh, to_rep103
from atlas_crawl_kinematics.retarget import retarget
from atlas_crawl_kinematics.stance import StanceError, velocity_stance

DATA = Path(__file__).resolve().parents[1] / "data" / "synthetic_human_crawl.bvh"


@pytest.fixture(scope="module")
def bvh():
    return load_bvh(DATA)


def test_shipped_file_counts(bvh):
    assert len(bvh.joints) == 17
    assert bvh.n_frames == 637
    assert bvh.frame_time_s == pytest.approx(1 / 60, abs=1e-6)
    assert bvh.joints[0].name == "Hips" and len(bvh.joints[0].channels) == 6


def test_known_fk_positions(bvh):
    M, det = axes_matrix(forward="z", left="x", up="y")
    assert det == pytest.approx(1.0)
    p = to_rep103(bvh.positions(["Hips", "LeftHand", "Head"])[0], M, 0.01)
    # generator: hips at 0.48 m, left wrist 0.70 − 0.125 m ahead (mid-stance offset), 0.21 m left, 0.04 m up;
    # head 10+25+20+10 cm along the horizontal spine
    np.testing.assert_allclose(p[0], [0.0, 0.0, 0.48], atol=1e-4)
    np.testing.assert_allclose(p[1], [0.5812, 0.21, 0.04], atol=2e-4)
    np.testing.assert_allclose(p[2], [0.65, 0.0, 0.48], atol=1e-4)


def test_round_trip_text(bvh):
    b2 = parse_bvh(bvh.to_text())
    np.testing.assert_allclose(b2.forward_kinematics()[0], bvh.forward_kinematics()[0], atol=1e-3)


def test_handedness():
    # thesis formula: swap Y/Z, negate new Y → (x, −z, y): a rotation (det +1), cannot change handedness
    assert np.linalg.det(THESIS_SWAP) == pytest.approx(1.0)
    np.testing.assert_allclose(to_rep103([1.0, 2.0, 3.0], THESIS_SWAP), [1.0, -3.0, 2.0])
    # a truly left-handed source (x right, y up, z forward): det −1, a point 1 m to the right → y = −1 (REP 103)
    M, det = axes_matrix(forward="z", left="-x", up="y")
    assert det == pytest.approx(-1.0)
    np.testing.assert_allclose(M @ [1.0, 0, 0], [0, -1.0, 0])
    np.testing.assert_allclose(M @ [0, 0, 2.0], [2.0, 0, 0])
    np.testing.assert_allclose(M @ [0, 3.0, 0], [0, 0, 3.0])
    # right-handed y-up source (left = +x): det +1 and a proper rotation
    M2, det2 = axes_matrix(forward="z", left="x", up="y")
    assert det2 == pytest.approx(1.0)
    np.testing.assert_allclose(M2 @ M2.T, np.eye(3))
    with pytest.raises(BVHError):
        axes_matrix("z", "z", "y")


def test_bad_bvh_raises():
    with pytest.raises(BVHError):
        parse_bvh("HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Xposition Yposition Zposition\n}\n"
                  "MOTION\nFrames: 2\nFrame Time: 0.1\n0 0 0\n")  # 3 numbers for 2 frames
    with pytest.raises(BVHError):
        parse_bvh("HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Xposition Yposition Zposition\n}\n"
                  "MOTION\nFrames: 1\nFrame Time: 0.1\n0 nan 0\n")
    with pytest.raises(BVHError):
        load_bvh("/nonexistent.bvh")


def test_velocity_stance_synthetic():
    t = np.arange(0, 2.0, 0.01)
    x = np.where(t < 0.5, 0.0, np.where(t < 1.0, (t - 0.5) * 0.4, 0.2))  # still, move, still
    traj = np.zeros((len(t), 2, 3))
    traj[:, 0, 0] = x
    traj[:, 1, 0] = 0.3  # never moves
    st = velocity_stance(traj)
    assert st[:45, 0].all() and st[110:, 0].all()
    assert not st[55:95, 0].any()
    assert st[:, 1].all()
    bad = traj.copy()
    bad[3, 0, 0] = np.nan
    with pytest.raises(StanceError):
        velocity_stance(bad)


def test_retarget_shipped(bvh):
    rt = retarget(bvh)
    assert rt.contacts.shape == (637, 4, 3)
    # per-limb normalisation: each limb's min height is 0
    np.testing.assert_allclose(rt.contacts[:, :, 2].min(axis=0), 0.0, atol=1e-12)
    # scaled so that the wrist-midpoint → knee-midpoint distance is Atlas' 0.62 m in the first frame
    d = np.linalg.norm(rt.contacts[0, :2, :2].mean(0) - rt.contacts[0, 2:, :2].mean(0))
    assert d == pytest.approx(0.62, abs=1e-9)
    # each limb swings (leaves stance) once per cycle, 4 cycles
    for l in range(4):
        s = rt.stance[:, l]
        assert int(np.sum(s[:-1] & ~s[1:])) == 4
    # left limbs on the left (REP 103: +y)
    assert rt.contacts[0, 0, 1] > 0 and rt.contacts[0, 2, 1] > 0 and rt.contacts[0, 1, 1] < 0
