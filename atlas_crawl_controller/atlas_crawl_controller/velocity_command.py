"""Velocity commands (``/cmd_vel``) and the ``CrawlTo`` law for the gait sequencer's generator crawls (issue 12 §2).

Plain functions (no ROS) that :class:`~atlas_crawl_controller.gait_sequencer.GaitSequencer` calls at every generator
cycle boundary:

* :func:`validate_cmd_vel` — a twist → :class:`~.gait_generator.CrawlCommand` or the reason it is refused
  (non-finite, beyond the ``cmd_vel.max_*`` limits, or beyond what the generator can step: stride / turn per cycle).
  A refused command changes nothing.
* :func:`rate_limit` — the command applied to the next cycle moves from the previous one by at most
  ``cmd_vel.max_accel_m_per_s2`` / ``max_alpha_rad_per_s2`` × cycle time.
* :func:`crawl_to_command` — the ``CrawlTo`` law from the pose error: turn toward the target, crawl, final yaw
  alignment, saturated to the limits (a forward-only law: the generator cannot reverse within one gait).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from .gait_generator import CommandError, CommandLimits, ContactSequence, CrawlCommand

__all__ = ["validate_cmd_vel", "rate_limit", "crawl_to_command", "CrawlToTarget", "pose_errors", "cycle_time_s",
           "ZERO"]

ZERO = CrawlCommand(0.0, 0.0, 0.0)


def _wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi


def cycle_time_s(gen_params, time_scale: float = 1.0) -> float:
    """Duration of one generator cycle (4 steps of shift + swing, 2 with ``pattern`` diagonal_pairs)."""
    seq = ContactSequence(float(gen_params["t_shift_s"]), float(gen_params["t_swing_s"]),
                          pattern=gen_params["pattern"])
    return seq.cycle_s * float(time_scale)


def validate_cmd_vel(linear, angular, params, gen_params) -> Tuple[Optional[CrawlCommand], str]:
    """(vx, vy, vz), (wx, wy, wz) of a Twist → (CrawlCommand, "") or (None, reason).

    All six components must be finite; linear.z, angular.x/y are ignored (a crawl cannot use them). |vx|, |vy|,
    |wz| must be within ``cmd_vel.max_*`` (refused, not clamped: an out-of-limit command is a caller error) and
    within the generator's own bounds (``limits.*``, ``max_stride_m`` and ``max_turn_rad_per_cycle`` per cycle)."""
    vals = [float(v) for v in tuple(linear) + tuple(angular)]
    names = ("linear.x", "linear.y", "linear.z", "angular.x", "angular.y", "angular.z")
    for n, v in zip(names, vals):
        if not math.isfinite(v):
            return None, f"{n} = {v!r} is not finite"
    vx, vy, wz = vals[0], vals[1], vals[5]
    for n, v, key in (("linear.x", vx, "cmd_vel.max_vx_m_per_s"), ("linear.y", vy, "cmd_vel.max_vy_m_per_s"),
                      ("angular.z", wz, "cmd_vel.max_wz_rad_per_s")):
        if abs(v) > float(params[key]) + 1e-12:
            return None, f"|{n}| = {abs(v):.4g} exceeds {key} = {params[key]:.4g}"
    cmd = CrawlCommand(vx, vy, wz)
    try:
        cmd.validated(CommandLimits(gen_params["limits.vx_m_per_s"], gen_params["limits.vy_m_per_s"],
                                    gen_params["limits.wz_rad_per_s"]))
    except CommandError as e:
        return None, f"gait generator limits: {e}"
    Tc = cycle_time_s(gen_params)
    stride = math.hypot(vx, vy) * Tc
    if stride > float(gen_params["max_stride_m"]) + 1e-12:
        return None, (f"stride {stride:.3f} m per {Tc:.2f} s cycle exceeds the generator's max_stride_m = "
                      f"{gen_params['max_stride_m']:.3f}")
    if abs(wz) * Tc > float(gen_params["max_turn_rad_per_cycle"]) + 1e-12:
        return None, (f"turn {abs(wz) * Tc:.3f} rad per cycle exceeds the generator's max_turn_rad_per_cycle = "
                      f"{gen_params['max_turn_rad_per_cycle']:.3f}")
    return cmd, ""


