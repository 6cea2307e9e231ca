"""BodyMotion (pelvis speed / angular rate over a window) and the sequencer's settle wait before a goal starts."""
import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from atlas_crawl_controller.body_motion import BodyMotion
from atlas_crawl_controller.gait_sequencer import GaitSequencer, parameter_set, validate_crawl, validate_roll

STANCE_Q = [0, 0.6159, 0, 0.7878]   # crawl stance orientation (heading +x)


def pose_at(p, rotvec=(0.0, 0.0, 0.0)):
    q = (Rotation.from_rotvec(rotvec) * Rotation.from_quat(STANCE_Q)).as_quat()
    return np.r_[p, q]


@settings(max_examples=40, deadline=None)
@given(v=st.tuples(*[st.floats(-2, 2)] * 3), w=st.tuples(*[st.floats(-1.5, 1.5)] * 3))
def test_constant_motion_gives_its_speed_and_rate(v, w):
    """Independent check: a body moving at constant v and ω (world frame) reads ‖v‖ and ‖ω‖ over any window."""
    m = BodyMotion(0.2)
    v, w = np.array(v), np.array(w)
    for k in range(200):                      # 0.4 s at 500 Hz
        t = k * 0.002
        m.update(t, pose_at(np.array([0, 0, 0.5]) + v * t, w * t))
    speed, rate = m.rates()
    assert speed == pytest.approx(np.linalg.norm(v), abs=1e-9)
    assert rate == pytest.approx(np.linalg.norm(w), abs=1e-6)


def test_window_time_reset_and_bad_samples():
    m = BodyMotion(0.2)
    assert m.rates() is None and m.still(0.1, 0.1) is None
    m.update(0.0, pose_at([0, 0, 0.5]))
    m.update(0.05, pose_at([0.01, 0, 0.5]))
    assert m.rates() is None                  # samples span less than half the window: not known yet
    for k in range(2, 60):                    # moving at 0.2 m/s up to t = 0.3 s, then still
        m.update(k * 0.05, pose_at([min(k * 0.05, 0.3) * 0.2, 0, 0.5]))
    assert m.still(0.08, 0.15) is True        # the last 0.2 s were still: the earlier motion has left the window
    m.update(1.0, pose_at([np.nan, 0, 0.5]))  # ignored
    m.update(1.0, np.zeros(7))                # zero quaternion: ignored
    assert m.still(0.08, 0.15) is True
    m.update(0.0, pose_at([5, 0, 0.5]))       # time went back (/sim/reset): history cleared
    assert m.rates() is None
    with pytest.raises(ValueError):
        BodyMotion(0.0)


def test_a_teleport_is_not_motion():
    """/sim/reset puts the robot back at its start with sim time running on: 0.3 m in one 2 ms sample is a
    discontinuity; the window restarts there instead of reading 1.5 m/s for 0.2 s."""
    m = BodyMotion(0.2)
    for k in range(100):
        m.update(k * 0.002, pose_at([1.0, 0, 0.5]))
    m.update(0.2, pose_at([0.7, 0, 0.5]))             # the reset
    assert m.rates() is None
    for k in range(1, 60):
        m.update(0.2 + k * 0.002, pose_at([0.7, 0, 0.5]))
    assert m.still(0.08, 0.15) is True


def _goal(p, **kw):
    g = dict(cycles=1, distance_m=0.0, direction=0, loop_mode=0, method=0, speed_scale=1.0)
    mg, why = validate_crawl(SimpleNamespace(**dict(g, **kw)), p)
    assert mg is not None, why
    return mg


def test_a_crawl_waits_while_the_pelvis_moves_then_starts():
    p = parameter_set().values()
    seq = GaitSequencer(p, script_loader=lambda name: None)
    crawl = _goal(p)
    assert seq.settle_wait(crawl, 0.0) is None                      # nothing observed yet: no reason to wait
    for k in range(100):                                            # lurching sideways at 0.5 m/s, 0.8 rad/s
        t = k * 0.01
        seq.observe(t, pose_at([0, 0.5 * t, 0.5], [0.8 * t, 0, 0]))
    why = seq.settle_wait(crawl, 0.5)
    assert why is not None and "0.50 m/s" in why and "0.80 rad/s" in why
    assert seq.settle_wait(crawl, p["start_settle.timeout_s"]) is None   # bounded: starts anyway after the timeout
    roll, _ = validate_roll(SimpleNamespace(from_side=0, to=0), p)
    assert roll is not None and seq.settle_wait(roll, 0.0) is None       # a roll / recovery starts from anywhere
    for k in range(100, 140):                                       # still again
        seq.observe(k * 0.01, pose_at([0, 0.5, 0.5], [0.8, 0, 0]))
    assert seq.settle_wait(crawl, 0.5) is None
    p2 = parameter_set().values({"start_settle.timeout_s": 0.0})    # 0 = no wait
    seq.set_params(p2, scripts_checked=True)
    for k in range(140, 200):
        t = k * 0.01
        seq.observe(t, pose_at([0, 0.5 * t, 0.5]))
    assert seq.motion.still(0.08, 0.15) is False and seq.settle_wait(crawl, 0.0) is None
    assert math.isfinite(seq.motion.rates()[0])
