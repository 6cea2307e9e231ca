"""Synthetic trial logs with analytically known metrics (tests, report self-check). Not a simulator."""

from __future__ import annotations

import numpy as np

from atlas_crawl_kinematics.rotations import quat_mul_wxyz

from .trial_log import N_GROUND_POINTS, N_JOINTS, TrialLog

# limb offsets in the heading frame (forward, left), metres: LW, RW, LK, RK
LIMB_OFFSETS = np.array([[0.35, 0.25], [0.35, -0.25], [-0.35, 0.20], [-0.35, -0.20]])
SWING_ORDER = (0, 3, 1, 2)  # thesis §4.1.3 tripod order: left arm, right leg, right arm, left leg


def crawl_quat(yaw_rad, pitch_rad=1.2):
    """Pelvis orientation on all fours: yaw about world z, then pitched forward about the pelvis y axis so that
    the pelvis +z axis points (mostly) forward. Returns (N, 4) wxyz."""
    yaw = np.asarray(yaw_rad, dtype=float)
    qz = np.stack([np.cos(yaw / 2), 0 * yaw, 0 * yaw, np.sin(yaw / 2)], axis=-1)
    qy = np.array([np.cos(pitch_rad / 2), 0.0, np.sin(pitch_rad / 2), 0.0])
    return quat_mul_wxyz(qz, np.broadcast_to(qy, qz.shape))


def make_log(com_xy, yaw_rad, cycle_index, dt_s=0.01, pitch_rad=1.2, com_z_m=0.55, keyframes_per_cycle=4,
             contact_xy=None, **meta) -> TrialLog:
    """Build a consistent TrialLog from a CoM path and heading. Contacts ride rigidly with the CoM/heading unless
    ``contact_xy`` (N, 4, 2) is given. Planned stance: tripod gait, one limb swinging per quarter cycle (order of
    SWING_ORDER); in touch = planned; ground points = contacts in touch (NaN padded to 16)."""
    com_xy = np.asarray(com_xy, dtype=float)
    yaw = np.asarray(yaw_rad, dtype=float)
    ci = np.asarray(cycle_index, dtype=int)
    n = len(com_xy)
    t = np.arange(n) * dt_s
    c, s = np.cos(yaw), np.sin(yaw)
    if contact_xy is None:
        off = LIMB_OFFSETS
        contact_xy = np.stack([com_xy[:, 0, None] + c[:, None] * off[:, 0] - s[:, None] * off[:, 1],
                               com_xy[:, 1, None] + s[:, None] * off[:, 0] + c[:, None] * off[:, 1]], axis=-1)
    contact = np.concatenate([contact_xy, np.zeros((n, 4, 1))], axis=-1)
    planned = np.ones((n, 4), dtype=bool)
    kf = np.full(n, -1)
    for k in np.unique(ci[ci >= 0]):
        idx = np.flatnonzero(ci == k)
        frac = (np.arange(len(idx)) / len(idx))
        phase = np.minimum((frac * keyframes_per_cycle).astype(int), keyframes_per_cycle - 1)
        kf[idx] = phase
        for p, limb in enumerate(SWING_ORDER[:keyframes_per_cycle]):
            sw = idx[(phase == p) & ((frac * keyframes_per_cycle - p) > 0.25) & ((frac * keyframes_per_cycle - p) < 0.75)]
            planned[sw, limb] = False
    ground = np.full((n, N_GROUND_POINTS, 3), np.nan)
    for i in range(n):
        pts = contact[i, planned[i]]
        ground[i, : len(pts)] = pts
    com = np.c_[com_xy, np.full(n, com_z_m)]
    pelvis = com + np.array([0.0, 0.0, 0.05])
    kw = dict(meta_gait="synthetic", meta_loop_mode="full", meta_cycles=int(len(np.unique(ci[ci >= 0]))),
              meta_seed=0, meta_fell=False, meta_fall_time_s=float("nan"))
    kw.update(meta)
    return TrialLog(
        time_s=t, pelvis_pos_m=pelvis, pelvis_quat_wxyz=crawl_quat(yaw, pitch_rad), com_pos_m=com,
        contact_pos_m=contact, contact_in_touch=planned.copy(), contact_force_n=planned * 300.0,
        planned_stance=planned, ground_points_m=ground, q_rad=np.zeros((n, N_JOINTS)), cycle_index=ci,
        keyframe_index=kf, **kw,
    )


