"""Locomotion metrics with the thesis' definitions (thesis §4.1.2 "Evaluation Measures", §4.1.3 "Evaluation
Criteria", §4.1.3 "Reversing"; DESIGN.md §7; issue 3 §4).

Conventions
-----------
* All position metrics use the horizontal (x, y) projection of the CoM, smoothed with the thesis' Gaussian
  (σ = 50 samples, window ±200 samples, §4.1.2). Headings are smoothed the same way (after unwrapping).
* Edge handling of the smoothing: ``mode="nearest"`` (default) pads the signal with its first/last value, i.e. it
  assumes the robot rests before the log starts and after it ends. This is exact for a robot at rest and biases a
  moving signal within 200 samples of the log's ends. ``mode="valid"`` instead returns NaN there. The metric
  functions report ``edge_samples``: how many evaluation instants lie within 200 samples of a log end (0 = no edge
  effect at all). The backend records ≥ 2 s of settle before the first and after the last cycle, so it is 0 there.
* Heading (thesis §4.1.2: "orientation of the pelvis"): yaw of the horizontal projection of a pelvis axis. On all
  fours Atlas' pelvis is pitched forward by ~60-90°, so its +z axis (up when standing) points forward; the thesis
  uses that projection when crawling. ``heading_source="pelvis_z"`` (default, used by the report), ``"pelvis_x"``
  (standing convention), or ``"limbs"``: direction from the knee midpoint to the wrist midpoint (horizontal), which
  does not depend on how the pelvis is pitched and is reported as a cross-check.
* Cycles are found from ``cycle_index``: cycle k starts at the first sample with ``cycle_index == k`` (k ≥ 0) and
  ends where cycle k+1 starts; the last cycle ends at the last sample with its index. Samples with
  ``cycle_index < 0`` are outside the gait (settling, set-up).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
from scipy.ndimage import convolve1d

from atlas_crawl_kinematics.rotations import quat_wxyz_to_R

from . import _support
from .trial_log import LIMB_NAMES, TrialLog

SIGMA_SAMPLES = 50  # thesis §4.1.2
HALF_WINDOW_SAMPLES = 200  # thesis §4.1.2: "window which extends over 200 samples in either direction"


class MetricError(ValueError):
    """The log does not contain what a metric needs (e.g. no gait cycle)."""


# ------------------------------------------------------------------------------------------------ smoothing
def gaussian_kernel(sigma: float = SIGMA_SAMPLES, half_window: int = HALF_WINDOW_SAMPLES) -> np.ndarray:
    """Normalised Gaussian window, ``2*half_window + 1`` taps, thesis §4.1.2."""
    if sigma <= 0 or half_window < 0:
        raise ValueError("sigma must be > 0 and half_window >= 0")
    k = np.arange(-half_window, half_window + 1, dtype=float)
    w = np.exp(-0.5 * (k / sigma) ** 2)
    return w / w.sum()


def smooth(x, sigma: float = SIGMA_SAMPLES, half_window: int = HALF_WINDOW_SAMPLES, mode: str = "nearest"):
    """Gaussian smoothing along axis 0 (thesis §4.1.2, σ = 50 samples, ±200 samples).

    mode="nearest": edge values are repeated (robot assumed at rest outside the log);
    mode="valid": samples closer than ``half_window`` to an end are NaN.
    """
    x = np.asarray(x, dtype=float)
    if x.shape[0] == 0:
        raise ValueError("smooth: empty signal")
    if not np.all(np.isfinite(x)):
        raise ValueError("smooth: non-finite samples")
    w = gaussian_kernel(sigma, half_window)
    y = convolve1d(x, w, axis=0, mode="nearest")
    if mode == "valid":
        y[: min(half_window, len(y))] = np.nan
        y[max(len(y) - half_window, 0):] = np.nan
    elif mode != "nearest":
        raise ValueError(f"smooth: unknown mode {mode!r} (nearest|valid)")
    return y


# ------------------------------------------------------------------------------------------------ geometry
def raw_heading_rad(log: TrialLog, source: str = "pelvis_z") -> np.ndarray:
    """Unwrapped, unsmoothed heading (rad, CCW from world x), thesis §4.1.2-4.1.3.

    pelvis_z / pelvis_x: ``atan2`` of the horizontal projection of that pelvis axis (the thesis' "arctangent of the
    x and y coefficients of the orientation"); if the axis is within 1e-6 of vertical the other one is used (same
    fallback as ``atlas_crawl_kinematics.support.spatial_frame``).
    limbs: horizontal direction from the knee midpoint (LK, RK) to the wrist midpoint (LW, RW).
    """
    if source in ("pelvis_z", "pelvis_x"):
        rot = quat_wxyz_to_R(log.pelvis_quat_wxyz)
        ax = 2 if source == "pelvis_z" else 0
        f = rot[:, :2, ax]
        alt = rot[:, :2, 2 - ax]
        weak = np.linalg.norm(f, axis=1) < 1e-6
        f = np.where(weak[:, None], alt, f)
    elif source == "limbs":
        c = log.contact_pos_m
        f = (0.5 * (c[:, 0] + c[:, 1]) - 0.5 * (c[:, 2] + c[:, 3]))[:, :2]
    else:
        raise ValueError(f"unknown heading source {source!r} (pelvis_z|pelvis_x|limbs)")
    return np.unwrap(np.arctan2(f[:, 1], f[:, 0]))


def heading_rad(log: TrialLog, source: str = "pelvis_z", mode: str = "nearest") -> np.ndarray:
    """Smoothed unwrapped heading (rad): :func:`raw_heading_rad` through :func:`smooth` (thesis §4.1.2)."""
    return smooth(raw_heading_rad(log, source), mode=mode)


def com_xy_smoothed(log: TrialLog, mode: str = "nearest") -> np.ndarray:
    """Smoothed horizontal CoM projection (N, 2), thesis §4.1.2 ("x_i ... smoothed data points")."""
    return smooth(log.com_pos_m[:, :2], mode=mode)


# ------------------------------------------------------------------------------------------------ cycles
@dataclass(frozen=True)
class Cycle:
    index: int  # value of cycle_index
    start: int  # sample index of the cycle start
    end: int  # sample index of the cycle end (= start of the next cycle, or last sample of the last one)



def com_displacement_per_cycle(log: TrialLog) -> float:
    """Net smoothed-CoM displacement per gait cycle, first cycle start to last cycle end (m): the robustness
    matrix's drift of a turn on the spot. Raises MetricError without cycles."""
    cyc = cycles(log)
    if not cyc:
        raise MetricError("no gait cycle in the log")
    x = com_xy_smoothed(log)
    return float(np.linalg.norm(x[cyc[-1].end] - x[cyc[0].start]) / len(cyc))

