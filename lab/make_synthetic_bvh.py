"""Write a SYNTHETIC human crawl BVH (the thesis' SNU capture, §4.2.4, is not available).

    python lab/make_synthetic_bvh.py [--out atlas_crawl_kinematics/data/synthetic_human_crawl.bvh] [--cycles 4]

This is *not* motion capture. It is a generated, human-proportioned (1.77 m standing height) skeleton performing a
one-limb-at-a-time crawl in the tripod order of the thesis (left hand, right knee, right hand, left knee) with the
body gliding forward at constant speed and **no weight shift**: hips kept high over the knees (thighs vertical),
hands placed far forward of the shoulders, no lateral sway. A human (light arms, heavy hips) gets away with this;
mapped onto Atlas (heavy torso and arms, CoM well ahead of the pelvis) the CoM leaves the desired tripod when a
hand lifts — the failure mode of thesis §4.2.4 / Fig 4.23 that the CoM modulation (§4.3) must fix.

File convention (stated in the header comment and in data/README.md): BVH text, centimetres, **right-handed,
y up, the character faces +z, its left is +x** (the common BVH convention; REP 103 conversion:
``axes_matrix(forward="z", left="x", up="y")``, determinant +1). Root channels
``Xposition Yposition Zposition Zrotation Xrotation Yrotation``, others ``Zrotation Xrotation Yrotation``.
The joint angles are obtained from prescribed contact paths by two-link IK of each limb.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from atlas_crawl_kinematics.bvh import BVH, BVHJoint, axes_matrix

ROT = ["Zrotation", "Xrotation", "Yrotation"]
ROOT_CH = ["Xposition", "Yposition", "Zposition"] + ROT

# skeleton in the rest (standing, arms down) pose, cm, BVH axes (x left, y up, z forward)
SKELETON = [  # name, parent, offset, end_site
    ("Hips", None, (0, 0, 0), None),
    ("Spine", "Hips", (0, 10, 0), None),
    ("Chest", "Spine", (0, 25, 0), None),
    ("Neck", "Chest", (0, 20, 0), None),
    ("Head", "Neck", (0, 10, 0), (0, 15, 0)),
    ("LeftArm", "Chest", (19, 18, 0), None),
    ("LeftForeArm", "LeftArm", (0, -30, 0), None),
    ("LeftHand", "LeftForeArm", (0, -27, 0), (0, -8, 0)),
    ("RightArm", "Chest", (-19, 18, 0), None),
    ("RightForeArm", "RightArm", (0, -30, 0), None),
    ("RightHand", "RightForeArm", (0, -27, 0), (0, -8, 0)),
    ("LeftUpLeg", "Hips", (9, -5, 0), None),
    ("LeftLeg", "LeftUpLeg", (0, -43, 0), None),
    ("LeftFoot", "LeftLeg", (0, -43, 0), (0, -5, 12)),
    ("RightUpLeg", "Hips", (-9, -5, 0), None),
    ("RightLeg", "RightUpLeg", (0, -43, 0), None),
    ("RightFoot", "RightLeg", (0, -43, 0), (0, -5, 12)),
]
#: contact joints of the crawl (wrists and knees), thesis limb order LW, RW, LK, RK
CONTACT_JOINTS = ("LeftHand", "RightHand", "LeftLeg", "RightLeg")

# crawl parameters (REP-103-like design frame: x forward, y left, z up; metres)
PERIOD_S = 2.4
STRIDE_M = 0.30
SWING_S = 0.5
HIP_Z_M = 0.48  # thighs vertical: hips high
KNEE_Z_M = 0.05  # knee joint centre above the floor in stance
WRIST_Z_M = 0.04
ORDER_PHASE = {"LeftHand": 0.0, "RightLeg": 0.25, "RightHand": 0.5, "LeftLeg": 0.75}
NOMINAL = {"LeftHand": (0.53 + 0.17, 0.21), "RightHand": (0.53 + 0.17, -0.21),  # hands far forward of shoulders
           "LeftLeg": (0.0, 0.11), "RightLeg": (0.0, -0.11)}
LIFT = {"LeftHand": 0.08, "RightHand": 0.08, "LeftLeg": 0.06, "RightLeg": 0.06}


def _mj(t):
    t = np.clip(t, 0, 1)
    return t**3 * (10 - 15 * t + 6 * t * t)


def contact_path(name: str, t: np.ndarray, t0: float, cycles: int) -> np.ndarray:
    """Design-frame path of a contact joint (stance fixed, min-jerk + parabolic swing)."""
    v = STRIDE_M / PERIOD_S
    r = np.array(NOMINAL[name])
    z0 = WRIST_Z_M if "Hand" in name else KNEE_Z_M
    out = np.zeros((len(t), 3))
    starts = [t0 + (ORDER_PHASE[name] + k) * PERIOD_S for k in range(cycles)]
    for i, ti in enumerate(t):
        # the landing of swing k: body position at landing + offset so that mid-stance is at the nominal offset
        land = [v * (s + SWING_S - t0) + r[0] + v * (PERIOD_S - SWING_S) / 2 for s in starts]
        x = land[0] - STRIDE_M
        z = z0
        for k, s in enumerate(starts):
            if ti >= s + SWING_S:
                x = land[k]
            elif ti >= s:
                tau = (ti - s) / SWING_S
                x = land[k] - STRIDE_M + STRIDE_M * _mj(tau)
                z = z0 + LIFT[name] * 4 * tau * (1 - tau)
                break
            else:
                break
        out[i] = (x, r[1], z)
    return out


def _align(a, b):
    """Minimal rotation taking unit vector a to unit vector b."""
    a = a / np.linalg.norm(a)
    b = b / np.linalg.norm(b)
    v = np.cross(a, b)
    c = float(np.dot(a, b))
    if np.linalg.norm(v) < 1e-12:
        return np.eye(3) if c > 0 else Rotation.from_rotvec(np.pi * np.array([1.0, 0, 0])).as_matrix()
    return Rotation.from_rotvec(v / np.linalg.norm(v) * np.arctan2(np.linalg.norm(v), c)).as_matrix()


def make(cycles: int = 4, fps: float = 60.0, hold_s: float = 0.5) -> BVH:
    M, _ = axes_matrix(forward="z", left="x", up="y")  # BVH → design (REP 103)
    Mi = M.T  # design → BVH
    T = hold_s + cycles * PERIOD_S + hold_s
    t = np.arange(0.0, T + 1e-9, 1.0 / fps)
    v = STRIDE_M / PERIOD_S
    names = [s[0] for s in SKELETON]
    idx = {n: i for i, n in enumerate(names)}
    offs = {n: np.array(o, float) / 100.0 for n, _p, o, _e in SKELETON}  # metres, BVH axes
    R_body = Mi @ np.eye(3)  # placeholder
    # body orientation in BVH axes: spine (+y rest) along forward (+z): +90° about x
    R_body = Rotation.from_euler("x", 90, degrees=True).as_matrix()
    paths = {n: contact_path(n, t, hold_s, cycles) for n in CONTACT_JOINTS}
    joints = []
    nch = 0
    for n, p, o, e in SKELETON:
        ch = ROOT_CH if p is None else ROT
        joints.append(BVHJoint(n, -1 if p is None else idx[p], np.array(o, float), list(ch), nch,
                               None if e is None else np.array(e, float)))
        nch += len(ch)
    F = np.zeros((len(t), nch))
    for fi, ti in enumerate(t):
        xb = v * np.clip(ti - hold_s, 0, cycles * PERIOD_S)
        hips_d = np.array([xb, 0.0, HIP_Z_M])
        hips = Mi @ hips_d  # BVH axes, metres
        Rw = {"Hips": R_body, "Spine": R_body, "Chest": R_body, "Neck": R_body, "Head": R_body}
        pos = {"Hips": hips}
        pos["Spine"] = hips + R_body @ offs["Spine"]
        pos["Chest"] = pos["Spine"] + R_body @ offs["Chest"]
        for side in ("Left", "Right"):
            # leg: thigh towards the knee target, shin pointing backwards along the floor
            hipj = hips + R_body @ offs[f"{side}UpLeg"]
            knee_t = Mi @ paths[f"{side}Leg"][fi]
            R_th = _align(R_body @ offs[f"{side}Leg"], knee_t - hipj) @ R_body
            knee = hipj + R_th @ offs[f"{side}Leg"]
            R_sh = _align(R_th @ offs[f"{side}Foot"], Mi @ np.array([-1.0, 0.0, 0.08])) @ R_th
            Rw[f"{side}UpLeg"], Rw[f"{side}Leg"], Rw[f"{side}Foot"] = R_th, R_sh, R_sh
            # arm: two-link IK shoulder → wrist target, elbow bending backwards
            sh = pos["Chest"] + R_body @ offs[f"{side}Arm"]
            w_t = Mi @ paths[f"{side}Hand"][fi]
            a, b = 0.30, 0.27
            d_vec = w_t - sh
            d = min(np.linalg.norm(d_vec), a + b - 1e-4)
            u = d_vec / np.linalg.norm(d_vec)
            back = Mi @ np.array([-1.0, 0.0, 0.0])
            nrm = back - np.dot(back, u) * u
            nrm /= np.linalg.norm(nrm)
            al = np.arccos(np.clip((a * a + d * d - b * b) / (2 * a * d), -1, 1))
            elbow = sh + a * (np.cos(al) * u + np.sin(al) * nrm)
            wrist = sh + d * u
            R_ua = _align(R_body @ offs[f"{side}ForeArm"], elbow - sh) @ R_body
            R_fa = _align(R_ua @ offs[f"{side}Hand"], wrist - elbow) @ R_ua
            Rw[f"{side}Arm"], Rw[f"{side}ForeArm"], Rw[f"{side}Hand"] = R_ua, R_fa, R_fa
        for j in joints:
            if j.parent < 0:
                F[fi, 0:3] = hips * 100.0
                F[fi, 3:6] = Rotation.from_matrix(Rw[j.name]).as_euler("ZXY", degrees=True)
            else:
                Rl = Rw[names[j.parent]].T @ Rw[j.name]
                F[fi, j.channel_index:j.channel_index + 3] = Rotation.from_matrix(Rl).as_euler("ZXY", degrees=True)
    return BVH(joints, F, 1.0 / fps, "synthetic")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = Path(__file__).resolve().parent.parent / "atlas_crawl_kinematics" / "data" / "synthetic_human_crawl.bvh"
    ap.add_argument("--out", default=str(here))
    ap.add_argument("--cycles", type=int, default=4)
    ap.add_argument("--fps", type=float, default=60.0)
    a = ap.parse_args(argv)
    b = make(a.cycles, a.fps)
    txt = b.to_text()
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(txt, encoding="utf-8")
    print(f"wrote {a.out}: {len(b.joints)} joints, {b.n_frames} frames at {1 / b.frame_time_s:g} Hz (SYNTHETIC)")


if __name__ == "__main__":
    main()
