"""Support-polygon helpers: ``atlas_crawl_kinematics.support`` when it is importable, else a local SHIM.

API (contract with the kinematics package, see atlas_crawl_kinematics/test/test_support.py):
  support_polygon(points_xy) -> (k, 2) CCW convex hull (k = 1 point, 2 segment, >= 3 polygon)
  stability_margin(point_xy, polygon) -> signed distance to the nearest edge, positive inside
  spatial_frame(origin, rot, forward_axis) -> (origin, R): z up, x = horizontal projection of the forward axis

``USING_SHIM`` tells which one is in use; the report prints it in its provenance line.
"""

from __future__ import annotations

import numpy as np

try:  # the real one
    from atlas_crawl_kinematics.support import spatial_frame, stability_margin, support_polygon  # noqa: F401

    USING_SHIM = False
except Exception:  # pragma: no cover - exercised only while the kinematics package has not landed
    # ------------------------------------------------------------------------------------------------ SHIM
    # TEMPORARY SHIM (scipy ConvexHull). Delete once atlas_crawl_kinematics.support is installed everywhere.
    from scipy.spatial import ConvexHull, QhullError

    USING_SHIM = True

    def support_polygon(points_xy):
        p = np.asarray(points_xy, dtype=float)
        if p.ndim != 2 or p.shape[0] == 0 or p.shape[1] not in (2, 3):
            raise ValueError(f"support_polygon: need (n, 2|3) points, got {p.shape}")
        p = p[:, :2]
        if not np.all(np.isfinite(p)):
            raise ValueError("support_polygon: non-finite points")
        u = np.unique(np.round(p, 12), axis=0)
        if u.shape[0] == 1:
            return u
        if u.shape[0] >= 3:
            try:
                h = ConvexHull(u)
                return u[h.vertices]  # scipy returns 2-D hull vertices counter-clockwise
            except QhullError:
                pass
        # collinear: the two extreme points along the principal direction
        d = u - u.mean(axis=0)
        _, _, vt = np.linalg.svd(d, full_matrices=False)
        s = d @ vt[0]
        return np.array([u[np.argmin(s)], u[np.argmax(s)]])

    def _seg_dist(p, a, b):
        ab = b - a
        den = float(ab @ ab)
        t = 0.0 if den == 0 else float(np.clip((p - a) @ ab / den, 0.0, 1.0))
        return float(np.linalg.norm(p - (a + t * ab)))

    def stability_margin(point_xy, polygon):
        p = np.asarray(point_xy, dtype=float)[:2]
        poly = np.asarray(polygon, dtype=float)[:, :2]
        if not np.all(np.isfinite(p)) or not np.all(np.isfinite(poly)):
            raise ValueError("stability_margin: non-finite input")
        k = poly.shape[0]
        if k == 1:
            return -float(np.linalg.norm(p - poly[0]))
        if k == 2:
            return -_seg_dist(p, poly[0], poly[1])
        b = np.roll(poly, -1, axis=0)
        dist = min(_seg_dist(p, poly[i], b[i]) for i in range(k))
        cross = (b[:, 0] - poly[:, 0]) * (p[1] - poly[:, 1]) - (b[:, 1] - poly[:, 1]) * (p[0] - poly[:, 0])
        return dist if np.all(cross >= 0) else -dist

    def spatial_frame(origin, rot, forward_axis="z"):
        rot = np.asarray(rot, dtype=float)
        ax = {"x": 0, "z": 2}[forward_axis]
        f = rot[:, ax].copy()
        f[2] = 0.0
        if np.linalg.norm(f) < 1e-6:
            f = rot[:, 2 - ax].copy()
            f[2] = 0.0
        f /= np.linalg.norm(f)
        z = np.array([0.0, 0.0, 1.0])
        return np.asarray(origin, dtype=float), np.column_stack([f, np.cross(z, f), z])
    # -------------------------------------------------------------------------------------------- END SHIM
