"""Run a key-frame gait script in MuJoCo physics and print distance, heading change, drift, falls, min margin.

    python -m atlas_crawl_mujoco.run_gait crawl_forward --cycles 10 --loop part --log out.npz --video out.mp4

Metrics printed here are quick first-order ones (the thesis definitions, §4.1.3, without smoothing; the full
evaluation with the Gaussian smoothing is atlas_crawl_eval's job): distance = |Δ CoM xy|, per cycle; velocity =
distance / time; drift = sideways CoM displacement perpendicular to the initial heading, per cycle; turn = pelvis
heading change (horizontal projection of the pelvis z axis, as atlas_crawl_eval), per cycle; min margin = smallest signed distance of the CoM projection to the *measured* support
polygon (floor contacts of the planned stance limbs) during tripod phases.
"""
from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from atlas_crawl_controller.keyframes import load_script
from atlas_crawl_controller.player import KeyframePlayer

from .kin import support_margin
from .logger import Logger
from .sim import AtlasSim


def crawl_heading_rad(sim: AtlasSim) -> float:
    """Heading for crawl gaits (the project's single definition, pelvis z projection): ``AtlasSim.heading_rad``."""
    return sim.heading_rad()


def start_state(sim: AtlasSim, script, start_pose=None):
    """Reset the sim into the script's start pose: named pose / first key-frame of a gait, settled 1 s."""
    pose = start_pose or script.start_pose
    from atlas_crawl_controller.keyframes import named_pose
    q, quat = named_pose(pose) if pose else (script.keyframes[0].q, script.start_quat_wxyz)
    sim.reset(q, base_quat_wxyz=quat)
    sim.step(1000)


def run(script_name, cycles=1, loop="full", seed=0, video=None, realtime=False, viewer=False, log=None,
        reverse=False, time_scale=1.0, params=None, settle_s=1.0, start_pose=None, quiet=False, sim=None):
    """Play a script in physics. Returns a dict of summary metrics (+ 'log' arrays)."""
    script = load_script(script_name)
    sim = sim or AtlasSim(params=params, seed=seed)
    sim.fall_check = "none"
    start_state(sim, script, start_pose)
    sim.fall_check = script.fall_check
    if viewer:
        sim.launch_viewer()
    rec = None
    if video:
        from .render import VideoRecorder
        rec = VideoRecorder(sim, video)
    player = KeyframePlayer(script, loop_mode=loop, cycles=cycles, reverse=reverse, time_scale=time_scale)
    logger = Logger(sim.params["log_rate_hz"])
    player.start(sim.joint_q(), sim.joint_effort(), sim.kp)
    t_start = sim.time
    logger.start(sim.time)
    logger.maybe_sample(sim, player.planned_stance(), 0, 0)
    if rec:
        rec.next_t = sim.time
    com0 = sim.com()
    head0 = crawl_heading_rad(sim)
    fell, fall_t, reason = False, math.nan, ""
    min_margin = math.inf
    lost_samples = tripod_samples = 0
    head_unwrapped, head_prev = 0.0, head0
    dt = sim.dt
    steps_after = int(settle_s / dt)
    while True:
        if not player.done:
            q, _ = player.update(dt)
            sim.set_joint_targets(q)
        else:
            steps_after -= 1
            if steps_after <= 0:
                break
        sim.step(1, realtime=realtime)
        stance = player.planned_stance()
        logger.maybe_sample(sim, stance, player.cycle, player.keyframe_index)
        if rec:
            rec.maybe_capture()
        if int(round(sim.time / dt)) % 10 == 0:
            h = crawl_heading_rad(sim)
            head_unwrapped += (h - head_prev + math.pi) % (2 * math.pi) - math.pi
            head_prev = h
            if stance.sum() == 3 and not fell:
                # static margin of the CoM projection w.r.t. the triangle of the planned stance contact frames
                # (actual positions in physics); stance limbs that lost touch are counted separately
                pts = sim.contact_site_pos()[stance, :2]
                min_margin = min(min_margin, support_margin(sim.com()[:2], pts))
                touch, _ = sim.limb_contacts()
                lost_samples += int(np.any(stance & ~touch))
                tripod_samples += 1
            if not fell:
                f, why = sim.fallen()
                if f:
                    fell, fall_t, reason = True, sim.time, why
                    if not quiet:
                        print(f"FALL at t={sim.time:.2f}s: {why}", file=sys.stderr)
                    break
    T = sim.time - t_start
    com1 = sim.com()
    d = com1[:2] - com0[:2]
    u = np.array([math.cos(head0), math.sin(head0)])
    along = float(np.dot(d, u))
    side = float(u[0] * d[1] - u[1] * d[0])
    ncyc = max(1, player.cycle + 1 if player.done else player.cycle + 1)
    res = dict(gait=script.name, loop=loop, cycles=ncyc, time_s=T, distance_m=float(np.linalg.norm(d)),
               along_m=along, distance_per_cycle_m=float(np.linalg.norm(d)) / ncyc,
               velocity_mps=float(np.linalg.norm(d)) / T if T > 0 else 0.0,
               drift_per_cycle_m=abs(side) / ncyc, drift_total_m=side,
               turn_deg=math.degrees(head_unwrapped), turn_per_cycle_deg=math.degrees(head_unwrapped) / ncyc,
               fell=fell, fall_time_s=fall_t, fall_reason=reason,
               min_tripod_margin_m=min_margin if math.isfinite(min_margin) else float("nan"),
               final_pelvis_z_m=float(sim.pelvis_pose()[0][2]),
               stance_loss_fraction=lost_samples / tripod_samples if tripod_samples else 0.0)
    meta = dict(gait=script.name + ("_reversed" if reverse else ""), loop_mode=loop, cycles=ncyc, seed=seed,
                fell=fell, fall_time_s=fall_t)
    if log:
        logger.save(log, meta)
    res["log"] = logger.arrays(meta)
    if rec:
        res["video"] = rec.close()
    sim.close()
    return res


