"""Tests of atlas_description: the expanded URDF against the reference figures, the contact frames, the
ros2_control / simulator variants and the Python API.

The oracle is the reference URDF (OSRF drcsim atlas_simple_shapes + MultiSense SL head), parsed here with
xml.etree independently of the xacro/YAML pipeline (fixture copies in test/reference/)."""
from __future__ import annotations

import functools
import itertools
import math
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import atlas_description as ad

HERE = Path(__file__).resolve().parent
REF_DIR = HERE / "reference"
REF_BODY = REF_DIR / "atlas_v1_simple_shapes.urdf"
REF_HEAD = REF_DIR / "multisense_sl_head.urdf"
SHARED_REF = HERE.parent.parent.parent / "shared" / "reference"  # <repo>/../shared/reference

VARIANTS = list(itertools.product((False, True), ad.SIM_CHOICES))
TEAM_ORDER = (
    "back_lbz back_mby back_ubx neck_ay l_leg_uhz l_leg_mhx l_leg_lhy l_leg_kny l_leg_uay l_leg_lax "
    "r_leg_uhz r_leg_mhx r_leg_lhy r_leg_kny r_leg_uay r_leg_lax l_arm_usy l_arm_shx l_arm_ely l_arm_elx "
    "l_arm_uwy l_arm_mwx r_arm_usy r_arm_shx r_arm_ely r_arm_elx r_arm_uwy r_arm_mwx"
).split()
TOL = 1e-9


# ----------------------------------------------------------------------------------------------- helpers
@functools.lru_cache(maxsize=None)
def urdf(ros2_control: bool = False, sim: str = "none") -> str:
    return ad.urdf_string(ros2_control=ros2_control, sim=sim)


def root(ros2_control: bool = False, sim: str = "none") -> ET.Element:
    return ET.fromstring(urdf(ros2_control, sim))


def vec(s: str | None, n: int = 3) -> np.ndarray:
    return np.zeros(n) if s is None else np.array([float(x) for x in s.split()])


@functools.lru_cache(maxsize=None)
def reference_links() -> dict[str, ET.Element]:
    """Reference links: the body URDF plus the MultiSense `head` (no lidar link, no sensor frames)."""
    links = {l.get("name"): l for l in ET.parse(REF_BODY).getroot().findall("link")}
    head = [l for l in ET.parse(REF_HEAD).getroot().findall("link") if l.get("name") == "head"]
    assert len(head) == 1
    links["head"] = head[0]
    return links


@functools.lru_cache(maxsize=None)
def reference_joints() -> dict[str, ET.Element]:
    return {j.get("name"): j for j in ET.parse(REF_BODY).getroot().findall("joint")}


def links_of(r: ET.Element) -> dict[str, ET.Element]:
    return {l.get("name"): l for l in r.findall("link")}


def joints_of(r: ET.Element) -> dict[str, ET.Element]:
    return {j.get("name"): j for j in r.findall("joint")}


