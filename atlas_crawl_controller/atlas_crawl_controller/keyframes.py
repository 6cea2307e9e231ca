"""Key-frame gait scripts (thesis §4.1 "crawling by design") — YAML format, validating loader, mirror/reverse.

Format (one YAML file per script, see gaits/*.yaml)::

    name: crawl_forward                 # optional, defaults to the file stem
    description: free text
    fall_check: crawl                   # "crawl" (pelvis height / torso touch / roll) or "none" (prone, rolls)
    static_stability: true              # optional, default true: every lift leaves >= 3 stance limbs with the CoM
                                        # inside their polygon (thesis §4.1). false = DYNAMIC gait (e.g. the
                                        # diagonal-pair crawl_forward_fast: two-contact swings, no support polygon):
                                        # the gait sequencer does not wait for a support polygon before its lifts
                                        # and the tripod-margin checks (check_gaits, tests) skip it with a reason
    start_pose: crawl_stance            # named pose / gait (its last key-frame) to start from; optional
    start_quat_wxyz: [0.81, 0, 0.58, 0] # pelvis orientation for starting at key-frame 0 (when no start_pose)
    base: crawl_stance                  # joint values the first key-frame inherits (named pose or script); optional
    part_loop_start: 1                  # part loop: key-frame index a cycle restarts from after the first cycle
    keyframes:
      - name: shift_right               # optional; defaults to "kf<i>"
        duration_s: 0.6                 # > 0, time to move from the previous key-frame into this one
        stance: [RW, LK, RK]            # optional: limbs (LW, RW, LK, RK) expected on the ground during the move
                                        # into this key-frame and at it; omitted = unknown (treated as all four)
        joints:                         # angles in rad; unspecified joints keep the previous key-frame's value
          back_lbz: 0.1
          "*_leg_lhy": -1.5             # "*_" = both sides, right side mirrored (x/z-axis joints change sign)
          "~_arm_shx": 0.3              # "~_" = both sides with the SAME sign on the right (no mirroring)
      - mirror_of: shift_right          # the left/right mirror image of an earlier key-frame (stance mirrored)
        duration_s: 0.6
    derive: {from: turn_left, op: mirror}   # alternative to keyframes: a whole script mirrored or reversed

Validation happens at load time, before anything moves: unknown joint name, NaN/inf, an angle outside the URDF
limits, non-positive/missing duration, unknown stance limb, a non-boolean ``static_stability`` →
:class:`KeyframeScriptError` naming the script, the key-frame and the joint.
"""
from __future__ import annotations

import math
import os
import stat
import threading
from dataclasses import dataclass, field

import numpy as np
import yaml

from atlas_description import JOINT_INDEX, JOINT_NAMES, LIMB_NAMES, joint_limits

GAITS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gaits")

#: Mirror sign per joint (team order): +1 for y-axis joints (pitch) and usy, −1 for x/z-axis joints.
_MIRROR_KEEP = ("back_mby", "neck_ay", "_lhy", "_kny", "_uay", "_usy", "_ely", "_uwy")
MIRROR_SIGN = np.array([1.0 if any(n.endswith(k) or n == k for k in _MIRROR_KEEP) else -1.0 for n in JOINT_NAMES])
MIRROR_PERM = np.array([JOINT_INDEX[n.replace("l_", "#").replace("r_", "l_").replace("#", "r_")]
                        if n[:2] in ("l_", "r_") else JOINT_INDEX[n] for n in JOINT_NAMES])
LIMB_MIRROR = {"LW": "RW", "RW": "LW", "LK": "RK", "RK": "LK"}


class KeyframeScriptError(ValueError):
    """Invalid key-frame script; message names script, key-frame and joint."""


def mirror_q(q):
    """Left/right mirror image of a joint vector (team order)."""
    q = np.asarray(q, float)
    return MIRROR_SIGN * q[MIRROR_PERM]


def mirror_stance(stance):
    return None if stance is None else tuple(sorted((LIMB_MIRROR[s] for s in stance), key=LIMB_NAMES.index))


@dataclass
class Keyframe:
    name: str
    q: np.ndarray                      # (28,) full joint vector, team order
    duration_s: float
    stance: tuple | None = None        # subset of LIMB_NAMES, or None = unknown
    selected: np.ndarray = field(default_factory=lambda: np.ones(28, bool))

    def stance_mask(self) -> np.ndarray:
        if self.stance is None:
            return np.ones(4, bool)
        return np.array([n in self.stance for n in LIMB_NAMES])


