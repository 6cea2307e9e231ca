"""Run-time MuJoCo model of the DRC Atlas, built with mujoco.MjSpec from our URDF.

Source of the URDF: ``atlas_description.model_urdf(sim)`` (= ``urdf_string(sim="mujoco")``, cached).
MjSpec then adds what a URDF cannot say: free joint on the pelvis, floor plane, 28 position servos (gains and
force limits from config/mujoco_sim_parameters.yaml; force limit = URDF effort limit), contact/friction settings,
contact-frame sites and a tracking camera.

Contact model (the thesis lost accuracy to ODE "skating", §4.1): elliptic friction cones, impratio 10, condim 4
(torsional friction) on the support geoms (hands, forearms, shins, feet), sliding friction 1.0; robot geoms collide
with the floor only (contype 1 / conaffinity 0 on the robot, 0 / 1 on the floor), like Gazebo's default of no
self-collision.
"""
from __future__ import annotations

import re

import mujoco
import numpy as np

from atlas_description import CONTACT_FRAMES, JOINT_NAMES, LIMB_LINKS, SOLE_FRAMES, joint_limits
from atlas_description import model_urdf as urdf_source

from .params import load_params
from .scenes import apply_scene

#: Bodies whose geoms form each limb's support contact (limb order LW, RW, LK, RK).
LIMB_BODIES = LIMB_LINKS
FOOT_BODIES = ("l_foot", "r_foot")
SUPPORT_BODIES = ("l_hand", "l_farm", "r_hand", "r_farm", "l_lleg", "r_lleg", "l_foot", "r_foot",
                  "l_talus", "r_talus")
#: IMU site on the pelvis (origin and axes of the pelvis frame) and its two MuJoCo sensors.
IMU_SITE, IMU_GYRO, IMU_ACCEL = "imu", "imu_gyro", "imu_accel"
#: Bodies whose floor contact means a fall in crawl gaits (torso / head on the ground).
FALL_BODIES = ("utorso", "head", "mtorso", "ltorso")
GROUND_GROUP = 2   #: geom group of the scene's ground geoms (and nothing else): see ModelMap

#: Provisional contact frames (body, position in body frame) used only when the URDF has no such link.
#: Wrist: where the hand's end cylinder meets the floor in the hands-and-knees stance; knee: the upper front
#: rim of the shin cylinder (where the shin touches the floor in that stance);
#: sole: centre of the foot box bottom.
_FALLBACK_SITES = {
    "l_wrist_contact": ("l_hand", (0.01, 0.125, -0.019)),
    "r_wrist_contact": ("r_hand", (0.01, -0.125, -0.019)),
    "l_knee_contact": ("l_lleg", (0.109, 0.003, 0.012)),
    "r_knee_contact": ("r_lleg", (0.109, -0.003, 0.012)),
    "l_sole": ("l_foot", (0.048, 0.0, -0.081)),
    "r_sole": ("r_foot", (0.048, 0.0, -0.081)),
}


def _joint_group(name: str) -> str:
    if name.startswith("back_"):
        return "back"
    if name == "neck_ay":
        return "neck"
    if "_leg_" in name:
        return "leg"
    return "arm"


def prepared_urdf(sim: str = "mujoco") -> str:
    """URDF text with a <mujoco> compiler block (discard visuals, keep fixed-joint links as bodies)."""
    urdf = urdf_source(sim)
    if "<mujoco>" not in urdf:
        urdf = re.sub(r"(<robot[^>]*>)",
                      r'\1<mujoco><compiler discardvisual="true" fusestatic="false" strippath="false"/></mujoco>',
                      urdf, count=1)
    return urdf


#: Visual colours (rendering only, no effect on the physics): left limbs warm, right limbs cool, matching the
#: report plots' LW red / RW blue / LK orange / RK green.
LIMB_RGBA = {"l_arm": (0.86, 0.24, 0.20, 1.0), "r_arm": (0.18, 0.42, 0.85, 1.0),
             "l_leg": (0.98, 0.62, 0.12, 1.0), "r_leg": (0.20, 0.68, 0.32, 1.0),
             "torso": (0.80, 0.80, 0.78, 1.0), "head": (0.25, 0.25, 0.28, 1.0)}
_ARM = ("clav", "scap", "uarm", "larm", "farm", "hand")
_LEG = ("uglut", "lglut", "uleg", "lleg", "talus", "foot")