def cycles(log: TrialLog) -> list[Cycle]:
    """Gait cycles from ``cycle_index`` (see module doc). Raises if cycle indices are not non-decreasing."""
    ci = log.cycle_index
    gait = np.flatnonzero(ci >= 0)
    if gait.size == 0:
        return []
    if np.any(np.diff(ci[gait]) < 0):
        raise MetricError("cycle_index must be non-decreasing over the gait")
    ks = np.unique(ci[gait])
    starts = [int(np.flatnonzero(ci == k)[0]) for k in ks]
    out = []
    for j, k in enumerate(ks):
        end = starts[j + 1] if j + 1 < len(ks) else int(np.flatnonzero(ci == k)[-1])
        out.append(Cycle(int(k), starts[j], end))
    return [c for c in out if c.end > c.start]


def cycle_phase(log: TrialLog, cyc: list[Cycle] | None = None) -> np.ndarray:
    """Fractional number of completed cycles at each sample (0 at the first cycle start), by linear interpolation
    in time between cycle boundaries. Used for cycles/circle (thesis §4.1.2)."""
    cyc = cycles(log) if cyc is None else cyc
    if not cyc:
        raise MetricError("no gait cycle in the log (cycle_index < 0 everywhere)")
    t = log.time_s
    bt = np.array([t[c.start] for c in cyc] + [t[cyc[-1].end]])
    return np.interp(t, bt, np.arange(len(bt), dtype=float))


