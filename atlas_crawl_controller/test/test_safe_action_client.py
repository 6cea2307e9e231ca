"""SafeActionClient closes rclpy #1123: a goal response taken by the executor thread before the sending thread has
registered the request's future is dropped, and the future never completes. The window is widened here by a
handle proxy that sleeps after ``send_goal_request``; the plain ActionClient loses the response, the safe one not."""
import random
import threading
import time

import pytest

rclpy = pytest.importorskip("rclpy")
from rclpy.action import ActionClient, ActionServer  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402

from atlas_crawl_controller.nodes.goal_client import SafeActionClient  # noqa: E402
from atlas_crawl_msgs.action import Crawl  # noqa: E402


class _SlowSendHandle:
    """Delegates to the rcl action client handle; sleeps after sending a goal request (the race window)."""

    def __init__(self, inner, delay_s):
        self._inner, self._delay_s = inner, delay_s

    def send_goal_request(self, request):
        seq = self._inner.send_goal_request(request)
        time.sleep(self._delay_s)
        return seq

    def __enter__(self):
        return self._inner.__enter__()

    def __exit__(self, *a):
        return self._inner.__exit__(*a)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _goal_answered(client_cls) -> bool:
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=random.SystemRandom().randint(201, 230))
    node = rclpy.create_node("safe_action_client_test", context=ctx)
    ex = SingleThreadedExecutor(context=ctx)
    ex.add_node(node)

    def execute(gh):
        gh.succeed()
        return Crawl.Result(success=True)

    ActionServer(node, Crawl, "/race_test_crawl", execute_callback=execute)
    cli = client_cls(node, Crawl, "/race_test_crawl")
    th = threading.Thread(target=ex.spin, daemon=True)
    th.start()
    try:
        assert cli.wait_for_server(timeout_sec=10.0)
        cli._client_handle = _SlowSendHandle(cli._client_handle, 0.5)
        fut = cli.send_goal_async(Crawl.Goal(cycles=1))
        ev = threading.Event()
        fut.add_done_callback(lambda _f: ev.set())
        return ev.wait(5.0)
    finally:
        ex.shutdown(timeout_sec=2.0)
        th.join(timeout=2.0)
        node.destroy_node()
        rclpy.try_shutdown(context=ctx)


def test_plain_action_client_loses_the_response_in_the_window():
    """Shows the upstream race is real with this rclpy (if it is ever fixed, this test says so)."""
    assert not _goal_answered(ActionClient)


def test_safe_action_client_gets_the_response():
    assert _goal_answered(SafeActionClient)


def test_destroying_clients_while_the_executor_spins_keeps_it_alive():
    """run_graph_trial destroys its clients while the graph's executor spins the node; rclpy's destroy() frees the
    handle the executor may be about to wait on ("action client pointer is invalid" killed the executor)."""
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=random.SystemRandom().randint(201, 230))
    node = rclpy.create_node("safe_action_client_destroy", context=ctx)
    ex = SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    died = []

    def spin():
        try:
            ex.spin()
        except Exception as e:  # noqa: BLE001 — what the test looks for
            died.append(e)
    th = threading.Thread(target=spin, daemon=True)
    th.start()
    try:
        for _ in range(200):
            SafeActionClient(node, Crawl, "/destroy_test_crawl").destroy()
        time.sleep(0.2)
        assert not died, died
        assert th.is_alive()
    finally:
        ex.shutdown(timeout_sec=2.0)
        th.join(timeout=2.0)
        node.destroy_node()
        rclpy.try_shutdown(context=ctx)
