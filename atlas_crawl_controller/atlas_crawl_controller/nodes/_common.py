"""Plumbing shared by the nodes: validated parameters, guarded callbacks + /diagnostics, the release-on-cleanup
lifecycle base with a change_state service that always answers, the spin ``main`` that never leaves a zombie."""
from __future__ import annotations

import functools
import sys
import time
import traceback
from typing import Callable, Optional

import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.clock import Clock, ClockType
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn

from ..node_health import NodeHealth
from ..parameters import ParameterSet, ParamValues, add_validating_callback, declare_ros_parameters

DIAGNOSTICS_TOPIC = "/diagnostics"
DIAGNOSTICS_PERIOD_S = 1.0   # wall clock (steady): published even when sim time stands still


def declare_validated_parameters(node, pset: ParameterSet, apply: Callable[[ParamValues], Optional[str]],
                                 attr: str = "params") -> ParamValues:
    """Declare every parameter of ``pset`` on ``node``, store the values in ``node.<attr>`` and register the
    validating set-parameters callback (current values read from ``node.<attr>``, changes handed to ``apply``)."""
    setattr(node, attr, declare_ros_parameters(node, pset))
    add_validating_callback(node, pset, lambda: getattr(node, attr), apply)
    return getattr(node, attr)


class GuardedNodeMixin:
    """Every timer, subscription and service callback of the node is guarded (issue 11): an exception is logged with
    its traceback (at most once per second), counted in :attr:`health`, handed to :meth:`_on_callback_error` and
    never raised into the executor (where it would end the spin thread).  Callback wall times are recorded.
    :attr:`health` is published as ``diagnostic_msgs/DiagnosticArray`` on ``/diagnostics`` once per second.
    Put it first in the bases: ``class MyNode(GuardedNodeMixin, Node)``."""

    def _health(self) -> NodeHealth:
        h = self.__dict__.get("health")
        if h is None:
            h = self.__dict__["health"] = NodeHealth(name=self.get_name())
        return h

    def guard(self, fn: Callable, what: str, default=None, default_from_arg: Optional[int] = None) -> Callable:
        """``fn`` wrapped; on an exception returns ``default`` (or its positional argument ``default_from_arg``, e.g.
        a service's response object)."""
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            except Exception as e:   # noqa: BLE001 — the whole point: nothing escapes into the executor
                self._health().record_error(what, e)
                try:
                    self.get_logger().error(f"{what} failed: {type(e).__name__}: {e}\n{traceback.format_exc()}",
                                            throttle_duration_sec=1.0)
                    self._on_callback_error(what, e)
                except Exception:   # noqa: BLE001 — reporting must not fail the guard either
                    pass
                if default_from_arg is not None and len(args) > default_from_arg:
                    return args[default_from_arg]
                return default
            finally:
                self._health().time_callback(what, time.perf_counter() - t0)
        return wrapper

    def _on_callback_error(self, what: str, exc: BaseException) -> None:
        """Hook: put the node into its defined state after a failed callback (default: nothing more)."""

    def reject_input(self, what: str, reason: str) -> None:
        """Count a rejected input and log it at most once per second (with the running count)."""
        n = self._health().reject_input(what, reason)
        self.get_logger().warn(f"{what} rejected ({n} so far): {reason}", throttle_duration_sec=1.0)

    # every callback the node registers goes through the guard
    def create_subscription(self, msg_type, topic, callback, *args, **kwargs):
        return super().create_subscription(msg_type, topic, self.guard(callback, f"subscription {topic}"),
                                           *args, **kwargs)

    def create_timer(self, timer_period_sec, callback, *args, **kwargs):
        return super().create_timer(timer_period_sec, self.guard(callback, f"timer {getattr(callback, '__name__', '')}"),
                                    *args, **kwargs)

    def create_service(self, srv_type, srv_name, callback, *args, **kwargs):
        return super().create_service(srv_type, srv_name,
                                      self.guard(callback, f"service {srv_name}", default_from_arg=1),
                                      *args, **kwargs)

    def start_diagnostics(self) -> None:
        self._pub_diag = self.create_publisher(DiagnosticArray, DIAGNOSTICS_TOPIC, 10)
        self._diag_timer = self.create_timer(DIAGNOSTICS_PERIOD_S, self._publish_diagnostics,
                                             clock=Clock(clock_type=ClockType.STEADY_TIME))

    def _diagnostic_state(self) -> str:
        return "running"

    def _publish_diagnostics(self) -> None:
        h = self._health()
        h.state = self._diagnostic_state()
        lvl, msg, kv = h.summary()
        st = DiagnosticStatus(level=bytes([lvl]), name=f"atlas_crawl: {self.get_name()}", message=msg,
                              hardware_id="atlas_crawl")
        st.values = [KeyValue(key=k, value=v) for k, v in kv]
        arr = DiagnosticArray(status=[st])
        arr.header.stamp = self.get_clock().now().to_msg()
        self._pub_diag.publish(arr)


