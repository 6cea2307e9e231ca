"""Full-stack bringup files checked without Gazebo or ros2_control (default suite): controllers.yaml, the
start state shared with the MuJoCo node, topic agreement between atlas_description's gz tags, the controller
plugin's parameters and the MuJoCo node, and (where launch is installed) that the launch files load.
"""
import math
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import yaml

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(HERE)


def _yaml(path):
    with open(path) as f:
        return yaml.safe_load(f)


def test_controllers_yaml_matches_the_parameter_definitions():
    c = _yaml(os.path.join(HERE, "config", "controllers.yaml"))
    cm = c["controller_manager"]["ros__parameters"]
    assert cm["update_rate"] == 1000
    assert cm["joint_state_broadcaster"]["type"] == "joint_state_broadcaster/JointStateBroadcaster"
    assert cm["crawl_controller"]["type"] == "atlas_crawl_ros2_control/CrawlController"
    plugin_xml = ET.parse(os.path.join(ROOT, "atlas_crawl_ros2_control", "crawl_controller_plugin.xml")).getroot()
    assert plugin_xml.find("class").get("name") == cm["crawl_controller"]["type"]
    core = _yaml(os.path.join(ROOT, "atlas_crawl_controller", "config", "crawl_controller_parameters.yaml"))
    host = _yaml(os.path.join(ROOT, "atlas_crawl_ros2_control", "config", "crawl_controller_plugin_parameters.yaml"))
    core, host = core["crawl_controller"], host["crawl_controller_plugin"]
    assert not set(core) & set(host)          # one definition per parameter
    ours = c["crawl_controller"]["ros__parameters"]
    known = set(core) | set(host) | {"update_rate", "use_sim_time"}
    assert set(ours) <= known, set(ours) - known
    assert ours["update_rate"] == ours["update_rate_hz"]  # ros2_control's rate == the core's view of it
    lo, hi = core["update_rate_hz"]["validation"]["bounds<>"]
    assert lo <= ours["update_rate_hz"] <= hi


def test_one_pelvis_topic_everywhere():
    from atlas_crawl_controller.nodes import topics
    import atlas_description
    r = ET.fromstring(atlas_description.urdf_string(ros2_control=True, sim="gazebo"))
    pp = [p for p in r.findall("gazebo/plugin") if p.get("name") == "atlas_crawl_gz_plugins::PelvisPosePublisher"]
    assert pp and pp[0].find("topic").text.strip() == topics.PELVIS_POSE
    host = _yaml(os.path.join(ROOT, "atlas_crawl_ros2_control", "config", "crawl_controller_plugin_parameters.yaml"))
    assert host["crawl_controller_plugin"]["pelvis_pose_topic"]["default_value"] == topics.PELVIS_POSE
    src = open(os.path.join(ROOT, "gz_plugins", "src", "pelvis_pose_publisher.cpp")).read()
    assert f'topic_{{"{topics.PELVIS_POSE}"}}' in src and f'odom_topic_{{"{topics.PELVIS_ODOM}"}}' in src


def test_rpy_conversion_round_trip():
    from atlas_crawl_bringup.gazebo_start import quat_wxyz_to_rpy
    rng = np.random.default_rng(3)
    for _ in range(50):
        r, p, y = rng.uniform(-3, 3), rng.uniform(-1.5, 1.5), rng.uniform(-3, 3)
        cr, sr, cp, sp, cy, sy = (math.cos(r / 2), math.sin(r / 2), math.cos(p / 2), math.sin(p / 2),
                                  math.cos(y / 2), math.sin(y / 2))
        q = (cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
             cr * cp * sy - sr * sp * cy)
        np.testing.assert_allclose(quat_wxyz_to_rpy(q), (r, p, y), atol=1e-9)
    with pytest.raises(ValueError):
        quat_wxyz_to_rpy((0, 0, 0, 0))


def test_start_state_is_the_mujoco_start_and_feeds_the_xacro(tmp_path):
    from atlas_crawl_bringup.gazebo_start import start_state, write_initial_positions
    from atlas_crawl_controller.keyframes import load_script
    import atlas_description
    joints, quat, z = start_state("crawl_forward")
    s = load_script("crawl_forward")
    assert list(joints.values()) == pytest.approx(list(s.keyframes[0].q))
    q0 = np.asarray(s.start_quat_wxyz)
    assert quat == pytest.approx(tuple(q0 / np.linalg.norm(q0)))
    assert 0.2 < z < 1.2
    path = write_initial_positions(joints, str(tmp_path / "init.yaml"))
    r = ET.fromstring(atlas_description.urdf_string(ros2_control=True, sim="gazebo", initial_positions_file=path))
    j = [e for e in r.findall("ros2_control/joint") if e.get("name") == "l_leg_kny"][0]
    init = [si for si in j.findall("state_interface") if si.get("name") == "position"][0]
    assert float(init.find("param").text) == pytest.approx(joints["l_leg_kny"])


