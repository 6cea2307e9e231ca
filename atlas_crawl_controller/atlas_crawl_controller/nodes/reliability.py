"""Random goal / cancel / preempt sequences from several concurrent action clients against the composed graph.

Used by the default test (3 clients, bounded time) and by the reliability command
(``python -m atlas_crawl_bringup.reliability --sequences 1000``).  Counts:

* hangs    — a client wait that hit its bound (no goal response, or no result within result_timeout_s);
* crashes  — an exception in a client, or a dead executor / physics thread;
* terminal states — succeeded / canceled / aborted / rejected (with the rejection reasons' first words).

Scenarios (picked at random per sequence): ``complete`` (valid short goal, wait), ``cancel`` (valid goal, cancel
after a random delay), ``cancel_now`` (cancel right after acceptance), ``preempt`` (a second goal from the same
client while the first runs — with the reject-busy policy it must be rejected — then cancel the first), ``invalid``
(a goal with a bad field).
"""
from __future__ import annotations

import collections
import random
import threading
import time
from typing import Optional

from .goal_client import GoalClient

VALID = [
    ("crawl", {"cycles": 1, "speed_scale": 3.0}),
    ("crawl", {"cycles": 1, "speed_scale": 3.0, "direction": 1}),
    ("crawl", {"cycles": 2, "speed_scale": 3.0, "loop_mode": 1}),
    ("turn", {"direction": 0, "cycles": 1, "speed_scale": 3.0}),
    ("turn", {"direction": 1, "cycles": 1, "speed_scale": 3.0}),
    ("roll", {"from_side": 0, "to": 0}),
    ("recover", {}),    # back to the crawl stance (after a roll or a fall, crawls and turns are refused until then)
]
INVALID = [
    ("crawl", {"cycles": 0}), ("crawl", {"direction": 5}), ("crawl", {"speed_scale": float("nan")}),
    ("crawl", {"method": 7}), ("turn", {"direction": 2, "angle_rad": 0.0}), ("turn", {"cycles": -1}),
    ("roll", {"to": 3}), ("recover", {"max_stages": 200}),
]
SCENARIOS = ("complete", "cancel", "cancel", "cancel_now", "preempt", "invalid")


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.terminal = collections.Counter()
        self.reasons = collections.Counter()
        self.abort_reasons = collections.Counter()
        self.scenarios = collections.Counter()
        self.hangs = 0
        self.crashes = 0
        self.sequences = 0
        self.goals = 0
        self.errors = []

    def add(self, rec):
        with self.lock:
            self.goals += 1
            if rec.status == "timeout":
                self.hangs += 1
            else:
                self.terminal[rec.status] += 1
            if rec.status == "rejected":
                self.reasons[rec.rejection_reason.split(":")[0][:40]] += 1
            elif rec.status == "aborted" and rec.result is not None:
                self.abort_reasons[str(rec.result.reason)[:50]] += 1

    def summary(self) -> dict:
        return {"sequences": self.sequences, "goals": self.goals, "hangs": self.hangs, "crashes": self.crashes,
                "terminal": dict(self.terminal), "rejection_reasons": dict(self.reasons),
                "abort_reasons": dict(self.abort_reasons),
                "scenarios": dict(self.scenarios), "errors": self.errors[:5]}


def _client_loop(gc: GoalClient, rng: random.Random, tally: Tally, stop: threading.Event,
                 budget: Optional[list], result_timeout_s: float, backoff_s: float = 2.0, valid=VALID):
    while not stop.is_set():
        if budget is not None:
            with tally.lock:
                if budget[0] <= 0:
                    return
                budget[0] -= 1
        recs = []

        def add(rec):
            recs.append(rec)
            tally.add(rec)

        scen = rng.choice(SCENARIOS)
        with tally.lock:
            tally.scenarios[scen] += 1
        try:
            if scen == "invalid":
                kind, f = rng.choice(INVALID)
                add(gc.run(kind, f, result_timeout_s=result_timeout_s))
            elif scen == "complete":
                kind, f = rng.choice(valid)
                add(gc.run(kind, f, result_timeout_s=result_timeout_s))
            elif scen in ("cancel", "cancel_now"):
                kind, f = rng.choice(valid)
                delay = 0.0 if scen == "cancel_now" else rng.uniform(0.0, 1.5)
                add(gc.run(kind, f, cancel_after_s=delay, result_timeout_s=result_timeout_s))
            else:  # preempt
                kind, f = rng.choice(valid)
                first = {}
                th = threading.Thread(target=lambda: first.__setitem__(
                    "r", gc.run(kind, f, cancel_after_s=rng.uniform(0.3, 1.5), result_timeout_s=result_timeout_s)))
                th.start()
                time.sleep(rng.uniform(0.0, 0.3))
                k2, f2 = rng.choice(valid)
                add(gc.run(k2, f2, result_timeout_s=result_timeout_s))
                th.join(result_timeout_s + 30)
                if "r" in first:
                    add(first["r"])
                else:
                    with tally.lock:
                        tally.hangs += 1
        except Exception as e:  # a crash of the client side counts
            with tally.lock:
                tally.crashes += 1
                tally.errors.append(f"{type(e).__name__}: {e}")
        with tally.lock:
            tally.sequences += 1
        # back off after a "busy" rejection so that more sequences reach the running-goal paths (cancel, preempt)
        if any(r.rejection_reason.startswith("busy") for r in recs):
            stop.wait(rng.uniform(0.2, backoff_s))


def run_random_clients(stack, n_clients: int = 3, duration_s: Optional[float] = None,
                       sequences: Optional[int] = None, seed: int = 0, result_timeout_s: float = 60.0,
                       progress=None, valid=VALID) -> dict:
    """Run until ``duration_s`` (wall) elapsed or ``sequences`` were started; returns the summary dict."""
    tally = Tally()
    stop = threading.Event()
    budget = [sequences] if sequences is not None else None
    clients = []
    for i in range(n_clients):
        # result waits bounded in sim time (+ a wall stall guard): a slow machine is not a hang
        gc = GoalClient(stack.create_node(f"random_client_{i}"), sim_time=stack.sim.sim_time)
        if not gc.wait_for_servers(10.0):
            raise RuntimeError("action servers not available")
        clients.append(gc)
    threads = [threading.Thread(target=_client_loop, args=(gc, random.Random(seed * 100 + i), tally, stop, budget,
                                                           result_timeout_s, 2.0, valid), daemon=True)
               for i, gc in enumerate(clients)]
    t0 = time.monotonic()
    for th in threads:
        th.start()
    last_print = t0
    while any(th.is_alive() for th in threads):
        time.sleep(0.2)
        if duration_s is not None and time.monotonic() - t0 > duration_s:
            stop.set()
        if progress is not None and time.monotonic() - last_print > 10:
            last_print = time.monotonic()
            progress(tally.summary())
    for th in threads:
        th.join(result_timeout_s + 60)
        if th.is_alive():
            tally.hangs += 1
    if not stack.sim._thread.is_alive() or not stack._thread.is_alive():
        tally.crashes += 1
        tally.errors.append("physics or executor thread died")
    s = tally.summary()
    s["wall_s"] = time.monotonic() - t0
    s["server_counters"] = dict(stack.sequencer.counters)
    if hasattr(stack.sim, "fall_state"):      # the simulator's ground-truth fall flag (MuJoCo host)
        s["fall"] = stack.sim.fall_state()
    return s
