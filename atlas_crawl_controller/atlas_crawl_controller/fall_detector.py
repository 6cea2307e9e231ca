"""Fall detector and posture classifier: the project's one fall definition (plain Python, no ROS, no MuJoCo).

Inputs: the pelvis pose ``[x y z qx qy qz qw]`` and, where known, the names of bodies touching the floor and the
per-limb contact flags (LW, RW, LK, RK).  Angles of the pelvis frame in the world (R = rotation of the pelvis):

* roll about the spine ``φ = atan2(R[2,1], -R[2,0])``: 0 belly down (crawl stance, prone), +π/2 lying on the
  right side, −π/2 on the left side, ±π on the back;
* spine pitch ``θ = asin(R[2,2])``: the elevation of the pelvis z axis (the crawl heading axis); 0.20-0.38 rad
  in the crawl gaits, +π/2 standing.

Fallen (crawl definition, :meth:`FallDetector.check`) when the pelvis is below ``fall.min_pelvis_height_m``, or
``|φ| > fall.max_roll_rad``, or θ outside [``fall.min_pitch_rad``, ``fall.max_pitch_rad``], or a body in
``fall.forbidden_bodies`` touches the floor.  :meth:`FallDetector.update` adds time: a support state without any
limb in contact for ``fall.support_loss_s`` is a fall too; a condition must hold ``fall.onset_s`` before the flag
rises (debounce) and the flag clears only after ``fall.clear_s`` upright inside the clear margins (hysteresis).
Parameters: the ``fall.*`` / ``posture.*`` entries of config/gait_sequencer_parameters.yaml.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional

import numpy as np

__all__ = ["PRONE", "SUPINE", "LEFT_SIDE", "RIGHT_SIDE", "CRAWL", "OTHER", "FallState", "FallDetector",
           "pelvis_angles", "classify_posture", "fall_parameters"]

CRAWL, PRONE, SUPINE, LEFT_SIDE, RIGHT_SIDE, OTHER = "crawl", "prone", "supine", "left_side", "right_side", "other"


def fall_parameters(overrides: Optional[Mapping] = None):
    """The ``fall.*`` / ``posture.*`` values of the gait sequencer parameter file (defaults + ``overrides``)."""
    from .parameters import load_parameter_file
    return load_parameter_file("gait_sequencer_parameters.yaml").values(overrides or {})


def _pose(pose) -> np.ndarray:
    p = np.asarray(pose, dtype=float).reshape(-1)
    if p.shape != (7,):
        raise ValueError(f"pelvis pose must be 7 numbers [x y z qx qy qz qw], got shape {p.shape}")
    return p


def pelvis_angles(pose):
    """(roll about the spine φ, spine pitch θ) in rad from a pelvis pose [x y z qx qy qz qw] (see module doc)."""
    p = _pose(pose)
    x, y, z, w = p[3:7]
    n = math.sqrt(x * x + y * y + z * z + w * w)
    if not math.isfinite(n) or n < 1e-9:
        raise ValueError("pelvis quaternion must be finite and non-zero")
    x, y, z, w = x / n, y / n, z / n, w / n
    r20 = 2 * (x * z - w * y)
    r21 = 2 * (y * z + w * x)
    r22 = 1 - 2 * (x * x + y * y)
    return math.atan2(r21, -r20), math.asin(max(-1.0, min(1.0, r22)))


def classify_posture(pose, crawl_min_height_m: float = 0.35, max_pitch_rad: float = 1.2,
                     min_pitch_rad: float = -0.8) -> str:
    """crawl | prone | supine | left_side | right_side | other (spine steeply up or down), from the pelvis pose."""
    p = _pose(pose)
    roll, pitch = pelvis_angles(p)
    if pitch > max_pitch_rad or pitch < min_pitch_rad:
        return OTHER
    a = abs(roll)
    if a <= math.pi / 4:
        return CRAWL if p[2] >= crawl_min_height_m else PRONE
    if a >= 3 * math.pi / 4:
        return SUPINE
    return RIGHT_SIDE if roll > 0 else LEFT_SIDE


@dataclass
class FallState:
    fallen: bool = False
    reason: str = ""                 # what triggered the flag (kept while fallen)
    onset_t: float = math.nan        # time the triggering condition began
    flagged_t: float = math.nan      # time the flag rose
    posture: str = CRAWL


class FallDetector:
    """See the module docstring. ``params``: a ParamValues/mapping with the ``fall.*``/``posture.*`` keys."""

    def __init__(self, params=None):
        self.set_params(params if params is not None else fall_parameters())
        self.reset()

    def set_params(self, params) -> None:
        g = params.__getitem__
        self.min_h = float(g("fall.min_pelvis_height_m"))
        self.max_roll = float(g("fall.max_roll_rad"))
        self.min_pitch = float(g("fall.min_pitch_rad"))
        self.max_pitch = float(g("fall.max_pitch_rad"))
        self.forbidden = frozenset(g("fall.forbidden_bodies"))
        self.support_loss_s = float(g("fall.support_loss_s"))
        self.onset_s = float(g("fall.onset_s"))
        self.clear_s = float(g("fall.clear_s"))
        self.clear_h = float(g("fall.clear_height_margin_m"))
        self.clear_a = float(g("fall.clear_angle_margin_rad"))
        self.crawl_min_h = float(g("posture.crawl_min_height_m"))

    def reset(self) -> None:
        self.state = FallState()
        self._pending_t: Optional[float] = None
        self._pending_reason = ""
        self._clear_t: Optional[float] = None
        self._no_support_t: Optional[float] = None
        self._last_t: Optional[float] = None
        self.skipped_samples = 0

    def posture(self, pose) -> str:
        return classify_posture(pose, self.crawl_min_h, self.max_pitch, self.min_pitch)

    # ------------------------------------------------------------------ instantaneous definition
    def check(self, pose, body_contacts: Optional[Iterable[str]] = None, margin: float = 0.0):
        """(fallen, reason) for one sample, no time involved. ``margin`` (0..1) shrinks the limits by the clear
        margins (used for the hysteresis)."""
        p = _pose(pose)
        roll, pitch = pelvis_angles(p)
        h_lim = self.min_h + margin * self.clear_h
        a = margin * self.clear_a
        if p[2] < h_lim:
            return True, f"pelvis height {p[2]:.3f} m < {h_lim:.3f} m"
        if abs(roll) > self.max_roll - a:
            return True, (f"roll about the spine {roll:+.2f} rad beyond ±{self.max_roll - a:.2f} rad "
                          f"({self.posture(p).replace('_', ' ')})")
        if pitch > self.max_pitch - a or pitch < self.min_pitch + a:
            return True, (f"spine pitch {pitch:+.2f} rad outside [{self.min_pitch + a:.2f}, "
                          f"{self.max_pitch - a:.2f}] rad")
        if body_contacts is not None:
            hit = sorted(set(body_contacts) & self.forbidden)
            if hit:
                return True, f"{', '.join(hit)} touches the floor"
        return False, ""

    # ------------------------------------------------------------------ over time
    def update(self, t: float, pose, body_contacts: Optional[Iterable[str]] = None,
               in_contact=None) -> FallState:
        """Feed one sample at time ``t`` (s); returns the (debounced) :class:`FallState`. A non-finite sample is
        skipped (counted in ``skipped_samples``); time going backwards restarts the timers."""
        p = _pose(pose)
        if not (np.all(np.isfinite(p)) and math.isfinite(float(t))):
            self.skipped_samples += 1
            return self.state
        t = float(t)
        if self._last_t is not None and t < self._last_t:
            self._pending_t = self._clear_t = self._no_support_t = None
        self._last_t = t
        self.state.posture = self.posture(p)
        cond, why = self.check(p, body_contacts)
        lost_s = 0.0
        if in_contact is not None and self.support_loss_s > 0:
            if np.asarray(in_contact, bool).any():
                self._no_support_t = None
            else:
                self._no_support_t = t if self._no_support_t is None else self._no_support_t
                lost_s = t - self._no_support_t
                if not cond and lost_s >= self.support_loss_s:
                    cond, why = True, f"all support lost for {lost_s:.2f} s"
        st = self.state
        if not st.fallen:
            if not cond:
                self._pending_t = None
                return st
            if self._pending_t is None:
                self._pending_t, self._pending_reason = t, why
            if t - self._pending_t >= self.onset_s - 1e-9:
                onset = self._pending_t
                if why.startswith("all support lost"):
                    onset = self._no_support_t
                st.fallen, st.reason, st.onset_t, st.flagged_t = True, self._pending_reason, onset, t
                self._pending_t = None
                self._clear_t = None
            return st
        bad, _ = self.check(p, body_contacts, margin=1.0)
        if not bad and in_contact is not None and self.support_loss_s > 0 and lost_s > 0:
            bad = True
        if bad:
            self._clear_t = None
            return st
        self._clear_t = t if self._clear_t is None else self._clear_t
        if t - self._clear_t >= self.clear_s - 1e-9:
            self.state = FallState(posture=st.posture)
            self._clear_t = None
        return self.state
