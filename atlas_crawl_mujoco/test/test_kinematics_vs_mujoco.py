"""Our kinematics against MuJoCo's (an independent implementation) on >= 1000 random in-limit configurations."""

import numpy as np
import pytest

from atlas_crawl_kinematics.model import RobotModel
from atlas_description import CONTACT_FRAMES, JOINT_NAMES, model_urdf
from atlas_crawl_mujoco.mj_oracle import MjOracle

N_CONFIGS = 1000
POS_TOL = 1e-9
JAC_TOL = 1e-8


@pytest.fixture(scope="module")
def urdf() -> str:
    return model_urdf(sim="mujoco")


@pytest.fixture(scope="module")
def model(urdf) -> RobotModel:
    return RobotModel.from_urdf_string(urdf)


@pytest.fixture(scope="module")
def oracle(model, urdf):
    return MjOracle(model, urdf)


def test_model_structure(model):
    assert model.joint_names == JOINT_NAMES
    assert model.n_joints == 28
    for f in CONTACT_FRAMES:
        model.frame_index(f)
    assert 89.0 < model.total_mass < 92.0
    assert np.all(model.lower < model.upper)
    # the mass moved by back_lbz is everything above the pelvis; by a wrist joint only the hand
    assert model.subtree_mass[model.joint_index("back_lbz")] > 40.0
    assert model.subtree_mass[model.joint_index("l_arm_mwx")] < 3.0


def test_against_mujoco_1000_configs(model, oracle):
    rng = np.random.default_rng(1234)
    Q = model.random_configurations(N_CONFIGS, rng)
    assert np.all((Q >= model.lower) & (Q <= model.upper))
    other = ("head", "l_foot", "r_hand", "utorso", "l_sole")
    err = dict(pos=0.0, rot=0.0, jac=0.0, jrot=0.0, com=0.0, jcom=0.0, task=0.0)
    for q in Q:
        oracle.set_q(q)
        k = model.forward(q)
        err["pos"] = max(err["pos"], np.abs(k.pos - oracle.positions()).max())
        err["rot"] = max(err["rot"], np.abs(k.rot - oracle.rotations()).max())
        Jc = k.point_jacobians(CONTACT_FRAMES)
        Jm = np.vstack([oracle.point_jacobian(f) for f in CONTACT_FRAMES])
        err["jac"] = max(err["jac"], np.abs(Jc - Jm).max())
        f = other[int(rng.integers(len(other)))]
        err["jac"] = max(err["jac"], np.abs(k.point_jacobian(f) - oracle.point_jacobian(f)).max())
        err["jrot"] = max(err["jrot"], np.abs(k.rotation_jacobian(f) - oracle.rotation_jacobian(f)).max())
        err["com"] = max(err["com"], np.abs(k.com() - oracle.com()).max())
        Jcom = oracle.com_jacobian()
        err["jcom"] = max(err["jcom"], np.abs(k.com_jacobian() - Jcom).max())
        err["task"] = max(err["task"], np.abs(k.task_jacobian(CONTACT_FRAMES) - np.vstack([Jm, Jcom])).max())
    print("max errors vs MuJoCo:", err)
    assert err["pos"] <= POS_TOL and err["com"] <= POS_TOL
    assert err["rot"] <= POS_TOL
    for key in ("jac", "jrot", "jcom", "task"):
        assert err[key] <= JAC_TOL, key


def test_floating_base_against_mujoco_freejoint(model, urdf):
    fo = MjOracle(model, urdf, floating=True)
    rng = np.random.default_rng(7)
    from scipy.spatial.transform import Rotation

    for q in model.random_configurations(50, rng):
        quat_xyzw = Rotation.random(random_state=rng).as_quat()
        quat = np.r_[quat_xyzw[3], quat_xyzw[:3]]
        pos = rng.uniform(-1, 1, 3)
        fo.set_q(q, pos, quat)
        Rb = fo.d.xmat[fo.body[0]].reshape(3, 3)
        k = model.forward(q)
        # world-frame positions
        assert np.allclose(k.pos @ Rb.T + pos, fo.positions(), atol=1e-9)
        for f in CONTACT_FRAMES:
            Jf = k.point_jacobian(f, floating_base=True, base_rot=Rb)
            Jm = fo.point_jacobian(f, full=True)
            assert np.abs(Jf[:, 6:] - Jm[:, fo.dadr]).max() < JAC_TOL
            assert np.abs(Jf[:, 0:3] - Jm[:, 0:3]).max() < JAC_TOL
            # MuJoCo's free-joint angular velocity is in the body frame: ω_world = R_b ω_body
            assert np.abs(Jf[:, 3:6] @ Rb - Jm[:, 3:6]).max() < JAC_TOL
        Jc = k.com_jacobian(floating_base=True, base_rot=Rb)
        Jcm = fo.com_jacobian(full=True)
        assert np.abs(Jc[:, 6:] - Jcm[:, fo.dadr]).max() < JAC_TOL
        assert np.abs(Jc[:, 0:3] - Jcm[:, 0:3]).max() < JAC_TOL
        assert np.abs(Jc[:, 3:6] @ Rb - Jcm[:, 3:6]).max() < JAC_TOL
