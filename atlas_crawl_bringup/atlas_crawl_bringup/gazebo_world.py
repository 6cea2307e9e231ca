"""Gazebo worlds from the terrain scenes (issue 13 §1): one SDF world per scene spec.

The geometry is not described twice. :func:`scene_world` builds the MuJoCo model of the scene
(``atlas_crawl_mujoco.scenes``: the same spec strings, files and checks) and writes every static geom of it into an
SDF 1.9 world, with the physics the Gazebo launch always used (DART, 1 ms). So ``gazebo.launch.py
scene:=slope:angle_deg=5`` and ``mujoco_sim physics.scene:=slope:angle_deg=5`` stand on the same ground.

* plane, box, sphere, capsule, cylinder, ellipsoid: the SDF shape of the same size and pose;
* a height field (``rough``, a user's height-map PNG): an SDF ``<heightmap>``, resampled to the 2^n + 1 square
  Gazebo needs, stretched over the full grey range (DART scales the grey levels by the image's own maximum) and
  written as a PNG beside the world; its lowest level sits at the collision pose (Gazebo's physics ignores
  ``<pos>``);
* ground friction: ``<mu>``/``<mu2>`` of the geom's sliding friction. DART takes the smaller of the two surfaces'
  values, MuJoCo (with the ground's priority) the ground's: the two agree while the robot's ``gz_mu`` is at least the
  ground's;
* a ``ceiling`` geom (tunnel) is written like any other; it is the robot's problem not to touch it.

A mesh geom (a user's MJCF fragment with meshes) is refused with the reason: it is not exported.
"""
from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import mujoco
import numpy as np
from atlas_crawl_kinematics.rotations import quat_wxyz_to_rpy
from atlas_crawl_mujoco.model import build_model
from atlas_crawl_mujoco.scenes import scene_label, spawn_frame

__all__ = ["GazeboWorld", "scene_world", "heightmap_samples"]

PHYSICS_STEP_S = 0.001      #: as the MuJoCo model (DESIGN §8)
INFINITE_PLANE_M = 100.0    #: SDF planes need a size; MuJoCo's 0 (infinite) becomes this
_T = mujoco.mjtGeom


@dataclass
class GazeboWorld:
    """A written world: its file, the scene's label and the ground under the start pose (as
    :func:`atlas_crawl_mujoco.scenes.spawn_frame`)."""
    path: str
    label: str
    spawn_z_m: float
    spawn_quat_wxyz: tuple


def _fmt(v) -> str:
    return " ".join(f"{float(x):.9g}" for x in np.ravel(v))


def _pose(pos, xmat) -> str:
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.asarray(xmat, dtype=float).ravel())
    return _fmt(np.r_[pos, quat_wxyz_to_rpy(q)])


def heightmap_samples(h01: np.ndarray, n: int | None = None) -> np.ndarray:
    """Height samples (nrow × ncol, MuJoCo order: row 0 at -y) bilinearly resampled to an n × n grid, n = 2^k + 1
    (the smallest one not coarser than the input unless given)."""
    from scipy.interpolate import RegularGridInterpolator
    h = np.asarray(h01, dtype=float)
    if n is None:
        n = 2 ** int(math.ceil(math.log2(max(max(h.shape) - 1, 1)))) + 1
    f = RegularGridInterpolator((np.linspace(0, 1, h.shape[0]), np.linspace(0, 1, h.shape[1])), h)
    u = np.linspace(0, 1, n)
    return f(np.stack(np.meshgrid(u, u, indexing="ij"), axis=-1))


