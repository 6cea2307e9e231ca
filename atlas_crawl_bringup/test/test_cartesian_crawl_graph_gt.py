"""Backward Cartesian crawl through the composed graph on the ground-truth pose (see test_cartesian_crawl_graph.py)."""
import pytest

from ros_fixtures import run_cartesian_crawl


@pytest.fixture(scope="module")
def gt_stack():
    from atlas_crawl_bringup.stack import Stack
    s = Stack(pose_source="ground_truth")
    yield s
    s.close()


@pytest.fixture(scope="module")
def gt_goals(gt_stack):
    from atlas_crawl_controller.nodes.goal_client import GoalClient
    gc = GoalClient(gt_stack.create_node("test_client_gt"), sim_time=gt_stack.sim.sim_time)
    assert gc.wait_for_servers(10.0)
    return gc


def test_iik_crawl_backward_on_ground_truth(gt_goals, gt_stack):
    # 3 cycles: the first is a reposition from the key-frame stance + ramp-up that moves ~1 cm; 3-cycle goals ended
    # -0.27 to -0.32 m on ground truth in 4 of 4 (2-cycle ones -0.03 to -0.17 m)
    run_cartesian_crawl(gt_stack, gt_goals, method=1, direction=1, cycles=3, sign=-1)
