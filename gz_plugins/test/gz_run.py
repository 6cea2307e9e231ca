"""Shared by the gz plugin tests: skip without the full stack, and run a world headless while collecting topics."""
import os
import shutil
import signal
import subprocess
import time

import pytest


def plugin_or_skip():
    if shutil.which("gz") is None:
        pytest.skip("gz (Gazebo Harmonic) not installed: the gz-sim plugin test needs the full stack")
    paths = os.environ.get("GZ_SIM_SYSTEM_PLUGIN_PATH", "").split(os.pathsep)
    if not any(os.path.exists(os.path.join(p, "libatlas_crawl_gz_plugins.so")) for p in paths if p):
        pytest.skip("libatlas_crawl_gz_plugins.so not on GZ_SIM_SYSTEM_PLUGIN_PATH (plugin not built)")


def run_world(tmp_path, sdf_text: str, subscriptions, iterations: int = 6000, timeout_s: float = 120.0):
    """Run ``sdf_text`` in ``gz sim -s -r`` for ``iterations`` steps in real time (DDS discovery takes ~1-2 s, a
    faster run could end before the subscriptions match: 0 messages, seen here), appending every message of each
    ``(msg_type, topic)`` of ``subscriptions`` to the list returned for it. Returns (lists, gz log path)."""
    import rclpy
    world = tmp_path / "world.sdf"
    world.write_text(sdf_text)
    rclpy.init()
    node = rclpy.create_node("test_gz_plugin")
    got = [[] for _ in subscriptions]
    for (typ, topic), out in zip(subscriptions, got):
        node.create_subscription(typ, topic, out.append, 1000)
    log_path = tmp_path / "gz.log"
    log = open(log_path, "w")
    gz = subprocess.Popen(["gz", "sim", "-s", "-r", "--iterations", str(iterations), str(world)], stdout=log,
                          stderr=subprocess.STDOUT, start_new_session=True)
    try:
        t_end = time.monotonic() + timeout_s
        while time.monotonic() < t_end and gz.poll() is None:
            rclpy.spin_once(node, timeout_sec=0.05)
        for _ in range(20):
            rclpy.spin_once(node, timeout_sec=0.05)
    finally:
        if gz.poll() is None:
            os.killpg(gz.pid, signal.SIGINT)
            gz.wait(timeout=20)
        node.destroy_node()
        rclpy.shutdown()
        log.close()
    return got, log_path
