"""N trials with a fresh simulator each (thesis §4.1.2: "The simulator is restarted after each trial").

Everything that touches the MuJoCo backend is in :func:`run_trial` (the ADAPTER below); the rest of the harness only
sees :class:`~atlas_crawl_eval.trial_log.TrialLog` files.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .trial_log import TrialLog

# behaviour -> candidate (script name, reverse) in order of preference (issue 3 §3 script names)
BEHAVIOUR_SCRIPTS = {
    "crawl_forward": [("crawl_forward", False)],
    # dynamic diagonal-pair crawl (Crawl gait GAIT_DIAGONAL); not statically stable, see its header
    "crawl_forward_fast": [("crawl_forward_fast", False)],
    "crawl_backward": [("crawl_backward", False), ("crawl_forward", True)],  # thesis "Reversing": X_{T-1:0}
    "turn_left": [("turn_left", False)],
    "turn_right": [("turn_right", False)],
    "roll_left": [("roll_to_back_from_left", False), ("roll_left", False)],
    "roll_right": [("roll_to_back_from_right", False), ("roll_right", False)],
}


@dataclass
class TrialConfig:
    behaviour: str
    loop: str = "full"  # full | part (rolling: played once)
    cycles: int = 10
    seed: int = 0
    init_noise_rad: float = 0.01  # seeded uniform joint noise on the start pose (trials differ like the thesis')
    settle_before_s: float = 2.5  # logged rest before the gait (≥ 2 s: the ±200-sample smoothing window)
    settle_after_s: float = 2.5  # logged rest after the gait
    video: str | None = None
    time_scale: float = 1.0
    script_file: str | None = None  # frozen copy of the key-frame script (same script for all N trials)
    video_kwargs: dict | None = None  # VideoRecorder options (size, fps, view)
    video_cost: str = ""  # filled by run_trial: the recorder's measured cost per frame
    sim_params: dict | None = None  # AtlasSim parameter overrides, e.g. {"scene": "rough:seed=3"} (issue 13)
    disturbance: object = None  # optional .on_sim(sim) after the sim is built, .on_step(sim, player) during the gait


class BackendUnavailable(RuntimeError):
    """The MuJoCo backend / gait library is not (yet) importable or lacks a script for the behaviour."""


# ================================================================================================= ADAPTER
# The ONLY place that knows the atlas_crawl_mujoco / atlas_crawl_controller APIs. Written against (2025 state):
#   atlas_crawl_mujoco.sim.AtlasSim(params=None, seed) .reset(q, base_quat_wxyz=, noise_rad=) .step(n) .dt .time
#       .joint_q() .joint_effort() .kp .set_joint_targets(q) .fallen() -> (bool, why) .fall_check .params .close()
#   atlas_crawl_mujoco.logger.Logger(rate_hz).maybe_sample(sim, planned_stance, cycle, keyframe) .arrays(meta)
#   atlas_crawl_mujoco.render.VideoRecorder(sim, path).maybe_capture() .close()
#   atlas_crawl_controller.keyframes.load_script(name), list_gaits(), named_pose(name) -> (q, quat)
#   atlas_crawl_controller.player.KeyframePlayer(script, loop_mode, cycles, reverse, time_scale)
#       .start(q, effort, kp) .update(dt) -> (q, _) .planned_stance() .cycle .keyframe_index .done
# It mirrors atlas_crawl_mujoco.run_gait.run() but logs the settle before/after the gait with cycle_index = -1
# (needed by the cycle segmentation and the smoothing window) and seeds an initial-pose perturbation per trial.
def _backend():
    try:
        from atlas_crawl_controller import keyframes, player
        from atlas_crawl_mujoco import logger, sim
    except Exception as e:  # noqa: BLE001
        raise BackendUnavailable(f"MuJoCo backend not importable: {type(e).__name__}: {e}") from e
    return keyframes, player, logger, sim


def resolve_script(behaviour: str):
    keyframes, *_ = _backend()
    have = set(keyframes.list_gaits())
    for name, rev in BEHAVIOUR_SCRIPTS[behaviour]:
        if name in have:
            return name, rev
    raise BackendUnavailable(f"no key-frame script for {behaviour!r}: tried "
                             f"{[n for n, _ in BEHAVIOUR_SCRIPTS[behaviour]]}, library has {sorted(have)}")


def run_trial(cfg: TrialConfig, log_path) -> TrialLog:
    """Run ONE trial in a fresh AtlasSim, save its 100 Hz log to ``log_path`` (.npz) and return it."""
    keyframes, player_mod, logger_mod, sim_mod = _backend()
    name, reverse = resolve_script(cfg.behaviour)
    script = keyframes.load_script(cfg.script_file or name)
    roll = cfg.behaviour.startswith("roll")
    loop = "once" if roll else cfg.loop
    sim = sim_mod.AtlasSim(params=cfg.sim_params, seed=cfg.seed)  # fresh simulator per trial
    try:
        if cfg.disturbance is not None:
            cfg.disturbance.on_sim(sim)
        pose = getattr(script, "start_pose", None)
        if pose:
            q0, quat0 = keyframes.named_pose(pose)
        else:  # first key-frame with the script's recorded pelvis orientation
            q0 = script.keyframes[0].q
            quat0 = getattr(script, "start_quat_wxyz", None) or (1.0, 0.0, 0.0, 0.0)
        sim.reset(q0, base_quat_wxyz=tuple(float(v) for v in quat0), noise_rad=cfg.init_noise_rad)
        sim.set_joint_targets(q0)  # hold the nominal pose, not the noisy one
        log = logger_mod.Logger(sim.params.get("log_rate_hz", 100.0))
        log.next_t = sim.time
        rec = None
        if cfg.video:
            from atlas_crawl_mujoco.render import VideoRecorder
            rec = VideoRecorder(sim, str(cfg.video), **(cfg.video_kwargs or {}))
            rec.next_t = sim.time
            rec.label = f"{cfg.behaviour} ({loop} loop), settling"
        rest = np.ones(4, dtype=bool)
        dt = sim.dt
        sim.fall_check = "none"
        for _ in range(int(round(cfg.settle_before_s / dt))):
            sim.step(1)
            log.maybe_sample(sim, rest, -1, -1)
            if rec:
                rec.maybe_capture()
        sim.fall_check = getattr(script, "fall_check", "crawl")
        pl = player_mod.KeyframePlayer(script, loop_mode=loop, cycles=cfg.cycles, reverse=reverse,
                                       time_scale=cfg.time_scale)
        pl.start(sim.joint_q(), sim.joint_effort(), sim.kp)
        if rec:
            rec.label = f"{cfg.behaviour}, {cfg.cycles} cycle{'s' if cfg.cycles > 1 else ''} ({loop} loop)"
        fell, fall_t = False, math.nan
        after = int(round(cfg.settle_after_s / dt))
        k = 0
        while after > 0:
            if not pl.done:
                q, _ = pl.update(dt)
                sim.set_joint_targets(q)
                if cfg.disturbance is not None:
                    cfg.disturbance.on_step(sim, pl)
            sim.step(1)
            if pl.done:
                after -= 1
                log.maybe_sample(sim, pl.planned_stance(), -1, -1)
            else:
                log.maybe_sample(sim, pl.planned_stance(), pl.cycle, pl.keyframe_index)
            if rec:
                rec.maybe_capture()
            k += 1
            if k % 10 == 0 and not fell:
                f, _why = sim.fallen()
                if f:
                    fell, fall_t = True, sim.time
                    break
        meta = dict(gait=name + ("_reversed" if reverse else ""), loop_mode=loop, cycles=cfg.cycles, seed=cfg.seed,
                    fell=fell, fall_time_s=fall_t)
        arrays = log.arrays(meta)
        if rec:
            rec.close()
            cfg.video_cost = rec.cost_line()
    finally:
        sim.close()
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(log_path, **arrays)
    return TrialLog.load(log_path)
# ============================================================================================= END ADAPTER


def freeze_script(behaviour: str, out_dir) -> tuple[str, str, bool]:
    """Copy the behaviour's key-frame script to ``out_dir/script/<name>.yaml`` so that all N trials run the same
    file even if the gait library is edited meanwhile. Returns (frozen path, sha256[:12], reverse)."""
    keyframes, *_ = _backend()
    name, reverse = resolve_script(behaviour)
    src = Path(keyframes.script_path(name))
    data = src.read_bytes()
    dst = Path(out_dir) / "script" / src.name
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(data)
    return str(dst), hashlib.sha256(data).hexdigest()[:12], reverse


def run_trials(behaviour: str, loop: str, n_trials: int, cycles: int, out_dir, seed0: int = 0,
               video: bool = False, init_noise_rad: float = 0.01, settle_before_s: float = 2.5,
               settle_after_s: float = 2.5, progress=None, bar=None, video_kwargs=None,
               sim_params=None) -> list[TrialLog]:
    """N trials, fresh simulator each, seeds seed0..seed0+N-1, one frozen copy of the script; logs in
    ``out_dir/logs/trial_XX.npz``; the first trial is filmed if ``video`` (``video_kwargs``: VideoRecorder options).

    ``progress``: callable for the log lines (default: ``bar.write`` or print); ``bar``: an
    ``atlas_crawl_kinematics.progress.Progress`` advanced by one per trial."""
    progress = progress or (bar.write if bar is not None else (lambda msg: print(msg, flush=True)))
    out = Path(out_dir)
    script_file, sha, reverse = freeze_script(behaviour, out)
    progress(f"[{behaviour}/{loop}] script {script_file} sha256 {sha}{' (played in reverse)' if reverse else ''}")
    logs = []
    for i in range(n_trials):
        cfg = TrialConfig(behaviour, loop, cycles, seed0 + i, init_noise_rad, settle_before_s, settle_after_s,
                          video=str(out / "video.mp4") if (video and i == 0) else None, script_file=script_file,
                          video_kwargs=video_kwargs, sim_params=sim_params)
        t0 = time.monotonic()
        if bar is not None:
            bar.set_info(f"{behaviour}/{loop} trial {i + 1}/{n_trials}")
        lg = run_trial(cfg, out / "logs" / f"trial_{i:02d}.npz")
        if bar is not None:
            bar.update(1)
        if cfg.video_cost:
            progress(cfg.video_cost)
        progress(f"[{behaviour}/{loop}] trial {i + 1}/{n_trials} seed {cfg.seed}: {lg.n} samples, "
                 f"{lg.time_s[-1] - lg.time_s[0]:.1f} s sim, {time.monotonic() - t0:.1f} s wall"
                 + (f", FELL at {lg.meta_fall_time_s:.2f} s" if lg.meta_fell else ""))
        logs.append(lg)
    return logs
