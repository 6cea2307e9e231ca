"""Trial log container: the 100 Hz ``.npz`` written by the MuJoCo backend (atlas_crawl_mujoco).

The key set is a contract with the backend (issue 3 §4). Limb order everywhere: LW, RW, LK, RK
(``atlas_description.CONTACT_FRAMES``). Positions are world-frame metres, REP 103 (z up).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np

LIMB_NAMES = ("LW", "RW", "LK", "RK")
N_LIMBS = 4
N_JOINTS = 28
N_GROUND_POINTS = 16

# name -> (trailing shape, dtype kind) ; leading dim is N (samples)
ARRAY_KEYS = {
    "time_s": ((), "f"),
    "pelvis_pos_m": ((3,), "f"),
    "pelvis_quat_wxyz": ((4,), "f"),
    "com_pos_m": ((3,), "f"),
    "contact_pos_m": ((N_LIMBS, 3), "f"),
    "contact_in_touch": ((N_LIMBS,), "b"),
    "contact_force_n": ((N_LIMBS,), "f"),
    "planned_stance": ((N_LIMBS,), "b"),
    "ground_points_m": ((None, 3), "f"),  # (N, 16, 3) padded with NaN; any padding width accepted
    "q_rad": ((N_JOINTS,), "f"),
    "cycle_index": ((), "i"),
    "keyframe_index": ((), "i"),
}
META_KEYS = {
    "meta_gait": str,
    "meta_loop_mode": str,
    "meta_cycles": int,
    "meta_seed": int,
    "meta_fell": bool,
    "meta_fall_time_s": float,
}


class TrialLogError(ValueError):
    """A trial log is missing keys or has inconsistent shapes / non-finite values where not allowed."""


@dataclass
class TrialLog:
    time_s: np.ndarray
    pelvis_pos_m: np.ndarray
    pelvis_quat_wxyz: np.ndarray
    com_pos_m: np.ndarray
    contact_pos_m: np.ndarray
    contact_in_touch: np.ndarray
    contact_force_n: np.ndarray
    planned_stance: np.ndarray
    ground_points_m: np.ndarray
    q_rad: np.ndarray
    cycle_index: np.ndarray
    keyframe_index: np.ndarray
    meta_gait: str = ""
    meta_loop_mode: str = ""
    meta_cycles: int = 0
    meta_seed: int = 0
    meta_fell: bool = False
    meta_fall_time_s: float = float("nan")
    source: str = field(default="", compare=False)

    def __post_init__(self):
        self.validate()

    @property
    def n(self) -> int:
        return int(self.time_s.shape[0])

    @property
    def dt_s(self) -> float:
        return float(np.median(np.diff(self.time_s))) if self.n > 1 else float("nan")

    def validate(self) -> None:
        n = None
        for key, (shape, kind) in ARRAY_KEYS.items():
            a = np.asarray(getattr(self, key))
            if kind == "b":
                a = a.astype(bool)
            elif kind == "i":
                if a.size and not np.all(np.isfinite(a)):
                    raise TrialLogError(f"{key}: non-finite values")
                a = a.astype(np.int64)
            else:
                a = a.astype(np.float64)
            setattr(self, key, a)
            if n is None:
                n = a.shape[0] if a.ndim else -1
            if a.ndim != 1 + len(shape) or a.shape[0] != n:
                raise TrialLogError(f"{key}: shape {a.shape}, expected ({n}, {', '.join(map(str, shape))})")
            for got, want in zip(a.shape[1:], shape):
                if want is not None and got != want:
                    raise TrialLogError(f"{key}: shape {a.shape}, expected (N, {shape})")
            if kind == "f" and key != "ground_points_m" and not np.all(np.isfinite(a)):
                raise TrialLogError(f"{key}: non-finite values")
        if n is None or n < 2:
            raise TrialLogError(f"a trial log needs at least 2 samples, got {n}")
        if np.any(np.diff(self.time_s) <= 0):
            raise TrialLogError("time_s must be strictly increasing")
        qn = np.linalg.norm(self.pelvis_quat_wxyz, axis=1)
        if np.any(np.abs(qn - 1.0) > 1e-3):
            raise TrialLogError("pelvis_quat_wxyz must be unit quaternions (w, x, y, z)")
        self.meta_gait = str(self.meta_gait)
        self.meta_loop_mode = str(self.meta_loop_mode)
        self.meta_cycles = int(self.meta_cycles)
        self.meta_seed = int(self.meta_seed)
        self.meta_fell = bool(self.meta_fell)
        self.meta_fall_time_s = float(self.meta_fall_time_s)

    # ------------------------------------------------------------------ io
    @classmethod
    def load(cls, path) -> "TrialLog":
        path = Path(path)
        with np.load(path, allow_pickle=False) as z:
            missing = [k for k in ARRAY_KEYS if k not in z.files]
            if missing:
                raise TrialLogError(f"{path}: missing keys {missing}")
            kw = {k: z[k] for k in ARRAY_KEYS}
            for k, typ in META_KEYS.items():
                if k in z.files:
                    v = z[k]
                    kw[k] = typ(v.item() if v.ndim == 0 else v)
        return cls(**kw, source=str(path))

    def save(self, path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "source"}
        np.savez_compressed(path, **data)
        return path
