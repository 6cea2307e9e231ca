"""Chain key-frame scripts in ONE physics run (each starts bumplessly from the previous script's final state),
check each script's outcome, repeat over seeded noisy trials, and optionally film it.

    python -m atlas_crawl_mujoco.run_sequence prone init_crawl_stance_from_prone crawl_forward:3 turn_left:2 \\
        crawl_backward:2 lie_down roll_to_back_from_left --video reports/videos/demo.mp4
    python -m atlas_crawl_mujoco.run_sequence roll_to_back_from_left --trials 20 --noise 0.02

Item syntax: ``name[:cycles[:loop]]`` (loop = full | part | once; default full). The first script's start pose
(``start_pose`` or its first key-frame with ``start_quat_wxyz``) is the reset pose; ``--noise`` adds seeded uniform
joint noise (±rad) to it (AtlasSim.reset ``noise_rad``), trial k uses seed ``--seed + k``. After every script the
robot is left ``--settle`` s with the last targets held, then the script's outcome is checked (:data:`CHECKS`):

* ``on_back`` (roll_to_back_*): utorso front axis · world up > 0.8 and pelvis front axis · up > 0.5 (the chest faces
  the sky; prone is −1), and at rest.
* ``prone`` (prone, roll_to_belly, lie_down): utorso and pelvis front axis · up < −0.8, at rest.
* ``stance`` (init_crawl_stance_from_prone, kneel): all four limbs (LW, RW, LK, RK) touch the floor, nothing else but
  the feet does, the CoM projection is inside the polygon of the four contact frames with margin ≥ 0.03 m,
  not fallen (crawl fall check), at rest.
* ``no_fall`` (crawl/turn gaits): the crawl fall check never fired.

"At rest" = max |joint velocity| < 0.05 rad/s and pelvis speed < 0.02 m/s after the settle time. Effort
saturation = longest continuous time any servo sits at its force limit; > 0.5 s is reported as a
saturation issue, counted apart from the outcome ("outcome" and "outcome without effort saturation" counts).
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field

import numpy as np

REST_QD_RAD_S = 0.05
REST_V_M_S = 0.02
MAX_SATURATION_S = 0.5
MIN_STANCE_MARGIN_M = 0.03


def front_up(sim, body: str = "utorso") -> float:
    """World-z component of a body's forward (x) axis: −1 lying prone, +1 lying on the back."""
    bid = sim.map.utorso if body == "utorso" else sim.map.pelvis
    return float(sim.data.xmat[bid].reshape(3, 3)[2, 0])


def stance_margin(sim) -> float:
    """Signed distance (m) of the CoM projection to the edges of the LW/RW/LK/RK contact-frame polygon."""
    from .kin import support_margin
    return float(support_margin(sim.com()[:2], sim.contact_site_pos()[:, :2]))


def at_rest(sim):
    qd = float(np.max(np.abs(sim.joint_qd())))
    v = float(np.linalg.norm(sim.pelvis_twist()[0]))
    return qd < REST_QD_RAD_S and v < REST_V_M_S, qd, v


def _check_kind(name: str) -> str:
    if name.startswith("roll_to_back"):
        return "on_back"
    if name in ("prone", "roll_to_belly", "lie_down", "lie_down_to_prone"):
        return "prone"
    if name in ("init_crawl_stance_from_prone", "kneel", "crawl_stance"):
        return "stance"
    return "no_fall"