def rate_limit(prev: CrawlCommand, new: CrawlCommand, dt_s: float, max_accel: float, max_alpha: float) -> CrawlCommand:
    """``new`` with each component moved from ``prev`` by at most max_accel·dt (vx, vy) / max_alpha·dt (wz)."""
    dv, dw = max_accel * dt_s, max_alpha * dt_s

    def lim(a, b, d):
        return a + float(np.clip(b - a, -d, d))
    return CrawlCommand(lim(prev.vx_m_per_s, new.vx_m_per_s, dv), lim(prev.vy_m_per_s, new.vy_m_per_s, dv),
                        lim(prev.wz_rad_per_s, new.wz_rad_per_s, dw))


@dataclass(frozen=True)
class CrawlToTarget:
    x_m: float
    y_m: float
    yaw_rad: float
    position_tolerance_m: float
    yaw_tolerance_rad: float


def pose_errors(target: CrawlToTarget, xy, heading_rad: float) -> dict:
    """Remaining distance, bearing error (target direction − heading) and final-yaw error (target yaw − heading)."""
    d = np.array([target.x_m - float(xy[0]), target.y_m - float(xy[1])])
    dist = float(np.hypot(*d))
    bearing = math.atan2(d[1], d[0]) if dist > 1e-9 else heading_rad
    return {"distance_m": dist, "bearing_error_rad": _wrap(bearing - heading_rad),
            "yaw_error_rad": _wrap(target.yaw_rad - heading_rad), "d_world": d}


def within_tolerance(target: CrawlToTarget, err: dict) -> bool:
    return err["distance_m"] <= target.position_tolerance_m and abs(err["yaw_error_rad"]) <= target.yaw_tolerance_rad


def crawl_to_command(target: CrawlToTarget, xy, heading_rad: float, params, cycle_s: float
                     ) -> Tuple[CrawlCommand, str]:
    """The command for the next cycle from the pose error (params ``crawl_to.*``, saturated to ``cmd_vel.max_*``).

    * far (distance > ``crawl_to.near_radius_m``) and |bearing error| > ``crawl_to.turn_in_place_rad``: turn on the
      spot toward the target (``phase`` "turn");
    * far: crawl forward, ``vx = k_p · distance / cycle`` (saturated, scaled by cos(bearing error)), steering
      ``wz = k_yaw · bearing error / cycle`` ("approach");
    * near (within ``near_radius_m``), or a target behind within ``crawl_to.back_up_radius_m``: holonomic —
      body-frame ``(vx, vy) = k_p · error / cycle`` (``vx < 0`` only with ``crawl_to.reverse`` and more than the
      position tolerance behind: the sequencer then starts a backward gait), ``wz`` toward the target yaw ("align");
      within the position tolerance only the yaw is corrected.
    """
    err = pose_errors(target, xy, heading_rad)
    kp, ky = float(params["crawl_to.position_gain"]), float(params["crawl_to.yaw_gain"])
    vmax, vymax = float(params["cmd_vel.max_vx_m_per_s"]), float(params["cmd_vel.max_vy_m_per_s"])
    wmax = float(params["cmd_vel.max_wz_rad_per_s"])
    dist, eb, ey = err["distance_m"], err["bearing_error_rad"], err["yaw_error_rad"]
    c, s = math.cos(heading_rad), math.sin(heading_rad)
    d = err["d_world"]
    ex_b, ey_b = c * d[0] + s * d[1], -s * d[0] + c * d[1]       # error in the body (heading) frame

    def wz_of(e):
        return float(np.clip(ky * e / cycle_s, -wmax, wmax))
    reverse = bool(params["crawl_to.reverse"])
    near = dist <= float(params["crawl_to.near_radius_m"]) or \
        (reverse and ex_b < 0.0 and dist <= float(params["crawl_to.back_up_radius_m"]))
    if dist <= target.position_tolerance_m:
        return CrawlCommand(0.0, 0.0, wz_of(ey)), "align_yaw"
    if near:      # holonomic; a target behind (overshoot) is backed up to (crawl_to.reverse) or reached sideways
        # backing up needs a new gait: only for an along-track error behind beyond the position tolerance (no
        # back-and-forth dithering about the target: each reversal restarts the gait)
        back = reverse and -ex_b > target.position_tolerance_m
        vx = float(np.clip(kp * ex_b / cycle_s, -vmax if back else 0.0, vmax))
        vy = float(np.clip(kp * ey_b / cycle_s, -vymax, vymax))
        return CrawlCommand(vx, vy, wz_of(ey)), "align"
    if abs(eb) > float(params["crawl_to.turn_in_place_rad"]):
        return CrawlCommand(0.0, 0.0, wz_of(eb)), "turn"
    vx = float(np.clip(kp * dist / cycle_s, 0.0, vmax)) * max(0.0, math.cos(eb))
    return CrawlCommand(vx, 0.0, wz_of(eb)), "approach"
