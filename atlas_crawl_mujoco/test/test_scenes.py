"""Terrain scenes (issue 13 §1): built-ins, user files, rejection of malformed ones, and their physics."""
import math

import mujoco
import numpy as np
import pytest
from atlas_crawl_mujoco.model import build_model, build_spec
from atlas_crawl_mujoco.sim import AtlasSim

from atlas_crawl_mujoco import scenes


def _geom(m, name):
    return m.geom(name).id


def test_builtins_parse_and_compile_with_ground_codes():
    assert {"flat", "slope", "rough", "steps", "rubble", "tunnel", "friction"} <= set(scenes.builtin_names())
    for name in scenes.builtin_names():
        sim = AtlasSim(params={"scene": name})
        m, code = sim.model, sim.map.geom_limb
        static = m.body_weldid[m.geom_bodyid] == 0
        assert static.sum() >= 1 and set(code[static]) <= {-2, -3}, name
        assert (code[~static] >= -1).all(), name          # robot geoms keep their limb codes
        assert scenes.scene_label(m).startswith(name)
    flat = build_model()
    assert flat.ngeom == AtlasSim(params={"scene": "flat"}).model.ngeom
    assert scenes.spawn_frame(flat) == (0.0, pytest.approx(np.array([1.0, 0, 0, 0])))


def test_slope_tilts_the_floor_and_the_robot_starts_on_it():
    sim = AtlasSim(params={"scene": "slope:angle_deg=12,direction_deg=90"})
    mujoco.mj_forward(sim.model, sim.data)
    n = sim.data.geom_xmat[sim.map.floor_geom].reshape(3, 3)[:, 2]
    # rises towards +y (direction 90 deg): the normal leans towards -y by 12 deg
    assert n == pytest.approx([0.0, -math.sin(math.radians(12)), math.cos(math.radians(12))], abs=1e-9)
    sim.reset("crawl_forward", drop_clearance_m=0.003)
    assert sim._lowest_point_z(n) == pytest.approx(0.003, abs=1e-9)   # 3 mm above the slope, along its normal
    up = AtlasSim(params={"scene": "slope:angle_deg=12,direction_deg=0"})   # uphill ahead: rests on all fours
    up.reset("crawl_forward")
    up.step(400)
    assert up.limb_contacts()[0].all() and not up.fallen()[0]


def test_rough_height_field_is_seeded_and_spans_the_amplitude():
    a = AtlasSim(params={"scene": "rough:seed=4,amplitude_m=0.03"}).model
    b = AtlasSim(params={"scene": "rough:seed=4,amplitude_m=0.03"}).model
    c = AtlasSim(params={"scene": "rough:seed=5,amplitude_m=0.03"}).model
    assert np.array_equal(a.hfield_data, b.hfield_data) and not np.array_equal(a.hfield_data, c.hfield_data)
    g = _geom(a, "scene_terrain")
    lo, hi = a.geom_pos[g][2], a.geom_pos[g][2] + a.hfield_size[0][2] * a.hfield_data.max()
    assert lo == pytest.approx(-0.03) and hi == pytest.approx(0.03)
    assert a.geom_pos[_geom(a, "floor")][2] < lo                    # the plane never pokes through the field
    assert 0.0 < scenes.spawn_frame(a)[0] <= 0.03


def test_steps_rubble_tunnel_geometry():
    m = AtlasSim(params={"scene": "steps"}).model
    g = _geom(m, "scene_step0")
    assert m.geom_pos[g][2] + m.geom_size[g][2] == pytest.approx(0.10)
    assert m.geom_pos[g][0] - m.geom_size[g][0] == pytest.approx(0.8)
    r1, r2 = (AtlasSim(params={"scene": "rubble:seed=2"}).model for _ in range(2))
    boxes = [i for i in range(r1.ngeom) if (r1.geom(i).name or "").startswith("scene_rubble")]
    assert len(boxes) == round(6.0 * 25)
    tops = r1.geom_pos[boxes, 2] + r1.geom_size[boxes, 2]
    assert tops.min() >= 0.01 - 1e-12 and tops.max() <= 0.05 + 1e-12 and np.array_equal(r1.geom_pos, r2.geom_pos)
    sim = AtlasSim(params={"scene": "tunnel"})
    c = _geom(sim.model, "scene_ceiling")
    bottom = sim.model.geom_pos[c][2] - sim.model.geom_size[c][2]
    assert bottom == pytest.approx(scenes.ROBOT_CRAWL_TOP_M + 0.10)
    assert sim.map.geom_limb[c] == -3
    sim.reset("crawl_forward")
    sim.step(200)
    assert all(sim.map.geom_limb[g] != -3 for _l, _p, _f, g in sim.floor_contacts())


@pytest.mark.parametrize("mu", [0.5, 1.25])
def test_scene_friction_wins_over_the_robot(mu):
    sim = AtlasSim(params={"scene": f"friction:friction={mu}"})
    sim.reset("crawl_forward")
    sim.step(100)
    d = sim.data
    mus = [d.contact[i].friction[0] for i in range(d.ncon)]
    assert mus and all(x == pytest.approx(mu) for x in mus)
    rough = AtlasSim(params={"scene": f"rough:friction={mu}"}).model
    assert rough.geom_friction[_geom(rough, "scene_terrain")][0] == pytest.approx(mu)


