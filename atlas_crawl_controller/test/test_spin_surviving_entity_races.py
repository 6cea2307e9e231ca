"""spin_surviving_entity_races: rclpy's entity-destruction race (ros2/rclpy#968) raised while the executor builds its
wait set does not end the spin; a shutdown does; a callback's own error (even an AttributeError) still propagates."""
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
    real = ex._wait_for_ready_callbacks
    calls = []

    def _wait_for_ready_callbacks(*args, **kwargs):     # rclpy's generator, failing as in ros2/rclpy#968
        calls.append(1)
        if len(calls) == 1:
            raise AttributeError("'NoneType' object has no attribute 'handle'")
        if len(calls) == 2:
            raise InvalidHandle("destroyed")
        if len(calls) == 4:
            ex.shutdown(timeout_sec=0.0)
        yield from real(*args, **kwargs)

    ex._wait_for_ready_callbacks = _wait_for_ready_callbacks
    th = threading.Thread(target=spin_surviving_entity_races, args=(ex,), daemon=True)
    th.start()
    th.join(timeout=10.0)
    try:
        assert not th.is_alive() and len(calls) >= 4
    finally:
        rclpy.try_shutdown(context=ctx)


def test_a_callbacks_own_error_still_propagates():
    from atlas_crawl_controller.nodes._common import spin_surviving_entity_races
    ctx, ex = _executor()
    node = rclpy.create_node("spin_test", context=ctx)
    ex.add_node(node)

    def broken():
        raise AttributeError("a real bug in a callback")

    node.create_timer(0.01, broken)
    raised = []

    def spin():
        try:
            spin_surviving_entity_races(ex)
        except AttributeError as e:
            raised.append(str(e))

    th = threading.Thread(target=spin, daemon=True)
    th.start()
    th.join(timeout=5.0)
    try:
        assert raised == ["a real bug in a callback"]      # not swallowed (a swallowing spin would still run)
    finally:
        ex.shutdown(timeout_sec=1.0)
        th.join(timeout=2.0)
        node.destroy_node()
        rclpy.try_shutdown(context=ctx)
