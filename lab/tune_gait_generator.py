"""Tune the gait generator's placement-feedback gains with optuna (TPE), issue 12 §3.

    python lab/tune_gait_generator.py --trials 20 --out /tmp/tune_gen
    python lab/tune_gait_generator.py --trials 30 --modes forward --seeds 2 \
        --fixed t_shift_s=0.2 t_swing_s=0.15 max_stride_m=0.6 limits.vx_m_per_s=0.4 --vx 0.25
    python lab/tune_gait_generator.py --trials 40 --modes backward --seeds 2 --speed-target 0.3 --cycles 6 \
        --fixed pattern=diagonal_pairs --ranges t_shift_s=0.05:0.2 t_swing_s=0.2:0.45 vx=0.2:0.6 \
        lift_hand_m=0.03:0.1 lift_knee_m=0.05:0.2
    python lab/tune_gait_generator.py --trials 45 --modes turn --gait diagonal --seeds 2 --cycles 25 \
        --fixed limits.wz_rad_per_s=2.0 max_turn_rad_per_cycle=1.5 --ranges wz=0.45:1.0 t_shift_s=0.05:0.15 \
        t_swing_s=0.2:0.45 feedback.position_gain=0:0.3 lift_hand_m=0.03:0.1 lift_knee_m=0.02:0.15

Objective per trial (fresh sim each, the ``--modes``, ``--seeds`` trials each: seed 0 from the nominal stance, seed
k > 0 with the runner's 0.01 rad start noise, ``--cycles`` cycles):
``mean over runs of |drift m/gait| / 0.005 + |turn deg/gait| / 0.2`` (+100 per fall or run that went the wrong
way), i.e. the straight-crawl targets normalised; ``--modes turn``: the CoM circle's radius / 0.05 m + 20 x the
relative excess of the time per circle over ``--circle-s`` (+100 per fall or run without a full circle).
``--fixed`` generator parameters are held (e.g. a faster timing); ``--speed-target`` adds the timing and the
command to the search and 20 x the relative shortfall of the progress speed (along the commanded direction) to the
cost; ``--ranges`` adds or replaces searched ranges; ``--scenes`` repeats every run in each scene (70 % of the speed
target off the flat floor); ``--gait diagonal`` starts from the YAML's diagonal_pairs values. Prints the best
parameters as ``--set`` arguments of ``python -m atlas_crawl_eval.gen_crawl``.
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import optuna

from atlas_crawl_controller.gait_generator import CommandError, diagonal_params
from atlas_crawl_eval import gen_crawl


FEEDBACK_RANGES = {"feedback.heading_gain": (0.0, 0.6), "feedback.max_heading_step_rad": (0.002, 0.05),
                   "feedback.lateral_gain_rad_per_m": (0.0, 5.0), "feedback.max_steer_rad": (0.0, 0.3)}
SPEED_RANGES = {"t_shift_s": (0.15, 0.5), "t_swing_s": (0.15, 0.4), "vx": (0.05, 0.35)}


def objective_factory(a, modes=("forward", "backward"), seeds=1, fixed=None, speed_target=0.0, ranges=None,
                      scenes=("",), gait="static", circle_s=15.0, sides=(1.0,)):
    """``ranges`` {name: (lo, hi)}: searched parameters added to / replacing the defaults ("vx" is the command);
    ``scenes``: every run is repeated in each ("" the flat floor; off the flat floor the speed target is 70 %, the
    robustness matrix's share of the flat speed); ``gait`` "diagonal": the YAML's diagonal_pairs values (and its
    commanded speed) under the searched and fixed ones, as ``gen_crawl --gait diagonal``; a ``turn`` run costs
    its CoM circle's radius / 0.05 m + 20 x the relative excess of its time per circle over ``circle_s``."""
    fixed = dict(fixed or {})
    space = {**FEEDBACK_RANGES, **(SPEED_RANGES if speed_target > 0 else {}), **(ranges or {})}

    def objective(trial):
        params = {k: trial.suggest_float(k, lo, hi) for k, (lo, hi) in space.items() if k not in fixed}
        ns = argparse.Namespace(**vars(a))
        if gait == "diagonal":
            ns.vx = None                # the gait's crawl_speed_m_per_s unless searched
        if "vx" in params:
            ns.vx = params.pop("vx")
        if "wz" in params:
            ns.wz = params.pop("wz")
        if speed_target > 0:      # the timing and the commanded speed are tuned too
            params.update({"max_stride_m": 1.0, "limits.vx_m_per_s": 1.0})
        params.update(fixed)
        cost, n = 0.0, 0
        runs = [(m, sc, sd, side) for m in modes for sc in scenes for sd in range(seeds)
                for side in (sides if m == "turn" else (1.0,))]
        for mode, scene, seed, side in runs:
            ns.scene = scene
            ns.gait = gait      # diagonal: the searched and fixed values over the YAML's diagonal ones
            run_params, run_ns = gen_crawl.gait_params(mode, ns, params)
            run_ns.wz = side * abs(run_ns.wz)
            target = speed_target * (1.0 if scene in ("", "flat") else 0.7)
            n += 1
            try:
                r = gen_crawl.run_trial(mode, run_ns, seed, run_params, noise_rad=0.01 if seed > 0 else 0.0)
            except CommandError:        # e.g. a turn rate beyond max_turn_rad_per_cycle at this timing
                cost += 100.0
                continue
            if mode == "turn":      # turn on the spot: the CoM circle's radius and the time per circle
                if r["fell"] or not math.isfinite(r["radius_m"]):
                    cost += 100.0
                    continue
                cost += r["radius_m"] / 0.05 + 20.0 * max(0.0, r["time_per_circle_s"] / circle_s - 1.0)
                trial.set_user_attr(f"turn{'_right' if side < 0 else ''}_{scene or 'flat'}_{seed}",
                                    {k: r[k] for k in ("radius_m", "time_per_circle_s")})
                continue
            if r["fell"] or r["wrong_way"] or not math.isfinite(r["drift_per_gait_m"]):
                cost += 100.0
                continue
            cost += abs(r["drift_per_gait_m"]) / 0.005 + abs(r["turn_per_gait_deg"]) / 0.2
            if speed_target > 0:   # 20 per speed_target of shortfall (a speed it does not reach costs most)
                v = r["progress_m_s"] if math.isfinite(r["progress_m_s"]) else 0.0   # along the commanded way
                cost += 20.0 * max(0.0, target - v) / target
            keys = ("velocity_m_s", "progress_m_s", "drift_per_gait_m", "turn_per_gait_deg")
            trial.set_user_attr(f"{mode}_{scene or 'flat'}_{seed}", {k: r[k] for k in keys})
        return cost / n

    return objective


def shipped_values(vals, a) -> dict:
    """The YAML's values of the searched generator parameters for the tuned gait (the diagonal crawl's own
    ``diagonal_pairs.*``, backward or turning as ``--modes`` says), enqueued as the first trial: the baseline."""
    if a.gait == "diagonal":
        modes = set(a.modes)
        flat = {**vals.as_dict(), **diagonal_params(vals, backward=modes == {"backward"}, turn=modes == {"turn"})}
    else:
        flat = vals.as_dict()
    searched = set(FEEDBACK_RANGES) | {r.split("=")[0] for r in a.ranges}
    out = {k: v for k, v in flat.items() if k in searched}
    if "vx" in searched and a.gait == "diagonal":
        out["vx"] = flat["crawl_speed_m_per_s"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--out", default="/tmp/tune_gen")
    ap.add_argument("--modes", nargs="+", default=["forward", "backward"], choices=["forward", "backward", "turn"])
    ap.add_argument("--seeds", type=int, default=1, help="trials per mode (seed k > 0: 0.01 rad start noise)")
    ap.add_argument("--speed-target", type=float, default=0.0,
                    help="m/s; > 0 tunes t_shift_s, t_swing_s and the commanded speed too, with 20 x the relative "
                         "shortfall below this speed added to the cost")
    ap.add_argument("--fixed", nargs="*", default=[], metavar="NAME=VALUE",
                    help="generator parameters held fixed (config/gait_generator_parameters.yaml)")
    ap.add_argument("--scenes", nargs="*", default=[""], metavar="SCENE",
                    help="each run in every scene (as gen_crawl --scene; '' or flat: the flat floor); off the flat "
                         "floor the speed target is 70 %% of --speed-target")
    ap.add_argument("--circle-s", type=float, default=15.0, help="turn: the time per circle not to exceed (s)")
    ap.add_argument("--turn-sides", nargs="+", default=["left"], choices=["left", "right"],
                    help="turn: every run turning to each of these sides")
    ap.add_argument("--gait", default="static", choices=["static", "diagonal"],
                    help="diagonal: start from the YAML's diagonal_pairs values, as gen_crawl --gait diagonal")
    ap.add_argument("--ranges", nargs="*", default=[], metavar="NAME=LO:HI",
                    help="searched ranges added to or replacing the defaults (a generator parameter, or vx)")
    ap.add_argument("--sampler-seed", type=int, default=0, help="TPE seed (a different one per process)")
    ap.add_argument("--shared", action="store_true",
                    help="keep the study in OUT/study.db, so several processes started with the same --out share it "
                         "(each with its own --sampler-seed); the shipped values are enqueued once")
    gen_crawl_args = ["--cycles", "10"]
    a, rest = ap.parse_known_args()
    # the runner's own defaults (tracker configuration, command) + any of its flags after ours
    sub = argparse.ArgumentParser()
    sub.add_argument("--cycles", type=int, default=5)
    sub.add_argument("--vx", type=float, default=0.035)
    sub.add_argument("--wz", type=float, default=None)
    gen_crawl.add_track_args(sub)
    ga = sub.parse_args(gen_crawl_args + rest)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    sampler = optuna.samplers.TPESampler(seed=a.sampler_seed)
    if a.shared:
        study = optuna.create_study(sampler=sampler, storage=f"sqlite:///{out / 'study.db'}", study_name="gait",
                                    load_if_exists=True)
    else:
        study = optuna.create_study(sampler=sampler)
    pset = gen_crawl.parameter_set()
    if not study.trials:
        study.enqueue_trial(shipped_values(pset.values(), a))
        study.enqueue_trial({"feedback.heading_gain": 0.0, "feedback.max_heading_step_rad": 0.05,
                             "feedback.lateral_gain_rad_per_m": 0.0, "feedback.max_steer_rad": 0.2})   # open loop
        study.enqueue_trial({"feedback.heading_gain": 0.1, "feedback.max_heading_step_rad": 0.02,
                             "feedback.lateral_gain_rad_per_m": 2.0, "feedback.max_steer_rad": 0.2})
    fixed = {}
    for kv in a.fixed:
        k, v = kv.split("=", 1)
        fixed[k] = pset.check(k, type(pset.defaults()[k])(v))
    ranges = {}
    for kv in a.ranges:
        k, v = kv.split("=", 1)
        lo, hi = (float(x) for x in v.split(":"))
        ranges[k] = (lo, hi)
    study.optimize(objective_factory(ga, tuple(a.modes), a.seeds, fixed, a.speed_target, ranges, tuple(a.scenes),
                                       a.gait, a.circle_s,
                                       tuple(1.0 if x == "left" else -1.0 for x in a.turn_sides)),
                   n_trials=a.trials)
    best = study.best_trial
    (out / "best.json").write_text(json.dumps(dict(value=best.value, params=best.params, attrs=best.user_attrs),
                                              indent=1), encoding="utf-8")
    print("best", best.value, best.user_attrs)
    gen = {k: v for k, v in best.params.items() if k not in ("vx", "wz")}
    print(("--vx %.4g " % best.params["vx"] if "vx" in best.params else "")
          + ("--wz %.4g " % best.params["wz"] if "wz" in best.params else "")
          + "--set " + " ".join([f"{k}={v:.4g}" for k, v in gen.items()] + a.fixed
                                + (["max_stride_m=1.0", "limits.vx_m_per_s=1.0"] if a.speed_target > 0 else [])))


if __name__ == "__main__":
    main()
