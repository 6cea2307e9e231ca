"""The exact Python call sequence of the ros2_control plugin (atlas_crawl_ros2_control/CrawlController), without ROS.

The C++ plugin only ever calls what these tests call, in this order (see ros2_control_bridge's docstring), so the
Python side of the full stack is covered by the default suite even where controller_manager is not installed.
"""
import numpy as np
import pytest
import yaml

from atlas_crawl_controller import ros2_control_bridge as rb
from atlas_crawl_controller.controller_core import State
from atlas_crawl_controller.parameters import ParameterError, config_path
from atlas_crawl_controller.robot_info import JOINT_NAMES, joint_limits

DT = 0.004


def _ptrs(b):
    return [a.__array_interface__["data"][0] for a in (b.position, b.velocity, b.effort, b.pelvis, b.command,
                                                         b.status)]


def _configured():
    b = rb.Ros2ControlBridge({"update_rate_hz": 250.0}, cartesian=False)
    return b


def _step(b, t, q=None):
    """What update() does: copy state in place, one Python call."""
    if q is not None:
        b.position[:] = q
    return b.update(t, DT)


def test_configure_exposes_names_and_fixed_buffers():
    b = _configured()
    assert b.joint_names == list(JOINT_NAMES)
    with open(config_path("crawl_controller_parameters.yaml")) as f:
        yaml_names = set(yaml.safe_load(f)["crawl_controller"].keys())
    assert set(b.parameter_names) == yaml_names  # what the plugin forwards from its ROS parameters
    for a, n in ((b.position, 28), (b.velocity, 28), (b.effort, 28), (b.pelvis, 7), (b.command, 28),
                 (b.status, len(rb.STATUS_FIELDS))):
        assert a.dtype == np.float64 and a.flags["C_CONTIGUOUS"] and a.shape == (n,)
    assert b.status[rb.STATUS_FIELDS.index("state")] == State.INACTIVE


def test_invalid_parameters_fail_configure_with_reason():
    with pytest.raises(ParameterError, match="iik_rate_hz"):
        rb.Ros2ControlBridge({"update_rate_hz": 100.0, "iik_rate_hz": 200.0})
    with pytest.raises(ParameterError):
        rb.Ros2ControlBridge({"watchdog_timeout_s": -1.0})


def test_plugin_call_sequence_tracks_a_keyframe_and_keeps_buffers():
    b = _configured()
    ptrs = _ptrs(b)
    lo, hi, _, _ = joint_limits()
    q0 = np.clip(np.zeros(28), lo, hi)
    b.position[:] = q0
    b.activate()
    np.testing.assert_allclose(b.command, q0)
    assert b.status[rb.STATUS_FIELDS.index("state")] == State.HOLDING

    rc = _step(b, 0.0, q0)
    assert rc & rb.RC_COMMAND and not rc & (rb.RC_EXCEPTION | rb.RC_NONFINITE)

    j = JOINT_NAMES.index("l_arm_shx")
    target = float(np.clip(-0.5, lo[j], hi[j]))
    assert b.set_reference(1, 7, ["l_arm_shx"], [target], 0.4, [], [True] * 4, False)
    t = 0.0
    q = q0.copy()
    changed_seen = False
    for _ in range(400):
        t += DT
        rc = _step(b, t, q)
        assert rc & rb.RC_COMMAND
        changed_seen |= bool(rc & rb.RC_STATUS_CHANGED)
        assert np.all(np.isfinite(b.command))
        q = b.command.copy()          # perfect position servo (what mock_components does)
    assert changed_seen
    assert b.command[j] == pytest.approx(target, abs=1e-6)
    assert b.status[rb.STATUS_FIELDS.index("sequence_id")] == 7
    assert b.status[rb.STATUS_FIELDS.index("reached")] == 1.0
    assert _ptrs(b) == ptrs            # the plugin's raw pointers stay valid


def test_rejected_reference_reports_reason_and_sequence_id():
    b = _configured()
    b.activate()
    _step(b, 0.0)
    assert not b.set_reference(1, 42, ["no_such_joint"], [0.1], 1.0, [], [True] * 4, False)
    assert "unknown joints" in b.reason
    assert b.status[rb.STATUS_FIELDS.index("sequence_id")] == 42
    assert b.status[rb.STATUS_FIELDS.index("accepted")] == 0.0
    assert not b.set_reference(1, 43, list(JOINT_NAMES), [float("nan")] * 28, 1.0, [], [True] * 4, False)
    assert "non-finite" in b.reason
    # Cartesian without the solver plugged in: rejected with that reason, nothing moves
    before = b.command.copy()
    assert not b.set_reference(2, 44, [], [], 1.0, [0.0] * 12, [True] * 4, True)
    assert "IIK" in b.reason
    _step(b, DT)
    np.testing.assert_array_equal(b.command, before)


def test_core_exception_and_nonfinite_leave_command_untouched(monkeypatch):
    b = _configured()
    b.activate()
    _step(b, 0.0)
    before = b.command.copy()

    def boom(*a, **k):
        raise RuntimeError("injected")
    monkeypatch.setattr(b.core, "update", boom)
    rc = b.update(DT, DT)
    assert rc & rb.RC_EXCEPTION and not rc & rb.RC_COMMAND
    assert "injected" in b.last_error
    np.testing.assert_array_equal(b.command, before)

    monkeypatch.setattr(b.core, "update", lambda *a, **k: np.full(28, np.nan))
    rc = b.update(2 * DT, DT)
    assert rc & rb.RC_NONFINITE and not rc & rb.RC_COMMAND
    np.testing.assert_array_equal(b.command, before)


def test_nonfinite_state_holds_last_safe_command():
    b = _configured()
    b.activate()
    _step(b, 0.0)
    before = b.command.copy()
    b.position[3] = np.nan                   # what the plugin writes when a state interface has no value
    rc = b.update(DT, DT)
    assert rc & rb.RC_COMMAND
    np.testing.assert_array_equal(b.command, before)
    assert b.status[rb.STATUS_FIELDS.index("nonfinite_inputs")] == 1


def test_runtime_parameters_validated_and_applied():
    b = _configured()
    assert b.set_params({"update_rate_hz": 250.0, "watchdog_timeout_s": 3.0}) == ""
    assert b.core.params["watchdog_timeout_s"] == 3.0
    reason = b.set_params({"update_rate_hz": 250.0, "iik_rate_hz": 500.0})
    assert "iik_rate_hz" in reason
    assert b.core.params["iik_rate_hz"] == 50.0   # unchanged


def test_deactivate_reports_inactive_and_rejects_references():
    b = _configured()
    b.activate()
    _step(b, 0.0)
    b.deactivate()
    assert b.status[rb.STATUS_FIELDS.index("state")] == State.INACTIVE
    assert not b.set_reference(0, 1, [], [], 0.0, [], [True] * 4, False)
    assert "inactive" in b.reason