def inertia_matrix(inertial: ET.Element) -> np.ndarray:
    i = inertial.find("inertia")
    g = {k: float(i.get(k)) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    return np.array([[g["ixx"], g["ixy"], g["ixz"]], [g["ixy"], g["iyy"], g["iyz"]], [g["ixz"], g["iyz"], g["izz"]]])


def rot(rpy: np.ndarray) -> np.ndarray:
    r, p, y = rpy
    rx = np.array([[1, 0, 0], [0, math.cos(r), -math.sin(r)], [0, math.sin(r), math.cos(r)]])
    ry = np.array([[math.cos(p), 0, math.sin(p)], [0, 1, 0], [-math.sin(p), 0, math.cos(p)]])
    rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    return rz @ ry @ rx


def same_solid(t: str, R1: np.ndarray, R2: np.ndarray) -> bool:
    """Same primitive orientation: cylinders only by their axis (up to sign), boxes by their axes up to sign.
    (The mirrored right side writes roll -pi/2 where the reference writes +pi/2 for some cylinders: same solid.)"""
    if t == "sphere":
        return True
    if t == "cylinder":
        return abs(abs(R1[:, 2] @ R2[:, 2]) - 1.0) < 1e-9
    return np.allclose(np.abs(R1.T @ R2), np.eye(3), atol=1e-9)


def geom_key(c: ET.Element) -> tuple:
    g = c.find("geometry")[0]
    o = c.find("origin")
    dims = tuple(float(g.get(k)) for k in ("radius", "length") if g.get(k) is not None) or tuple(vec(g.get("size")))
    return g.tag, dims, vec(o.get("xyz") if o is not None else None), rot(vec(o.get("rpy") if o is not None else None))


# ----------------------------------------------------------------------------------------------- fixtures
def test_reference_fixture_matches_shared():
    if not SHARED_REF.is_dir():
        pytest.skip(f"{SHARED_REF} not present (clean clone elsewhere); fixtures are used as they are")
    for f in (REF_BODY, REF_HEAD):
        assert f.read_bytes() == (SHARED_REF / f.name).read_bytes(), f"{f.name} differs from {SHARED_REF}"


# ----------------------------------------------------------------------------------------------- expansion
@pytest.mark.parametrize("ros2_control,sim", VARIANTS)
def test_expands_for_every_argument_combination(ros2_control, sim):
    r = root(ros2_control, sim)
    assert r.tag == "robot" and r.get("name") == "atlas"
    assert "$(" not in urdf(ros2_control, sim) and "${" not in urdf(ros2_control, sim)
    assert (r.find("ros2_control") is not None) == ros2_control
    assert (r.find("gazebo") is not None) == (sim == "gazebo")
    assert (r.find("mujoco") is not None) == (sim == "mujoco")
    # no meshes anywhere: primitive geometry only
    assert not r.findall(".//mesh")


@pytest.mark.parametrize("ros2_control,sim", VARIANTS)
def test_every_variant_has_identical_kinematics_and_inertia(ros2_control, sim):
    """The tags the arguments add must not change the mechanism: links/joints equal to the plain URDF."""
    base, other = root(), root(ros2_control, sim)

    def canon(e: ET.Element):
        return (e.tag, sorted(e.attrib.items()), [canon(c) for c in e])

    strip = lambda r: [canon(e) for e in r.findall("joint")] + [  # noqa: E731
        (l.get("name"), canon(l.find("inertial"))) for l in r.findall("link") if l.find("inertial") is not None]
    assert strip(base) == strip(other)
    assert sorted(links_of(base)) == sorted(links_of(other))


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="sim"):
        ad.urdf_string(sim="webots")
    with pytest.raises(ValueError, match="unknown xacro argument"):
        ad.urdf_string(no_such_arg=1)
    with pytest.raises(FileNotFoundError):
        ad.urdf_string(ros2_control=True, initial_positions_file="/nonexistent/initial.yaml")


# ----------------------------------------------------------------------------------------------- joints
def test_exactly_28_revolute_joints_with_reference_names_and_team_order():
    j = joints_of(root())
    revolute = [n for n, e in j.items() if e.get("type") == "revolute"]
    assert len(revolute) == 28
    assert set(revolute) == set(reference_joints())
    assert {e.get("type") for e in j.values()} == {"revolute", "fixed"}  # fixed = contact/sole frames only
    assert list(ad.JOINT_NAMES) == TEAM_ORDER


def test_joint_limits_and_dynamics_equal_reference():
    j = joints_of(root())
    for name, ref in reference_joints().items():
        lim, rlim = j[name].find("limit"), ref.find("limit")
        for k in ("lower", "upper", "effort", "velocity"):
            assert float(lim.get(k)) == pytest.approx(float(rlim.get(k)), abs=TOL), (name, k)
        dyn, rdyn = j[name].find("dynamics"), ref.find("dynamics")
        for k in ("damping", "friction"):
            assert float(dyn.get(k)) == pytest.approx(float(rdyn.get(k)), abs=TOL), (name, k)


def test_joint_origins_axes_and_topology_equal_reference():
    j = joints_of(root())
    for name, ref in reference_joints().items():
        ours = j[name]
        assert ours.find("parent").get("link") == ref.find("parent").get("link"), name
        assert ours.find("child").get("link") == ref.find("child").get("link"), name
        np.testing.assert_allclose(vec(ours.find("origin").get("xyz")), vec(ref.find("origin").get("xyz")),
                                   atol=TOL, rtol=0, err_msg=name)
        np.testing.assert_allclose(rot(vec(ours.find("origin").get("rpy"))), rot(vec(ref.find("origin").get("rpy"))),
                                   atol=TOL, rtol=0, err_msg=name)
        np.testing.assert_allclose(vec(ours.find("axis").get("xyz")), vec(ref.find("axis").get("xyz")),
                                   atol=TOL, rtol=0, err_msg=name)


