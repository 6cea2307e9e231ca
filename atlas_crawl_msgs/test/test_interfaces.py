"""Checks the generated Python types of atlas_crawl_msgs.

Runs against the built package (colcon test puts its install space on the
paths). Covers: constants have the documented values, defaults, field types and
range checks, CDR serialisation round trips, and one real action round trip
(rclpy ActionServer/ActionClient in one process, on a private context).
"""
import math
import threading
import uuid

import pytest
import rclpy
from rclpy.action import ActionClient, ActionServer
from rclpy.executors import MultiThreadedExecutor
from rclpy.serialization import deserialize_message, serialize_message

from geometry_msgs.msg import Point, Pose
from atlas_crawl_msgs.action import Crawl, Roll, Turn
from atlas_crawl_msgs.msg import (ContactState, ControllerReference,
                                  ControllerStatus, SupportState)


def test_enum_constants():
    assert (Crawl.Goal.DIRECTION_FORWARD, Crawl.Goal.DIRECTION_BACKWARD) == (0, 1)
    assert (Crawl.Goal.LOOP_FULL, Crawl.Goal.LOOP_PART) == (0, 1)
    assert (Crawl.Goal.METHOD_KEYFRAME, Crawl.Goal.METHOD_IIK,
            Crawl.Goal.METHOD_COM_MODULATED) == (0, 1, 2)
    assert (Turn.Goal.TURN_LEFT, Turn.Goal.TURN_RIGHT, Turn.Goal.TURN_BY_ANGLE) == (0, 1, 2)
    assert (Roll.Goal.SIDE_LEFT, Roll.Goal.SIDE_RIGHT) == (0, 1)
    assert (Roll.Goal.TO_BACK, Roll.Goal.TO_BELLY) == (0, 1)
    assert (ContactState.METHOD_HEIGHT, ContactState.METHOD_VELOCITY,
            ContactState.METHOD_EFFORT, ContactState.METHOD_GROUND_TRUTH) == (0, 1, 2, 3)
    assert (SupportState.CONTACT_LW, SupportState.CONTACT_RW,
            SupportState.CONTACT_LK, SupportState.CONTACT_RK) == (0, 1, 2, 3)
    assert (ControllerReference.MODE_HOLD, ControllerReference.MODE_KEYFRAME,
            ControllerReference.MODE_CARTESIAN) == (0, 1, 2)
    states = [ControllerStatus.STATE_INACTIVE, ControllerStatus.STATE_HOLDING,
              ControllerStatus.STATE_TRACKING, ControllerStatus.STATE_WATCHDOG_HOLD,
              ControllerStatus.STATE_ERROR]
    assert len(set(states)) == len(states)


def test_defaults():
    g = Crawl.Goal()
    assert g.cycles == 1 and g.distance_m == 0.0 and g.speed_scale == 1.0
    assert g.direction == Crawl.Goal.DIRECTION_FORWARD and g.method == Crawl.Goal.METHOD_KEYFRAME
    t = Turn.Goal()
    assert t.cycles == 1 and t.speed_scale == 1.0 and t.angle_rad == 0.0
    s = SupportState()
    assert len(s.contacts) == 4 and all(isinstance(c, ContactState) for c in s.contacts)
    r = ControllerReference()
    assert len(r.stance) == 4 and r.mode == ControllerReference.MODE_HOLD
    assert Crawl.Result().reason == '' and isinstance(Crawl.Feedback().base_pose, Pose)


def test_field_checks_reject_bad_values():
    # Jazzy checks field types/ranges only on request (check_fields=True or
    # ROS_PYTHON_CHECK_FIELDS=1, which run_tests.sh sets for the whole suite).
    with pytest.raises(AssertionError):
        Crawl.Goal(direction=256, check_fields=True)          # uint8 out of range
    with pytest.raises(AssertionError):
        Crawl.Goal(cycles=1.5, check_fields=True)             # int32 needs an int
    with pytest.raises(AssertionError):
        SupportState(contacts=[ContactState()] * 3, check_fields=True)   # fixed size 4
    with pytest.raises(AssertionError):
        ControllerReference(stance=[True, True, False], check_fields=True)  # fixed size 4
    ok = Crawl.Goal(direction=Crawl.Goal.DIRECTION_BACKWARD, cycles=2, check_fields=True)
    assert ok.direction == 1 and ok.cycles == 2


def _roundtrip(msg):
    data = serialize_message(msg)
    assert isinstance(data, bytes) and len(data) > 0
    back = deserialize_message(data, type(msg))
    assert back == msg
    return back