def _edge_samples(n: int, idx) -> int:
    idx = np.asarray(idx)
    return int(np.sum((idx < HALF_WINDOW_SAMPLES) | (idx > n - 1 - HALF_WINDOW_SAMPLES)))


# ------------------------------------------------------------------------------------------------ crawling
@dataclass
class CrawlMetrics:
    """Thesis §4.1.3 (forward) and "Reversing" (backward: same definitions)."""

    drift_per_gait_m: float  # mean over cycles of |lateral displacement| (start -> end of a cycle)
    turn_per_gait_deg: float  # mean over cycles of θ_fin - θ_init (signed, CCW positive)
    abs_turn_per_gait_deg: float  # mean over cycles of |θ_fin - θ_init|
    distance_per_gait_m: float  # |x_final - x_init| / N_cycles over the whole trial
    velocity_m_s: float  # |x_final - x_init| / (t_final - t_init)
    n_cycles: int
    duration_s: float
    progress_per_gait_m: float  # (x_final - x_init)·r_init / N_cycles: signed, + forward, - backward
    total_lateral_drift_m: float  # whole trial, perpendicular to the initial heading (for information)
    turn_per_gait_limbs_deg: float  # same as turn_per_gait_deg but with the limb heading (cross-check)
    edge_samples: int  # evaluation instants within 200 samples of a log end (0 = smoothing edges irrelevant)
    drift_each_m: list = field(default_factory=list)
    turn_each_deg: list = field(default_factory=list)


def crawl_metrics(log: TrialLog, heading_source: str = "pelvis_z", mode: str = "nearest") -> CrawlMetrics:
    """Per-trial crawl metrics, thesis §4.1.3 "Evaluation Criteria".

    * drift/gait: for every cycle, x_init/x_fin = smoothed CoM at cycle start/end, r_init = unit heading at the
      cycle start; d = |(x_fin - x_init) - ((x_fin - x_init)·r_init) r_init| (the thesis' |x_fin - x_fin^{r_init}|
      with positions taken relative to the cycle start); the trial value is the mean over cycles.
    * turn/gait: θ_fin - θ_init per cycle (degrees, smoothed unwrapped heading), mean over cycles.
    * distance/gait: |x_final - x_init| / N_cycles with x_init at the first cycle start, x_final at the last end.
    * velocity: |x_final - x_init| / (t_final - t_init), same instants.
    """
    cyc = cycles(log)
    if not cyc:
        raise MetricError("no gait cycle in the log (cycle_index < 0 everywhere)")
    x = com_xy_smoothed(log, mode)
    th = heading_rad(log, heading_source, mode)
    th_l = heading_rad(log, "limbs", mode)
    drifts, turns, turns_l = [], [], []
    for c in cyc:
        r = np.array([np.cos(th[c.start]), np.sin(th[c.start])])
        dx = x[c.end] - x[c.start]
        drifts.append(float(abs(r[0] * dx[1] - r[1] * dx[0])))  # |r × Δx| = lateral component
        turns.append(float(np.degrees(th[c.end] - th[c.start])))
        turns_l.append(float(np.degrees(th_l[c.end] - th_l[c.start])))
    i0, i1 = cyc[0].start, cyc[-1].end
    disp = x[i1] - x[i0]
    dist = float(np.linalg.norm(disp))
    dur = float(log.time_s[i1] - log.time_s[i0])
    r0 = np.array([np.cos(th[i0]), np.sin(th[i0])])
    bounds = sorted({c.start for c in cyc} | {c.end for c in cyc})
    if not np.all(np.isfinite(np.concatenate([drifts, turns, [dist, dur]]))):
        raise MetricError(f"non-finite crawl metric (smoothing mode {mode!r} near a log end?)")
    return CrawlMetrics(
        drift_per_gait_m=float(np.mean(drifts)),
        turn_per_gait_deg=float(np.mean(turns)),
        abs_turn_per_gait_deg=float(np.mean(np.abs(turns))),
        distance_per_gait_m=dist / len(cyc),
        velocity_m_s=dist / dur,
        n_cycles=len(cyc),
        duration_s=dur,
        progress_per_gait_m=float(r0 @ disp) / len(cyc),
        total_lateral_drift_m=float(abs(r0[0] * disp[1] - r0[1] * disp[0])),
        turn_per_gait_limbs_deg=float(np.mean(turns_l)),
        edge_samples=_edge_samples(log.n, bounds),
        drift_each_m=drifts,
        turn_each_deg=turns,
    )