class ReleasingLifecycleNode(GuardedNodeMixin, LifecycleNode):
    """Lifecycle node whose cleanup, shutdown and error transitions all call ``self._release()``.

    Subclasses implement ``_release`` (must leave the node as unconfigured) and call it nowhere else but here
    (and from their own helpers).  ``_timer``, ``_subs`` and ``_on_timer`` are the conventional names used by
    :meth:`_restart_timer` and :meth:`_destroy_timer_and_subscriptions`.
    """

    _timer = None
    _subs = ()

    def __init__(self, node_name: str, **kwargs):
        super().__init__(node_name, **kwargs)
        # rclpy's change_state service raises inside its callback for a transition that does not exist from the
        # current state (RCLError "No transition matching N found for current state ..."); the exception ends the
        # executor's spin, so no service or action answers any more (rclpy issue #1209, fixed upstream by
        # ros2/rclpy#1319, not in the PyPI Jazzy wheels used here).  Answer every request: success=false for an
        # invalid one.
        self._service_change_state.callback = self.guard(self._change_state_checked, "service change_state",
                                                         default_from_arg=1)
        self.start_diagnostics()

    def _change_state_checked(self, req, resp):
        ids = {t[0]: t[1] for t in self._state_machine.available_transitions}
        tid = int(req.transition.id)
        if req.transition.label:
            by_label = {v: k for k, v in ids.items()}
            if req.transition.label not in by_label:
                self.reject_input("change_state", f"transition '{req.transition.label}' not available from "
                                                  f"'{self._state_machine.current_state[1]}'")
                resp.success = False
                return resp
            tid = by_label[req.transition.label]
        if tid not in ids:
            self.reject_input("change_state", f"transition {tid} not available from "
                                              f"'{self._state_machine.current_state[1]}' (available: {sorted(ids)})")
            resp.success = False
            return resp
        ret = self._change_state(tid)
        resp.success = ret == TransitionCallbackReturn.SUCCESS
        return resp

    def _change_state(self, transition_id: int):
        return self._LifecycleNodeMixin__change_state(transition_id)

    def _diagnostic_state(self) -> str:
        return f"lifecycle {self._state_machine.current_state[1]}"

    def _restart_timer(self, rate_hz: float, callback_group=None) -> None:
        """(Re)create ``self._timer`` calling ``self._on_timer`` at ``rate_hz``."""
        if self._timer is not None:
            self.destroy_timer(self._timer)
        self._timer = self.create_timer(1.0 / rate_hz, self._on_timer, callback_group=callback_group)

    def _destroy_timer_and_subscriptions(self) -> None:
        if self._timer is not None:
            self.destroy_timer(self._timer)
            self._timer = None
        for s in self._subs:
            self.destroy_subscription(s)
        self._subs = []

    def _release(self) -> None:
        raise NotImplementedError

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.get_logger().error(f"error processing (from {state.label}): releasing resources → unconfigured")
        try:
            self._release()
        except Exception:
            return TransitionCallbackReturn.FAILURE   # → finalized
        return TransitionCallbackReturn.SUCCESS


def spin_surviving_entity_races(executor) -> None:
    """``executor.spin()`` for a client whose own thread creates and destroys entities (action clients,
    subscriptions) while this spins in another: rclpy's executor can meet an entity destroyed while it builds its
    wait set (ros2/rclpy#968, open: ``AttributeError`` on a destroyed guard condition's ``handle``, or
    ``InvalidHandle``) and ``spin()`` then dies with that traceback. Here the next ``spin_once`` rebuilds the wait
    set without it. Only those errors raised while the executor builds its wait set (innermost frame
    ``_wait_for_ready_callbacks``) are survived: a callback's own errors still propagate. Returns when the executor
    or its context shuts down."""
    from rclpy._rclpy_pybind11 import InvalidHandle
    from rclpy.executors import ExternalShutdownException, ShutdownException
    while executor.context.ok() and not executor._is_shutdown:
        try:
            executor.spin_once(timeout_sec=0.1)
        except (AttributeError, InvalidHandle) as e:
            tb = traceback.extract_tb(e.__traceback__)
            if not tb or tb[-1].name != "_wait_for_ready_callbacks":
                raise
        except (ShutdownException, ExternalShutdownException):
            return


def spin_node(node_factory: Callable[[], object], args=None) -> None:
    """``main`` of a node executable: init, spin the node on a SingleThreadedExecutor (no callback blocks; see
    ``atlas_crawl_bringup.stack``), clean up on Ctrl-C/shutdown."""
    from rclpy.executors import SingleThreadedExecutor
    rclpy.init(args=args)
    node = node_factory()
    ex = SingleThreadedExecutor()
    ex.add_node(node)
    rc = 0
    try:
        ex.spin()
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    except Exception:   # noqa: BLE001 — the executor died: exit non-zero with the traceback (no silent zombie)
        if rclpy.ok():
            sys.stderr.write(f"[{node.get_name()}] executor died:\n{traceback.format_exc()}")
            rc = 1
        # else: Ctrl-C / launch shutdown invalidated the context while the executor built its wait set
        # (RCLError "the given context is not valid"): a normal stop, exit 0
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    if rc:
        sys.exit(rc)   # a launch file can respawn the process