def body_colour_group(body: str) -> str:
    """Colour group of a body: l_arm, r_arm, l_leg, r_leg, head or torso."""
    side, _, part = body.partition("_")
    if side in ("l", "r") and part in _ARM:
        return f"{side}_arm"
    if side in ("l", "r") and part in _LEG:
        return f"{side}_leg"
    return "head" if body == "head" else "torso"


def _add_visuals(spec: mujoco.MjSpec, floor) -> None:
    """Floor checker (0.5 m squares, darker 1 m lines), limb colours, sky gradient. Rendering only."""
    # The URDF's visual meshes were already dropped when it was parsed; discardvisual would also drop these
    # textures/materials at compile time (same geoms either way: checked ngeom).
    spec.compiler.discardvisual = False
    spec.add_texture(name="grid", type=mujoco.mjtTexture.mjTEXTURE_2D, builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
                     width=512, height=512, rgb1=[0.78, 0.80, 0.82], rgb2=[0.62, 0.65, 0.69],
                     mark=mujoco.mjtMark.mjMARK_EDGE, markrgb=[0.25, 0.27, 0.30])
    mat = spec.add_material(name="grid")
    mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "grid"
    mat.texrepeat = [2, 2]   # plane + texuniform: measured 1 texture (2x2 squares) per m -> 0.5 m squares, 1 m lines
    mat.texuniform = True
    mat.reflectance = 0.0
    floor.material = "grid"
    spec.add_texture(name="sky", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX, builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT,
                     width=256, height=256, rgb1=[0.55, 0.70, 0.88], rgb2=[0.95, 0.96, 0.98])
    for g in spec.geoms:
        if g.parent.name != "world":
            g.rgba = list(LIMB_RGBA[body_colour_group(g.parent.name)])


def build_spec(params: dict | None = None) -> mujoco.MjSpec:
    """MjSpec of robot + floor + servos + sites (see module doc). ``params`` overrides the YAML defaults."""
    p = load_params(overrides=params)
    spec = mujoco.MjSpec.from_string(prepared_urdf())
    spec.modelname = "atlas_crawl"
    spec.option.timestep = p["timestep_s"]
    spec.option.integrator = {"implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
                              "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
                              "RK4": mujoco.mjtIntegrator.mjINT_RK4,
                              "Euler": mujoco.mjtIntegrator.mjINT_EULER}[p["integrator"]]
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    spec.option.impratio = p["impratio"]
    spec.visual.global_.offwidth = 1920   # offscreen video up to 1920x1080 (render.VideoRecorder)
    spec.visual.global_.offheight = 1080

    pelvis = spec.body("pelvis")
    if pelvis is None:
        raise RuntimeError("URDF has no 'pelvis' link")
    pelvis.add_freejoint(name="floating_base")

    # Robot geoms: collide with the floor only; support geoms get torsional friction.
    mu = p["friction_sliding"]
    for g in spec.geoms:
        body = g.parent.name
        g.contype, g.conaffinity = 1, 0
        if body in SUPPORT_BODIES:
            g.condim = p["contact_condim"]
            g.friction = [mu, p["friction_torsional_m"], p["friction_rolling_m"]]
        else:
            g.condim = 3
            g.friction = [mu, 0.005, 0.0001]

    floor = spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE,
                                    size=[p["floor_size_m"], p["floor_size_m"], 0.1])
    floor.contype, floor.conaffinity = 0, 1
    floor.condim = p["contact_condim"]
    floor.friction = [mu, p["friction_torsional_m"], p["friction_rolling_m"]]
    _add_visuals(spec, floor)
    spec.worldbody.add_light(name="sun", pos=[0, 0, 5], dir=[0, 0, -1], castshadow=False)
    spec.worldbody.add_camera(name="track", mode=mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM,
                              pos=[1.2, -2.4, 1.3], xyaxes=[0.894, 0.447, 0, -0.2, 0.4, 0.894])

    # Joints: armature; servos with force limit = URDF effort limit.
    lo, hi, _vel, eff = joint_limits()
    for i, name in enumerate(JOINT_NAMES):
        j = spec.joint(name)
        if j is None:
            raise RuntimeError(f"URDF has no joint '{name}'")
        j.armature = p["armature_kg_m2"]
        kp = p[f"kp_{_joint_group(name)}_nm_per_rad"]
        a = spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        a.set_to_position(kp=kp, kv=p["kv_ratio_s"] * kp)
        a.ctrllimited = True
        a.ctrlrange = [lo[i], hi[i]]
        a.forcelimited = True
        lim = p["effort_limit_scale"] * eff[i]
        a.forcerange = [-lim, lim]

    # Contact-frame sites.
    for name in CONTACT_FRAMES + SOLE_FRAMES:
        b = spec.body(name)
        if b is not None:
            b.add_site(name=name, pos=[0, 0, 0], size=[0.02, 0, 0], rgba=[1, 0.2, 0.2, 1])
        else:
            bname, pos = _FALLBACK_SITES[name]
            spec.body(bname).add_site(name=name, pos=list(pos), size=[0.02, 0, 0], rgba=[1, 0.2, 0.2, 1])
    # IMU (issue 14 §1): a site at the pelvis origin, axes = pelvis axes, with a rate gyro and an accelerometer
    # (specific force, +g up at rest). Noise-free here; the noise and bias model is atlas_crawl_mujoco.sensors.
    pelvis.add_site(name=IMU_SITE, pos=[0, 0, 0], size=[0.01, 0, 0], rgba=[0.2, 0.8, 0.2, 1])
    spec.add_sensor(name=IMU_GYRO, type=mujoco.mjtSensor.mjSENS_GYRO, objtype=mujoco.mjtObj.mjOBJ_SITE,
                    objname=IMU_SITE)
    spec.add_sensor(name=IMU_ACCEL, type=mujoco.mjtSensor.mjSENS_ACCELEROMETER, objtype=mujoco.mjtObj.mjOBJ_SITE,
                    objname=IMU_SITE)
    apply_scene(spec, p["scene"])   # terrain scene (issue 13): atlas_crawl_mujoco.scenes
    return spec


