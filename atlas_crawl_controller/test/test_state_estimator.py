"""StateEstimator (issue 14 §1): attitude EKF + leg-odometry KF on synthetic, exactly known motions (no physics)."""
import math

import numpy as np
import pytest

from atlas_crawl_controller.estimation import AttitudeEKF, StateEstimator, default_params
from atlas_crawl_kinematics.rotations import R_to_quat_xyzw, rotvec_to_R

G = 9.81
E3 = np.array([0.0, 0.0, 1.0])
#: contacts of a crawl stance in the pelvis frame [m] (LW, RW, LK, RK)
R_BODY = np.array([[0.45, 0.25, -0.55], [0.45, -0.25, -0.55], [-0.35, 0.2, -0.55], [-0.35, -0.2, -0.55]])
Q0 = np.zeros(28)


class World:
    """A rigid pelvis moving over four world-fixed contacts; the kinematics stub sees them from the pelvis."""

    def __init__(self, p0, R0):
        self.p = np.array(p0, float)
        self.R = np.array(R0, float)
        self.v = np.zeros(3)
        self.w_body = np.zeros(3)
        self.c = self.p + (self.R @ R_BODY.T).T
        self.switched = np.zeros(4, bool)

    def __call__(self, q, qd=None, R=None):
        r = (self.R.T @ (self.c - self.p).T).T
        # contact fixed in the world: d/dt R^T (c - p) = -ω × r - R^T v
        rd = -np.cross(self.w_body, r) - self.R.T @ self.v
        return r, rd

    def reset(self):
        pass

    def imu(self, a_world=np.zeros(3)):
        return self.w_body.copy(), self.R.T @ (a_world + G * E3)


def pose7(p, R):
    return np.r_[p, R_to_quat_xyzw(R)]


def run(world, est, seconds, dt=0.004, a_world=np.zeros(3), rng=None, gyro_bias=np.zeros(3), stance=None,
        step=None):
    t = est_time = getattr(run, "t", 0.0)
    n = int(round(seconds / dt))
    for _ in range(n):
        if step is not None:
            step(world, dt)
        t += dt
        g, a = world.imu(a_world)
        g = g + gyro_bias
        if rng is not None:
            g = g + rng.normal(0, 1e-3, 3)
            a = a + rng.normal(0, 2e-2, 3)
        est.update_joints(t, Q0, Q0, np.ones(4, bool) if stance is None else stance)
        est.update_imu(t, g, a)
    run.t = t
    return est_time


@pytest.fixture(autouse=True)
def _clock():
    run.t = 0.0


def make(world, **over):
    est = StateEstimator(default_params(over), kinematics=world)
    est.reset(pose7(world.p, world.R), 0.0)
    return est


def test_attitude_ekf_recovers_a_tilt_and_the_gyro_bias():
    R_true = rotvec_to_R([0.08, -0.05, 0.3])
    bias = np.array([0.004, -0.003, 0.002])
    ekf = AttitudeEKF(1e-3, 1e-5, 0.05, 1.0, G)
    ekf.initialize(rotvec_to_R([0.0, 0.0, 0.3]), np.zeros(3), yaw_std=0.01, bias_std=0.01, tilt_std=0.2)
    rng = np.random.default_rng(0)
    for _ in range(5000):                              # 20 s at rest
        ekf.predict(bias + rng.normal(0, 1e-3, 3), 0.004)
        ekf.update_accel(R_true.T @ (G * E3) + rng.normal(0, 0.02, 3))
    up_err = math.degrees(math.acos(np.clip((ekf.R.T @ E3) @ (R_true.T @ E3), -1, 1)))   # tilt only
    assert up_err < 0.1
    assert np.allclose(ekf.bias[:2], bias[:2], atol=5e-4)   # horizontal bias axes are observable through tilt


def test_attitude_ekf_integrates_the_gyro_exactly_without_accelerometer():
    ekf = AttitudeEKF(1e-4, 1e-6, 0.1, 1.0, G)
    ekf.initialize(np.eye(3), np.zeros(3), yaw_std=1e-3, bias_std=1e-6)
    w = np.array([0.1, -0.2, 0.5])
    for _ in range(250):
        ekf.predict(w, 0.004)
    assert np.allclose(ekf.R, rotvec_to_R(w * 1.0), atol=1e-9)


