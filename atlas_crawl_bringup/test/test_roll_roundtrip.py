"""Roll action round trip (own file: a roll is ~24 s of simulated time — down to prone, then over the side)."""
import math

import pytest

from ros_fixtures import goals, stack  # noqa: F401  (pytest fixtures)


def test_roll_roundtrip(goals, stack):  # noqa: F811
    rec = goals.run("roll", {"from_side": 0, "to": 0}, result_timeout_s=90)
    assert rec.status == "succeeded", (rec.status, rec.result)
    assert rec.result.success and rec.result.reason == "" and rec.result.duration_s > 10.0
    assert len(rec.feedback) >= 3 and rec.feedback[-1].progress == pytest.approx(1.0)
    assert "roll" in " ".join(f.phase for f in rec.feedback) or len({f.keyframe for f in rec.feedback}) >= 5
    # the result reports the pelvis roll about the spine (0 = prone, ±pi = on the back)
    assert math.isfinite(rec.result.final_roll_rad)
    roll_now = stack.sim.sim.pelvis_pose()[1]
    assert abs(rec.result.final_roll_rad) <= math.pi + 1e-9 and len(roll_now) == 4


def test_roll_counters_consistent(stack):  # noqa: F811
    c = stack.sequencer.counters
    assert c["accepted"] == c["succeeded"] + c["canceled"] + c["aborted"]
