"""The stance set ``s_p`` (thesis §4.3.1) from one of three sources (issue 4 §4, thesis §5.4 open question):

* ``planned``  — the gait's planned stance (the limb that swings is out);
* ``sensed``   — contacts sensed in touch (MuJoCo ground truth here; on the robot: inferred from joint efforts),
  optionally with a minimum normal force;
* ``velocity`` — thesis §4.3.2: a limb is in stance when its (un-normalised) horizontal speed is below
  ``ratio`` (0.1) × the maximum horizontal speed that limb reaches over the trajectory.

All functions return boolean masks in the limb order LW, RW, LK, RK.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["StanceError", "velocity_stance", "sensed_stance", "StanceSource", "STANCE_SOURCES"]

STANCE_SOURCES = ("planned", "sensed", "velocity")


class StanceError(ValueError):
    """Bad stance input (shape, NaN, unknown source)."""


def velocity_stance(traj: ArrayLike, ratio: float = 0.1) -> NDArray[np.bool_]:
    """Thesis §4.3.2 velocity rule on a world-frame trajectory ``traj`` (N, L, 3) (or (N, L, 2)).

    ``ẋ_i = x_{i+1} − x_i`` (horizontal, un-normalised, the last sample repeats the previous difference); limb l is in
    stance at sample i when ``|ẋ_i| < ratio · max_i |ẋ_i|``. A limb that never moves is in stance throughout.
    """
    x = np.asarray(traj, float)
    if x.ndim != 3 or x.shape[0] < 2 or x.shape[2] < 2:
        raise StanceError(f"traj must be (N>=2, L, 2|3), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise StanceError("traj contains NaN/inf")
    if not (0.0 < ratio < 1.0):
        raise StanceError("ratio must be in (0, 1)")
    v = np.linalg.norm(np.diff(x[:, :, :2], axis=0), axis=2)  # (N-1, L)
    v = np.vstack([v, v[-1:]])
    vmax = v.max(axis=0)
    out = v < ratio * np.where(vmax > 0, vmax, np.inf)
    out[:, vmax == 0] = True
    return out


def sensed_stance(in_touch: ArrayLike, force_n: ArrayLike | None = None, min_force_n: float = 0.0) -> NDArray:
    """Sensed contacts: in touch and (if given) normal force ≥ ``min_force_n``."""
    t = np.asarray(in_touch, bool).reshape(-1)
    if force_n is None or min_force_n <= 0:
        return t.copy()
    f = np.asarray(force_n, float).reshape(-1)
    if f.shape != t.shape or not np.all(np.isfinite(f)):
        raise StanceError("force_n must be finite and match in_touch")
    return t & (f >= min_force_n)


class StanceSource:
    """Select the stance set per control tick from ``source`` ∈ {planned, sensed, velocity}.

    ``velocity`` needs the whole target trajectory (the thesis applied the rule offline to the captured data):
    pass ``traj`` (N, 4, 3) sampled every ``dt_s`` from t = 0.  Fallback: if the chosen source yields fewer than
    three limbs, the planned stance is used for the support polygon (a two-point support has no area) and the
    tick is counted in :attr:`fallbacks`.
    """

    def __init__(self, source: str = "planned", traj: ArrayLike | None = None, dt_s: float = 0.01,
                 ratio: float = 0.1, min_force_n: float = 5.0):
        if source not in STANCE_SOURCES:
            raise StanceError(f"unknown stance source {source!r}; choose from {STANCE_SOURCES}")
        self.source = source
        self.dt = float(dt_s)
        self.min_force_n = float(min_force_n)
        self.vel = None
        if source == "velocity":
            if traj is None:
                raise StanceError("the velocity rule needs the target trajectory")
            self.vel = velocity_stance(traj, ratio)
        self.fallbacks = 0
        self.ticks = 0

    def __call__(self, t: float, planned: ArrayLike, in_touch: ArrayLike | None = None,
                 force_n: ArrayLike | None = None) -> NDArray[np.bool_]:
        planned = np.asarray(planned, bool)
        self.ticks += 1
        if self.source == "planned":
            s = planned.copy()
        elif self.source == "sensed":
            if in_touch is None:
                raise StanceError("sensed stance needs in_touch")
            s = sensed_stance(in_touch, force_n, self.min_force_n)
        else:
            i = int(np.clip(round(t / self.dt), 0, len(self.vel) - 1))
            s = self.vel[i].copy()
        if s.sum() < 3:
            self.fallbacks += 1
            s = planned.copy()
        return s