def test_windowed_tilt_ignores_a_zero_mean_acceleration():
    """A horizontal acceleration oscillating within each window (a crawl's sway) does not tilt the estimate."""
    R_true = rotvec_to_R([0.05, 0.0, 0.0])
    for window, tol_deg in ((1.0, 0.15), (0.0, None)):
        ekf = AttitudeEKF(1e-4, 1e-6, 0.3, 5.0, G, accel_window_s=window, accel_window_noise=0.05)
        ekf.initialize(R_true, np.zeros(3), yaw_std=1e-3, bias_std=1e-6, tilt_std=1e-3)
        worst = 0.0
        for k in range(2500):
            a_lin = np.array([2.0 * math.sin(2 * math.pi * k * 0.004 / 0.5), 0.0, 0.0])   # ±2 m/s², 2 Hz
            ekf.predict(np.zeros(3), 0.004)
            ekf.update_accel(R_true.T @ (a_lin + G * E3))
            worst = max(worst, math.degrees(math.acos(np.clip((ekf.R.T @ E3) @ (R_true.T @ E3), -1, 1))))
        if tol_deg is not None:
            assert worst < tol_deg, worst
        else:
            assert worst > 0.3, worst        # per-sample updates do tilt (~0.47°): the reason for the window


def test_static_robot_stays_put_with_noisy_imu():
    world = World([1.0, -2.0, 0.55], rotvec_to_R([0.0, 0.0, 0.7]))
    est = make(world)
    rng = np.random.default_rng(1)
    run(world, est, 2.1, rng=rng, gyro_bias=np.array([0.002, -0.001, 0.0015]))      # alignment
    assert est.running
    run(world, est, 10.0, rng=rng, gyro_bias=np.array([0.002, -0.001, 0.0015]))
    e = est.estimate()
    assert np.linalg.norm(e.position - world.p) < 0.005
    assert np.linalg.norm(e.velocity_world) < 0.01
    yaw_err = math.degrees(abs(math.atan2((e.R @ [1, 0, 0])[1], (e.R @ [1, 0, 0])[0]) - 0.7))
    assert yaw_err < 0.2                               # the bias was measured during the alignment
    assert e.pose_covariance.shape == (6, 6) and np.all(np.linalg.eigvalsh(e.pose_covariance) >= -1e-12)


def test_translating_pelvis_is_tracked_by_leg_odometry():
    """The pelvis slides forward at 0.2 m/s over fixed contacts: position from kinematics, not from integrating the
    accelerometer (which sees no acceleration)."""
    world = World([0.0, 0.0, 0.55], np.eye(3))
    est = make(world)
    run(world, est, 2.1)

    def step(w, dt):
        w.v = np.array([0.2, 0.0, 0.0])
        w.p = w.p + w.v * dt
    run(world, est, 5.0, step=step)
    e = est.estimate()
    assert abs(e.position[0] - world.p[0]) < 0.01 and abs(world.p[0] - 1.0) < 0.01
    assert np.allclose(e.velocity_world, [0.2, 0, 0], atol=0.01)


def test_swing_contact_does_not_drag_the_estimate():
    """One contact in swing moves with the body (its world position is not held): the estimate follows the three
    stance contacts."""
    world = World([0.0, 0.0, 0.55], np.eye(3))
    est = make(world)
    run(world, est, 2.1)
    stance = np.array([False, True, True, True])

    def step(w, dt):
        w.v = np.array([0.1, 0.05, 0.0])
        w.p = w.p + w.v * dt
        w.c[0] = w.p + R_BODY[0]            # the swing limb travels with the pelvis
    run(world, est, 3.0, step=step, stance=stance)
    e = est.estimate()
    assert np.linalg.norm(e.position[:2] - world.p[:2]) < 0.01


@pytest.mark.parametrize("max_imu_only_s, bounded", [(0.1, True), (0.0, False)])
def test_imu_only_stretch_is_bounded(max_imu_only_s, bounded):
    """A diverged velocity state (as after the robot rocked off every planned stance contact: 0.85 m/s of error in a
    key-frame crawl) makes every contact fail the slip gate against the prediction and, without a bound, the IMU
    alone carries the estimate away. ``leg.max_imu_only_s`` re-tests the contacts against their own consensus."""
    world = World([0.0, 0.0, 0.55], np.eye(3))
    est = make(world, **{"leg.max_imu_only_s": max_imu_only_s})
    run(world, est, 2.1)
    est.leg.kf.x[3:6, 0] = [0.8, 0.5, 0.0]
    run(world, est, 1.0)
    err = float(np.linalg.norm(est.estimate().position - world.p))
    assert (err < 0.05) == bounded, err