def _heightmap(m, g: int, out_dir: str, stem: str) -> tuple[ET.Element, float]:
    """(<heightmap> of the height-field geom g, z of its lowest sample above the geom origin). Gazebo's physics places
    a heightmap by its collision's pose only (gz-sim Physics ignores ``<pos>``, which only rendering adds) with the
    lowest grey level at the pose's z, so the offset goes into the pose and ``<pos>`` stays 0."""
    from PIL import Image
    hid = m.geom_dataid[g]
    nrow, ncol = m.hfield_nrow[hid], m.hfield_ncol[hid]
    adr = m.hfield_adr[hid]
    h = heightmap_samples(m.hfield_data[adr:adr + nrow * ncol].reshape(nrow, ncol))
    lo, hi = float(h.min()), float(h.max())
    rx, ry, rz, _base = m.hfield_size[hid]
    img = np.round(255.0 * (h - lo) / (hi - lo)) if hi > lo else np.zeros_like(h)
    fname = f"{stem}_heightmap_{g}.png"
    Image.fromarray(np.flipud(img).astype(np.uint8), mode="L").save(os.path.join(out_dir, fname))  # row 0 = +y
    hm = ET.Element("heightmap")
    ET.SubElement(hm, "uri").text = fname
    ET.SubElement(hm, "size").text = _fmt([2 * rx, 2 * ry, max((hi - lo) * rz, 1e-4)])
    ET.SubElement(hm, "pos").text = "0 0 0"
    return hm, lo * rz


def _shape(m, g: int, out_dir: str, stem: str) -> tuple[ET.Element, float]:
    """(<geometry> of geom g, offset [m] along the geom's z axis to add to its pose)."""
    t, s = m.geom_type[g], m.geom_size[g]
    geo = ET.Element("geometry")
    if t == _T.mjGEOM_PLANE:
        pl = ET.SubElement(geo, "plane")
        ET.SubElement(pl, "normal").text = "0 0 1"
        ET.SubElement(pl, "size").text = _fmt([2 * s[0] if s[0] > 0 else INFINITE_PLANE_M,
                                               2 * s[1] if s[1] > 0 else INFINITE_PLANE_M])
    elif t == _T.mjGEOM_BOX:
        ET.SubElement(ET.SubElement(geo, "box"), "size").text = _fmt(2 * s)
    elif t == _T.mjGEOM_SPHERE:
        ET.SubElement(ET.SubElement(geo, "sphere"), "radius").text = _fmt(s[0])
    elif t in (_T.mjGEOM_CAPSULE, _T.mjGEOM_CYLINDER):
        e = ET.SubElement(geo, "capsule" if t == _T.mjGEOM_CAPSULE else "cylinder")
        ET.SubElement(e, "radius").text = _fmt(s[0])
        ET.SubElement(e, "length").text = _fmt(2 * s[1])
    elif t == _T.mjGEOM_ELLIPSOID:
        ET.SubElement(ET.SubElement(geo, "ellipsoid"), "radii").text = _fmt(s)
    elif t == _T.mjGEOM_HFIELD:
        hm, dz = _heightmap(m, g, out_dir, stem)
        geo.append(hm)
        return geo, dz
    else:
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) or f"#{g}"
        raise ValueError(f"gazebo world: scene geom {name!r} of type {_T(t).name} cannot be exported to SDF "
                         f"(planes, boxes, spheres, capsules, cylinders, ellipsoids and height fields can)")
    return geo, 0.0


def _surface(mu: float) -> ET.Element:
    sf = ET.Element("surface")
    ode = ET.SubElement(ET.SubElement(sf, "friction"), "ode")
    ET.SubElement(ode, "mu").text = _fmt(mu)
    ET.SubElement(ode, "mu2").text = _fmt(mu)
    c = ET.SubElement(ET.SubElement(sf, "contact"), "ode")
    for k, v in (("kp", 1e6), ("kd", 100.0), ("max_vel", 0.0), ("min_depth", 0.001)):
        ET.SubElement(c, k).text = _fmt(v)
    return sf


