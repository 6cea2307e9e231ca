"""Terrain scenes as data (issue 13 §1): parse a scene spec, check it, add it to the MjSpec of the robot.

A scene spec is a string ``NAME_OR_FILE[:key=value,key=value...]``:

- a built-in scene (a YAML file in ``config/scenes/``): ``flat``, ``slope``, ``rough``, ``steps``, ``rubble``,
  ``tunnel``, ``friction``, e.g. ``slope:angle_deg=10,direction_deg=90`` or ``rough:seed=3``;
- a user file: a scene YAML (``.yaml``/``.yml``, same format as the built-ins), an MJCF fragment (``.xml``) or a
  height-map image (``.png``, needs ``scale_m``), e.g. ``my_map.png:scale_m=0.06,size_m=6``.

Every scene also takes ``friction`` (sliding friction of its ground, wins over the robot's through geom priority).
Format and parameters: ``atlas_crawl_mujoco/config/scenes/README.md``. Everything is checked by
:func:`parse_scene` / :func:`apply_scene` (ValueError with the reason) before a model exists, so a bad scene is
refused before anything moves.

Ground geoms are static (world-welded), ``contype 0 / conaffinity 1`` like the floor, so they touch the robot only;
a static geom whose name contains ``ceiling`` is an overhead obstacle: its contacts are not ground support
(:class:`~atlas_crawl_mujoco.model.ModelMap` codes it -3). The robot's spawn frame (ground height and tilt under the
start pose) is stored in the model as the numeric ``scene_spawn`` = [z, qw, qx, qy, qz] (see :func:`spawn_frame`).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np
import yaml
from atlas_crawl_controller.parameters import config_path

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
MAX_FILE_BYTES = 20_000_000
GROUND_RGBA = (0.62, 0.55, 0.45, 1.0)

#: Highest point of the robot while crawling on flat ground, measured with ``python lab/crawl_height.py``
#: (2 cycles of each gait, seed 0): crawl_forward 0.867 m, crawl_forward_fast 0.877, crawl_backward 0.871,
#: turn_left/right 0.885 m.
ROBOT_CRAWL_TOP_M = 0.885

# kind -> {param: (type, default, lo, hi)}; default None = required
_COMMON = {"friction": (float, None, 0.1, 2.0)}
KINDS = {
    "flat": {},
    "slope": {"angle_deg": (float, 10.0, 0.0, 15.0), "direction_deg": (float, 0.0, -360.0, 360.0)},
    "rough": {"amplitude_m": (float, 0.03, 0.0, 0.05), "seed": (int, 0, 0, 2**31 - 1),
              "cell_m": (float, 0.1, 0.02, 1.0), "size_m": (float, 8.0, 2.0, 40.0)},
    "steps": {"height_m": (float, 0.10, -0.2, 0.2), "distance_m": (float, 0.8, 0.0, 10.0),
              "length_m": (float, 1.0, 0.1, 10.0), "width_m": (float, 4.0, 0.5, 20.0), "mirror": (bool, True, 0, 1)},
    "rubble": {"seed": (int, 0, 0, 2**31 - 1), "density_per_m2": (float, 6.0, 0.1, 50.0),
               "min_height_m": (float, 0.01, 0.002, 0.2), "max_height_m": (float, 0.05, 0.002, 0.2),
               "min_size_m": (float, 0.05, 0.01, 0.5), "max_size_m": (float, 0.15, 0.01, 0.5),
               "area_m": (float, 5.0, 0.5, 20.0)},
    "tunnel": {"clearance_m": (float, 0.10, -0.5, 2.0), "robot_top_m": (float, ROBOT_CRAWL_TOP_M, 0.2, 2.0),
               "length_m": (float, 6.0, 0.5, 40.0), "width_m": (float, 3.0, 0.5, 20.0),
               "thickness_m": (float, 0.05, 0.01, 1.0)},
    "heightmap": {"file": (str, None, 0, 0), "scale_m": (float, None, 0.001, 1.0),
                  "size_m": (float, 4.0, 0.2, 100.0), "base_m": (float, 0.0, -1.0, 1.0)},
    "mjcf": {"file": (str, None, 0, 0), "spawn_z_m": (float, 0.0, -1.0, 2.0)},
}
#: The built-in ``friction`` scene is ``flat`` with a friction value (see config/scenes/friction.yaml).


@dataclass
class Scene:
    """A checked scene: its kind, full parameter set and where it came from."""
    name: str
    kind: str
    params: dict = field(default_factory=dict)
    source: str = ""
    description: str = ""

    def label(self) -> str:
        """``name`` plus the parameters that differ from the kind's defaults."""
        d = KINDS[self.kind] | _COMMON
        extra = [f"{k}={v}" for k, v in sorted(self.params.items())
                 if k != "file" and v is not None and v != d[k][1]]
        return self.name + (":" + ",".join(extra) if extra else "")


