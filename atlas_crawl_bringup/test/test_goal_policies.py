"""Cancel → stable hold, invalid goals rejected with a reason, second goal rejected as busy (real graph)."""
import threading
import time

import numpy as np
import pytest
from atlas_crawl_msgs.msg import SupportState
from sensor_msgs.msg import JointState

from atlas_crawl_controller.nodes import topics
from ros_fixtures import goals, stack  # noqa: F401


def test_cancel_mid_gait_ends_in_stable_hold(goals, stack):  # noqa: F811
    sup, js = {}, {}
    node = stack.create_node("cancel_probe")
    node.create_subscription(SupportState, topics.SUPPORT_STATE, lambda m: sup.__setitem__("m", m), 10)
    node.create_subscription(JointState, topics.JOINT_STATES, lambda m: js.__setitem__("m", m), 10)
    # nominal speed: at speed_scale 3 the fusion contact inference (rightly) did not confirm a four-limb stance
    # within one cycle once in clean-clone CI, and the cancel fell back to "holding the current pose"
    rec = goals.run("crawl", {"cycles": 5},
                    cancel_when=lambda f: f.phase.startswith("moving:lift_"), result_timeout_s=60)
    assert rec.cancel_sent and rec.status == "canceled", (rec.status, rec.result)
    assert not rec.result.success and rec.result.cycles_completed < 5
    assert "canceled; holding" in rec.result.reason, rec.result.reason
    stable_stance = "statically stable stance" in rec.result.reason
    # hold: the robot has not fallen and stops moving; at a stable stance the support state confirms it
    assert stack.wait_sim_time(1.0)
    assert not stack.sim.sim.fallen()[0]
    q0 = np.array(js["m"].position)
    assert stack.wait_sim_time(0.3)
    assert np.max(np.abs(np.array(js["m"].position) - q0)) < 0.03      # settled (servo sag under load aside)
    if stable_stance:
        assert sup["m"].statically_stable and sum(c.in_contact for c in sup["m"].contacts) >= 3, sup["m"]
    st = stack.sim.core.status()
    assert st.reached and st.state in (1, 2, 3)


INVALID = [
    ("crawl", {"cycles": 0}, "cycles must be > 0"),
    ("crawl", {"cycles": -2}, "cycles must be > 0"),
    ("crawl", {"direction": 9}, "unknown direction"),
    ("crawl", {"loop_mode": 7}, "unknown loop_mode"),
    ("crawl", {"method": 5}, "unknown method"),
    ("crawl", {"speed_scale": float("nan")}, "speed_scale"),
    ("crawl", {"speed_scale": 50.0}, "speed_scale"),
    ("crawl", {"distance_m": float("nan")}, "distance_m"),
    ("turn", {"direction": 4}, "unknown direction"),
    ("turn", {"direction": 2, "angle_rad": float("inf")}, "angle_rad"),
    ("turn", {"cycles": 0}, "cycles must be > 0"),
    ("roll", {"from_side": 3}, "unknown from_side"),
    ("roll", {"to": 9}, "unknown to"),
]


@pytest.mark.parametrize("kind,fields,needle", INVALID)
def test_invalid_goal_rejected_with_reason(goals, kind, fields, needle):  # noqa: F811
    rec = goals.run(kind, fields)
    assert rec.status == "rejected" and needle in rec.rejection_reason, (rec.status, rec.rejection_reason)


def test_second_goal_rejected_busy_and_first_completes(goals, stack):  # noqa: F811
    out = {}
    t = threading.Thread(target=lambda: out.__setitem__("a", goals.run("crawl", {"cycles": 1},
                                                                       result_timeout_s=60)))
    t.start()
    deadline = time.monotonic() + 10
    while stack.sequencer._busy is None and time.monotonic() < deadline:
        time.sleep(0.01)
    b = goals.run("turn", {"cycles": 1})
    assert b.status == "rejected" and b.rejection_reason.startswith("busy"), b.rejection_reason
    t.join(70)
    assert out["a"].status == "succeeded", out["a"].status
