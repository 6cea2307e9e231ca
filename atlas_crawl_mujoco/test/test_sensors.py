"""The simulated IMU (MuJoCo gyro + accelerometer at the pelvis) and the noise model of atlas_crawl_mujoco.sensors."""
import numpy as np
import pytest

from atlas_crawl_kinematics.rotations import quat_wxyz_to_R
from atlas_crawl_mujoco.sensors import SensorNoise

ZERO = {"imu.gyro_noise_density_rad_per_s_sqrt_hz": 0.0, "imu.gyro_bias_random_walk_rad_per_s2_sqrt_hz": 0.0,
        "imu.gyro_bias_initial_rad_per_s": 0.0, "imu.accel_noise_density_m_per_s2_sqrt_hz": 0.0,
        "imu.accel_bias_random_walk_m_per_s3_sqrt_hz": 0.0, "imu.accel_bias_initial_m_per_s2": 0.0}


def test_imu_at_rest_reads_gravity_up_and_the_pelvis_rotation_rate():
    from atlas_crawl_controller.keyframes import named_pose
    from atlas_crawl_mujoco.sim import AtlasSim
    sim = AtlasSim(seed=0)
    q, quat = named_pose("crawl_stance")
    sim.reset(q, base_quat_wxyz=quat)
    sim.set_joint_targets(q)
    sim.step(1500)
    g, a = sim.imu_true()
    R = quat_wxyz_to_R(sim.pelvis_pose()[1])
    assert np.allclose(R @ a, [0, 0, 9.81], atol=0.05)          # specific force: +g along the world up
    _v, w_world = sim.pelvis_twist()
    assert np.allclose(g, R.T @ w_world, atol=1e-6)            # gyro = pelvis angular velocity, pelvis axes
    sim.close()


def test_noise_is_seeded_and_zero_noise_is_the_identity():
    g0, a0 = np.array([0.1, -0.2, 0.3]), np.array([0.0, 0.0, 9.81])
    a = SensorNoise(seed=3)
    b = SensorNoise(seed=3)
    for k in range(10):
        ga, aa = a.imu(k * 0.004, g0, a0, 0.004)
        gb, ab = b.imu(k * 0.004, g0, a0, 0.004)
        assert np.array_equal(ga, gb) and np.array_equal(aa, ab)
    assert not np.array_equal(SensorNoise(seed=4).imu(0.0, g0, a0, 0.004)[0], SensorNoise(seed=3).imu(0.0, g0, a0,
                                                                                                       0.004)[0])
    z = SensorNoise(ZERO, seed=1)
    g, acc = z.imu(0.0, g0, a0, 0.004)
    assert np.array_equal(g, g0) and np.array_equal(acc, a0)
    q, qd = z.joints(np.ones(28), np.zeros(28))
    assert np.array_equal(q, np.ones(28)) and np.array_equal(qd, np.zeros(28))


def test_white_noise_std_follows_the_density_and_the_bias_walks():
    dens = 0.01
    p = dict(ZERO, **{"imu.gyro_noise_density_rad_per_s_sqrt_hz": dens})
    n = SensorNoise(p, seed=0)
    dt = 0.004
    s = np.array([n.imu(k * dt, np.zeros(3), np.zeros(3), dt)[0] for k in range(20000)])
    assert s.std(axis=0) == pytest.approx(np.full(3, dens / np.sqrt(dt)), rel=0.03)
    walk = dict(ZERO, **{"imu.gyro_bias_random_walk_rad_per_s2_sqrt_hz": 0.01})
    finals = []
    for seed in range(200):
        w = SensorNoise(walk, seed=seed)
        for k in range(250):                           # 1 s
            w.imu(k * dt, np.zeros(3), np.zeros(3), dt)
        finals.append(w.gyro_bias)
    assert np.std(finals) == pytest.approx(0.01, rel=0.15)   # σ_b √t after t = 1 s


def test_bad_noise_parameters_are_refused():
    with pytest.raises(Exception):
        SensorNoise({"imu.gyro_noise_density_rad_per_s_sqrt_hz": -1.0})
    with pytest.raises(ValueError):
        SensorNoise().imu(0.0, np.zeros(3), np.zeros(3), 0.0)
