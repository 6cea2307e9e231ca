"""Tune the contact-fusion parameters (contact_inference_parameters.yaml, fusion.*) with optuna (TPE).

    python lab/contact_fusion_tune.py [--gait crawl_forward] [--cycles 3] [--trials 150] [--noise-m 0.0005]

Records one crawl in MuJoCo (atlas_crawl_eval.contact_inference_eval.record_run), then maximises the mean per-limb
MCC of the fusion estimator against the simulator's contacts, with white noise on the clearance so the optimum does
not depend on millimetre-exact kinematics. Prints the best parameters and the MCC they give on the other gaits
(forward, backward, turn), which were not tuned on. The shipped defaults came from the forward crawl, 150 trials,
0.5 mm noise, seed 0.
"""
from __future__ import annotations

import argparse

import numpy as np


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gait", default="crawl_forward")
    ap.add_argument("--cycles", type=int, default=3)
    ap.add_argument("--trials", type=int, default=150)
    ap.add_argument("--noise-m", type=float, default=0.0005)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    import optuna
    from atlas_crawl_controller import contact_inference as ci
    from atlas_crawl_eval.contact_inference_eval import predictions, record_run

    base = ci.default_parameters()
    recs = {g: record_run(g, a.cycles) for g in ("crawl_forward", "crawl_backward", "turn_left")}

    def mean_mcc(rec, params, seed=1):
        pred = predictions(rec, params, a.noise_m, seed)["fusion"]
        return float(np.mean([ci.precision_recall(pred, rec.truth)[limb]["mcc"] for limb in ("LW", "RW", "LK", "RK")]))

    def objective(tr):
        p = base.replace(**{
            "fusion.switch_probability": tr.suggest_float("switch_probability", 0.01, 0.45, log=True),
            "fusion.phase_logodds": tr.suggest_float("phase_logodds", 0.0, 4.0),
            "fusion.clearance_threshold_m": tr.suggest_float("clearance_threshold_m", -0.001, 0.002),
            "fusion.clearance_scale_m": tr.suggest_float("clearance_scale_m", 1e-5, 2e-3, log=True),
            "fusion.max_evidence_logodds": tr.suggest_float("max_evidence_logodds", 0.5, 12.0),
            "fusion.hysteresis": tr.suggest_float("hysteresis", 0.0, 0.3)})
        return mean_mcc(recs[a.gait], p)

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=a.seed))
    study.optimize(objective, n_trials=a.trials, show_progress_bar=True)
    print(f"best mean MCC on {a.gait}: {study.best_value:.3f}  {study.best_params}")
    best = base.replace(**{f"fusion.{k}": v for k, v in study.best_params.items()})
    for g, rec in recs.items():
        print(f"  {g:<15} mean MCC {mean_mcc(rec, best, seed=7):.3f} (noise {a.noise_m} m)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
