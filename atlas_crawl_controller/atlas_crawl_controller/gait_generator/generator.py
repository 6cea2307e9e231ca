r"""The closed-loop crawl gait generator: the plan object the crawl tracker samples (``sample(t)``,
``duration_s``, ``trajectory(dt)``, ``cycles``), re-planned at the start of every step from the measured pelvis
pose by :meth:`CrawlGaitGenerator.observe` (issue 12 §1; thesis §4.1.3 static crawl, §4.3 margin rule).

Per step ``k`` (limbs ``G`` = :meth:`.ContactSequence.group`: one limb, or a diagonal pair with ``pattern``
``diagonal_pairs``): shift the CoM from its last target to the margin point of the support without ``G``
(:class:`.CoMPlan`), then swing ``G`` on the lifted arc (:func:`~atlas_crawl_kinematics.cartesian_gait.swing_arc`) to
their landing points (:class:`.FootPlacement`), the others held. At the start of each step,
:class:`.PlacementFeedback` turns the measured heading / lateral errors into increments of the pattern reference
:math:`(r_k, \theta_k)`, and steps ``k..`` are planned again from the contacts as they stand (the limbs already placed
are not moved). Future steps are the nominal prediction (the tracker's lift lookahead samples them).

With a fresh height map (:meth:`CrawlGaitGenerator.use_map`, :mod:`.terrain`; issue 13 §2) the next
``terrain.horizon_steps`` landing points move to the best foothold near the nominal one and onto the ground's height,
each swing's apex rises over the ground under its path, the command is scaled down on ground sloping along the travel
(``terrain.slow_from_slope_deg``; :attr:`speed_scale` per step), and the samples carry the body tilt of the ground
under the contacts (``extra["tilt_R"]``, relative to the ground at the start). Without one: blind placement (heights
as they stand, flat-ground swing), and :attr:`terrain_reason` says why.
"""
from __future__ import annotations

import math
import os

import numpy as np

from atlas_crawl_kinematics.cartesian_gait import GaitSample, min_jerk, swing_arc
from atlas_crawl_kinematics.rotations import R_between

from ..parameters import load_parameter_file
from .command import CommandError, CommandLimits, CrawlCommand
from .com_plan import CoMPlan
from .contact_sequence import LIMB_NAMES, ContactSequence
from .feedback import PlacementFeedback
from .placement import FootPlacement
from .terrain import Terrain

__all__ = ["CrawlGaitGenerator", "PARAMETER_FILE", "blind_reason", "diagonal_params", "parameter_set"]

PARAMETER_FILE = "gait_generator_parameters.yaml"


def parameter_set():
    """The YAML's parameter set (the source tree's config/ through a symlink install, else the installed one)."""
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))), "config",
                       PARAMETER_FILE)
    return load_parameter_file(src if os.path.exists(src) else PARAMETER_FILE)


def blind_reason(height_map, now_s: float, p) -> str:
    """Why the generator with parameter values ``p`` plans blind with ``height_map`` (None, or a HeightMap) at host
    time ``now_s``; "" when it uses the map."""
    if not p["terrain.enabled"]:
        return "blind: terrain.enabled is false"
    if height_map is None:
        return "blind: no height map"
    if not (math.isfinite(now_s) and height_map.fresh(now_s, p["terrain.max_age_s"])):
        return (f"blind: height map stamped {height_map.stamp_s:.2f} s is stale at {now_s:.2f} s "
                f"(terrain.max_age_s {p['terrain.max_age_s']:g})")
    return ""


DIAGONAL_PREFIX = "diagonal_pairs."


def diagonal_params(vals, backward: bool = False, turn: bool = False) -> dict:
    """The overrides that make the generator with parameter values ``vals`` (a ParamValues) the dynamic
    diagonal-pair crawl: ``pattern`` diagonal_pairs and every ``diagonal_pairs.X`` as ``X``; ``backward``: then every
    ``diagonal_pairs.backward.X`` as ``X``; ``turn`` (turning on the spot): every ``diagonal_pairs.turn.X``."""
    flat = vals.as_dict()
    subs = {DIAGONAL_PREFIX + "backward.": backward, DIAGONAL_PREFIX + "turn.": turn}
    out = {k[len(DIAGONAL_PREFIX):]: v for k, v in flat.items()
           if k.startswith(DIAGONAL_PREFIX) and not k.startswith(tuple(subs))}
    for sub, on in subs.items():
        if on:
            out.update({k[len(sub):]: v for k, v in flat.items() if k.startswith(sub)})
    out["pattern"] = "diagonal_pairs"
    return out


