"""Tune the contact-fusion parameters (contact_inference_parameters.yaml, fusion.*) with optuna (TPE).

    python lab/contact_fusion_tune.py [--gait crawl_forward [crawl_backward ...]] [--cycles 3] [--trials 300] [--seed 0]
                                      [--check crawl_backward turn_left turn_right] [--check-seed 1]
                                      [--conditions exact noisy estimate]

Records the training crawl in MuJoCo (atlas_crawl_eval.contact_inference_eval.record_run), then maximises the mean
per-limb MCC of the fusion estimator against the sample-period ground truth, averaged over two input conditions:
exact (the simulator's joints and pelvis pose, as the sim node publishes them by default) and noisy (``NOISE``:
white noise on joints, pelvis pose and efforts), so the optimum does not hinge on micrometre-exact kinematics.
``--conditions ... estimate`` adds the graph's default: the same crawl with the state estimator in the loop
(``record_run(pose_source="estimate")``) and the fusion reading its pose.
The kinematics of every sample are computed once per condition; a trial re-runs only the filters.

Then prints the best parameters and, for them, the per-limb MCC and touchdown latency on gaits and a simulator seed
(initial joint noise) it was not tuned on. The shipped defaults: see the git log of the YAML.
"""
from __future__ import annotations

import argparse

import numpy as np

NOISE = dict(joint_rad=0.0005, pose_pos_m=0.0005, pose_rot_rad=0.001, effort_nm=1.0)

SPACE = {  # name: (low, high, log)
    "switch_probability": (0.005, 0.45, True),
    "phase_logodds": (0.0, 3.0, False),
    "clearance_threshold_m": (-0.001, 0.002, False),
    "clearance_scale_m": (2e-5, 5e-3, True),
    "max_evidence_logodds": (0.5, 15.0, False),
    "hysteresis": (0.0, 0.4, False),
    "speed_threshold_mps": (0.005, 0.3, True),
    "speed_scale_mps": (0.002, 0.2, True),
    "max_speed_logodds": (0.0, 6.0, False),
    "speed_filter_tau_s": (0.0, 0.05, False),
    "horizontal_speed_weight": (0.0, 1.0, False),
    "force_threshold_n": (0.0, 200.0, False),
    "force_scale_n": (5.0, 200.0, True),
    "max_force_logodds": (0.0, 8.0, False),
    "torque_noise_arm_nm": (0.5, 30.0, True),
    "torque_noise_leg_nm": (1.0, 100.0, True),
    "force_time_constant_s": (0.005, 0.5, True),
}


def to_params(base, x: dict):
    kw = {f"fusion.{k}": v for k, v in x.items() if not k.startswith("torque_noise")}
    if "torque_noise_arm_nm" in x:
        a, leg = x["torque_noise_arm_nm"], x["torque_noise_leg_nm"]
        kw["fusion.torque_noise_nm"] = [a, a, leg, leg]
    return base.replace(**kw)


class _Replay:
    """A LimbContactModel stand-in that returns precomputed samples in order (the filters are re-run per trial)."""

    def __init__(self, real, samples):
        self.model, self.chains, self.samples, self.k = real.model, real.chains, samples, 0
        self._real = real

    def evaluate(self, *a, **kw):
        s = self.samples[self.k]
        self.k += 1
        return s

    def force_residuals(self, s, tau):
        return self._real.force_residuals(s, tau)


def prepare(rec, noise):
    """(q, pose, eff) with the noise, and the kinematic samples once."""
    from atlas_crawl_kinematics.limb_contact import LimbContactModel
    from atlas_crawl_kinematics.model import RobotModel
    from atlas_crawl_kinematics.rotations import quat_xyzw_to_R
    from atlas_description import LIMB_LINKS, model_urdf
    q, pose, eff = noise.apply(rec) if noise is not None else (rec.q, rec.pose, rec.eff)
    if rec.pose_est is not None:
        pose = rec.pose_est
    lm = LimbContactModel(RobotModel.from_urdf_string(model_urdf()), model_urdf(), LIMB_LINKS)
    samples = [lm.evaluate(q[k], quat_xyzw_to_R(pose[k, 3:]), pose[k, :3]) for k in range(len(rec.t))]
    return dict(rec=rec, q=q, pose=pose, eff=eff, lm=lm, samples=samples)


