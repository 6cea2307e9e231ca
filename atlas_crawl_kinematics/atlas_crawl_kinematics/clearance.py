"""Ground clearance of each limb from its collision primitives (forward kinematics, no simulator).

A limb (thesis §4.1: wrists and knees) touches a flat ground when the lowest point of any collision primitive of its
links is at the ground height. For a primitive with world rotation ``R`` and centre ``c``, the lowest point's height:

* sphere of radius ``r``:                        ``c_z − r``
* box of half extents ``h``:                      ``c_z − Σ_i |R_zi| h_i``
* cylinder (axis ``a = R e_z``), radius ``r``, half length ``L``: ``c_z − |a_z| L − r √(1 − a_z²)``

``clearance = min over the limb's primitives − ground_z``: 0 in contact (slightly < 0 with penetration), > 0 in the air.
This is the "contact height" signal of contact-model fusion (Bledt et al. 2018) computed on the real geometry instead
of one contact point: a point on the shin says little about where the shin touches the floor.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .model import Kinematics, RobotModel
from .urdf import UrdfError, _origin

__all__ = ["Primitive", "LimbClearance", "parse_collisions"]

_KINDS = ("sphere", "box", "cylinder")


@dataclass(frozen=True)
class Primitive:
    link: str
    kind: str                     # sphere | box | cylinder
    origin: NDArray[np.float64]   # 4x4 link <- primitive
    size: NDArray[np.float64]     # sphere (r,), box half extents (3,), cylinder (r, half length)


def parse_collisions(urdf: str, links: Sequence[str]) -> list[Primitive]:
    """The sphere/box/cylinder collision primitives of ``links`` (other geometry types raise UrdfError)."""
    try:
        root = ET.fromstring(urdf)
    except ET.ParseError as exc:
        raise UrdfError(f"URDF is not valid XML: {exc}") from exc
    wanted = set(links)
    out: list[Primitive] = []
    for le in root.findall("link"):
        name = le.get("name")
        if name not in wanted:
            continue
        for ce in le.findall("collision"):
            ge = ce.find("geometry")
            shape = next(iter(ge), None) if ge is not None else None
            if shape is None or shape.tag not in _KINDS:
                raise UrdfError(f"link {name!r}: collision geometry {getattr(shape, 'tag', None)!r} not supported "
                                f"(sphere, box, cylinder)")
            if shape.tag == "sphere":
                size = np.array([float(shape.get("radius"))])
            elif shape.tag == "box":
                size = 0.5 * np.array([float(v) for v in shape.get("size").split()])
            else:
                size = np.array([float(shape.get("radius")), 0.5 * float(shape.get("length"))])
            if not np.all(np.isfinite(size)) or np.any(size <= 0):
                raise UrdfError(f"link {name!r}: collision {shape.tag} with a non-positive size {size}")
            out.append(Primitive(name, shape.tag, _origin(ce.find("origin")), size))
    missing = wanted - {p.link for p in out}
    if missing:
        raise UrdfError(f"no collision primitives for link(s) {sorted(missing)}")
    return out


class LimbClearance:
    """Height above a flat ground of each limb's lowest collision point, from FK and the base pose."""

    def __init__(self, model: RobotModel, urdf: str, limb_links: Sequence[Sequence[str]]):
        self.n_limbs = len(limb_links)
        prims, frame, limb = [], [], []
        for li, links in enumerate(limb_links):
            for p in parse_collisions(urdf, links):
                prims.append(p)
                frame.append(model.frame_index(p.link))
                limb.append(li)
        self.primitives = prims
        self._frame = np.array(frame)
        self._limb = np.array(limb)
        self._origin = np.stack([p.origin for p in prims])

    def lowest_points(self, kin: Kinematics, base_rot: ArrayLike, base_pos: ArrayLike) -> NDArray[np.float64]:
        """(n_primitives, 3) world lowest point of every primitive."""
        Rb = np.asarray(base_rot, dtype=float).reshape(3, 3)
        pb = np.asarray(base_pos, dtype=float).reshape(3)
        T = kin.T[self._frame] @ self._origin                 # pelvis <- primitive
        R = Rb @ T[:, :3, :3]                                   # world rotation of each primitive
        c = T[:, :3, 3] @ Rb.T + pb                             # world centre
        out = np.empty_like(c)
        for k, p in enumerate(self.primitives):
            Rk = R[k]
            if p.kind == "sphere":
                out[k] = c[k] - np.array([0.0, 0.0, p.size[0]])
            elif p.kind == "box":
                s = np.sign(Rk[2])                              # each axis pointed downwards
                out[k] = c[k] - Rk @ (s * p.size)
            else:
                a = Rk[:, 2]
                r, half = p.size
                down = np.array([0.0, 0.0, -1.0])
                radial = down - a * (a @ down)                  # the downward direction normal to the axis
                n = np.linalg.norm(radial)
                out[k] = c[k] - np.sign(a[2]) * half * a + (r * radial / n if n > 1e-12 else 0.0)
        return out

    def clearance(self, kin: Kinematics, base_rot: ArrayLike, base_pos: ArrayLike,
                  ground_z: float = 0.0) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """((n_limbs,) clearance [m] above ``ground_z``, (n_limbs, 3) each limb's lowest world point)."""
        pts = self.lowest_points(kin, base_rot, base_pos)
        clear = np.full(self.n_limbs, np.inf)
        low = np.full((self.n_limbs, 3), np.nan)
        for k, li in enumerate(self._limb):
            if pts[k, 2] - ground_z < clear[li]:
                clear[li] = pts[k, 2] - ground_z
                low[li] = pts[k]
        return clear, low
