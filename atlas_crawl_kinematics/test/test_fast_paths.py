"""The compiled real-time paths of the Cartesian core (issue 10 §1) agree with the reference implementations."""
import numpy as np
import pytest

from atlas_crawl_kinematics import iik_fast
from atlas_crawl_kinematics.cartesian_gait import margin_point
from atlas_crawl_kinematics.com_modulation import fast_margin_point, small_hull
from atlas_crawl_kinematics.model import RobotModel
from atlas_crawl_kinematics.robot_source import atlas_urdf_string
from atlas_crawl_kinematics.rotations import rotvec_to_R
from atlas_description import CONTACT_FRAMES

pytestmark = pytest.mark.skipif(not iik_fast.HAVE_NUMBA, reason="numba not installed")


@pytest.fixture(scope="module")
def model():
    return RobotModel(atlas_urdf_string())


def test_compiled_fk_points_and_com_match_the_model(model):
    rng = np.random.default_rng(0)
    fm = iik_fast.FastModel.of(model)
    assert iik_fast.FastModel.of(model) is fm                      # built once per model
    idx = model.frame_indices(CONTACT_FRAMES)
    for _ in range(50):
        q = rng.uniform(model.lower, model.upper)
        p, R = rng.normal(0, 1, 3), rotvec_to_R(rng.normal(0, 1, 3))
        pts, com = iik_fast.fk_points_com(fm, q, idx, p, R)
        k = model.forward(q)
        assert np.allclose(pts, (R @ k.positions(list(CONTACT_FRAMES)).T).T + p, atol=1e-12)
        assert np.allclose(com, R @ k.com() + p, atol=1e-12)


def test_compiled_margin_point_matches_the_reference():
    rng = np.random.default_rng(1)
    for _ in range(300):
        pts = rng.uniform(-0.6, 0.6, (rng.integers(3, 5), 2))
        start = rng.uniform(-0.8, 0.8, 2)
        m = float(rng.uniform(0.0, 0.08))
        ref = margin_point(start, pts, m, polygon=small_hull(pts))
        assert np.allclose(fast_margin_point(start, pts, m), ref, atol=1e-9), (pts, start, m)


def test_compiled_small_hull_is_the_python_monotone_chain(monkeypatch):
    """Same vertices in the same order, bit for bit, including ties, duplicates and collinear points (which both
    hand to qhull)."""
    rng = np.random.default_rng(4)
    cases = []
    for k in range(2000):
        p = rng.normal(size=(int(rng.integers(3, 5)), 2))
        if k % 3 == 0:
            p = np.round(p, 1)          # equal x: the (x, y) sort order decides
        if k % 7 == 0:
            p[1] = p[0]                 # duplicate point
        if k % 11 == 0:
            p[:, 1] = 2.0 * p[:, 0]     # collinear
        cases.append(p)
    compiled = [small_hull(p) for p in cases]
    monkeypatch.setattr(iik_fast, "HAVE_NUMBA", False)
    for p, c in zip(cases, compiled):
        ref = small_hull(p)
        assert c.shape == ref.shape and np.array_equal(c, ref), p
