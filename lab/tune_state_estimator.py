"""Tune the state estimator's noise parameters with optuna (TPE), issue 14 §1.

    python lab/tune_state_estimator.py --trials 40 --cycles 3 --turn-cycles 4 --seeds 0 1 --out /tmp/tune_est
    python lab/tune_state_estimator.py --behaviours crawl_forward crawl_backward turn_left crawl_forward_fast ...

Each trial runs :func:`atlas_crawl_eval.estimator_eval.run` (key-frame gait in a fresh MuJoCo, simulated IMU with
the sim node's default noise, the estimator fed offline with the planned stance) for each of ``--behaviours``
(default the forward crawl, the backward crawl and the left turn), and sums the issue's targets, normalised::

    crawl:  drift_3d % / 2 + yaw deg/m / 1          turn:  position error / 0.02 m + yaw error deg / 1

Prints the best parameters as ``--set`` arguments of ``python -m atlas_crawl_eval.estimator_eval``.
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import optuna

from atlas_crawl_eval import estimator_eval as ee


def _suggest(trial) -> dict:
    return {
        "attitude.accel_window_s": trial.suggest_float("attitude.accel_window_s", 0.25, 3.0),
        "attitude.accel_window_noise_m_per_s2": trial.suggest_float("attitude.accel_window_noise_m_per_s2", 0.01, 1.0,
                                                                    log=True),
        "alignment_s": trial.suggest_float("alignment_s", 0.5, 1.4),
        "leg.stance_contact_noise_m_per_sqrt_s": trial.suggest_float("leg.stance_contact_noise_m_per_sqrt_s",
                                                                     1e-4, 0.1, log=True),
        "leg.kinematic_position_noise_m": trial.suggest_float("leg.kinematic_position_noise_m", 1e-3, 0.05, log=True),
        "leg.kinematic_velocity_noise_m_per_s": trial.suggest_float("leg.kinematic_velocity_noise_m_per_s",
                                                                    0.005, 0.5, log=True),
        "leg.touchdown_settle_s": trial.suggest_float("leg.touchdown_settle_s", 0.0, 0.2),
        "leg.slip_gate_chi2": trial.suggest_float("leg.slip_gate_chi2", 3.0, 100.0, log=True),
        "leg.height_measurement": trial.suggest_categorical("leg.height_measurement", [False, True]),
        "leg.contact_height_noise_m": trial.suggest_float("leg.contact_height_noise_m", 0.002, 0.1, log=True),
    }


def score(params: dict, a) -> tuple[float, dict]:
    cost, figs = 0.0, {}
    for seed in a.seeds:
        for beh in a.behaviours:
            turn = beh.startswith("turn")
            r = ee.run(beh, a.turn_cycles if turn else a.cycles, seed=seed, est_overrides=params)
            if not r.est_valid.any():
                return 1e3, {}
            d = ee.drift_figures(r)
            if turn:
                c = d["final_error_3d_m"] / 0.02 + abs(d["yaw_error_final_deg"]) / 1.0
            else:
                c = 100 * d["final_error_3d_m"] / d["path_m"] / 2.0 + d["yaw_deg_per_m"] / 1.0
            cost += c if math.isfinite(c) else 1e3
            figs[f"{beh}/{seed}"] = {k: d[k] for k in ("drift_pct", "final_error_3d_m", "yaw_deg_per_m",
                                                       "yaw_error_final_deg", "tilt_error_max_deg")}
    return cost / len(a.seeds), figs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--cycles", type=int, default=3)
    ap.add_argument("--turn-cycles", type=int, default=4)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--behaviours", nargs="+", default=["crawl_forward", "crawl_backward", "turn_left"],
                    help="key-frame gaits scored (turn_*: position and yaw error; crawls: drift % and yaw deg/m)")
    ap.add_argument("--out", default="/tmp/tune_state_estimator")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=0),
                                storage=f"sqlite:///{out / 'study.db'}", study_name="estimator",
                                load_if_exists=True)
    base, base_figs = score({}, a)
    print(f"defaults: cost {base:.3f} {json.dumps(base_figs)}", flush=True)

    def objective(trial):
        c, figs = score(_suggest(trial), a)
        trial.set_user_attr("figures", figs)
        return c

    study.optimize(objective, n_trials=a.trials)
    b = study.best_trial
    print(f"best #{b.number}: cost {b.value:.3f} (defaults {base:.3f})")
    print(json.dumps(b.user_attrs.get("figures", {}), indent=1))
    print("--set " + " ".join(f"{k}={json.dumps(v)}" for k, v in b.params.items()))
    (out / "best.json").write_text(json.dumps(dict(params=b.params, cost=b.value, defaults_cost=base,
                                                   figures=b.user_attrs.get("figures")), indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
