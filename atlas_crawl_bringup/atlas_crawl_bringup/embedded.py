"""Embedded-default main job: the whole ROS 2 graph in one process, driven through a real action client.

    python -m atlas_crawl_bringup.embedded [--quick] [--out reports/embedded_demo] [--rtf 0] [--no-bag]

Composes ``mujoco_sim`` (physics + controller core, read → update → write each control period),
``contact_inference`` and ``gait_sequencer`` (lifecycle nodes, configured and activated through their
``change_state`` services) on one SingleThreadedExecutor, then a separate client node runs the demo through the
``/crawl``, ``/turn`` and ``/roll`` actions:

1. stance — wait until the contact inference reports all four limbs down and the CoM inside the polygon;
2. crawl  — Crawl{cycles: N} forward;
3. turn   — Turn{direction: LEFT, cycles: M};
4. crawl  — Crawl{cycles: K, direction: BACKWARD};
5. roll   — Roll{from_side: LEFT, to: BACK} (lie down from the crawl stance, then roll over the left side).

Feedback is printed (throttled), each result in full. An MCAP bag of the run (joint states, pelvis pose/odometry,
ground-truth and estimated support, controller references/status/commands, goal rejections, plus what a replay
needs: /robot_description, /tf, /tf_static, /support_markers, CoM path, contact/margin/speed topics — see
:mod:`atlas_crawl_bringup.robot_bag`) is written next to the report (``<out>/demo.mcap`` and
``<out>/demo_report.md``); open it with the Foxglove layout config/foxglove_layout.json. Exit status: 0 when every
step ended in its expected terminal state, 1 otherwise (the report says which and why).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

STEPS_FULL = [("crawl", {"cycles": 4, "direction": 0, "loop_mode": 1}),
              ("turn", {"direction": 0, "cycles": 2}),
              ("crawl", {"cycles": 2, "direction": 1, "loop_mode": 1}),
              ("roll", {"from_side": 0, "to": 0})]
STEPS_QUICK = [("crawl", {"cycles": 2, "direction": 0, "loop_mode": 1}),
               ("turn", {"direction": 0, "cycles": 1}),
               ("crawl", {"cycles": 1, "direction": 1, "loop_mode": 1}),
               ("roll", {"from_side": 0, "to": 0})]

from .robot_bag import RECORD_TYPES  # noqa: E402  (graph topics recorded as they are; graph_trial uses it too)


def default_params_file() -> str:
    """atlas_crawl_bringup/config/atlas_crawl_mujoco.yaml (source tree or installed share dir)."""
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config",
                        "atlas_crawl_mujoco.yaml")
    if os.path.exists(here):
        return here
    for root in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        p = os.path.join(root, "share", "atlas_crawl_bringup", "config", "atlas_crawl_mujoco.yaml")
        if root and os.path.exists(p):
            return p
    raise FileNotFoundError("atlas_crawl_bringup/config/atlas_crawl_mujoco.yaml not found")


def _fmt_result(kind, r) -> str:
    if r is None:
        return "(no result)"
    f = {k: getattr(r, k) for k in r.get_fields_and_field_types()}
    parts = []
    for k, v in f.items():
        if isinstance(v, float):
            parts.append(f"{k}={v:.3f}" + (f" ({math.degrees(v):.1f} deg)" if k.endswith("_rad") else ""))
        else:
            parts.append(f"{k}={v!r}")
    return ", ".join(parts)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short gaits (2 crawl cycles, 1 turn cycle, 2x speed)")
    ap.add_argument("--out", default=os.path.join(os.getcwd(), "reports", "embedded_demo"))
    ap.add_argument("--rtf", type=float, default=0.0, help="real-time factor (0 = as fast as possible)")
    ap.add_argument("--no-bag", action="store_true", help="do not record the MCAP bag")
    ap.add_argument("--serve", action="store_true",
                    help="only bring the graph up and keep serving the actions (use send_goal from another shell)")
    ap.add_argument("--params-file", default=None, help="ROS 2 parameter file (default: the bringup config)")
    ap.add_argument("--method", default="fusion", choices=["fusion", "height", "velocity", "effort"],
                    help="contact inference method")
    ap.add_argument("--pose-source", default="estimate", choices=["estimate", "ground_truth"],
                    help="pelvis pose the controller, sequencer and contact inference read: the state estimate "
                         "(IMU + leg kinematics; /odom; default) or the simulator's ground truth (for comparison)")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    from atlas_crawl_controller.nodes.goal_client import GoalClient
    from atlas_crawl_bringup.stack import Stack
    from atlas_crawl_msgs.msg import SupportState

    from .mcap_recorder import summarize
    from .robot_bag import open_robot_bag

    steps = STEPS_QUICK if args.quick else STEPS_FULL
    if args.serve:
        return serve(args)
    lines = []

    def say(msg=""):
        print(msg, flush=True)
        lines.append(msg)

    w0 = time.monotonic()
    say(f"atlas_crawl embedded demo: MuJoCo + controller core + contact_inference + gait_sequencer in one process "
        f"({'quick' if args.quick else 'full'}; real_time_factor={args.rtf}, contact method={args.method}, "
        f"pose source={args.pose_source})")
    stack = Stack(node_params={"mujoco_sim": {"real_time_factor": args.rtf},
                               "contact_inference": {"method": args.method}}, isolate=False,
                  params_file=args.params_file or default_params_file(), pose_source=args.pose_source)
    outcomes = []
    ok = True
    rec = None
    try:
        say(f"nodes up and active in {time.monotonic() - w0:.1f} s: "
            + ", ".join(f"{n}={stack.lifecycle[n].state()}" for n in stack.lifecycle))
        client_node = stack.create_node("demo_client")
        bag_path = os.path.join(args.out, "demo.mcap")
        if not args.no_bag:
            rec = open_robot_bag(stack.create_node("mcap_recorder"), bag_path)
        support = {}
        client_node.create_subscription(SupportState, "/support_state", lambda m: support.__setitem__("m", m), 10)
        gc = GoalClient(client_node)
        if not gc.wait_for_servers(20.0):
            raise RuntimeError("action servers /crawl /turn /roll not available")

        # 1) stance
        say(f"\n[1/{len(steps) + 1}] stance: waiting for the support state (all four limbs down, CoM inside the polygon)")
        t0 = time.monotonic()
        while time.monotonic() - t0 < 30.0:
            m = support.get("m")
            if m is not None and all(c.in_contact for c in m.contacts) and m.statically_stable:
                break
            time.sleep(0.05)
        m = support.get("m")
        stance_ok = m is not None and all(c.in_contact for c in m.contacts) and m.statically_stable
        if m is not None:
            say("  contacts " + " ".join(f"{c.name}={'down' if c.in_contact else 'up'}" for c in m.contacts)
                + f"; margin {m.stability_margin_m:.3f} m; statically stable: {m.statically_stable}")
        say(f"  stance {'OK' if stance_ok else 'NOT reached'} at sim time {stack.sim.sim_time():.2f} s")
        outcomes.append(("stance", "succeeded" if stance_ok else "failed", ""))
        ok &= stance_ok

        # 2..) actions
        n_falls = len(stack.sim.fall_state()["events"])
        for i, (kind, fields) in enumerate(steps, start=2):
            say(f"\n[{i}/{len(steps) + 1}] {kind}: sending goal {json.dumps(fields)} to /{kind}")
            last = {"t": 0.0}

            def on_fb(f, kind=kind, last=last):
                now = time.monotonic()
                if now - last["t"] < 1.0:
                    return
                last["t"] = now
                extra = (f" cycle {f.cycle}" if hasattr(f, "cycle") else "") + \
                    (f" margin {f.stability_margin_m:+.3f} m" if hasattr(f, "stability_margin_m") else "")
                p = f.base_pose.position
                say(f"  feedback: {f.phase:<24} kf {f.keyframe:>2}{extra} progress {f.progress:5.1%} "
                    f"pelvis ({p.x:+.3f}, {p.y:+.3f}, {p.z:.3f}) m")

            r = gc.run(kind, fields, on_feedback=on_fb, result_timeout_s=600.0)
            if r.status == "rejected":
                say(f"  REJECTED: {r.rejection_reason}")
            else:
                say(f"  result: {r.status.upper()} in {r.wall_s:.1f} s wall: {_fmt_result(kind, r.result)}")
            outcomes.append((kind, r.status, getattr(r.result, "reason", "") if r.result is not None
                             else r.rejection_reason))
            ok &= r.status == "succeeded"
            # the simulator's ground-truth fall flag (FallDetector on ground truth): a crawl or turn must not fall;
            # a roll lies down by design, so for it the end posture is what counts
            fs = stack.sim.fall_state()
            new_falls, n_falls = fs["events"][n_falls:], len(fs["events"])
            say(f"  ground truth: posture {fs['posture']}, "
                + ("falls: " + "; ".join(f"t={e['onset_t']:.2f} s {e['reason']}" for e in new_falls)
                   if new_falls else "no fall")
                + (" (expected: a roll lies down; its result checks the end posture)" if kind == "roll" and new_falls
                   else ""))
            if kind != "roll" and new_falls:
                ok = False
                outcomes.append((kind, "FELL", new_falls[0]["reason"]))
        fs = stack.sim.fall_state()
        say(f"\nend: sim time {stack.sim.sim_time():.2f} s, wall {time.monotonic() - w0:.1f} s, "
            f"fallen (crawl definition, ground truth): {fs['fallen']} {fs['reason']}; posture {fs['posture']}; "
            f"fall events {len(fs['events'])}; sequencer counters {stack.sequencer.counters}")
    finally:
        if rec is not None:
            rec.close()
        stack.close()
    if rec is not None:
        counts = summarize(bag_path)
        say(f"MCAP bag: {bag_path} ({os.path.getsize(bag_path) / 1e6:.1f} MB) messages per topic: "
            + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    say("\nsummary: " + "; ".join(f"{k}: {s}" + (f" ({why})" if why else "") for k, s, why in outcomes))
    report = os.path.join(args.out, "demo_report.md")
    with open(report, "w", encoding="utf-8") as f:
        f.write("# atlas_crawl embedded demo\n\n```\n" + "\n".join(lines) + "\n```\n")
    print(f"report: {report}")
    return 0 if ok else 1


def serve(args) -> int:
    """Bring the graph up and serve /crawl /turn /roll until Ctrl-C (for send_goal in another shell)."""
    from atlas_crawl_bringup.stack import Stack
    stack = Stack(node_params={"mujoco_sim": {"real_time_factor": args.rtf or 1.0},
                               "contact_inference": {"method": args.method}}, isolate=False,
                  params_file=args.params_file or default_params_file(), pose_source=args.pose_source)
    print(f"serving /crawl /turn /roll on ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID', '0')} "
          f"(real_time_factor {args.rtf or 1.0}, pose source {args.pose_source}); Ctrl-C to stop", flush=True)
    import signal
    import threading
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    while not stop.wait(1.0):
        if stack.executor_error is not None or not stack._thread.is_alive():
            # the executor died (a bug: every callback is guarded): exit non-zero, never serve as a silent zombie
            print(f"executor died:\n{stack.executor_error or '(spin thread ended)'}", file=sys.stderr, flush=True)
            stack.close()
            return 3
    print("stopping", flush=True)
    stack.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