def builtin_names() -> list[str]:
    """Names of the built-in scenes (config/scenes/*.yaml)."""
    d = Path(config_path("scenes", "atlas_crawl_mujoco", source_dir=_PKG_DIR))
    return sorted(p.stem for p in d.glob("*.yaml"))


def _coerce(kind: str, key: str, value, where: str):
    spec = (KINDS[kind] | _COMMON).get(key)
    if spec is None:
        raise ValueError(f"scene {where}: unknown parameter {key!r} for kind {kind!r} "
                         f"(known: {sorted(KINDS[kind] | _COMMON)})")
    typ, _d, lo, hi = spec
    try:
        if typ is bool:
            if isinstance(value, str):
                if value.lower() not in ("true", "false", "1", "0"):
                    raise ValueError
                value = value.lower() in ("true", "1")
            elif not isinstance(value, bool):
                raise ValueError
        elif typ is int:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            value = int(value)
        elif typ is float:
            if isinstance(value, bool):
                raise ValueError
            value = float(value)
        else:
            value = str(value)
    except (TypeError, ValueError):
        raise ValueError(f"scene {where}: {key}={value!r} is not of type {typ.__name__}") from None
    if typ in (int, float) and not (math.isfinite(value) and lo <= value <= hi):
        raise ValueError(f"scene {where}: {key}={value} out of bounds [{lo}, {hi}]")
    return value


def _read_checked(path: Path, what: str) -> bytes:
    if not path.is_file():
        raise ValueError(f"scene: {what} {str(path)!r} is not a readable regular file")
    n = path.stat().st_size
    if n == 0 or n > MAX_FILE_BYTES:
        raise ValueError(f"scene: {what} {str(path)!r} has {n} bytes (need 1..{MAX_FILE_BYTES})")
    return path.read_bytes()