# ------------------------------------------------------------------------------------------------ turning
@dataclass
class Circle:
    start: int
    end: int
    drift_m: float
    time_s: float
    radius_m: float
    cycles: float
    radius_cycle_starts_m: float  # same radius formula on the smoothed CoM at the cycle starts inside the circle


@dataclass
class TurnMetrics:
    """Thesis §4.1.2 "Evaluation Measures" (Fig. 4.2, Table 4.1)."""

    drift_per_circle_m: float  # mean over complete circles of |x_init - x_fin|
    time_per_circle_s: float  # mean of t_fin - t_init
    radius_m: float  # mean of the per-circle radius (mean distance of the points to their centroid)
    cycles_per_circle: float  # mean gait cycles per circle (fractional)
    radius_cycle_starts_m: float  # radius of the CoM at cycle starts (removes the intra-cycle sway; information)
    n_circles: int  # complete circles found (0 -> the above are NaN)
    turn_direction: int  # +1 CCW (left), -1 CW (right), 0 no turning
    total_turn_deg: float  # heading change over all cycles (signed)
    turn_per_cycle_deg: float  # total_turn_deg / N_cycles (signed)
    time_per_circle_extrapolated_s: float  # 360° / mean yaw rate over the gait (also with 0 circles)
    cycles_per_circle_extrapolated: float  # 360° / |turn_per_cycle_deg|
    edge_samples: int
    circles: list = field(default_factory=list)


def turning_metrics(log: TrialLog, heading_source: str = "pelvis_z", mode: str = "nearest") -> TurnMetrics:
    """Per-trial turning metrics, thesis §4.1.2.

    The first circle starts at the first cycle start (t_init); it ends at the smallest sample t_fin at which the
    unwrapped smoothed heading has changed by 2π in magnitude (the thesis' "smallest time at which r_fin - r_init ≈
    0"). Following circles start where the previous one ended. Per circle, with x_i the smoothed CoM projection:
    drift = |x_init - x_fin|; time = t_fin - t_init; centroid = mean(x_tinit..x_tfin) (inclusive);
    radius = mean |x_i - centroid|; cycles = fractional gait cycles elapsed between t_init and t_fin.
    """
    cyc = cycles(log)
    if not cyc:
        raise MetricError("no gait cycle in the log (cycle_index < 0 everywhere)")
    x = com_xy_smoothed(log, mode)
    th = heading_rad(log, heading_source, mode)
    phase = cycle_phase(log, cyc)
    t = log.time_s
    i0, iend = cyc[0].start, cyc[-1].end
    circles = []
    s = i0
    while True:
        dth = np.abs(th[s: iend + 1] - th[s])
        hit = np.flatnonzero(dth >= 2 * np.pi - 1e-9)
        if hit.size == 0:
            break
        e = s + int(hit[0])
        pts = x[s: e + 1]
        centroid = pts.mean(axis=0)
        cs = x[[c.start for c in cyc if s <= c.start <= e]]
        r_cs = float(np.mean(np.linalg.norm(cs - cs.mean(axis=0), axis=1))) if len(cs) >= 3 else float("nan")
        circles.append(Circle(
            start=s, end=e,
            drift_m=float(np.linalg.norm(x[s] - x[e])),
            time_s=float(t[e] - t[s]),
            radius_m=float(np.mean(np.linalg.norm(pts - centroid, axis=1))),
            cycles=float(phase[e] - phase[s]),
            radius_cycle_starts_m=r_cs,
        ))
        s = e
    total = float(np.degrees(th[iend] - th[i0]))
    dur = float(t[iend] - t[i0])
    nan = float("nan")

    def mean(attr):
        return float(np.mean([getattr(c, attr) for c in circles])) if circles else nan

    rate = abs(total) / dur if dur > 0 else 0.0
    per_cycle = total / len(cyc)
    return TurnMetrics(
        drift_per_circle_m=mean("drift_m"),
        time_per_circle_s=mean("time_s"),
        radius_m=mean("radius_m"),
        cycles_per_circle=mean("cycles"),
        radius_cycle_starts_m=mean("radius_cycle_starts_m"),
        n_circles=len(circles),
        turn_direction=int(np.sign(np.round(total, 6))),
        total_turn_deg=total,
        turn_per_cycle_deg=per_cycle,
        time_per_circle_extrapolated_s=360.0 / rate if rate > 0 else float("inf"),
        cycles_per_circle_extrapolated=360.0 / abs(per_cycle) if per_cycle != 0 else float("inf"),
        edge_samples=_edge_samples(log.n, [i0, iend] + [c.end for c in circles]),
        circles=[asdict(c) for c in circles],
    )