def p_every(g) -> int:
    """Steps between two feedback updates (``feedback.every_cycles`` whole cycles)."""
    return int(g.p["feedback.every_cycles"]) * g.seq.steps_per_cycle


class CrawlGaitGenerator:
    """Args: contacts0 (4, 3) world LW, RW, LK, RK in stance; com0_xy; heading0_rad (pattern heading, +x body);
    command (:class:`.CrawlCommand`); cycles; params: overrides of config/gait_generator_parameters.yaml.
    Raises :class:`.CommandError` (a ValueError) with the reason for a command it cannot run."""

    def __init__(self, contacts0, com0_xy, heading0_rad: float, command: CrawlCommand, cycles: int,
                 params: dict | None = None):
        p = parameter_set().values(params or {})
        self.p = p
        c0 = np.asarray(contacts0, float)
        com0 = np.asarray(com0_xy, float).reshape(-1)[:2]
        if c0.shape != (4, 3) or not np.all(np.isfinite(c0)) or not np.all(np.isfinite(com0)):
            raise CommandError("contacts0 must be a finite (4, 3) array and com0_xy finite")
        if not math.isfinite(heading0_rad):
            raise CommandError("heading0_rad must be finite")
        if int(cycles) < 1:
            raise CommandError(f"cycles must be >= 1, got {cycles}")
        self.limits = CommandLimits(p["limits.vx_m_per_s"], p["limits.vy_m_per_s"], p["limits.wz_rad_per_s"])
        self.cycles = int(cycles)
        self.seq = ContactSequence(p["t_shift_s"], p["t_swing_s"], p["t_start_s"], backward=command.vx_m_per_s < 0,
                                   pattern=p["pattern"],
                                   mirrored=p["mirror_right_turn"] and command.turns_right_on_the_spot)
        self._check(command)
        self.cmd = command
        self.placement = FootPlacement(c0, heading0_rad)
        self.com_plan = CoMPlan(p["margin_m"])
        self.feedback = PlacementFeedback(p["feedback.heading_gain"], p["feedback.lateral_gain_rad_per_m"],
                                          p["feedback.max_steer_rad"], p["feedback.position_gain"],
                                          p["feedback.max_heading_step_rad"], p["feedback.max_position_step_m"],
                                          p["feedback.max_total_position_m"],
                                          window_s=self.seq.cycle_s * (p["feedback.turn_window_cycles"]
                                                                       if command.turns_on_the_spot
                                                                       else p["feedback.window_cycles"]),
                                          pivot_xy=self.placement.r0)
        self.steps_per_cycle = self.seq.steps_per_cycle
        self.n_steps = self.steps_per_cycle * self.cycles
        self.duration_s = self.seq.step_start_s(self.n_steps)
        T = self.seq.step_s
        # state at step boundaries k = 0..n: contacts before step k, CoM target, reference (r, θ)
        self.contacts = [None] * (self.n_steps + 1)
        self.com = [None] * (self.n_steps + 1)
        self.ref = [None] * (self.n_steps + 1)
        self.contacts[0] = c0.copy()
        self.com[0] = com0.copy()
        self.ref[0] = (self.placement.r0.copy(), float(heading0_rad))
        self.com_to = [None] * self.n_steps
        self.lift = [np.zeros(4)] * self.n_steps          # (4,) swing apex per step (terrain clearance included)
        self.speed_scale = [1.0] * self.n_steps            # command scale per step (terrain slope, Terrain.speed_scale)
        self.ground_n = [None] * (self.n_steps + 1)       # ground normal under the contacts at step boundaries
        self.terrain: Terrain | None = None
        self.terrain_reason = "blind: no height map"
        self.z_off = None                                 # (4,) contact heights above the ground at the first map
        self.n0 = None                                    # ground normal then
        self._T = T
        self.observed = -1          # last step index observed (−1: the start hold)
        self._t_last = None
        self._moving = False        # the desired pose advances from the first moving tick (see track)
        self._plan_from(0)

    # ------------------------------------------------------------------------------------------------ command
    def _check(self, cmd: CrawlCommand) -> None:
        cmd.validated(self.limits)
        Tc = self.seq.cycle_s
        stride = math.hypot(cmd.vx_m_per_s, cmd.vy_m_per_s) * Tc
        if stride > self.p["max_stride_m"] + 1e-12:
            raise CommandError(f"command needs a stride of {stride:.3f} m per {Tc:.2f} s cycle, beyond max_stride_m "
                               f"= {self.p['max_stride_m']:.3f}")
        turn = abs(cmd.wz_rad_per_s) * Tc
        if turn > self.p["max_turn_rad_per_cycle"] + 1e-12:
            raise CommandError(f"command needs {turn:.3f} rad of yaw per cycle, beyond max_turn_rad_per_cycle = "
                               f"{self.p['max_turn_rad_per_cycle']:.3f}")
        if cmd.vx_m_per_s != 0.0 and (cmd.vx_m_per_s < 0) != self.seq.backward and hasattr(self, "cmd"):
            raise CommandError("a change between forward and backward needs a new gait (the contact order reverses)")

    def set_command(self, cmd: CrawlCommand) -> None:
        """New command from the next step on; a bad one raises and changes nothing."""
        self._check(cmd)
        self.cmd = cmd
        k = max(0, self.observed + 1)
        if k < self.n_steps:
            self._plan_from(k)

    def extend(self, cycles: int) -> None:
        """``cycles`` more cycles at the end, planned on from the last step boundary with the current command and
        corrections (continuous crawling: the plan stays a few cycles long, so a re-plan stays cheap)."""
        n = int(cycles) * self.steps_per_cycle
        if n < 1:
            raise CommandError(f"cycles must be >= 1, got {cycles}")
        k0 = self.n_steps
        for name in ("contacts", "com", "ref", "ground_n", "com_to"):
            getattr(self, name).extend([None] * n)
        self.lift.extend([np.zeros(4)] * n)
        self.speed_scale.extend([1.0] * n)
        self.cycles += int(cycles)
        self.n_steps += n
        self.duration_s = self.seq.step_start_s(self.n_steps)
        self._plan_from(k0)

    def resync(self, k: int, measured_contacts, max_shift_m: float, max_limb_error_m: float = 0.0,
               deadband_m: float = 0.0) -> float:
        """Re-sync at step boundary ``k`` (a host that measures once per cycle): the pattern reference
        :math:`r_k` and the contacts from ``k`` on move by the (measured − planned) contact centroid, at most
        ``max_shift_m``, and the steps from ``k`` on are planned again. A robot whose limbs land short of or beside
        the footholds (slip, a slope) would otherwise fall ever further behind a reference that advances at the
        commanded speed, until the targets leave its reach (the backward Cartesian crawl through the graph: "target
        of LK is 1.17 m from the pelvis", 0.3-0.5 m between the held stance targets and the limbs after 8 cycles).
        The heading and the travel direction stay with the steering feedback. ``max_limb_error_m`` > 0: then a limb
        still farther than that from its planned contact (one lagging knee: its held stance target would leave the
        reach, "target of RK is 1.22 m from the pelvis" in a CrawlTo on the estimate) is planned from that distance
        of where it was measured. ``deadband_m`` > 0: only the part of the centroid error beyond it is followed (a
        turn on the spot keeps its pivot through the landing errors of a few cm, and follows a robot sliding down a
        slope). Returns the centroid shift's norm [m]; non-finite measurements change nothing."""
        m = np.asarray(measured_contacts, float).reshape(4, 3)
        if not (0 <= k < self.n_steps) or not np.all(np.isfinite(m[:, :2])) or not max_shift_m > 0:
            return 0.0
        e = m[:, :2].mean(axis=0) - self.contacts[k][:, :2].mean(axis=0)
        n = float(np.linalg.norm(e))
        if deadband_m > 0:
            e *= max(0.0, n - deadband_m) / max(n, 1e-12)
            n = float(np.linalg.norm(e))
        if n > max_shift_m:
            e *= max_shift_m / n
        r, th = self.ref[k]
        self.ref[k] = (np.asarray(r, float) + e, th)
        cs = self.contacts[k].copy()
        cs[:, :2] += e
        if max_limb_error_m > 0:
            d = m[:, :2] - cs[:, :2]
            dn = np.linalg.norm(d, axis=1)
            far = dn > max_limb_error_m
            cs[far, :2] += d[far] * (1.0 - max_limb_error_m / dn[far])[:, None]
        self.contacts[k] = cs
        self._plan_from(k)
        return float(np.linalg.norm(e))

    def use_map(self, height_map, now_s: float, measured_contacts=None) -> str:
        """The latest height map (:class:`~atlas_crawl_controller.height_map.HeightMap` or None) at host time
        ``now_s``: the steps from the next unstarted one on are planned on it. Returns "" when it is used, else the
        reason for blind placement (also in :attr:`terrain_reason`). The first map used fixes each contact point's
        height above the ground and the reference ground normal, from ``measured_contacts`` (4, 3) if given and
        finite, else from the planned contacts as they stand then."""
        p = self.p
        reason = blind_reason(height_map, now_s, p)
        k = max(0, self.observed + 1)
        self.terrain = None if reason else Terrain(height_map, p)
        self.terrain_reason = reason
        if self.terrain is not None and self.z_off is None:
            c = self.contacts[min(k, self.n_steps)]
            if measured_contacts is not None and np.all(np.isfinite(np.asarray(measured_contacts, float))):
                c = np.asarray(measured_contacts, float).reshape(4, 3)
            zg = np.array([self.terrain.height(q) for q in c[:, :2]])
            self.z_off = np.clip(c[:, 2] - zg, -0.02, p["terrain.max_contact_offset_m"])   # NaN: unknown ground
            self.n0 = self.terrain.normal(c[:, :2])
            self.ground_n[min(k, self.n_steps)] = self.n0
        if k < self.n_steps:
            self._plan_from(k)
        return reason

    def steps(self, time_scale: float = 1.0, cycle: int | None = None) -> list:
        """The plan as controller-core references (the sequencer's Cartesian steps): per gait step a four-point
        shift (every limb in stance, ``com_support`` = the support that remains, so the core's CoM moves into it
        before the lift) and the swing to the touchdown along the swing arc (``swing_lift_m``: this plan's apex per
        swinging limb); dicts with name, cycle, targets (4, 3), stance (4,), duration_s, swing_lift_m (4,),
        com_support (4,), heading_rad (the planned body heading at the step's end, as :meth:`sample` has it).
        ``cycle``: that cycle's steps only."""
        out = []
        p = self.p
        spc = self.steps_per_cycle
        ks = range(self.n_steps) if cycle is None else \
            range(spc * int(cycle), min(self.n_steps, spc * (int(cycle) + 1)))
        b = self.drift_bound_m()
        bound = {} if b is None else {"drift_correction_max_m": b}
        for k in ks:
            grp = self.seq.group(k)
            name = "_".join(LIMB_NAMES[i] for i in grp)
            sup = np.ones(4, bool)
            sup[list(grp)] = False
            cb = self.contacts[k]
            dur0 = p["t_shift_s"] + (p["t_start_s"] if k == 0 else 0.0)
            out.append(dict(name=f"shift_{name}", cycle=k // spc, targets=cb.copy(), stance=np.ones(4, bool),
                            duration_s=dur0 * time_scale, swing_lift_m=np.zeros(4), com_support=sup.copy(),
                            heading_rad=float(self.ref[k][1]), **bound))
            out.append(dict(name=f"swing_{name}", cycle=k // spc, targets=self.contacts[k + 1].copy(),
                            stance=sup.copy(), duration_s=p["t_swing_s"] * time_scale,
                            swing_lift_m=np.asarray(self.lift[k], float).copy(), com_support=np.zeros(4, bool),
                            heading_rad=float(self.ref[k + 1][1]), **bound))
        return out

    def drift_bound_m(self):
        """The tracker's world-drift bound this plan asks for: ``world_drift_max_correction_m`` for a straight crawl
        (:attr:`CrawlCommand.goes_straight`), else None (the tracker's own)."""
        b = self.p["world_drift_max_correction_m"]
        return float(b) if b >= 0 and self.cmd.goes_straight else None

    # ------------------------------------------------------------------------------------------------ planning
    def _plan_from(self, k0: int) -> None:
        c = self.cmd
        r, th = self.ref[k0]
        contacts = self.contacts[k0].copy()
        # travel direction = pattern heading minus the heading correction (the pelvis twist) plus the steering
        off = self.feedback.phi - self.feedback.dtheta
        ter, horizon = self.terrain, k0 + self.p["terrain.horizon_steps"]
        for k in range(k0, self.n_steps):
            grp = self.seq.group(k)
            self.com_to[k] = self.com_plan.target(contacts, grp)
            sc = 1.0
            if ter is not None:
                hd = self._travel_heading(th, off)
                sc = ter.speed_scale(self.ground_n[k], hd)
                if k < horizon:     # the map covers the robot's surroundings only
                    sc = min(sc, ter.step_scale(contacts[:, :2], hd))
            self.speed_scale[k] = sc
            r1, th1 = self.placement.advance(r, th + off, sc * c.vx_m_per_s, sc * c.vy_m_per_s,
                                             sc * c.wz_rad_per_s, self._T)   # all of it: an arc keeps its radius
            th1 -= off
            before, contacts = contacts, contacts.copy()
            lifts = np.zeros(4)
            on_map = ter is not None and k < horizon
            for li in grp:
                g = before[li].copy()
                g[:2] = self.placement.land(li, r1, th1)
                lift = self.p["lift_hand_m"] if li < 2 else self.p["lift_knee_m"]
                if on_map and math.isfinite(self.z_off[li]):
                    xy, zg = ter.foothold(g[:2], li, self._travel_heading(th1, off))
                    if math.isfinite(zg):
                        g[:2], g[2] = xy, zg + self.z_off[li]
                    lift += ter.extra_lift(before[li], g, self.z_off[li], lift)
                lifts[li] = lift
                contacts[li] = g
            self.lift[k] = lifts
            known = on_map and all(math.isfinite(self.z_off[li]) for li in grp)
            n = ter.normal(contacts[:, :2]) if known else None
            self.ground_n[k + 1] = self.ground_n[k] if n is None else n
            r, th = r1, th1
            self.ref[k + 1] = (r, th)
            self.contacts[k + 1] = contacts
            self.com[k + 1] = self.com_to[k]

    def _travel_heading(self, theta: float, off: float) -> float:
        """World direction of travel (the axis of the foothold search) for pattern heading ``theta``."""
        c = self.cmd
        moving = c.vx_m_per_s != 0.0 or c.vy_m_per_s != 0.0
        return theta + off + (math.atan2(c.vy_m_per_s, c.vx_m_per_s) if moving else 0.0)

    def observe(self, t_plan: float, pelvis_xy, pelvis_R) -> bool:
        """Feedback of a host that samples the plan: call every tick with the measured pelvis (:meth:`track`); at the
        start of every ``feedback.every_cycles``-th cycle the corrections are applied from there on
        (:meth:`apply_feedback`). Returns True when it re-planned."""
        self.track(t_plan, pelvis_xy, pelvis_R, self.seq.t_start_s <= t_plan < self.duration_s)
        k = self.seq.step_at(t_plan)
        if k <= self.observed:
            return False
        self.observed = k
        return self.apply_feedback(k)

    def track(self, t: float, pelvis_xy, pelvis_R, moving: bool = True) -> None:
        """Every tick: record the errors of the measured pelvis at host time ``t`` (see :class:`.PlacementFeedback`);
        the desired pose advances by the command only while ``moving`` (not in a start hold). Non-finite
        measurements are skipped. The desired pose starts to advance at the first moving tick: a host that first
        repositions the contacts (the gait sequencer from a key-frame stance, ~6 s) does not owe the command's motion
        over that time (before session 22 a turn's desired heading started that far ahead). The reference itself stays
        the pose of the first tick, where the goal started and the pattern's heading was taken."""
        c = self.cmd
        dt = 0.0 if self._t_last is None else max(0.0, t - self._t_last)
        self._t_last = t
        if moving and not self._moving:
            self._moving = True
            dt = 0.0
        if moving:
            self.feedback.track(t, dt, pelvis_xy, pelvis_R, c.vx_m_per_s, c.vy_m_per_s, c.wz_rad_per_s)
        else:
            self.feedback.track(t, dt, pelvis_xy, pelvis_R)

    def apply_feedback(self, k: int) -> bool:
        """The feedback's corrections from the errors recorded so far, from step boundary ``k`` on: the pattern
        reference turns (Δθ) and shifts (δ, turning on the spot), the travel direction steers (φ), and the steps
        from ``k`` are planned again. Only where ``k`` starts every ``feedback.every_cycles``-th cycle (``1 <= k <
        n_steps``); elsewhere it returns False and changes nothing. The sampling runner (:meth:`observe`) and the gait
        sequencer (:func:`~atlas_crawl_controller.cartesian.generator_cycle`) both call it at each cycle start: one
        law, one cadence."""
        if not 1 <= k < self.n_steps or k % p_every(self) != 0:
            return False
        c = self.cmd
        d0, x0 = self.feedback.dtheta, self.feedback.delta.copy()
        sign = 0.0 if c.vx_m_per_s == 0.0 and c.vy_m_per_s == 0.0 else (1.0 if c.vx_m_per_s >= 0 else -1.0)
        d1, _phi, x1 = self.feedback.update(sign)
        r, th = self.ref[k]
        self.ref[k] = (r + (x1 - x0), th + (d1 - d0))
        self._plan_from(k)
        return True

    # ------------------------------------------------------------------------------------------------ sampling
    def _heading(self, k: int, tau: float) -> float:
        return self.ref[k][1] + tau * (self.ref[k + 1][1] - self.ref[k][1])

    def sample(self, t: float) -> GaitSample:
        if not math.isfinite(t):
            raise ValueError("t must be finite")
        k = self.seq.step_at(t)
        if k < 0:
            r, th = self.ref[0]
            return GaitSample(t, self.contacts[0].copy(), np.ones(4, bool), self.com[0].copy(), r.copy(), th,
                              -1, -1, -1, "start", self._extra(0, 0.0))
        if k >= self.n_steps:
            r, th = self.ref[self.n_steps]
            return GaitSample(t, self.contacts[-1].copy(), np.ones(4, bool), self.com[-1].copy(), r.copy(), th,
                              -1, -1, -1, "end", self._extra(self.n_steps, 0.0))
        grp = self.seq.group(k)
        ts = t - self.seq.step_start_s(k)
        cb = self.contacts[k]
        targets = cb.copy()
        stance = np.ones(4, bool)
        spc = self.steps_per_cycle
        cyc, ph = k // spc, 2 * (k % spc)
        if ts < self.p["t_shift_s"]:
            tau = ts / self.p["t_shift_s"]
            com = self.com[k] + (self.com_to[k] - self.com[k]) * float(min_jerk(tau))
            kind, swing, tau_s = "shift", -1, 0.0
        else:
            tau = (ts - self.p["t_shift_s"]) / self.p["t_swing_s"]
            for li in grp:
                targets[li] = swing_arc(cb[li], self.contacts[k + 1][li], self.lift[k][li], tau)
            stance[list(grp)] = False
            com = self.com_to[k].copy()
            kind, swing, tau_s, ph = "swing", grp[0], tau, ph + 1
        r = self.ref[k][0] + tau_s * (self.ref[k + 1][0] - self.ref[k][0])
        return GaitSample(t, targets, stance, com, r, self._heading(k, tau_s), cyc, ph, swing,
                          f"{kind}_{'_'.join(LIMB_NAMES[i] for i in grp)}", self._extra(k, ts / self.seq.step_s))

    def _tilt(self, k: int, frac: float) -> dict:
        """``{"tilt_R": R}``: the rotation from the ground normal at the first map to the one under the contacts,
        blended across step ``k``; {} when blind or ``terrain.follow_slope`` is off."""
        n0, na, nb = self.n0, self.ground_n[k], self.ground_n[min(k + 1, self.n_steps)]
        if not self.p["terrain.follow_slope"] or n0 is None or na is None:
            return {}
        n = na if nb is None else (1.0 - frac) * na + frac * nb
        return {"tilt_R": R_between(n0, n)}

    def _extra(self, k: int, frac: float) -> dict:
        """A sample's ``extra``: :meth:`_tilt` and the world-drift bound asked (:meth:`drift_bound_m`)."""
        out = self._tilt(k, frac)
        b = self.drift_bound_m()
        if b is not None:
            out["drift_correction_max_m"] = b
        return out

    def trajectory(self, dt: float = 0.01):
        ts = np.arange(0.0, self.duration_s + 1e-9, dt)
        S = [self.sample(float(t)) for t in ts]
        return ts, np.array([s.targets for s in S]), np.array([s.stance for s in S])
