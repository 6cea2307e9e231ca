"""atlas_crawl_kinematics — pure numpy/scipy kinematics core of atlas_crawl (no ROS imports).

Modules: ``support`` (support polygon, stability margin, spatial frame), ``model`` (URDF robot model, FK, Jacobians,
CoM), ``pinv`` (weighted regularised pseudo-inverse, thesis Eq. 4.10), ``iik`` (iterative IK, thesis Algorithm 2).
"""

from .support import InvalidSupportError, point_in_polygon, spatial_frame, stability_margin, support_polygon

__all__ = [
    "InvalidSupportError",
    "point_in_polygon",
    "spatial_frame",
    "stability_margin",
    "support_polygon",
]