def fusion_on(prep, params):
    from atlas_crawl_controller import contact_inference as ci
    from atlas_crawl_eval.contact_inference_eval import run_fusion
    rec = prep["rec"]
    rp = _Replay(prep["lm"], prep["samples"])
    kf = ci.ForceKalmanFilter(params["fusion.torque_noise_nm"], params["fusion.force_prior_std_n"],
                              params["fusion.force_time_constant_s"])
    ev = ci.ContactEvidence(rp, params["ground_height_m"], params["fusion.speed_filter_tau_s"], kf,
                            horizontal_speed_weight=params["fusion.horizontal_speed_weight"])
    evid = [ev.update(rec.t[k], prep["q"][k], prep["pose"][k], prep["eff"][k]) for k in range(len(rec.t))]
    return run_fusion(rec, params, evid)


def score(prep, params):
    from atlas_crawl_controller import contact_inference as ci
    rec = prep["rec"]
    table = ci.precision_recall(fusion_on(prep, params), rec.truth_period)
    return float(np.mean([table[limb]["mcc"] for limb in ("LW", "RW", "LK", "RK")])), table


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gait", nargs="+", default=["crawl_forward"], help="training gait(s)")
    ap.add_argument("--cycles", type=int, default=3)
    ap.add_argument("--trials", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0, help="optuna sampler seed")
    ap.add_argument("--check", nargs="*", default=["crawl_backward", "turn_left", "turn_right"])
    ap.add_argument("--conditions", nargs="+", default=["exact", "noisy"], choices=["exact", "noisy", "estimate"])
    ap.add_argument("--check-seed", type=int, default=1, help="simulator seed of the check runs (0.02 rad initial "
                                                                "joint noise)")
    a = ap.parse_args(argv)
    import optuna
    from atlas_crawl_controller import contact_inference as ci
    from atlas_crawl_eval.contact_inference_eval import Noise, latency_summary, record_run, touchdown_latency_s

    base = ci.default_parameters()
    noise = Noise(**NOISE, seed=3)
    trains = {g: record_run(g, a.cycles) for g in a.gait}
    conds = {"exact": lambda g: prepare(trains[g], None), "noisy": lambda g: prepare(trains[g], noise),
             "estimate": lambda g: prepare(record_run(g, a.cycles, pose_source="estimate"), None)}
    preps = [conds[c](g) for g in a.gait for c in a.conditions]

    def objective(tr):
        x = {k: (tr.suggest_float(k, lo, hi, log=lg)) for k, (lo, hi, lg) in SPACE.items()}
        if x["max_force_logodds"] == 0 and x["max_speed_logodds"] == 0:
            pass
        p = to_params(base, x)
        try:
            return float(np.mean([score(pp, p)[0] for pp in preps]))
        except ValueError:
            return -1.0

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=a.seed))
    cur = {k: (base[f"fusion.{k}"] if not k.startswith("torque_noise") else
               base["fusion.torque_noise_nm"][0 if "arm" in k else 2]) for k in SPACE}
    study.enqueue_trial({k: float(np.clip(v, SPACE[k][0], SPACE[k][1])) for k, v in cur.items()})
    study.optimize(objective, n_trials=a.trials, show_progress_bar=True)
    print(f"best mean MCC on {a.gait} ({' + '.join(a.conditions)}): {study.best_value:.3f}")
    for k, v in study.best_params.items():
        print(f"  fusion.{k}: {v:.6g}")
    best = to_params(base, study.best_params)
    runs = [(g, trains[g], 0) for g in a.gait] + [(g, record_run(g, a.cycles, seed=a.check_seed, noise_rad=0.02), a.check_seed)
                                   for g in a.check]
    if "estimate" in a.conditions:
        runs += [(g + "/estimate", record_run(g, a.cycles, seed=a.check_seed, noise_rad=0.02, pose_source="estimate"),
                  a.check_seed) for g in list(a.gait) + list(a.check)]
    for g, rec, sd in runs:
        for cond, nz in (("exact", None), ("noisy", Noise(**NOISE, seed=11))):
            if rec.pose_est is not None and cond == "noisy":
                continue
            pp = prepare(rec, nz)
            m, table = score(pp, best)
            ls = latency_summary(touchdown_latency_s(fusion_on(pp, best), rec.truth_period, rec.t))
            print(f"  {g:<15} seed {sd} {cond}: MCC " + " ".join(f"{table[limb]['mcc']:.3f}" for limb in
                                                                ("LW", "RW", "LK", "RK"))
                  + f" (mean {m:.3f}); touchdowns {ls['n']}, missed {ls['missed']}, median {ls['median_ms']:.0f} ms, "
                    f"p95 |lat| {ls['p95_abs_ms']:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