# ------------------------------------------------------------------------------------------------ slip
def true_runs(mask) -> list[tuple[int, int]]:
    """Maximal runs of True in a 1-D bool array as (first, last) inclusive sample indices."""
    m = np.asarray(mask, dtype=bool).astype(np.int8)
    d = np.diff(np.concatenate([[0], m, [0]]))
    starts = np.flatnonzero(d == 1)
    ends = np.flatnonzero(d == -1) - 1
    return list(zip(starts.tolist(), ends.tolist()))


@dataclass
class SlipMetrics:
    """Slip of stance contacts (issue 3 §1/§4; the thesis' "skating", §4.1.3 / §4.2.3)."""

    mean_mm: float  # mean over stance intervals of the net horizontal displacement |p_xy(end) - p_xy(start)|
    max_mm: float  # max of the same
    max_excursion_mm: float  # max over intervals of max_t |p_xy(t) - p_xy(start)|
    n_intervals: int
    per_limb_mean_mm: dict = field(default_factory=dict)
    per_limb_max_mm: dict = field(default_factory=dict)


def slip_metrics(log: TrialLog, min_duration_s: float = 0.1) -> SlipMetrics:
    """For every limb and every maximal interval where it is BOTH in ground-truth contact (``contact_in_touch``)
    and planned stance (``planned_stance``) and that lasts ≥ ``min_duration_s`` (shorter ones are touch-down
    chatter), the horizontal displacement of its contact frame over the interval (raw, unsmoothed, world frame).
    Note: a contact frame fixed to a rounded knee/wrist also moves when the limb rolls without slipping."""
    c = log.contact_pos_m[:, :, :2]
    stance = log.contact_in_touch & log.planned_stance
    net, exc = [], []
    per_mean, per_max = {}, {}
    for j, name in enumerate(LIMB_NAMES):
        lj = []
        for a, b in true_runs(stance[:, j]):
            if log.time_s[b] - log.time_s[a] < min_duration_s:
                continue
            rel = np.linalg.norm(c[a: b + 1, j] - c[a, j], axis=1)
            lj.append(rel[-1])
            exc.append(rel.max())
        net.extend(lj)
        per_mean[name] = float(np.mean(lj) * 1e3) if lj else float("nan")
        per_max[name] = float(np.max(lj) * 1e3) if lj else float("nan")
    nan = float("nan")
    return SlipMetrics(
        mean_mm=float(np.mean(net) * 1e3) if net else nan,
        max_mm=float(np.max(net) * 1e3) if net else nan,
        max_excursion_mm=float(np.max(exc) * 1e3) if exc else nan,
        n_intervals=len(net),
        per_limb_mean_mm=per_mean,
        per_limb_max_mm=per_max,
    )