def test_serialisation_roundtrip():
    _roundtrip(Crawl.Goal(cycles=3, distance_m=0.0, direction=Crawl.Goal.DIRECTION_BACKWARD,
                          loop_mode=Crawl.Goal.LOOP_PART, method=Crawl.Goal.METHOD_COM_MODULATED,
                          speed_scale=0.5))
    _roundtrip(Crawl.Result(success=False, reason='cycles must be > 0', distance_m=0.12,
                            lateral_drift_m=-0.01, heading_change_rad=0.02,
                            cycles_completed=1, duration_s=4.5))
    fb = Crawl.Feedback(phase='swing_lw', cycle=2, keyframe=5, progress=0.4,
                        stability_margin_m=0.031)
    fb.base_pose.position.x = 1.25
    fb.base_pose.orientation.w = 1.0
    assert _roundtrip(fb).base_pose.position.x == 1.25
    _roundtrip(Turn.Goal(direction=Turn.Goal.TURN_BY_ANGLE, angle_rad=-math.pi / 2))
    _roundtrip(Turn.Result(success=True, heading_change_rad=1.5, drift_m=0.1,
                           cycles_completed=4, duration_s=20.0))
    _roundtrip(Roll.Goal(from_side=Roll.Goal.SIDE_RIGHT, to=Roll.Goal.TO_BELLY))
    _roundtrip(Roll.Result(success=True, final_roll_rad=0.05, duration_s=8.0))

    names = ('l_wrist_contact', 'r_wrist_contact', 'l_knee_contact', 'r_knee_contact')
    s = SupportState(
        contacts=[ContactState(name=n, in_contact=i != 1, method=ContactState.METHOD_VELOCITY,
                               confidence=0.9, position=Point(x=float(i), y=-float(i), z=0.0))
                  for i, n in enumerate(names)],
        support_polygon=[Point(x=0.0, y=0.0), Point(x=2.0, y=-2.0), Point(x=3.0, y=-3.0)],
        com_projection=Point(x=1.0, y=-1.0), stability_margin_m=-0.02, statically_stable=False)
    s.header.frame_id = 'spatial'
    back = _roundtrip(s)
    assert [c.name for c in back.contacts] == list(names)
    assert [c.in_contact for c in back.contacts] == [True, False, True, True]

    ref = ControllerReference(sequence_id=7, mode=ControllerReference.MODE_CARTESIAN,
                              duration_s=1.5,
                              contact_targets=[Point(x=0.1 * i) for i in range(4)],
                              stance=[False, True, True, True], com_modulation=True, queue=True)
    assert _roundtrip(ref).queue and not ControllerReference().queue    # default: start at once
    _roundtrip(ControllerReference(mode=ControllerReference.MODE_KEYFRAME,
                                   joint_names=['back_lbz', 'back_mby'],
                                   joint_positions_rad=[0.1, -0.2], duration_s=2.0))
    _roundtrip(ControllerStatus(sequence_id=7, accepted=True, reached=False, task_error_m=0.004,
                                iterations=12, stability_margin_m=0.05,
                                state=ControllerStatus.STATE_TRACKING))


def test_action_roundtrip_over_rclpy():
    """A real Crawl goal through rclpy: feedback and result arrive intact."""
    context = rclpy.Context()
    rclpy.init(context=context)
    name = 'crawl_' + uuid.uuid4().hex[:8]   # unique: other tests may run concurrently
    try:
        node = rclpy.create_node('atlas_crawl_msgs_test', context=context)

        def execute(goal_handle):
            goal = goal_handle.request
            for k in range(goal.cycles):
                fb = Crawl.Feedback(phase='stance', cycle=k, keyframe=0,
                                    progress=(k + 1) / goal.cycles, stability_margin_m=0.04)
                goal_handle.publish_feedback(fb)
            goal_handle.succeed()
            return Crawl.Result(success=True, distance_m=0.1 * goal.cycles,
                                cycles_completed=goal.cycles, duration_s=1.0)

        server = ActionServer(node, Crawl, name, execute)
        client = ActionClient(node, Crawl, name)
        executor = MultiThreadedExecutor(num_threads=2, context=context)
        executor.add_node(node)
        spin = threading.Thread(target=executor.spin, daemon=True)
        spin.start()

        assert client.wait_for_server(timeout_sec=20.0)
        feedback = []
        goal = Crawl.Goal(cycles=3, direction=Crawl.Goal.DIRECTION_BACKWARD,
                          method=Crawl.Goal.METHOD_IIK)
        send = client.send_goal_async(goal, feedback_callback=lambda m: feedback.append(m.feedback))
        done = threading.Event()
        send.add_done_callback(lambda _: done.set())
        assert done.wait(20.0), 'goal response never arrived'
        handle = send.result()
        assert handle.accepted
        res_future = handle.get_result_async()
        got = threading.Event()
        res_future.add_done_callback(lambda _: got.set())
        assert got.wait(20.0), 'result never arrived'
        result = res_future.result().result
        assert result.success and result.cycles_completed == 3
        assert result.distance_m == pytest.approx(0.3)
        # Feedback is best effort in timing but reliable QoS: all three arrive before the result
        # is read in practice; require at least one and that they are well formed.
        assert feedback and all(f.phase == 'stance' for f in feedback)
        executor.shutdown()
        server.destroy()
        client.destroy()
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
