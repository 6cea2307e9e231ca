"""Where a Cartesian crawl's stance contacts really are: per limb and stance interval of one ``gen_crawl`` trial, the
horizontal miss from the planned point at the interval's start, the slip over it, its height range and the share of it
the limb is in touch (issue 13: what slows the crawl on rubble).

    python lab/stance_slip.py --scene rubble:seed=2 --mode backward --cycles 4
    python lab/stance_slip.py --scene flat --mode forward --cycles 4 [--limbs LW RK] [--terrain blind]

Session 22, backward on ``rubble:seed=2`` (4 cycles): the limbs fall behind the plan, which runs on in world
coordinates (the runner does not re-sync it; the gait sequencer does), so the miss at the start of a stance grows
0.02 -> 0.07 -> 0.28 -> 0.54 m (right hand), and the tracker drags the "stance" limbs towards the planned points: up to
0.33 m of slip in one interval, in touch 43-100 % (flat floor: misses under 5 cm, slip under 4 cm, in touch ~95 %).
"""
from __future__ import annotations

import argparse

import numpy as np

LIMBS = ("LW", "RW", "LK", "RK")


def stance_intervals(stance) -> list:
    """``[(start, end)]`` index ranges (end exclusive) of the True runs of a boolean series."""
    s = np.asarray(stance, bool).astype(int)
    d = np.diff(np.r_[0, s, 0])
    return list(zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1)))


def slip_rows(arr: dict, planned_at, limbs=range(4)) -> list:
    """One dict per limb and planned-stance interval of the log ``arr`` (``time_s``, ``contact_pos_m``,
    ``contact_in_touch``, ``planned_stance``); ``planned_at(t) -> (4, 3)`` gives the planned contact points at log
    time ``t``."""
    ts, cp, tch = arr["time_s"], arr["contact_pos_m"], arr["contact_in_touch"]
    rows = []
    for li in limbs:
        for a, b in stance_intervals(arr["planned_stance"][:, li]):
            seg = cp[a:b, li]
            rows.append(dict(limb=LIMBS[li], t0_s=float(ts[a]), t1_s=float(ts[b - 1]),
                             miss_m=float(np.linalg.norm(seg[0, :2] - planned_at(ts[a])[li, :2])),
                             slip_m=float(np.linalg.norm(seg[-1, :2] - seg[0, :2])),
                             path_m=float(np.linalg.norm(np.diff(seg[:, :2], axis=0), axis=1).sum()),
                             z_min_m=float(seg[:, 2].min()), z_max_m=float(seg[:, 2].max()),
                             in_touch=float(np.mean(tch[a:b, li]))))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scene", default="flat", help="a robustness-matrix scene, e.g. rubble:seed=2")
    ap.add_argument("--mode", choices=("forward", "backward", "turn"), default="backward")
    ap.add_argument("--cycles", type=int, default=4)
    ap.add_argument("--limbs", nargs="+", choices=LIMBS, default=list(LIMBS))
    ap.add_argument("--terrain", choices=("map", "blind"), default="map")
    a = ap.parse_args(argv)
    if a.cycles < 1:
        ap.error("--cycles must be >= 1")
    from atlas_crawl_eval import gen_crawl as gc
    g = gc.parser().parse_args(["--modes", a.mode, "--cycles", str(a.cycles), "--scene", a.scene,
                                "--terrain", a.terrain])
    try:
        pm, ga = gc.gait_params(a.mode, g, {})
        row, arr, gen, t_plan0 = gc.run_trial(a.mode, ga, 0, pm, with_log=True)
    except ValueError as e:
        ap.error(str(e))
    rows = slip_rows(arr, lambda t: gen.sample(t - t_plan0).targets, [LIMBS.index(x) for x in a.limbs])
    print(f"{a.mode} on {a.scene} ({a.terrain}), {a.cycles} cycles, fell {row['fell']}; times from the plan's start")
    print("limb  stance [s]        miss [m]  slip [m]  path [m]  z [m]          in touch")
    for r in rows:
        print(f"{r['limb']:4s}  {r['t0_s'] - t_plan0:6.2f}-{r['t1_s'] - t_plan0:6.2f}  {r['miss_m']:8.3f}  "
              f"{r['slip_m']:8.3f}  {r['path_m']:8.3f}  {r['z_min_m']:+.3f}..{r['z_max_m']:+.3f}  {r['in_touch']:6.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
