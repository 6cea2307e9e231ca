"""Physics-in-the-loop parameter search for the IK-designed gaits (deterministic: fixed seed, Nelder-Mead).

Each evaluation designs the key-frames with :class:`~.gait_design.CrawlDesigner` for a parameter vector, plays
``--cycles`` part-loop cycles headless in MuJoCo (:func:`~.run_gait.run`, seed 0) and scores

    crawl:  J = v_along − 0.5·drift/cycle − 0.01·|turn°/cycle| − 0.2·stance_loss − 2·max(0, 0.03 − margin) − 1·fell
    turn :  J = |turn°|/s / 10 − 0.2·drift/cycle(m) − 0.2·stance_loss − 2·max(0, 0.03 − margin) − 1·fell

(v in m/s along the initial heading; margin = physics min tripod margin). scipy's Nelder-Mead maximises J over
the chosen parameters (box-clipped). The best design is written as YAML with the objective in its header.

    python lab/search_gait.py crawl_forward --params stride_m t_shift_s t_lift_s t_place_s \
        --maxfev 30 --cycles 3 --out atlas_crawl_controller/atlas_crawl_controller/gaits/crawl_forward.yaml
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile

import numpy as np
from scipy.optimize import minimize

from gait_design import CRAWL_DEFAULTS, DESCRIPTIONS, PRESETS, TURN_DEFAULTS, CrawlDesigner, parse_sets, to_yaml
from atlas_crawl_kinematics.progress import Progress
from atlas_crawl_mujoco.run_gait import run

#: search boxes (lo, hi)
BOUNDS = dict(stride_m=(0.05, 0.45), t_shift_s=(0.15, 1.0), t_lift_s=(0.1, 0.6), t_place_s=(0.1, 0.6),
              margin_m=(0.035, 0.08), com_x_m=(0.15, 0.30), lift_hand_m=(0.03, 0.12), lift_knee_m=(0.03, 0.1),
              press_m=(0.0, 0.03), swing_frac=(0.3, 0.8), turn_rad=(0.1, 0.9), hand_x_m=(0.5, 0.7),
              hand_y_m=(0.2, 0.4), knee_y_m=(0.08, 0.16), pelvis_dz_m=(-0.08, 0.03), com_lead_m=(0.0, 0.1),
              sag_comp=(0.3, 1.5), t_hold_s=(0.0, 0.3), t_shift_knee_s=(0.0, 1.0), t_stance_s=(0.1, 1.0))

OBJECTIVE = {"crawl": "J = v_along - 0.5*drift/cycle - 0.01*|turn deg/cycle| - 0.2*stance_loss "
                      "- 2*max(0, 0.03 - min_margin) - fell (search_gait, Nelder-Mead, seed 0, part loop)",
             "turn": "J = |turn deg/s|/10 - 0.2*drift/cycle - 0.2*stance_loss - 2*max(0, 0.03 - min_margin) - fell "
                     "(search_gait, Nelder-Mead, seed 0, part loop)"}


def score(r, kind, sign=1.0):
    pen = 0.2 * r["stance_loss_fraction"] + 2 * max(0.0, 0.03 - (r["min_tripod_margin_m"]
                                                                  if math.isfinite(r["min_tripod_margin_m"]) else -1))
    pen += 1.0 * bool(r["fell"])
    if kind == "turn":
        return sign * r["turn_deg"] / r["time_s"] / 10 - 0.2 * r["drift_per_cycle_m"] - pen
    return sign * r["along_m"] / r["time_s"] - 0.5 * r["drift_per_cycle_m"] - 0.01 * abs(r["turn_per_cycle_deg"]) - pen


def evaluate(designer, gait, params, cycles, path):
    kfs, p = designer.design(gait, **params)
    with open(path, "w", encoding="utf-8") as f:
        f.write(to_yaml(kfs, gait, DESCRIPTIONS[gait], p))
    r = run(path, cycles, "part", quiet=True)
    r.pop("log", None)
    return r, kfs, p


def _bary(p, tri):
    a, b, c = tri
    M = np.array([[b[0] - a[0], c[0] - a[0]], [b[1] - a[1], c[1] - a[1]]])
    u, v = np.linalg.solve(M, np.asarray(p) - a)
    return np.array([1 - u - v, u, v])


def com_errors(designer, kfs, log):
    """Physics CoM minus planned CoM before/while each limb is lifted, {limb: (dx, dy)} averaged over cycles >= 1.

    The planned CoM is expressed in barycentric coordinates of its planned tripod (sphere centres of the
    key-frame's IK pose) and mapped onto the *measured* contact positions, so contact slip is not counted as CoM
    error. Sampled at the end of the shift (lift start) and the end of the lift."""
    from atlas_description import LIMB_NAMES
    ki, cyc, C, P = log["keyframe_index"], log["cycle_index"], log["com_pos_m"], log["contact_pos_m"]
    errs = {}
    for i, k in enumerate(kfs):
        if not k["name"].startswith(("shift_for_", "lift_")):
            continue
        limb = k["name"].split("_")[-1]
        tri = np.array([n in k["tri"] for n in LIMB_NAMES])
        w = _bary(k["com"], designer.centres(k["qpos"])[tri, :2])
        for c in range(1, int(cyc.max()) + 1 if len(cyc) else 1):
            idx = np.flatnonzero((ki == i) & (cyc == c))
            if len(idx):
                j = idx[-1]
                errs.setdefault(limb, []).append(C[j, :2] - w @ P[j][tri, :2])
    return {k: np.mean(v, 0) for k, v in errs.items()}


def ilc(gait, params, iters=4, cycles=4, gain=0.7, out=None, designer=None, bar=None):
    """Iterative learning of the physics CoM bias (``com_bias`` of gait_design): design → play ``cycles`` part-loop
    cycles → measure :func:`com_errors` → bias ← (1−gain)·bias + gain·error (mirror-averaged for the crawl's
    mirrored halves) → redesign. The CoM targets then put the *physics* CoM at the planned margin while the
    kinematic plan keeps ``kin_margin_m``. Returns the best (score) design."""
    kind = "turn" if gait.startswith("turn") else "crawl"
    sign = -1.0 if gait == "crawl_backward" else 1.0
    d = designer or CrawlDesigner()
    tmp = os.path.join(tempfile.mkdtemp(prefix="ilc_"), gait + ".yaml")
    bias = {k: np.asarray(v, float) for k, v in (params.get("com_bias") or {}).items()}
    best = dict(J=-np.inf)
    mir = {"LW": "RW", "RW": "LW", "LK": "RK", "RK": "LK"}
    for it in range(iters + 1):
        pp = dict(params, com_bias={k: [round(float(x), 4) for x in v] for k, v in bias.items()} or None)
        kfs, p = d.design(gait, **pp)
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(to_yaml(kfs, gait, DESCRIPTIONS[gait], p))
        r = run(tmp, cycles, "part", quiet=True)
        J = score(r, kind, sign)
        (bar.write if bar is not None else print)(f"ilc {it}: J={J:+.4f} v={r['along_m'] / r['time_s']:+.4f} drift={r['drift_per_cycle_m']:.3f} "
              f"turn={r['turn_per_cycle_deg']:+.2f} fell={r['fell']} margin={r['min_tripod_margin_m']:+.3f} "
              f"loss={r['stance_loss_fraction']:.2f} bias={pp['com_bias']}")
        if bar is not None:
            bar.update(1, info=f"best J {max(best['J'], J):+.4f}")
        if J > best["J"]:
            best.update(J=J, params=p, kfs=kfs, r={k: v for k, v in r.items() if k != "log"})
        if it == iters or r["fell"]:
            break
        e = com_errors(d, kfs, r["log"])
        if kind == "crawl":      # the second half is the mirror image of the first: average mirrored errors
            e = {k: 0.5 * (v + e[mir[k]] * np.array([1, -1])) for k, v in e.items() if mir[k] in e}
        for k, v in e.items():
            bias[k] = (1 - gain) * bias.get(k, np.zeros(2)) + gain * v
    if out:
        r = best["r"]
        meas = (f"{cycles} part-loop cycles seed 0: along {r['along_m']:+.3f} m, v {r['velocity_mps']:.4f} m/s, "
                f"drift {r['drift_per_cycle_m']:.3f} m/cycle, turn {r['turn_per_cycle_deg']:+.2f} deg/cycle, "
                f"fell {r['fell']}, min margin {r['min_tripod_margin_m']:+.3f} m, stance loss "
                f"{r['stance_loss_fraction']:.2f}; J {best['J']:+.4f}")
        with open(out, "w", encoding="utf-8") as fo:
            fo.write(to_yaml(best["kfs"], gait, DESCRIPTIONS[gait], best["params"], tool="search_gait --ilc",
                             objective=OBJECTIVE[kind], measured=meas))
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gait", choices=["crawl_forward", "crawl_backward", "turn_left"])
    ap.add_argument("--params", nargs="+", default=["stride_m", "t_shift_s", "t_lift_s", "t_place_s"])
    ap.add_argument("--set", nargs="*", default=[], help="fixed overrides key=value (start point)")
    ap.add_argument("--maxfev", type=int, default=30)
    ap.add_argument("--cycles", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--quiet", action="store_true", help="no progress bar, no per-evaluation lines")
    ap.add_argument("--ilc", type=int, default=0, metavar="N",
                    help="instead of Nelder-Mead: N iterations of CoM-bias learning (see ilc()) from the preset/--set")
    a = ap.parse_args(argv)
    if a.ilc:
        base = dict(PRESETS.get(a.gait, {}))
        base.update(parse_sets(a.set))
        with Progress(a.ilc + 1, desc=f"search_gait --ilc {a.gait}", unit="iteration", quiet=a.quiet) as bar:
            ilc(a.gait, base, iters=a.ilc, cycles=a.cycles, out=a.out, bar=bar)
        return 0
    kind = "turn" if a.gait.startswith("turn") else "crawl"
    sign = -1.0 if a.gait == "crawl_backward" else 1.0
    base = dict(TURN_DEFAULTS if kind == "turn" else CRAWL_DEFAULTS)
    base.update(PRESETS.get(a.gait, {}))
    base.update(parse_sets(a.set))
    x0 = np.array([abs(base[k]) if k == "stride_m" else base[k] for k in a.params], float)
    lo = np.array([BOUNDS[k][0] for k in a.params])
    hi = np.array([BOUNDS[k][1] for k in a.params])
    scale = hi - lo
    d = CrawlDesigner()
    tmp = os.path.join(tempfile.mkdtemp(prefix="search_gait_"), a.gait + ".yaml")
    best = dict(J=-np.inf)
    hist = []
    bar = Progress(a.maxfev, desc=f"search_gait {a.gait}", unit="evaluation", quiet=a.quiet)

    def params_of(z):
        x = np.clip(x0 + z * scale, lo, hi)
        pp = dict(base)
        for k, v in zip(a.params, x):
            pp[k] = float(v) * (sign if k == "stride_m" else 1.0)
        return pp, x

    def f(z):
        pp, x = params_of(z)
        try:
            r, kfs, p = evaluate(d, a.gait, pp, a.cycles, tmp)
        except Exception as e:   # infeasible design
            print("eval failed:", e, file=sys.stderr)
            bar.update(1)
            return 10.0
        J = score(r, kind, sign)
        hist.append((J, x.tolist()))
        bar.update(1, info=f"best J {max(best['J'], J):+.4f}")
        bar.write(f"J={J:+.4f} x={np.round(x, 3).tolist()} along={r['along_m']:+.3f} "
                  f"v={r['along_m'] / r['time_s']:+.4f} drift={r['drift_per_cycle_m']:.3f} "
                  f"turn={r['turn_per_cycle_deg']:+.2f} fell={r['fell']} "
                  f"margin={r['min_tripod_margin_m']:+.3f} loss={r['stance_loss_fraction']:.2f}")
        if J > best["J"]:
            best.update(J=J, params=p, kfs=kfs, r=r)
        return -J

    minimize(f, np.zeros(len(x0)), method="Nelder-Mead",
             options=dict(maxfev=a.maxfev, initial_simplex=np.vstack([np.zeros(len(x0)),
                                                                       0.15 * np.eye(len(x0))]), xatol=1e-3))
    bar.close()
    r = best["r"]
    meas = (f"{a.cycles} part-loop cycles seed 0: along {r['along_m']:+.3f} m, v {r['velocity_mps']:.4f} m/s, "
            f"drift {r['drift_per_cycle_m']:.3f} m/cycle, turn {r['turn_per_cycle_deg']:+.2f} deg/cycle, "
            f"fell {r['fell']}, min margin {r['min_tripod_margin_m']:+.3f} m, stance loss "
            f"{r['stance_loss_fraction']:.2f}; J {best['J']:+.4f}")
    print("BEST", json.dumps({k: (list(v) if isinstance(v, tuple) else v) for k, v in best["params"].items()}))
    print("BEST", meas)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as fo:
            fo.write(to_yaml(best["kfs"], a.gait, DESCRIPTIONS[a.gait], best["params"], tool="search_gait",
                             objective=OBJECTIVE[kind], measured=meas))
    return 0


if __name__ == "__main__":
    sys.exit(main())
