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


def test_a_goal_plans_only_from_a_support_state_as_recent_as_the_pose(gt_goals, gt_stack):
    """Right after /sim/reset the sequencer's support state can still be the last trial's (contact positions where
    that trial ended). A goal waits up to plan_support_wait_s for one no older than support_max_lag_s behind the pose;
    without one a Cartesian goal is aborted with the reason and nothing moves; with one it plans from it and crawls."""
    import threading
    import time

    from rclpy.parameter import Parameter
    seq, lc = gt_stack.sequencer, gt_stack.lifecycle["contact_inference"]
    assert gt_stack.reset_sim()
    assert lc.change("deactivate")                     # no support state from now on; the pose keeps coming
    try:
        t0 = gt_stack.sim.sim_time()
        while gt_stack.sim.sim_time() - t0 < 0.5:
            time.sleep(0.02)
        assert not seq._support_current()
        assert seq.set_parameters([Parameter("plan_support_wait_s", value=0.3)])[0].successful
        p0, _ = gt_stack.sim.sim.pelvis_pose()
        rec = gt_goals.run("crawl", {"cycles": 3, "method": 1, "direction": 1}, result_timeout_s=60)
        assert rec.status == "aborted" and "support state" in rec.result.reason, (rec.status, rec.result)
        p1, _ = gt_stack.sim.sim.pelvis_pose()
        assert abs(p1[0] - p0[0]) + abs(p1[1] - p0[1]) < 0.01                # nothing moved
        # the same goal, with the contact inference back while it waits: it plans from the new support state
        assert seq.set_parameters([Parameter("plan_support_wait_s", value=20.0)])[0].successful
        out = {}
        th = threading.Thread(target=lambda: out.__setitem__("r", gt_goals.run(
            "crawl", {"cycles": 3, "method": 1, "direction": 1}, result_timeout_s=120)))
        th.start()
        time.sleep(1.0)
        assert "r" not in out and seq._busy is not None and not seq._seq.busy      # accepted, still waiting
        assert lc.change("activate")
        th.join(180)
        assert out["r"].status == "succeeded", (out["r"].status, out["r"].result)
        assert out["r"].result.distance_m < -0.02
    finally:
        if lc.state() != "active":
            lc.change("activate")
        seq.set_parameters([Parameter("plan_support_wait_s", value=1.0)])
