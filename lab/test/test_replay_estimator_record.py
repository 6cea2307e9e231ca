"""replay_estimator_record reproduces a record made by the ros2_control bridge (synthetic: the robot at rest)."""
import numpy as np

import replay_estimator_record as rer
from atlas_crawl_controller import ros2_control_bridge as rb
from atlas_crawl_controller.estimation.recorder import load_record


def test_replay_reproduces_the_bridge_record(tmp_path, capsys):
    path = tmp_path / "r.npz"
    b = rb.Ros2ControlBridge({"update_rate_hz": 250.0}, pose_source="estimate",
                             estimator_overrides=["alignment_s=0.2"], estimator_record_path=str(path))
    b.position[:] = 0.1
    b.velocity[:] = 0.0
    b.activate()
    b.imu[:] = [0.0, 0.0, 0.0, 0.0, 0.0, 9.81]
    b.pelvis[:] = [0.1, 0.2, 0.6, 0, 0, 0, 1]
    t = 0.0
    for i in range(500):
        t += 0.004
        b.position[0] = 0.1 + 0.001 * i                # a moving joint, so the replay has something to follow
        b.update(t, 0.004)
    b.deactivate()
    r = load_record(str(path))
    assert r["meta"] == {"estimator_overrides": ["alignment_s=0.2"]}
    est = rer.replay(r, {"alignment_s": 0.2})
    ok = np.all(np.isfinite(r["estimate"]), axis=1)
    assert ok.sum() > 400 and np.allclose(est[ok], r["estimate"][ok], atol=1e-9)
    assert rer.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "replay vs live: largest position difference 0.00e+00 m" in out


def test_imu_consistency_tells_an_imu_that_misses_the_motion():
    """A pelvis swinging along x (v = 0.3 sin(2π t / 0.8) m/s): an accelerometer reading the motion integrates to the
    ground truth's velocity changes; one reading gravity only (what gz-sim's IMU reads through contact impulses) misses
    them by their full size."""
    t = np.arange(0.0, 10.0, 0.004)
    w = 2 * np.pi / 0.8
    x = -0.3 / w * np.cos(w * t)
    pose = np.zeros((len(t), 7))
    pose[:, 0], pose[:, 6] = x, 1.0
    acc = np.zeros((len(t), 6))
    acc[:, 5] = rer.GRAVITY
    acc[:, 3] = 0.3 * w * np.cos(w * t)                # true specific force in x (pelvis frame = world)
    good = {"t": t, "pose_in": pose, "imu": acc}
    n, e = rer.imu_consistency(good)
    assert n > 10 and np.median(e) < 0.03
    blind = {"t": t, "pose_in": pose, "imu": np.where(np.arange(6) == 5, rer.GRAVITY, 0.0) * np.ones((len(t), 1))}
    n2, e2 = rer.imu_consistency(blind)
    assert n2 == n and np.median(e2) > 0.2
