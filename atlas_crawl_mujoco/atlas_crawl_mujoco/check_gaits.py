"""Static stability check of every key-frame of the gait scripts (thesis §4.1: "we analyse the CoM with respect to
the support limbs ... planning ahead").

    python -m atlas_crawl_mujoco.check_gaits [gait ...] [--min-margin 0.03]

Method (kinematic, no physics): for each key-frame the robot is placed with its joint angles so that the contact
frames of the key-frame's planned stance lie on the floor plane (base height/roll/pitch solved by Gauss-Newton,
:func:`atlas_crawl_mujoco.kin.place_on_ground`; with 4 planned contacts the plane is a least-squares fit and the
residual is printed). The whole-body CoM is projected on the floor and its signed distance to the edges of the
convex hull of the stance contact frames is the static margin (> 0 inside). For an all-four key-frame that is
followed by a lift, the margin in the *next* triangle is printed too ("before lift"), the number that matters.
Kinematics comes from the MuJoCo model built from atlas_description (mj_kinematics / subtree CoM); swap in
atlas_crawl_kinematics' FK once its API is final. Exit status 1 if a tripod margin is below --min-margin.

Dynamic scripts (``static_stability: false``, e.g. crawl_forward_fast: two-contact diagonal-pair swings) have no
tripod phase and no support polygon during their swings: they are SKIPPED, printed with that reason, and listed in
:func:`check`'s ``skipped`` output instead of ``worst``.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from atlas_crawl_controller.keyframes import list_gaits, load_script
from atlas_description import LIMB_NAMES

from .kin import WholeBodyIK, place_on_ground, support_margin
from .model import build_model


def skip_reason(script) -> str:
    """Why the static tripod-margin check does not apply to ``script`` ("" = it applies)."""
    if not getattr(script, "static_stability", True):
        return ("dynamic gait (static_stability: false): its swings leave two contacts, there is no support "
                "polygon to hold the CoM in, so tripod margins do not apply")
    return ""


def check(names=None, min_margin=0.03, out=sys.stdout, skipped=None):
    """Worst tripod / before-lift margin per script name. Dynamic scripts are not checked: their name -> reason goes
    into the ``skipped`` dict (when given) and is printed."""
    ik = WholeBodyIK(build_model())
    worst = {}
    for name in names or list_gaits():
        s = load_script(name)
        why = skip_reason(s)
        if why:
            print(f"\n== {s.name}: SKIPPED, {why}", file=out)
            if skipped is not None:
                skipped[s.name] = why
            continue
        print(f"\n== {s.name} ({len(s)} key-frames, fall_check={s.fall_check})", file=out)
        print(f"{'#':>3} {'key-frame':22s} {'stance':14s} {'margin_m':>9} {'before_lift_m':>13} {'resid_mm':>8}",
              file=out)
        guess = None
        wmin = np.inf
        for i, k in enumerate(s.keyframes):
            mask = k.stance_mask()
            qpos, res, st = place_on_ground(ik, k.q, mask, qpos_guess=guess)
            guess = qpos
            xy = st["sites"][:, :2]
            m = support_margin(st["com"][:2], xy[mask]) if mask.sum() >= 3 else float("nan")
            nxt = s.keyframes[(i + 1) % len(s)].stance_mask()
            before = float("nan")
            if mask.sum() == 4 and nxt.sum() == 3:
                before = support_margin(st["com"][:2], xy[nxt])
            if mask.sum() == 3:
                wmin = min(wmin, m)
            if not np.isnan(before):
                wmin = min(wmin, before)
            stance = ",".join(n for n, b in zip(LIMB_NAMES, mask) if b) if k.stance is not None else "(unknown)"
            flag = " <" if (mask.sum() == 3 and m < min_margin) or (before < min_margin) else ""
            print(f"{i:3d} {k.name:22s} {stance:14s} {m:+9.3f} {before:+13.3f} {res * 1000:8.1f}{flag}", file=out)
        worst[s.name] = wmin
        print(f"   min tripod / before-lift margin: {wmin:+.3f} m", file=out)
    return worst


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gaits", nargs="*")
    ap.add_argument("--min-margin", type=float, default=0.03)
    a = ap.parse_args(argv)
    skipped = {}
    worst = check(a.gaits or None, a.min_margin, skipped=skipped)
    if skipped:
        print("\nskipped (not statically stable by design):", ", ".join(skipped))
    bad = {k: v for k, v in worst.items() if np.isfinite(v) and v < a.min_margin}
    if bad:
        print("\nbelow margin:", {k: round(v, 3) for k, v in bad.items()})
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
