"""BVH motion capture: loader (HIERARCHY + MOTION), skeleton forward kinematics, axis conversion to REP 103
(thesis §4.2.4 pre-processing, issue 4 §5).

Forward kinematics: joint ``j`` with parent ``p``: ``R_j = R_p · R_local(j)``, ``x_j = x_p + R_p · offset_j``
(+ the position channels for joints that have them); ``R_local`` is the product of the rotation channels **in the
order listed** (``Zrotation Xrotation Yrotation`` → ``Rz·Rx·Ry``, intrinsic), angles in degrees.

Handedness (thesis §4.2.4 step 4, checked here): the thesis converts its "left-handed" y-up data by swapping Y
and Z and negating the new Y, i.e. ``(x, y, z) → (x, −z, y)``. That matrix has determinant **+1**: it is a rotation
(+90° about x), and a rotation cannot change handedness — any map between a left-handed and a right-handed
description of the same physical points has determinant −1. So the thesis' formula is correct for *right-handed*
y-up data (the usual BVH convention) and would mirror truly left-handed data (left and right limbs swapped).
:func:`axes_matrix` builds the conversion from the declared meaning of the source axes instead, and reports
the determinant: ``+1`` for a right-handed source, ``−1`` for a left-handed one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["BVHError", "BVHJoint", "BVH", "load_bvh", "parse_bvh", "axes_matrix", "THESIS_SWAP",
           "to_rep103", "euler_matrix"]


class BVHError(ValueError):
    """Malformed BVH text or bad arguments."""


#: the thesis' conversion (§4.2.4): swap Y and Z, negate the new Y → (x, −z, y); det = +1 (a rotation)
THESIS_SWAP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])

_AX = {"x": np.array([1.0, 0, 0]), "y": np.array([0, 1.0, 0]), "z": np.array([0, 0, 1.0])}


def axes_matrix(forward: str, left: str, up: str) -> tuple[NDArray[np.float64], float]:
    """Matrix M with ``p_rep103 = M · p_source`` given which signed source axis points forward, left and up
    (e.g. ``forward="z", left="x", up="y"``: right-handed y-up; ``forward="z", left="-x", up="y"``: the left-handed
    x-right/y-up/z-forward convention). Returns ``(M, det M)``; det = −1 means the source is left-handed."""
    rows = []
    for a in (forward, left, up):
        a = a.strip().lower()
        sgn = -1.0 if a.startswith("-") else 1.0
        k = a.lstrip("+-")
        if k not in _AX:
            raise BVHError(f"axis must be one of ±x, ±y, ±z, got {a!r}")
        rows.append(sgn * _AX[k])
    M = np.array(rows)
    d = float(np.linalg.det(M))
    if abs(abs(d) - 1.0) > 1e-9:
        raise BVHError("forward, left and up must be three different axes")
    return M, d


def to_rep103(points: ArrayLike, M: ArrayLike = THESIS_SWAP, scale: float = 1.0) -> NDArray[np.float64]:
    """Apply ``scale · M`` to points (..., 3)."""
    p = np.asarray(points, float)
    if p.shape[-1] != 3:
        raise BVHError("points must have a last dimension of 3")
    return scale * p @ np.asarray(M, float).T


def euler_matrix(axes: str, deg: ArrayLike) -> NDArray[np.float64]:
    """Rotation ``R_a1(θ1)·R_a2(θ2)·R_a3(θ3)`` for channel axes like ``"ZXY"``; ``deg`` (..., 3). Returns (..., 3, 3)."""
    t = np.radians(np.asarray(deg, float))
    out = np.broadcast_to(np.eye(3), t.shape[:-1] + (3, 3)).copy()
    for k, a in enumerate(axes):
        c, s = np.cos(t[..., k]), np.sin(t[..., k])
        R = np.zeros(t.shape[:-1] + (3, 3))
        i = "XYZ".index(a)
        j, l = (i + 1) % 3, (i + 2) % 3
        R[..., i, i] = 1.0
        R[..., j, j] = c
        R[..., l, l] = c
        R[..., j, l] = -s
        R[..., l, j] = s
        out = out @ R
    return out


@dataclass
class BVHJoint:
    name: str
    parent: int  #: index of the parent joint, −1 for the root
    offset: NDArray[np.float64]
    channels: list[str]
    channel_index: int  #: first column of this joint's channels in a motion frame
    end_site: NDArray[np.float64] | None = None


@dataclass
class BVH:
    joints: list[BVHJoint]
    frames: NDArray[np.float64]  #: (N, n_channels)
    frame_time_s: float
    source: str = ""
    _index: dict = field(default_factory=dict)

    def __post_init__(self):
        self._index = {j.name: i for i, j in enumerate(self.joints)}

    @property
    def n_frames(self) -> int:
        return self.frames.shape[0]

    @property
    def joint_names(self) -> list[str]:
        return [j.name for j in self.joints]

    def index(self, name: str) -> int:
        if name not in self._index:
            raise BVHError(f"no joint {name!r} in the BVH (have {self.joint_names})")
        return self._index[name]

    def forward_kinematics(self, frames: ArrayLike | None = None) -> tuple[NDArray, NDArray]:
        """World positions (N, J, 3) and rotations (N, J, 3, 3) of all joints, in the file's units and axes."""
        F = self.frames if frames is None else np.atleast_2d(np.asarray(frames, float))
        N, J = F.shape[0], len(self.joints)
        pos = np.zeros((N, J, 3))
        rot = np.zeros((N, J, 3, 3))
        for i, j in enumerate(self.joints):
            ch = F[:, j.channel_index:j.channel_index + len(j.channels)]
            trans = np.zeros((N, 3))
            rax, rcols = "", []
            for k, c in enumerate(j.channels):
                cl = c.lower()
                if cl.endswith("position"):
                    trans[:, "xyz".index(cl[0])] = ch[:, k]
                elif cl.endswith("rotation"):
                    rax += cl[0].upper()
                    rcols.append(ch[:, k])
            Rl = euler_matrix(rax, np.stack(rcols, axis=1)) if rax else np.broadcast_to(np.eye(3), (N, 3, 3))
            if j.parent < 0:
                pos[:, i] = j.offset + trans
                rot[:, i] = Rl
            else:
                Rp = rot[:, j.parent]
                pos[:, i] = pos[:, j.parent] + np.einsum("nab,b->na", Rp, j.offset) + np.einsum("nab,nb->na", Rp, trans)
                rot[:, i] = Rp @ Rl
        return pos, rot

    def positions(self, names, frames=None) -> NDArray:
        pos, _ = self.forward_kinematics(frames)
        return pos[:, [self.index(n) for n in names]]

    def to_text(self) -> str:
        """Serialise back to BVH text (round trip)."""
        kids: dict[int, list[int]] = {i: [] for i in range(len(self.joints))}
        for i, j in enumerate(self.joints):
            if j.parent >= 0:
                kids[j.parent].append(i)
        lines = ["HIERARCHY"]

        def emit(i, depth):
            j = self.joints[i]
            ind = "  " * depth
            lines.append(f"{ind}{'ROOT' if j.parent < 0 else 'JOINT'} {j.name}")
            lines.append(f"{ind}{{")
            lines.append(f"{ind}  OFFSET {j.offset[0]:.6f} {j.offset[1]:.6f} {j.offset[2]:.6f}")
            lines.append(f"{ind}  CHANNELS {len(j.channels)} {' '.join(j.channels)}")
            for c in kids[i]:
                emit(c, depth + 1)
            if j.end_site is not None:
                e = j.end_site
                lines.extend([f"{ind}  End Site", f"{ind}  {{", f"{ind}    OFFSET {e[0]:.6f} {e[1]:.6f} {e[2]:.6f}",
                              f"{ind}  }}"])
            lines.append(f"{ind}}}")
        emit(0, 0)
        lines += ["MOTION", f"Frames: {self.n_frames}", f"Frame Time: {self.frame_time_s:.6f}"]
        lines += [" ".join(f"{v:.5f}" for v in row) for row in self.frames]
        return "\n".join(lines) + "\n"