# ----------------------------------------------------------------------------------------------- links
def test_link_masses_coms_inertias_equal_reference():
    ours = links_of(root())
    massive = {n for n, l in ours.items() if l.find("inertial") is not None}
    assert massive == set(reference_links()), "links with mass must be exactly the reference links (+head)"
    for name, ref in reference_links().items():
        oi, ri = ours[name].find("inertial"), ref.find("inertial")
        assert float(oi.find("mass").get("value")) == pytest.approx(float(ri.find("mass").get("value")), abs=TOL)
        np.testing.assert_allclose(vec(oi.find("origin").get("xyz")), vec(ri.find("origin").get("xyz")),
                                   atol=TOL, rtol=0, err_msg=name)
        np.testing.assert_allclose(rot(vec(oi.find("origin").get("rpy"))), rot(vec(ri.find("origin").get("rpy"))),
                                   atol=TOL, rtol=0, err_msg=name)
        np.testing.assert_allclose(inertia_matrix(oi), inertia_matrix(ri), atol=TOL, rtol=0, err_msg=name)


def test_total_mass_within_half_percent_of_reference_plus_head():
    ref_mass = sum(float(l.find("inertial/mass").get("value")) for l in reference_links().values())
    ours = sum(float(l.find("inertial/mass").get("value")) for l in root().findall("link")
               if l.find("inertial") is not None)
    assert 90.0 < ref_mass < 91.0  # 89.2 kg body + 1.42 kg head (lidar 0.058 kg left out)
    assert abs(ours - ref_mass) <= 0.005 * ref_mass


def test_every_inertia_is_physically_valid():
    for link in root().findall("link"):
        inertial = link.find("inertial")
        if inertial is None:
            continue
        m = float(inertial.find("mass").get("value"))
        assert m > 0, link.get("name")
        I = inertia_matrix(inertial)
        assert np.allclose(I, I.T)
        ev = np.linalg.eigvalsh(I)
        assert ev.min() > 0, (link.get("name"), ev)
        tol = 1e-9 * ev.max()
        for k in range(3):
            assert ev[k] <= ev[(k + 1) % 3] + ev[(k + 2) % 3] + tol, (link.get("name"), ev)


def test_collision_primitives_cover_the_reference_ones():
    """Every reference collision primitive is present with the same type, size and pose (ours may add the
    two contact spheres per side); every collision is named."""
    ours = links_of(root())
    for name, ref in reference_links().items():
        mine = [geom_key(c) for c in ours[name].findall("collision")]
        for c in ref.findall("collision"):
            t, dims, p, R = geom_key(c)
            assert any(t == t2 and np.allclose(dims, d2, atol=TOL) and np.allclose(p, p2, atol=TOL)
                       and same_solid(t, R, R2) for t2, d2, p2, R2 in mine), (name, t, dims, p)
        extra = len(mine) - len(ref.findall("collision"))
        assert extra == (1 if name in ad.CONTACT_FRAME_PARENTS else 0), name
    for c in root().findall(".//collision"):
        assert c.get("name"), "unnamed collision"


# ----------------------------------------------------------------------------------------------- frames
def _frame_joint(r: ET.Element, frame: str) -> ET.Element:
    js = [j for j in r.findall("joint") if j.find("child").get("link") == frame]
    assert len(js) == 1, frame
    return js[0]


@pytest.mark.parametrize("sim", ad.SIM_CHOICES)
def test_contact_and_sole_frames_attached_to_the_right_links(sim):
    r = root(False, sim)
    ls = links_of(r)
    assert ad.CONTACT_FRAMES == ("l_wrist_contact", "r_wrist_contact", "l_knee_contact", "r_knee_contact")
    assert ad.SOLE_FRAMES == ("l_sole", "r_sole")
    frames = ad.CONTACT_FRAMES + ad.SOLE_FRAMES
    parents = ad.CONTACT_FRAME_PARENTS + ad.SOLE_FRAME_PARENTS
    assert parents == ("l_hand", "r_hand", "l_lleg", "r_lleg", "l_foot", "r_foot")
    for f, parent in zip(frames, parents):
        assert f in ls and ls[f].find("inertial") is None and ls[f].find("collision") is None, f
        j = _frame_joint(r, f)
        assert j.get("type") == "fixed" and j.find("parent").get("link") == parent, f


