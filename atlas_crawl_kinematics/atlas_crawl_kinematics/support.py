"""Support polygon, static stability margin and the spatial frame (thesis §2.2.2, §2.3, §4.3.1).

All functions are pure numpy/scipy and take horizontal (x, y) coordinates expressed in one common frame — normally
the *spatial* frame of :func:`spatial_frame` (origin at the pelvis, z along gravity) or the world frame; the margin
is invariant to the choice as long as the CoM and contacts are in the same horizontal frame.

Conventions
-----------
* :func:`support_polygon` returns the convex hull of the stance contact points, counter-clockwise (CCW), without the
  closing repeat of the first vertex.  Degenerate supports are returned as they are: 1 vertex (single contact),
  2 vertices (a segment: two contacts or collinear contacts — the segment's two extreme points).
* :func:`stability_margin` is the signed distance from the point to the polygon boundary: ``> 0`` inside (distance
  to the nearest edge), ``< 0`` outside (minus the Euclidean distance to the polygon).  For a degenerate polygon
  (point or segment) the point can never be strictly inside, so the margin is ``-distance`` to the point/segment
  (``0`` exactly on it).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial import ConvexHull, QhullError

__all__ = [
    "InvalidSupportError",
    "support_polygon",
    "stability_margin",
    "nearest_on_segment",
    "point_in_polygon",
    "spatial_frame",
]

_COLLINEAR_TOL = 1e-9


class InvalidSupportError(ValueError):
    """Raised for empty, non-finite or wrongly shaped support inputs."""


def _as_points(points_xy: ArrayLike, name: str) -> NDArray[np.float64]:
    p = np.asarray(points_xy, dtype=float)
    if p.ndim == 1 and p.shape[0] == 2:
        p = p[None, :]
    if p.ndim != 2 or p.shape[1] < 2:
        raise InvalidSupportError(f"{name} must have shape (n, 2) (extra columns, e.g. z, are ignored); got {p.shape}")
    p = p[:, :2]
    if p.shape[0] == 0:
        raise InvalidSupportError(f"{name} is empty: a support polygon needs at least one contact")
    if not np.all(np.isfinite(p)):
        raise InvalidSupportError(f"{name} contains NaN/inf: {p!r}")
    return p


def support_polygon(points_xy: ArrayLike) -> NDArray[np.float64]:
    """Convex hull of the contact points, CCW, shape (k, 2) with k in {1, 2, 3, ...}.

    Args:
        points_xy: (n, 2) horizontal contact positions (an (n, 3) array is accepted; z is dropped).

    Returns:
        Hull vertices in counter-clockwise order.  n=1 → the point; n=2 or all collinear → the two extreme points
        of the segment (1 point if all coincide).
    """
    p = _as_points(points_xy, "points_xy")
    # Remove duplicates (within tolerance) so qhull is not asked for a hull of coincident points.
    uniq = p[np.unique(np.round(p / 1e-12).astype(np.int64), axis=0, return_index=True)[1]]
    uniq = uniq[np.lexsort((uniq[:, 1], uniq[:, 0]))]
    if uniq.shape[0] == 1:
        return uniq.copy()
    centred = uniq - uniq.mean(axis=0)
    # Collinear test: the second singular value of the centred points relative to the first.
    s = np.linalg.svd(centred, compute_uv=False)
    if uniq.shape[0] == 2 or s[1] <= _COLLINEAR_TOL * max(s[0], 1.0):
        direction = np.linalg.svd(centred)[2][0]
        t = centred @ direction
        return np.stack([uniq[np.argmin(t)], uniq[np.argmax(t)]])
    try:
        hull = ConvexHull(uniq)
    except QhullError:  # pragma: no cover - guarded by the collinearity test above
        direction = np.linalg.svd(centred)[2][0]
        t = centred @ direction
        return np.stack([uniq[np.argmin(t)], uniq[np.argmax(t)]])
    # For 2-D input, scipy returns hull.vertices in counter-clockwise order.
    return uniq[hull.vertices].copy()


def nearest_on_segment(p: ArrayLike, a: ArrayLike, b: ArrayLike) -> NDArray:
    """The point of the segment ``a``–``b`` (x, y) nearest ``p`` (``a`` if the segment is a point)."""
    p, a, b = (np.asarray(v, float)[:2] for v in (p, a, b))
    ab = b - a
    denom = float(ab @ ab)
    t = 0.0 if denom == 0.0 else float(np.clip((p - a) @ ab / denom, 0.0, 1.0))
    return a + t * ab


def _point_segment_distance(p: NDArray, a: NDArray, b: NDArray) -> float:
    return float(np.linalg.norm(np.asarray(p, float)[:2] - nearest_on_segment(p, a, b)))


def stability_margin(point_xy: ArrayLike, polygon_xy: ArrayLike) -> float:
    """Signed distance of ``point_xy`` to the boundary of a convex CCW polygon (thesis §2.3: static stability).

    ``m = min_i n_i · (v_i − p)`` over the edges when ``p`` is inside (positive: distance to the nearest edge, where
    ``n_i`` is the inward unit normal of edge ``v_i → v_{i+1}``), and ``m = −dist(p, polygon)`` outside.

    Args:
        point_xy: (2,) horizontal point (usually the CoM projection); a (3,) point is accepted (z dropped).
        polygon_xy: (k, 2) CCW convex polygon as returned by :func:`support_polygon` (k=1 point, k=2 segment).

    Returns:
        The signed margin in metres (positive = statically stable).
    """
    p = np.asarray(point_xy, dtype=float).reshape(-1)
    if p.shape[0] < 2 or not np.all(np.isfinite(p[:2])):
        raise InvalidSupportError(f"point_xy must be a finite 2-vector; got {point_xy!r}")
    p = p[:2]
    poly = _as_points(polygon_xy, "polygon_xy")
    k = poly.shape[0]
    if k == 1:
        return -float(np.linalg.norm(p - poly[0]))
    if k == 2:
        return -_point_segment_distance(p, poly[0], poly[1])
    a = poly
    b = np.roll(poly, -1, axis=0)
    e = b - a
    lengths = np.linalg.norm(e, axis=1)
    if np.any(lengths <= 0.0):
        raise InvalidSupportError("polygon_xy has repeated consecutive vertices")
    # Signed area must be positive for a CCW polygon.
    area2 = float(np.sum(a[:, 0] * b[:, 1] - b[:, 0] * a[:, 1]))
    if area2 <= 0.0:
        raise InvalidSupportError("polygon_xy must be counter-clockwise with non-zero area (use support_polygon)")
    # Convex: every turn e_i -> e_{i+1} is a left turn (an unordered point set can have positive area).
    turns = e[:, 0] * np.roll(e, -1, axis=0)[:, 1] - e[:, 1] * np.roll(e, -1, axis=0)[:, 0]
    if np.any(turns < -1e-12 * float(lengths.max()) ** 2):
        raise InvalidSupportError("polygon_xy must be a convex CCW polygon (use support_polygon on raw points)")
    # Inward normal of a CCW edge (ex, ey) is (-ey, ex).
    n_in = np.stack([-e[:, 1], e[:, 0]], axis=1) / lengths[:, None]
    d = np.einsum("ij,ij->i", p[None, :] - a, n_in)  # signed distance to each edge line, + inside
    if np.all(d >= 0.0):
        return float(d.min())
    return -min(_point_segment_distance(p, a[i], b[i]) for i in range(k))


def point_in_polygon(point_xy: ArrayLike, polygon_xy: ArrayLike, margin: float = 0.0) -> bool:
    """True when :func:`stability_margin` is at least ``margin`` (metres)."""
    return stability_margin(point_xy, polygon_xy) >= margin


def spatial_frame(
    pelvis_pos: ArrayLike,
    pelvis_rot: ArrayLike,
    forward_axis: Literal["x", "z"] = "x",
    gravity_up: ArrayLike = (0.0, 0.0, 1.0),
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The spatial frame of thesis §2.2.2: origin at the pelvis, z opposite to gravity, x = horizontal forward.

    The forward direction is the horizontal projection of a pelvis axis, selectable because it depends on posture:

    * ``forward_axis="x"`` (default, REP 103): the pelvis x axis.  For Atlas the pelvis x axis points forward out of
      the belly when standing; when the robot is on all fours with the torso pitched ~90° forward (pelvis pitch
      ≈ +1.25…1.57 rad about y), pelvis x points down-forward and its horizontal projection is still the walking
      direction (its projection shrinks to zero only at exactly 90° pitch).
    * ``forward_axis="z"``: the pelvis z axis — the thesis' choice "when crawling": the pelvis z axis runs along
      the spine, i.e. it points horizontally forward when the torso is horizontal on all fours, which is the
      robust choice near 90° pitch.  (When standing upright it is vertical and has no horizontal projection.)

    If the chosen axis is within ~1e-6 of vertical, the other one of (x, z) is used (with the sign that points
    forward in a crawl: for "x" fallback to +z, for "z" fallback to +x) so the result is always defined.

    Args:
        pelvis_pos: (3,) pelvis origin in the world frame.
        pelvis_rot: (3, 3) rotation matrix world←pelvis (columns = pelvis axes in world coordinates).
        forward_axis: which pelvis axis defines "forward" (see above).
        gravity_up: unit vector opposite to gravity in world coordinates (default +z).

    Returns:
        ``(origin, R)`` with ``origin`` = pelvis_pos (3,) and ``R`` (3, 3) world←spatial (columns x_s, y_s, z_s);
        a world point ``w`` has spatial coordinates ``R.T @ (w - origin)``.
    """
    o = np.asarray(pelvis_pos, dtype=float).reshape(3)
    rot = np.asarray(pelvis_rot, dtype=float).reshape(3, 3)
    up = np.asarray(gravity_up, dtype=float).reshape(3)
    if not (np.all(np.isfinite(o)) and np.all(np.isfinite(rot)) and np.all(np.isfinite(up))):
        raise InvalidSupportError("spatial_frame inputs must be finite")
    if forward_axis not in ("x", "z"):
        raise InvalidSupportError(f"forward_axis must be 'x' or 'z', got {forward_axis!r}")
    nu = np.linalg.norm(up)
    if nu == 0.0:
        raise InvalidSupportError("gravity_up must be non-zero")
    z = up / nu
    primary, secondary = (rot[:, 0], rot[:, 2]) if forward_axis == "x" else (rot[:, 2], rot[:, 0])
    x = None
    for cand in (primary, secondary):
        h = cand - (cand @ z) * z
        nh = np.linalg.norm(h)
        if nh > 1e-6:
            x = h / nh
            break
    if x is None:  # pragma: no cover - both pelvis axes vertical is impossible for a rotation matrix
        raise InvalidSupportError("pelvis_rot is not a rotation matrix")
    y = np.cross(z, x)
    return o.copy(), np.stack([x, y, z], axis=1)


def crawl_heading_rad(pelvis_rot: ArrayLike, min_horizontal: float = 0.5) -> float:
    """Heading (yaw) of a crawling Atlas: the horizontal projection of the pelvis z axis (thesis §2.2.2/§4.1.2).

    On all fours the torso is pitched ~70-90° forward, so the pelvis z axis runs along the spine and points in the
    crawl direction, while the pelvis x axis points mostly down and its projection mixes roll into yaw.  When the
    z axis is near vertical (standing, or the horizontal part of the unit axis is below ``min_horizontal``) the
    pelvis x axis is used instead.  The project's single heading definition: the simulator, the gait runner and
    the gait sequencer call this; ``atlas_crawl_eval`` applies the same rule ("pelvis_z") to whole logs.
    """
    rot = np.asarray(pelvis_rot, dtype=float).reshape(3, 3)
    if not np.all(np.isfinite(rot)):
        raise InvalidSupportError("crawl_heading_rad: pelvis_rot must be finite")
    if np.hypot(rot[0, 2], rot[1, 2]) > min_horizontal:
        return float(np.arctan2(rot[1, 2], rot[0, 2]))
    return float(np.arctan2(rot[1, 0], rot[0, 0]))
