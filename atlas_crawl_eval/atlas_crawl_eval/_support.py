"""Support-polygon helpers, from ``atlas_crawl_kinematics.support`` (the team's single implementation).

API used here (see atlas_crawl_kinematics/test/test_support.py):
  support_polygon(points_xy) -> (k, 2) CCW convex hull (k = 1 point, 2 segment, >= 3 polygon)
  stability_margin(point_xy, polygon) -> signed distance to the nearest edge, positive inside
  spatial_frame(origin, rot, forward_axis) -> (origin, R): z up, x = horizontal projection of the forward axis

(The temporary scipy-ConvexHull shim used before the kinematics package landed was removed in favour of it.)
"""

from atlas_crawl_kinematics.support import spatial_frame, stability_margin, support_polygon  # noqa: F401

USING_SHIM = False