# ------------------------------------------------------------------------------------------------ stability
def margin_series(log: TrialLog, polygon: str = "planned", idx=None) -> np.ndarray:
    """Signed static stability margin (m) of the RAW CoM projection (positive inside), thesis §4.1 support-polygon
    check / DESIGN.md §6, at the samples ``idx`` (default all; others are NaN). polygon="planned": hull of the
    contacts that are planned stance AND in touch; "ground": hull of the ground-truth floor contact points
    (``ground_points_m``, NaN padding dropped); "planned_positions": hull of the planned stance contacts
    whether or not they touch (the thesis' support-polygon plots, Fig 4.4). NaN where there is no support point at all. The margin is
    translation/yaw invariant, so the world horizontal plane gives the same number as the spatial frame.
    Results are cached on the log object (the hull per sample is the expensive part)."""
    if polygon not in ("planned", "ground", "planned_positions"):
        raise ValueError(f"polygon must be planned|ground|planned_positions, got {polygon!r}")
    cache = log.__dict__.setdefault("_margin_cache", {})
    if polygon not in cache:
        cache[polygon] = (np.full(log.n, np.nan), np.zeros(log.n, dtype=bool))
    vals, done = cache[polygon]
    want = np.arange(log.n) if idx is None else np.asarray(idx, dtype=int)
    com = log.com_pos_m[:, :2]
    for i in want[~done[want]]:
        if polygon == "planned":
            pts = log.contact_pos_m[i, log.planned_stance[i] & log.contact_in_touch[i], :2]
        elif polygon == "planned_positions":  # thesis Fig 4.4: the polygon of the limbs meant to support
            pts = log.contact_pos_m[i, log.planned_stance[i], :2]
        else:
            g = log.ground_points_m[i]
            pts = g[np.all(np.isfinite(g), axis=1), :2]
        if len(pts):
            vals[i] = _support.stability_margin(com[i], _support.support_polygon(pts))
        done[i] = True
    out = np.full(log.n, np.nan)
    out[want] = vals[want]
    return out


@dataclass
class StabilityMetrics:
    min_m: float  # min over tripod samples (planned stance of exactly 3 limbs) of the planned-contact margin
    mean_m: float
    ground_min_m: float  # same over the ground-truth contact polygon
    ground_mean_m: float
    n_tripod_samples: int
    tripod_in_touch_fraction: float  # tripod samples whose 3 planned contacts are all in touch
    unsupported_samples: int  # tripod samples with no planned contact in touch (excluded from min/mean)
    per_keyframe_min_m: dict = field(default_factory=dict)  # keyframe_index -> min planned margin
    planned_positions_min_m: float = float("nan")  # hull of the planned stance contacts, touching or not
    planned_positions_mean_m: float = float("nan")


