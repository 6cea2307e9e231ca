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


def test_imu_mean_is_the_mean_of_the_steps_since_the_last_sample_and_integrates_the_velocity():
    """``imu.output`` mean: one IMU sample is the mean of the physics steps since the previous one (exact), and the
    specific force summed over samples gives the velocity change through a contact-rich move better than
    instantaneous samples every 4 steps (which alias the contact impulses)."""
    from atlas_crawl_controller.keyframes import named_pose
    from atlas_crawl_mujoco.sim import AtlasSim
    sim = AtlasSim(seed=0)
    q, quat = named_pose("crawl_stance")
    sim.reset(q, base_quat_wxyz=quat)
    g_none, a_none = sim.imu_mean()                       # no step yet: the instantaneous value
    assert np.array_equal(a_none, sim.imu_true()[1])
    sim.set_joint_targets(q)
    sim.step(500)
    sim.imu_mean()
    gs, accs = [], []
    for _ in range(4):
        sim.step(1)
        g, a = sim.imu_true()
        gs.append(g)
        accs.append(a)
    g_m, a_m = sim.imu_mean()
    assert np.allclose(g_m, np.mean(gs, axis=0), atol=1e-12) and np.allclose(a_m, np.mean(accs, axis=0), atol=1e-12)
    sim.step(3)
    sim.imu_mean()
    sim.step(1)
    assert np.allclose(sim.imu_mean()[1], sim.imu_true()[1], atol=1e-12)   # the sums restart at each sample
    # a push on the crawl stance: the world velocity change vs the integrated specific force (gravity removed)
    v0 = sim.pelvis_twist()[0]
    sim.push((0.0, 60.0, 0.0), 0.1)
    dv_mean, dv_sample = np.zeros(3), np.zeros(3)
    for _ in range(150):                                 # 0.6 s at 250 Hz
        sim.step(4)
        R = quat_wxyz_to_R(sim.pelvis_pose()[1])
        dv_mean += (R @ sim.imu_mean()[1] - [0, 0, 9.81]) * 0.004
        dv_sample += (R @ sim.imu_true()[1] - [0, 0, 9.81]) * 0.004
    dv = sim.pelvis_twist()[0] - v0
    assert np.linalg.norm(dv_mean[:2] - dv[:2]) < np.linalg.norm(dv_sample[:2] - dv[:2])
    assert np.linalg.norm(dv_mean[:2] - dv[:2]) < 0.05
    sim.close()


def test_imu_output_parameter_chooses_mean_or_sample():
    from atlas_crawl_mujoco.sim import AtlasSim
    a, b = AtlasSim(seed=0), AtlasSim(seed=0)
    for sim in (a, b):
        sim.reset("crawl_stance")
        sim.step(7)
    z_mean = SensorNoise(dict(ZERO, **{"imu.output": "mean"}))
    assert np.array_equal(z_mean.imu_from(a, a.time, 0.004)[1], b.imu_mean()[1])     # same physics, same steps
    for sim in (a, b):
        sim.step(7)
    z_sample = SensorNoise(dict(ZERO, **{"imu.output": "sample"}))
    assert np.array_equal(z_sample.imu_from(a, a.time, 0.004)[1], a.imu_true()[1])
    assert not np.array_equal(a.imu_true()[1], b.imu_mean()[1])
    with pytest.raises(ValueError):
        SensorNoise(dict(ZERO, **{"imu.output": "filtered"}))
    a.close()
    b.close()