@dataclass
class SegmentResult:
    name: str
    kind: str
    t0_s: float
    t1_s: float
    ok: bool = False          # outcome check passed (posture/contacts/rest/no fall)
    why: str = ""
    saturated: bool = False   # some servo sat at its force limit longer than MAX_SATURATION_S (reported apart)
    sat_why: str = ""
    metrics: dict = field(default_factory=dict)

    def line(self) -> str:
        m = " ".join(f"{k}={v:+.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in self.metrics.items())
        return (f"  {self.name:32s} {self.kind:8s} {self.t1_s - self.t0_s:6.2f}s  {'OK  ' if self.ok else 'FAIL'} "
                f"{m}" + (f"  ({self.why})" if self.why else "")
                + (f"  [SATURATION: {self.sat_why}]" if self.saturated else ""))


def parse_item(item: str):
    parts = item.split(":")
    name = parts[0]
    cycles = int(parts[1]) if len(parts) > 1 and parts[1] else 1
    loop = parts[2] if len(parts) > 2 else ("full" if cycles > 1 else "once")
    if loop not in ("full", "part", "once"):
        raise ValueError(f"{item}: loop must be full, part or once")
    return name, cycles, loop


def evaluate_segment(sim, name, kind, t0, fell, fall_reason, max_sat_s, sat_joint):
    res = SegmentResult(name, kind, t0, sim.time)
    rest, qd, v = at_rest(sim)
    u, p = front_up(sim, "utorso"), front_up(sim, "pelvis")
    res.metrics = dict(utorso_front_up=u, pelvis_front_up=p, max_qd=qd, pelvis_v=v,
                       max_saturation_s=max_sat_s)
    if sat_joint:
        res.metrics["sat_joint"] = sat_joint
    why = []
    res.saturated = max_sat_s > MAX_SATURATION_S
    if res.saturated:
        res.sat_why = f"{sat_joint} at its force limit for {max_sat_s:.2f} s"
    if kind == "on_back":
        if not (u > 0.8 and p > 0.5):
            why.append("not on the back")
        if not rest:
            why.append("not at rest")
    elif kind == "prone":
        if not (u < -0.8 and p < -0.8):
            why.append("not prone")
        if not rest:
            why.append("not at rest")
    elif kind == "stance":
        touch, force = sim.limb_contacts()
        others = [b for b, _p, _f, g in sim.floor_contacts() if b == -1]
        mg = stance_margin(sim)
        res.metrics.update(margin_m=mg, touch="".join("1" if t else "0" for t in touch),
                           limb_force_n="/".join(f"{f:.0f}" for f in force))
        f_now, why_f = sim.fallen()
        if not touch.all():
            why.append("not all four limbs on the floor")
        if others:
            why.append(f"{len(others)} other robot-floor contacts")
        if mg < MIN_STANCE_MARGIN_M:
            why.append(f"margin {mg:.3f} m < {MIN_STANCE_MARGIN_M}")
        if f_now:
            why.append(why_f)
        if not rest:
            why.append("not at rest")
    if fell:
        why.append(f"fell: {fall_reason}")
    res.ok = not why
    res.why = "; ".join(why)
    return res


def run_sequence(items, seed=0, noise_rad=0.0, video=None, settle_s=1.0, start_settle_s=1.0, params=None,
                 quiet=False, recorder_kwargs=None, sim=None, log=None):
    """Play the scripts one after the other in one AtlasSim. Returns (list of SegmentResult, sim).

    ``log``: callable for the per-script lines (default print), e.g. a progress bar's ``write``."""
    from atlas_crawl_controller.keyframes import load_script, named_pose
    from atlas_crawl_controller.player import KeyframePlayer

    from .sim import AtlasSim

    parsed = [parse_item(i) if isinstance(i, str) else i for i in items]
    say = log or (lambda msg: print(msg, flush=True))
    scripts = [load_script(n) for n, _c, _l in parsed]       # validate everything before anything moves
    sim = sim or AtlasSim(params=params, seed=seed)
    first = scripts[0]
    if first.start_pose:
        q0, quat = named_pose(first.start_pose)
    else:
        q0, quat = first.keyframes[0].q, first.start_quat_wxyz
    sim.fall_check = "none"
    sim.reset(q0, base_quat_wxyz=quat, noise_rad=noise_rad)
    rec = None
    if video:
        from .render import VideoRecorder
        rec = VideoRecorder(sim, video, **(recorder_kwargs or {}))
        rec.label = "start pose"
    dt = sim.dt

    def step(n):
        for _ in range(n):
            sim.step(1)
            if rec:
                rec.maybe_capture()

    step(int(round(start_settle_s / dt)))
    lim = sim.model.actuator_forcerange[sim.map.act_id, 1]
    results = []
    from atlas_crawl_controller.robot_info import JOINT_NAMES
    for (name, cycles, loop), script in zip(parsed, scripts):
        kind = _check_kind(script.name)
        sim.fall_check = script.fall_check
        player = KeyframePlayer(script, loop_mode=loop, cycles=cycles)
        if rec:
            rec.label = script.name + (f", {cycles} cycle{'s' if cycles > 1 else ''} ({loop} loop)"
                                       if cycles > 1 or loop == "part" else "")
        player.start(sim.joint_q(), sim.joint_effort(), sim.kp)
        t0 = sim.time
        fell, reason = False, ""
        sat_run = np.zeros(28)
        max_sat = np.zeros(28)
        k = 0
        settle_steps = int(round(settle_s / dt))
        while True:
            if not player.done:
                q, _ = player.update(dt)
                sim.set_joint_targets(q)
            else:
                settle_steps -= 1
                if settle_steps < 0:
                    break
            step(1)
            k += 1
            sat = np.abs(sim.joint_effort()) >= 0.999 * lim
            sat_run = np.where(sat, sat_run + dt, 0.0)
            max_sat = np.maximum(max_sat, sat_run)
            if k % 10 == 0 and not fell:
                f, why = sim.fallen()
                if f:
                    fell, reason = True, f"{why} at t={sim.time - t0:.2f}s"
                    if script.fall_check != "none":
                        break
        j = int(np.argmax(max_sat))
        r = evaluate_segment(sim, script.name, kind, t0, fell, reason, float(max_sat[j]),
                             JOINT_NAMES[j] if max_sat[j] > 0 else "")
        results.append(r)
        if not quiet:
            say(r.line())
        if fell and script.fall_check != "none":
            break
    if rec:
        rec.close()
        if not quiet:
            say(rec.cost_line())
    return results, sim


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("items", nargs="+", help="script[:cycles[:loop]] ...")
    ap.add_argument("--trials", type=int, default=1)
    ap.add_argument("--noise", type=float, default=0.0, help="initial joint noise, ±rad (uniform, seeded)")
    ap.add_argument("--seed", type=int, default=0, help="seed of trial 0 (trial k uses seed + k)")
    ap.add_argument("--settle", type=float, default=1.0, help="s held after every script before its check")
    ap.add_argument("--video", default=None, help="MP4/GIF of the first trial (options below)")
    ap.add_argument("--quiet", action="store_true", help="no progress bar and no per-script lines, only the summary")
    from .render import add_video_args, video_kwargs
    add_video_args(ap)
    a = ap.parse_args(argv)
    if a.trials < 1:
        ap.error("--trials must be >= 1")
    try:
        vkw = video_kwargs(a)
    except ValueError as e:
        ap.error(str(e))
    if a.video:
        from .render import select_gl_backend
        if select_gl_backend() is None:
            print("no offscreen GL backend (tried egl, osmesa); run without --video", file=sys.stderr)
            return 2
    from atlas_crawl_kinematics.progress import Progress
    n_ok = None
    all_ok = 0
    bar = Progress(a.trials, desc="run_sequence", unit="trial", quiet=a.quiet)
    for k in range(a.trials):
        bar.write(f"trial {k} (seed {a.seed + k}, noise ±{a.noise} rad)")
        bar.set_info(f"trial {k}" + (" (filming)" if a.video and k == 0 else ""))
        res, _ = run_sequence(a.items, seed=a.seed + k, noise_rad=a.noise, settle_s=a.settle,
                              video=a.video if k == 0 else None, recorder_kwargs=vkw, quiet=a.quiet,
                              log=bar.write)
        bar.update(1, info=f"{sum(r.ok for r in res)}/{len(a.items)} scripts OK in trial {k}")
        if n_ok is None:
            n_ok = {r.name: 0 for r in res}
            n_run = {r.name: 0 for r in res}
            n_clean = {r.name: 0 for r in res}
        for r in res:
            n_ok[r.name] = n_ok.get(r.name, 0) + int(r.ok)
            n_run[r.name] = n_run.get(r.name, 0) + 1
            n_clean[r.name] = n_clean.get(r.name, 0) + int(r.ok and not r.saturated)
        all_ok += int(len(res) == len(a.items) and all(r.ok for r in res))
    bar.close()
    print(f"\nsuccess over {a.trials} trial(s), noise ±{a.noise} rad, seeds {a.seed}..{a.seed + a.trials - 1}:")
    for name in n_ok:
        print(f"  {name:32s} outcome {n_ok[name]}/{a.trials}, outcome without effort saturation "
              f"{n_clean[name]}/{a.trials}" + (f" (ran {n_run[name]})" if n_run[name] != a.trials else ""))
    print(f"  whole sequence                   {all_ok}/{a.trials}")
    if a.video:
        print("video:", a.video)
    return 0 if all_ok == a.trials else 1


if __name__ == "__main__":
    sys.exit(main())
