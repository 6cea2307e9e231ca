"""Action round trips through the real composed graph (rclpy + MuJoCo): each action with feedback and result."""
import math

import pytest

from ros_fixtures import goals, stack  # noqa: F401  (pytest fixtures)


def test_crawl_roundtrip_with_feedback_and_result(goals, stack):  # noqa: F811
    rec = goals.run("crawl", {"cycles": 1}, result_timeout_s=60)
    assert rec.status == "succeeded", (rec.status, rec.result)
    r = rec.result
    assert r.success and r.reason == "" and r.cycles_completed == 1 and r.duration_s > 0
    assert math.isfinite(r.distance_m) and r.distance_m > 0.02        # the crawl moves the robot forward
    phases = [f.phase for f in rec.feedback]
    assert len(rec.feedback) >= 3 and any(p.startswith("moving:") for p in phases)
    assert rec.feedback[-1].progress <= 1.0 and max(f.progress for f in rec.feedback) > 0.5
    assert all(abs(f.base_pose.orientation.w) <= 1.0 for f in rec.feedback)


def test_turn_roundtrip(goals, stack):  # noqa: F811
    # nominal speed: at speed_scale 3 the turn tipped over once in 20 repeats under load (fall detector: roll 1.2 rad)
    rec = goals.run("turn", {"direction": 0, "cycles": 1}, result_timeout_s=60)
    if rec.status == "aborted" and "cannot start" in rec.result.reason:
        pytest.skip(f"turn script not available yet: {rec.result.reason}")
    assert rec.status == "succeeded", (rec.status, rec.result)
    assert rec.result.cycles_completed == 1 and math.isfinite(rec.result.heading_change_rad)
    assert rec.feedback and rec.feedback[-1].cycle == 0


def test_sequencer_counters_consistent(stack):  # noqa: F811
    c = stack.sequencer.counters
    assert c["accepted"] == c["succeeded"] + c["canceled"] + c["aborted"]


def test_sim_reset_service_starts_a_fresh_trial(stack):  # noqa: F811
    import threading

    from std_srvs.srv import Trigger

    from atlas_crawl_controller.nodes import topics
    node = stack.create_node("reset_client")
    cli = node.create_client(Trigger, topics.SIM_RESET)
    assert cli.wait_for_service(timeout_sec=10.0)
    t_before = stack.sim.sim_time()
    x_moved = stack.sim.sim.pelvis_pose()[0][0]
    fut = cli.call_async(Trigger.Request())
    ev = threading.Event()
    fut.add_done_callback(lambda _f: ev.set())
    assert ev.wait(20.0)
    r = fut.result()
    assert r.success, r.message
    assert stack.sim.sim_time() >= t_before                        # the published clock never goes back
    x0, y0 = stack.sim.sim.pelvis_pose()[0][:2]
    assert abs(x0) < 0.05 and abs(y0) < 0.05 and abs(x_moved - x0) > 0.02   # back at the start (pelvis over the origin)
    st = stack.sim.core.status()
    assert st.state == 1 and st.reached                            # controller re-activated, holding
