"""Shared fixtures for the ROS tests (import them in a test module): one composed Stack per module."""
import math

import pytest


def stack_fixture(**stack_kw):
    """A module-scoped composed Stack (``stack_kw`` as for Stack, e.g. pose_source="ground_truth")."""
    @pytest.fixture(scope="module")
    def _stack():
        from atlas_crawl_bringup.stack import Stack
        s = Stack(**stack_kw)
        yield s
        s.close()
    return _stack


def goals_fixture(stack_name: str):
    """A module-scoped GoalClient on the stack fixture named ``stack_name``."""
    @pytest.fixture(scope="module")
    def _goals(request):
        from atlas_crawl_controller.nodes.goal_client import GoalClient
        s = request.getfixturevalue(stack_name)
        # waits bounded in sim time (+ a wall stall guard): a slow, loaded machine does not fail a goal by the clock
        gc = GoalClient(s.create_node(f"test_client_{stack_name}"), sim_time=s.sim.sim_time)
        assert gc.wait_for_servers(10.0)
        return gc
    return _goals


stack = stack_fixture()
goals = goals_fixture("stack")


def run_cartesian_crawl(stack, goals, method, direction, cycles, sign):
    """A Cartesian Crawl goal after /sim/reset; asserts success, travel of sign x > 2 cm along the start heading on
    the simulator's ground truth, the same sign in the result, and an upright robot."""
    assert stack.reset_sim()
    p0, _ = stack.sim.sim.pelvis_pose()
    h0 = stack.sim.sim.heading_rad()
    rec = goals.run("crawl", {"cycles": cycles, "method": method, "direction": direction}, result_timeout_s=120)
    assert rec.status == "succeeded", (rec.status, rec.result)
    p1, _ = stack.sim.sim.pelvis_pose()
    along = (p1[0] - p0[0]) * math.cos(h0) + (p1[1] - p0[1]) * math.sin(h0)
    assert sign * along > 0.02, along                                # ground truth, not the robot's own estimate
    assert sign * rec.result.distance_m > 0.02 and rec.result.cycles_completed == cycles
    assert not stack.sim.fall_state()["fallen"] and p1[2] > 0.35