def test_user_yaml_mjcf_and_png(tmp_path):
    y = tmp_path / "hill.yaml"
    y.write_text("kind: slope\ndescription: mine\nparams: {angle_deg: 5, direction_deg: 180}\n")
    sc = scenes.parse_scene(str(y) + ":angle_deg=7")
    assert (sc.kind, sc.params["angle_deg"], sc.params["direction_deg"]) == ("slope", 7.0, 180.0)
    x = tmp_path / "blocks.xml"
    x.write_text('<mujoco><worldbody><geom name="block" type="box" size="0.2 0.5 0.04" pos="1.2 0 0.04"/>'
                 '<body name="pillar" pos="2 1 0"><geom type="cylinder" size="0.1 0.5"/></body></worldbody></mujoco>')
    sim = AtlasSim(params={"scene": str(x)})
    g = _geom(sim.model, "scene_block")
    assert sim.map.geom_limb[g] == -2 and sim.model.geom_contype[g] == 0 and sim.model.geom_conaffinity[g] == 1
    from PIL import Image
    p = tmp_path / "map.png"
    img = np.zeros((20, 30), dtype=np.uint8)
    img[:, 15:] = 255
    Image.fromarray(img).save(p)
    m = AtlasSim(params={"scene": f"{p}:scale_m=0.08,size_m=6"}).model
    t = _geom(m, "scene_terrain")
    assert (m.hfield_nrow[0], m.hfield_ncol[0]) == (20, 30)
    assert m.hfield_size[0][:3] == pytest.approx([3.0, 3.0, 0.08])
    assert m.geom_pos[t][2] == pytest.approx(0.0)


@pytest.mark.parametrize("spec, reason", [
    ("", "empty scene"),
    ("mars", "not a built-in scene"),
    ("slope:angle_deg=20", r"angle_deg=20.0 out of bounds \[0.0, 15.0\]"),
    ("slope:angle_deg=steep", "is not of type float"),
    ("slope:angle_deg=nan", "out of bounds"),
    ("slope:tilt=5", "unknown parameter 'tilt'"),
    ("slope:angle_deg", "is not key=value"),
    ("rough:seed=1.5", "is not of type int"),
    ("steps:mirror=maybe", "is not of type bool"),
    ("rubble:min_height_m=0.1,max_height_m=0.05", "must not exceed"),
    ("tunnel:clearance_m=-0.5,robot_top_m=0.3", "cannot fit"),
    ("friction:friction=5", "out of bounds"),
    ("scene.obj", "file type '.obj' not supported"),
])
def test_malformed_specs_rejected_with_reason(spec, reason):
    with pytest.raises(ValueError, match=reason):
        scenes.parse_scene(spec)


def test_malformed_files_rejected_with_reason(tmp_path):
    cases = {
        "missing.yaml": (None, "not a readable regular file"),
        "empty.yaml": ("", "has 0 bytes"),
        "list.yaml": ("- a\n- b\n", "top level must be a mapping"),
        "kind.yaml": ("kind: lava\n", "kind 'lava' is not one of"),
        "extra.yaml": ("kind: flat\ncolour: red\n", r"unknown keys \['colour'\]"),
        "bad.yaml": ("kind: [unclosed\n", "not valid UTF-8 YAML"),
        "broken.xml": ("<mujoco><worldbody><geom type='box' size='1'/></worldbody>", "does not load"),
        "joint.xml": ("<mujoco><worldbody><body><freejoint/><geom type='sphere' size='.1'/></body></worldbody>"
                      "</mujoco>", "must be static scenery"),
        "nogeom.xml": ("<mujoco><worldbody/></mujoco>", "has no geom"),
        "text.png": ("not an image", "not a readable image"),
    }
    for name, (text, reason) in cases.items():
        p = tmp_path / name
        if text is not None:
            p.write_text(text)
        extra = ":scale_m=0.05" if name.endswith(".png") else ""
        with pytest.raises(ValueError, match=reason):
            scenes.parse_scene(str(p) + extra)
    from PIL import Image
    Image.fromarray(np.zeros((4, 4), dtype=np.uint8)).save(tmp_path / "ok.png")
    with pytest.raises(ValueError, match="'scale_m' is required"):
        scenes.parse_scene(str(tmp_path / "ok.png"))
    Image.fromarray(np.zeros((4, 4), dtype=np.uint8)).save(tmp_path / "jpeg.png", format="JPEG")
    with pytest.raises(ValueError, match="is JPEG, not a PNG"):
        scenes.parse_scene(str(tmp_path / "jpeg.png") + ":scale_m=0.05")
    (tmp_path / "dir.yaml").mkdir()
    with pytest.raises(ValueError, match="not a readable regular file"):
        scenes.parse_scene(str(tmp_path / "dir.yaml"))


def test_bad_scene_refused_before_a_simulator_exists():
    with pytest.raises(ValueError, match="out of bounds"):
        AtlasSim(params={"scene": "slope:angle_deg=30"})
    with pytest.raises(ValueError, match="no 'floor' geom"):
        scenes.apply_scene(mujoco.MjSpec(), "flat")
    assert build_spec({"scene": "flat"}).geom("floor") is not None


def test_sim_node_scene_parameter_is_read_only():
    rclpy = pytest.importorskip("rclpy")
    from atlas_crawl_mujoco.sim_node import MujocoSimNode
    from rclpy.parameter import Parameter
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    try:
        node = MujocoSimNode(context=ctx, parameter_overrides=[Parameter("physics.scene", value="steps")])
        try:
            assert node.get_parameter("physics.scene").value == "steps"
            assert node.sim.model.geom("scene_step0") is not None
            res = node.set_parameters([Parameter("physics.scene", value="rough")])[0]
            assert not res.successful
            assert node.get_parameter("physics.scene").value == "steps"
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=ctx)
