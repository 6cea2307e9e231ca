"""Compose the whole embedded graph in one process: MuJoCo sim (+ controller core), contact inference, gait sequencer.

Used by the embedded demo (atlas_crawl_bringup.embedded), the node tests and the reliability command::

    with Stack(sim_overrides=..., node_params=...) as stack:   # nodes built, executor spinning, nodes active
        client = stack.action_client()                           # ActionClient helper (its own node)
        ...

Lifecycle transitions go through the real ``/<node>/change_state`` services (lifecycle_msgs/srv/ChangeState), as
a lifecycle manager / ``ros2 lifecycle set`` would do.  Shutdown order matters with rclpy: stop the executor,
destroy nodes, shut the context down, then join the spin thread.
"""
from __future__ import annotations

import os
import random
import sys
import threading
import traceback
import time
from typing import Dict, Optional

import rclpy
from lifecycle_msgs.msg import State as LState
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetAvailableTransitions, GetState
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter

from atlas_crawl_controller.nodes import topics

TRANSITIONS = {"configure": Transition.TRANSITION_CONFIGURE, "activate": Transition.TRANSITION_ACTIVATE,
               "deactivate": Transition.TRANSITION_DEACTIVATE, "cleanup": Transition.TRANSITION_CLEANUP,
               "shutdown": Transition.TRANSITION_UNCONFIGURED_SHUTDOWN}


def isolate_ros_domain():
    """Random ROS_DOMAIN_ID + localhost discovery so concurrent test processes do not cross-talk. Under pytest-xdist,
    worker k of n draws only IDs ≡ k (mod n): two workers never share a domain."""
    ids = range(1, 201)
    worker, n = os.environ.get("PYTEST_XDIST_WORKER", ""), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if worker.startswith("gw") and n > 1:
        ids = [i for i in ids if i % n == int(worker[2:]) % n]
    os.environ["ROS_DOMAIN_ID"] = str(random.SystemRandom().choice(ids))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"


def load_ros_params_file(path: str) -> Dict[str, dict]:
    """ROS 2 parameter file ``{node: {ros__parameters: {...}}}`` → ``{node: {dotted.name: value}}``."""
    import yaml

    def flat(d, prefix=""):
        out = {}
        for k, v in d.items():
            if isinstance(v, dict):
                out.update(flat(v, f"{prefix}{k}."))
            else:
                out[f"{prefix}{k}"] = v
        return out

    with open(path, encoding="utf-8") as f:
        data = yaml.safe_load(f) or {}
    return {node.lstrip("/"): flat(body.get("ros__parameters", {})) for node, body in data.items()}


class LifecycleClient:
    """ChangeState/GetState service client for one lifecycle node (what `ros2 lifecycle set` does)."""

    def __init__(self, node, target: str):
        self.target = target
        self._change = node.create_client(ChangeState, f"/{target}/change_state")
        self._get = node.create_client(GetState, f"/{target}/get_state")
        self._avail = node.create_client(GetAvailableTransitions, f"/{target}/get_available_transitions")

    def _call(self, client, req, timeout_s):
        if not client.wait_for_service(timeout_sec=timeout_s):
            raise TimeoutError(f"service {client.srv_name} not available")
        fut = client.call_async(req)
        ev = threading.Event()
        fut.add_done_callback(lambda _f: ev.set())
        if not ev.wait(timeout_s):
            raise TimeoutError(f"{client.srv_name} did not answer within {timeout_s} s")
        return fut.result()

    def available(self, timeout_s: float = 30.0):
        r = self._call(self._avail, GetAvailableTransitions.Request(), timeout_s)
        return {t.transition.id for t in r.available_transitions}

    def change(self, transition: str, timeout_s: float = 60.0) -> bool:
        """Request a transition; False if it failed or is not valid from the current state.

        ``timeout_s`` is a hang guard, not a deadline: configure builds the kinematic model from the URDF, which
        took > 10 s on a 2-core machine loaded by a second simulation.

        Validity is checked first (like `ros2 lifecycle set`): rclpy's change_state service raises inside its
        callback for a transition that does not exist from the current state and then never answers.
        """
        if TRANSITIONS[transition] not in self.available(timeout_s):
            return False
        req = ChangeState.Request()
        req.transition.id = TRANSITIONS[transition]
        return bool(self._call(self._change, req, timeout_s).success)

    def state(self, timeout_s: float = 30.0) -> str:
        return self._call(self._get, GetState.Request(), timeout_s).current_state.label