def test_bad_input_changes_nothing_and_says_why():
    world = World([0.0, 0.0, 0.55], np.eye(3))
    est = make(world)
    run(world, est, 2.5)
    before = est.estimate()
    t = run.t
    assert not est.update_imu(t + 0.004, [np.nan, 0, 0], [0, 0, G])
    assert "non-finite" in est.reason
    assert not est.update_imu(t - 0.1, [0, 0, 0], [0, 0, G])
    assert "did not advance" in est.reason
    assert not est.update_joints(t + 0.004, np.full(28, np.inf), Q0, np.ones(4, bool))
    assert not est.update_joints(t + 0.004, np.zeros(5), Q0, np.ones(4, bool))
    after = est.estimate()
    assert np.array_equal(before.position, after.position) and np.array_equal(before.R, after.R)
    with pytest.raises(ValueError):
        est.reset([0, 0, np.nan, 0, 0, 0, 1])
    assert est.running                                   # a refused reset changed nothing
    # a gap longer than input_timeout_s is not integrated, and the estimate goes stale
    assert est.estimate(t + 1.0) is None
    assert not est.update_imu(t + 1.0, [0, 0, 0], [0, 0, G])
    assert "gap" in est.reason


def test_no_estimate_before_alignment_ends():
    world = World([0.0, 0.0, 0.55], np.eye(3))
    est = StateEstimator(default_params({"alignment_s": 0.5}), kinematics=world)
    assert est.estimate() is None and "not initialised" in est.reason
    est.reset(pose7(world.p, world.R), 0.0)
    run(world, est, 0.3)
    assert est.aligning and est.estimate() is None
    world.w_body = np.array([0.0, 0.05, 0.0])          # it moves: the alignment restarts
    run(world, est, 0.3)
    assert est.aligning and "moves" in est.reason
    world.w_body = np.zeros(3)
    run(world, est, 0.3)
    assert est.aligning                                # 0.5 s of stillness not reached yet
    run(world, est, 0.4)
    assert est.running and est.estimate() is not None


def test_leg_odometry_impact_gate_does_not_integrate_a_spike():
    """leg.accel_impact_gate_m_per_s2: a specific-force sample beyond the gate is not integrated into the velocity;
    its velocity change goes into the velocity covariance instead (off by default: integrated as it is)."""
    from atlas_crawl_controller.estimation.leg_odometry_kf import LegOdometryKF
    p = {k[len("leg."):]: v for k, v in default_params().as_dict().items() if k.startswith("leg.")}
    r = np.array([[0.4, 0.2, -0.4], [0.4, -0.2, -0.4], [-0.3, 0.2, -0.5], [-0.3, -0.2, -0.5]])
    spike = np.array([80.0, 0.0, 9.81])              # 80 m/s^2 forward for one 4 ms sample
    out = {}
    for gate in (0.0, 30.0):
        kf = LegOdometryKF({**p, "accel_impact_gate_m_per_s2": gate})
        kf.initialize(np.zeros(3), np.eye(3), r)
        P0 = kf.P[3, 3]
        kf.predict(spike, 0.004, np.ones(4))
        out[gate] = (kf.velocity[0], kf.P[3, 3] - P0, kf.impacts)
    assert abs(out[0.0][0] - 0.32) < 1e-9 and out[0.0][2] == 0              # 80 * 0.004 integrated
    assert out[30.0][0] == 0.0 and out[30.0][2] == 1
    assert out[30.0][1] > out[0.0][1] + 0.32 ** 2 * 0.99                    # (|a| dt)^2 added to P_vv
    kf = LegOdometryKF({**p, "accel_impact_gate_m_per_s2": 30.0})
    kf.initialize(np.zeros(3), np.eye(3), r)
    kf.predict(np.array([1.0, 0.0, 9.81]), 0.004, np.ones(4))                # an ordinary sample: integrated
    assert abs(kf.velocity[0] - 0.004) < 1e-12 and kf.impacts == 0


def _leg_kf(**over):
    from atlas_crawl_controller.estimation.leg_odometry_kf import LegOdometryKF
    p = {k[len("leg."):]: v for k, v in default_params().as_dict().items() if k.startswith("leg.")}
    kf = LegOdometryKF({**p, **over})
    kf.initialize(np.zeros(3), np.eye(3), np.array([[0.4, 0.2, -0.4], [0.4, -0.2, -0.4], [-0.3, 0.2, -0.5],
                                                     [-0.3, -0.2, -0.5]]))
    return kf