def world_element(m: mujoco.MjModel, out_dir: str, stem: str) -> ET.Element:
    """The <sdf> element of the static geoms of ``m`` (module doc). Height-map images are written to ``out_dir``."""
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    sdf = ET.Element("sdf", version="1.9")
    w = ET.SubElement(sdf, "world", name="crawl")
    ph = ET.SubElement(w, "physics", name="1ms", type="dart")
    for k, v in (("max_step_size", PHYSICS_STEP_S), ("real_time_factor", 1.0), ("real_time_update_rate", 1000)):
        ET.SubElement(ph, k).text = _fmt(v)
    ET.SubElement(w, "gravity").text = _fmt(m.opt.gravity)
    for f, n in (("physics", "Physics"), ("user-commands", "UserCommands"), ("scene-broadcaster", "SceneBroadcaster"),
                 ("imu", "Imu"), ("contact", "Contact")):
        ET.SubElement(w, "plugin", filename=f"gz-sim-{f}-system", name=f"gz::sim::systems::{n}")
    light = ET.SubElement(w, "light", type="directional", name="sun")
    for k, v in (("cast_shadows", "true"), ("pose", "0 0 10 0 0 0"), ("diffuse", "0.8 0.8 0.8 1"),
                 ("specular", "0.2 0.2 0.2 1"), ("direction", "-0.5 0.1 -0.9")):
        ET.SubElement(light, k).text = v
    model = ET.SubElement(w, "model", name="scene")
    ET.SubElement(model, "static").text = "true"
    link = ET.SubElement(model, "link", name="ground")
    static = np.flatnonzero(m.body_weldid[m.geom_bodyid] == 0)
    for g in static:
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) or f"geom{g}"
        geo, dz = _shape(m, g, out_dir, stem)
        xmat = d.geom_xmat[g].reshape(3, 3)
        pos = d.geom_xpos[g] + dz * xmat[:, 2]
        for tag in ("collision", "visual"):
            e = ET.SubElement(link, tag, name=f"{name}_{tag}")
            ET.SubElement(e, "pose").text = _pose(pos, xmat)
            e.append(geo)
            if tag == "collision":
                e.append(_surface(m.geom_friction[g, 0]))
            else:
                mat = ET.SubElement(e, "material")
                ET.SubElement(mat, "ambient").text = _fmt(m.geom_rgba[g])
                ET.SubElement(mat, "diffuse").text = _fmt(m.geom_rgba[g])
    return sdf


def scene_world(scene: str = "flat", out_dir: str | None = None, stem: str | None = None) -> GazeboWorld:
    """Write the SDF world of ``scene`` (an ``atlas_crawl_mujoco.scenes`` spec string) into ``out_dir`` (a new
    temporary folder if None) as ``<stem>.sdf``. Raises ValueError with the reason on a bad scene (before writing)."""
    import tempfile
    m = build_model({"scene": scene})
    if out_dir is None:
        out_dir = tempfile.mkdtemp(prefix="atlas_crawl_world_")
    os.makedirs(out_dir, exist_ok=True)
    label = scene_label(m)
    stem = stem or "".join(c if c.isalnum() or c in "-_" else "_" for c in label)
    root = world_element(m, out_dir, stem)
    ET.indent(root, space="  ")
    path = os.path.join(out_dir, stem + ".sdf")
    with open(path, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0"?>\n'
                f"<!-- atlas_crawl Gazebo world of scene '{label}', written by atlas_crawl_bringup.gazebo_world "
                f"from the MuJoCo scene (atlas_crawl_mujoco/config/scenes). Do not edit: regenerate. -->\n")
        f.write(ET.tostring(root, encoding="unicode"))
        f.write("\n")
    z, q = spawn_frame(m)
    return GazeboWorld(path, label, z, tuple(float(v) for v in q))


def main(argv=None) -> int:
    """``python -m atlas_crawl_bringup.gazebo_world SCENE [--out DIR]``: write a scene's world for ``gz sim``."""
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scene", help="scene spec, e.g. flat, 'slope:angle_deg=5', rough:seed=3, my_scene.yaml")
    ap.add_argument("--out", default=".", help="folder for the .sdf (and a height field's .png)")
    a = ap.parse_args(argv)
    try:
        w = scene_world(a.scene, a.out)
    except ValueError as e:
        print(f"error: {e}")
        return 2
    print(f"{w.path}  (scene {w.label}; start on ground z={w.spawn_z_m:.3f} m)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
