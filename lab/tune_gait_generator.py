"""Tune the gait generator's placement-feedback gains with optuna (TPE), issue 12 §3.

    python lab/tune_gait_generator.py --trials 20 --out /tmp/tune_gen

Objective per trial (fresh sim each, forward and backward, ``--cycles`` cycles):
``sum over modes of |drift m/gait| / 0.005 + |turn deg/gait| / 0.2`` (+100 per fall), i.e. the straight-crawl
targets normalised. Prints the best parameters as ``--set`` arguments of ``python -m atlas_crawl_eval.gen_crawl``.
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import optuna

from atlas_crawl_eval import gen_crawl


def objective_factory(a):

    def objective(trial):
        params = {"feedback.heading_gain": trial.suggest_float("feedback.heading_gain", 0.0, 0.6),
                  "feedback.max_heading_step_rad": trial.suggest_float("feedback.max_heading_step_rad", 0.002, 0.05),
                  "feedback.lateral_gain_rad_per_m": trial.suggest_float("feedback.lateral_gain_rad_per_m", 0.0, 5.0),
                  "feedback.max_steer_rad": trial.suggest_float("feedback.max_steer_rad", 0.0, 0.3)}
        ns = argparse.Namespace(**vars(a))
        cost = 0.0
        for mode in ("forward", "backward"):
            r = gen_crawl.run_trial(mode, ns, 0, params)
            if r["fell"] or not math.isfinite(r["drift_per_gait_m"]):
                cost += 100.0
                continue
            cost += abs(r["drift_per_gait_m"]) / 0.005 + abs(r["turn_per_gait_deg"]) / 0.2
            trial.set_user_attr(mode, {k: r[k] for k in ("velocity_m_s", "drift_per_gait_m", "turn_per_gait_deg")})
        return cost

    return objective


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--out", default="/tmp/tune_gen")
    gen_crawl_args = ["--cycles", "10"]
    a, rest = ap.parse_known_args()
    # the runner's own defaults (tracker configuration, command) + any of its flags after ours
    sub = argparse.ArgumentParser()
    sub.add_argument("--cycles", type=int, default=5)
    sub.add_argument("--vx", type=float, default=0.035)
    sub.add_argument("--wz", type=float, default=0.1)
    gen_crawl.add_track_args(sub)
    ga = sub.parse_args(gen_crawl_args + rest)
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=0))
    study.enqueue_trial({"feedback.heading_gain": 0.0, "feedback.max_heading_step_rad": 0.05,
                         "feedback.lateral_gain_rad_per_m": 0.0, "feedback.max_steer_rad": 0.2})   # open loop
    study.enqueue_trial({"feedback.heading_gain": 0.1, "feedback.max_heading_step_rad": 0.02,
                         "feedback.lateral_gain_rad_per_m": 2.0, "feedback.max_steer_rad": 0.2})
    study.optimize(objective_factory(ga), n_trials=a.trials)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    best = study.best_trial
    (out / "best.json").write_text(json.dumps(dict(value=best.value, params=best.params, attrs=best.user_attrs),
                                              indent=1), encoding="utf-8")
    print("best", best.value, best.user_attrs)
    print("--set " + " ".join(f"{k}={v:.4g}" for k, v in best.params.items()))


if __name__ == "__main__":
    main()
