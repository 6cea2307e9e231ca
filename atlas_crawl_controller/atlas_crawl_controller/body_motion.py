"""How fast the pelvis moves, from its recent poses (plain Python, no ROS): the "settled" test a goal waits for.

Over the samples of the last ``window_s`` (sim time), with the oldest pose (p₀, R₀) and the newest (p₁, R₁) Δt apart:

* speed ``v = ‖p₁ − p₀‖ / Δt`` [m/s];
* angular rate ``ω = ‖log(R₁ R₀ᵀ)‖ / Δt`` [rad/s] (the rotation angle between the two, per second).

A mean over the window, not a derivative of one step: noise of the pose estimate averages out. A jump between two
consecutive samples faster than ``jump_m_per_s`` (5 m/s: no crawl moves so) is a discontinuity of the pose source,
not motion (``/sim/reset`` teleports the robot to its start pose with sim time running on; an estimator re-sync
jumps): the window restarts there.  A robot left moving
by a cancelled 3x-speed step (0.5 m/s, 0.8 rad/s seen) and then sent a Crawl lurches and may fall; a goal waits for
``v`` and ``ω`` below the ``start_settle.*`` limits first (gait_sequencer_parameters.yaml).
"""
from __future__ import annotations

import collections
import math
from typing import Optional, Tuple

import numpy as np

__all__ = ["BodyMotion"]


def _rot_angle(q0, q1) -> float:
    """Angle of the rotation between unit quaternions [x y z w] ``q0`` and ``q1`` (rad, in [0, π])."""
    d = abs(float(np.dot(q0, q1)))
    return 2.0 * math.acos(min(1.0, d))


class BodyMotion:
    """Pelvis speed and angular rate over a sliding window of pose samples ``[x y z qx qy qz qw]``."""

    def __init__(self, window_s: float = 0.2, jump_m_per_s: float = 5.0):
        if not (math.isfinite(window_s) and window_s > 0):
            raise ValueError(f"window_s must be finite and > 0, got {window_s!r}")
        if not (math.isfinite(jump_m_per_s) and jump_m_per_s > 0):
            raise ValueError(f"jump_m_per_s must be finite and > 0, got {jump_m_per_s!r}")
        self.window_s = float(window_s)
        self.jump_m_per_s = float(jump_m_per_s)
        self._buf: collections.deque = collections.deque()

    def update(self, t: float, pose) -> None:
        """Add a sample at sim time ``t``; a non-finite sample is ignored, a time that goes back or a jump (a reset)
        restarts the window."""
        p = np.asarray(pose, float).reshape(-1)
        if p.shape != (7,) or not np.all(np.isfinite(p)) or not math.isfinite(t):
            return
        n = float(np.linalg.norm(p[3:7]))
        if n < 1e-9:
            return
        if self._buf:
            t_last, p_last, _ = self._buf[-1]
            if t < t_last or np.linalg.norm(p[:3] - p_last) > self.jump_m_per_s * max(t - t_last, 1e-6):
                self._buf.clear()   # time went back or the pose jumped: a reset / re-sync, not motion
        q = p[3:7] / n
        self._buf.append((float(t), p[:3].copy(), q))
        while len(self._buf) > 2 and self._buf[-1][0] - self._buf[1][0] >= self.window_s:
            self._buf.popleft()

    def rates(self) -> Optional[Tuple[float, float]]:
        """(speed m/s, angular rate rad/s) over the window; None until samples span at least half the window."""
        if len(self._buf) < 2:
            return None
        t0, p0, q0 = self._buf[0]
        t1, p1, q1 = self._buf[-1]
        dt = t1 - t0
        if dt < 0.5 * self.window_s:
            return None
        return float(np.linalg.norm(p1 - p0)) / dt, _rot_angle(q0, q1) / dt

    def still(self, max_speed_m_per_s: float, max_rate_rad_per_s: float) -> Optional[bool]:
        """True when both rates are within the limits, False when not, None when not known yet."""
        r = self.rates()
        if r is None:
            return None
        return r[0] <= max_speed_m_per_s and r[1] <= max_rate_rad_per_s
