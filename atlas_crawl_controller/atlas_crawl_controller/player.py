"""Key-frame player: a state machine over a KeyframeScript driving SmoothMove (thesis §4.1, Fig. 4.7).

Loop modes: ``once`` (play the key-frames once), ``full`` (cycles repeat from key-frame 0), ``part`` (after the
first cycle, cycles restart at ``script.part_loop_start`` — the thesis' "step 0 may be skipped"). Reverse
playback (crawl_backward, thesis §4.1.3) is ``KeyframePlayer(script.reversed(), ...)`` or ``reverse=True``.

Driving it: ``p.start(q_sensed, effort, kp)`` (bumpless), then every control period ``q, qd = p.update(dt)``;
``p.cycle``, ``p.keyframe_index``, ``p.planned_stance()``, ``p.done``.
"""
from __future__ import annotations

import numpy as np

from .keyframes import KeyframeScript
from .smooth_move import SmoothMove

LOOP_MODES = ("once", "full", "part")


class KeyframePlayer:
    def __init__(self, script: KeyframeScript, loop_mode: str = "once", cycles: int = 1, reverse: bool = False,
                 time_scale: float = 1.0, smooth_move: SmoothMove | None = None):
        if loop_mode not in LOOP_MODES:
            raise ValueError(f"loop_mode must be one of {LOOP_MODES}, got {loop_mode!r}")
        if cycles < 1:
            raise ValueError("cycles must be >= 1")
        if not time_scale > 0:
            raise ValueError("time_scale must be > 0")
        self.script = script.reversed(script.name) if reverse else script
        self.loop_mode = loop_mode
        self.cycles = 1 if loop_mode == "once" else int(cycles)
        self.time_scale = float(time_scale)
        self.sm = smooth_move or SmoothMove()
        self.cycle = 0
        self.keyframe_index = 0
        self.done = False
        self.started = False
        self.time_in_keyframe = 0.0

    def start(self, q_sensed, effort=None, kp=None):
        """Bumpless take-over (θ_cmd = θ_sensed + τ/Kp) then start moving to key-frame 0."""
        if effort is None or kp is None:
            self.sm.set_current(q_sensed)
        else:
            self.sm.bumpless_start(q_sensed, effort, kp)
        self.cycle, self.keyframe_index, self.done, self.started = 0, 0, False, True
        self._begin(0)
        return self.sm.q.copy()

    def _begin(self, i):
        kf = self.script.keyframes[i]
        self.keyframe_index = i
        self.time_in_keyframe = 0.0
        self.sm.new_move_goal(kf.q, kf.duration_s * self.time_scale)

    def current(self):
        return self.script.keyframes[self.keyframe_index]

    def planned_stance(self) -> np.ndarray:
        """(4,) bool LW,RW,LK,RK expected on the ground now (True where the script does not say)."""
        return self.current().stance_mask()

    def update(self, dt: float):
        """Advance by dt; returns (q_cmd (28,), qd_cmd (28,))."""
        if not self.started:
            raise RuntimeError("KeyframePlayer.start() first")
        q, qd = self.sm.update(dt)
        self.time_in_keyframe += dt
        if self.sm.done() and not self.done:
            nxt = self.keyframe_index + 1
            if nxt >= len(self.script):
                if self.cycle + 1 >= self.cycles:
                    self.done = True
                    return q, qd
                self.cycle += 1
                nxt = self.script.part_loop_start if self.loop_mode == "part" else 0
            self._begin(nxt)
        return q, qd