def test_leg_odometry_velocity_uncertainty_grows_with_the_integrated_acceleration():
    """leg.accel_relative_noise k: each IMU sample adds (k |a| dt)^2 to the velocity variance, so after a hard
    landing the slip gate widens and the stance contacts can correct the velocity again (a quiet sample adds ~0)."""
    a = np.array([30.0, 0.0, 9.81])                 # 30 m/s^2 forward (a landing), one 4 ms sample
    grow = {}
    for k in (0.0, 0.5):
        kf = _leg_kf(accel_relative_noise=k)
        P0 = kf.P[3:6, 3:6].copy()
        kf.predict(a, 0.004, np.ones(4))
        grow[k] = np.diag(kf.P[3:6, 3:6] - P0)
        assert abs(kf.velocity[0] - 0.12) < 1e-12    # the acceleration itself is integrated either way
    assert np.allclose(grow[0.5] - grow[0.0], (0.5 * 30.0 * 0.004) ** 2)
    kf, kf0 = _leg_kf(accel_relative_noise=0.5), _leg_kf()
    for f in (kf, kf0):
        f.predict(np.array([0.0, 0.0, 9.81]), 0.004, np.ones(4))   # at rest: nothing added
    assert np.allclose(kf.P, kf0.P)


def test_the_diagonal_support_values_apply_on_a_support_diagonal_and_for_hold_s_after():
    """leg.diagonal_support.*: in use while only LW+RK or RW+LK is expected in stance and for hold_s after; a
    tripod, two limbs on one side or all four never switch them on, so a statically stable crawl keeps the leg.*
    values (its estimate is the same to the bit, session 29)."""
    world = World([0.0, 0.0, 0.55], np.eye(3))
    est = make(world)
    run(world, est, 2.1)                               # aligned and running
    hold = est.params["leg.diagonal_support.hold_s"]
    for st in ([1, 1, 1, 0], [1, 1, 0, 0], [0, 1, 0, 1], [1, 1, 1, 1]):
        run(world, est, 0.2, stance=np.array(st, bool))
        assert not est.diagonal_support_profile, st
    run(world, est, 0.2, stance=np.array([0, 1, 1, 0], bool))
    assert est.diagonal_support_profile
    assert est.leg.param("slip_gate_chi2") == est.params["leg.diagonal_support.slip_gate_chi2"]
    run(world, est, hold - 0.05, stance=np.ones(4, bool))
    assert est.diagonal_support_profile                # the landing after the swing
    run(world, est, 0.1, stance=np.ones(4, bool))
    assert not est.diagonal_support_profile
    assert est.leg.param("slip_gate_chi2") == est.params["leg.slip_gate_chi2"]
    off = make(world, **{"leg.diagonal_support.hold_s": 0.0})
    run(world, off, 2.1)
    run(world, off, 0.2, stance=np.array([1, 0, 0, 1], bool))
    assert not off.diagonal_support_profile


@pytest.mark.parametrize("tilt_measurement", [False, True])
def test_stance_contacts_remove_the_tilt_an_accelerometer_bias_leaves(tilt_measurement):
    """An accelerometer bias b reads as a tilt of b / g (0.05 m/s² ≈ 0.29°); the stance contacts on the flat ground
    see it (leg.tilt_measurement) and the estimate's tilt goes back to the truth."""
    world = World([0.0, 0.0, 0.55], rotvec_to_R([0.0, 0.0, 0.4]))
    est = make(world, **{"leg.tilt_measurement": tilt_measurement, "leg.ground_height_source": "flat"})
    bias = np.array([0.03, 0.05, 0.0])
    orig = world.imu
    world.imu = lambda a_world=np.zeros(3): (orig(a_world)[0], orig(a_world)[1] + bias)
    run(world, est, 12.0, rng=np.random.default_rng(2))
    e = est.estimate()
    tilt_err = math.degrees(math.acos(np.clip((e.R.T @ E3) @ (world.R.T @ E3), -1, 1)))
    if tilt_measurement:
        assert tilt_err < 0.05, tilt_err
        assert est.attitude.tilt_used > 1000 and est.tilt_reason == ""
    else:
        assert tilt_err > 0.25, tilt_err                 # b / g = 0.34°: what the contacts correct
