"""Backward Cartesian crawl through the composed graph on the ground-truth pose (see test_cartesian_crawl_graph.py)."""
from ros_fixtures import goals_fixture, run_cartesian_crawl, stack_fixture

gt_stack = stack_fixture(pose_source="ground_truth")
gt_goals = goals_fixture("gt_stack")


def test_iik_crawl_backward_on_ground_truth(gt_goals, gt_stack):
    # 3 cycles: the first is a reposition from the key-frame stance + ramp-up that moves ~1 cm; 3-cycle goals ended
    # -0.27 to -0.32 m on ground truth in 4 of 4 (2-cycle ones -0.03 to -0.17 m)
    run_cartesian_crawl(gt_stack, gt_goals, method=1, direction=1, cycles=3, sign=-1)


def test_com_modulated_crawl_backward_on_ground_truth(gt_goals, gt_stack):
    # with the measured contact sites as its support polygon the modulated backward crawl went forward and aborted
    # "no progress" (README, issue 10)
    run_cartesian_crawl(gt_stack, gt_goals, method=2, direction=1, cycles=3, sign=-1)
