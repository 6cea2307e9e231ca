"""Thesis reference values (seed 000, Chapter 4) and the project targets (issue 3 §4).

Each value is (mean, std); std is None where the thesis prints none. Velocities printed "±0" in Table 4.2 are
kept as 0.0. Keys are metric names of :func:`atlas_crawl_eval.metrics.trial_metrics`.
"""

from __future__ import annotations

# Table 4.2: Statistics for Forward Crawling (mean ± std), §4.1.3
FORWARD_FULL = {
    "drift_per_gait_m": (0.2728, 0.037),
    "turn_per_gait_deg": (3.4779, 0.791),
    "distance_per_gait_m": (0.6840, 0.007),
    "velocity_m_s": (0.0791, 0.0),
}
FORWARD_PART = {
    "drift_per_gait_m": (0.2749, 0.023),
    "turn_per_gait_deg": (3.008, 0.504),
    "distance_per_gait_m": (0.7335, 0.008),
    "velocity_m_s": (0.0953, 0.0),
}
# Table 4.3: Statistics for Reverse Crawling, §4.1.3 "Reversing"
BACKWARD_FULL = {
    "drift_per_gait_m": (0.3461, 0.025),
    "turn_per_gait_deg": (5.197, 1.67),
    "distance_per_gait_m": (0.5019, 0.035),
    "velocity_m_s": (0.0580, 0.004),
}
BACKWARD_PART = {
    "drift_per_gait_m": (0.4049, 0.025),
    "turn_per_gait_deg": (4.773, 1.35),
    "distance_per_gait_m": (0.5197, 0.023),
    "velocity_m_s": (0.0675, 0.003),
}
# Table 4.1: Statistics for Turning Motion, §4.1.2 (the thesis turned one way only; used for both directions)
TURNING = {
    "drift_per_circle_m": (0.2478, 0.106),
    "time_per_circle_s": (136.2, 3.38),
    "radius_m": (0.6735, 0.039),
    "cycles_per_circle": (14.38, 0.364),
}
# Table 4.6: Statistics for Forward Crawling under IK solver, §4.2.3 (IIK crawl; for information)
IIK_CRAWL = {
    "drift_per_gait_m": (0.0928, 0.017),
    "turn_per_gait_deg": (13.28, 0.951),
    "distance_per_gait_m": (0.7178, 0.128),
    "velocity_m_s": (0.0314, 0.006),
}

# Thesis trial protocol: §4.1.3 "10 trials ... with 10 cycles", §4.1.2 "5 times, each time ... 20 loops".
# Rolling: issue 3 §4 target "roll to back 20/20 from each side".
PROTOCOL = {
    "crawl_forward": (10, 10),
    "crawl_backward": (10, 10),
    "crawl_forward_fast": (10, 10),   # same protocol as crawl_forward (it is a forward crawl)
    "turn_left": (5, 20),
    "turn_right": (5, 20),
    "roll_left": (20, 1),
    "roll_right": (20, 1),
}


def thesis_reference(behaviour: str, loop: str = "full") -> dict:
    """Thesis values for a behaviour/loop mode ({} for rolling: the thesis gives no statistics there)."""
    if behaviour in ("crawl_forward", "crawl_forward_fast"):   # the thesis has one forward crawl (Table 4.2)
        return FORWARD_PART if loop == "part" else FORWARD_FULL
    if behaviour == "crawl_backward":
        return BACKWARD_PART if loop == "part" else BACKWARD_FULL
    if behaviour in ("turn_left", "turn_right"):
        return TURNING
    return {}


THESIS_SOURCE = {
    "crawl_forward": "Table 4.2",
    "crawl_backward": "Table 4.3",
    "crawl_forward_fast": "Table 4.2",
    "turn_left": "Table 4.1",
    "turn_right": "Table 4.1",
}

# Project targets, issue 3 §4: key -> (comparison, value). "<=" lower is better, ">=" higher is better.
# Magnitudes are compared (|turn| and |drift|; velocity is a speed).
TARGETS = {
    "crawl_forward": {
        "velocity_m_s": (">=", 0.30),
        "progress_per_gait_m": (">=", 0.0),  # it must actually move forward
        "drift_per_gait_m": ("<=", 0.02),
        "turn_per_gait_deg": ("<=", 0.5),
        "abs_turn_per_gait_deg": ("<=", 0.5),
        "fell": ("<=", 0.0),
        "margin_min_m": (">=", 0.03),
    },
    "crawl_backward": {
        "velocity_m_s": (">=", 0.20),
        "progress_per_gait_m": ("<=", 0.0),  # it must actually move backward
        "fell": ("<=", 0.0),
        "margin_min_m": (">=", 0.03),
    },
    "turn_left": {
        "radius_m": ("<=", 0.10),
        "drift_per_circle_m": ("<=", 0.05),
        "time_per_circle_s": ("<=", 40.0),
        "fell": ("<=", 0.0),
        "margin_min_m": (">=", 0.03),
    },
    "roll_left": {"roll_success": (">=", 1.0)},
}
# The dynamic diagonal-pair crawl (crawl_forward_fast) has the forward crawl's targets except the static margin:
# its swings have two contacts (no tripod phase, no support polygon), so the margin rows are n/a by design.
TARGETS["crawl_forward_fast"] = {k: v for k, v in TARGETS["crawl_forward"].items() if k != "margin_min_m"}
TARGETS["turn_right"] = TARGETS["turn_left"]
TARGETS["roll_right"] = TARGETS["roll_left"]

# Direction of "better" vs the thesis for each metric (lower magnitude is better unless listed here).
HIGHER_IS_BETTER = {"distance_per_gait_m", "velocity_m_s", "margin_min_m", "margin_mean_m",
                    "planned_polygon_margin_min_m", "planned_polygon_margin_mean_m", "ground_margin_min_m",
                    "ground_margin_mean_m", "roll_success", "tripod_in_touch_fraction"}
