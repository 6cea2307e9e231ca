"""SmoothMove: synchronised joint-space moves with a minimum-jerk profile (team notes 002, "SmoothMove library").

The DRC-era ``smoothJointSpaceMove`` used constant-velocity increments with all selected joints arriving together
and listed "ramp velocities up and down" as a TODO. Here every selected joint follows the same minimum-jerk time
law s(τ) = 10τ³ − 15τ⁴ + 6τ⁵ (τ = t/T), so all arrive at the commanded duration T with zero velocity and zero
acceleration at both ends.

* Bumpless start (team notes, low-level joint controller): the first command after taking over is
  θ_cmd = θ_sensed + τ/Kp, so a position servo that is already holding the robot against gravity is not
  disturbed ("without gravity droop"). Use :meth:`SmoothMove.bumpless_start`.
* Limits: goals outside the joint position limits raise ValueError (nothing changes); the duration is stretched
  if needed so that no joint exceeds its velocity limit (peak min-jerk speed = 1.875·|Δθ|/T), keeping arrival
  synchronised.
* Subsets: ``selected`` (bool mask or joint names) limits a move to some joints; the others hold their command.
"""
from __future__ import annotations

import numpy as np

from atlas_description import JOINT_INDEX, JOINT_NAMES, joint_limits

MIN_JERK_PEAK_SPEED = 1.875  # max of ds/dτ for the quintic min-jerk law


def min_jerk(tau):
    """(s, ds/dτ, d²s/dτ²) of the minimum-jerk law at normalised time τ ∈ [0, 1] (clipped)."""
    t = np.clip(tau, 0.0, 1.0)
    s = t ** 3 * (10 - 15 * t + 6 * t * t)
    ds = 30 * t ** 2 * (1 - t) ** 2
    dds = 60 * t * (1 - t) * (1 - 2 * t)
    return s, ds, dds


class SmoothMove:
    """Synchronised minimum-jerk joint moves for the 28 Atlas joints (team order).

    ``update(dt)`` advances the internal clock and returns (q_cmd (28,), qd_cmd (28,)); ``done()`` tells whether
    the current move finished. ``q_lower/q_upper/v_max`` default to the URDF limits.
    """

    def __init__(self, q_lower=None, q_upper=None, v_max=None, speed_scale: float = 1.0):
        lo, hi, vel, _ = joint_limits()
        self.q_lower = np.array(lo if q_lower is None else q_lower, float)
        self.q_upper = np.array(hi if q_upper is None else q_upper, float)
        self.v_max = np.array(vel if v_max is None else v_max, float) * speed_scale
        self.n = self.q_lower.size
        self.q = None            # current command
        self.qd = np.zeros(self.n)
        self._q0 = None
        self._q1 = None
        self._sel = np.zeros(self.n, bool)
        self.duration = 0.0
        self.t = 0.0

    # -------------------------------------------------------------- start
    def set_current(self, q):
        """Take over at command ``q`` (no bumpless correction)."""
        q = self._check_vec(q, "q")
        self.q = np.clip(q, self.q_lower, self.q_upper)
        self.qd = np.zeros(self.n)
        self._q0 = self.q.copy()
        self._q1 = self.q.copy()
        self.duration, self.t = 0.0, 0.0
        return self.q.copy()

    def bumpless_start(self, q_sensed, effort, kp):
        """Take over from a servo holding the robot: θ_cmd = θ_sensed + τ/Kp (team notes). Returns θ_cmd."""
        q_sensed = self._check_vec(q_sensed, "q_sensed")
        effort = self._check_vec(effort, "effort")
        kp = np.broadcast_to(np.asarray(kp, float), (self.n,))
        if np.any(kp <= 0):
            raise ValueError("bumpless_start: Kp must be > 0 for every joint")
        return self.set_current(q_sensed + effort / kp)

    # -------------------------------------------------------------- moves
    def new_move_goal(self, q_goal, duration_s: float, selected=None):
        """Start a move of the selected joints from the current command to ``q_goal`` arriving after
        ``duration_s`` (stretched if a velocity limit would be exceeded). Returns the effective duration.
        Raises ValueError (nothing changes) for NaN/inf, out-of-limit goals or a non-positive duration."""
        if self.q is None:
            raise RuntimeError("SmoothMove: call set_current() or bumpless_start() first")
        q_goal = self._check_vec(q_goal, "q_goal")
        if not np.isfinite(duration_s) or duration_s <= 0:
            raise ValueError(f"SmoothMove: duration must be > 0 s, got {duration_s}")
        sel = self._mask(selected)
        tol = 1e-9
        bad = sel & ((q_goal < self.q_lower - tol) | (q_goal > self.q_upper + tol))
        if np.any(bad):
            j = int(np.flatnonzero(bad)[0])
            raise ValueError(f"SmoothMove: goal {q_goal[j]:.4f} rad for joint {JOINT_NAMES[j]} outside "
                             f"[{self.q_lower[j]:.4f}, {self.q_upper[j]:.4f}]")
        delta = np.where(sel, q_goal - self.q, 0.0)
        t_min = float(np.max(MIN_JERK_PEAK_SPEED * np.abs(delta) / self.v_max)) if self.n else 0.0
        self.duration = max(float(duration_s), t_min)
        self._q0 = self.q.copy()
        self._q1 = np.where(sel, np.clip(q_goal, self.q_lower, self.q_upper), self.q)
        self._sel = sel
        self.t = 0.0
        return self.duration

    def update(self, dt: float):
        """Advance by ``dt`` seconds; returns (q_cmd, qd_cmd)."""
        if self.q is None:
            raise RuntimeError("SmoothMove: not started")
        self.t = min(self.t + dt, self.duration) if self.duration > 0 else 0.0
        tau = self.t / self.duration if self.duration > 0 else 1.0
        s, ds, _ = min_jerk(tau)
        d = self._q1 - self._q0
        self.q = self._q0 + s * d
        self.qd = (ds / self.duration) * d if self.duration > 0 else np.zeros(self.n)
        return self.q.copy(), self.qd.copy()

    def done(self) -> bool:
        return self.duration <= 0 or self.t >= self.duration - 1e-12

    def remaining_s(self) -> float:
        return max(0.0, self.duration - self.t)

    # -------------------------------------------------------------- helpers
    def _check_vec(self, v, what):
        v = np.asarray(v, float)
        if v.shape != (self.n,):
            raise ValueError(f"SmoothMove: {what} must have shape ({self.n},), got {v.shape}")
        if not np.all(np.isfinite(v)):
            j = int(np.flatnonzero(~np.isfinite(v))[0])
            raise ValueError(f"SmoothMove: {what} is not finite for joint {JOINT_NAMES[j]}")
        return v

    def _mask(self, selected):
        if selected is None:
            return np.ones(self.n, bool)
        sel = list(selected)
        if sel and isinstance(sel[0], str):
            m = np.zeros(self.n, bool)
            for name in sel:
                if name not in JOINT_INDEX:
                    raise ValueError(f"SmoothMove: unknown joint '{name}'")
                m[JOINT_INDEX[name]] = True
            return m
        m = np.asarray(sel, bool)
        if m.shape != (self.n,):
            raise ValueError("SmoothMove: selected mask must have 28 entries")
        return m