@pytest.mark.parametrize("name", ["gazebo.launch.py", "mock_control.launch.py", "mujoco_crawl.launch.py",
                                  "mujoco_sim_only.launch.py"])
def test_launch_files_load(name):
    pytest.importorskip("launch_ros", reason="launch/launch_ros not installed (embedded default)")
    from launch import LaunchContext
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    src = PythonLaunchDescriptionSource(os.path.join(HERE, "launch", name))
    try:
        ld = src.get_launch_description(LaunchContext())
    except Exception as e:  # needs the installed share dir (ament index)
        if "PackageNotFound" in type(e).__name__:
            pytest.skip(f"atlas_crawl_bringup not installed: {e}")
        raise
    assert ld.entities


def test_the_gazebo_imu_carries_the_mujoco_noise_model(tmp_path):
    """The gz imu sensor on the pelvis has the MuJoCo node's IMU model, as gz-sensors' per-sample figures."""
    from atlas_crawl_bringup.gazebo_start import GZ_BIAS_CORRELATION_TIME_S, gz_imu_figures, write_imu_file
    from atlas_crawl_controller.nodes import topics
    from atlas_crawl_mujoco.sensors import default_noise_params
    import atlas_description
    p = default_noise_params()
    fig = gz_imu_figures()
    dt = 1.0 / p["imu.rate_hz"]
    assert fig["gyro"]["stddev"] == pytest.approx(p["imu.gyro_noise_density_rad_per_s_sqrt_hz"] / math.sqrt(dt))
    assert fig["accel"]["bias_stddev"] == pytest.approx(p["imu.accel_bias_initial_m_per_s2"])
    # gz-sensors' Gauss-Markov bias step, std σ √(τ/2 (1 - e^(-2Δt/τ))), walks as the MuJoCo random walk σ_b √Δt
    for kind, key in (("gyro", "imu.gyro_bias_random_walk_rad_per_s2_sqrt_hz"),
                      ("accel", "imu.accel_bias_random_walk_m_per_s3_sqrt_hz")):
        sig, tau = fig[kind]["dynamic_bias_stddev"], GZ_BIAS_CORRELATION_TIME_S
        step = sig * math.sqrt(-tau / 2 * math.expm1(-2 * dt / tau))
        assert step == pytest.approx(p[key] * math.sqrt(dt), rel=1e-3)
    r = ET.fromstring(atlas_description.urdf_string(ros2_control=True, sim="gazebo",
                                                    imu_file=write_imu_file(path=str(tmp_path / "imu.yaml"))))
    (g,) = [g for g in r.findall("gazebo") if g.find("sensor[@type='imu']") is not None]
    s = g.find("sensor")
    assert g.get("reference") == "pelvis" and s.find("topic").text == topics.IMU
    assert float(s.find("update_rate").text) == pytest.approx(p["imu.rate_hz"])
    for axis in "xyz":
        n = s.find(f"imu/angular_velocity/{axis}/noise")
        assert float(n.find("stddev").text) == pytest.approx(fig["gyro"]["stddev"])
        n = s.find(f"imu/linear_acceleration/{axis}/noise")
        assert float(n.find("dynamic_bias_stddev").text) == pytest.approx(fig["accel"]["dynamic_bias_stddev"])
    # imu.output mean (the MuJoCo default): the ImuMean plugin averages over the sample period; sample: no plugin
    (m,) = [pl for pl in r.findall("gazebo/plugin") if pl.get("name") == "atlas_crawl_gz_plugins::ImuMean"]
    assert m.find("sensor_name").text == s.get("name") and m.find("link_name").text == "pelvis"
    assert float(m.find("window_s").text) == pytest.approx(dt)
    r = ET.fromstring(atlas_description.urdf_string(
        ros2_control=True, sim="gazebo",
        imu_file=write_imu_file({"imu.output": "sample"}, path=str(tmp_path / "imu_sample.yaml"))))
    assert r.find("gazebo/sensor[@type='imu']") is not None
    assert not [pl for pl in r.findall("gazebo/plugin") if pl.get("name") == "atlas_crawl_gz_plugins::ImuMean"]
    plain = ET.fromstring(atlas_description.urdf_string(ros2_control=True, sim="gazebo"))
    assert plain.find("gazebo/sensor") is None                 # no imu_file, no sensor
    with pytest.raises(FileNotFoundError):
        atlas_description.urdf_string(sim="gazebo", imu_file=str(tmp_path / "missing.yaml"))
    with pytest.raises(ValueError, match="rate"):
        gz_imu_figures({"imu.rate_hz": 0.0})
    # published faster than its period (a sliding mean): the sensor's update rate, the same window and noise
    fast = ET.fromstring(atlas_description.urdf_string(ros2_control=True, sim="gazebo", imu_file=write_imu_file(
        path=str(tmp_path / "imu_fast.yaml"), publish_rate_hz=1000.0)))
    s = fast.find("gazebo/sensor[@type='imu']")
    assert float(s.find("update_rate").text) == pytest.approx(1000.0)
    assert float(s.find("imu/angular_velocity/x/noise/stddev").text) == pytest.approx(fig["gyro"]["stddev"])
    (m,) = [pl for pl in fast.findall("gazebo/plugin") if pl.get("name") == "atlas_crawl_gz_plugins::ImuMean"]
    assert float(m.find("window_s").text) == pytest.approx(dt)
    for bad, why in ((100.0, ">= imu.rate_hz"), (math.nan, "finite"), (math.inf, "finite")):
        with pytest.raises(ValueError, match=why):
            gz_imu_figures(None, bad)
    with pytest.raises(ValueError, match="needs imu.output mean"):
        gz_imu_figures({"imu.output": "sample"}, 1000.0)