def test_contact_frame_positions_follow_the_reference_geometry():
    """Wrist: distal pole of the capsule end on the l_hand end cylinder; knee: front of the knee-end sphere
    of the shin cylinder; sole: centre of the foot box bottom (see README). Mirror images on the right."""
    r = root()
    expect = {
        "l_wrist_contact": (0.001, 0.155, 0.01),
        "l_knee_contact": (0.02 + 0.2 * math.sin(0.1) + 0.07 * math.cos(0.1), 0.00295,
                           -0.18 + 0.2 * math.cos(0.1) - 0.07 * math.sin(0.1)),
        "l_sole": (0.048, 0.0, -0.081119),
    }
    for f, p in expect.items():
        for side, s in (("l", 1), ("r", -1)):
            name = side + f[1:]
            got = vec(_frame_joint(r, name).find("origin").get("xyz"))
            np.testing.assert_allclose(got, (p[0], s * p[1], p[2]), atol=1e-12, err_msg=name)
    # each contact frame lies on the surface of its contact sphere (distance = radius from the centre)
    ls = links_of(r)
    for f, parent in zip(ad.CONTACT_FRAMES, ad.CONTACT_FRAME_PARENTS):
        sph = [c for c in ls[parent].findall("collision") if c.find("geometry/sphere") is not None]
        assert len(sph) == 1 and sph[0].get("name").endswith("contact_sphere"), parent
        centre = vec(sph[0].find("origin").get("xyz"))
        radius = float(sph[0].find("geometry/sphere").get("radius"))
        p = vec(_frame_joint(r, f).find("origin").get("xyz"))
        assert np.linalg.norm(p - centre) == pytest.approx(radius, abs=1e-12), f


# ----------------------------------------------------------------------------------------------- ros2_control
def _limits_by_name():
    return {n: e.find("limit") for n, e in reference_joints().items()}


@pytest.mark.parametrize("sim,plugin", [("gazebo", "gz_ros2_control/GazeboSimSystem"),
                                        ("none", "mock_components/GenericSystem")])
def test_ros2_control_block(sim, plugin):
    r = root(True, sim)
    blocks = r.findall("ros2_control")
    assert len(blocks) == 1
    b = blocks[0]
    assert b.get("name") == "AtlasSystem" and b.get("type") == "system"
    assert b.find("hardware/plugin").text.strip() == plugin
    joints = b.findall("joint")
    assert [j.get("name") for j in joints] == TEAM_ORDER
    lims = _limits_by_name()
    for j in joints:
        cmd = j.findall("command_interface")
        st = j.findall("state_interface")
        assert [c.get("name") for c in cmd] == ["position"]
        assert [s.get("name") for s in st] == ["position", "velocity", "effort"]
        params = {p.get("name"): float(p.text) for p in cmd[0].findall("param")}
        assert params["min"] == pytest.approx(float(lims[j.get("name")].get("lower")), abs=TOL)
        assert params["max"] == pytest.approx(float(lims[j.get("name")].get("upper")), abs=TOL)
        assert float(st[0].find("param[@name='initial_value']").text) == 0.0
    assert sum(len(j.findall("command_interface")) for j in joints) == 28
    assert sum(len(j.findall("state_interface")) for j in joints) == 84


def test_ros2_control_initial_values_from_yaml():
    path = ad.config_path("initial_positions_crawl.yaml")
    r = ET.fromstring(ad.urdf_string(ros2_control=True, sim="none", initial_positions_file=path))
    init = {j.get("name"): float(j.find("state_interface[@name='position']/param[@name='initial_value']").text)
            for j in r.find("ros2_control").findall("joint")}
    assert init["l_leg_kny"] == 2.0 and init["r_arm_shx"] == 0.5 and init["l_arm_shx"] == -0.5
    assert init["back_lbz"] == 0.0 and init["l_arm_mwx"] == 0.0
    lims = _limits_by_name()
    for n, v in init.items():  # the stance is inside the joint limits
        assert float(lims[n].get("lower")) <= v <= float(lims[n].get("upper")), n


