"""Lifecycle contract of contact_inference and gait_sequencer (incl. error paths, no publishing while inactive) and
run-time parameter changes (take effect or are rejected with a reason)."""
import time

import pytest
from atlas_crawl_msgs.msg import ContactState, SupportState
from rclpy.parameter import Parameter

from atlas_crawl_controller.nodes import topics
from atlas_crawl_bringup.stack import Stack


@pytest.fixture(scope="module")
def stack():
    s = Stack(activate=False)
    yield s
    s.close()


@pytest.fixture(scope="module")
def probe(stack):
    got = []
    node = stack.create_node("lifecycle_probe")
    node.create_subscription(SupportState, topics.SUPPORT_STATE, lambda m: got.append(m), 50)
    return got


def count_during(got, wall_s):
    n0 = len(got)
    time.sleep(wall_s)
    return len(got) - n0


def test_contact_inference_lifecycle_and_publishing(stack, probe):
    lc = stack.lifecycle["contact_inference"]
    assert lc.state() == "unconfigured"
    assert count_during(probe, 0.6) == 0
    assert lc.change("configure") and lc.state() == "inactive"
    assert count_during(probe, 0.8) == 0                        # inactive: nothing published
    assert lc.change("activate") and lc.state() == "active"
    assert count_during(probe, 1.5) > 3
    m = probe[-1]
    assert m.header.frame_id == "world" and len(m.contacts) == 4
    assert all(c.in_contact for c in m.contacts) and m.statically_stable   # resting in the crawl stance
    assert lc.change("deactivate") and lc.state() == "inactive"
    time.sleep(0.3)
    assert count_during(probe, 0.8) == 0
    assert lc.change("cleanup") and lc.state() == "unconfigured"
    assert not lc.change("activate")                              # invalid transition from unconfigured


def test_configure_failure_then_recovery(stack):
    node, lc = stack.contact, stack.lifecycle["contact_inference"]
    assert lc.state() == "unconfigured"
    assert node.set_parameters([Parameter("robot_description", value="<robot name='x'><link name='a'/></robot>")])[
        0].successful
    assert not lc.change("configure")                             # FAILURE: no contact frames in that URDF
    assert lc.state() == "unconfigured"
    assert node.set_parameters([Parameter("robot_description", value="")])[0].successful
    assert lc.change("configure") and lc.state() == "inactive"
    r = node.set_parameters([Parameter("robot_description", value="<robot/>")])[0]
    assert not r.successful and "unconfigured" in r.reason       # cannot swap the model while configured
    assert lc.change("cleanup")


def test_error_in_transition_goes_through_on_error(stack):
    """An unexpected exception in on_activate → ERROR → on_error releases everything → unconfigured."""
    node, lc = stack.contact, stack.lifecycle["contact_inference"]
    assert lc.change("configure")
    est = node._estimator
    node._estimator = None            # fault injection: on_activate will raise (reset() on None)
    try:
        assert not lc.change("activate")
    finally:
        if node._estimator is None:
            node._estimator = est
    assert lc.state() == "unconfigured" and node._pub is None and node._timer is None
    assert lc.change("configure") and lc.change("activate") and lc.state() == "active"


def test_parameter_change_takes_effect(stack, probe):
    node = stack.contact
    assert stack.lifecycle["contact_inference"].state() == "active"
    r = node.set_parameters([Parameter("method", value="velocity")])[0]
    assert r.successful, r.reason
    time.sleep(1.0)
    assert probe[-1].contacts[0].method == ContactState.METHOD_VELOCITY
    r = node.set_parameters([Parameter("method", value="magic")])[0]
    assert not r.successful and "one of" in r.reason
    r = node.set_parameters([Parameter("height.threshold_m", value=5.0)])[0]
    assert not r.successful                                      # outside the descriptor range [0, 0.5]
    r = node.set_parameters([Parameter("effort.off_threshold_nm", value=[500.0, 500.0, 500.0, 500.0])])[0]
    assert not r.successful and "threshold" in r.reason           # cross-check: off must be <= on
    assert node.get_parameter("method").value == "velocity"
    # the controller hosted by the sim node
    r = stack.sim.set_parameters([Parameter("controller.reached_tolerance_rad", value=0.02)])[0]
    assert r.successful and stack.sim.core.params["reached_tolerance_rad"] == 0.02
    r = stack.sim.set_parameters([Parameter("controller.iik_rate_hz", value=1500.0)])[0]
    assert not r.successful and "update_rate_hz" in r.reason
    d = stack.sim.describe_parameter("controller.watchdog_timeout_s")
    assert "[s]" in d.description and d.floating_point_range[0].from_value == 0.05


