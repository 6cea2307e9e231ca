"""Tune the state estimator's noise parameters with optuna (TPE), issue 14 §1.

    python lab/tune_state_estimator.py --trials 40 --cycles 3 --turn-cycles 4 --seeds 0 1 --out /tmp/tune_est
    python lab/tune_state_estimator.py --behaviours crawl_forward crawl_backward turn_left crawl_forward_fast ...
    python lab/tune_state_estimator.py --behaviours crawl_forward_fast gen_diagonal --cycles 5 \
        --only leg.diagonal_support.accel_relative_noise leg.diagonal_support.slip_gate_chi2 \
        leg.diagonal_support.max_imu_only_s leg.diagonal_support.kinematic_velocity_noise_m_per_s

Each trial runs :func:`atlas_crawl_eval.estimator_eval.run` (key-frame gait in a fresh MuJoCo, simulated IMU with
the sim node's default noise, the estimator fed offline with the planned stance) for each of ``--behaviours``
(default the forward crawl, the backward crawl and the left turn), and sums the issue's targets, normalised::

    crawl:  drift_3d % / 2 + yaw deg/m / 1          turn:  position error / 0.02 m + yaw error deg / 1

``gen_diagonal`` (``gen_diagonal_backward``) is the gait generator's dynamic diagonal crawl (10 cycles forward
(backward)) with the sequencer and the
controller core on ground truth and the estimator beside them (``lab/estimator_cartesian_loop.py --gait diagonal
--ground-truth``), scored as a crawl. ``--protect`` behaviours cost 10 x more for every unit above 1 (their target
missed). ``--only`` searches just those parameters (the others stay at their defaults). Several processes may run
the same ``--out`` at once (one sqlite study).

Prints the best parameters as ``--set`` arguments of ``python -m atlas_crawl_eval.estimator_eval``.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import optuna

from atlas_crawl_eval import estimator_eval as ee


SPACE = {   # name: (suggest method, args, kwargs)
    "attitude.accel_window_s": ("float", (0.25, 3.0), {}),
    "attitude.accel_window_noise_m_per_s2": ("float", (0.01, 1.0), {"log": True}),
    "alignment_s": ("float", (0.5, 1.4), {}),
    "leg.stance_contact_noise_m_per_sqrt_s": ("float", (1e-4, 0.1), {"log": True}),
    "leg.kinematic_position_noise_m": ("float", (1e-3, 0.05), {"log": True}),
    "leg.kinematic_velocity_noise_m_per_s": ("float", (0.005, 0.5), {"log": True}),
    "leg.touchdown_settle_s": ("float", (0.0, 0.2), {}),
    "leg.slip_gate_chi2": ("float", (3.0, 100.0), {"log": True}),
    "leg.height_measurement": ("categorical", ([False, True],), {}),
    "leg.contact_height_noise_m": ("float", (0.002, 0.1), {"log": True}),
    "leg.accel_relative_noise": ("float", (0.0, 1.0), {}),
    "leg.max_imu_only_s": ("float", (0.0, 1.0), {}),
}
SPACE.update({f"leg.diagonal_support.{k}": SPACE[f"leg.{k}"] for k in (
    "kinematic_velocity_noise_m_per_s", "slip_gate_chi2", "accel_relative_noise", "max_imu_only_s")})


def _suggest(trial, only=None) -> dict:
    """The searched parameters: every name of SPACE, or only those in ``only``."""
    names = [k for k in SPACE if not only or k in only]
    return {k: getattr(trial, f"suggest_{SPACE[k][0]}")(k, *SPACE[k][1], **SPACE[k][2]) for k in names}


def _gen_diagonal(params: dict, seed: int, direction: int = 1) -> tuple[float, dict]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import estimator_cartesian_loop as loop      # lab/, beside this script
    r = loop.run(direction, 10, seed, est_set=params, ground_truth=True, gait="diagonal")
    c = r["end_error_pct"] / 2.0 + abs(r["heading_error_deg"]) / max(r["path_m"], 1e-9)
    return c, {"drift_pct": r["end_error_pct"], "heading_error_deg": r["heading_error_deg"]}


def score(params: dict, a) -> tuple[float, dict]:
    cost, figs = 0.0, {}
    protect = set(getattr(a, "protect", None) or [])

    def add(c: float, beh: str) -> float:
        return (c if math.isfinite(c) else 1e3) + (10 * max(0.0, c - 1) if beh in protect else 0.0)

    for seed in a.seeds:
        for beh in a.behaviours:
            if beh in ("gen_diagonal", "gen_diagonal_backward"):
                c, figs[f"{beh}/{seed}"] = _gen_diagonal(params, seed, -1 if beh.endswith("backward") else 1)
                cost += add(c, beh)
                continue
            turn = beh.startswith("turn")
            r = ee.run(beh, a.turn_cycles if turn else a.cycles, seed=seed, est_overrides=params)
            if not r.est_valid.any():
                return 1e3, {}
            d = ee.drift_figures(r)
            if turn:
                c = d["final_error_3d_m"] / 0.02 + abs(d["yaw_error_final_deg"]) / 1.0
            else:
                c = 100 * d["final_error_3d_m"] / d["path_m"] / 2.0 + d["yaw_deg_per_m"] / 1.0
            cost += add(c, beh)
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
    ap.add_argument("--protect", nargs="*", default=[], help="behaviours whose target (cost 1) must hold: 10x cost "
                    "above it")
    ap.add_argument("--sampler-seed", type=int, default=0, help="TPE seed (a different one per process)")
    ap.add_argument("--only", nargs="*", default=[], help="search only these parameters")
    ap.add_argument("--out", default="/tmp/tune_state_estimator")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=a.sampler_seed),
                                storage=f"sqlite:///{out / 'study.db'}", study_name="estimator",
                                load_if_exists=True)
    base, base_figs = score({}, a)
    print(f"defaults: cost {base:.3f} {json.dumps(base_figs)}", flush=True)

    def objective(trial):
        c, figs = score(_suggest(trial, a.only), a)
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
