"""Speed-oriented physics-in-the-loop tuning of crawl_forward with the crawl stance kept fixed.

``search_gait`` optimises an IK-designed cycle from scratch; this tool is for making the shipped forward crawl
*faster* without touching anything chained to it: the first key-frame (the crawl stance, ``crawl_stance.yaml``,
target of the posture scripts and start of turn/backward/rolls) is copied verbatim from ``crawl_stance.yaml``, and
the stance geometry of the design (stride, hand/knee/CoM positions, pelvis height/pitch: everything that moves the
contacts of K0) is refused as a search parameter. Only timings and the per-step shaping (margin, CoM lead, swing
heights, swing fraction, press depth, servo-sag compensation) are tuned.

Each candidate is designed with :class:`~.gait_design.CrawlDesigner`, then played in MuJoCo (seed 0, headless) for
``--cycles`` PART-loop cycles and ``--full-cycles`` FULL-loop cycles (the full loop replays the stance key-frame
every cycle, which is where a yaw appears). Measured per loop (:func:`measure`): velocity along the initial heading
over the played cycles (settling excluded, as atlas_crawl_eval), lateral drift per cycle (cycle-start samples,
w.r.t. the heading at the cycle start), pelvis-heading turn per cycle, fall, longest continuous effort saturation of
any servo (``run_sequence`` definition), physics min tripod margin. Score (maximised)::

    J = v_part − Σ_loops [5·max(0, drift − 0.012) + 0.1·max(0, |turn| − 0.25) + 0.1·max(0, abs_turn − 0.4)
                          + 1·fell + 0.5·max(0, saturation_s − 0.3)]  − 1·max(0, −min_tripod_margin)

(turn = net heading change per cycle, abs_turn = mean |heading change| per cycle; the margin term only for tripod
cycles.) ``--noise-seeds N`` adds N noisy-start part runs and scores the worst; ``--v-cap`` caps the speed credit.

Search = seeded random perturbations around the incumbent (a (1+λ) hill climb with a shrinking step), which copes
with the noisy, non-smooth physics objective better than a simplex in 8+ dimensions.

    python lab/search_fast_crawl.py --params t_shift_s t_lift_s t_place_s t_stance_s com_lead_m \\
        --iters 40 --out /tmp/fast.yaml
    python lab/search_fast_crawl.py --measure atlas_crawl_controller/atlas_crawl_controller/gaits/crawl_forward.yaml

Steering trim (``--trim``): a mirror-symmetric cycle can still crab or yaw in physics. ``trim_script`` adds the same
joint offsets (same sign on both half-cycles, so mirror key-frames are written out) to every key-frame after the
stance and can set the stance key-frame's duration (the full loop's stance transition is yaw-sensitive)::

    python lab/search_fast_crawl.py --iters 0 --set pairs=1 com_off_m=0.105 com_y_scale=0.5051 \
        t_pair_shift_s=0.04 t_pair_lift_s=0.0662 t_pair_place_s=0.2382 swing_frac=0.4263 lift_hand_m=0.0422 \
        lift_knee_m=0.0202 sag_comp=1.2791 press_m=0.0079 t_stance_s=0.4833 --out /tmp/pair.yaml
    python lab/search_fast_crawl.py --trim-from /tmp/pair.yaml --stance-s 0.6 \
        --trim '{"l_leg_mhx": -0.02, "r_leg_mhx": -0.02, "l_leg_uhz": 0.02, "r_leg_uhz": 0.02, "back_lbz": 0.004}' \
        --out /tmp/pair_trimmed.yaml

Measured on that trimmed diagonal-pair candidate (atlas_crawl_eval, 10 trials x 10 cycles, ±0.01 rad): part loop
0.436 m/s, drift 0.0105 m/gait, turn +0.144 deg/gait, full loop 0.273 m/s, drift 0.0136, turn +0.204, 0 falls,
longest effort saturation 0.15-0.18 s (back_ubx). Known limits of the pair cycle: no tripod phase (tripod margins
are NaN), and with it test_goal_policies::test_cancel_mid_gait_ends_in_stable_hold (cancel at speed_scale 3 must end
in a statically stable four-limb hold: 1/3 runs passed) and test_graph_trial::test_live_one_crawl_cycle_through_the
_embedded_graph (smoothed-CoM vs pelvis distance of one cycle within 0.05 m: 0.29 vs 0.35 m) fail, so it was not
made the shipped crawl_forward.

Run it with ``nice`` on a shared machine: one simulation at a time.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import tempfile

import numpy as np

from atlas_description import LIMB_NAMES

from gait_design import CRAWL_DEFAULTS, DESCRIPTIONS, PRESETS, CrawlDesigner, parse_sets, to_yaml
from search_gait import BOUNDS

from atlas_crawl_kinematics.progress import Progress

#: design parameters that change the contacts of the first key-frame (the crawl stance): not tunable here
STANCE_PARAMS = ("stride_m", "hand_x_m", "hand_y_m", "knee_x_m", "knee_y_m", "com_x_m", "pelvis_dz_m", "pitch_deg",
                 "order", "turn_rad")
EXTRA_BOUNDS = dict(press_diag_m=(0.0, 0.02), t_stance_s=(0.1, 1.0), t_shift_s=(0.08, 1.0), t_lift_s=(0.06, 0.6),
                    t_place_s=(0.06, 0.6), lift_hand_m=(0.015, 0.12), lift_knee_m=(0.015, 0.1),
                    margin_m=(0.0, 0.08), swing_frac=(0.2, 1.0), sag_comp=(0.0, 1.5), com_lead_m=(0.0, 0.15))
MAX_SATURATION_S = 0.5   # run_sequence: longer continuous saturation is a saturation issue


def _bounds(k):
    return EXTRA_BOUNDS.get(k) or BOUNDS[k]


def stance_block(path="crawl_stance"):
    """Joint lines (text) of the crawl stance key-frame, to be pasted verbatim into the designed script."""
    from atlas_crawl_controller.keyframes import script_path
    txt = open(script_path(path), encoding="utf-8").read()
    m = re.search(r"\n    joints:\n((?:      \S+: \S+\n)+)", txt)
    return m.group(1)


def fix_stance(yaml_txt: str) -> str:
    """Replace the first key-frame's joints by crawl_stance.yaml's (sag_comp etc. would change them)."""
    blk = stance_block()
    m = re.search(r"(\n    joints:\n)((?:      \S+: \S+\n)+)", yaml_txt)
    return yaml_txt[:m.start(2)] + blk + yaml_txt[m.end(2):]


#: extra parameters of the diagonal-pair cycle (:func:`pair_cycle`)
PAIR_DEFAULTS = dict(pairs=0.0, com_off_m=0.06, com_y_scale=1.0, t_pair_lift_s=0.2, t_pair_place_s=0.2,
                     t_pair_shift_s=0.15)
EXTRA_BOUNDS.update(com_off_m=(-0.05, 0.15), com_y_scale=(0.0, 1.5), t_pair_lift_s=(0.06, 0.6),
                    t_pair_place_s=(0.06, 0.6), t_pair_shift_s=(0.04, 0.6))


def _line_point(a, b, x):
    """Point of the line through a, b (xy) with abscissa x."""
    t = (x - a[0]) / (b[0] - a[0])
    return a + t * (b - a)


def _kf2(d, name, qpos, contacts, stance, dur, err, support_xy=None):
    """Key-frame dict for to_yaml when the support can be two contacts (CrawlDesigner._kf needs a triangle for its
    margin and static torques): margin = signed distance of the CoM to the support polygon (two contacts: minus the
    distance to the support segment's line), static torques from the min-norm least-squares contact forces."""
    import mujoco
    from atlas_description import LIMB_NAMES
    com = d.com(qpos)[:2]
    sup = contacts[stance, :2] if support_xy is None else support_xy
    if len(sup) == 2:
        e = sup[1] - sup[0]
        margin = -abs(e[0] * (com[1] - sup[0][1]) - e[1] * (com[0] - sup[0][0])) / np.linalg.norm(e)
    else:
        from atlas_crawl_mujoco.kin import support_margin
        margin = support_margin(com, sup)
    m = d.m
    dd = d.ik.forward(qpos)
    dd.qvel[:] = 0.0
    dd.qacc[:] = 0.0
    bias = np.zeros(m.nv)
    mujoco.mj_rne(m, dd, 0, bias)
    jp = np.zeros((3, m.nv))
    J = []
    for i in np.flatnonzero(stance):
        b, pc, r = d.spheres[i]
        pw = dd.xpos[b] + dd.xmat[b].reshape(3, 3) @ pc - np.array([0, 0, r])
        mujoco.mj_jac(m, dd, jp, None, pw, b)
        J.append(jp.copy())
    J = np.vstack(J)
    w = np.tile([4.0, 4.0, 1.0], int(stance.sum()))
    A = J[:, :6].T / w
    f = np.linalg.lstsq(A, bias[:6], rcond=None)[0] / w
    tau = (bias - J.T @ f)[d.dof]
    q = qpos[d.qadr].copy()
    return dict(name=name, qpos=qpos.copy(), q=q, q_cmd=q + d.sag_comp * tau / d.sim.kp, stance=stance.copy(),
                duration_s=float(dur), com=com, margin=float(margin), err=err,
                tri=[LIMB_NAMES[j] for j in range(4) if stance[j]], mirror_of=None)


def pair_cycle(d, **kw):
    """Diagonal-pair crawl cycle on the SAME staggered stance as the tripod crawl (the stagger pairs LW+RK and
    RW+LK are exactly the diagonals): K0 stance; shift (all four down) the CoM onto the support diagonal RW-LK;
    lift LW+RK together (part way, ``swing_frac``); place both one stride ahead; then the mirror image (RW+LK over
    the LW-RK diagonal). While a pair swings, the CoM travels ALONG the support diagonal, from ``com_off_m`` ahead
    (in x) of the intersection of the two diagonals before the swing to the same offset ahead of the intersection
    after it, so the next shift is short. ``com_y_scale`` scales the lateral CoM excursion (1 = on the diagonal).
    Two-contact support phases: statically neutral at best (CoM on the segment), i.e. this cycle relies on the low
    swings (the robot can only tip by the swing height onto the swinging limbs)."""
    p = dict(CRAWL_DEFAULTS, **PRESETS["crawl_forward"])
    p.update(PAIR_DEFAULTS)
    p.update(kw)
    d.sag_comp = float(p["sag_comp"])
    s = float(p["stride_m"])
    contacts = d._nominal(p)
    first = (0, 3)                                 # LW + RK (behind in K0), then RW + LK
    for i in range(4):
        contacts[i, 0] += (-0.25 if i in first else 0.25) * s
    pz = d.pelvis_z0 + p["pelvis_dz_m"]
    pitch = math.radians(p["pitch_deg"])
    qpos, err = d.solve(d.seed_qpos, contacts, (p["com_x_m"], 0.0), 0.0, pz, pitch, iters=400)
    all4 = np.ones(4, bool)
    kfs = [_kf2(d, "stance", qpos, contacts, all4, p["t_stance_s"], err)]

    def inter(c):
        a0, a1, b0, b1 = c[0, :2], c[3, :2], c[1, :2], c[2, :2]
        M = np.array([a1 - a0, b0 - b1]).T
        t = np.linalg.solve(M, b0 - a0)[0]
        return a0 + t * (a1 - a0)

    sw = np.array([i in first for i in range(4)])
    sup = ~sw
    a, b = contacts[1, :2], contacts[2, :2]          # support diagonal RW - LK
    x0 = inter(contacts)[0] + p["com_off_m"]
    after = contacts.copy()
    after[sw, 0] += s
    x1 = inter(after)[0] + p["com_off_m"]
    yc = 0.0

    def target(x):
        pt = _line_point(a, b, x)
        return np.array([pt[0], yc + p["com_y_scale"] * (pt[1] - yc)])

    qpos, err = d.solve(qpos, contacts, target(x0), 0.0, pz, pitch)
    kfs.append(_kf2(d, "shift_for_LW_RK", qpos, contacts, all4, p["t_pair_shift_s"], err, contacts[sup, :2]))
    tg = contacts.copy()
    for i in np.flatnonzero(sw):
        goal = contacts[i].copy()
        goal[0] += s
        tg[i] = contacts[i] + p["swing_frac"] * (goal - contacts[i])
        tg[i, 2] += p["lift_hand_m"] if i < 2 else p["lift_knee_m"]
    xm = x0 + p["swing_frac"] * (x1 - x0)
    qpos, err = d.solve(qpos, tg, target(xm), 0.0, pz, pitch)
    kfs.append(_kf2(d, "lift_LW_RK", qpos, tg, sup, p["t_pair_lift_s"], err))
    for i in np.flatnonzero(sw):
        tg[i] = contacts[i] + np.array([s, 0.0, -p["press_m"]])
    qpos, err = d.solve(qpos, tg, target(x1), 0.0, pz, pitch)
    kfs.append(_kf2(d, "place_LW_RK", qpos, after, sup, p["t_pair_place_s"], err))
    n1 = len(kfs)
    for k in kfs[1:n1]:
        mname = k["name"].replace("LW_RK", "RW_LK")
        st = k["stance"][[1, 0, 3, 2]]
        com = np.array([k["com"][0] + 0.5 * s, -k["com"][1]])
        qp = k["qpos"].copy()
        qp[3:7] = [qp[3], -qp[4], qp[5], -qp[6]]
        kk = dict(k, name=mname, qpos=qp, stance=st, com=com, tri=[LIMB_NAMES[j] for j in range(4) if st[j]],
                  mirror_of=k["name"])
        kfs.append(kk)
    return kfs, p


def design(designer, params):
    bad = [k for k in params if k in STANCE_PARAMS and params[k] != dict(CRAWL_DEFAULTS, **PRESETS["crawl_forward"])[k]]
    if bad:
        raise ValueError(f"{bad} change the crawl stance (K0); not tunable here")
    if params.get("pairs"):
        return pair_cycle(designer, **params)
    kfs, p = designer.design("crawl_forward", **{k: v for k, v in params.items() if k not in PAIR_DEFAULTS})
    return kfs, p


def measure(path, loop="part", cycles=4, seed=0, noise_rad=0.0, time_scale=1.0):
    """Play ``path`` in physics and return metrics (see module doc). Settling (1 s before) excluded."""
    from atlas_crawl_controller.keyframes import load_script
    from atlas_crawl_controller.player import KeyframePlayer

    from atlas_crawl_mujoco.kin import support_margin
    from atlas_crawl_mujoco.sim import AtlasSim

    script = load_script(path)
    sim = AtlasSim(seed=seed)
    try:
        q0 = script.keyframes[0].q
        sim.fall_check = "none"
        sim.reset(q0, base_quat_wxyz=script.start_quat_wxyz, noise_rad=noise_rad)
        sim.set_joint_targets(q0)
        sim.step(int(round(1.0 / sim.dt)))
        sim.fall_check = script.fall_check
        pl = KeyframePlayer(script, loop_mode=loop, cycles=cycles, time_scale=time_scale)
        pl.start(sim.joint_q(), sim.joint_effort(), sim.kp)
        lim = sim.model.actuator_forcerange[sim.map.act_id, 1]
        dt = sim.dt
        t0 = sim.time
        com0 = sim.com()[:2].copy()
        h0 = sim.heading_rad()
        hu, hp = 0.0, h0
        starts = [(com0, h0)]
        cyc = 0
        sat_run = np.zeros(28)
        max_sat = np.zeros(28)
        fell, why = False, ""
        min_margin = math.inf
        k = 0
        while not pl.done:
            q, _ = pl.update(dt)
            sim.set_joint_targets(q)
            sim.step(1)
            k += 1
            sat = np.abs(sim.joint_effort()) >= 0.999 * lim
            sat_run = np.where(sat, sat_run + dt, 0.0)
            max_sat = np.maximum(max_sat, sat_run)
            if pl.cycle != cyc:
                cyc = pl.cycle
                starts.append((sim.com()[:2].copy(), sim.heading_rad()))
            if k % 10 == 0:
                h = sim.heading_rad()
                hu += (h - hp + math.pi) % (2 * math.pi) - math.pi
                hp = h
                st = pl.planned_stance()
                if st.sum() == 3:
                    min_margin = min(min_margin, support_margin(sim.com()[:2], sim.contact_site_pos()[st, :2]))
                f, w = sim.fallen()
                if f:
                    fell, why = True, w
                    break
        T = sim.time - t0
        starts.append((sim.com()[:2].copy(), sim.heading_rad()))
        d = starts[-1][0] - com0
        u = np.array([math.cos(h0), math.sin(h0)])
        drifts = []
        for (ca, ha), (cb, _hb) in zip(starts[:-1], starts[1:]):
            dd = cb - ca
            drifts.append(abs(math.cos(ha) * dd[1] - math.sin(ha) * dd[0]))
        n = max(1, len(starts) - 1)
        dhs = [abs((hb - ha + math.pi) % (2 * math.pi) - math.pi) for (_ca, ha), (_cb, hb) in zip(starts[:-1], starts[1:])]
        j = int(np.argmax(max_sat))
        from atlas_description import JOINT_NAMES
        return dict(loop=loop, cycles=n, time_s=T, along_m=float(d @ u), v_mps=float(np.linalg.norm(d)) / T,
                    v_along_mps=float(d @ u) / T, dist_per_cycle_m=float(np.linalg.norm(d)) / n,
                    drift_m=float(np.mean(drifts)), turn_deg=math.degrees(hu) / n,
                    abs_turn_deg=math.degrees(float(np.mean(dhs))) if dhs else 0.0, lateral_m=float(u[0] * d[1] - u[1] * d[0]), fell=fell, why=why,
                    sat_s=float(max_sat[j]), sat_joint=JOINT_NAMES[j] if max_sat[j] > 0 else "",
                    min_margin_m=min_margin if math.isfinite(min_margin) else float("nan"))
    finally:
        sim.close()


def score(rp, rf=None):
    """Objective (module doc); abs_turn = mean over cycles of |heading change| (no cancellation between cycles)."""
    def pen(r):
        return (5 * max(0.0, r["drift_m"] - 0.012) + 0.1 * max(0.0, abs(r["turn_deg"]) - 0.25)
                + 0.1 * max(0.0, r["abs_turn_deg"] - 0.4) + 1.0 * r["fell"] + 0.5 * max(0.0, r["sat_s"] - 0.3))
    J = rp["v_along_mps"] - pen(rp)
    mm = rp["min_margin_m"]
    if math.isfinite(mm):          # tripod cycles: keep the physics margin >= 0 (the pair cycle has no tripod)
        J -= 1.0 * max(0.0, -mm)
    if rf is not None:
        J -= pen(rf)
    return J


def fmt(r):
    return (f"{r['loop']}: v {r['v_along_mps']:.4f} m/s, {r['dist_per_cycle_m']:.3f} m/cyc, drift {r['drift_m']:.4f}, "
            f"turn {r['turn_deg']:+.2f} (|.| {r['abs_turn_deg']:.2f}) deg/cyc, lat {r['lateral_m']:+.3f} m, fell {int(r['fell'])}{' ' + r['why'] if r['fell'] else ''}, "
            f"sat {r['sat_s']:.2f} s {r['sat_joint']}, margin {r['min_margin_m']:+.3f}")


def evaluate(designer, params, path, cycles, full_cycles, seed=0, noise_seeds=0, v_cap=None):
    """Design, write ``path``, measure. With ``noise_seeds`` > 0 the part loop is also played from noisy starts
    (±0.01 rad, seeds 1..noise_seeds, as atlas_crawl_eval) and the score is the WORST one over the part runs (so
    the search cannot win on one lucky seed); ``v_cap`` caps the velocity credit (trade spare speed for
    straightness). Returns (J, part metrics (worst), full metrics, key-frames, parameters, YAML text)."""
    kfs, p = design(designer, params)
    txt = fix_stance(to_yaml(kfs, "crawl_forward", DESCRIPTIONS["crawl_forward"], p))
    with open(path, "w", encoding="utf-8") as f:
        f.write(txt)
    rp = measure(path, "part", cycles, seed)
    rf = measure(path, "full", full_cycles, seed) if full_cycles and not rp["fell"] else None
    runs = [rp] + [measure(path, "part", cycles, seed + k, noise_rad=0.01) for k in range(1, noise_seeds + 1)
                   if not rp["fell"]]

    def sc(r):
        rr = dict(r)
        if v_cap is not None:
            rr["v_along_mps"] = min(rr["v_along_mps"], v_cap)
        return score(rr, rf)

    Js = [sc(r) for r in runs]
    i = int(np.argmin(Js))
    return Js[i], runs[i], rf, kfs, p, txt


def trim_script(src, offsets, out, stance_s=None):
    """Write ``src`` with every key-frame after the first given explicit joints (mirrors expanded) plus ``offsets``
    {joint: rad}; ``stance_s`` sets the first key-frame's duration. Header lines and top-level fields are kept."""
    from atlas_crawl_controller.keyframes import load_script
    from atlas_description import JOINT_NAMES
    txt = open(src, encoding="utf-8").read()
    sc = load_script(src)
    bad = [n for n in offsets if n not in JOINT_NAMES]
    if bad:
        raise ValueError(f"unknown joints {bad}")
    lines = [txt.split("keyframes:")[0] + "keyframes:"]
    for i, k in enumerate(sc.keyframes):
        q = k.q.copy()
        dur = k.duration_s
        if i > 0:
            for n, v in offsets.items():
                q[JOINT_NAMES.index(n)] += v
        elif stance_s:
            dur = stance_s
        lines.append(f"  - name: {k.name}\n    duration_s: {dur:.3f}\n    stance: [{', '.join(k.stance)}]\n    joints:")
        lines += [f"      {n}: {v:+.4f}" for n, v in zip(JOINT_NAMES, q)]
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    load_script(out)       # validates (joint limits etc.)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--measure", default=None, help="only measure this script (part + full loop) and exit")
    ap.add_argument("--params", nargs="+", default=["t_shift_s", "t_lift_s", "t_place_s", "t_stance_s"])
    ap.add_argument("--set", nargs="*", default=[], help="fixed overrides key=value (start point)")
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--lam", type=int, default=2, help="candidates per iteration")
    ap.add_argument("--step", type=float, default=0.15, help="initial step, fraction of each box")
    ap.add_argument("--cycles", type=int, default=4)
    ap.add_argument("--full-cycles", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0, help="RNG seed of the search (physics runs use seed 0)")
    ap.add_argument("--noise-seeds", type=int, default=0, help="also play the part loop from N noisy starts; "
                    "score = worst run")
    ap.add_argument("--v-cap", type=float, default=None, help="cap on the velocity credit in the score, m/s")
    ap.add_argument("--out", default=None)
    ap.add_argument("--quiet", action="store_true", help="no progress bar, no per-candidate lines")
    ap.add_argument("--trim-from", default=None, help="write --out = this script + --trim joint offsets, and exit")
    ap.add_argument("--trim", default="{}", help="JSON {joint: offset rad} for --trim-from")
    ap.add_argument("--stance-s", type=float, default=None, help="--trim-from: stance key-frame duration, s")
    a = ap.parse_args(argv)
    if a.trim_from:
        if not a.out:
            ap.error("--trim-from needs --out")
        trim_script(a.trim_from, json.loads(a.trim), a.out, a.stance_s)
        return 0
    if a.measure:
        for loop, c in (("part", a.cycles), ("full", a.full_cycles)):
            r = measure(a.measure, loop, c)
            print(fmt(r), flush=True)
        return 0
    bad = [k for k in a.params if k in STANCE_PARAMS]
    if bad:
        ap.error(f"{bad} change the crawl stance; not tunable here")
    base = dict(PRESETS["crawl_forward"])
    base.update(parse_sets(a.set))
    d = CrawlDesigner()
    tmp = os.path.join(tempfile.mkdtemp(prefix="fast_crawl_"), "crawl_forward.yaml")
    lo = np.array([_bounds(k)[0] for k in a.params])
    hi = np.array([_bounds(k)[1] for k in a.params])
    x = np.array([float(base.get(k, CRAWL_DEFAULTS.get(k, PAIR_DEFAULTS.get(k)))) for k in a.params])
    rng = np.random.default_rng(a.seed)

    def run(xv):
        pp = dict(base, **{k: float(v) for k, v in zip(a.params, xv)})
        try:
            return evaluate(d, pp, tmp, a.cycles, a.full_cycles, noise_seeds=a.noise_seeds, v_cap=a.v_cap)
        except Exception as e:   # infeasible design
            print("eval failed:", e, file=sys.stderr)
            return (-10.0,) + (None,) * 5

    bar = Progress(1 + a.iters * a.lam, desc="search_fast_crawl", unit="candidate", quiet=a.quiet)
    J, rp, rf, kfs, p, txt = run(x)
    bar.update(1)
    best = dict(J=J, x=x.copy(), rp=rp, rf=rf, p=p, txt=txt)
    bar.write(f"start J={J:+.4f} x={dict(zip(a.params, np.round(x, 3)))}\n  {fmt(rp)}\n  {fmt(rf) if rf else ''}")
    step = a.step
    for it in range(a.iters):
        improved = False
        for _ in range(a.lam):
            xc = np.clip(best["x"] + rng.normal(0, step, len(x)) * (hi - lo), lo, hi)
            J, rp, rf, kfs, p, txt = run(xc)
            bar.update(1, info=f"iteration {it + 1}/{a.iters}, best J {max(best['J'], J):+.4f}")
            if rp is None:
                continue
            tag = ""
            if J > best["J"]:
                best.update(J=J, x=xc, rp=rp, rf=rf, p=p, txt=txt)
                improved, tag = True, " *"
            bar.write(f"it {it} J={J:+.4f}{tag} x={dict(zip(a.params, np.round(xc, 3)))}\n  {fmt(rp)}\n"
                      f"  {fmt(rf) if rf else ''}")
        step = step * (1.1 if improved else 0.85)
    bar.close()
    print("BEST", json.dumps({k: v for k, v in best["p"].items() if k != "order"}))
    print("BEST", fmt(best["rp"]), "|", fmt(best["rf"]) if best["rf"] else "")
    if a.out:
        meas = (f"seed 0, {a.cycles} part cycles: {fmt(best['rp'])}"
                + (f"; {a.full_cycles} full cycles: {fmt(best['rf'])}" if best["rf"] else ""))
        txt = best["txt"].replace("# Hand edits are fine", f"# Tuned by: python lab/search_fast_crawl.py "
                                                        f"(J {best['J']:+.4f}); measured {meas}\n# Hand edits are fine",
                                  1)
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(txt)
    return 0


if __name__ == "__main__":
    sys.exit(main())