def _pad(tg, n_rest, margins):
    """Sample times incl. margins: 'rest' keeps the gait's end values, 'moving' extends the motion through them."""
    dt = tg[1] - tg[0]
    pre = tg[0] - dt * np.arange(n_rest, 0, -1)
    post = tg[-1] + dt * np.arange(1, n_rest + 1)
    if margins == "rest":
        return np.concatenate([np.full(n_rest, tg[0]), tg, np.full(n_rest, tg[-1])])
    if margins == "moving":
        return np.concatenate([pre, tg, post])
    raise ValueError("margins must be rest|moving")


def _cycle_index(n_rest, n_cycles, nc):
    return np.concatenate([np.full(n_rest, -1), np.repeat(np.arange(n_cycles), nc), [n_cycles - 1],
                           np.full(n_rest, -1)])


def straight_crawl(speed_m_s=0.3, lateral_m_s=0.0, heading_rad=0.0, n_cycles=4, cycle_s=4.0, rest_s=3.0,
                   dt_s=0.01, yaw_rate_rad_s=0.0, margins="moving", **meta) -> TrialLog:
    """Constant-velocity crawl: forward ``speed_m_s`` along the heading + sideways ``lateral_m_s`` (left +),
    heading turning at ``yaw_rate_rad_s`` (velocity expressed in the initial heading frame), ``rest_s`` margins
    before/after the gait either at rest or still moving (``margins``). Analytic (moving margins, yaw rate 0):
    distance/gait = |v| cycle_s, velocity = |v|, drift/gait = |lateral| cycle_s, turn/gait = yaw_rate cycle_s."""
    nr = int(round(rest_s / dt_s))
    nc = int(round(cycle_s / dt_s))
    tg = np.arange(nc * n_cycles + 1) * dt_s
    tt = _pad(tg, nr, margins)
    fwd = np.array([np.cos(heading_rad), np.sin(heading_rad)])
    left = np.array([-fwd[1], fwd[0]])
    com = tt[:, None] * (speed_m_s * fwd + lateral_m_s * left)
    yaw = heading_rad + yaw_rate_rad_s * tt
    return make_log(com, yaw, _cycle_index(nr, n_cycles, nc), dt_s=dt_s, **meta)


def circle_turn(radius_m=0.5, period_s=40.0, n_cycles=12, cycle_s=4.0, direction=1, rest_s=3.0, dt_s=0.01,
                center=(1.0, -2.0), margins="moving", **meta) -> TrialLog:
    """CoM on a circle of ``radius_m`` at constant angular rate 2π/period (direction +1 left/CCW, -1 right), the
    heading turning with it (tangent). Analytic: time/circle = period, drift/circle = 0, cycles/circle =
    period / cycle_s, radius = R (raw) or R exp(-(σω)²/2) after Gaussian smoothing (σ in seconds)."""
    nr = int(round(rest_s / dt_s))
    nc = int(round(cycle_s / dt_s))
    tg = np.arange(nc * n_cycles + 1) * dt_s
    tt = _pad(tg, nr, margins)
    ang = direction * 2 * np.pi * tt / period_s
    com = np.asarray(center) + radius_m * np.c_[np.cos(ang), np.sin(ang)]
    yaw = ang + direction * np.pi / 2  # tangent
    return make_log(com, yaw, _cycle_index(nr, n_cycles, nc), dt_s=dt_s, **meta)
