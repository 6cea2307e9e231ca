"""Crawl with gait GAIT_DIAGONAL through the real composed graph (rclpy + MuJoCo): the dynamic diagonal-pair
crawl_forward_fast runs as an action, backward + GAIT_DIAGONAL is rejected with the reason."""
import math

from ros_fixtures import goals, stack  # noqa: F401  (pytest fixtures)


def test_diagonal_crawl_roundtrip(goals, stack):  # noqa: F811
    from atlas_crawl_msgs.action import Crawl
    from atlas_crawl_msgs.msg import ControllerReference
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    from atlas_crawl_controller.keyframes import load_script
    from atlas_crawl_controller.nodes import topics
    refs = []
    node = stack.create_node("diagonal_ref_listener")
    node.create_subscription(ControllerReference, topics.REFERENCE,
                             lambda m: refs.append(m) if m.mode == m.MODE_KEYFRAME else None,
                             QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
    assert stack.wait_sim_time(0.2)
    rec = goals.run("crawl", {"cycles": 2, "gait": Crawl.Goal.GAIT_DIAGONAL, "loop_mode": Crawl.Goal.LOOP_PART},
                    result_timeout_s=120)
    assert rec.status == "succeeded", (rec.status, rec.result, rec.rejection_reason)
    r = rec.result
    assert r.success and r.cycles_completed == 2
    # 2 part-loop cycles of crawl_forward_fast cover ~0.85 m played directly (run_gait); the pelvis must move
    # forward clearly more than one static-crawl cycle's stride would in the same key-frame count
    assert math.isfinite(r.distance_m) and r.distance_m > 0.4, r.distance_m
    # the diagonal script's key-frames were sent (7 + 6 in a 2-cycle part loop; the tripod crawl has 13 + 12), with
    # its planned durations
    fast = load_script("crawl_forward_fast")
    assert len(refs) == len(fast) + len(fast) - fast.part_loop_start, len(refs)
    assert {round(m.duration_s, 3) for m in refs} == {round(k.duration_s, 3) for k in fast.keyframes}
    phases = {f.phase for f in rec.feedback}
    assert not any(p.startswith("waiting_support") for p in phases), sorted(phases)


def test_backward_diagonal_rejected_with_reason(goals, stack):  # noqa: F811
    from atlas_crawl_msgs.action import Crawl
    rec = goals.run("crawl", {"cycles": 1, "gait": Crawl.Goal.GAIT_DIAGONAL,
                              "direction": Crawl.Goal.DIRECTION_BACKWARD}, result_timeout_s=30)
    assert rec.status == "rejected" and "backward" in rec.rejection_reason, (rec.status, rec.rejection_reason)


def test_cartesian_diagonal_turn_roundtrip(goals, stack):  # noqa: F811
    """Turn with METHOD_IIK + GAIT_DIAGONAL: the gait generator's diagonal-pair turn on the spot through the graph
    (a joint-space step into the start posture, then Cartesian references), turning the asked way; a diagonal key-frame turn is rejected with the reason."""
    from atlas_crawl_msgs.action import Turn
    from atlas_crawl_msgs.msg import ControllerReference
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    from atlas_crawl_controller.nodes import topics
    modes = []
    node = stack.create_node("diagonal_turn_ref_listener")
    node.create_subscription(ControllerReference, topics.REFERENCE, lambda m: modes.append(m.mode),
                             QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
    rec = goals.run("turn", {"gait": Turn.Goal.GAIT_DIAGONAL}, result_timeout_s=30)
    assert rec.status == "rejected" and "Cartesian" in rec.rejection_reason, (rec.status, rec.rejection_reason)
    rec = goals.run("turn", {"cycles": 4, "direction": Turn.Goal.TURN_RIGHT, "method": Turn.Goal.METHOD_IIK,
                             "gait": Turn.Goal.GAIT_DIAGONAL}, result_timeout_s=150)
    assert rec.status == "succeeded", (rec.status, rec.result, rec.rejection_reason)
    r = rec.result
    assert r.success and r.cycles_completed == 4
    # clockwise, not a shuffle in place: from a fresh graph ~32 deg per cycle (README); here, right after the
    # diagonal crawl above, 4 cycles (the first one repositions the limbs) turned 30-130 deg in three runs
    assert r.heading_change_rad < -math.radians(20.0), math.degrees(r.heading_change_rad)
    # one joint-space step into the start posture (generator.start_posture), then Cartesian references only
    moving = [m for m in modes if m in (ControllerReference.MODE_KEYFRAME, ControllerReference.MODE_CARTESIAN)]
    assert moving[0] == ControllerReference.MODE_KEYFRAME, modes
    assert set(moving[1:]) == {ControllerReference.MODE_CARTESIAN}, modes
