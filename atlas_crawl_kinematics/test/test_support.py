import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from atlas_crawl_kinematics.support import (
    InvalidSupportError,
    point_in_polygon,
    spatial_frame,
    stability_margin,
    support_polygon,
)

SQUARE = np.array([[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [0.0, 0.0]])


def _signed_area(poly):
    b = np.roll(poly, -1, axis=0)
    return 0.5 * np.sum(poly[:, 0] * b[:, 1] - b[:, 0] * poly[:, 1])


def test_hull_square_is_ccw_and_drops_interior():
    hull = support_polygon(SQUARE)
    assert hull.shape == (4, 2)
    assert _signed_area(hull) == pytest.approx(4.0)
    assert not np.any(np.all(hull == 0.0, axis=1))


def test_hull_degenerate_cases():
    assert support_polygon([[0.3, 0.2]]).shape == (1, 2)
    seg = support_polygon([[0, 0], [1, 1]])
    assert seg.shape == (2, 2)
    col = support_polygon([[0, 0], [2, 2], [1, 1], [0.5, 0.5]])
    assert col.shape == (2, 2)
    assert {tuple(v) for v in col} == {(0.0, 0.0), (2.0, 2.0)}
    dup = support_polygon([[1, 1], [1, 1], [1, 1]])
    assert dup.shape == (1, 2)
    # (n, 3) accepted, z dropped
    assert support_polygon(np.c_[SQUARE, np.ones(5)]).shape == (4, 2)


def test_margin_inside_outside_and_on_edge():
    hull = support_polygon(SQUARE)
    assert stability_margin([0.0, 0.0], hull) == pytest.approx(1.0)
    assert stability_margin([0.5, 0.2], hull) == pytest.approx(0.5)
    assert stability_margin([3.0, 0.0], hull) == pytest.approx(-2.0)
    assert stability_margin([2.0, 2.0], hull) == pytest.approx(-np.sqrt(2.0))  # nearest is a vertex
    assert stability_margin([1.0, 0.0], hull) == pytest.approx(0.0)
    assert point_in_polygon([0, 0], hull, margin=0.9)
    assert not point_in_polygon([0, 0], hull, margin=1.1)


def test_margin_triangle_matches_bruteforce():
    rng = np.random.default_rng(0)
    for _ in range(200):
        pts = rng.uniform(-1, 1, size=(3, 2))
        hull = support_polygon(pts)
        if hull.shape[0] < 3:
            continue
        p = rng.uniform(-1.5, 1.5, size=2)
        # brute force: dense boundary sampling + inside test via barycentric signs
        b = np.roll(hull, -1, axis=0)
        t = np.linspace(0, 1, 4001)[:, None, None]
        boundary = (hull[None] + t * (b - hull)[None]).reshape(-1, 2)
        dist = np.min(np.linalg.norm(boundary - p, axis=1))
        cross = (b[:, 0] - hull[:, 0]) * (p[1] - hull[:, 1]) - (b[:, 1] - hull[:, 1]) * (p[0] - hull[:, 0])
        inside = np.all(cross >= 0)
        expect = dist if inside else -dist
        assert stability_margin(p, hull) == pytest.approx(expect, abs=2e-3)


def test_margin_degenerate_polygons():
    assert stability_margin([0, 1], [[0, 0], [2, 0]]) == pytest.approx(-1.0)
    assert stability_margin([3, 0], [[0, 0], [2, 0]]) == pytest.approx(-1.0)
    assert stability_margin([1, 0], [[0, 0], [2, 0]]) == pytest.approx(0.0)
    assert stability_margin([3, 4], [[0, 0]]) == pytest.approx(-5.0)


def test_bad_inputs_raise():
    with pytest.raises(InvalidSupportError):
        support_polygon(np.zeros((0, 2)))
    with pytest.raises(InvalidSupportError):
        support_polygon([[0, 0], [np.nan, 1]])
    with pytest.raises(InvalidSupportError):
        stability_margin([np.inf, 0], SQUARE[:4])
    with pytest.raises(InvalidSupportError):
        stability_margin([0, 0], SQUARE[:4][::-1])  # clockwise


def test_spatial_frame_crawling_pose():
    # Pelvis pitched forward by 1.25 rad about y and yawed by 0.3 rad.
    rot = Rotation.from_euler("ZY", [0.3, 1.25]).as_matrix()
    o, R = spatial_frame([1, 2, 0.5], rot, forward_axis="x")
    assert np.allclose(R.T @ R, np.eye(3))
    assert np.allclose(R[:, 2], [0, 0, 1])
    assert np.allclose(R[:, 0], [np.cos(0.3), np.sin(0.3), 0])
    assert np.allclose(o, [1, 2, 0.5])
    # The thesis' "pelvis z axis" choice: pitched 90 deg, z points forward horizontally.
    rot90 = Rotation.from_euler("ZY", [0.3, np.pi / 2]).as_matrix()
    _, Rz = spatial_frame([0, 0, 0], rot90, forward_axis="z")
    assert np.allclose(Rz[:, 0], [np.cos(0.3), np.sin(0.3), 0])
    # With forward_axis="x" at exactly 90 deg pitch, x is vertical -> fallback to z gives the same forward.
    _, Rx = spatial_frame([0, 0, 0], rot90, forward_axis="x")
    assert np.allclose(Rx[:, 0], Rz[:, 0])
    assert np.linalg.det(Rx) == pytest.approx(1.0)
    with pytest.raises(InvalidSupportError):
        spatial_frame([0, 0, 0], rot, forward_axis="y")


def _rot_y(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _rot_z(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def test_crawl_heading_follows_the_spine_on_all_fours():
    from atlas_crawl_kinematics.support import crawl_heading_rad
    # crawl posture: pelvis pitched forward 1.25 rad about y, then yawed by 0.7 rad
    for yaw in (0.7, -2.5, 3.0):
        for pitch in (1.0, 1.25, 1.57, 1.9):
            rot = _rot_z(yaw) @ _rot_y(pitch)
            assert np.isclose(np.angle(np.exp(1j * (crawl_heading_rad(rot) - yaw))), 0.0, atol=1e-9)
    # standing upright: the z axis is vertical, the x axis gives the heading
    assert np.isclose(crawl_heading_rad(_rot_z(0.3)), 0.3)
    with pytest.raises(InvalidSupportError):
        crawl_heading_rad(np.full((3, 3), np.nan))


def test_unordered_points_are_refused_not_misread():
    # raw contacts in an arbitrary order: positive signed area, but a reflex vertex at (0.5, 0.2)
    square_bowtie = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.5, 0.2], [0.0, 1.0]])
    with pytest.raises(InvalidSupportError):
        stability_margin([0.5, 0.5], square_bowtie)
    assert stability_margin([0.5, 0.5], support_polygon(square_bowtie)) == pytest.approx(0.5)