def parse_bvh(text: str, source: str = "") -> BVH:
    """Parse BVH text. Raises :class:`BVHError` on malformed input (wrong counts, non-finite numbers)."""
    if "HIERARCHY" not in text or "MOTION" not in text:
        raise BVHError("not a BVH file (HIERARCHY/MOTION missing)")
    head, motion = text.split("MOTION", 1)
    tok = head.replace("{", " { ").replace("}", " } ").split()
    joints: list[BVHJoint] = []
    stack: list[int] = []
    i = tok.index("HIERARCHY") + 1
    nch = 0
    pending_end = False
    while i < len(tok):
        t = tok[i]
        if t in ("ROOT", "JOINT"):
            name = tok[i + 1]
            parent = stack[-1] if stack else -1
            if t == "ROOT" and joints:
                raise BVHError("only one ROOT supported")
            joints.append(BVHJoint(name, parent, np.zeros(3), [], nch))
            i += 2
        elif t == "End":
            pending_end = True
            i += 2  # "End Site"
        elif t == "{":
            stack.append(-2 if pending_end else len(joints) - 1)
            i += 1
        elif t == "}":
            if not stack:
                raise BVHError("unbalanced braces")
            top = stack.pop()
            if top == -2:
                pending_end = False
            i += 1
        elif t == "OFFSET":
            try:
                v = np.array([float(x) for x in tok[i + 1:i + 4]])
            except ValueError:
                raise BVHError("bad OFFSET") from None
            if not np.all(np.isfinite(v)):
                raise BVHError("non-finite OFFSET")
            if stack and stack[-1] == -2:
                joints[[k for k in stack if k >= 0][-1]].end_site = v
            else:
                joints[-1].offset = v
            i += 4
        elif t == "CHANNELS":
            n = int(tok[i + 1])
            chans = tok[i + 2:i + 2 + n]
            for c in chans:
                if c.lower() not in ("xposition", "yposition", "zposition", "xrotation", "yrotation", "zrotation"):
                    raise BVHError(f"unknown channel {c!r}")
            joints[-1].channels = chans
            joints[-1].channel_index = nch
            nch += n
            i += 2 + n
        else:
            raise BVHError(f"unexpected token {t!r} in HIERARCHY")
    if stack:
        raise BVHError("unbalanced braces in HIERARCHY")
    if not joints:
        raise BVHError("no joints")
    m = re.search(r"Frames:\s*(\d+)", motion)
    ft = re.search(r"Frame Time:\s*([0-9.eE+-]+)", motion)
    if not m or not ft:
        raise BVHError("MOTION needs 'Frames:' and 'Frame Time:'")
    n = int(m.group(1))
    dt = float(ft.group(1))
    if not (np.isfinite(dt) and dt > 0):
        raise BVHError("Frame Time must be > 0")
    body = motion[ft.end():].split()
    try:
        vals = np.array([float(x) for x in body])
    except ValueError:
        raise BVHError("non-numeric motion data") from None
    if vals.size != n * nch:
        raise BVHError(f"motion data has {vals.size} numbers, expected {n} frames × {nch} channels")
    F = vals.reshape(n, nch) if nch else np.zeros((n, 0))
    if not np.all(np.isfinite(F)):
        raise BVHError("motion data contains NaN/inf")
    return BVH(joints, F, dt, source)


def load_bvh(path) -> BVH:
    p = Path(path)
    if not p.is_file():
        raise BVHError(f"no such BVH file: {p}")
    return parse_bvh(p.read_text(encoding="utf-8"), str(p))