# ----------------------------------------------------------------------------------------------- gazebo
def test_gazebo_tags():
    r = root(True, "gazebo")
    plugins = r.findall("gazebo/plugin")
    by_name = {p.get("name"): p for p in plugins}
    gz = by_name["gz_ros2_control::GazeboSimROS2ControlPlugin"]
    assert gz.get("filename") == "gz_ros2_control-system"
    assert gz.find("parameters") is None  # controllers_file default '' -> not emitted
    pp = by_name["atlas_crawl_gz_plugins::PelvisPosePublisher"]
    assert pp.get("filename") == "atlas_crawl_gz_plugins"
    assert pp.find("link_name").text == "pelvis" and float(pp.find("update_rate_hz").text) == 1000
    assert pp.find("topic").text.strip()
    surfaces = {g.get("reference"): g for g in r.findall("gazebo[@reference]")}
    for link in ("l_hand", "r_hand", "l_lleg", "r_lleg", "l_foot", "r_foot"):
        assert float(surfaces[link].find("mu1").text) == pytest.approx(1.0)
        assert float(surfaces[link].find("mu2").text) == pytest.approx(1.0)

    r2 = ET.fromstring(ad.urdf_string(ros2_control=True, sim="gazebo", controllers_file="/tmp/controllers.yaml",
                                      pelvis_plugin=False))
    names = [p.get("name") for p in r2.findall("gazebo/plugin")]
    assert "atlas_crawl_gz_plugins::PelvisPosePublisher" not in names
    gz2 = [p for p in r2.findall("gazebo/plugin") if p.get("name") == "gz_ros2_control::GazeboSimROS2ControlPlugin"]
    assert [e.text for e in gz2[0].findall("parameters")] == ["/tmp/controllers.yaml"]

    r3 = ET.fromstring(ad.urdf_string(ros2_control=True, sim="gazebo", controllers_file="/tmp/controllers.yaml",
                                      controllers_overrides_file="/tmp/gz.yaml"))
    r4 = ET.fromstring(ad.urdf_string(ros2_control=True, sim="gazebo", pelvis_pose_rate_hz=100))
    pp4 = [p for p in r4.findall("gazebo/plugin") if p.get("name") == "atlas_crawl_gz_plugins::PelvisPosePublisher"]
    assert float(pp4[0].find("update_rate_hz").text) == 100
    gz3 = [p for p in r3.findall("gazebo/plugin") if p.get("name") == "gz_ros2_control::GazeboSimROS2ControlPlugin"]
    # order matters: ROS applies parameter files in order, the overrides must come second
    assert [e.text for e in gz3[0].findall("parameters")] == ["/tmp/controllers.yaml", "/tmp/gz.yaml"]


# ----------------------------------------------------------------------------------------------- mujoco
def test_mujoco_variant_loads_and_keeps_contact_frames():
    mujoco = pytest.importorskip("mujoco")
    m = mujoco.MjModel.from_xml_string(urdf(False, "mujoco"))
    body = lambda n: mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, n)  # noqa: E731
    for f, parent in zip(ad.CONTACT_FRAMES + ad.SOLE_FRAMES, ad.CONTACT_FRAME_PARENTS + ad.SOLE_FRAME_PARENTS):
        assert body(f) >= 0, f"MuJoCo dropped frame body {f}"
        assert m.body_parentid[body(f)] == body(parent), f
    hinge = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, i) for i in range(m.njnt)
             if m.jnt_type[i] == mujoco.mjtJoint.mjJNT_HINGE]
    assert sorted(hinge) == sorted(TEAM_ORDER)
    ref_mass = sum(float(l.find("inertial/mass").get("value")) for l in reference_links().values())
    assert m.body_mass.sum() == pytest.approx(ref_mass, rel=1e-6)
    for name in ("l_hand_wrist_contact_sphere", "r_lleg_knee_contact_sphere"):
        assert mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, name) >= 0, name
    # visuals discarded: every geom is a named collision primitive
    assert all(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) for g in range(m.ngeom))