@dataclass
class KeyframeScript:
    name: str
    keyframes: list
    fall_check: str = "crawl"
    start_pose: str | None = None
    part_loop_start: int = 1
    description: str = ""
    source: str = ""
    start_quat_wxyz: tuple = (1.0, 0.0, 0.0, 0.0)   # pelvis orientation to start from key-frame 0's pose
    end_quat_wxyz: tuple | None = None               # approximate pelvis orientation at the last key-frame
    static_stability: bool = True                    # False = dynamic gait (no support polygon during swings)

    @property
    def dynamic(self) -> bool:
        """True for a script flagged ``static_stability: false`` (see the module docstring)."""
        return not self.static_stability

    def __len__(self):
        return len(self.keyframes)

    def names(self):
        return [k.name for k in self.keyframes]

    def mirrored(self, name=None) -> "KeyframeScript":
        kfs = [Keyframe(k.name, mirror_q(k.q), k.duration_s, mirror_stance(k.stance), k.selected[MIRROR_PERM])
               for k in self.keyframes]
        sp = self.start_pose
        def mq(q):   # mirror a pelvis quaternion in the x-z plane: (w, x, y, z) -> (w, -x, y, -z)
            return None if q is None else (q[0], -q[1], q[2], -q[3])
        return KeyframeScript(name or self.name + "_mirrored", kfs, self.fall_check, sp, self.part_loop_start,
                              "mirror of " + self.name, self.source, mq(self.start_quat_wxyz), mq(self.end_quat_wxyz),
                              self.static_stability)

    def reversed(self, name=None) -> "KeyframeScript":
        """X_reverse = X_{T-1:0} (thesis §4.1.3). The move into reversed key-frame i (original index i) retraces
        the forward move into original i+1, so it takes that move's duration and stance."""
        n = len(self.keyframes)
        kfs = []
        for i in reversed(range(n)):
            nxt = self.keyframes[(i + 1) % n]
            k = self.keyframes[i]
            kfs.append(Keyframe(k.name, k.q.copy(), nxt.duration_s, nxt.stance, k.selected | nxt.selected))
        return KeyframeScript(name or self.name + "_reversed", kfs, self.fall_check, None, self.part_loop_start,
                              "reverse of " + self.name, self.source, self.end_quat_wxyz or self.start_quat_wxyz,
                              self.start_quat_wxyz, self.static_stability)


# ---------------------------------------------------------------------------------------------- named poses
def _pose_from_dict(d):
    q = np.zeros(28)
    for k, v in d.items():
        for name, val in _expand(k, float(v)):
            q[JOINT_INDEX[name]] = val
    return q


def _expand(key, val):
    """Expand "*_x" (mirrored both sides) and "~_x" (same value both sides) into joint names."""
    if key.startswith("*_") or key.startswith("~_"):
        suffix = key[2:]
        ln, rn = "l_" + suffix, "r_" + suffix
        if ln not in JOINT_INDEX:
            return [(key, val)]
        sign = MIRROR_SIGN[JOINT_INDEX[rn]] if key[0] == "*" else 1.0
        return [(ln, val), (rn, sign * val)]
    return [(key, val)]


#: Named start poses: joint dict + pelvis orientation (w,x,y,z) used by AtlasSim.reset().
NAMED_POSES = {
    "stand": ({}, (1.0, 0.0, 0.0, 0.0)),
    # Prone: flat on the belly, legs straight, arms along the body (thesis §4.1.1); pelvis pitched +90°.
    "prone": ({"neck_ay": 0.6, "*_arm_usy": 0.0, "*_arm_shx": -1.3},
              (math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0)),
}


def named_pose(name):
    """(q (28,), pelvis quaternion wxyz) of a named pose, or of the first key-frame of a gait script."""
    if name in NAMED_POSES:
        d, quat = NAMED_POSES[name]
        return _pose_from_dict(d), quat
    path = os.path.join(GAITS_DIR, name + ".yaml")
    if os.path.exists(path):
        s = load_script(path)
        return s.keyframes[-1].q.copy(), s.end_quat_wxyz or s.start_quat_wxyz
    raise KeyError(f"unknown pose '{name}' (named: {sorted(NAMED_POSES)}, or a script in {GAITS_DIR})")


# ---------------------------------------------------------------------------------------------- loading
def script_path(name_or_path: str) -> str:
    if os.path.exists(name_or_path):
        return name_or_path
    p = os.path.join(GAITS_DIR, name_or_path + ".yaml")
    if os.path.exists(p):
        return p
    raise FileNotFoundError(f"no key-frame script '{name_or_path}' (looked in {GAITS_DIR})")


