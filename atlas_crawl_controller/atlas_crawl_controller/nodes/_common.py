"""Plumbing shared by the nodes: validated parameters, the release-on-cleanup lifecycle base, the spin ``main``."""
from __future__ import annotations

from typing import Callable, Optional

import rclpy
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn

from ..parameters import ParameterSet, ParamValues, add_validating_callback, declare_ros_parameters


def declare_validated_parameters(node, pset: ParameterSet, apply: Callable[[ParamValues], Optional[str]],
                                 attr: str = "params") -> ParamValues:
    """Declare every parameter of ``pset`` on ``node``, store the values in ``node.<attr>`` and register the
    validating set-parameters callback (current values read from ``node.<attr>``, changes handed to ``apply``)."""
    setattr(node, attr, declare_ros_parameters(node, pset))
    add_validating_callback(node, pset, lambda: getattr(node, attr), apply)
    return getattr(node, attr)


class ReleasingLifecycleNode(LifecycleNode):
    """Lifecycle node whose cleanup, shutdown and error transitions all call ``self._release()``.

    Subclasses implement ``_release`` (must leave the node as unconfigured) and call it nowhere else but here
    (and from their own helpers).  ``_timer``, ``_subs`` and ``_on_timer`` are the conventional names used by
    :meth:`_restart_timer` and :meth:`_destroy_timer_and_subscriptions`.
    """

    _timer = None
    _subs = ()

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


def spin_node(node_factory: Callable[[], object], num_threads: int, args=None) -> None:
    """``main`` of a node executable: init, spin the node on a MultiThreadedExecutor, clean up on Ctrl-C/shutdown."""
    from rclpy.executors import MultiThreadedExecutor
    rclpy.init(args=args)
    node = node_factory()
    ex = MultiThreadedExecutor(num_threads=num_threads)
    ex.add_node(node)
    try:
        ex.spin()
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