def test_gait_generator_parameters_on_the_sequencer_node(stack):
    """The gait generator the sequencer hosts is tuned through the node (rqt, a params file) as gait_generator.*:
    a valid value reaches the sequencer's next plans, an invalid one is rejected with a reason and changes nothing."""
    node = stack.sequencer
    assert node.get_parameter("gait_generator.t_shift_s").value == pytest.approx(0.8)
    r = node.set_parameters([Parameter("gait_generator.t_shift_s", value=0.3)])[0]
    assert r.successful, r.reason
    assert node._generator_overrides()["t_shift_s"] == 0.3
    if node._seq is not None:
        assert node._seq._gen_params()["t_shift_s"] == 0.3
    r = node.set_parameters([Parameter("gait_generator.t_swing_s", value=-1.0)])[0]
    assert not r.successful and "t_swing_s" in r.reason
    assert node._generator_overrides()["t_swing_s"] == pytest.approx(0.6)
    assert node.set_parameters([Parameter("gait_generator.t_shift_s", value=0.8)])[0].successful


def test_gait_sequencer_rejects_goals_unless_active(stack):
    from atlas_crawl_controller.nodes.goal_client import GoalClient
    gc = GoalClient(stack.create_node("lc_client"), sim_time=stack.sim.sim_time)
    assert gc.wait_for_servers(10.0)
    lc = stack.lifecycle["gait_sequencer"]
    assert lc.state() == "unconfigured"
    rec = gc.run("crawl", {"cycles": 1})
    assert rec.status == "rejected" and rec.rejection_reason.startswith("inactive")
    assert lc.change("configure")
    rec = gc.run("crawl", {"cycles": 1})
    assert rec.status == "rejected" and rec.rejection_reason.startswith("inactive")
    assert lc.change("activate")
    r = stack.sequencer.set_parameters([Parameter("support_timeout_policy", value="sometimes")])[0]
    assert not r.successful
    r = stack.sequencer.set_parameters([Parameter("gaits.crawl_forward", value="no_such_gait")])[0]
    assert not r.successful and "cannot load" in r.reason
    # the pose is the state estimator's: it is published once the estimator has aligned (2 s of sim time after
    # start); a goal before that is rightly rejected ("no pelvis pose received yet"), so wait for the first pose
    t0 = time.monotonic()
    while stack.sequencer._pose is None and time.monotonic() - t0 < 30:
        time.sleep(0.05)
    assert stack.sequencer._pose is not None
    # deactivate during a goal: the goal ends (aborted, with the reason), nothing hangs
    import threading
    out = {}
    th = threading.Thread(target=lambda: out.__setitem__("r", gc.run("crawl", {"cycles": 3, "speed_scale": 3.0},
                                                                       result_timeout_s=30)))
    th.start()
    t0 = time.monotonic()
    while stack.sequencer._busy is None and time.monotonic() - t0 < 10:
        time.sleep(0.01)
    time.sleep(0.5)
    assert lc.change("deactivate")
    th.join(40)
    assert out["r"].status == "aborted" and "deactivated" in out["r"].result.reason
    assert lc.change("cleanup") and lc.state() == "unconfigured"
    assert lc.change("shutdown") and lc.state() == "finalized"


def _support_subscribers(node, topic):
    return [i.node_name for i in node.get_subscriptions_info_by_topic(topic)]


def test_support_source_ground_truth_subscribes_the_simulators_contacts():
    """support_source (read at configure): the sequencer plans from the simulator's contacts for comparison, as
    pose_source does for the pose; the default reads contact inference. Read-only: a change is refused."""
    s = Stack(activate=False, node_params={"gait_sequencer": {"support_source": "ground_truth"}})
    try:
        assert s.lifecycle["gait_sequencer"].change("configure")
        t0 = time.monotonic()
        while "gait_sequencer" not in _support_subscribers(s.sequencer, topics.CONTACTS_GT) and \
                time.monotonic() - t0 < 5:
            time.sleep(0.05)
        assert "gait_sequencer" in _support_subscribers(s.sequencer, topics.CONTACTS_GT)
        assert "gait_sequencer" not in _support_subscribers(s.sequencer, topics.SUPPORT_STATE)
        r = s.sequencer.set_parameters([Parameter("support_source", value="estimate")])[0]
        assert not r.successful
    finally:
        s.close()
