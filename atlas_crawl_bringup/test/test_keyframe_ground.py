"""A key-frame Crawl on a 5 deg side slope (real graph, session 30): the open-loop key-frame gaits fell there, so the
sequencer runs it with METHOD_IIK (keyframe_ground.policy cartesian, the default) or rejects it with the reason
(policy reject), both from the height map the sim node publishes."""
import time

from atlas_crawl_msgs.msg import ControllerReference
from rclpy.parameter import Parameter

from atlas_crawl_controller.nodes import topics
from ros_fixtures import goals_fixture, stack_fixture

side_slope = stack_fixture(node_params={"mujoco_sim": {"physics.scene": "slope:angle_deg=5,direction_deg=90"}})
goals = goals_fixture("side_slope")


def _wait_map(stack, timeout_s=30.0) -> bool:
    """True once a height map has reached the sequencer (the sim node publishes one at 2 Hz of sim time)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        with stack.sequencer._lock:
            if stack.sequencer._seq is not None and stack.sequencer._seq._hmap is not None:
                return True
        time.sleep(0.1)
    return False


def test_a_keyframe_crawl_on_a_side_slope_is_rejected_with_the_reason_under_policy_reject(side_slope, goals):
    assert _wait_map(side_slope), "no height map reached the sequencer"
    seq = side_slope.sequencer
    assert seq.set_parameters([Parameter("keyframe_ground.policy", value="reject")])[0].successful
    try:
        rec = goals.run("crawl", {"cycles": 1})
    finally:
        seq.set_parameters([Parameter("keyframe_ground.policy", value="cartesian")])
    assert rec.status == "rejected", (rec.status, rec.result)
    assert "tilted 5.0 deg" in rec.rejection_reason and "send METHOD_IIK" in rec.rejection_reason, \
        rec.rejection_reason
    assert not side_slope.sim.sim.fallen()[0]


def test_a_keyframe_crawl_on_a_side_slope_runs_as_the_cartesian_crawl_by_default(side_slope, goals):
    assert _wait_map(side_slope), "no height map reached the sequencer"
    modes = []
    node = side_slope.create_node("ground_ref_probe")
    node.create_subscription(ControllerReference, topics.REFERENCE, lambda m: modes.append(m.mode), 50)
    rec = goals.run("crawl", {"cycles": 1}, cancel_when=lambda f: len(modes) >= 2, result_timeout_s=120)
    assert rec.accepted and rec.status in ("canceled", "succeeded"), (rec.status, rec.rejection_reason, rec.result)
    # Cartesian references, no key-frame one (a hold may follow the cancel)
    assert ControllerReference.MODE_CARTESIAN in modes and ControllerReference.MODE_KEYFRAME not in modes, modes
    assert not side_slope.sim.sim.fallen()[0]


def test_diagnostics_say_what_a_keyframe_goal_would_do_here(side_slope):
    from diagnostic_msgs.msg import DiagnosticArray
    node = side_slope.create_node("ground_diag_probe")
    seen = []
    node.create_subscription(DiagnosticArray, "/diagnostics", lambda m: seen.extend(
        kv.value for st in m.status if "gait_sequencer" in st.name for kv in st.values if kv.key == "keyframe_ground"),
        10)
    t0 = time.monotonic()
    while not any("tilt 5.0 deg" in v for v in seen) and time.monotonic() - t0 < 30.0:
        time.sleep(0.1)
    assert any(v == "tilt 5.0 deg, 0.0 cm RMS: key-frame goals run as METHOD_IIK" for v in seen), seen[-3:]
