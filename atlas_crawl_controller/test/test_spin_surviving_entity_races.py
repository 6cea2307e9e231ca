"""spin_surviving_entity_races: rclpy's entity-destruction race (ros2/rclpy#968) raised inside spin_once does not end
the spin; a shutdown does; any other error still propagates."""
import threading

import pytest

rclpy = pytest.importorskip("rclpy")


def _executor():
    from rclpy.executors import SingleThreadedExecutor
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    return ctx, SingleThreadedExecutor(context=ctx)


def test_the_race_is_survived_and_a_shutdown_ends_the_spin():
    from rclpy._rclpy_pybind11 import InvalidHandle
    from atlas_crawl_controller.nodes._common import spin_surviving_entity_races
    ctx, ex = _executor()
    calls = []
    real = ex.spin_once

    def racy(timeout_sec=None):
        calls.append(1)
        if len(calls) == 1:
            raise AttributeError("'NoneType' object has no attribute 'handle'")   # rclpy#968, as observed
        if len(calls) == 2:
            raise InvalidHandle("destroyed")
        if len(calls) == 5:
            ex.shutdown(timeout_sec=0.0)
        return real(timeout_sec=0.01)

    ex.spin_once = racy
    th = threading.Thread(target=spin_surviving_entity_races, args=(ex,), daemon=True)
    th.start()
    th.join(timeout=10.0)
    try:
        assert not th.is_alive() and len(calls) == 5
    finally:
        rclpy.try_shutdown(context=ctx)


def test_other_errors_still_propagate():
    from atlas_crawl_controller.nodes._common import spin_surviving_entity_races
    ctx, ex = _executor()

    def broken(timeout_sec=None):
        raise ValueError("a real bug")

    ex.spin_once = broken
    try:
        with pytest.raises(ValueError):
            spin_surviving_entity_races(ex)
    finally:
        rclpy.try_shutdown(context=ctx)