def stability_metrics(log: TrialLog) -> StabilityMetrics:
    """Static stability margin over the tripod phases (issue 3 §4: "≥ 0.03 m in every tripod phase"): samples
    where exactly three limbs are planned stance (tripod gait, thesis §4.1.3). Planned-contact polygon as in
    :func:`margin_series`; fewer than 3 in-touch contacts give the (≤ 0) signed distance to the segment/point."""
    tri = np.flatnonzero(log.planned_stance.sum(axis=1) == 3)
    nan = float("nan")
    if tri.size == 0:
        return StabilityMetrics(nan, nan, nan, nan, 0, nan, 0, {})
    mp = margin_series(log, "planned", tri)[tri]
    mg = margin_series(log, "ground", tri)[tri]
    mpp = margin_series(log, "planned_positions", tri)[tri]
    ppfin = mpp[np.isfinite(mpp)]
    full = np.all(log.contact_in_touch[tri] | ~log.planned_stance[tri], axis=1)
    kf = log.keyframe_index[tri]
    per_kf = {}
    for k in np.unique(kf):
        v = mp[kf == k]
        v = v[np.isfinite(v)]
        if v.size:
            per_kf[int(k)] = float(v.min())
    fin = mp[np.isfinite(mp)]
    gfin = mg[np.isfinite(mg)]
    return StabilityMetrics(
        min_m=float(fin.min()) if fin.size else nan,
        mean_m=float(fin.mean()) if fin.size else nan,
        ground_min_m=float(gfin.min()) if gfin.size else nan,
        ground_mean_m=float(gfin.mean()) if gfin.size else nan,
        n_tripod_samples=int(tri.size),
        tripod_in_touch_fraction=float(full.mean()),
        unsupported_samples=int(np.sum(~np.isfinite(mp))),
        per_keyframe_min_m=per_kf,
        planned_positions_min_m=float(ppfin.min()) if ppfin.size else nan,
        planned_positions_mean_m=float(ppfin.mean()) if ppfin.size else nan,
    )


# ------------------------------------------------------------------------------------------------ rolling
def roll_success(log: TrialLog, last_s: float = 0.5, min_up: float = np.cos(np.radians(45))) -> bool:
    """Roll to back (thesis §4.1.1) succeeded: over the last ``last_s`` the pelvis front (+x) axis points up by
    more than 45° (mean world-z component ≥ cos 45°), i.e. Atlas lies on its back, and it was not flagged fallen."""
    sel = log.time_s >= log.time_s[-1] - last_s
    up = quat_wxyz_to_R(log.pelvis_quat_wxyz[sel])[:, 2, 0]
    return bool(np.mean(up) >= min_up and not log.meta_fell)


# ------------------------------------------------------------------------------------------------ per trial
CRAWL_BEHAVIOURS = ("crawl_forward", "crawl_backward", "crawl_forward_fast")
TURN_BEHAVIOURS = ("turn_left", "turn_right")
ROLL_BEHAVIOURS = ("roll_left", "roll_right")


def trial_metrics(log: TrialLog, behaviour: str, heading_source: str = "pelvis_z",
                  slip_min_duration_s: float = 0.1) -> dict:
    """Flat dict of every metric of one trial (the report aggregates these over trials)."""
    out: dict = {"fell": float(log.meta_fell), "fall_time_s": log.meta_fall_time_s, "seed": log.meta_seed}
    if behaviour in CRAWL_BEHAVIOURS:
        m = crawl_metrics(log, heading_source)
        out.update({k: v for k, v in asdict(m).items() if not isinstance(v, list)})
    elif behaviour in TURN_BEHAVIOURS:
        m = turning_metrics(log, heading_source)
        out.update({k: v for k, v in asdict(m).items() if not isinstance(v, list)})
    elif behaviour in ROLL_BEHAVIOURS:
        out["roll_success"] = float(roll_success(log))
    else:
        raise ValueError(f"unknown behaviour {behaviour!r}")
    if behaviour not in ROLL_BEHAVIOURS:
        s = slip_metrics(log, slip_min_duration_s)
        out.update({"slip_mean_mm": s.mean_mm, "slip_max_mm": s.max_mm, "slip_max_excursion_mm": s.max_excursion_mm,
                    "slip_intervals": float(s.n_intervals)})
        st = stability_metrics(log)
        out.update({"margin_min_m": st.min_m, "margin_mean_m": st.mean_m, "ground_margin_min_m": st.ground_min_m,
                    "planned_polygon_margin_min_m": st.planned_positions_min_m,
                    "planned_polygon_margin_mean_m": st.planned_positions_mean_m,
                    "ground_margin_mean_m": st.ground_mean_m, "tripod_samples": float(st.n_tripod_samples),
                    "tripod_in_touch_fraction": st.tripod_in_touch_fraction,
                    "margin_min_per_keyframe_m": st.per_keyframe_min_m})
    return out