def test_contact_spheres_are_the_lowest_limb_geometry_in_the_reference_crawl_stance():
    """In the four-point stance of the reference probe (config/initial_positions_crawl.yaml, pelvis pitched
    1.25 rad) each contact sphere reaches lower than every other geom of its limb below the elbow/knee:
    the frames sit where the robot actually touches the ground."""
    mujoco = pytest.importorskip("mujoco")
    import yaml

    m = mujoco.MjModel.from_xml_string(urdf(False, "mujoco"))
    d = mujoco.MjData(m)
    q = yaml.safe_load(open(ad.config_path("initial_positions_crawl.yaml")))["initial_positions"]
    for n, v in q.items():
        d.qpos[m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n)]] = v
    mujoco.mj_kinematics(m, d)
    c, s = math.cos(1.25), math.sin(1.25)
    Rw = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])  # pelvis pitch (root welded to world in this model)

    def lowest(g):  # lowest world-z of a sphere/cylinder/box geom (bounding by its support function)
        R = Rw @ d.geom_xmat[g].reshape(3, 3)
        z = (Rw @ d.geom_xpos[g])[2]
        t, sz = m.geom_type[g], m.geom_size[g]
        down = R.T @ np.array([0, 0, -1.0])
        if t == mujoco.mjtGeom.mjGEOM_SPHERE:
            return z - sz[0]
        if t == mujoco.mjtGeom.mjGEOM_BOX:
            return z - np.abs(down) @ sz
        if t == mujoco.mjtGeom.mjGEOM_CYLINDER:
            return z - sz[0] * math.hypot(down[0], down[1]) - sz[1] * abs(down[2])
        raise AssertionError(t)

    for side in "lr":
        for sphere, bodies in ((f"{side}_hand_wrist_contact_sphere", (f"{side}_hand", f"{side}_farm")),
                               (f"{side}_lleg_knee_contact_sphere", (f"{side}_lleg",))):
            gs = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, sphere)
            others = [g for g in range(m.ngeom) if g != gs
                      and mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, m.geom_bodyid[g]) in bodies]
            assert others
            assert lowest(gs) < min(lowest(g) for g in others), sphere


# ----------------------------------------------------------------------------------------------- API
def test_paths_and_console_script(tmp_path, capsys):
    p = Path(ad.xacro_path())
    assert p.is_file() and p.name == "atlas.urdf.xacro"
    assert Path(ad.config_path("joint_limits.yaml")).is_file()
    out = tmp_path / "atlas.urdf"
    assert ad.main(["--ros2-control", "--sim", "gazebo", "-o", str(out)]) == 0
    assert ET.parse(out).getroot().find("ros2_control") is not None
    ad.main(["--sim", "mujoco"])
    assert "<mujoco>" in capsys.readouterr().out


def test_share_dir_override_is_honoured(monkeypatch, tmp_path):
    monkeypatch.setenv("ATLAS_DESCRIPTION_SHARE", str(tmp_path))  # no urdf there: must fall back, not break
    assert Path(ad.xacro_path()).is_file()


# ------------------------------------------------------------------------------------ robot facts (issue 10 §3)
@pytest.mark.parametrize("sim", ad.SIM_CHOICES)
def test_joint_limits_equal_the_urdf_limit_tags(sim):
    """joint_limits() (read from config/joint_limits.yaml) is what the expanded URDF says, for every simulator."""
    lo, hi, vel, eff = ad.joint_limits()
    js = joints_of(root(sim=sim))
    for i, n in enumerate(ad.JOINT_NAMES):
        lim = js[n].find("limit")
        assert (lo[i], hi[i], vel[i], eff[i]) == tuple(float(lim.get(k)) for k in ("lower", "upper", "velocity",
                                                                                 "effort")), n
    assert np.all(lo < hi) and not lo.flags.writeable


def test_limb_names_and_joint_index_follow_the_team_order():
    assert len(ad.LIMB_NAMES) == len(ad.CONTACT_FRAMES) == 4
    assert [f[:1].upper() + ("W" if "wrist" in f else "K") for f in ad.CONTACT_FRAMES] == list(ad.LIMB_NAMES)
    assert [ad.JOINT_INDEX[n] for n in ad.JOINT_NAMES] == list(range(28))


def test_model_urdf_is_the_cached_expansion():
    assert ad.model_urdf("mujoco") is ad.model_urdf("mujoco")
    assert ad.model_urdf("mujoco") == urdf(sim="mujoco")
