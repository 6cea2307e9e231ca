"""A small synchronous wrapper around rclpy ActionClient for /crawl, /turn, /roll (CLI, demo, tests, reliability).

The node must be spun by an executor in another thread (e.g. ``Stack.add_node`` or the CLI's own executor).
Every wait is bounded: a timeout is reported as ``status="timeout"`` (what the reliability command counts as a
hang), never a blocked caller.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

from action_msgs.msg import GoalStatus
from atlas_crawl_msgs.action import Crawl, CrawlTo, Recover, Roll, Turn
from rclpy.action import ActionClient
from std_msgs.msg import String

from . import topics


class SafeActionClient(ActionClient):
    """rclpy 7.1.5's ActionClient registers a request's future only after ``send_*_request`` returned; when the
    executor thread takes the response first, the response is dropped and the future never completes (ros2/rclpy
    #1123, fixed upstream by #1517, not in the Jazzy wheel here). CI saw it as "no goal response". One lock around
    send + registration and around ``take_data`` (what the executor calls first) closes the window, as #1517 does."""

    def __init__(self, *args, **kwargs):
        self._send_lock = threading.RLock()
        super().__init__(*args, **kwargs)

    def take_data(self):
        with self._send_lock:
            return super().take_data()

    def send_goal_async(self, *args, **kwargs):
        with self._send_lock:
            return super().send_goal_async(*args, **kwargs)

    def _get_result_async(self, *args, **kwargs):
        with self._send_lock:
            return super()._get_result_async(*args, **kwargs)

    def _cancel_goal_async(self, *args, **kwargs):
        with self._send_lock:
            return super()._cancel_goal_async(*args, **kwargs)

    def destroy(self):
        """Detach from the node only. rclpy's destroy() frees the handle first, and an executor spinning the node in
        another thread may already hold the client in its wait list: it then dies with "action client pointer is
        invalid" (seen in estimator_graph). The handle is freed when the last reference goes."""
        self._node.remove_waitable(self)

ACTION_TYPES = {"crawl": (Crawl, topics.CRAWL), "turn": (Turn, topics.TURN), "roll": (Roll, topics.ROLL),
                "recover": (Recover, topics.RECOVER), "crawl_to": (CrawlTo, topics.CRAWL_TO)}
STATUS_NAMES = {GoalStatus.STATUS_SUCCEEDED: "succeeded", GoalStatus.STATUS_CANCELED: "canceled",
                GoalStatus.STATUS_ABORTED: "aborted", GoalStatus.STATUS_UNKNOWN: "unknown",
                GoalStatus.STATUS_EXECUTING: "executing", GoalStatus.STATUS_CANCELING: "canceling",
                GoalStatus.STATUS_ACCEPTED: "accepted"}


@dataclass
class GoalRecord:
    kind: str
    fields: dict
    accepted: Optional[bool] = None
    goal_id: str = ""
    rejection_reason: str = ""
    status: str = "pending"           # rejected | succeeded | canceled | aborted | timeout | error
    result: object = None
    feedback: List[object] = field(default_factory=list)
    cancel_sent: bool = False
    cancel_response: Optional[int] = None
    wall_s: float = 0.0


def make_goal(kind: str, fields: dict):
    atype = ACTION_TYPES[kind][0]
    g = atype.Goal()
    for k, v in (fields or {}).items():
        if not hasattr(g, k):
            raise ValueError(f"{atype.__name__} goal has no field {k!r} (fields: {list(g.get_fields_and_field_types())})")
        cur = getattr(g, k)
        setattr(g, k, type(cur)(v) if not isinstance(cur, float) else float(v))
    return g


class GoalClient:
    """Action clients for the three actions on ``node`` plus the goal-rejection listener."""

    def __init__(self, node, sim_time: Optional[Callable[[], float]] = None, stall_wall_s: float = 30.0):
        """``sim_time``: a clock of the simulation (e.g. ``Stack.sim.sim_time``). With it, ``result_timeout_s`` is
        measured in sim time, and a wait only gives up early if sim time stands still for ``stall_wall_s`` of wall
        time — so a loaded machine that runs the simulation slowly does not make a goal "time out"."""
        self.node = node
        self.sim_time = sim_time
        self.stall_wall_s = stall_wall_s
        self.clients = {k: SafeActionClient(node, t, name) for k, (t, name) in ACTION_TYPES.items()}
        self._rejections: Dict[str, str] = {}
        self._rej_lock = threading.Lock()
        from .gait_sequencer_node import REJECTIONS_QOS
        node.create_subscription(String, topics.GOAL_REJECTIONS, self._on_rejection, REJECTIONS_QOS)

    def _on_rejection(self, msg: String):
        try:
            d = json.loads(msg.data)
        except ValueError:
            return
        with self._rej_lock:
            self._rejections[d.get("goal_id", "")] = d.get("reason", "")

    def rejection_reason(self, goal_id: str, wait_s: float = 1.0) -> str:
        t0 = time.monotonic()
        while True:
            with self._rej_lock:
                if goal_id in self._rejections:
                    return self._rejections[goal_id]
            if time.monotonic() - t0 > wait_s:
                return ""
            time.sleep(0.01)

    def wait_for_servers(self, timeout_s: float = 10.0) -> bool:
        return all(c.wait_for_server(timeout_sec=timeout_s) for c in self.clients.values())

    def run(self, kind: str, fields: Optional[dict] = None, *, cancel_after_s: Optional[float] = None,
            cancel_when: Optional[Callable[[object], bool]] = None, accept_timeout_s: float = 10.0,
            result_timeout_s: float = 120.0, on_feedback: Optional[Callable[[object], None]] = None,
            goal=None) -> GoalRecord:
        """Send a goal, optionally cancel it (after a wall delay or when a feedback predicate holds), wait for the
        terminal state. Never blocks longer than accept_timeout_s + result_timeout_s (+ cancel wait)."""
        rec = GoalRecord(kind, dict(fields or {}))
        w0 = time.monotonic()
        try:
            g = goal if goal is not None else make_goal(kind, fields or {})
        except (ValueError, TypeError) as e:
            rec.status, rec.rejection_reason = "error", str(e)
            return rec
        client = self.clients[kind]
        want_cancel = threading.Event()

        def fb_cb(msg):
            rec.feedback.append(msg.feedback)
            if on_feedback:
                on_feedback(msg.feedback)
            if cancel_when is not None and cancel_when(msg.feedback):
                want_cancel.set()

        send_fut = client.send_goal_async(g, feedback_callback=fb_cb)
        ev = threading.Event()
        send_fut.add_done_callback(lambda _f: ev.set())
        if not ev.wait(accept_timeout_s):
            rec.status = "timeout"
            rec.rejection_reason = "no goal response"
            rec.wall_s = time.monotonic() - w0
            return rec
        gh = send_fut.result()
        rec.goal_id = bytes(gh.goal_id.uuid).hex()
        rec.accepted = bool(gh.accepted)
        if not gh.accepted:
            rec.status = "rejected"
            rec.rejection_reason = self.rejection_reason(rec.goal_id) or "(no reason received)"
            rec.wall_s = time.monotonic() - w0
            return rec
        res_fut = gh.get_result_async()
        done = threading.Event()
        res_fut.add_done_callback(lambda _f: done.set())
        t_acc = time.monotonic()
        clock = self.sim_time
        s_acc = clock() if clock else None
        s_last, w_last = s_acc, t_acc
        while not done.is_set():
            now = time.monotonic()
            if clock is None:
                expired = now - t_acc > result_timeout_s
            else:
                s_now = clock()
                if s_now != s_last:
                    s_last, w_last = s_now, now
                expired = s_now - s_acc > result_timeout_s or now - w_last > self.stall_wall_s
            if expired:
                rec.status = "timeout"
                rec.wall_s = time.monotonic() - w0
                return rec
            if not rec.cancel_sent and ((cancel_after_s is not None and time.monotonic() - t_acc >= cancel_after_s)
                                        or want_cancel.is_set()):
                rec.cancel_sent = True
                cf = gh.cancel_goal_async()
                cf.add_done_callback(lambda f: setattr(rec, "cancel_response", f.result().return_code
                                                       if f.result() is not None else None))
            done.wait(0.02)
        r = res_fut.result()
        rec.result = r.result
        rec.status = STATUS_NAMES.get(r.status, f"status{r.status}")
        rec.wall_s = time.monotonic() - w0
        return rec
