"""Shared fixtures for the ROS tests (import them in a test module): one composed Stack per module."""
import pytest


@pytest.fixture(scope="module")
def stack():
    from atlas_crawl_bringup.stack import Stack
    s = Stack()
    yield s
    s.close()


@pytest.fixture(scope="module")
def goals(stack):
    from atlas_crawl_controller.nodes.goal_client import GoalClient
    # waits bounded in sim time (+ a wall stall guard): a slow, loaded machine does not fail a goal by the clock
    gc = GoalClient(stack.create_node("test_client"), sim_time=stack.sim.sim_time)
    assert gc.wait_for_servers(10.0)
    return gc
