"""Gait sequencer: a plain-Python state machine turning one motion goal into controller references (DESIGN §4).

The ROS node (nodes/gait_sequencer_node.py) owns the actions; this class owns the decisions, so tests drive it
without ROS.  One goal at a time:

* :func:`validate_crawl` / :func:`validate_turn` / :func:`validate_roll` check goal fields (constants and field
  names of atlas_crawl_msgs/action/{Crawl,Turn,Roll}) and return ``(MotionGoal, "")`` or ``(None, reason)``.
* :meth:`GaitSequencer.start` begins a goal; :meth:`GaitSequencer.tick` (called at ``rate_hz`` with the latest
  controller status, support state and pelvis pose) returns a :class:`TickOutput`: a reference to publish (or None),
  feedback, and — once — the terminal :class:`Outcome`.
* Key-frame stepping (thesis §4.1): send key-frame ``k`` as a MODE_KEYFRAME reference (``T = duration × time
  scale``), wait for the controller's status ``reached`` for that sequence id, then — if the next key-frame lifts a
  limb (its stance set lacks a limb that is down now) — wait until the support state shows the remaining stance
  limbs in contact and the CoM inside their polygon with ``min_margin_m``.  If the support condition does not hold
  within ``support_wait_s`` the policy ``support_timeout_policy`` decides: ``proceed`` (default; the key-frame
  scripts are open-loop by design, thesis §4.1; the count is reported in the result reason) or ``abort``.
* Dynamic gaits (scripts flagged ``static_stability: false``, e.g. the diagonal-pair ``crawl_forward_fast`` of
  Crawl ``GAIT_DIAGONAL``): their swings leave two contacts, so there is no support polygon to wait for.  Before a
  lift the sequencer only checks that a fresh support state exists and that not all contacts are lost (the robot
  is still on the ground); the same ``support_wait_s`` / ``support_timeout_policy`` apply to that check.
* Cancel (:meth:`request_cancel`): stop at the next statically stable stance — the next reached key-frame whose
  planned stance is all four limbs *and* (when a fresh support state is available) that the support state reports
  statically stable — then hold.  If none comes within one more cycle, stop where it is (the hold is still the last
  reached pose) and say so in the reason.
* Distance goals (crawl ``distance_m > 0``) and angle goals (turn ``TURN_BY_ANGLE``) run whole cycles until the
  measured pelvis displacement / heading change reaches the request, bounded by ``max_cycles``.
* Never hangs: every wait has a bound in sim time (``reached`` within ``duration + reach_timeout_s``) and the node
  adds a wall-clock stall bound; a rejected reference or a timeout ends the goal with a reason.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, replace
from typing import Callable, List, Optional

import numpy as np

from atlas_crawl_kinematics.rotations import quat_xyzw_to_R
from atlas_crawl_kinematics.support import crawl_heading_rad

from .body_motion import BodyMotion
from .controller_core import Mode, Reference
from . import fall_detector as fd
from .parameters import ParamValues, load_parameter_file
from .robot_info import JOINT_NAMES, LIMB_NAMES

__all__ = [
    "PARAMETER_FILE", "parameter_set", "MotionGoal", "Outcome", "TickOutput", "GaitSequencer",
    "validate_crawl", "validate_turn", "validate_roll", "heading_from_quat", "CRAWL", "TURN", "ROLL",
    "validate_recover", "RECOVER", "VELOCITY", "CRAWL_TO", "validate_crawl_to", "velocity_goal", "MOBILE",
]

PARAMETER_FILE = "gait_sequencer_parameters.yaml"
CRAWL, TURN, ROLL = "crawl", "turn", "roll"
RECOVER = "recover"      # Recover action: back to the crawl stance from wherever the robot lies
VELOCITY = "velocity"    # /cmd_vel: continuous generator crawling (no action; velocity_command.py)
CRAWL_TO = "crawl_to"    # CrawlTo action: generator crawl to a pose, command from the pose error each cycle
MOBILE = (CRAWL, TURN, VELOCITY, CRAWL_TO)   # goals that need (and must end in) the upright crawl stance

# Constants of atlas_crawl_msgs (kept here so the plain class does not import ROS; test_sequencer_node checks they
# match the generated message classes).
CRAWL_DIRECTIONS = {0: "forward", 1: "backward"}
CRAWL_LOOP = {0: "full", 1: "part"}
CRAWL_METHODS = {0: "keyframe", 1: "iik", 2: "com_modulated"}
CRAWL_GAITS = {0: "static", 1: "diagonal"}    # GAIT_STATIC (tripod, default), GAIT_DIAGONAL (dynamic pairs)
TURN_DIRECTIONS = {0: "left", 1: "right", 2: "by_angle"}
ROLL_SIDES = {0: "left", 1: "right"}
ROLL_TO = {0: "back", 1: "belly"}


def parameter_set():
    return load_parameter_file(PARAMETER_FILE)


def heading_from_quat(q_xyzw) -> float:
    """Crawl heading from the pelvis orientation: ``atlas_crawl_kinematics.support.crawl_heading_rad``
    (horizontal projection of the pelvis z axis, thesis §2.2.2; = AtlasSim.heading_rad)."""
    x, y, z, w = (float(v) for v in q_xyzw)
    rot = np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])
    return crawl_heading_rad(rot)


def roll_from_quat(q_xyzw) -> float:
    """Roll about the spine relative to lying prone: φ = atan2(y·ẑ, −x·ẑ) with x, y the pelvis axes in the world.

    Prone (belly down, pelvis x axis pointing at the floor) → 0; on the side → ±π/2; on the back → ±π.  (On all
    fours the pelvis x axis points down-forward, so the crawl stance reads ≈ 0 too.)
    """
    x, y, z, w = (float(v) for v in q_xyzw)
    xz = 2 * (x * z - w * y)       # R[2, 0]: world z of the pelvis x axis
    yz = 2 * (y * z + w * x)       # R[2, 1]: world z of the pelvis y axis
    return math.atan2(yz, -xz)


def compose_scripts(expr: str, loader: Callable):
    """Load a script expression: scripts joined with ``+`` are played one after the other; a part may be prefixed
    with ``reverse:`` or ``mirror:`` (KeyframeScript.reversed()/mirrored()).  E.g. the roll from the crawl stance:
    ``lie_down+roll_to_back_from_left`` (down to prone, then roll over the left side).
    """
    parts = [p.strip() for p in str(expr).split("+") if p.strip()]
    if not parts:
        raise ValueError(f"empty key-frame script expression {expr!r}")
    scripts = []
    for part in parts:
        op, _, name = part.rpartition(":")
        sc = loader(name)
        if op == "reverse":
            sc = sc.reversed(sc.name + "_reversed")
        elif op == "mirror":
            sc = sc.mirrored(sc.name + "_mirrored")
        elif op:
            raise ValueError(f"unknown script operation {op!r} in {expr!r} (use reverse: or mirror:)")
        scripts.append(sc)
    if len(scripts) == 1:
        return scripts[0]
    kfs = [k for sc in scripts for k in sc.keyframes]
    return replace(scripts[0], name="+".join(sc.name for sc in scripts), keyframes=kfs,
                   part_loop_start=0,
                   static_stability=all(getattr(sc, "static_stability", True) for sc in scripts), fall_check="none" if any(sc.fall_check == "none" for sc in scripts)
                   else scripts[0].fall_check, end_quat_wxyz=getattr(scripts[-1], "end_quat_wxyz", None))


def _wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi


@dataclass
class MotionGoal:
    kind: str                       # crawl | turn | roll
    script: str                     # key-frame script name
    loop_mode: str = "full"         # once | full | part
    cycles: int = 1
    reverse: bool = False
    time_scale: float = 1.0         # 1 / speed_scale
    distance_m: float = 0.0         # > 0: crawl until this distance (whole cycles, max_cycles bound)
    angle_rad: float = 0.0          # != 0: turn until |heading change| >= |angle|
    max_cycles: int = 1
    description: str = ""
    method: str = "keyframe"        # keyframe | iik | com_modulated (Cartesian phases, thesis §4.2-4.3)
    direction: int = 1              # +1 forward, -1 backward (Cartesian plan)
    turn_sense: int = 0             # turn goals: +1 left, -1 right (0: by angle / not a turn)
    gait: str = "static"            # static (tripod) | diagonal (dynamic pairs, Crawl GAIT_DIAGONAL)
    roll_to: str = ""               # roll goals: "back" | "belly" (end posture checked at the end)
    target: Optional[object] = None  # crawl_to goals: velocity_command.CrawlToTarget
    timeout_s: float = 0.0          # crawl_to goals: sim-time bound (checked at cycle boundaries)


@dataclass
class Outcome:
    status: str                     # succeeded | canceled | aborted
    reason: str
    distance_m: float = 0.0
    lateral_drift_m: float = 0.0
    heading_change_rad: float = 0.0
    drift_m: float = 0.0
    cycles_completed: int = 0
    duration_s: float = 0.0
    final_roll_rad: float = 0.0
    support_violations: int = 0     # key-frames that lifted a limb without a confirmed support state
    initial_posture: str = ""       # recovery: posture before the first stage (fall_detector.classify_posture)
    final_posture: str = ""         # posture at the end (every goal)
    final_pelvis_height_m: float = 0.0
    stages: tuple = ()              # recovery: key-frame scripts played
    position_error_m: float = float("nan")   # crawl_to: distance to the target at the end
    yaw_error_rad: float = float("nan")      # crawl_to: target yaw − final heading
    final_pose: Optional[np.ndarray] = None  # pelvis pose (7,) at the end


@dataclass
class TickOutput:
    reference: Optional[Reference] = None
    feedback: Optional[dict] = None
    outcome: Optional[Outcome] = None


def _finite(x) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def _bad_enum(value, table, what) -> Optional[str]:
    if value not in table:
        return f"unknown {what} {value!r} (valid: " + ", ".join(f"{k}={v}" for k, v in table.items()) + ")"
    return None


def validate_crawl(goal, p: ParamValues, iik_available: bool = False):
    """Crawl goal → (MotionGoal, "") or (None, reason).

    Script: ``gaits.crawl_forward`` / ``gaits.crawl_backward`` for GAIT_STATIC, ``gaits.crawl_forward_diagonal`` for
    GAIT_DIAGONAL + DIRECTION_FORWARD. GAIT_DIAGONAL with a Cartesian method runs the gait generator's diagonal-pair
    pattern (``gait_generator.diagonal_pairs.*``), forward or backward, only with the experimental
    ``generator.diagonal_enabled``; with METHOD_KEYFRAME backward (no such key-frame gait) it is rejected. A goal
    object without a ``gait`` field (plain-class callers written before the field existed) means GAIT_STATIC, the
    message default.
    """
    gait_val = getattr(goal, "gait", 0)
    for val, table, what in ((goal.direction, CRAWL_DIRECTIONS, "direction"), (goal.loop_mode, CRAWL_LOOP,
                                                                                  "loop_mode"),
                             (goal.method, CRAWL_METHODS, "method"), (gait_val, CRAWL_GAITS, "gait")):
        r = _bad_enum(val, table, what)
        if r:
            return None, r
    method = CRAWL_METHODS[goal.method]
    gait = CRAWL_GAITS[gait_val]
    if gait == "diagonal" and method == "keyframe" and CRAWL_DIRECTIONS[goal.direction] == "backward":
        return None, ("gait GAIT_DIAGONAL with METHOD_KEYFRAME is forward only (there is no backward diagonal-pair "
                      "key-frame gait): use GAIT_STATIC")
    if gait == "diagonal" and method != "keyframe" and not p["generator.diagonal_enabled"]:
        return None, (f"gait GAIT_DIAGONAL with method {method} (the gait generator's diagonal pairs) is "
                      "experimental and off (generator.diagonal_enabled): through the graph its plan still runs "
                      "ahead of the limbs; use METHOD_KEYFRAME (crawl_forward_fast) or GAIT_STATIC")
    if method != "keyframe" and not iik_available:
        return None, (f"method {CRAWL_METHODS[goal.method]} is not available yet: the Cartesian (IIK) gait needs "
                      "atlas_crawl_kinematics.iik; use METHOD_KEYFRAME")
    if not _finite(goal.speed_scale) or not (p["min_speed_scale"] <= goal.speed_scale <= p["max_speed_scale"]):
        return None, (f"speed_scale {goal.speed_scale} outside [{p['min_speed_scale']}, {p['max_speed_scale']}] "
                      "(or not finite)")
    if not _finite(goal.distance_m) or goal.distance_m < 0:
        return None, f"distance_m must be finite and >= 0 (0 = use cycles), got {goal.distance_m}"
    if goal.distance_m > p["max_distance_m"]:
        return None, f"distance_m {goal.distance_m} exceeds max_distance_m {p['max_distance_m']}"
    if goal.distance_m == 0:
        if goal.cycles <= 0:
            return None, f"cycles must be > 0 when distance_m is 0, got {goal.cycles}"
        if goal.cycles > p["max_cycles"]:
            return None, f"cycles {goal.cycles} exceeds max_cycles {p['max_cycles']}"
    backward = CRAWL_DIRECTIONS[goal.direction] == "backward"
    if gait == "diagonal":
        script = p["gaits.crawl_forward_diagonal"]
    else:
        script = p["gaits.crawl_backward"] if backward else p["gaits.crawl_forward"]
    return MotionGoal(kind=CRAWL, script=script, loop_mode=CRAWL_LOOP[goal.loop_mode],
                      cycles=int(goal.cycles) if goal.distance_m == 0 else p["max_cycles"],
                      time_scale=1.0 / float(goal.speed_scale), distance_m=float(goal.distance_m),
                      max_cycles=p["max_cycles"], method=method, direction=-1 if backward else 1, gait=gait,
                      description=f"crawl {CRAWL_DIRECTIONS[goal.direction]} "
                                  + (f"{goal.distance_m} m" if goal.distance_m else f"{goal.cycles} cycles")
                                  + ("" if method == "keyframe" else f" ({method})")
                                  + (" (diagonal gait)" if gait == "diagonal" else "")), ""


def validate_turn(goal, p: ParamValues, iik_available: bool = False):
    """Turn goal → (MotionGoal, "") or (None, reason). METHOD_KEYFRAME plays ``gaits.turn_left`` / ``turn_right``;
    a Cartesian method runs the gait generator turning on the spot (command ``wz`` only; GAIT_DIAGONAL: the
    ``diagonal_pairs.turn.*`` values). A goal object without ``method`` / ``gait`` (plain-class callers written
    before the fields existed) means METHOD_KEYFRAME, GAIT_STATIC."""
    method_val, gait_val = getattr(goal, "method", 0), getattr(goal, "gait", 0)
    for val, table, what in ((goal.direction, TURN_DIRECTIONS, "direction"), (method_val, CRAWL_METHODS, "method"),
                             (gait_val, CRAWL_GAITS, "gait")):
        r = _bad_enum(val, table, what)
        if r:
            return None, r
    method, gait = CRAWL_METHODS[method_val], CRAWL_GAITS[gait_val]
    if gait == "diagonal" and method == "keyframe":
        return None, "gait GAIT_DIAGONAL turns with a Cartesian method only (there is no diagonal key-frame turn)"
    if method != "keyframe" and not iik_available:
        return None, (f"method {method} is not available: the Cartesian (IIK) turn needs atlas_crawl_kinematics.iik; "
                      "use METHOD_KEYFRAME")
    if method != "keyframe" and not p["generator.enabled"]:
        return None, f"method {method} turns with the gait generator, which is off (generator.enabled)"
    cart = dict(method=method, gait=gait)
    tag = "" if method == "keyframe" else f" ({method}{', diagonal gait' if gait == 'diagonal' else ''})"
    if not _finite(goal.speed_scale) or not (p["min_speed_scale"] <= goal.speed_scale <= p["max_speed_scale"]):
        return None, (f"speed_scale {goal.speed_scale} outside [{p['min_speed_scale']}, {p['max_speed_scale']}] "
                      "(or not finite)")
    d = TURN_DIRECTIONS[goal.direction]
    if d == "by_angle":
        if not _finite(goal.angle_rad) or goal.angle_rad == 0.0 or abs(goal.angle_rad) > p["max_turn_angle_rad"]:
            return None, (f"angle_rad must be finite, non-zero and within ±{p['max_turn_angle_rad']} rad with "
                          f"TURN_BY_ANGLE, got {goal.angle_rad}")
        script = p["gaits.turn_left"] if goal.angle_rad > 0 else p["gaits.turn_right"]
        return MotionGoal(kind=TURN, script=script, loop_mode="full", cycles=p["max_cycles"],
                          time_scale=1.0 / float(goal.speed_scale), angle_rad=float(goal.angle_rad),
                          max_cycles=p["max_cycles"], **cart,
                          description=f"turn by {goal.angle_rad:.3f} rad{tag}"), ""
    if goal.cycles <= 0:
        return None, f"cycles must be > 0, got {goal.cycles}"
    if goal.cycles > p["max_cycles"]:
        return None, f"cycles {goal.cycles} exceeds max_cycles {p['max_cycles']}"
    script = p["gaits.turn_left"] if d == "left" else p["gaits.turn_right"]
    return MotionGoal(kind=TURN, script=script, loop_mode="full", cycles=int(goal.cycles),
                      time_scale=1.0 / float(goal.speed_scale), max_cycles=p["max_cycles"],
                      turn_sense=1 if d == "left" else -1, **cart,
                      description=f"turn {d} {goal.cycles} cycles{tag}"), ""


def ground_alternative(kind: str, goal, why: str, p: ParamValues, iik_available: bool = False):
    """What to run instead of a key-frame Crawl / Turn goal message that :meth:`GaitSequencer.keyframe_ground`
    refused with ``why``, per ``keyframe_ground.policy``: "cartesian" → (the goal validated with METHOD_IIK, "") or
    (None, both reasons) when that is refused; "reject" → (None, ``why``). The goal message itself is not changed."""
    if p["keyframe_ground.policy"] != "cartesian":
        return None, f"{why}; send METHOD_IIK (the gait generator, closed loop on the height map)"
    alt = copy.copy(goal)
    alt.method = next(k for k, v in CRAWL_METHODS.items() if v == "iik")
    mg, reason = (validate_crawl if kind == CRAWL else validate_turn)(alt, p, iik_available)
    if mg is None:
        return None, f"{why}; METHOD_IIK instead is refused too: {reason}"
    return replace(mg, description=f"{mg.description} instead of key-frames: {why}"), ""


def validate_roll(goal, p: ParamValues):
    for val, table, what in ((goal.from_side, ROLL_SIDES, "from_side"), (goal.to, ROLL_TO, "to")):
        r = _bad_enum(val, table, what)
        if r:
            return None, r
    key = f"gaits.roll_{ROLL_SIDES[goal.from_side]}_to_{ROLL_TO[goal.to]}"
    return MotionGoal(kind=ROLL, script=p[key], loop_mode="once", cycles=1, max_cycles=1,
                      description=f"roll over the {ROLL_SIDES[goal.from_side]} side to the {ROLL_TO[goal.to]}",
                      roll_to=ROLL_TO[goal.to]), ""


def validate_recover(goal, p: ParamValues):
    """Recover goal → (MotionGoal, "") or (None, reason). ``max_stages`` 0 = parameter recover.max_stages."""
    n = getattr(goal, "max_stages", 0)
    if not isinstance(n, int) or isinstance(n, bool) or n < 0 or n > 50:
        return None, f"max_stages must be an integer in [0, 50] (0 = recover.max_stages), got {n!r}"
    n = n or p["recover.max_stages"]
    return MotionGoal(kind=RECOVER, script="", loop_mode="once", cycles=1, max_cycles=int(n),
                      description="recover to the crawl stance"), ""


def validate_crawl_to(goal, p: ParamValues, iik_available: bool = False):
    """CrawlTo goal (atlas_crawl_msgs/action/CrawlTo) → (MotionGoal, "") or (None, reason). The target is in the
    frame of the pelvis pose the sequencer reads (world: ground truth; odom: the state estimate)."""
    from .velocity_command import CrawlToTarget
    if not iik_available:
        return None, "CrawlTo runs the Cartesian gait generator, which needs atlas_crawl_kinematics.iik"
    if not p["generator.enabled"]:
        return None, "CrawlTo needs the closed-loop gait generator (parameter generator.enabled is false)"
    for n in ("x_m", "y_m", "yaw_rad", "position_tolerance_m", "yaw_tolerance_rad", "timeout_s"):
        if not _finite(getattr(goal, n)):
            return None, f"{n} must be finite, got {getattr(goal, n)!r}"
    if goal.position_tolerance_m < p["crawl_to.min_position_tolerance_m"]:
        return None, (f"position_tolerance_m {goal.position_tolerance_m} below crawl_to.min_position_tolerance_m "
                      f"{p['crawl_to.min_position_tolerance_m']}")
    if goal.yaw_tolerance_rad < p["crawl_to.min_yaw_tolerance_rad"] or goal.yaw_tolerance_rad > math.pi:
        return None, (f"yaw_tolerance_rad {goal.yaw_tolerance_rad} outside [crawl_to.min_yaw_tolerance_rad "
                      f"{p['crawl_to.min_yaw_tolerance_rad']}, pi]")
    if goal.max_cycles < 0 or goal.max_cycles > p["crawl_to.max_cycles"]:
        return None, f"max_cycles must be in [0, crawl_to.max_cycles = {p['crawl_to.max_cycles']}], got {goal.max_cycles}"
    if goal.timeout_s < 0:
        return None, f"timeout_s must be >= 0 (0 = crawl_to.timeout_s), got {goal.timeout_s}"
    n = int(goal.max_cycles) or int(p["crawl_to.max_cycles"])
    tgt = CrawlToTarget(float(goal.x_m), float(goal.y_m), _wrap(float(goal.yaw_rad)),
                        float(goal.position_tolerance_m), float(goal.yaw_tolerance_rad))
    return MotionGoal(kind=CRAWL_TO, script="", loop_mode="full", cycles=n, max_cycles=n, method="iik",
                      target=tgt, timeout_s=float(goal.timeout_s) or float(p["crawl_to.timeout_s"]),
                      description=f"crawl to ({tgt.x_m:.3f}, {tgt.y_m:.3f}) m, yaw {tgt.yaw_rad:.3f} rad"), ""


def velocity_goal(p: ParamValues, vx_m_per_s: float = 0.0) -> MotionGoal:
    """The run of continuous /cmd_vel crawling: one gait generator planned ``cmd_vel.segment_cycles`` cycles ahead and
    extended by as many while the command stays fresh; its direction from the sign of vx (the generator cannot
    reverse within one gait)."""
    return MotionGoal(kind=VELOCITY, script="", loop_mode="full", cycles=int(p["cmd_vel.segment_cycles"]),
                      max_cycles=int(p["cmd_vel.segment_cycles"]), method="iik",
                      direction=-1 if vx_m_per_s < 0 else 1, description="cmd_vel crawling")


@dataclass
class _Step:
    cycle: int
    index: int
    name: str
    q: np.ndarray
    duration_s: float
    stance: np.ndarray           # (4,) bool: limbs on the ground during the move into and at this key-frame
    selected: Optional[np.ndarray]
    last_in_cycle: bool = False
    targets: Optional[np.ndarray] = None   # Cartesian step: (4, 3) world contact targets
    com_modulation: bool = False
    swing_lift_m: Optional[np.ndarray] = None   # Cartesian step: (4,) swing-arc apex per swinging contact
    com_support: Optional[np.ndarray] = None    # Cartesian step: (4,) the support the CoM is planned in
    heading_rad: Optional[float] = None         # Cartesian step: planned body heading at its end (None: the pattern's)
    drift_correction_max_m: Optional[float] = None   # Cartesian step: world-drift bound asked (None: the tracker's)


def _cartesian_step(cycle: int, index: int, r: dict, last_in_cycle: bool, com: bool) -> _Step:
    """A Cartesian step dict (name, targets, stance, duration_s[, swing_lift_m, com_support, heading_rad,
    drift_correction_max_m]) as a _Step."""
    return _Step(cycle, index, r["name"], None, r["duration_s"], r["stance"], None, last_in_cycle, r["targets"], com,
                 r.get("swing_lift_m"), r.get("com_support"), r.get("heading_rad"), r.get("drift_correction_max_m"))


@dataclass
class _Run:
    goal: MotionGoal
    script: object
    t_start: float
    pose0: np.ndarray
    steps_total: int
    per_cycle: int = 1
    step_idx: int = -1           # index of the step being executed (sent), -1 = none yet
    cycle: int = 0
    kf_index: int = 0
    seq_sent: Optional[int] = None
    t_sent: float = 0.0
    seq_queued: Optional[int] = None           # the next step, sent queued (pipeline_lead_s), not started yet
    queued_idx: int = -1
    t_queued: float = 0.0
    waiting_support_since: Optional[float] = None
    phase: str = "starting"
    cancel: bool = False
    cancel_deadline_steps: Optional[int] = None
    support_violations: int = 0
    cycles_completed: int = 0
    dynamic: bool = False        # script flagged static_stability: false (no support polygon before lifts)
    last_stance: np.ndarray = field(default_factory=lambda: np.ones(4, bool))
    steps: List[_Step] = field(default_factory=list)
    planned_cycles: int = 0                    # key-frame goals are planned one cycle ahead (tick extends)
    heading_last_rad: Optional[float] = None   # unwrapping: heading at the previous measurement
    heading_change_rad: float = 0.0            # accumulated (unwrapped) heading change since the goal started
    gen: Optional[dict] = None                 # Cartesian crawls: closed-loop generator state (re-planned per cycle)
    then: Optional[MotionGoal] = None          # recovery runs (auto_recover): the goal to start once recovered
    stages: List[str] = field(default_factory=list)      # recovery runs: scripts played so far
    postures: List[str] = field(default_factory=list)    # recovery runs: posture estimated before each stage
    settle_since: Optional[float] = None       # recovery runs: start of the settle wait after a stage
    stopping: str = ""                         # velocity runs: why the crawl stops after the step in flight
    deferred: bool = False                     # Cartesian Crawl/Turn: planned once the start posture is reached
    confirm: Optional[tuple] = None            # (Outcome, t): goal met, holding the end stance (success.confirm_*)


def _names_scripts(key: str, value) -> bool:
    """Parameters whose value is a key-frame script expression (loaded to validate a change)."""
    return key.startswith("gaits.") or key.startswith("recover.from_") or \
        (key in ("protect_script", "generator.start_posture") and value != "")


class GaitSequencer:
    """One-goal-at-a-time key-frame sequencer. Not thread-safe: the node serialises calls with a lock."""

    def __init__(self, params: Optional[ParamValues] = None, script_loader: Optional[Callable] = None):
        self.params = params if params is not None else parameter_set().values()
        if script_loader is None:
            script_loader = self._bounded_loader
        self._load = lambda expr: compose_scripts(expr, script_loader)
        self._run: Optional[_Run] = None
        self._t_prev_tick: Optional[float] = None
        self.motion = BodyMotion(self.params["start_settle.window_s"])   # fed by observe(): the settle test
        self.generator_params: Optional[dict] = None   # gait generator overrides (set_generator_params)
        self._next_seq = 1
        #: ControllerReference.sender of our references; statuses of other senders' references are not ours
        self.sender = "gait_sequencer"
        self._hmap = None                      # latest height map (stamp = arrival, host clock): set_height_map
        self._t_map = None                     # host time of the latest set_height_map / tick
        #: "map" while the Cartesian crawl plans on a fresh height map, else why it is blind (issue 13 §2)
        self.terrain = "blind: no height map"
        self._vel_cmd = None     # (CrawlCommand, sim time of receipt): the latest valid /cmd_vel command

    # ------------------------------------------------------------------ velocity commands (/cmd_vel)
    def command_velocity(self, cmd, t: float) -> None:
        """The latest valid velocity command (a :class:`~.gait_generator.CrawlCommand`, already checked by
        :func:`.velocity_command.validate_cmd_vel`) received at sim time ``t``; read at every cycle boundary of a
        velocity run (and every tick, for staleness)."""
        self._vel_cmd = (cmd, float(t))

    def velocity_command(self, t: float):
        """The command in force at ``t``: the latest one if younger than ``cmd_vel.timeout_s``, else None (stale)."""
        if self._vel_cmd is None:
            return None
        cmd, t_rx = self._vel_cmd
        return cmd if t - t_rx <= self.params["cmd_vel.timeout_s"] else None

    def velocity_active(self, t: float) -> bool:
        """True when a fresh non-zero command asks for crawling."""
        c = self.velocity_command(t)
        return c is not None and not c.is_zero

    # ------------------------------------------------------------------ goal control
    @property
    def busy(self) -> bool:
        return self._run is not None

    def _bounded_loader(self, name: str):
        """keyframes.load_script with this sequencer's file guards (regular file, size, read time)."""
        from .keyframes import load_script
        return load_script(name, max_bytes=int(self.params["max_script_bytes"]),
                           timeout_s=float(self.params["script_load_timeout_s"]))

    def check_scripts(self, params: ParamValues) -> Optional[str]:
        """The reason the gait scripts named in ``params`` that differ from the current ones cannot be used, or None.
        Touches no state (the node calls it without its lock); reads are bounded by ``params``' file guards."""
        probe = GaitSequencer(params)
        for k in params.as_dict():
            if _names_scripts(k, params[k]) and params[k] != self.params[k]:
                try:
                    probe._load(params[k])
                except Exception as e:
                    return f"{k}: cannot load key-frame script {params[k]!r}: {e}"
        return None

    def set_params(self, params: ParamValues, scripts_checked: bool = False) -> Optional[str]:
        """Runtime change (takes effect at the next key-frame). Gait script names are checked by loading them
        (unless the caller already did, with :meth:`check_scripts`)."""
        if not scripts_checked:
            reason = self.check_scripts(params)
            if reason:
                return reason
        self.params = params
        return None

    def start(self, goal: MotionGoal, t: float, pelvis_pose, support=None) -> None:
        """Begin ``goal`` at sim time ``t``. Raises RuntimeError if busy, ValueError if the script cannot load.

        Cartesian goals (method iik / com_modulated) plan from the current support state: ``support`` must carry
        ``positions`` (4, 3) world contact points and ``com_xy`` (2,).  Same as :meth:`prepare` (the slow part,
        which touches no state and may run on another thread) followed by :meth:`start_prepared`.
        """
        if self._run is not None:
            raise RuntimeError("busy")
        self.start_prepared(self.prepare(goal, pelvis_pose, support), t)

    def prepare(self, goal: MotionGoal, pelvis_pose, support=None) -> _Run:
        """Plan ``goal`` without changing the sequencer (thread-safe w.r.t. :meth:`tick`): key-frame goals load the
        script and plan the first cycle (the rest one cycle ahead while running, so a 20000-cycle bound costs
        nothing up front); Cartesian goals plan all their cycles (slow: the node runs this off its executor
        under ``planning_timeout_s``)."""
        if goal.kind == RECOVER or (self.params["auto_recover"] and self.needs_recovery(goal, pelvis_pose)):
            return self._prepare_recover(goal, pelvis_pose)
        pose0 = np.asarray(pelvis_pose, float).copy()
        planned, deferred = 0, False
        if goal.method == "keyframe":
            script = self._load(goal.script)
            if goal.reverse:
                script = script.reversed(script.name)
            steps = self._plan(script, goal, 0, 1)
            planned = 1
            per_cycle = len(script.keyframes)
            n_cycles = 1 if goal.loop_mode == "once" else goal.cycles
            rest = len(script.keyframes) - (script.part_loop_start if goal.loop_mode == "part" else 0)
            steps_total = per_cycle + max(0, n_cycles - 1) * rest
        elif not self.params["generator.enabled"]:
            if support is None or getattr(support, "positions", None) is None:
                raise ValueError("a Cartesian crawl needs the current support state (contact positions, CoM)")
            from .cartesian import cartesian_plan     # open loop: all cycles planned up front in world coordinates
            raw = cartesian_plan(support.positions, support.com_xy, heading_from_quat(pose0[3:7]), goal.cycles,
                                 goal.direction, goal.time_scale)
            com = goal.method == "com_modulated"
            steps = [_cartesian_step(r["cycle"], r["index"], r, r["last_in_cycle"], com) for r in raw]
            script = None
            per_cycle = max(1, sum(1 for r in raw if r["cycle"] == 0))
            steps_total = len(steps)
            gen = None
        elif self._starts_in_posture(goal) and self.params["generator.start_posture"]:
            if support is None or getattr(support, "positions", None) is None:
                raise ValueError("a Cartesian crawl needs the current support state (contact positions, CoM)")
            kf = self._load(self.params["generator.start_posture"]).keyframes[-1]
            steps = [_Step(0, 0, "reposition_posture", kf.q.copy(), float(self.params["generator.start_posture_s"]),
                           np.ones(4, bool), kf.selected.copy())]
            script, per_cycle, steps_total, gen, deferred = None, 1, 1, None, True
        else:
            steps, per_cycle, steps_total, gen, goal = self._plan_cartesian(goal, pose0, support)
            script, planned = None, 1
        run = _Run(goal=goal, script=script, t_start=0.0, pose0=pose0, steps_total=steps_total,
                   per_cycle=per_cycle, steps=steps, planned_cycles=planned,
                   dynamic=not getattr(script, "static_stability", True) if script is not None else
                   goal.gait == "diagonal")
        if goal.method != "keyframe":
            run.gen, run.deferred = gen, deferred
        return run

    def _starts_in_posture(self, goal: MotionGoal) -> bool:
        """A Cartesian goal that first moves into ``generator.start_posture``: its kind is in
        ``generator.start_posture_goals``, or it is a Crawl GAIT_DIAGONAL and ``diagonal_crawl`` is."""
        goals = self.params["generator.start_posture_goals"]
        return goal.kind in goals or (goal.kind == CRAWL and goal.gait == "diagonal" and "diagonal_crawl" in goals)

    def _plan_cartesian(self, goal: MotionGoal, pose0, support):
        """(steps, per_cycle, steps_total, generator state, goal) of a Cartesian goal run by the gait generator from
        the pose ``pose0`` and the support state now: cycle 0 = the reposition to the nominal stance + one generated
        cycle."""
        if support is None or getattr(support, "positions", None) is None:
            raise ValueError("a Cartesian crawl needs the current support state (contact positions, CoM)")
        # closed-loop gait generator (issue 12): cycle 0 = reposition to the nominal stance + one generated cycle;
        # every later cycle is generated at the cycle boundary from the last targets and the measured pelvis
        from .cartesian import crawl_generator, generator_cycle, reposition_steps, turn_generator
        h0 = heading_from_quat(pose0[3:7])
        pre, c0 = reposition_steps(support.positions, h0, 0.8 * goal.time_scale, 0.6 * goal.time_scale,
                                   0.08, 0.05)
        for r in pre:
            r.update(cycle=0, index=0, last_in_cycle=False)
        if goal.kind == CRAWL_TO and self.params["crawl_to.reverse"] and goal.direction > 0 and \
                self._law_command(goal, pose0)[0].vx_m_per_s < 0:      # a target behind: start backward
            goal = replace(goal, direction=-1)
        cmd0 = self._initial_command(goal, pose0) if goal.kind in (VELOCITY, CRAWL_TO) else None
        if goal.kind == TURN:        # on the spot: the command is the gait's turn rate alone
            sense = goal.turn_sense or (1.0 if goal.angle_rad > 0 else -1.0)
            gen_obj = turn_generator(c0, support.com_xy, h0, goal.cycles, sense,
                                     self._goal_generator_params(goal))
        elif cmd0 is None:
            gen_obj = crawl_generator(c0, support.com_xy, h0, goal.cycles, goal.direction,
                                      params=self._goal_generator_params(goal))
        else:
            from .gait_generator import CrawlGaitGenerator
            gen_obj = CrawlGaitGenerator(c0, np.asarray(support.com_xy, float)[:2], h0, cmd0, goal.cycles,
                                         self.generator_params)
        self._use_map(gen_obj, support)
        raw = pre + generator_cycle(gen_obj, 0, goal.time_scale)
        com = goal.method == "com_modulated"
        steps = [_cartesian_step(0, i, r, i == len(raw) - 1, com) for i, r in enumerate(raw)]
        per_cycle = len(raw) - len(pre)
        steps_total = len(pre) + per_cycle * goal.cycles
        gen = dict(gen=gen_obj, n_pre=len(pre), com=com, cmd=cmd0, law_phase="", dist0=None)
        if goal.kind == CRAWL_TO:
            from .velocity_command import pose_errors
            gen["dist0"] = pose_errors(goal.target, pose0[:2], h0)["distance_m"]
            gen["law_phase"] = self._law_command(goal, pose0)[1]
        return steps, per_cycle, steps_total, gen, goal

    def _plan_deferred(self, run: _Run, support, pose) -> str:
        """The Cartesian plan of a goal that first moved into ``generator.start_posture``, from the support state and
        pose now (where that move left the contacts). Returns "" or the reason it cannot be planned."""
        try:
            steps, per_cycle, steps_total, gen, goal = self._plan_cartesian(run.goal, pose, support)
        except Exception as e:     # noqa: BLE001 (no support state, a command the generator refuses): abort
            return f"cannot plan the gait after the start posture: {e}"
        off = len(run.steps)
        gen["n_pre"] += off
        run.steps.extend(replace(st, index=off + i) for i, st in enumerate(steps))
        run.per_cycle, run.steps_total, run.gen, run.goal = per_cycle, off + steps_total, gen, goal
        run.planned_cycles, run.deferred = 1, False
        return ""

    def start_prepared(self, run: _Run, t: float) -> None:
        """Begin a planned goal at sim time ``t`` (fast). Raises RuntimeError if busy."""
        if self._run is not None:
            raise RuntimeError("busy")
        run.t_start = float(t)
        self._run = run

    def _plan(self, script, goal: MotionGoal, first_cycle: int, count: Optional[int] = None) -> List[_Step]:
        """Steps of the cycles [first_cycle, goal.cycles), at most ``count`` of them (part loop restarts at
        part_loop_start after cycle 0)."""
        out = []
        n_cycles = 1 if goal.loop_mode == "once" else goal.cycles
        if count is not None:
            n_cycles = min(n_cycles, first_cycle + count)
        for c in range(first_cycle, n_cycles):
            start = script.part_loop_start if (goal.loop_mode == "part" and c > 0) else 0
            for i in range(start, len(script.keyframes)):
                kf = script.keyframes[i]
                out.append(_Step(c, i, kf.name, kf.q.copy(), kf.duration_s * goal.time_scale, kf.stance_mask(),
                                 kf.selected.copy(), last_in_cycle=i == len(script.keyframes) - 1))
        return out

    def request_cancel(self) -> bool:
        """Ask to stop at the next statically stable stance. Returns False if idle."""
        if self._run is None:
            return False
        self._run.cancel = True
        return True

    def abort(self, reason: str, t: float, pose) -> Optional[Outcome]:
        """Immediate end (node shutdown/deactivation/stall). The controller keeps the last reached pose."""
        if self._run is None:
            return None
        out = self._finish("aborted", reason, t, pose)
        return out

    # ------------------------------------------------------------------ stepping
    def _new_seq(self) -> int:
        s = self._next_seq
        self._next_seq = (self._next_seq + 1) % (2 ** 32)
        if self._next_seq == 0:
            self._next_seq = 1
        return s

    def set_height_map(self, height_map, t: float) -> None:
        """The latest :class:`~atlas_crawl_controller.height_map.HeightMap` (stamped with its arrival time ``t`` in
        the host's clock, so a simulator's and a controller's clocks need not agree); the running Cartesian crawl
        plans its next cycle on it (:meth:`CrawlGaitGenerator.use_map`)."""
        self._hmap = height_map
        self._t_map = t

    def _ground_fit(self, pelvis_pose, t: float):
        """:meth:`HeightMap.ground_fit` within ``keyframe_ground.radius_m`` of the pelvis on the latest height map,
        or None without a map fresher than ``keyframe_ground.max_map_age_s`` at host time ``t`` (or too few cells)."""
        p = self.params
        m, pose = self._hmap, np.asarray(pelvis_pose if pelvis_pose is not None else [math.nan] * 7, float)
        if m is None or self._t_map is None or not (0.0 <= t - self._t_map <= p["keyframe_ground.max_map_age_s"]):
            return None
        return m.ground_fit(pose[:2], p["keyframe_ground.radius_m"])

    def _ground_reasons(self, fit) -> list:
        p = self.params
        why = []
        if math.degrees(fit.tilt_rad) > p["keyframe_ground.max_tilt_deg"]:
            why.append(f"the ground under the robot is tilted {math.degrees(fit.tilt_rad):.1f} deg "
                       f"(keyframe_ground.max_tilt_deg {p['keyframe_ground.max_tilt_deg']:g})")
        if fit.roughness_m > p["keyframe_ground.max_roughness_m"]:
            why.append(f"the ground under the robot is uneven, {100 * fit.roughness_m:.1f} cm RMS about its plane "
                       f"(keyframe_ground.max_roughness_m {p['keyframe_ground.max_roughness_m']:g} m)")
        return why

    def keyframe_ground(self, goal: MotionGoal, pelvis_pose, t: float) -> str:
        """Why a key-frame Crawl / Turn should not play on the ground under the robot ("" when it may, or when
        nothing says otherwise): the plane fitted to the height map within ``keyframe_ground.radius_m`` of the
        pelvis is steeper than ``max_tilt_deg`` or the ground is rougher about it than ``max_roughness_m`` (RMS).
        The recorded gaits are open loop, made on the flat floor. Unchecked ("") without a height map fresher than
        ``max_map_age_s`` at host time ``t``, with ``policy`` off, or for other goals."""
        if goal.method != "keyframe" or goal.kind not in (CRAWL, TURN) or \
                self.params["keyframe_ground.policy"] == "off":
            return ""
        fit = self._ground_fit(pelvis_pose, t)
        why = self._ground_reasons(fit) if fit is not None else []
        return "; ".join(why) + ": the key-frame gaits are open loop, recorded on flat ground" if why else ""

    def ground_status(self, pelvis_pose, t: float) -> str:
        """The ground under the robot as the key-frame check sees it, for diagnostics: the fit's tilt and roughness and
        what a key-frame Crawl / Turn would do there."""
        fit = self._ground_fit(pelvis_pose, t)
        if fit is None:
            return "not checked: no fresh height map under the robot"
        head = f"tilt {math.degrees(fit.tilt_rad):.1f} deg, {100 * fit.roughness_m:.1f} cm RMS"
        if not self._ground_reasons(fit):
            return f"{head}: key-frame gaits allowed"
        return f"{head}: key-frame goals " + {"cartesian": "run as METHOD_IIK", "reject": "rejected",
                                               "off": "allowed (keyframe_ground.policy off)"}[
            self.params["keyframe_ground.policy"]]

    def terrain_status(self, t: float) -> str:
        """What the next Cartesian plan would do at host time ``t``: "map" (a fresh height map, terrain.enabled), or
        "blind: <why>" (what :meth:`CrawlGaitGenerator.use_map` would say)."""
        from .gait_generator.generator import blind_reason
        return blind_reason(self._hmap, t, self._gen_params()) or "map"

    def _use_map(self, gen, support=None) -> None:
        t = self._t_map if self._t_prev_tick is None else max(self._t_prev_tick, self._t_map or -math.inf)
        pos = getattr(support, "positions", None) if support is not None else None
        why = gen.use_map(self._hmap, t if t is not None else math.nan, pos)
        self.terrain = why or "map"

    def tick(self, t: float, status=None, support=None, pelvis_pose=None) -> TickOutput:
        """Advance the state machine.

        ``status``: latest controller status (attributes sequence_id, accepted, reached, reason) or None.
        ``support``: latest support state (attributes in_contact (4,) bool, stability_margin_m, statically_stable,
        age_s) or None when unknown. ``pelvis_pose``: (7,) [x y z qx qy qz qw].
        """
        run = self._run
        out = self._tick(t, status, support, pelvis_pose)
        self._t_prev_tick = t
        if run is not None and self._run is None and run.seq_queued is not None and out.reference is None:
            # the goal ended with a step queued in the controller: a HOLD drops it (the running motion ends)
            out.reference = Reference(mode=Mode.HOLD, sequence_id=0, sender=self.sender)
        return out

    def _reference(self, step: _Step, seq: int, queue: bool = False) -> Reference:
        if step.targets is not None:
            extra = {k: np.asarray(v).copy() for k, v in (("swing_lift_m", step.swing_lift_m),
                                                          ("com_support", step.com_support)) if v is not None}
            if step.heading_rad is not None:
                extra["heading_rad"] = float(step.heading_rad)
            if step.drift_correction_max_m is not None:
                extra["drift_correction_max_m"] = float(step.drift_correction_max_m)
            return Reference(mode=Mode.CARTESIAN, sequence_id=seq, duration_s=step.duration_s,
                             contact_targets=step.targets.copy(), stance=step.stance.copy(),
                             com_modulation=step.com_modulation, sender=self.sender, queue=queue, **extra)
        names = [JOINT_NAMES[i] for i in np.flatnonzero(step.selected)]
        return Reference(mode=Mode.KEYFRAME, sequence_id=seq, joint_names=names,
                         joint_positions_rad=step.q[step.selected], duration_s=step.duration_s, sender=self.sender,
                         stance=step.stance.copy(), queue=queue)   # stance: the gait phase's expected contacts

    @staticmethod
    def _counted_keyframe_cycles_left(run: _Run, step: _Step) -> bool:
        """A key-frame Crawl/Turn that ends after a number of cycles (no distance or angle to measure) and has
        cycles left after ``step``'s: the next cycle needs nothing measured at the boundary."""
        g = run.goal
        return (run.script is not None and g.kind in (CRAWL, TURN) and g.distance_m == 0 and g.angle_rad == 0
                and g.loop_mode != "once" and step.cycle + 1 < g.cycles)

    def _queue_next(self, run: _Run, step: _Step, t: float, support, pose) -> Optional[Reference]:
        """The next step, sent queued ``pipeline_lead_s`` before ``step`` ends, when nothing needs the step's end
        first (see the parameter); None otherwise. Across a cycle boundary only for a key-frame goal counted in
        cycles (the next cycle is planned here), and not onto ground :meth:`keyframe_ground` flags (the goal stops
        at that boundary)."""
        p = self.params
        nxt = run.step_idx + 1
        if (p["pipeline_lead_s"] <= 0 or run.seq_queued is not None or run.cancel or run.stopping
                or run.goal.kind == RECOVER or t - run.t_sent < step.duration_s - p["pipeline_lead_s"]
                or (step.last_in_cycle and not self._counted_keyframe_cycles_left(run, step))
                or (step.last_in_cycle and self.keyframe_ground(run.goal, pose, t))):   # it stops at the boundary
            return None
        if nxt >= len(run.steps) and step.last_in_cycle:
            run.steps.extend(self._plan(run.script, run.goal, run.planned_cycles, 1))
            run.planned_cycles += 1
        if nxt >= len(run.steps):
            return None
        following = run.steps[nxt]
        if (step.stance & ~following.stance).any() and p["wait_for_support"]:
            ok, _why = self._support_ok_dynamic(support) if run.dynamic else \
                self._support_ok(following.stance, support)
            if not ok:
                return None
        run.seq_queued, run.queued_idx, run.t_queued = self._new_seq(), nxt, t
        return self._reference(following, run.seq_queued, queue=True)

    def _tick(self, t: float, status, support, pelvis_pose) -> TickOutput:
        run = self._run
        if run is None:
            return TickOutput()
        if pelvis_pose is not None and not np.all(np.isfinite(np.asarray(pelvis_pose, float))):
            pelvis_pose = None     # non-finite: not known this tick (the node's pose_timeout_s bounds how long)
        pose = np.asarray(pelvis_pose if pelvis_pose is not None else run.pose0, float)
        if pelvis_pose is not None:
            self._track_heading(run, pose)   # every tick: keeps the unwrapping increments small
        fell = self._fall_tick(run, t, pelvis_pose, support, pose)
        if fell is not None:
            return fell
        if run.confirm is not None:
            return self._confirm_tick(run, t, pelvis_pose)
        p = self.params
        out = TickOutput()
        if run.goal.kind == CRAWL_TO and run.cancel and not run.stopping:
            self._begin_stop(run, "canceled")      # after the step in flight: a four-point stance, then CANCELED
        if run.goal.kind == VELOCITY and not run.stopping and not self.velocity_active(t):
            self._begin_stop(run, "stale /cmd_vel (older than cmd_vel.timeout_s)" if self.velocity_command(t) is None
                             else "zero /cmd_vel")
        # 1) the step in flight
        if run.seq_sent is not None:
            st = status
            if st is not None and getattr(st, "sender", self.sender) != self.sender:
                st = None   # a status about someone else's reference (e.g. its rejection) says nothing about ours
            for seq, idx in ((run.seq_sent, run.step_idx), (run.seq_queued, run.queued_idx)):
                if seq is not None and st is not None and int(st.sequence_id) == seq and not st.accepted:
                    out.outcome = self._finish("aborted", f"controller rejected key-frame "
                                                          f"'{run.steps[idx].name}': {st.reason}", t, pose)
                    return out
            started_queued = run.seq_queued is not None and st is not None and int(st.sequence_id) == run.seq_queued
            reached = started_queued or (st is not None and int(st.sequence_id) == run.seq_sent and bool(st.reached))
            step = run.steps[run.step_idx]
            if not reached:
                if t - run.t_sent > step.duration_s + p["reach_timeout_s"]:
                    out.outcome = self._finish(
                        "aborted", f"controller did not reach key-frame '{step.name}' within "
                                   f"{step.duration_s + p['reach_timeout_s']:.2f} s (sim time)", t, pose)
                    return out
                out.reference = self._queue_next(run, step, t, support, pose)
                out.feedback = self._feedback(run, support, pose, "moving:" + step.name)
                return out
            # reached (or the queued step started: the controller only starts it once this one is reached)
            run.seq_sent = None
            run.last_stance = step.stance.copy()
            if run.seq_queued is not None:     # a boundary only of a goal counted in cycles, with cycles left
                if step.last_in_cycle:
                    run.cycles_completed = step.cycle + 1
                # it started after the previous tick (the earliest time, so the next one is queued in time)
                run.t_sent = max(run.t_queued, self._t_prev_tick if self._t_prev_tick is not None else t)
                run.step_idx, run.seq_sent, run.seq_queued = run.queued_idx, run.seq_queued, None
                step = run.steps[run.step_idx]
                run.cycle, run.kf_index = step.cycle, step.index
                run.waiting_support_since = None
                if run.gen is not None and run.step_idx == run.gen["n_pre"]:
                    self._track_generator(run, t, pose, moving=True)    # the gait starts moving
                out.reference = self._queue_next(run, step, t, support, pose)
                out.feedback = self._feedback(run, support, pose, "moving:" + step.name)
                return out
            if step.last_in_cycle:
                run.cycles_completed = step.cycle + 1
                done, why = self._goal_met(run, pose)
                if done:
                    out.outcome = self._finish("succeeded", why, t, pose)
                    return out
                ground = self.keyframe_ground(run.goal, pose, t) if run.script is not None else ""
                if ground:    # ground the key-frames are not for, e.g. a step ahead: stop in the crawl stance
                    again = ("sent again, it runs as METHOD_IIK" if p["keyframe_ground.policy"] == "cartesian"
                             else "send METHOD_IIK")
                    out.outcome = self._finish("aborted", f"stopped after {run.cycles_completed} cycle"
                                                          f"{'' if run.cycles_completed == 1 else 's'} in the crawl "
                                                          f"stance: {ground} ({again})", t, pose)
                    return out
                if run.goal.kind == CRAWL_TO and t - run.t_start > run.goal.timeout_s:
                    out.outcome = self._finish("aborted", f"timeout: {t - run.t_start:.1f} s > {run.goal.timeout_s} s "
                                                          f"(sim time) before the goal: {why}", t, pose)
                    return out
            if run.cancel and step.stance.all():
                measured = self._measured_stable(support)
                if measured is not False:
                    how = "" if measured is None else " (support state: statically stable)"
                    out.outcome = self._finish("canceled", f"canceled; holding the statically stable stance "
                                                           f"'{step.name}'{how}", t, pose)
                    return out
                # planned four-limb stance, but the support state says it is not stable: go on to the next one
        elif run.cancel and run.step_idx < 0:
            out.outcome = self._finish("canceled", "canceled before the first key-frame; holding", t, pose)
            return out
        # 2) next step
        nxt = run.step_idx + 1
        if nxt >= len(run.steps) and run.script is not None:   # key-frames: plan the next cycle
            more = self._plan(run.script, run.goal, run.planned_cycles, 1)
            run.planned_cycles += 1
            run.steps.extend(more)
        if nxt >= len(run.steps) and run.deferred and not run.cancel:
            why = self._plan_deferred(run, support, pose)
            if why:
                out.outcome = self._finish("aborted", why, t, pose)
                return out
        if run.gen is not None and pose is not None:
            self._track_heading(run, pose)
            self._track_generator(run, t, pose, moving=nxt >= run.gen["n_pre"])
        if run.goal.kind == CRAWL_TO and run.step_idx < 0 and self._crawl_to_done(run, pose):
            out.outcome = self._finish("succeeded", "already within tolerance", t, pose)
            return out
        if (nxt >= len(run.steps) and run.gen is not None and run.planned_cycles < run.goal.cycles
                and not run.cancel and not run.stopping):
            self._plan_generator_cycle(run, support, pose)
        if nxt >= len(run.steps) and run.goal.kind == RECOVER and not run.cancel:
            rec = self._recover_tick(run, t, status, support, pose)
            if rec is not None:
                return rec
            nxt = run.step_idx + 1
        if nxt >= len(run.steps):
            if run.cancel:
                out.outcome = self._finish("canceled", "canceled at the end of the plan; holding", t, pose)
            elif run.goal.kind == VELOCITY:
                out.outcome = self._finish("succeeded", run.stopping or f"segment of {run.goal.cycles} cycles done",
                                           t, pose)
            else:
                done, why = self._goal_met(run, pose)
                out.outcome = self._finish("succeeded" if done or run.goal.distance_m == 0 and
                                           run.goal.angle_rad == 0 and run.goal.kind != CRAWL_TO else "aborted",
                                           why if done else f"max_cycles reached before the goal: {why}", t, pose)
            return out
        if run.cancel:
            if run.cancel_deadline_steps is None:
                run.cancel_deadline_steps = nxt + run.per_cycle
            if nxt >= run.cancel_deadline_steps:
                out.outcome = self._finish("canceled", "canceled; no all-four stance key-frame within one cycle, "
                                                       "holding the current pose", t, pose)
                return out
        step = run.steps[nxt]
        lifts = run.last_stance & ~step.stance
        if lifts.any() and p["wait_for_support"]:
            ok, why = self._support_ok_dynamic(support) if run.dynamic else self._support_ok(step.stance, support)
            if not ok:
                if run.waiting_support_since is None:
                    run.waiting_support_since = t
                if t - run.waiting_support_since < p["support_wait_s"]:
                    out.feedback = self._feedback(run, support, pose, "waiting_support:" + step.name)
                    return out
                if p["support_timeout_policy"] == "abort":
                    out.outcome = self._finish("aborted", f"support not ready before lifting "
                                                          f"{[LIMB_NAMES[i] for i in np.flatnonzero(lifts)]}: {why}",
                                               t, pose)
                    return out
                run.support_violations += 1
        run.waiting_support_since = None
        run.step_idx = nxt
        run.cycle, run.kf_index = step.cycle, step.index
        run.seq_sent = self._new_seq()
        run.t_sent = t
        out.reference = self._reference(step, run.seq_sent)
        out.feedback = self._feedback(run, support, pose, "moving:" + step.name)
        return out

    def _measured_stable(self, support):
        """True/False from a fresh support state, None when there is none (then the plan is trusted)."""
        if support is None or getattr(support, "age_s", 0.0) > self.params["support_max_age_s"]:
            return None
        return bool(support.statically_stable)

    def _support_ok(self, stance, support):
        if support is None:
            return False, "no support state received"
        if getattr(support, "age_s", 0.0) > self.params["support_max_age_s"]:
            return False, f"support state is {support.age_s:.2f} s old"
        ic = np.asarray(support.in_contact, bool)
        missing = stance & ~ic
        if missing.any():
            return False, f"limbs {[LIMB_NAMES[i] for i in np.flatnonzero(missing)]} not in contact"
        m = float(support.stability_margin_m)
        if not math.isfinite(m) or m < self.params["min_margin_m"]:
            return False, f"stability margin {m:.3f} m < {self.params['min_margin_m']} m"
        return True, ""

    def _support_ok_dynamic(self, support):
        """Lift check of a dynamic gait: no support polygon is expected (two-contact swings); only require a fresh
        support state with at least one limb on the ground (contacts not all lost)."""
        if support is None:
            return False, "no support state received"
        if getattr(support, "age_s", 0.0) > self.params["support_max_age_s"]:
            return False, f"support state is {support.age_s:.2f} s old"
        if not np.asarray(support.in_contact, bool).any():
            return False, "all contacts lost (dynamic gait)"
        return True, ""

    # ------------------------------------------------------------------ velocity / CrawlTo runs (issue 12 §2)
    def _gen_params(self):
        from .gait_generator import parameter_set as gen_parameter_set
        vals = getattr(self, "_gen_vals", None)
        if vals is None:
            vals = self._gen_vals = gen_parameter_set().values(self.generator_params)
        return vals

    def set_generator_params(self, params: Optional[dict]) -> None:
        """Overrides of config/gait_generator_parameters.yaml for the goals planned from now on (the node passes its
        ``gait_generator.*`` parameters; values already validated one by one: the generator checks the command
        against them when a goal is planned)."""
        self.generator_params = dict(params) if params else None
        self._gen_vals = None

    def _goal_generator_params(self, goal: MotionGoal) -> Optional[dict]:
        """The generator overrides for ``goal``: GAIT_DIAGONAL adds the diagonal-pair pattern and its values
        (``diagonal_pairs.*``, backward ``diagonal_pairs.backward.*``, a turn ``diagonal_pairs.turn.*``)."""
        if goal.gait != "diagonal":
            return self.generator_params
        from .gait_generator import diagonal_params
        return {**(self.generator_params or {}),
                **diagonal_params(self._gen_params(), goal.direction < 0 and goal.kind != TURN, goal.kind == TURN)}

    def _cycle_s(self, goal: MotionGoal) -> float:
        from .gait_generator import parameter_set as gen_parameter_set
        from .velocity_command import cycle_time_s
        vals = self._gen_params() if goal.gait != "diagonal" else \
            gen_parameter_set().values(self._goal_generator_params(goal))
        return cycle_time_s(vals, goal.time_scale)

    def _limited(self, prev, cmd, goal: MotionGoal):
        """``cmd`` rate-limited from ``prev`` over one cycle, with |(vx, vy)| kept within cmd_vel.max_vx_m_per_s
        (the generator's stride bound) and the forward-only sign of a CrawlTo."""
        from .gait_generator import CrawlCommand
        from .velocity_command import ZERO, rate_limit
        p = self.params
        out = rate_limit(prev or ZERO, cmd, self._cycle_s(goal), p["cmd_vel.max_accel_m_per_s2"],
                         p["cmd_vel.max_alpha_rad_per_s2"])
        v = math.hypot(out.vx_m_per_s, out.vy_m_per_s)
        vmax = max(p["cmd_vel.max_vx_m_per_s"], p["cmd_vel.max_vy_m_per_s"])
        if v > vmax > 0:
            out = CrawlCommand(out.vx_m_per_s * vmax / v, out.vy_m_per_s * vmax / v, out.wz_rad_per_s)
        if goal.direction > 0 and out.vx_m_per_s < 0 or goal.direction < 0 and out.vx_m_per_s > 0:
            out = CrawlCommand(0.0, out.vy_m_per_s, out.wz_rad_per_s)
        return out

    def _law_command(self, goal: MotionGoal, pose):
        from .velocity_command import crawl_to_command
        pose = np.asarray(pose, float)
        return crawl_to_command(goal.target, pose[:2], heading_from_quat(pose[3:7]), self.params,
                                self._cycle_s(goal))

    @staticmethod
    def _settled_pose(gen, cycle: int, pose):
        """The measured pelvis pose moved by what the gait still owes: at a cycle boundary the contacts trail the
        generator's pattern reference (each limb landed one step ahead of the reference at its own step, so their
        centroid lags by ~1.5 steps of travel and the pattern heading likewise); a cycle at zero command closes
        that gap. The CrawlTo law acts on this predicted pose (else it overshoots by ~1.5 steps, ~8 cm at full
        speed)."""
        from .cartesian import pattern_heading_rad
        pose = np.asarray(pose, float).copy()
        k = gen.steps_per_cycle * int(cycle)
        if not (0 <= k < len(gen.ref)) or gen.ref[k] is None or gen.contacts[k] is None:
            return pose
        r, th = gen.ref[k]
        c = np.asarray(gen.contacts[k], float)
        lag = np.asarray(r, float) - c[:, :2].mean(axis=0)
        dth = _wrap(float(th) - pattern_heading_rad(c))
        if not (np.all(np.isfinite(lag)) and math.isfinite(dth)):
            return pose
        pose[:2] += lag
        from atlas_crawl_kinematics.rotations import R_to_quat_xyzw, quat_xyzw_to_R
        c_, s_ = math.cos(dth), math.sin(dth)
        Rz = np.array([[c_, -s_, 0.0], [s_, c_, 0.0], [0.0, 0.0, 1.0]])
        pose[3:7] = R_to_quat_xyzw(Rz @ quat_xyzw_to_R(pose[3:7]))
        return pose

    def _initial_command(self, goal: MotionGoal, pose0):
        """First cycle's command: the latest /cmd_vel (velocity runs) or the law (CrawlTo), rate-limited from 0."""
        if goal.kind == VELOCITY:
            c = self._vel_cmd[0] if self._vel_cmd is not None else None
            if c is None:
                from .velocity_command import ZERO
                c = ZERO
        else:
            c, _ = self._law_command(goal, pose0)
        return self._limited(None, c, goal)

    def _hold_raw(self, targets, heading_rad=None) -> dict:
        """The four-point stance a velocity run ends with: the last touchdown targets, every limb in stance, at the
        last planned heading."""
        return dict(name="stop_four_point_stance", targets=np.asarray(targets, float).copy(),
                    stance=np.ones(4, bool), duration_s=float(self.params["cmd_vel.stop_settle_s"]),
                    heading_rad=heading_rad)

    @staticmethod
    def _lifted_after(step: _Step) -> bool:
        """True when a limb is in the air at the end of ``step`` (a swing apex); shifts and touchdowns end with
        all four limbs down."""
        return step.name.endswith("_apex")

    def _begin_stop(self, run: _Run, reason: str) -> None:
        """Velocity run: finish the step in flight (and its touchdown if it is a swing apex), then a four-point
        stance, then end."""
        run.stopping = reason
        i = run.step_idx
        if 0 <= i < len(run.steps) and self._lifted_after(run.steps[i]):
            i += 1
        i = min(i, len(run.steps) - 1)
        last = run.steps[i] if i >= 0 else None
        run.steps = run.steps[:i + 1]
        if last is not None and last.targets is not None and last.name != "stop_four_point_stance":
            h = self._hold_raw(last.targets, last.heading_rad)
            run.steps.append(_cartesian_step(last.cycle, last.index + 1, h, False, last.com_modulation))
        run.steps_total = len(run.steps)

    def _plan_generator_cycle(self, run: _Run, support, pose) -> None:
        """Next cycle of a Cartesian crawl from the measured state (issue 12): the goal's gait generator continues
        from the contacts it placed, re-synced to the measured contacts, with its own placement feedback
        (:meth:`CrawlGaitGenerator.apply_feedback`, fed every tick by :meth:`CrawlGaitGenerator.track`): the law the
        sampling runner (``gen_crawl``) runs, applied here once per cycle. CrawlTo closes its loop with its own law
        instead. ~10 ms."""
        from .cartesian import generator_cycle
        g = run.gen
        lc = run.planned_cycles - g.get("cycle0", 0)      # the cycle in the running generator (see _reverse)
        pos = getattr(support, "positions", None) if support is not None else None
        pre = "generator.diagonal_" if run.goal.gait == "diagonal" else "generator."
        max_resync, max_limb = self.params[pre + "max_resync_m"], self.params[pre + "max_limb_error_m"]
        deadband = 0.0
        if run.goal.gait == "diagonal" and run.goal.kind == TURN:
            max_resync = self.params["generator.diagonal_turn_max_resync_m"]
            deadband = self.params["generator.diagonal_turn_resync_deadband_m"]
        if pos is not None and lc > 0 and max_resync > 0:
            g["resync_m"] = g.get("resync_m", 0.0) + g["gen"].resync(g["gen"].steps_per_cycle * lc, pos, max_resync,
                                                                       max_limb, deadband)
        # the steps sent so far stay as sent
        g["gen"].observed = max(g["gen"].observed, g["gen"].steps_per_cycle * lc - 1)
        self._use_map(g["gen"], support)
        kind = run.goal.kind
        if kind in (VELOCITY, CRAWL_TO):
            from .gait_generator import CommandError
            if kind == VELOCITY:
                want = self._vel_cmd[0] if self._vel_cmd is not None else None
                if want is None or (want.vx_m_per_s < 0 and run.goal.direction > 0) or \
                        (want.vx_m_per_s > 0 and run.goal.direction < 0):
                    self._begin_stop(run, "direction change: a new gait starts from a four-point stance")
                    return
                if run.planned_cycles + 1 >= run.goal.cycles:     # fresh: the same gait goes on
                    n = int(self.params["cmd_vel.segment_cycles"])
                    g["gen"].extend(n)
                    run.goal = replace(run.goal, cycles=run.goal.cycles + n, max_cycles=run.goal.max_cycles + n)
                    run.steps_total += run.per_cycle * n
            else:
                want, g["law_phase"] = self._law_command(run.goal, self._settled_pose(g["gen"], lc, pose))
                if want.vx_m_per_s * run.goal.direction < 0 and self.params["crawl_to.reverse"]:
                    lc = self._reverse(run, lc, support, want)
            cmd = self._limited(g["cmd"], want, run.goal)
            gen = g["gen"]
            gen.observed = max(gen.observed, gen.steps_per_cycle * lc - 1)
            try:
                gen.set_command(cmd)
            except CommandError as e:
                if kind == VELOCITY:
                    self._begin_stop(run, f"command refused by the gait generator: {e}")
                    return
                raise
            g["cmd"] = cmd
            raw = generator_cycle(gen, lc, run.goal.time_scale, feedback=kind == VELOCITY)
            if kind == VELOCITY and run.planned_cycles + 1 >= run.goal.cycles:
                raw.append(self._hold_raw(raw[-1]["targets"], raw[-1].get("heading_rad")))
                raw[-2]["last_in_cycle"], raw[-1]["last_in_cycle"] = False, True
            c = run.planned_cycles
            run.steps.extend(_cartesian_step(c, i, r, r["last_in_cycle"], g["com"]) for i, r in enumerate(raw))
            run.planned_cycles += 1
            return
        raw = generator_cycle(g["gen"], lc, run.goal.time_scale, feedback=True)
        c = run.planned_cycles
        run.steps.extend(_cartesian_step(c, i, r, r["last_in_cycle"], g["com"]) for i, r in enumerate(raw))
        run.planned_cycles += 1

    def _reverse(self, run: _Run, lc: int, support, want) -> int:
        """CrawlTo: the law asks to crawl the other way (a target behind, e.g. after an overshoot). One gait cannot
        reverse (the contact order reverses), so a new generator starts, in the other direction, from the four-point
        stance the running one ends this cycle on, with its pattern heading. Returns the cycle index in the running
        generator: 0 of the new one, or ``lc`` unchanged when the rate-limited command has no speed in the new
        direction yet."""
        from .gait_generator import CrawlGaitGenerator
        g = run.gen
        goal = replace(run.goal, direction=-run.goal.direction)
        cmd = self._limited(None, want, goal)
        if cmd.vx_m_per_s * goal.direction <= 0:
            return lc
        old = g["gen"]
        k = old.steps_per_cycle * lc
        if 0 <= k < len(old.contacts) and old.contacts[k] is not None and old.ref[k] is not None:
            c, heading = np.asarray(old.contacts[k], float), float(old.ref[k][1])
        else:     # (not expected at a cycle boundary) the last targets sent
            from .cartesian import pattern_heading_rad
            c = np.asarray(run.steps[-1].targets, float)
            heading = pattern_heading_rad(c)
        com = getattr(support, "com_xy", None) if support is not None else None
        com = np.asarray(com, float).reshape(-1)[:2] if com is not None else c[:, :2].mean(axis=0)
        if not np.all(np.isfinite(com)):
            com = c[:, :2].mean(axis=0)
        g["gen"] = CrawlGaitGenerator(c, com, heading, cmd, max(1, run.goal.cycles - run.planned_cycles),
                                      self.generator_params)
        self._use_map(g["gen"], support)
        run.goal = goal
        g["cycle0"] = run.planned_cycles
        g["cmd"] = None
        g["reversals"] = g.get("reversals", 0) + 1
        return 0

    @staticmethod
    def _track_generator(run: _Run, t: float, pose, moving: bool) -> None:
        """The generator's placement feedback records the measured pelvis (:meth:`CrawlGaitGenerator.track`; its
        desired pose advances from the tick the gait starts moving, after the reposition). CrawlTo has its own law."""
        if run.goal.kind != CRAWL_TO and np.all(np.isfinite(pose)):
            run.gen["gen"].track(t, pose[:2], quat_xyzw_to_R(pose[3:7]), moving=moving)

    @staticmethod
    def _track_heading(run: _Run, pose) -> None:
        """Unwrapped heading change: add the wrapped increment since the previous call (made every tick, far below
        half a turn apart), so a 12-cycle turn reports its full ~470° instead of a value folded into ±180°."""
        h = heading_from_quat(pose[3:7])
        last = heading_from_quat(run.pose0[3:7]) if run.heading_last_rad is None else run.heading_last_rad
        run.heading_change_rad += _wrap(h - last)
        run.heading_last_rad = h

    def _measure(self, run: _Run, pose) -> dict:
        """Displacement along / across the start heading and the (unwrapped) heading change since the start."""
        self._track_heading(run, pose)
        p0 = run.pose0
        h0 = heading_from_quat(p0[3:7])
        d = pose[:2] - p0[:2]
        fwd = np.array([math.cos(h0), math.sin(h0)])
        left = np.array([-fwd[1], fwd[0]])
        return {"distance_m": float(d @ fwd), "lateral_drift_m": float(d @ left),
                "heading_change_rad": float(run.heading_change_rad), "drift_m": float(np.linalg.norm(d)),
                "final_roll_rad": roll_from_quat(pose[3:7])}

    def _crawl_to_errors(self, run: _Run, pose) -> dict:
        from .velocity_command import pose_errors
        pose = np.asarray(pose, float)
        return pose_errors(run.goal.target, pose[:2], heading_from_quat(pose[3:7]))

    def _crawl_to_done(self, run: _Run, pose) -> bool:
        from .velocity_command import within_tolerance
        return within_tolerance(run.goal.target, self._crawl_to_errors(run, pose))

    def _goal_met(self, run: _Run, pose):
        g = run.goal
        if g.kind == VELOCITY:
            return False, "continuous crawling"
        if g.kind == CRAWL_TO:
            e = self._crawl_to_errors(run, pose)
            return self._crawl_to_done(run, pose), (f"position error {e['distance_m']:.3f} m (tolerance "
                                                    f"{g.target.position_tolerance_m} m), yaw error "
                                                    f"{e['yaw_error_rad']:+.3f} rad (tolerance "
                                                    f"{g.target.yaw_tolerance_rad} rad)")
        m = self._measure(run, pose)
        if g.distance_m > 0:
            dist = abs(m["distance_m"])
            return dist >= g.distance_m, f"covered {dist:.3f} m of {g.distance_m:.3f} m"
        if g.angle_rad != 0:
            turned = m["heading_change_rad"] * math.copysign(1.0, g.angle_rad)
            return turned >= abs(g.angle_rad) - self.params["angle_tolerance_rad"], \
                f"turned {m['heading_change_rad']:.3f} rad of {g.angle_rad:.3f} rad"
        n = 1 if g.loop_mode == "once" else g.cycles
        return run.cycles_completed >= n, f"{run.cycles_completed} of {n} cycles"

    def _feedback(self, run: _Run, support, pose, phase: str) -> dict:
        run.phase = phase
        margin = float(support.stability_margin_m) if support is not None else float("nan")
        progress = (run.step_idx + 1) / max(run.steps_total, 1)
        if run.goal.distance_m > 0:
            progress = min(1.0, abs(self._measure(run, pose)["distance_m"]) / run.goal.distance_m)
        elif run.goal.angle_rad != 0:
            progress = min(1.0, max(0.0, self._measure(run, pose)["heading_change_rad"] / run.goal.angle_rad))
        fb = {"phase": phase, "cycle": run.cycle, "keyframe": run.kf_index, "progress": float(progress),
              "stability_margin_m": margin, "base_pose": pose.copy()}
        if run.goal.kind == CRAWL_TO:
            e = self._crawl_to_errors(run, pose)
            d0 = (run.gen or {}).get("dist0") or 0.0
            fb.update(remaining_distance_m=e["distance_m"], heading_error_rad=e["yaw_error_rad"],
                      bearing_error_rad=e["bearing_error_rad"], law_phase=(run.gen or {}).get("law_phase", ""),
                      command=(run.gen or {}).get("cmd"),
                      progress=float(np.clip(1.0 - e["distance_m"] / d0, 0.0, 1.0)) if d0 > 0 else 1.0)
        return fb

    def _finish(self, status: str, reason: str, t: float, pose) -> Optional[Outcome]:
        """The goal's terminal Outcome (the run ends), or None when a met Crawl / Turn / CrawlTo goal first holds its
        end stance (``success.confirm_*``; :meth:`_confirm_tick` reports it)."""
        run = self._run
        status, reason = self._check_end_posture(run, status, reason, pose)
        confirm = (status == "succeeded" and run.confirm is None and run.goal.kind in (CRAWL, TURN, CRAWL_TO)
                   and self.params["success.confirm_min_s"] > 0)
        m = self._measure(run, np.asarray(pose, float))
        extra = f" ({run.support_violations} key-frames lifted a limb without a confirmed support state)" \
            if run.support_violations else ""
        # The action results say "reason: empty on success": the support note goes with failures only (and in
        # Outcome.support_violations, which the node logs).
        keep = run.goal.kind == VELOCITY      # a velocity run's reason says why it stopped (logged)
        o = Outcome(status=status, reason="" if status == "succeeded" and not keep else reason + extra,
                    cycles_completed=run.cycles_completed, duration_s=float(t - run.t_start),
                    support_violations=run.support_violations, **m)
        pose_a = np.asarray(pose, float)
        o.final_pose = pose_a.copy()
        if run.goal.kind == CRAWL_TO and pose_a.shape == (7,) and np.all(np.isfinite(pose_a)):
            e = self._crawl_to_errors(run, pose_a)
            o.position_error_m, o.yaw_error_rad = e["distance_m"], e["yaw_error_rad"]
        if confirm:
            run.confirm, run.phase = (o, float(t)), "confirming"
            return None
        self._run = None
        return o

    def _confirm_tick(self, run: _Run, t: float, pose) -> TickOutput:
        """The goal was met: hold its end stance (the controller keeps the last reference) at least
        ``success.confirm_min_s`` and until the pelvis is still by the ``start_settle.*`` limits, at most
        ``success.confirm_max_s``, then report the Outcome measured when it was met, if the robot is still up in the
        crawl stance. A fall meanwhile aborts it (:meth:`_fall_tick`); a cancel ends it as canceled, holding; without a
        valid ``pose`` (None) at the end it is aborted."""
        o, t0 = run.confirm
        out = TickOutput()
        seen = pose is not None     # a valid pose this tick (None: not known)
        if run.phase != "confirming:end_stance":   # one feedback (graph_trial ends the last gait cycle there)
            fb_pose = np.asarray(pose if seen else o.final_pose, float)
            out.feedback = {**self._feedback(run, None, fb_pose, "confirming:end_stance"), "progress": 1.0}
        p, held = self.params, t - t0
        if run.cancel:
            o.status, o.reason = "canceled", f"canceled while holding the end stance {held:.2f} s after the goal " \
                                             f"was met; holding"
        elif held < p["success.confirm_min_s"] or (held < p["success.confirm_max_s"] and (not seen or self.motion.still(
                p["start_settle.max_speed_m_per_s"], p["start_settle.max_rate_rad_per_s"]) is False)):
            return out
        elif not seen:      # no valid pose to judge the end posture by: not a success
            o.status, o.reason = "aborted", (f"could not confirm the end stance: no valid pelvis pose {held:.2f} s "
                                             f"after the goal was met (success.confirm_max_s)")
        else:
            status, reason = self._check_end_posture(run, "succeeded", "", pose)
            if status != "succeeded":
                o.status, o.reason = status, f"{held:.2f} s after the goal was met: {reason}"
        self._run = None
        out.outcome = o
        return out

    # ------------------------------------------------------------------ introspection
    def expected_stance(self) -> np.ndarray:
        """(4,) bool: the limbs the running step expects on the ground (all four when idle): the gait-phase prior of
        contact inference."""
        run = self._run
        if run is None or not (0 <= run.step_idx < len(run.steps)):
            return np.ones(4, bool)
        return np.asarray(run.steps[run.step_idx].stance, bool).copy()

    def current(self) -> Optional[dict]:
        run = self._run
        if run is None:
            return None
        return {"goal": run.goal, "phase": run.phase, "cycle": run.cycle, "keyframe": run.kf_index,
                "cancel": run.cancel}

    # ------------------------------------------------------------------ falls: detect, protect, recover
    # (issue 14 §3; the fall definition is fall_detector.FallDetector, the one the simulator's flag uses)
    @property
    def fall_detector(self) -> fd.FallDetector:
        """The detector fed by :meth:`observe` / :meth:`tick` (follows parameter changes, keeps its state)."""
        det = getattr(self, "_fall", None)
        if det is None:
            det = self._fall = fd.FallDetector(self.params)
            self._fall_params = self.params
        elif self._fall_params is not self.params:
            det.set_params(self.params)
            self._fall_params = self.params
        return det

    def observe(self, t: float, pelvis_pose, support=None) -> fd.FallState:
        """Feed the fall detector one sample (the node calls this every tick while idle; :meth:`tick` does it while
        a goal runs). ``support``: fresh support state (``in_contact``, ``age_s``) or None."""
        det = self.fall_detector
        if pelvis_pose is None:
            return det.state
        pose = np.asarray(pelvis_pose, float)
        if pose.shape != (7,) or not np.all(np.isfinite(pose)):
            return det.state
        self._last_pose = pose.copy()
        self.motion.window_s = float(self.params["start_settle.window_s"])
        self.motion.update(t, pose)
        ic = None
        if (self.params["fall.use_estimated_support"] and support is not None
                and getattr(support, "age_s", 0.0) <= self.params["support_max_age_s"]):
            ic = np.asarray(support.in_contact, bool)
        return det.update(t, pose, in_contact=ic)

    def posture_rejection(self, goal: MotionGoal, pelvis_pose=None) -> str:
        """Why ``goal`` cannot start from the current posture ("" = it can, or the posture is not known yet).

        Crawl/Turn need the crawl stance and no fall flag; a roll to the back is refused while on the back, a roll to
        the belly while already belly down. Recover goals start from anywhere."""
        pose = pelvis_pose if pelvis_pose is not None else getattr(self, "_last_pose", None)
        if pose is None or goal.kind == RECOVER:
            return ""
        pose = np.asarray(pose, float)
        if pose.shape != (7,) or not np.all(np.isfinite(pose)):
            return ""
        det = self.fall_detector
        post = det.posture(pose)
        roll, _pitch = fd.pelvis_angles(pose)
        where = f"posture {post}: roll about the spine {roll:+.2f} rad, pelvis height {pose[2]:.2f} m"
        if goal.kind in MOBILE:
            hint = "send a Recover goal first (or set auto_recover)"
            if det.state.fallen:
                return f"robot is down ({where}; fell: {det.state.reason}): {hint}"
            if post != fd.CRAWL:
                return f"robot is not in the crawl stance ({where}): {hint}"
            fell, why = det.check(pose)
            if fell:
                return f"robot is down ({where}; {why}): {hint}"
        elif goal.kind == ROLL:
            if goal.roll_to == "back" and post == fd.SUPINE:
                return f"already on the back ({where})"
            if goal.roll_to == "belly" and post in (fd.CRAWL, fd.PRONE):
                return f"already belly down ({where})"
        return ""

    def settle_wait(self, goal: MotionGoal, waited_s: float) -> Optional[str]:
        """Whether ``goal`` must wait before it is planned: a description of the motion while the pelvis still moves
        faster than the ``start_settle.*`` limits (Crawl / Turn / CrawlTo only, at most ``start_settle.timeout_s``
        of ``waited_s``); None = start now (settled, waited long enough, or the motion is not known)."""
        p = self.params
        if goal.kind not in (CRAWL, TURN, CRAWL_TO) or waited_s >= p["start_settle.timeout_s"]:
            return None
        if self.motion.still(p["start_settle.max_speed_m_per_s"], p["start_settle.max_rate_rad_per_s"]) is not False:
            return None
        v, w = self.motion.rates()
        return f"pelvis moving at {v:.2f} m/s, {w:.2f} rad/s"

    def needs_recovery(self, goal: MotionGoal, pelvis_pose=None) -> bool:
        return goal.kind in (CRAWL, TURN, CRAWL_TO) and self.posture_rejection(goal, pelvis_pose) != ""

    def _fall_tick(self, run: _Run, t: float, pelvis_pose, support, pose) -> Optional[TickOutput]:
        """Feed the detector; a fall during a Crawl/Turn aborts it ("fell: <reason>") and sends the protective
        key-frame (parameter protect_script)."""
        # a host that feeds every pose sample itself (the node: at the sample's stamp) sets feed_fall_in_tick False
        fs = self.observe(t, pelvis_pose, support) if getattr(self, "feed_fall_in_tick", True) \
            else self.fall_detector.state
        if run.goal.kind not in MOBILE or not fs.fallen:
            return None
        self.last_fall_abort_t = t
        out = TickOutput(reference=self._protect_reference())
        after = "" if run.confirm is None else f" {t - run.confirm[1]:.2f} s after the goal was met"
        out.outcome = self._finish("aborted", f"fell{after}: {fs.reason} (posture {fs.posture})", t, pose)
        self.falls = getattr(self, "falls", 0) + 1
        return out

    def _protect_reference(self) -> Optional[Reference]:
        expr = self.params["protect_script"]
        if not expr:
            return None
        try:
            kf = self._load(expr).keyframes[-1]
        except Exception:   # a missing script must not hide the fall: the controller keeps its last command
            return None
        return Reference(mode=Mode.KEYFRAME, sequence_id=self._new_seq(),
                         joint_names=[JOINT_NAMES[i] for i in np.flatnonzero(kf.selected)],
                         joint_positions_rad=kf.q[kf.selected], duration_s=kf.duration_s,
                         sender=getattr(self, "sender", ""))

    def _progress_shortfall(self, run: _Run, pose) -> str:
        """Why a cycles-bounded Crawl / Turn did not do what it was asked ('' when it did): the signed distance along
        the start heading (× direction) or the heading change (× turn sense) must reach ``success.min_*_per_cycle``
        times the cycles completed. Distance / angle goals have their own check (_goal_met)."""
        g = run.goal
        n = run.cycles_completed
        if n <= 0 or g.distance_m > 0 or g.angle_rad != 0:
            return ""
        m = self._measure(run, pose)
        if g.kind == CRAWL:
            need = self.params["success.min_crawl_progress_m_per_cycle"] * n
            got = float(g.direction) * m["distance_m"]
            if need > 0 and not got >= need:
                return (f"no progress: moved {got:+.3f} m {'backward' if g.direction < 0 else 'forward'} in "
                        f"{n} cycles (at least {need:.3f} m required; success.min_crawl_progress_m_per_cycle)")
        elif g.kind == TURN and g.turn_sense:
            need = self.params["success.min_turn_progress_rad_per_cycle"] * n
            got = float(g.turn_sense) * m["heading_change_rad"]
            if need > 0 and not got >= need:
                return (f"no progress: turned {got:+.3f} rad {'left' if g.turn_sense > 0 else 'right'} in {n} "
                        f"cycles (at least {need:.3f} rad required; success.min_turn_progress_rad_per_cycle)")
        return ""

    def _check_end_posture(self, run: _Run, status: str, reason: str, pose):
        """A goal succeeds only when it ends in the posture it promises: Crawl/Turn upright in the crawl stance,
        Roll on the back / belly within posture.end_tolerance_rad."""
        if status != "succeeded" or run is None:
            return status, reason
        pose = np.asarray(pose, float)
        if pose.shape != (7,) or not np.all(np.isfinite(pose)):
            return status, reason
        det = self.fall_detector
        post = det.posture(pose)
        roll, _ = fd.pelvis_angles(pose)
        g = run.goal
        if g.kind in MOBILE:
            fell, why = det.check(pose)
            if fell or det.state.fallen or post != fd.CRAWL:
                return "aborted", f"fell: {why or det.state.reason or 'not in the crawl stance'} (posture {post})"
            why = self._progress_shortfall(run, pose)
            if why:
                return "aborted", why
        elif g.kind == ROLL and g.roll_to:
            tol = self.params["posture.end_tolerance_rad"]
            off = abs(abs(roll) - math.pi) if g.roll_to == "back" else abs(roll)
            if off > tol:
                return "aborted", (f"roll ended with roll about the spine {roll:+.2f} rad (posture {post}), not on "
                                   f"the {g.roll_to} within {tol:.2f} rad")
        return status, reason

    # recovery: a run whose steps are planned one stage (script) at a time from the estimated posture
    def _prepare_recover(self, goal: MotionGoal, pelvis_pose) -> _Run:
        pose0 = np.asarray(pelvis_pose, float).copy()
        if goal.kind != RECOVER:     # auto_recover: recover first, then this goal
            rec = MotionGoal(kind=RECOVER, script="", loop_mode="once", max_cycles=self.params["recover.max_stages"],
                             description=f"recover, then {goal.description}")
        else:
            rec = goal
        run = _Run(goal=rec, script=None, t_start=0.0, pose0=pose0, steps_total=0, steps=[])
        run.then = None if goal.kind == RECOVER else goal
        self._plan_recover_stage(run, pose0)
        return run

    def _recover_posture(self, pose) -> str:
        det = self.fall_detector
        post = det.posture(pose)
        if post == fd.CRAWL and not det.state.fallen and not det.check(pose)[0]:
            return "up"
        return post

    def _plan_recover_stage(self, run: _Run, pose) -> bool:
        """Append the next recovery script's steps; False when the robot is already up."""
        post = self._recover_posture(pose)
        if post == "up":
            return False
        script = self._load(self.params[f"recover.from_{post}"])
        stage = len(run.stages)
        steps = self._plan(script, MotionGoal(kind=RECOVER, script=script.name, loop_mode="once"), 0)
        for s_ in steps:
            s_.cycle, s_.last_in_cycle = stage, False    # stages are not goal cycles (no _goal_met)
        run.steps.extend(steps)
        run.steps_total = len(run.steps)
        run.per_cycle = max(1, len(steps))
        run.stages.append(script.name)
        run.postures.append(post)
        return True

    def _recover_tick(self, run: _Run, t: float, status, support, pose) -> Optional[TickOutput]:
        """End of a recovery stage: settle, re-estimate the posture, then plan the next stage, succeed (and start
        the follow-up goal of auto_recover) or give up. None = a new stage was planned: go on stepping."""
        if run.settle_since is None:
            run.settle_since = t
        if t - run.settle_since < self.params["recover.settle_s"]:
            return TickOutput(feedback=self._feedback(run, support, pose, "settling"))
        run.settle_since = None
        info = dict(initial_posture=run.postures[0] if run.postures else fd.CRAWL, stages=tuple(run.stages))
        try:
            if len(run.stages) < run.goal.max_cycles and self._plan_recover_stage(run, pose):
                return None
        except Exception as e:   # a recovery script that cannot load ends the goal with the reason
            o = self._finish("aborted", f"cannot load the next recovery script: {type(e).__name__}: {e}", t, pose)
            o.initial_posture, o.stages = info["initial_posture"], info["stages"]
            return TickOutput(outcome=o)
        up = self._recover_posture(pose) == "up"
        if up and run.then is not None:
            then, t0 = run.then, run.t_start
            self._run = None
            try:
                self.start(then, t, pose, support)
            except Exception as e:
                o = Outcome(status="aborted", reason=f"recovered ({', '.join(info['stages'])}), but cannot start "
                                                      f"'{then.description}': {type(e).__name__}: {e}",
                            duration_s=float(t - t0), **info)
                return TickOutput(outcome=o)
            self._run.t_start = t0
            return self.tick(t, status, support, pose)
        why = "" if up else (f"not in the crawl stance after {len(run.stages)} recovery scripts "
                             f"({', '.join(run.stages) or 'none'}): posture {self._recover_posture(pose)}")
        o = self._finish("succeeded" if up else "aborted", why, t, pose)
        o.initial_posture, o.stages = info["initial_posture"], info["stages"]
        o.final_posture, o.final_pelvis_height_m = self.fall_detector.posture(pose), float(np.asarray(pose)[2])
        return TickOutput(outcome=o)
