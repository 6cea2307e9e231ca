"""Command-line action client for the embedded default — the equivalent of ``ros2 action send_goal``.

    python -m atlas_crawl_bringup.send_goal crawl "{cycles: 10}"
    python -m atlas_crawl_bringup.send_goal crawl "{cycles: 4, direction: DIRECTION_BACKWARD, speed_scale: 1.5}"
    python -m atlas_crawl_bringup.send_goal crawl "{cycles: 10, gait: GAIT_DIAGONAL, loop_mode: LOOP_PART}"
    python -m atlas_crawl_bringup.send_goal turn "{direction: TURN_BY_ANGLE, angle_rad: 1.57}" --cancel-after 5
    python -m atlas_crawl_bringup.send_goal roll "{from_side: SIDE_LEFT, to: TO_BACK}"
    python -m atlas_crawl_bringup.send_goal recover "{}"       # back to the crawl stance from wherever it lies
    python -m atlas_crawl_bringup.send_goal crawl_to "{x_m: 0.5, y_m: 0.0, yaw_rad: 0.0}"   # to a pose (odom frame)

The goal is YAML (flow style, as for ``ros2 action send_goal``); enum fields accept the action's constant names.
Needs a running graph in another process on the same ROS_DOMAIN_ID, e.g. ``python -m atlas_crawl_bringup.embedded
--serve`` (or the launch files on a full ROS install).  Prints feedback (``--no-feedback`` to silence) and the
result; for a rejected goal it prints the reason the sequencer published on /gait_sequencer/goal_rejections (and
checks the goal locally with the same validation first, ``--no-local-check`` to send it anyway).
Exit status: 0 succeeded, 1 rejected/aborted/canceled, 2 timeout / no server.
"""
from __future__ import annotations

import argparse
import math
import sys
import threading

import yaml


def parse_fields(kind: str, text: str) -> dict:
    from atlas_crawl_controller.nodes.goal_client import ACTION_TYPES
    data = yaml.safe_load(text) if text and text.strip() else {}
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValueError(f"goal must be a mapping like \"{{cycles: 2}}\", got {text!r}")
    atype = ACTION_TYPES[kind][0]
    out = {}
    for k, v in data.items():
        if isinstance(v, str):
            if hasattr(atype.Goal, v):          # constant name, e.g. DIRECTION_BACKWARD
                v = getattr(atype.Goal, v)
            elif v.lower() in ("nan", ".nan", "inf", "-inf"):
                v = float(v.lstrip("."))
        out[k] = v
    return out


def goal_from_text(kind: str, text: str):
    """The action goal message for a YAML goal text; raises ValueError with the reason for anything unusable."""
    from atlas_crawl_controller.nodes.goal_client import make_goal
    try:
        return make_goal(kind, parse_fields(kind, text))
    except (ValueError, TypeError, yaml.YAMLError) as e:
        raise ValueError(str(e)) from e


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("action", choices=["crawl", "turn", "roll", "recover", "crawl_to"])
    ap.add_argument("goal", nargs="?", default="{}", help='YAML goal, e.g. "{cycles: 10}"')
    ap.add_argument("--cancel-after", type=float, default=None, help="cancel after this many seconds (wall)")
    ap.add_argument("--timeout", type=float, default=600.0, help="result timeout [s]")
    ap.add_argument("--server-timeout", type=float, default=10.0)
    ap.add_argument("--no-feedback", action="store_true")
    ap.add_argument("--no-local-check", action="store_true")
    args = ap.parse_args(argv)

    from atlas_crawl_controller.nodes.goal_client import GoalClient
    try:
        goal = goal_from_text(args.action, args.goal)
    except ValueError as e:
        print(f"bad goal: {e}", file=sys.stderr)
        return 1
    if not args.no_local_check:
        from atlas_crawl_controller import gait_sequencer as gs
        from atlas_crawl_controller.nodes.gait_sequencer_node import validate_goal
        from atlas_crawl_controller.cartesian import available
        mg, reason = validate_goal(args.action, goal, gs.parameter_set().values(), available())
        if mg is None:
            print(f"goal rejected (local check with the sequencer's default parameters): {reason}")
            return 1

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from atlas_crawl_controller.nodes._common import spin_surviving_entity_races
    rclpy.init()
    node = rclpy.create_node("send_goal")
    ex = SingleThreadedExecutor()
    ex.add_node(node)
    th = threading.Thread(target=spin_surviving_entity_races, args=(ex,), daemon=True)
    th.start()
    code = 2
    try:
        gc = GoalClient(node)
        if not gc.clients[args.action].wait_for_server(timeout_sec=args.server_timeout):
            print(f"action server /{args.action} not available (is the graph running? "
                  f"python -m atlas_crawl_bringup.embedded --serve)", file=sys.stderr)
            return 2
        print(f"sending goal to /{args.action}: {goal}")

        def on_fb(f):
            if args.no_feedback:
                return
            parts = [f"{k}: {round(v, 3) if isinstance(v, float) else v}" for k, v in
                     ((k, getattr(f, k)) for k in f.get_fields_and_field_types() if k != "base_pose")]
            p = f.base_pose.position
            print("feedback: " + ", ".join(parts) + f", pelvis: ({p.x:.3f}, {p.y:.3f}, {p.z:.3f})", flush=True)

        rec = gc.run(args.action, goal=goal, on_feedback=on_fb, cancel_after_s=args.cancel_after,
                     accept_timeout_s=args.server_timeout, result_timeout_s=args.timeout)
        if rec.status == "rejected":
            print(f"goal REJECTED: {rec.rejection_reason}")
            code = 1
        elif rec.status == "timeout":
            print(f"TIMEOUT ({rec.rejection_reason or 'no result'})")
            code = 2
        else:
            print(f"goal {rec.status.upper()}" + (" (cancel requested)" if rec.cancel_sent else ""))
            r = rec.result
            for k in r.get_fields_and_field_types():
                v = getattr(r, k)
                extra = f"  ({math.degrees(v):.1f} deg)" if k.endswith("_rad") else ""
                print(f"  {k}: {v}{extra}")
            code = 0 if rec.status == "succeeded" else 1
    finally:
        ex.shutdown(timeout_sec=2.0)
        th.join(timeout=2.0)
        for c in gc.clients.values() if "gc" in locals() else ():
            c.destroy()
        node.destroy_node()
        rclpy.try_shutdown()
    return code


if __name__ == "__main__":
    sys.exit(main())