def format_result(r) -> str:
    return (f"{r['gait']} loop={r['loop']} cycles={r['cycles']} time={r['time_s']:.2f}s "
            f"distance={r['distance_m']:.3f}m (along heading {r['along_m']:+.3f}m, {r['distance_per_cycle_m']:.3f}"
            f" m/cycle) velocity={r['velocity_mps']:.4f}m/s drift={r['drift_per_cycle_m']:.4f}m/cycle "
            f"turn={r['turn_deg']:+.2f}deg ({r['turn_per_cycle_deg']:+.2f}deg/cycle) falls={int(r['fell'])}"
            + (f" ({r['fall_reason']} at {r['fall_time_s']:.2f}s)" if r['fell'] else "")
            + f" min_tripod_margin={r['min_tripod_margin_m']:+.3f}m stance_loss={r['stance_loss_fraction']:.2f}"
            f" pelvis_z={r['final_pelvis_z_m']:.3f}m")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("script", help="gait name (atlas_crawl_controller/gaits/<name>.yaml) or a YAML path")
    ap.add_argument("--cycles", type=int, default=1)
    ap.add_argument("--loop", choices=["full", "part", "once"], default="full")
    ap.add_argument("--reverse", action="store_true", help="play the key-frames in reverse order")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-scale", type=float, default=1.0, help="multiply all key-frame durations")
    ap.add_argument("--start-pose", default=None, help="named pose or gait whose last key-frame is the start")
    ap.add_argument("--video", default=None, help="write an MP4 or GIF")
    ap.add_argument("--realtime", action="store_true")
    ap.add_argument("--viewer", action="store_true", help="passive MuJoCo viewer (needs a display)")
    ap.add_argument("--log", default=None, help="write the 100 Hz log (.npz)")
    a = ap.parse_args(argv)
    r = run(a.script, a.cycles, a.loop, a.seed, a.video, a.realtime, a.viewer, a.log, a.reverse, a.time_scale,
            start_pose=a.start_pose)
    print(format_result(r))
    if a.video:
        print("video:", r["video"])
    return 1 if r["fell"] else 0


if __name__ == "__main__":
    sys.exit(main())
