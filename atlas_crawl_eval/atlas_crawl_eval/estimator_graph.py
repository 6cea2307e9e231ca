"""Closed loop on the state estimate vs on ground truth, through the embedded ROS graph (issue 14 §1).

    python -m atlas_crawl_eval.estimator_graph [--goal crawl "{cycles: 10}"] [--goal turn "{cycles: 12}"] \\
        [--goal crawl "{cycles: 4, method: METHOD_IIK}"] [--json out.json]

For every goal and each ``pose_source`` (``ground_truth``, then ``estimate``) a fresh embedded graph
(:class:`atlas_crawl_bringup.stack.Stack`, MuJoCo as fast as possible) runs the goal and
:func:`atlas_crawl_eval.graph_trial.run_graph_trial` measures it on the simulator's ground-truth pose (the
evaluation's view) with the thesis metrics. With ``estimate`` the controller, the sequencer and contact inference
read the estimator's pose (IMU with the default noise + leg kinematics), so any estimation error acts on the motion.
Printed: the two locomotion tables side by side with their relative difference (target ≤ 10 %), and for the
estimate run the estimator's final error against the ground truth: horizontal position error in % of the path
(target ≤ 2 %) and heading error in °/m (target ≤ 1 °/m; ° per circle for turns).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np

from . import params as params_mod
from .graph_trial import behaviour_of, compute_metrics, run_graph_trial, trial_log_from_recording

KEYS = {"crawl": ("velocity_m_s", "distance_per_gait_m", "drift_per_gait_m", "turn_per_gait_deg"),
        "turn": ("turn_per_cycle_deg", "time_per_circle_s", "radius_m", "drift_per_circle_m")}
TARGET_REL, TARGET_DRIFT_PCT, TARGET_YAW_DEG_PER_M = 0.10, 2.0, 1.0


def _heading(R: np.ndarray) -> float:
    from atlas_crawl_kinematics.support import crawl_heading_rad
    return crawl_heading_rad(R)


def run_one(kind: str, goal_text: str, pose_source: str, timeout_s: float = 900.0) -> dict:
    """One goal on a fresh graph with ``pose_source``; metrics on ground truth (+ estimator error)."""
    from atlas_crawl_bringup.send_goal import goal_from_text
    from atlas_crawl_bringup.stack import Stack
    from atlas_crawl_kinematics.rotations import quat_wxyz_to_R
    goal = goal_from_text(kind, goal_text)
    prm = params_mod.load_params()
    w0 = time.monotonic()
    stack = Stack(node_params={"mujoco_sim": {"real_time_factor": 0.0}}, pose_source=pose_source)
    try:
        node = stack.create_node(f"estimator_graph_{pose_source}")
        out = run_graph_trial(node, kind, goal, settle_before_s=prm["settle_before_s"],
                              settle_after_s=prm["settle_after_s"], result_timeout_s=timeout_s)
        res = dict(kind=kind, goal=goal_text, pose_source=pose_source, status=out.status, reason=out.reason,
                   fallen=bool(stack.sim.fall_state()["fallen"]))
        if out.recording is not None and out.status not in ("unavailable", "timeout", "rejected"):
            behaviour = behaviour_of(kind, goal)
            log, _notes = trial_log_from_recording(out.recording)
            res["metrics"] = compute_metrics(log, behaviour, prm["heading_source"])
            from .metrics import smooth
            xy = smooth(log.pelvis_pos_m[:, :2])        # thesis §4.1.3 smoothing, as estimator_eval
            res["path_m"] = float(np.sum(np.linalg.norm(np.diff(xy, axis=0), axis=1)))
            e = stack.sim.estimator.estimate()
            if e is not None:
                p, q = stack.sim.sim.pelvis_pose()
                R = quat_wxyz_to_R(q)
                res["est_error_m"] = float(np.linalg.norm(e.position[:2] - p[:2]))
                res["est_z_error_m"] = float(e.position[2] - p[2])
                res["est_yaw_error_deg"] = math.degrees((_heading(e.R) - _heading(R) + math.pi) % (2 * math.pi)
                                                        - math.pi)
        res["wall_s"] = time.monotonic() - w0
        return res
    finally:
        stack.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--goal", nargs=2, action="append", metavar=("ACTION", "YAML"),
                    help='e.g. --goal crawl "{cycles: 10}" (repeatable; default: 10-cycle crawl, 12-cycle turn)')
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    goals = a.goal or [["crawl", "{cycles: 10}"], ["turn", "{cycles: 12}"]]
    rows, ok_all = [], True
    for kind, text in goals:
        pair = {ps: run_one(kind, text, ps) for ps in ("ground_truth", "estimate")}
        rows.append(pair)
        g, e = pair["ground_truth"], pair["estimate"]
        print(f"\n== {kind} {text}: ground truth {g['status']} ({g['wall_s']:.0f} s wall), estimate {e['status']} "
              f"({e['wall_s']:.0f} s wall){'; FELL' if g['fallen'] or e['fallen'] else ''}")
        for r in (g, e):
            if r["reason"]:
                print(f"  {r['pose_source']}: {r['reason']}")
        ok = g["status"] == e["status"] == "succeeded" and not (g["fallen"] or e["fallen"])
        if "metrics" in g and "metrics" in e:
            print(f"  {'metric':<22}{'ground truth':>14}{'estimate':>14}{'rel diff':>10}")
            for k in KEYS[kind]:
                x, y = float(g["metrics"][k]), float(e["metrics"][k])
                rel = abs(y - x) / abs(x) if abs(x) > 1e-9 else float("inf")
                ok &= rel <= TARGET_REL
                print(f"  {k:<22}{x:>14.4f}{y:>14.4f}{100 * rel:>9.1f}%{'' if rel <= TARGET_REL else '  >10%'}")
        if "est_error_m" in e:
            path = max(e["path_m"], 1e-9)
            pct = 100 * e["est_error_m"] / path
            line = (f"  estimator at the end: {100 * e['est_error_m']:.2f} cm = {pct:.2f} % of the {path:.2f} m path "
                    f"(z {100 * e['est_z_error_m']:+.2f} cm), heading {e['est_yaw_error_deg']:+.2f} deg")
            if kind == "crawl":
                ok &= pct <= TARGET_DRIFT_PCT and abs(e["est_yaw_error_deg"]) / path <= TARGET_YAW_DEG_PER_M
                line += f" = {abs(e['est_yaw_error_deg']) / path:.2f} deg/m"
            print(line)
        ok_all &= ok
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1, default=float)
    print("\nall targets met" if ok_all else "\nsome targets MISSED (see above)")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