#: defaults of the read guard (the gait sequencer passes its max_script_bytes / script_load_timeout_s parameters)
MAX_SCRIPT_BYTES = 1 << 20
READ_TIMEOUT_S = 1.0


def read_text_checked(path: str, max_bytes: int = MAX_SCRIPT_BYTES, timeout_s: float = READ_TIMEOUT_S) -> str:
    """UTF-8 text of a regular file of at most ``max_bytes``, read within ``timeout_s`` of wall time on a helper
    thread (a slow mount cannot block the caller longer). FIFOs, devices and directories are refused before
    anything is opened (opening a FIFO blocks until a writer appears). Raises KeyframeScriptError."""
    box = {}

    def work():
        try:
            st = os.stat(path)
            if not stat.S_ISREG(st.st_mode):
                raise KeyframeScriptError(f"{path}: not a regular file (FIFO, device or directory); refused")
            if st.st_size > max_bytes:
                raise KeyframeScriptError(f"{path}: {st.st_size} bytes, more than the {max_bytes} allowed")
            with open(path, encoding="utf-8") as f:
                text = f.read(max_bytes + 1)
            if len(text) > max_bytes:
                raise KeyframeScriptError(f"{path}: more than the {max_bytes} bytes allowed")
            box["text"] = text
        except KeyframeScriptError as e:
            box["error"] = e
        except (OSError, UnicodeDecodeError) as e:
            box["error"] = KeyframeScriptError(f"{path}: cannot read: {type(e).__name__}: {e}")
        done.set()

    done = threading.Event()
    threading.Thread(target=work, name="script_reader", daemon=True).start()
    if not done.wait(timeout_s):
        raise KeyframeScriptError(f"{path}: not read within {timeout_s} s (slow or blocking file); refused")
    if "error" in box:
        raise box["error"]
    return box["text"]


def load_script(name_or_path: str, _stack=(), max_bytes: int = MAX_SCRIPT_BYTES,
                timeout_s: float = READ_TIMEOUT_S) -> KeyframeScript:
    """Load and fully validate a script (by file path or gait name). Raises KeyframeScriptError."""
    if not isinstance(name_or_path, str) or not name_or_path or "\x00" in name_or_path:
        raise KeyframeScriptError(f"script name must be a non-empty string without NUL, got {name_or_path!r}")
    path = script_path(name_or_path)
    text = read_text_checked(path, max_bytes, timeout_s)
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise KeyframeScriptError(f"script {path}: YAML error: {e}") from None
    return parse_script(raw, path, _stack)