def test_the_estimate_is_hosted_by_the_controller_plugin(tmp_path):
    from atlas_crawl_bringup.gazebo_start import write_controller_overrides
    base = os.path.join(HERE, "config", "controllers_gazebo.yaml")
    est = _yaml(write_controller_overrides(base, "estimate", str(tmp_path / "e.yaml")))
    ctl = est["crawl_controller"]["ros__parameters"]
    assert ctl["pose_source"] == "estimate" and ctl["estimator_overrides"] == ["leg.ground_height_source=flat",
                                                                              "leg.tilt_measurement=false"]
    assert "pelvis_pose_topic" not in ctl           # the ground truth initialises the hosted estimator, once
    assert est["controller_manager"]["ros__parameters"]["use_sim_time"] is True
    slope = _yaml(write_controller_overrides(base, "estimate", str(tmp_path / "s.yaml"), scene="slope"))
    assert slope["crawl_controller"]["ros__parameters"]["estimator_overrides"] == ["leg.tilt_measurement=false"]
    more = _yaml(write_controller_overrides(base, "estimate", str(tmp_path / "m.yaml"),
                                            estimator_overrides=("leg.accel_noise_m_per_s2_sqrt_hz=2.0",)))
    assert more["crawl_controller"]["ros__parameters"]["estimator_overrides"] == [
        "leg.ground_height_source=flat", "leg.tilt_measurement=false", "leg.accel_noise_m_per_s2_sqrt_hz=2.0"]
    # the plugin's parameters accept them (names and the estimator's validation, as the bridge applies them)
    host = _yaml(os.path.join(ROOT, "atlas_crawl_ros2_control", "config", "crawl_controller_plugin_parameters.yaml"))
    assert {"pose_source", "estimator_overrides", "imu_sensor_name", "estimator_record_path"} <= set(
        host["crawl_controller_plugin"])
    rec = _yaml(write_controller_overrides(base, "estimate", str(tmp_path / "r.yaml"),
                                           estimator_record_path="/tmp/est.npz"))
    assert rec["crawl_controller"]["ros__parameters"]["estimator_record_path"] == "/tmp/est.npz"
    assert "estimator_record_path" not in ctl
    with pytest.raises(ValueError, match="needs pose_source estimate"):
        write_controller_overrides(base, "ground_truth", str(tmp_path / "x.yaml"), estimator_record_path="/tmp/e.npz")
    from atlas_crawl_controller.ros2_control_bridge import parse_overrides
    from atlas_crawl_controller.estimation import default_params
    default_params(parse_overrides(ctl["estimator_overrides"]))
    gt = _yaml(write_controller_overrides(base, "ground_truth", str(tmp_path / "g.yaml")))
    assert gt == _yaml(base)
    with pytest.raises(ValueError, match="pose_source"):
        write_controller_overrides(base, "odometry", str(tmp_path / "x.yaml"))


def test_the_gazebo_limb_contacts_are_the_robot_facts():
    """The limb contact plugin's limbs, links and topic are atlas_description's and topics.py's."""
    from atlas_crawl_controller.nodes import topics
    import atlas_description
    r = ET.fromstring(atlas_description.urdf_string(ros2_control=True, sim="gazebo"))
    (p,) = [p for p in r.findall("gazebo/plugin") if p.get("name") == "atlas_crawl_gz_plugins::LimbContactPublisher"]
    assert p.find("topic").text.strip() == topics.CONTACTS_GT
    limbs = [(e.get("name"), tuple(e.text.split())) for e in p.findall("limb")]
    assert limbs == list(zip(atlas_description.CONTACT_FRAMES, atlas_description.LIMB_LINKS))
    links = {e.get("name") for e in r.findall("link")}
    assert {n for ls in atlas_description.LIMB_LINKS for n in ls} <= links
