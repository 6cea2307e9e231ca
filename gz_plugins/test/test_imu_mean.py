"""Headless gz-sim run of the ImuMean plugin: a 10 kg box with an IMU at its link origin dropped 1 m onto the
ground. Landing takes the box from √(2 g h) = 4.43 m/s down to rest, so the IMU's acceleration (specific force − g)
summed over the samples from the end of the free fall on must come to +4.43 m/s. With ImuMean it must (within 10 %);
gz-sim's own per-step value (DART's acceleration without the contact impulse) is printed beside it, not asserted.
A window that is not finite and > 0 is reported and leaves gz-sim's values as they are.

Skipped (reported as skipped) where gz-sim or the plugin is not installed — the embedded default.
"""
import json
import math
import os
import signal
import subprocess
import time

import pytest

from gz_run import plugin_or_skip

H_M = 1.0
G = 9.80665      # gz-sim's default gravity magnitude

WORLD = """<?xml version="1.0"?>
<sdf version="1.9">
  <world name="imu_mean_test">
    <physics name="1ms" type="dart"><max_step_size>0.001</max_step_size><real_time_factor>1</real_time_factor></physics>
    <plugin filename="gz-sim-physics-system" name="gz::sim::systems::Physics"/>
    <plugin filename="gz-sim-imu-system" name="gz::sim::systems::Imu"/>
    <model name="ground"><static>true</static>
      <link name="l"><collision name="c"><geometry><box><size>5 5 0.1</size></box></geometry></collision></link>
      <pose>0 0 -0.05 0 0 0</pose>
    </model>
    <model name="atlas">
      <pose>0 0 {z0} 0 0 0</pose>
      <link name="pelvis">
        <inertial><mass>10</mass><inertia><ixx>0.15</ixx><iyy>0.15</iyy><izz>0.15</izz></inertia></inertial>
        <collision name="c"><geometry><box><size>0.3 0.3 0.3</size></box></geometry></collision>
        <sensor name="imu" type="imu"><always_on>true</always_on><update_rate>250</update_rate>
          <topic>/test_imu_{tag}</topic></sensor>
      </link>
      {plugin}
    </model>
  </world>
</sdf>
"""
PLUGIN = """<plugin filename="atlas_crawl_gz_plugins" name="atlas_crawl_gz_plugins::ImuMean">
        <link_name>pelvis</link_name><sensor_name>imu</sensor_name><window_s>{window_s}</window_s></plugin>"""


def _drop(tmp_path, tag: str, window_s=None):
    """Run the drop for 3 s of sim time; returns [(t, f_z)] of the IMU samples (gz.msgs.IMU as JSON)."""
    world = tmp_path / f"world_{tag}.sdf"
    world.write_text(WORLD.format(z0=H_M + 0.15, tag=tag,
                                  plugin="" if window_s is None else PLUGIN.format(window_s=window_s)))
    out = open(tmp_path / f"imu_{tag}.jsonl", "w")
    echo = subprocess.Popen(["gz", "topic", "-e", "-t", f"/test_imu_{tag}", "--json-output"], stdout=out,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(1.0)                                   # the subscription first: the fall is over in 0.45 s
    log = open(tmp_path / f"gz_{tag}.log", "w")
    gz = subprocess.run(["gz", "sim", "-s", "-r", "-v", "3", "--iterations", "3000", str(world)], stdout=log,
                        stderr=subprocess.STDOUT, timeout=120)
    time.sleep(0.5)
    os.killpg(echo.pid, signal.SIGINT)
    echo.wait(timeout=10)
    out.close()
    log.close()
    assert gz.returncode == 0, (tmp_path / f"gz_{tag}.log").read_text()[-2000:]
    samples = []
    with open(tmp_path / f"imu_{tag}.jsonl") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            m = json.loads(line)
            st = m["header"]["stamp"]
            t = float(st.get("sec", 0)) + 1e-9 * float(st.get("nsec", 0))
            samples.append((t, float(m["linearAcceleration"].get("z", 0.0))))
    return samples


def _landing_dv(samples):
    """Σ (f_z − g) Δt over the samples from the last free-fall sample (|f_z| < 1) on: the landing's velocity change."""
    ff = [i for i, (_t, fz) in enumerate(samples) if abs(fz) < 1.0]
    assert ff, "no free-fall sample: the subscription missed the fall"
    i0 = ff[-1]
    return sum((fz - G) * (samples[i][0] - samples[i - 1][0]) for i, (_t, fz) in enumerate(samples) if i > i0)


def test_the_imu_reads_the_landing_impulse(tmp_path):
    plugin_or_skip()
    mean = _drop(tmp_path, "mean", 0.004)
    raw = _drop(tmp_path, "raw")
    assert len(mean) > 300 and len(raw) > 300, (len(mean), len(raw))
    v_land = math.sqrt(2 * G * H_M)
    dv_mean, dv_raw = _landing_dv(mean), _landing_dv(raw)
    print(f"landing velocity change from the IMU: ImuMean {dv_mean:+.3f} m/s, gz-sim per step {dv_raw:+.3f} m/s, "
          f"true {v_land:+.3f} m/s")
    assert dv_mean == pytest.approx(v_land, rel=0.10)
    assert mean[-1][1] == pytest.approx(G, abs=0.1)       # at rest: the specific force is gravity


def test_a_bad_window_is_an_error_and_changes_nothing(tmp_path):
    plugin_or_skip()
    bad = _drop(tmp_path, "bad", -1.0)
    raw = _drop(tmp_path, "raw")
    assert "window_s must be finite and > 0" in (tmp_path / "gz_bad.log").read_text()
    assert _landing_dv(bad) == pytest.approx(_landing_dv(raw), abs=0.05)    # gz-sim's own IMU values, untouched