def build_model(params: dict | None = None) -> mujoco.MjModel:
    """Compiled MjModel (see :func:`build_spec`)."""
    return build_spec(params).compile()


class ModelMap:
    """Name-based index maps between the team order (JOINT_NAMES, LW/RW/LK/RK) and MuJoCo ids."""

    def __init__(self, model: mujoco.MjModel):
        m = model
        self.qpos_adr = np.array([m.jnt_qposadr[m.joint(n).id] for n in JOINT_NAMES])
        self.dof_adr = np.array([m.jnt_dofadr[m.joint(n).id] for n in JOINT_NAMES])
        self.act_id = np.array([m.actuator(n).id for n in JOINT_NAMES])
        self.site_contact = np.array([m.site(n).id for n in CONTACT_FRAMES])
        self.site_sole = np.array([m.site(n).id for n in SOLE_FRAMES])
        self.pelvis = m.body("pelvis").id
        self.utorso = m.body("utorso").id
        self.floor_geom = m.geom("floor").id
        body_limb = {}
        for li, bodies in enumerate(LIMB_BODIES):
            for b in bodies:
                body_limb[m.body(b).id] = li
        for b in FOOT_BODIES + ("l_talus", "r_talus"):
            body_limb[m.body(b).id] = 4 if b.startswith("l") else 5
        fall_ids = {m.body(b).id for b in FALL_BODIES if mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, b) >= 0}
        #: per geom: limb index 0..3 (LW,RW,LK,RK), 4/5 left/right foot, -1 other robot geom, -2 floor
        self.geom_limb = np.full(m.ngeom, -1, dtype=int)
        self.geom_fall = np.zeros(m.ngeom, dtype=bool)
        for g in range(m.ngeom):
            b = m.geom_bodyid[g]
            self.geom_limb[g] = body_limb.get(b, -1)
            self.geom_fall[g] = b in fall_ids
        self.geom_limb[self.floor_geom] = -2
        static = m.body_weldid[m.geom_bodyid] == 0   # scene geoms (issue 13): -2 ground, -3 overhead ("ceiling")
        self.geom_limb[static] = [-3 if "ceiling" in (m.geom(g).name or "") else -2 for g in np.flatnonzero(static)]
        #: the ground geoms alone in geom group GROUND_GROUP (visible by default): height-map rays select them with
        #: mj_ray's geomgroup (passing through robot geoms misread the ground where a limb sinks into it)
        self.ground_group = GROUND_GROUP
        m.geom_group[self.geom_limb != -2] = np.where(m.geom_group[self.geom_limb != -2] == GROUND_GROUP, 0,
                                                      m.geom_group[self.geom_limb != -2])
        m.geom_group[self.geom_limb == -2] = GROUND_GROUP
        self.total_mass = float(m.body_subtreemass[0])
        self.imu_gyro_adr = int(m.sensor_adr[m.sensor(IMU_GYRO).id])
        self.imu_accel_adr = int(m.sensor_adr[m.sensor(IMU_ACCEL).id])