def _load_yaml(path: Path) -> dict:
    try:
        doc = yaml.safe_load(_read_checked(path, "file").decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise ValueError(f"scene file {str(path)!r}: not valid UTF-8 YAML: {e}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"scene file {str(path)!r}: top level must be a mapping with 'kind'")
    unknown = set(doc) - {"kind", "description", "params"}
    if unknown:
        raise ValueError(f"scene file {str(path)!r}: unknown keys {sorted(unknown)} (allowed: kind, description, "
                         f"params)")
    if doc.get("kind") not in KINDS:
        raise ValueError(f"scene file {str(path)!r}: kind {doc.get('kind')!r} is not one of {sorted(KINDS)}")
    if not isinstance(doc.get("params", {}) or {}, dict):
        raise ValueError(f"scene file {str(path)!r}: params must be a mapping")
    return doc


def parse_scene(text: str) -> Scene:
    """Scene from a spec string (module doc). Raises ValueError with the reason on anything malformed."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("scene: empty scene spec (give e.g. 'flat', 'slope:angle_deg=10' or a file)")
    text = text.strip()
    head, _, tail = text.partition(":")
    overrides = {}
    if tail:
        for item in tail.split(","):
            k, eq, v = item.partition("=")
            if not eq or not k.strip():
                raise ValueError(f"scene {text!r}: {item!r} is not key=value")
            overrides[k.strip()] = v.strip()
    suffix = Path(head).suffix.lower()
    if suffix in (".yaml", ".yml"):
        path = Path(head).expanduser()
        doc, name, base = _load_yaml(path), path.stem, path.parent
    elif suffix in (".xml", ".png"):
        path = Path(head).expanduser()
        doc = {"kind": "mjcf" if suffix == ".xml" else "heightmap", "params": {"file": str(path)}}
        name, base = path.stem, Path(".")
    elif suffix:
        raise ValueError(f"scene {text!r}: file type {suffix!r} not supported (.yaml, .yml, .xml, .png)")
    else:
        if head not in builtin_names():
            raise ValueError(f"scene {head!r}: not a built-in scene {builtin_names()} nor a .yaml/.xml/.png file")
        path = Path(config_path(f"scenes/{head}.yaml", "atlas_crawl_mujoco", source_dir=_PKG_DIR))
        doc, name, base = _load_yaml(path), head, path.parent
    kind = doc["kind"]
    params = {}
    for k, v in (doc.get("params") or {}).items():
        params[k] = _coerce(kind, k, v, name)
    for k, v in overrides.items():
        params[k] = _coerce(kind, k, v, name)
    for k, (_t, default, _lo, _hi) in (KINDS[kind] | _COMMON).items():
        if k not in params:
            if default is None and k != "friction":
                raise ValueError(f"scene {name!r} (kind {kind}): parameter {k!r} is required")
            params[k] = default
    if "file" in params:
        f = Path(params["file"]).expanduser()
        params["file"] = str(f if f.is_absolute() else (base / f))
    if kind == "rubble":
        if params["min_height_m"] > params["max_height_m"] or params["min_size_m"] > params["max_size_m"]:
            raise ValueError(f"scene {name!r}: min_height_m/min_size_m must not exceed max_height_m/max_size_m")
    if kind == "tunnel" and params["robot_top_m"] + params["clearance_m"] < 0.3:
        raise ValueError(f"scene {name!r}: ceiling at {params['robot_top_m'] + params['clearance_m']:.2f} m is "
                         f"below 0.3 m: the robot cannot fit")
    sc = Scene(name, kind, params, str(path), str(doc.get("description", "")))
    _check_files(sc)
    return sc


def _check_files(sc: Scene) -> None:
    """Open user files now (parse/compile), so that errors surface before any model is built."""
    if sc.kind == "heightmap":
        _heightmap_png(sc)
    elif sc.kind == "mjcf":
        _mjcf_child(sc)


def _heightmap_png(sc: Scene) -> np.ndarray:
    """(nrow, ncol) heights in [0, 1] from a grey PNG (row 0 = +y edge, MuJoCo's order is row 0 = -y)."""
    import io

    from PIL import Image, UnidentifiedImageError
    data = _read_checked(Path(sc.params["file"]), "height map")
    try:
        im = Image.open(io.BytesIO(data))
        if im.format != "PNG":
            raise ValueError(f"scene {sc.name!r}: {sc.params['file']!r} is {im.format}, not a PNG")
        a = np.asarray(im.convert("I;16") if im.mode in ("I;16", "I") else im.convert("L"), dtype=float)
    except (UnidentifiedImageError, OSError) as e:
        raise ValueError(f"scene {sc.name!r}: {sc.params['file']!r} is not a readable image: {e}") from None
    if a.ndim != 2 or min(a.shape) < 2 or max(a.shape) > 4096:
        raise ValueError(f"scene {sc.name!r}: height map must be 2..4096 pixels a side, got {a.shape}")
    top = 65535.0 if a.max() > 255 else 255.0
    return np.flipud(a / top)


def _mjcf_child(sc: Scene) -> mujoco.MjSpec:
    """The user's MJCF fragment as a spec, checked to be static scenery (no joints, actuators, cameras ...)."""
    path = Path(sc.params["file"])
    text = _read_checked(path, "MJCF fragment").decode("utf-8", errors="strict")
    try:
        child = mujoco.MjSpec.from_string(text)
        if path.parent != Path(""):
            child.meshdir = child.meshdir or str(path.parent)
            child.texturedir = child.texturedir or str(path.parent)
        m = child.compile()
    except ValueError as e:
        raise ValueError(f"scene {sc.name!r}: MJCF fragment {str(path)!r} does not load: {e}") from None
    if m.nq or m.nv or m.nu or m.neq or m.ntendon:
        raise ValueError(f"scene {sc.name!r}: MJCF fragment must be static scenery: it has {m.nq} joint coords, "
                         f"{m.nu} actuators, {m.neq} equalities, {m.ntendon} tendons")
    if m.ngeom == 0:
        raise ValueError(f"scene {sc.name!r}: MJCF fragment {str(path)!r} has no geom")
    return child


def _rot_quat(axis, angle: float) -> np.ndarray:
    q = np.zeros(4)
    a = np.asarray(axis, dtype=float)
    mujoco.mju_axisAngle2Quat(q, a / np.linalg.norm(a), angle)
    return q


def _ground(g, friction, rgba=GROUND_RGBA):
    g.contype, g.conaffinity = 0, 1
    g.rgba = list(rgba)
    g.condim = friction[1]
    g.friction = list(friction[0])


def apply_scene(spec: mujoco.MjSpec, scene) -> Scene:
    """Add ``scene`` (a :class:`Scene` or a spec string; None/"" = flat) to ``spec``, which must hold a ``floor``
    geom. Returns the checked Scene. Raises ValueError with the reason on a bad scene."""
    sc = scene if isinstance(scene, Scene) else parse_scene(scene or "flat")
    p = sc.params
    floor = spec.geom("floor")
    if floor is None:
        raise ValueError("apply_scene: the spec has no 'floor' geom")
    fr = ([p["friction"] if p["friction"] is not None else floor.friction[0], floor.friction[1], floor.friction[2]],
          floor.condim)
    added = [floor]
    spawn_z, spawn_q = 0.0, np.array([1.0, 0.0, 0.0, 0.0])
    wb = spec.worldbody
    if sc.kind == "slope":
        th, ph = math.radians(p["angle_deg"]), math.radians(p["direction_deg"])
        # surface rises along (cos ph, sin ph): rotate z by -th about z x u
        if th > 0:
            spawn_q = _rot_quat((-math.sin(ph), math.cos(ph), 0.0), -th)
            floor.quat = list(spawn_q)
    elif sc.kind in ("rough", "heightmap"):
        if sc.kind == "rough":
            h01, size, lo, hi = _rough_heights(p), p["size_m"] / 2, -p["amplitude_m"], p["amplitude_m"]
        else:
            h01, size, lo = _heightmap_png(sc), p["size_m"] / 2, p["base_m"]
            hi = lo + p["scale_m"]
        nrow, ncol = h01.shape
        spec.add_hfield(name="scene_terrain", size=[size, size, max(hi - lo, 1e-4), 0.05], nrow=nrow, ncol=ncol,
                        userdata=[float(v) for v in h01.ravel()])
        g = wb.add_geom(name="scene_terrain", type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname="scene_terrain",
                        pos=[0, 0, lo])
        _ground(g, fr)
        added.append(g)
        floor.pos = [0, 0, min(lo, 0.0) - 0.001]   # the plane stays as the ground beyond the height field
        r = int(np.ceil(1.0 / (2 * size) * (nrow - 1)))  # spawn: highest point within ~1 m of the origin
        c0, r0 = (ncol - 1) // 2, (nrow - 1) // 2
        spawn_z = lo + (hi - lo) * float(h01[max(r0 - r, 0):r0 + r + 1, max(c0 - r, 0):c0 + r + 1].max())
    elif sc.kind == "steps":
        h, x0, L, w = p["height_m"], p["distance_m"], p["length_m"], p["width_m"]
        for k, sgn in enumerate((1, -1) if p["mirror"] else (1,)):
            if h >= 0:   # a platform h high, from x0 to x0+L
                g = wb.add_geom(name=f"scene_step{k}", type=mujoco.mjtGeom.mjGEOM_BOX, size=[L / 2, w / 2, h / 2],
                                pos=[sgn * (x0 + L / 2), 0, h / 2])
            else:        # a pit |h| deep: the floor drops, boxes form the start area and the far side
                raise ValueError("scene steps: height_m < 0 is not supported yet (give a positive step)")
            _ground(g, fr)
            added.append(g)
    elif sc.kind == "rubble":
        rng = np.random.default_rng(p["seed"])
        area = p["area_m"]
        n = int(round(p["density_per_m2"] * area * area))
        for i in range(n):
            sx, sy = rng.uniform(p["min_size_m"], p["max_size_m"], 2) / 2
            hz = rng.uniform(p["min_height_m"], p["max_height_m"])
            x, y = rng.uniform(-area / 2, area / 2, 2)
            yaw = rng.uniform(0, math.pi)
            g = wb.add_geom(name=f"scene_rubble{i}", type=mujoco.mjtGeom.mjGEOM_BOX, size=[sx, sy, hz / 2],
                            pos=[x, y, hz / 2], quat=list(_rot_quat((0, 0, 1), yaw)))
            _ground(g, fr, (0.55, 0.50, 0.44, 1.0) if i % 2 else (0.45, 0.42, 0.40, 1.0))
            added.append(g)
            if math.hypot(x, y) < 1.0 + math.hypot(sx, sy):
                spawn_z = max(spawn_z, hz)
    elif sc.kind == "tunnel":
        z = p["robot_top_m"] + p["clearance_m"] + p["thickness_m"] / 2
        g = wb.add_geom(name="scene_ceiling", type=mujoco.mjtGeom.mjGEOM_BOX,
                        size=[p["length_m"] / 2, p["width_m"] / 2, p["thickness_m"] / 2], pos=[0, 0, z])
        g.contype, g.conaffinity = 0, 1
        g.rgba = [0.5, 0.5, 0.55, 0.35]
    elif sc.kind == "mjcf":
        child = _mjcf_child(sc)
        for g in child.geoms:
            g.contype, g.conaffinity = 0, 1
            if p["friction"] is not None:
                g.friction = [p["friction"], g.friction[1], g.friction[2]]
                g.priority = 1
        frame = wb.add_frame()
        spec.attach(child, prefix="scene_", frame=frame)
        spawn_z = p["spawn_z_m"]
    if p["friction"] is not None:
        for g in added:
            g.friction = [p["friction"], g.friction[1], g.friction[2]]
            g.priority = 1   # the ground's friction wins over the robot geoms' (MuJoCo takes the max otherwise)
    spec.add_numeric(name="scene_spawn", data=[float(spawn_z)] + [float(v) for v in spawn_q])
    spec.add_text(name="scene", data=sc.label())
    return sc


def _rough_heights(p: dict) -> np.ndarray:
    """Seeded smooth random heights in [0, 1] on a grid of 2 cm, features of ``cell_m``, spanning the full range."""
    n = int(round(p["size_m"] / 0.02)) + 1
    rng = np.random.default_rng(p["seed"])
    k = max(2, int(round(p["size_m"] / p["cell_m"])) + 1)
    coarse = rng.uniform(-1.0, 1.0, (k, k))
    x = np.linspace(0, k - 1, n)
    i0 = np.clip(np.floor(x).astype(int), 0, k - 2)
    t = x - i0
    t = t * t * (3 - 2 * t)   # smoothstep between coarse nodes
    rows = coarse[i0] * (1 - t)[:, None] + coarse[i0 + 1] * t[:, None]
    h = rows[:, i0] * (1 - t)[None, :] + rows[:, i0 + 1] * t[None, :]
    lo, hi = h.min(), h.max()
    return (h - lo) / (hi - lo) if hi > lo else np.full_like(h, 0.5)


def spawn_frame(model: mujoco.MjModel):
    """(ground height z under the start pose, ground tilt quaternion wxyz) of a compiled model: from the numeric
    ``scene_spawn`` if present, else (0, identity)."""
    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_NUMERIC, "scene_spawn")
    if i < 0:
        return 0.0, np.array([1.0, 0.0, 0.0, 0.0])
    a = model.numeric_adr[i]
    d = model.numeric_data[a:a + 5]
    return float(d[0]), np.array(d[1:5], dtype=float)


def scene_label(model: mujoco.MjModel) -> str:
    """The scene label stored in a compiled model ("flat" if none)."""
    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_TEXT, "scene")
    if i < 0:
        return "flat"
    a, n = model.text_adr[i], model.text_size[i]
    return bytes(model.text_data[a:a + n]).rstrip(b"\0").decode()
