"""Falls on the real embedded graph: a side push during a Crawl goal is flagged by the simulator (ground truth) and
by the sequencer, the goal ABORTS with reason "fell: ...", a Crawl sent while down is rejected with the reason, and
a Recover goal brings the robot back to the crawl stance."""
import threading
import time

from ros_fixtures import goals, stack  # noqa: F401


def _push_after(stack, sim_s, impulse):  # noqa: F811
    t0 = stack.sim.sim_time()
    while stack.sim.sim_time() - t0 < sim_s:
        time.sleep(0.005)
    stack.sim.push(impulse)


def test_pushed_over_crawl_aborts_with_fell_then_recovers(goals, stack):  # noqa: F811
    assert stack.wait_sim_time(1.0)
    assert not stack.sim.fall_state()["fallen"]
    pusher = threading.Thread(target=_push_after, args=(stack, 1.5, [0.0, 120.0, 0.0]))
    pusher.start()
    rec = goals.run("crawl", {"cycles": 4}, result_timeout_s=120)
    pusher.join()
    fs = stack.sim.fall_state()
    assert fs["fallen"] and fs["events"], fs                               # the simulator's flag is real
    assert rec.status == "aborted" and rec.result.reason.startswith("fell: "), (rec.status, rec.result)
    assert not rec.result.success
    det = stack.sequencer._seq.fall_detector.state
    assert det.fallen and 0.0 <= det.flagged_t - fs["events"][0]["onset_t"] <= 0.1, (det, fs)
    # down: a crawl is refused with the reason
    assert stack.wait_sim_time(1.0)
    rej = goals.run("crawl", {"cycles": 1}, result_timeout_s=30)
    assert rej.status == "rejected" and ("robot is down" in rej.rejection_reason
                                         or "not in the crawl stance" in rej.rejection_reason), rej.rejection_reason
    # recover, then crawl again
    rec2 = goals.run("recover", {}, result_timeout_s=300)
    r = rec2.result
    assert rec2.status == "succeeded" and r.success and r.final_posture == "crawl", (rec2.status, r)
    assert r.initial_posture != "crawl" and len(r.stages) >= 1
    assert not stack.sim.fall_state()["fallen"]
    again = goals.run("crawl", {"cycles": 1}, result_timeout_s=120)
    assert again.status == "succeeded", (again.status, again.result)


def test_auto_recover_gets_up_before_a_crawl(goals, stack):  # noqa: F811
    from rclpy.parameter import Parameter
    pusher = threading.Thread(target=_push_after, args=(stack, 1.5, [0.0, -150.0, 0.0]))
    pusher.start()
    rec = goals.run("crawl", {"cycles": 4}, result_timeout_s=120)
    pusher.join()
    assert rec.status == "aborted" and rec.result.reason.startswith("fell: "), (rec.status, rec.result)
    assert stack.wait_sim_time(1.0)
    assert stack.sequencer.set_parameters([Parameter("auto_recover", value=True)])[0].successful
    try:
        rec = goals.run("crawl", {"cycles": 1}, result_timeout_s=300)      # accepted while down: recovers first
    finally:
        stack.sequencer.set_parameters([Parameter("auto_recover", value=False)])
    assert rec.status == "succeeded" and rec.result.cycles_completed == 1, (rec.status, rec.result)
    assert "settling" in {f.phase for f in rec.feedback}                   # the recovery ran before the crawl
    assert rec.result.distance_m > 0.1 and not stack.sim.fall_state()["fallen"]
