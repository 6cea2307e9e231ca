"""100 Hz logger of an AtlasSim run → dict of numpy arrays → .npz (keys are a contract with atlas_crawl_eval).

Keys: time_s (N,), pelvis_pos_m (N,3), pelvis_quat_wxyz (N,4), com_pos_m (N,3), contact_pos_m (N,4,3)
[LW,RW,LK,RK], contact_in_touch (N,4) bool, contact_force_n (N,4), planned_stance (N,4) bool, ground_points_m
(N,16,3) NaN-padded, q_rad (N,28), cycle_index (N,) int, keyframe_index (N,) int, and scalars meta_gait (str),
meta_loop_mode (str), meta_cycles (int), meta_seed (int), meta_fell (bool), meta_fall_time_s (float, NaN if none).
"""
from __future__ import annotations

import numpy as np

from .sim import MAX_GROUND_POINTS

LOG_KEYS = ("time_s", "pelvis_pos_m", "pelvis_quat_wxyz", "com_pos_m", "contact_pos_m", "contact_in_touch",
            "contact_force_n", "planned_stance", "ground_points_m", "q_rad", "cycle_index", "keyframe_index")
META_KEYS = ("meta_gait", "meta_loop_mode", "meta_cycles", "meta_seed", "meta_fell", "meta_fall_time_s")


class Logger:
    def __init__(self, rate_hz: float = 100.0):
        self.period = 1.0 / rate_hz
        self.t0 = self.next_t = 0.0
        self.k = 0
        self.rows = {k: [] for k in LOG_KEYS}

    def start(self, t0: float):
        self.t0 = self.next_t = float(t0)
        self.k = 0

    def maybe_sample(self, sim, planned_stance=None, cycle: int = 0, keyframe: int = 0):
        if sim.time + 1e-6 >= self.next_t:
            self.sample(sim, planned_stance, cycle, keyframe)
            self.k += 1
            self.next_t = self.t0 + self.k * self.period

    def sample(self, sim, planned_stance=None, cycle: int = 0, keyframe: int = 0):
        r = self.rows
        pos, quat = sim.pelvis_pose()
        touch, force = sim.limb_contacts()
        r["time_s"].append(sim.time)
        r["pelvis_pos_m"].append(pos)
        r["pelvis_quat_wxyz"].append(quat)
        r["com_pos_m"].append(sim.com())
        r["contact_pos_m"].append(sim.contact_site_pos())
        r["contact_in_touch"].append(touch)
        r["contact_force_n"].append(force)
        r["planned_stance"].append(np.ones(4, bool) if planned_stance is None else np.asarray(planned_stance, bool))
        r["ground_points_m"].append(sim.ground_points(MAX_GROUND_POINTS))
        r["q_rad"].append(sim.joint_q())
        r["cycle_index"].append(int(cycle))
        r["keyframe_index"].append(int(keyframe))

    def arrays(self, meta: dict | None = None) -> dict:
        out = {}
        dtypes = {"contact_in_touch": bool, "planned_stance": bool, "cycle_index": np.int64,
                  "keyframe_index": np.int64}
        shapes = {"time_s": (0,), "pelvis_pos_m": (0, 3), "pelvis_quat_wxyz": (0, 4), "com_pos_m": (0, 3),
                  "contact_pos_m": (0, 4, 3), "contact_in_touch": (0, 4), "contact_force_n": (0, 4),
                  "planned_stance": (0, 4), "ground_points_m": (0, MAX_GROUND_POINTS, 3), "q_rad": (0, 28),
                  "cycle_index": (0,), "keyframe_index": (0,)}
        for k in LOG_KEYS:
            v = self.rows[k]
            out[k] = np.array(v, dtype=dtypes.get(k, float)) if v else np.zeros(shapes[k], dtypes.get(k, float))
        meta = meta or {}
        out["meta_gait"] = np.array(str(meta.get("gait", "")))
        out["meta_loop_mode"] = np.array(str(meta.get("loop_mode", "full")))
        out["meta_cycles"] = np.array(int(meta.get("cycles", 0)))
        out["meta_seed"] = np.array(int(meta.get("seed", 0)))
        out["meta_fell"] = np.array(bool(meta.get("fell", False)))
        out["meta_fall_time_s"] = np.array(float(meta.get("fall_time_s", np.nan)))
        return out

    def save(self, path: str, meta: dict | None = None) -> dict:
        arr = self.arrays(meta)
        np.savez(path, **arr)
        return arr
