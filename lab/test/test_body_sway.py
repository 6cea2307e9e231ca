"""No-slip body sway (issue 4 §6), kinematic: contacts stay fixed, the torso really moves, a limit joint is named."""

import numpy as np
import pytest

from body_sway import NOTES_JOINTS, TORSO_FRAME, expmap, rotvec, stance_from_keyframe, sway
from atlas_description import CONTACT_FRAMES


@pytest.fixture(scope="module")
def stance(model):
    return stance_from_keyframe(model)


def _world(model, q, bp, bR, frames):
    k = model.forward(q)
    return k.positions(frames) @ bR.T + bp


def test_notes_joint_set_is_the_notes_11():
    assert len(NOTES_JOINTS) == 11 and len(set(NOTES_JOINTS)) == 11


@pytest.mark.parametrize("direction,sign", [("forward", 1), ("lateral", -1), ("yaw", 1)])
def test_sway_keeps_contacts_and_reports_stop(model, stance, direction, sign):
    q0, R0 = stance
    bp0 = np.array([0.1, -0.2, 0.5])
    step = np.deg2rad(2.0) if direction == "yaw" else 0.01
    r = sway(model, q0, bp0, R0, direction, sign, "notes11", step=step)
    assert r.reach > (np.deg2rad(4) if direction == "yaw" else 0.03)  # it can sway a useful amount
    assert r.reason in ("limit", "singular", "max_travel")
    if r.reason == "limit":
        assert r.limit_joint in NOTES_JOINTS
    c0 = _world(model, q0, bp0, R0, CONTACT_FRAMES)
    moved = np.setdiff1d(np.arange(28), [model.joint_index(n) for n in NOTES_JOINTS])
    for q, bp, bR in zip(r.q_path, r.base_pos_path, r.base_rot_path):
        assert np.linalg.norm(_world(model, q, bp, bR, CONTACT_FRAMES) - c0, axis=1).max() < 1e-4
        np.testing.assert_array_equal(q[moved], q0[moved])  # frozen joints stay frozen
        assert np.all(q >= model.lower - 1e-9) and np.all(q <= model.upper + 1e-9)
    # the torso moved by the commanded amount (translation) or angle (yaw), spine pitch/roll unchanged
    k0, k1 = model.forward(q0), model.forward(r.q_path[-1])
    Ru0 = R0 @ k0.rotation(TORSO_FRAME)
    Ru1 = r.base_rot_path[-1] @ k1.rotation(TORSO_FRAME)
    if direction == "yaw":
        assert np.allclose(rotvec(Ru1 @ Ru0.T), [0, 0, sign * r.reach], atol=1e-6)
    else:
        pu0 = _world(model, q0, bp0, R0, [TORSO_FRAME])[0]
        pu1 = _world(model, r.q_path[-1], r.base_pos_path[-1], r.base_rot_path[-1], [TORSO_FRAME])[0]
        assert np.linalg.norm((pu1 - pu0)[:2]) == pytest.approx(r.reach, abs=1e-6)
        assert np.allclose(Ru1, Ru0, atol=1e-6)


def test_full_body_reaches_further_than_notes_set(model, stance):
    q0, R0 = stance
    a = sway(model, q0, np.zeros(3), R0, "lateral", 1, "notes11", step=0.01)
    b = sway(model, q0, np.zeros(3), R0, "lateral", 1, "full", step=0.01, max_travel=a.reach + 0.05)
    assert b.reach > a.reach
    assert b.contact_residual_max_m < 1e-4


def test_bad_input(model, stance):
    q0, R0 = stance
    with pytest.raises(ValueError):
        sway(model, q0, np.zeros(3), R0, "backflip")
    q = q0.copy()
    q[3] = np.nan
    with pytest.raises(ValueError):
        sway(model, q, np.zeros(3), R0, "forward")
    with pytest.raises(ValueError):
        sway(model, q0, np.zeros(3), R0, "forward", sign=2)
    w = np.array([0.1, -0.2, 0.3])
    np.testing.assert_allclose(rotvec(expmap(w)), w, atol=1e-12)
