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


def test_a_sliding_support_bounds_the_correction_of_swing_and_com_targets():
    """The contacts slid 0.2 m while every limb stood (no lift-off, so no limb latched the drift): the stance targets
    stay where the plan put them, and the plan's CoM and the next swing target go where that held support puts them,
    moved towards the current D by at most ``max_correction_m`` (unbounded: 0.2 m off that support; session 25, the
    one-limb turn on a 10 deg slope at friction 0.5 stepped ever further after the slide and fell in 3 of 5)."""
    c_max = parameter_set().values({})["world_drift.max_correction_m"]
    assert 0 < c_max < 0.1
    shift = np.array([-0.2, 0.05])
    toward = -shift / np.linalg.norm(shift) * c_max           # the bounded step towards D^-1
    com = PATTERN[:, :2].mean(axis=0) + [0.03, 0.0]
    swing = np.array([False, True, True, True])
    d = WorldDrift(True, time_constant_s=0.0, max_correction_m=c_max)
    full = WorldDrift(True, time_constant_s=0.0)
    for w in (d, full):
        w.targets(PATTERN, ALL, ALL)
        w.observe(_moved(PATTERN, 0.0, shift), ALL, ALL, 0.02)      # everything slid
        assert np.allclose(w.shift, shift)
        assert np.allclose(w.targets(PATTERN, ALL, ALL), PATTERN)  # the stance targets stay
    assert np.allclose(d.plan_com_to_iik(com), com + toward)
    assert np.allclose(full.plan_com_to_iik(com), com - shift)     # unbounded: by the current D
    out = d.targets(PATTERN, swing, swing)                          # LW lifts off
    assert np.allclose(out[1:], PATTERN[1:]) and np.allclose(out[0, :2], PATTERN[0, :2] + toward)
    assert np.allclose(full.targets(PATTERN, swing, swing)[0, :2], PATTERN[0, :2] - shift)
    assert d.plan_com_to_iik(None) is None and WorldDrift(False).plan_com_to_iik(com) is com
    for bad in (-0.01, math.nan):
        with pytest.raises(TrackerError):
            WorldDrift(True, max_correction_m=bad)


def test_a_steady_drift_is_made_up_in_bounded_steps():
    """The drift stays (5 deg, 3 cm) while the limbs take turns: each swing target lies within ``max_correction_m`` of
    where the held support puts it, and after a few cycles a swing lands where the plan wants it in the real world."""
    d = WorldDrift(True, time_constant_s=0.0, max_correction_m=0.02)
    yaw, shift = math.radians(5.0), np.array([0.03, -0.01])
    iik = d.targets(PATTERN, ALL, ALL)
    err = []
    for _ in range(4):
        for limb in range(4):
            d.observe(_moved(iik, yaw, shift), ALL, ALL, 0.02)    # the real contacts: the IIK's targets, drifted
            m = np.ones(4, bool)
            m[limb] = False
            th, t = fit_planar_rigid(PATTERN[m, :2], iik[m, :2])      # the held support's map F
            held = np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]]) @ PATTERN[limb, :2] + t
            iik = d.targets(PATTERN, m, m)
            assert np.linalg.norm(iik[limb, :2] - held) <= 0.02 + 1e-9
            iik = d.targets(PATTERN, ALL, ALL)
            err.append(np.linalg.norm(_moved(iik[limb:limb + 1], yaw, shift)[0, :2] - PATTERN[limb, :2]))
    assert err[0] > 0.02 and err[-1] < 1e-6


def test_a_plan_may_ask_for_its_own_bound():
    """``set_bound`` (a reference's ``drift_correction_max_m``): the swing target moves towards D by at most the bound
    asked; None gives back the configured bound, and ``start`` forgets the request."""
    shift = np.array([-0.2, 0.05])
    swing = np.array([False, True, True, True])
    d = WorldDrift(True, time_constant_s=0.0, max_correction_m=0.02)
    d.targets(PATTERN, ALL, ALL)
    d.observe(_moved(PATTERN, 0.0, shift), ALL, ALL, 0.02)
    for b, expect in ((0.005, 0.005), (0.0, 0.0), (None, 0.02)):
        d.set_bound(b)
        assert d.max_correction_m == expect
        out = d.targets(PATTERN, swing, swing)
        assert np.linalg.norm(out[0, :2] - PATTERN[0, :2]) == pytest.approx(expect, abs=1e-9)
        d.targets(PATTERN, ALL, ALL)
    d.set_bound(0.001)
    d.start()
    assert d.max_correction_m == 0.02 and not d.yaw_in_full
    for bad in (-0.01, math.nan):
        with pytest.raises(TrackerError):
            d.set_bound(bad)
    assert d.max_correction_m == 0.02


def test_an_asked_bound_makes_up_the_rotational_slip_in_full_and_bounds_the_shift():
    """The contacts turned 5 deg about the origin while every limb stood: with the configured bound the next swing
    target stays within 0.02 m of where the held support puts it (F x), about 4 cm short of D^-1 x; with a bound asked
    (a straight crawl's) it is F x turned about the held centroid by D's yaw, moved on by at most that bound."""
    yaw = math.radians(5.0)
    swing = np.array([False, True, True, True])
    x = PATTERN[0, :2]
    out = {}
    for ask in (None, 0.005):
        d = WorldDrift(True, time_constant_s=0.0, max_correction_m=0.02)
        d.targets(PATTERN, ALL, ALL)
        d.observe(_moved(PATTERN, yaw, np.zeros(2)), ALL, ALL, 0.02)
        d.set_bound(ask)
        assert d.yaw_in_full == (ask is not None)
        out[ask] = d.targets(PATTERN, swing, swing)[0, :2]
        assert np.allclose(d.targets(PATTERN, swing, swing)[1:], PATTERN[1:])      # the held limbs stay
    full = _moved(PATTERN[:1], -yaw, np.zeros(2))[0, :2]                         # D^-1 x
    assert np.linalg.norm(out[None] - x) <= 0.02 + 1e-9
    assert np.linalg.norm(out[None] - full) > 0.035
    c = PATTERN[1:, :2].mean(axis=0)
    turned = c + _moved(np.c_[(x - c)[None], [0.0]], -yaw, np.zeros(2))[0, :2]      # F x (= x) turned about c
    assert np.linalg.norm(out[0.005] - turned) == pytest.approx(0.005, abs=1e-9)
    assert np.linalg.norm(out[0.005] - full) < np.linalg.norm(turned - full) < np.linalg.norm(out[None] - full)


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