def parse_script(raw: dict, source: str = "<dict>", _stack=()) -> KeyframeScript:
    stem = os.path.splitext(os.path.basename(source))[0]
    if not isinstance(raw, dict):
        raise KeyframeScriptError(f"script {source}: top level must be a mapping")
    name = str(raw.get("name", stem))
    where = f"script '{name}' ({source})"
    fall_check = raw.get("fall_check", "crawl")
    if fall_check not in ("crawl", "none"):
        raise KeyframeScriptError(f"{where}: fall_check must be 'crawl' or 'none', got {fall_check!r}")
    static = raw.get("static_stability", True)
    if not isinstance(static, bool):
        raise KeyframeScriptError(f"{where}: static_stability must be true or false, got {static!r}")
    if "derive" in raw:
        d = raw["derive"]
        if name in _stack:
            raise KeyframeScriptError(f"{where}: derive cycle {_stack}")
        base = load_script(d["from"], _stack + (name,))
        op = d.get("op")
        if op == "mirror":
            s = base.mirrored(name)
        elif op == "reverse":
            s = base.reversed(name)
        else:
            raise KeyframeScriptError(f"{where}: derive op must be 'mirror' or 'reverse', got {op!r}")
        s.source, s.description = source, raw.get("description", s.description)
        s.fall_check = fall_check if "fall_check" in raw else base.fall_check
        s.part_loop_start = int(raw.get("part_loop_start", s.part_loop_start))
        s.start_pose = raw.get("start_pose", s.start_pose)
        if "static_stability" in raw:
            s.static_stability = static
        return s
    lo, hi, _, _ = joint_limits()
    base = raw.get("base")
    if base is None:
        q = np.zeros(28)
    elif isinstance(base, dict):
        q = _joint_dict(base, np.zeros(28), where, "base", lo, hi)
    else:
        q, _ = named_pose(base) if base not in _stack else (None, None)
        if q is None:
            raise KeyframeScriptError(f"{where}: base cycle")
    kfs_raw = raw.get("keyframes")
    if not isinstance(kfs_raw, list) or not kfs_raw:
        raise KeyframeScriptError(f"{where}: 'keyframes' must be a non-empty list")
    kfs = []
    for i, kr in enumerate(kfs_raw):
        kname = str(kr.get("name", f"kf{i}")) if isinstance(kr, dict) else f"kf{i}"
        kw = f"{where}, key-frame {i} '{kname}'"
        if not isinstance(kr, dict):
            raise KeyframeScriptError(f"{kw}: must be a mapping")
        unknown = set(kr) - {"name", "duration_s", "stance", "joints", "mirror_of", "comment"}
        if unknown:
            raise KeyframeScriptError(f"{kw}: unknown field(s) {sorted(unknown)}")
        dur = kr.get("duration_s")
        try:
            dur = float(dur)
        except (TypeError, ValueError):
            raise KeyframeScriptError(f"{kw}: duration_s missing or not a number ({dur!r})") from None
        if not math.isfinite(dur) or dur <= 0:
            raise KeyframeScriptError(f"{kw}: duration_s must be a finite positive number, got {dur}")
        stance = kr.get("stance")
        if stance is not None:
            bad = [s for s in stance if s not in LIMB_NAMES]
            if bad:
                raise KeyframeScriptError(f"{kw}: unknown stance limb(s) {bad}; use {LIMB_NAMES}")
            stance = tuple(sorted(set(stance), key=LIMB_NAMES.index))
        if "mirror_of" in kr:
            src = [k for k in kfs if k.name == kr["mirror_of"]]
            if not src:
                raise KeyframeScriptError(f"{kw}: mirror_of '{kr['mirror_of']}' is not an earlier key-frame")
            q = mirror_q(src[-1].q)
            if stance is None:
                stance = mirror_stance(src[-1].stance)
        joints = kr.get("joints") or {}
        if not isinstance(joints, dict):
            raise KeyframeScriptError(f"{kw}: 'joints' must be a mapping name -> angle")
        sel = np.zeros(28, bool) if joints or "mirror_of" in kr else np.ones(28, bool)
        if "mirror_of" in kr:
            sel[:] = True
        q = _joint_dict(joints, q, where, f"key-frame {i} '{kname}'", lo, hi, sel)
        kfs.append(Keyframe(kname, q.copy(), dur, stance, sel))
    pls = int(raw.get("part_loop_start", 1 if len(kfs) > 1 else 0))
    if not 0 <= pls < len(kfs):
        raise KeyframeScriptError(f"{where}: part_loop_start {pls} outside 0..{len(kfs) - 1}")
    quat = tuple(float(v) for v in raw.get("start_quat_wxyz", (1.0, 0.0, 0.0, 0.0)))
    if len(quat) != 4 or not all(math.isfinite(v) for v in quat) or np.linalg.norm(quat) < 1e-6:
        raise KeyframeScriptError(f"{where}: start_quat_wxyz must be 4 finite numbers, not all zero")
    endq = raw.get("end_quat_wxyz")
    return KeyframeScript(name, kfs, fall_check, raw.get("start_pose"), pls, raw.get("description", ""), source,
                          quat, tuple(float(v) for v in endq) if endq else None, static)


def _joint_dict(joints, q, where, kw, lo, hi, sel=None):
    q = q.copy()
    for key, val in joints.items():
        try:
            v = float(val)
        except (TypeError, ValueError):
            raise KeyframeScriptError(f"{where}, {kw}: joint '{key}' value {val!r} is not a number") from None
        for jn, jv in _expand(str(key), v):
            if jn not in JOINT_INDEX:
                raise KeyframeScriptError(f"{where}, {kw}: unknown joint name '{key}'")
            if not math.isfinite(jv):
                raise KeyframeScriptError(f"{where}, {kw}: joint '{jn}' angle is {jv} (NaN/inf)")
            j = JOINT_INDEX[jn]
            if not (lo[j] - 1e-9 <= jv <= hi[j] + 1e-9):
                raise KeyframeScriptError(f"{where}, {kw}: joint '{jn}' angle {jv:.4f} rad outside its limits "
                                          f"[{lo[j]:.4f}, {hi[j]:.4f}]")
            q[j] = jv
            if sel is not None:
                sel[j] = True
    return q


def list_gaits():
    return sorted(os.path.splitext(f)[0] for f in os.listdir(GAITS_DIR) if f.endswith(".yaml"))
