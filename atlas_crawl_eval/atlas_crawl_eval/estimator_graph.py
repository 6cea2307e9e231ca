"""Closed loop on the state estimate vs on ground truth, through the embedded ROS graph (issue 14 §1).

    python -m atlas_crawl_eval.estimator_graph [--goal crawl "{cycles: 10}"] [--goal turn "{cycles: 12}"] \\
        [--goal crawl "{cycles: 4, method: METHOD_IIK}"] [--set gait_sequencer:wait_for_support=false] \\
        [--pose-sources ground_truth] [--json out.json]

For every goal and each ``pose_source`` (``ground_truth``, then ``estimate``) a fresh embedded graph
(:class:`atlas_crawl_bringup.stack.Stack`, MuJoCo as fast as possible) runs the goal and
:func:`atlas_crawl_eval.graph_trial.run_graph_trial` measures it on the simulator's ground-truth pose (the
evaluation's view) with the thesis metrics. With ``estimate`` the controller, the sequencer and contact inference
read the estimator's pose (IMU with the default noise + leg kinematics), so any estimation error acts on the motion.
The graph is not deterministic (callback timing decides when the sequencer sees a support state), so each
condition runs ``--trials`` times. Printed: the two locomotion tables side by side (mean ± std over the trials) with
the relative difference of the means (target ≤ 10 %), and for the estimate runs the estimator's final error
against the ground truth: horizontal position error in % of the path (target ≤ 2 %) and heading error in °/m
(target ≤ 1 °/m), mean and worst over the trials.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np

from . import params as params_mod
from .graph_trial import behaviour_of, compute_metrics, phase_time_s, run_graph_trial, trial_log_from_recording
from .metrics import MetricError

KEYS = {"crawl": ("velocity_m_s", "distance_per_gait_m", "drift_per_gait_m", "turn_per_gait_deg"),
        "turn": ("turn_per_cycle_deg", "time_per_circle_s", "radius_m", "drift_per_circle_m")}
TARGET_REL, TARGET_DRIFT_PCT, TARGET_YAW_DEG_PER_M = 0.10, 2.0, 1.0


def _heading(R: np.ndarray) -> float:
    from atlas_crawl_kinematics.support import crawl_heading_rad
    return crawl_heading_rad(R)


def parse_sets(items) -> dict:
    """``["node:param=value", ...]`` → ``{node: {param: value}}`` (values read as YAML); ValueError with the reason."""
    import yaml
    out: dict = {}
    for it in items or []:
        node, sep, rest = it.partition(":")
        name, eq, val = rest.partition("=")
        if not (sep and eq and node and name):
            raise ValueError(f"--set {it!r}: expected NODE:PARAM=VALUE, e.g. gait_sequencer:wait_for_support=false")
        try:
            out.setdefault(node, {})[name] = yaml.safe_load(val)
        except yaml.YAMLError as e:
            raise ValueError(f"--set {it!r}: the value is not YAML ({e})") from e
    return out


def run_one(kind: str, goal_text: str, pose_source: str, timeout_s: float = 900.0,
            node_params: dict | None = None) -> dict:
    """One goal on a fresh graph with ``pose_source``; metrics on ground truth (+ estimator error). ``node_params``:
    parameter overrides per node name, over the launch defaults."""
    from atlas_crawl_bringup.send_goal import goal_from_text
    from atlas_crawl_bringup.stack import Stack
    from atlas_crawl_kinematics.rotations import quat_wxyz_to_R
    goal = goal_from_text(kind, goal_text)
    prm = params_mod.load_params()
    w0 = time.monotonic()
    params = {"mujoco_sim": {"real_time_factor": 0.0}}
    for node_name, vals in (node_params or {}).items():
        params.setdefault(node_name, {}).update(vals)
    stack = Stack(node_params=params, pose_source=pose_source)
    try:
        node = stack.create_node(f"estimator_graph_{pose_source}")
        out = run_graph_trial(node, kind, goal, settle_before_s=prm["settle_before_s"],
                              settle_after_s=prm["settle_after_s"], result_timeout_s=timeout_s)
        res = dict(kind=kind, goal=goal_text, pose_source=pose_source, status=out.status, reason=out.reason,
                   fallen=bool(stack.sim.fall_state()["fallen"]))
        if out.recording is not None and out.status not in ("unavailable", "timeout", "rejected"):
            behaviour = behaviour_of(kind, goal)
            log, _notes = trial_log_from_recording(out.recording)
            try:
                res["metrics"] = compute_metrics(log, behaviour, prm["heading_source"])
            except MetricError as e:      # e.g. a fall before the first full cycle: reported, not a crash
                res["reason"] = f"{res['reason']}; no metrics: {e}" if res["reason"] else f"no metrics: {e}"
            res["phase_time_s"] = phase_time_s(out.recording)
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


def _stats(vals):
    v = np.asarray(vals, float)
    return float(v.mean()), float(v.std())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--goal", nargs=2, action="append", metavar=("ACTION", "YAML"),
                    help='e.g. --goal crawl "{cycles: 10}" (repeatable; default: 10-cycle crawl, 12-cycle turn)')
    ap.add_argument("--trials", type=int, default=3, help="trials per goal and pose source (fresh graph each)")
    ap.add_argument("--set", action="append", default=[], metavar="NODE:PARAM=VALUE",
                    help="node parameter override, e.g. gait_sequencer:wait_for_support=false (repeatable)")
    ap.add_argument("--pose-sources", nargs="+", default=["ground_truth", "estimate"],
                    choices=["ground_truth", "estimate"])
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    try:
        sets = parse_sets(a.set)
    except ValueError as e:
        ap.error(str(e))
    goals = a.goal or [["crawl", "{cycles: 10}"], ["turn", "{cycles: 12}"]]
    rows, ok_all, goals_ok = [], True, True
    for kind, text in goals:
        runs = {ps: [run_one(kind, text, ps, node_params=sets) for _ in range(a.trials)] for ps in a.pose_sources}
        rows.append(runs)
        print(f"\n== {kind} {text}, {a.trials} trial(s) per pose source")
        ok = True
        for ps, rs in runs.items():
            st = [r["status"] for r in rs]
            falls = sum(r["fallen"] for r in rs)
            print(f"  {ps}: {st.count('succeeded')}/{len(rs)} succeeded, {falls} fell, wall "
                  f"{sum(r['wall_s'] for r in rs):.0f} s" + "".join(f"; {r['reason']}" for r in rs if r["reason"]))
            ok &= st.count("succeeded") == len(rs) and falls == 0
            goals_ok &= st.count("succeeded") == len(rs) and falls == 0
            ph = [r.get("phase_time_s", {}) for r in rs]
            kinds = sorted({k for p in ph for k in p})
            if kinds:
                print("    sim time per feedback phase, mean [s]: " + ", ".join(
                    f"{k} {np.mean([p.get(k, 0.0) for p in ph]):.2f}" for k in kinds))
        g = [r for r in runs.get("ground_truth", []) if "metrics" in r]
        e = [r for r in runs.get("estimate", []) if "metrics" in r]
        if g and e:
            print(f"  {'metric':<22}{'ground truth':>20}{'estimate':>20}{'rel diff':>10}")
            for k in KEYS[kind]:
                (gm, gs), (em, es) = _stats([r["metrics"][k] for r in g]), _stats([r["metrics"][k] for r in e])
                rel = abs(em - gm) / abs(gm) if abs(gm) > 1e-9 else float("inf")
                ok &= rel <= TARGET_REL
                print(f"  {k:<22}{gm:>12.4f} ± {gs:<6.4f}{em:>12.4f} ± {es:<6.4f}{100 * rel:>9.1f}%"
                      f"{'' if rel <= TARGET_REL else '  >10%'}")
        elif g or e:     # one pose source only: its table, no comparison
            print(f"  {'metric':<22}{'ground truth' if g else 'estimate':>20}")
            for k in KEYS[kind]:
                m, sd = _stats([r["metrics"][k] for r in (g or e)])
                print(f"  {k:<22}{m:>12.4f} ± {sd:<6.4f}")
        est = [r for r in e if "est_error_m" in r]
        if est:
            pct = [100 * r["est_error_m"] / max(r["path_m"], 1e-9) for r in est]
            yaw = [abs(r["est_yaw_error_deg"]) / max(r["path_m"], 1e-9) for r in est]
            print(f"  estimator at the end: {np.mean(pct):.2f} % of the path (worst {max(pct):.2f} %; mean path "
                  f"{np.mean([r['path_m'] for r in est]):.2f} m, z {np.mean([100 * r['est_z_error_m'] for r in est]):+.2f}"
                  f" cm), heading {np.mean(yaw):.2f} deg/m (worst {max(yaw):.2f}; "
                  f"{np.mean([abs(r['est_yaw_error_deg']) for r in est]):.2f} deg)")
            if kind == "crawl":
                ok &= max(pct) <= TARGET_DRIFT_PCT and max(yaw) <= TARGET_YAW_DEG_PER_M
        ok_all &= ok
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1, default=float)
    if len(a.pose_sources) < 2:
        print("\nevery goal succeeded without a fall (one pose source: nothing compared)" if goals_ok
              else "\nsome goals FAILED (see above)")
        if goals_ok and not ok_all:
            print("estimator targets MISSED (see above)")
    else:
        print("\nall targets met" if ok_all else "\nsome targets MISSED (see above)")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
