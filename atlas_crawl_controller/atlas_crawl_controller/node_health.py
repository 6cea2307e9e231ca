"""What a node knows about its own health: callback errors, rejected inputs, callback times (plain class, no ROS).

The nodes feed it from their guarded callbacks (``nodes/_common.py``) and publish it as
``diagnostic_msgs/DiagnosticArray`` on ``/diagnostics`` (what ``rqt_robot_monitor`` reads).  Levels follow
``diagnostic_msgs/DiagnosticStatus``: OK 0, WARN 1, ERROR 2.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

OK, WARN, ERROR = 0, 1, 2


@dataclass
class CallbackTimes:
    """Running statistics of one callback's wall time [s]."""
    count: int = 0
    total_s: float = 0.0
    max_s: float = 0.0

    def add(self, dt_s: float) -> None:
        self.count += 1
        self.total_s += dt_s
        self.max_s = max(self.max_s, dt_s)

    @property
    def mean_s(self) -> float:
        return self.total_s / self.count if self.count else 0.0


@dataclass
class NodeHealth:
    """Counters and the last error of one node; thread-safe (callbacks run on several executor threads)."""
    name: str
    state: str = "unknown"
    callback_errors: int = 0
    rejected_inputs: Dict[str, int] = field(default_factory=dict)
    last_error: str = ""
    last_error_wall: float = -math.inf
    error_hold_s: float = 10.0          # an error keeps the level at ERROR this long (wall clock)
    times: Dict[str, CallbackTimes] = field(default_factory=dict)
    extra: Dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record_error(self, what: str, exc: BaseException) -> None:
        with self._lock:
            self.callback_errors += 1
            self.last_error = f"{what}: {type(exc).__name__}: {exc}"
            self.last_error_wall = time.monotonic()

    def reject_input(self, what: str, reason: str) -> int:
        """Count a rejected input (non-finite sensor value, malformed message…); returns the count for ``what``."""
        with self._lock:
            n = self.rejected_inputs.get(what, 0) + 1
            self.rejected_inputs[what] = n
            self.extra[f"last rejected {what}"] = reason
            return n

    def time_callback(self, what: str, dt_s: float) -> None:
        with self._lock:
            self.times.setdefault(what, CallbackTimes()).add(dt_s)

    def level(self) -> int:
        if time.monotonic() - self.last_error_wall < self.error_hold_s:
            return ERROR
        return WARN if self.rejected_inputs else OK

    def summary(self) -> Tuple[int, str, List[Tuple[str, str]]]:
        """(level, message, [(key, value)]) — the fields of one DiagnosticStatus."""
        with self._lock:
            lvl = self.level()
            msg = self.state if lvl == OK else (f"{self.state}; last error: {self.last_error}" if lvl == ERROR
                                                else f"{self.state}; {sum(self.rejected_inputs.values())} "
                                                     "inputs rejected")
            kv = [("state", self.state), ("callback_errors", str(self.callback_errors)),
                  ("last_error", self.last_error or "none")]
            kv += [(f"rejected {k}", str(v)) for k, v in sorted(self.rejected_inputs.items())]
            for k, t in sorted(self.times.items()):
                kv.append((f"time {k} [ms] mean/max/count", f"{1e3 * t.mean_s:.3f}/{1e3 * t.max_s:.3f}/{t.count}"))
            kv += sorted(self.extra.items())
        return lvl, msg, kv


__all__ = ["NodeHealth", "CallbackTimes", "OK", "WARN", "ERROR"]
