"""FallDetector / classify_posture (plain Python): the fall definition, debounce, hysteresis, posture classes."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from atlas_crawl_controller.fall_detector import (CRAWL, LEFT_SIDE, OTHER, PRONE, RIGHT_SIDE, SUPINE, FallDetector,
                                                  classify_posture, fall_parameters, pelvis_angles)

P = fall_parameters()
DT = 0.01


def pose(z=0.54, heading=0.0, pitch=0.25, roll=0.0, x=0.0, y=0.0):
    """Pelvis pose [x y z qx qy qz qw] with the given crawl heading, spine pitch and roll about the spine."""
    R = Rotation.from_euler("z", heading) * Rotation.from_euler("y", math.pi / 2 - pitch) * \
        Rotation.from_euler("z", roll)
    return np.r_[x, y, z, R.as_quat()]


# the shipped crawl stance (crawl_stance.yaml start_quat_wxyz) and the supine start of roll_to_belly
CRAWL_STANCE = np.r_[0, 0, 0.542, 0.01755, 0.61587, 0.01222, 0.78756]
SUPINE_POSE = np.r_[0, 0, 0.150, 0.0, -0.70711, 0.0, 0.70711]


def feed(det, poses, t0=0.0, **kw):
    out = []
    for i, p in enumerate(poses):
        out.append((det.update(t0 + i * DT, p, **kw).fallen))
    return out


def test_angles_and_postures_of_known_poses():
    r, p = pelvis_angles(CRAWL_STANCE)
    assert abs(r) < 0.1 and 0.15 < p < 0.35
    assert classify_posture(CRAWL_STANCE) == CRAWL
    assert classify_posture(SUPINE_POSE) == SUPINE
    assert classify_posture(pose(z=0.18, pitch=0.0)) == PRONE
    assert classify_posture(pose(z=0.2, pitch=0.0, roll=math.pi / 2)) == RIGHT_SIDE
    assert classify_posture(pose(z=0.2, pitch=0.0, roll=-math.pi / 2)) == LEFT_SIDE
    assert classify_posture(pose(z=0.9, pitch=1.5)) == OTHER       # standing: spine vertical
    assert pelvis_angles(pose(roll=0.7, pitch=0.1)) == pytest.approx((0.7, 0.1))


@pytest.mark.parametrize("p, bodies, words", [
    (pose(z=0.15), None, "pelvis height 0.150 m"),
    (pose(roll=1.5, z=0.3), None, "roll about the spine +1.50 rad"),
    (pose(roll=-1.5, z=0.3), None, "left side"),
    (pose(pitch=1.4), None, "spine pitch +1.40 rad"),
    (pose(pitch=-1.0), None, "spine pitch -1.00 rad"),
    (pose(), ["l_hand", "head"], "head touches the floor"),
])
def test_each_condition_is_named_in_the_reason(p, bodies, words):
    det = FallDetector(P)
    fell, why = det.check(p, bodies)
    assert fell and words in why, why
    assert det.check(pose(), ["l_hand", "r_lleg"]) == (False, "")   # limbs touching is normal


def test_flag_rises_within_onset_and_names_the_reason():
    det = FallDetector(P)
    assert not any(feed(det, [pose()] * 20))
    flags = feed(det, [pose(roll=1.4, z=0.3)] * 20, t0=1.0)
    first = flags.index(True)
    assert first * DT <= P["fall.onset_s"] + 1e-9 and first * DT < 0.1
    assert det.state.onset_t == pytest.approx(1.0) and "roll" in det.state.reason
    assert det.state.flagged_t - det.state.onset_t <= 0.1


def test_no_flicker_short_glitches_and_hysteresis():
    det = FallDetector(P)
    # a one-sample glitch (shorter than onset_s) does not raise the flag
    seq = [pose()] * 5 + [pose(z=0.1)] + [pose()] * 5
    assert not any(feed(det, seq))
    # fallen, then the pose hovers just inside the limit (within the clear margin): stays fallen
    feed(det, [pose(roll=1.5, z=0.3)] * 10, t0=1.0)
    assert det.state.fallen
    assert all(feed(det, [pose(roll=1.15, z=0.4)] * 200, t0=2.0))
    # upright, but shorter than clear_s, with one relapse in between: no flicker
    n = int(P["fall.clear_s"] / DT) - 5
    assert all(feed(det, [pose()] * n + [pose(roll=1.5)] + [pose()] * n, t0=5.0))
    # upright for clear_s after the relapse: clears then, once
    t1 = 5.0 + (2 * n + 1) * DT
    flags = feed(det, [pose()] * (int(P["fall.clear_s"] / DT) + 5), t0=t1)
    t_clear = t1 + flags.index(False) * DT
    assert t_clear - (5.0 + (n + 1) * DT) == pytest.approx(P["fall.clear_s"], abs=1.5 * DT)
    assert flags[-1] is False and det.state.reason == ""
    assert flags == sorted(flags, reverse=True)                              # one change: True ... False


def test_support_loss_counts_only_when_support_is_given_and_sustained():
    det = FallDetector(P)
    up = pose()
    none = np.zeros(4, bool)
    n_loss = int(P["fall.support_loss_s"] / DT)
    assert not any(feed(det, [up] * (n_loss - 3), in_contact=none))          # brief loss (a hop) is fine
    feed(det, [up] * 3, t0=1.0, in_contact=np.ones(4, bool))
    flags = feed(det, [up] * (n_loss + 5), t0=2.0, in_contact=none)
    assert flags[-1] and "all support lost" in det.state.reason
    assert det.state.onset_t == pytest.approx(2.0)
    det2 = FallDetector(P.replace(**{"fall.support_loss_s": 0.0}))
    assert not any(feed(det2, [up] * 100, in_contact=none))                # 0 = not used


def test_bad_input():
    det = FallDetector(P)
    with pytest.raises(ValueError, match="7 numbers"):
        det.update(0.0, [0, 0, 0.5])
    with pytest.raises(ValueError, match="quaternion"):
        pelvis_angles([0, 0, 0.5, 0, 0, 0, 0])
    det.update(0.0, [0, 0, 0.1, 0, 0, 0, 1])
    s = det.update(0.01, [0, 0, math.nan, 0, 0, 0, 1])       # skipped, not a fall, not a clear
    assert det.skipped_samples == 1 and not s.fallen
    det.update(1.0, [0, 0, 0.1, 0, 0, 0, 1])
    assert det.state.fallen


# ------------------------------------------------------------------ properties
upright = st.builds(pose, z=st.floats(0.3, 0.8), heading=st.floats(-math.pi, math.pi), pitch=st.floats(-0.5, 0.9),
                    roll=st.floats(-0.75, 0.75), x=st.floats(-50, 50), y=st.floats(-50, 50))


@settings(max_examples=200, deadline=None)
@given(st.lists(upright, min_size=1, max_size=60))
def test_upright_poses_are_never_fallen(poses):
    det = FallDetector(P)
    assert not any(feed(det, poses, in_contact=np.array([True, False, True, True])))
    assert all(det.posture(p) == (CRAWL if p[2] >= P["posture.crawl_min_height_m"] else PRONE) for p in poses)


@settings(max_examples=200, deadline=None)
@given(z=st.floats(0.0, 0.17), heading=st.floats(-math.pi, math.pi), roll=st.floats(-math.pi, math.pi),
       pitch=st.floats(-1.5, 1.5), n=st.integers(4, 30))
def test_pelvis_on_the_floor_is_always_fallen_within_onset(z, heading, roll, pitch, n):
    det = FallDetector(P)
    flags = feed(det, [pose(z=z, heading=heading, roll=roll, pitch=pitch)] * n)
    assert flags[-1] and flags.index(True) * DT <= P["fall.onset_s"] + 1e-9


@settings(max_examples=200, deadline=None)
@given(heading=st.floats(-math.pi, math.pi), pitch=st.floats(-0.6, 1.0), roll=st.floats(-math.pi, math.pi),
       z=st.floats(0.0, 1.0))
def test_heading_and_position_do_not_change_the_verdict(heading, pitch, roll, z):
    det = FallDetector(P)
    a = det.check(pose(z=z, pitch=pitch, roll=roll))[0], det.posture(pose(z=z, pitch=pitch, roll=roll))
    b = det.check(pose(z=z, pitch=pitch, roll=roll, heading=heading, x=3, y=-7))[0], \
        det.posture(pose(z=z, pitch=pitch, roll=roll, heading=heading, x=3, y=-7))
    assert a == b


@settings(max_examples=100, deadline=None)
@given(st.lists(st.booleans(), min_size=10, max_size=200))
def test_flag_changes_at_most_once_per_clear_period(bad):
    """However the condition toggles, the flag never changes twice within clear_s (no flicker)."""
    det = FallDetector(P)
    flags = feed(det, [pose(z=0.1) if b else pose() for b in bad])
    changes = [i for i in range(1, len(flags)) if flags[i] != flags[i - 1]]
    for a, b in zip(changes, changes[1:]):
        assert (b - a) * DT >= min(P["fall.onset_s"], P["fall.clear_s"]) - 1e-9
