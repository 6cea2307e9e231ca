"""WorldDrift (tracking/world_drift.py): the planar rigid fit against scipy's Kabsch, and the per-limb latching."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from atlas_crawl_controller.tracking import TrackerError, WorldDrift, parameter_set
from atlas_crawl_controller.tracking.world_drift import fit_planar_rigid

PATTERN = np.array([[0.66, 0.22, 0.0], [0.66, -0.22, 0.0], [0.0, 0.26, 0.0], [0.0, -0.26, 0.0]])
ALL = np.ones(4, bool)


def _moved(x, yaw, shift):
    c, s = math.cos(yaw), math.sin(yaw)
    out = np.asarray(x, float).copy()
    out[:, :2] = out[:, :2] @ np.array([[c, -s], [s, c]]).T + shift
    return out


@settings(max_examples=60, deadline=None, derandomize=True)
@given(yaw=st.floats(-3.0, 3.0), tx=st.floats(-2, 2), ty=st.floats(-2, 2),
       pts=st.lists(st.tuples(st.floats(-1, 1), st.floats(-1, 1)), min_size=3, max_size=6))
def test_planar_fit_matches_scipy_kabsch(yaw, tx, ty, pts):
    src = np.array(pts)
    if np.linalg.svd(src - src.mean(axis=0), compute_uv=False)[-1] < 0.2:
        return     # (nearly) collinear points: with the noise, a mirror image (3-D: a half turn about an axis in the
        #            plane, which a planar rigid map cannot be) may fit them better
    noise = np.random.default_rng(0).normal(0, 0.005, src.shape)
    dst = _moved(np.c_[src, np.zeros(len(src))], yaw, [tx, ty])[:, :2] + noise
    th, t = fit_planar_rigid(src, dst)
    # independent: scipy's Kabsch on the centred points embedded in 3-D
    a, b = src - src.mean(axis=0), dst - dst.mean(axis=0)
    rot, _ = Rotation.align_vectors(np.c_[b, np.zeros(len(b))], np.c_[a, np.zeros(len(a))])
    ref = rot.as_rotvec()
    assert abs(ref[0]) < 1e-6 and abs(ref[1]) < 1e-6
    assert abs((th - ref[2] + math.pi) % (2 * math.pi) - math.pi) < 1e-6
    c, s = math.cos(th), math.sin(th)
    assert np.allclose(t, dst.mean(axis=0) - np.array([[c, -s], [s, c]]) @ src.mean(axis=0))


def test_planar_fit_refuses_bad_shapes():
    with pytest.raises(ValueError):
        fit_planar_rigid(np.zeros((1, 2)), np.zeros((1, 2)))
    with pytest.raises(ValueError):
        fit_planar_rigid(np.zeros((3, 2)), np.zeros((4, 2)))


def test_a_swing_lands_where_the_plan_wants_it_and_stance_targets_stay():
    """The real contacts slipped by 5 deg and 3 cm: a limb lifting off takes the drift, the others keep theirs."""
    d = WorldDrift(True, time_constant_s=0.0)
    d.start()
    out = d.targets(PATTERN, ALL, ALL)             # no drift yet: the plan as it is
    assert np.allclose(out, PATTERN)
    yaw, shift = math.radians(5.0), np.array([0.03, -0.01])
    sensed = _moved(PATTERN, yaw, shift)            # the IIK held PATTERN; the real contacts are there
    d.observe(sensed, ALL, ALL, 0.02)
    assert d.yaw == pytest.approx(yaw) and np.allclose(d.shift, shift)
    plan = PATTERN.copy()
    plan[0, 0] += 0.05                              # LW's landing point, measured world
    swing = np.array([False, True, True, True])
    out = d.targets(plan, swing, swing)
    assert np.allclose(_moved(out[:1], yaw, shift), plan[:1])        # lands at the plan's point in the real world
    assert np.allclose(out[1:], PATTERN[1:])                          # stance limbs keep their targets
    assert d.heading(0.3) == pytest.approx(0.3 - yaw)
    assert np.allclose(d.to_iik(plan[0, :2]), out[0, :2])
    d.observe(sensed, ALL, ALL, 0.02)                                 # later solves: the stance targets stay
    assert np.allclose(d.targets(plan, ALL, ALL)[1:], PATTERN[1:])


def test_the_plan_com_can_keep_its_place_against_the_latched_stance_targets():
    """The contacts slid 0.2 m while every limb stood (no lift-off, so no limb latched the drift): the stance targets
    stay where the plan put them, and the plan's CoM maps into the IIK's world where it stands against them, not by the
    current D, which would put it 0.2 m off that support (session 24: the one-limb turn on a 10 deg slope at friction
    0.5 fell). That is ``com_target`` "stance"; the default, "current", maps it by the current D."""
    assert parameter_set().values({})["world_drift.com_target"] == "current"
    d = WorldDrift(True, time_constant_s=0.0, com_target="stance")
    d.start()
    d.targets(PATTERN, ALL, ALL)
    shift = np.array([-0.2, 0.05])
    d.observe(_moved(PATTERN, 0.0, shift), ALL, ALL, 0.02)      # everything slid
    assert np.allclose(d.shift, shift)
    com = PATTERN[:, :2].mean(axis=0) + [0.03, 0.0]
    assert np.allclose(d.targets(PATTERN, ALL, ALL), PATTERN)    # the stance targets stay
    assert np.allclose(d.plan_com_to_iik(com), com)              # so does the CoM against them
    assert np.allclose(d.to_iik(com), com - shift)               # the current D: 0.2 m off
    # LW lifts off and latches D; the CoM of the tripod plan follows the tripod's targets (a fit over them)
    swing = np.array([False, True, True, True])
    out = d.targets(PATTERN, swing, swing)
    assert np.allclose(out[1:], PATTERN[1:]) and np.allclose(out[0, :2], PATTERN[0, :2] - shift)
    assert np.allclose(d.plan_com_to_iik(com), com)
    assert d.plan_com_to_iik(None) is None and WorldDrift(False).plan_com_to_iik(com) is com
    cur = WorldDrift(True, time_constant_s=0.0)
    cur.targets(PATTERN, ALL, ALL)
    cur.observe(_moved(PATTERN, 0.0, shift), ALL, ALL, 0.02)
    assert np.allclose(cur.plan_com_to_iik(com), com - shift)
    with pytest.raises(TrackerError):
        WorldDrift(True, com_target="support")


def test_drift_is_filtered_and_needs_three_contacts():
    d = WorldDrift(True, time_constant_s=0.5)
    d.start()
    d.targets(PATTERN, ALL, ALL)
    sensed = _moved(PATTERN, 0.1, np.zeros(2))
    d.observe(sensed, ALL, ALL, 0.05)
    assert d.yaw == pytest.approx(0.01)            # one tenth of the way with dt / tau = 0.1
    two = np.array([True, True, False, False])
    d.observe(_moved(PATTERN, 0.5, np.zeros(2)), two, ALL, 0.05)
    assert d.yaw == pytest.approx(0.01)            # two touching contacts: unchanged
    bad = sensed.copy()
    bad[0, 0] = np.nan
    d.observe(bad, ALL, ALL, 0.05)
    assert d.yaw == pytest.approx(0.01)            # non-finite data: unchanged


def test_disabled_passes_everything_through():
    d = WorldDrift(False)
    d.targets(PATTERN, ALL, ALL)
    d.observe(_moved(PATTERN, 0.3, np.ones(2)), ALL, ALL, 0.1)
    assert d.yaw == 0.0 and np.allclose(d.targets(PATTERN, ALL, ALL), PATTERN)
    assert d.heading(0.2) == 0.2 and d.to_iik(None) is None


def test_bad_time_constant_is_refused():
    with pytest.raises(TrackerError):
        WorldDrift(True, time_constant_s=-1.0)
    with pytest.raises(TrackerError):
        WorldDrift(True, time_constant_s=math.nan)
    from atlas_crawl_controller.parameters import ParameterError
    with pytest.raises(ParameterError):
        parameter_set().values({"world_drift.time_constant_s": -0.1})