POSE_SOURCES = ("ground_truth", "estimate")


def pose_remap(pose_source: str) -> list:
    """ROS arguments that make a node read the state estimator's pose where it subscribes ``/atlas/pelvis_pose``
    (``pose_source`` ``estimate``; the ground truth stays published for evaluation)."""
    if pose_source == "estimate":
        return ["--ros-args", "-r", f"{topics.PELVIS_POSE}:={topics.POSE_ESTIMATE}"]
    return []


class Stack:
    """See the module docstring. ``activate=False`` leaves the lifecycle nodes unconfigured."""

    def __init__(self, sim_overrides: Optional[dict] = None, node_params: Optional[Dict[str, dict]] = None,
                 activate: bool = True, isolate: bool = True, use_sim_time: bool = True,
                 params_file: Optional[str] = None, pose_source: str = "estimate"):
        if isolate:
            isolate_ros_domain()
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        from atlas_crawl_controller.nodes.contact_inference_node import ContactInferenceNode
        from atlas_crawl_controller.nodes.gait_sequencer_node import GaitSequencerNode
        from atlas_crawl_mujoco.sim_node import MujocoSimNode
        merged: Dict[str, dict] = load_ros_params_file(params_file) if params_file else {}
        for name, vals in (node_params or {}).items():
            merged.setdefault(name, {}).update(vals)
        node_params = merged
        if pose_source not in POSE_SOURCES:
            raise ValueError(f"pose_source must be one of {POSE_SOURCES}, got {pose_source!r}")
        self.pose_source = pose_source
        if pose_source == "estimate":   # the hosted controller reads the estimate it hosts
            node_params.setdefault("mujoco_sim", {})["pose_source"] = "estimate"

        def overrides(name):
            p = [Parameter("use_sim_time", value=use_sim_time)] if name != "mujoco_sim" else []
            p += [Parameter(k, value=v) for k, v in node_params.get(name, {}).items()]
            return p

        built = []      # a node that refuses its parameters: the ones built before it go, then the error
        try:
            self.sim = MujocoSimNode(sim_overrides=sim_overrides, context=self.context,
                                     parameter_overrides=overrides("mujoco_sim"))
            built.append(self.sim)
            remap = pose_remap(pose_source)
            self.contact = ContactInferenceNode(context=self.context,
                                                parameter_overrides=overrides("contact_inference"), cli_args=remap)
            built.append(self.contact)
            self.sequencer = GaitSequencerNode(context=self.context, parameter_overrides=overrides("gait_sequencer"),
                                               cli_args=remap)
        except BaseException:
            for n in reversed(built):
                try:
                    n.destroy_node()
                except Exception:  # noqa: BLE001 - the construction error is the one to report
                    pass
            rclpy.shutdown(context=self.context)
            raise
        self.manager = rclpy.create_node("lifecycle_manager", context=self.context)
        # One thread: no callback blocks (goals wait on threads of their own, planning too). rclpy's
        # MultiThreadedExecutor held the GIL ~80 % of the time rebuilding wait sets and re-dispatching entities of
        # busy mutually exclusive groups: the graph crawled at 0.1x real time with it, ~1.1x without.
        self.executor = SingleThreadedExecutor(context=self.context)
        for n in (self.sim, self.contact, self.sequencer, self.manager):
            self.executor.add_node(n)
        self._extra = []
        self._closing = False
        #: traceback text if the executor's spin died (every callback is guarded, so this means a bug); the
        #: embedded entry point exits non-zero on it instead of leaving a silent zombie
        self.executor_error: Optional[str] = None
        self._thread = threading.Thread(target=self._spin, name="executor", daemon=True)
        self._thread.start()
        self.lifecycle = {n: LifecycleClient(self.manager, n) for n in ("contact_inference", "gait_sequencer")}
        if activate:
            self.bring_up()

    def _spin(self):
        try:
            self.executor.spin()
        except Exception:  # noqa: BLE001
            if not self._closing:   # not the shutdown path: the executor died
                self.executor_error = traceback.format_exc()
                sys.stderr.write(f"[stack] executor died:\n{self.executor_error}")

    def bring_up(self):
        for name in ("contact_inference", "gait_sequencer"):
            for tr in ("configure", "activate"):
                if not self.lifecycle[name].change(tr):
                    raise RuntimeError(f"{name}: {tr} failed")
        # ready = the sequencer has the inputs to check a goal's posture (else the first goal is rightly rejected)
        t_end = time.monotonic() + 30.0
        while not self.sequencer.inputs_ready:
            if time.monotonic() > t_end:
                raise RuntimeError("gait_sequencer: no pelvis pose / support state within 30 s of activation")
            time.sleep(0.01)

    def add_node(self, node):
        self._extra.append(node)
        self.executor.add_node(node)
        return node

    def create_node(self, name: str, **kw):
        return self.add_node(rclpy.create_node(name, context=self.context, **kw))

    def reset_sim(self, timeout_s: float = 30.0) -> bool:
        """A fresh trial through the graph's own ``/sim/reset`` service (the robot back in its initial pose; the
        graph keeps running). True when the service answered success (and, on the estimate, once the re-initialised
        estimator has aligned again: ``alignment_s`` of stillness)."""
        from std_srvs.srv import Trigger
        cli = self.manager.create_client(Trigger, "/sim/reset")
        try:
            if not cli.wait_for_service(timeout_sec=timeout_s):
                return False
            fut = cli.call_async(Trigger.Request())
            ev = threading.Event()
            fut.add_done_callback(lambda _f: ev.set())
            ok = ev.wait(timeout_s) and bool(fut.result().success)
        finally:
            self.manager.destroy_client(cli)
        if ok and self.pose_source == "estimate":   # no pose until the re-initialised estimator has aligned
            t_end = time.monotonic() + timeout_s
            while not self.sim.estimator.running and time.monotonic() < t_end:
                time.sleep(0.02)
            ok = self.sim.estimator.running
        if ok:   # and until the sequencer holds a pose and a support state of the new trial (a Cartesian goal plans
            # from the support state's contact positions: one from before the reset put them where the last trial
            # ended, "target of RK is 1.18 m from the pelvis")
            t_reset, t_end = self.sim.sim_time(), time.monotonic() + timeout_s
            def fresh():
                t_pose, t_sup = self.sequencer.last_pose_time_s, self.sequencer.last_support_stamp_s
                return t_pose is not None and t_pose >= t_reset and t_sup is not None and t_sup >= t_reset
            while not fresh() and time.monotonic() < t_end:
                time.sleep(0.02)
            ok = fresh()
        return ok

    def wait_inputs_settled(self, quiet_s: float = 0.5, timeout_s: float = 20.0) -> bool:
        """Wait until no node has rejected an input for ``quiet_s`` (wall): bad messages still queued somewhere in
        the graph would rightly abort the next goal. False on timeout."""
        def count():
            return sum(sum(n.health.rejected_inputs.values()) for n in (self.sim, self.contact, self.sequencer)
                       if "health" in n.__dict__)
        t_end, last, last_change = time.monotonic() + timeout_s, None, time.monotonic()
        while time.monotonic() < t_end:
            n = count()
            if n != last:
                last, last_change = n, time.monotonic()
            elif time.monotonic() - last_change > quiet_s:
                return True
            time.sleep(0.05)
        return False

    def wait_sim_time(self, seconds: float, timeout_s: float = 120.0) -> bool:
        t0 = self.sim.sim_time()
        w0 = time.monotonic()
        while self.sim.sim_time() - t0 < seconds:
            if time.monotonic() - w0 > timeout_s:
                return False
            time.sleep(0.02)
        return True

    def close(self):
        self._closing = True
        try:
            self.executor.shutdown(timeout_sec=5.0)
        except Exception:
            pass
        self._thread.join(timeout=5.0)
        for n in self._extra + [self.manager, self.sequencer, self.contact, self.sim]:
            try:
                n.destroy_node()
            except Exception:
                pass
        try:
            rclpy.shutdown(context=self.context)
        except Exception:
            pass
        self._thread.join(timeout=5.0)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


__all__ = ["Stack", "LifecycleClient", "isolate_ros_domain", "LState", "POSE_SOURCES", "pose_remap"]
