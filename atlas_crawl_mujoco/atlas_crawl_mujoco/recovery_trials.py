"""Push-recovery trials (issue 14 §3): seeded pushes during a crawl, then a Recover goal; success count, time to
recover, effort saturation.

    python -m atlas_crawl_mujoco.recovery_trials --trials 20 --seed 0 [--json out.json]
    python -m atlas_crawl_mujoco.recovery_trials --falls 20 --trials 100   # push until 20 falls (target 20/20)
    python -m atlas_crawl_mujoco.recovery_trials --falls 20 --trials 100 --no-recover [--no-protect]  # impacts

One deterministic loop hosts the plain classes the ROS graph runs: AtlasSim (physics, 1 kHz), CrawlControllerCore
(read -> update -> write at its update_rate_hz, as the sim node does) and GaitSequencer (100 Hz tick with the ground-
truth pelvis pose and contacts: fall detection, the protective key-frame, the Recover run).  The simulator's own
ground-truth FallDetector (``AtlasSim.fallen`` definition, debounced) timestamps the fall onset.

Per trial (seed + trial index): fresh crawl stance, ``Crawl{cycles: 4}`` forward; at a random time in the first two
cycles (a random gait phase) the pelvis gets a horizontal push of U(impulse range) N·s over 0.1 s in a random
direction.  If the robot falls, the sequencer must abort the crawl with "fell: ..."; after ``--lie`` s a Recover goal
runs.  A recovery counts when the goal SUCCEEDS and the robot then holds the crawl stance for ``--hold`` s without a
ground-truth fall.  Time to recover = Recover goal start -> success (sim time).  Effort saturation = longest
continuous time any servo sits at its force limit during the recovery (run_sequence's > 0.5 s issue threshold).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from types import SimpleNamespace

import numpy as np

from atlas_crawl_controller import contact_inference as ci
from atlas_crawl_controller.controller_core import CrawlControllerCore
from atlas_crawl_controller.fall_detector import FallDetector
from atlas_crawl_controller.gait_sequencer import GaitSequencer, parameter_set, validate_crawl, validate_recover
from atlas_crawl_controller.keyframes import load_script
from atlas_crawl_controller.robot_info import JOINT_NAMES

from .sim import AtlasSim

MAX_SATURATION_S = 0.5


class Loop:
    """Sim + controller core + sequencer in one loop (sequencer at 100 Hz, controller at its rate)."""

    def __init__(self, seq_params=None):
        self.sim = AtlasSim()
        sc = load_script("crawl_stance")
        self.sim.reset(sc.keyframes[0].q, base_quat_wxyz=sc.start_quat_wxyz)
        self.sim.step(1000)
        self.core = CrawlControllerCore()
        self.core.configure()
        self.core.activate(self.sim.joint_q())
        self.sim.set_joint_targets(self.core.last_command())
        # plain loader: the node's bounded reader (script_load_timeout_s, wall) guards against blocking files, not
        # needed here, and under CPU load it refused ordinary scripts mid-trial
        self.seq = GaitSequencer(seq_params or parameter_set().values(), script_loader=load_script)
        self.gt = FallDetector()
        self.n_ctrl = max(1, int(round(1.0 / (self.core.params["update_rate_hz"] * self.sim.dt))))
        self.t = 0.0
        self.lim = self.sim.model.actuator_forcerange[self.sim.map.act_id, 1]
        self.sat_run = np.zeros(28)
        self.sat_max = np.zeros(28)
        self.events = []
        self.impact_n = {"head": 0.0, "torso": 0.0}    # peak floor normal force on the head / torso bodies

    def pose(self):
        return self.sim.pelvis_pose_xyzw()

    def support(self):
        touch, _ = self.sim.limb_contacts()
        sup = ci.support_from_contacts(touch, self.sim.contact_site_pos(), self.sim.com())
        return SimpleNamespace(in_contact=touch, stability_margin_m=sup.margin_m,
                               statically_stable=sup.statically_stable, age_s=0.0,
                               positions=self.sim.contact_site_pos(), com_xy=np.asarray(sup.com_xy))

    def step_10ms(self, on_tick=None):
        """10 ms of physics with the controller; then one sequencer tick (returns its TickOutput or None)."""
        for _ in range(int(round(0.01 / (self.n_ctrl * self.sim.dt)))):
            cmd = self.core.update(self.t, self.n_ctrl * self.sim.dt, self.sim.joint_q(), self.sim.joint_qd(),
                                   self.sim.joint_effort(), self.pose())
            if self.core.active:
                self.sim.set_joint_targets(cmd)
            self.sim.step(self.n_ctrl)
            self.t += self.n_ctrl * self.sim.dt
            at_lim = np.abs(self.sim.joint_effort()) >= 0.99 * self.lim
            for _l, _p, fn, g in self.sim.floor_contacts():
                if _l == -1:
                    b = self.sim.model.body(self.sim.model.geom_bodyid[g]).name
                    k = "head" if b == "head" else "torso" if b in ("utorso", "mtorso", "ltorso") else None
                    if k:
                        self.impact_n[k] = max(self.impact_n[k], fn)
            self.sat_run = np.where(at_lim, self.sat_run + self.n_ctrl * self.sim.dt, 0.0)
            self.sat_max = np.maximum(self.sat_max, self.sat_run)
        was = self.gt.state.fallen
        st = self.gt.update(self.t, self.pose(), self.sim.floor_bodies(), self.sim.limb_contacts()[0])
        if st.fallen and not was:
            self.events.append((st.onset_t, st.reason))
        if not self.seq.busy:
            self.seq.observe(self.t, self.pose())
            return None
        out = self.seq.tick(self.t, self.core.status(), self.support(), self.pose())
        if out.reference is not None:
            ok, why = self.core.set_reference(out.reference)
            if not ok:
                raise RuntimeError(f"controller rejected a reference: {why}")
        return out

    def run_goal(self, goal, max_s, push=None):
        """Run a goal to its outcome (or max_s); ``push`` = (time after start, impulse (3,))."""
        self.seq.start(goal, self.t, self.pose(), self.support())
        t0 = self.t
        while self.t - t0 < max_s:
            if push is not None and self.t - t0 >= push[0]:
                self.sim.push(push[1])
                push = None
            out = self.step_10ms()
            if out is not None and out.outcome is not None:
                return out.outcome
        return None

    def idle(self, seconds):
        for _ in range(int(round(seconds / 0.01))):
            out = self.step_10ms()
            if out is not None and out.outcome is not None:   # a protective move has no goal; never happens
                pass


def trial(seed: int, impulse=(60.0, 120.0), lie_s=1.5, hold_s=2.0, max_recover_s=240.0, protect=True,
          recover=True) -> dict:
    rng = np.random.default_rng(seed)
    p = parameter_set().values()
    if not protect:
        p = p.replace(protect_script="")
    lp = Loop(p)
    lp.idle(0.5)
    crawl, _ = validate_crawl(SimpleNamespace(cycles=4, distance_m=0.0, direction=0, loop_mode=0, method=0,
                                              speed_scale=1.0), p)
    cycle_s = sum(k.duration_s for k in load_script(crawl.script).keyframes)
    t_push = float(rng.uniform(0.3, 2 * cycle_s))
    j = float(rng.uniform(*impulse))
    ang = float(rng.uniform(-math.pi, math.pi))
    imp = np.array([j * math.cos(ang), j * math.sin(ang), 0.0])
    r = dict(seed=seed, push_t_s=t_push, impulse_ns=j, push_dir_deg=math.degrees(ang))
    o = lp.run_goal(crawl, 120.0, push=(t_push, imp))
    r["crawl_status"] = o.status if o else "timeout"
    r["crawl_reason"] = o.reason if o else ""
    r["fell"] = bool(lp.events)
    if lp.events:
        r["fall_onset_s"], r["fall_reason"] = lp.events[0]
        r["sequencer_abort_fell"] = bool(o and o.status == "aborted" and o.reason.startswith("fell: "))
    if not lp.events:
        r["recovered"] = None
        return r
    lp.idle(lie_s)
    r["head_impact_n"], r["torso_impact_n"] = lp.impact_n["head"], lp.impact_n["torso"]   # push -> lying
    r["posture_before"] = lp.seq.fall_detector.posture(lp.pose())
    if not recover:
        r["recovered"] = None
        return r
    r["posture_before"] = lp.seq.fall_detector.posture(lp.pose())
    lp.sat_run[:] = 0.0
    lp.sat_max[:] = 0.0
    g, _ = validate_recover(SimpleNamespace(max_stages=0), p)
    t_rec = lp.t
    o = lp.run_goal(g, max_recover_s)
    r["recover_status"] = o.status if o else "timeout"
    r["recover_reason"] = o.reason if o else f"no outcome within {max_recover_s} s"
    r["stages"] = list(o.stages) if o else []
    r["time_to_recover_s"] = (lp.t - t_rec) if o and o.status == "succeeded" else None
    k = int(np.argmax(lp.sat_max))
    r["max_saturation_s"], r["saturation_joint"] = float(lp.sat_max[k]), JOINT_NAMES[k]
    n_events = len(lp.events)
    held = False
    if o is not None and o.status == "succeeded":
        lp.idle(hold_s)
        f, why = lp.sim.fallen()
        held = not f and len(lp.events) == n_events and lp.seq.fall_detector.posture(lp.pose()) == "crawl"
        r["hold_reason"] = why
    r["recovered"] = held
    return r


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=20, help="pushes (the most, with --falls)")
    ap.add_argument("--falls", type=int, default=0, help="stop once this many pushes caused a fall (0 = never)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--impulse", type=float, nargs=2, default=(60.0, 120.0), metavar=("MIN", "MAX"),
                    help="push impulse range [N·s]")
    ap.add_argument("--lie", type=float, default=1.5, help="[s] lying still before the Recover goal")
    ap.add_argument("--hold", type=float, default=2.0, help="[s] the crawl stance must hold after the recovery")
    ap.add_argument("--no-protect", action="store_true", help="protect_script '' (keep the last command on a fall)")
    ap.add_argument("--no-recover", action="store_true", help="only the falls (impacts), no Recover goal")
    ap.add_argument("--json", help="write the per-trial records here")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    a = ap.parse_args(argv)
    if a.trials < 1 or a.falls < 0 or not (0 < a.impulse[0] <= a.impulse[1]) or a.lie < 0 or a.hold < 0:
        ap.error("need --trials >= 1, --falls >= 0, 0 < impulse MIN <= MAX, --lie >= 0, --hold >= 0")
    recs = []
    w0 = time.monotonic()
    from atlas_crawl_kinematics.progress import Progress
    bar = Progress(a.trials, desc="push trials", unit="trial", quiet=a.quiet)
    for i in range(a.trials):
        r = trial(a.seed * 1000 + i, tuple(a.impulse), a.lie, a.hold, protect=not a.no_protect,
                  recover=not a.no_recover)
        recs.append(r)
        line = (f"trial {i:2d}: push {r['impulse_ns']:5.1f} N·s at {r['push_t_s']:4.2f} s dir {r['push_dir_deg']:+5.0f}°"
                f" -> crawl {r['crawl_status']}")
        if r["fell"]:
            line += (f" ({r['crawl_reason'][:110]}); lying {r['posture_before']}; peak floor force head "
                     f"{r['head_impact_n']:.0f} N, torso {r['torso_impact_n']:.0f} N")
        if r["fell"] and "recover_status" in r:
            line += f"; recover {r['recover_status']} [{' > '.join(r['stages'])}]"
            if r["time_to_recover_s"] is not None:
                line += f" in {r['time_to_recover_s']:.1f} s"
            line += f", held: {r['recovered']}, max saturation {r['max_saturation_s']:.2f} s ({r['saturation_joint']})"
            if r["recover_status"] != "succeeded":
                line += f" reason: {r['recover_reason']}"
        elif not r["fell"]:
            line += " (no fall)"
        bar.write(line)
        bar.update(1, info=f"falls {sum(1 for x in recs if x['fell'])}")
        if a.falls and sum(1 for x in recs if x["fell"]) >= a.falls:
            break
    bar.close()
    falls = [r for r in recs if r["fell"]]
    ok = [r for r in falls if r["recovered"]]
    times = [r["time_to_recover_s"] for r in ok]
    fell_abort = sum(1 for r in falls if r.get("sequencer_abort_fell"))
    sat = [r["max_saturation_s"] for r in falls if "max_saturation_s" in r]
    head = [r["head_impact_n"] for r in falls]
    torso = [r["torso_impact_n"] for r in falls]
    print(f"\n{len(recs)} pushes ({a.impulse[0]:.0f}-{a.impulse[1]:.0f} N·s, seed {a.seed}): {len(falls)} falls "
          f"({fell_abort} crawl goals aborted 'fell: ...')"
          + ("" if a.no_recover else f"; recovered {len(ok)}/{len(falls)}")
          + (f"; time to recover median {np.median(times):.1f} s, max {max(times):.1f} s" if times else "")
          + (f"; effort saturation > {MAX_SATURATION_S} s in {sum(s > MAX_SATURATION_S for s in sat)}/{len(falls)} "
             f"recoveries (max {max(sat):.2f} s)" if sat else "")
          + (f"; protective key-frame {'off' if a.no_protect else 'on'}: head touched the floor in "
             f"{sum(h > 0 for h in head)}/{len(falls)} falls (peak force median {np.median(head):.0f} N, max "
             f"{max(head):.0f} N), torso peak median {np.median(torso):.0f} N, max {max(torso):.0f} N" if falls else "")
          + f"; wall {time.monotonic() - w0:.0f} s")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(recs, f, indent=1)
    if a.no_recover:
        return 0 if falls else 1
    return 0 if falls and len(ok) == len(falls) else 1


if __name__ == "__main__":
    sys.exit(main())
