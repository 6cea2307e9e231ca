"""Fall detection latency through the ROS graph (issue 14 §3 "within 100 ms of the onset"):

    python -m atlas_crawl_bringup.fall_latency [--pushes 10] [--seed 0] [--impulse 120] [--rtf 1.0]

Brings the embedded graph up (MuJoCo + controller + contact inference + gait sequencer, one process).  Per push
(seeded): ``/sim/reset``, a Crawl{cycles: 4} goal through a real action client, and a sideways pelvis push of
``--impulse`` N·s (left or right) at a random time in its first two cycles.  For every push that tips the robot
over it compares the gait sequencer's fall flag (FallDetector on the pose it reads: the state estimate by default,
``--pose-source ground_truth`` for ``/atlas/pelvis_pose``; samples taken at their stamps) with the simulator's own fall onset (the same detector on ground truth), reports when the goal was aborted
(sequencer clock: includes the graph's message and executor delays, which grow with the machine's load) and checks
it ABORTED with "fell: ...".  Exit status 0 when every fall was flagged within 100 ms and every fallen goal aborted
with "fell".
"""
from __future__ import annotations

import argparse
import sys
import threading
import time

import numpy as np

LIMIT_S = 0.1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pushes", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--impulse", type=float, default=120.0, help="[N·s] sideways push")
    ap.add_argument("--pose-source", default="estimate", choices=["estimate", "ground_truth"])
    ap.add_argument("--rtf", type=float, default=1.0,
                    help="simulator real-time factor (0 = as fast as possible: the graph's processing delays then "
                         "count several times over in sim time)")
    a = ap.parse_args(argv)
    if a.pushes < 1 or not a.impulse > 0 or not a.rtf >= 0:
        ap.error("need --pushes >= 1, --impulse > 0 and --rtf >= 0")
    from std_srvs.srv import Trigger

    from atlas_crawl_controller.nodes import topics
    from atlas_crawl_controller.nodes.goal_client import GoalClient

    from .stack import Stack
    rng = np.random.default_rng(a.seed)
    stack = Stack(node_params={"mujoco_sim": {"real_time_factor": a.rtf}}, pose_source=a.pose_source)
    lat, react, rows = [], [], []
    try:
        node = stack.create_node("fall_latency_client")
        gc = GoalClient(node)
        reset = node.create_client(Trigger, topics.SIM_RESET)
        if not gc.wait_for_servers(20.0) or not reset.wait_for_service(timeout_sec=20.0):
            raise RuntimeError("graph not available")
        for i in range(a.pushes):
            if not stack.reset_sim(20.0):                           # (on the estimate: until it has aligned)
                raise RuntimeError("/sim/reset failed")
            if not stack.wait_sim_time(1.5):                        # settle; the sequencer's flag clears
                raise RuntimeError("sim time stalled")
            t_push = float(rng.uniform(0.3, 9.0))
            side = float(rng.choice([-1.0, 1.0]))
            t0 = stack.sim.sim_time()

            def push(t0=t0, t_push=t_push, side=side):
                while stack.sim.sim_time() - t0 < t_push:
                    time.sleep(0.002)
                stack.sim.push([0.0, side * a.impulse, 0.0])
            stack.sequencer._seq.last_fall_abort_t = None
            th = threading.Thread(target=push, daemon=True)
            th.start()
            rec = gc.run("crawl", {"cycles": 4}, result_timeout_s=300)
            th.join(60)
            fs = stack.sim.fall_state()
            det = stack.sequencer._seq.fall_detector.state
            reason = rec.result.reason if rec.result is not None else rec.rejection_reason
            row = dict(push_t_s=t_push, side=side, status=rec.status, reason=reason, gt_fell=bool(fs["events"]))
            if fs["events"]:
                row["latency_s"] = float(det.flagged_t - fs["events"][0]["onset_t"]) if det.fallen else None
                act = getattr(stack.sequencer._seq, "last_fall_abort_t", None)
                row["reaction_s"] = float(act - fs["events"][0]["onset_t"]) if act is not None else None
                row["aborted_fell"] = rec.status == "aborted" and reason.startswith("fell: ")
                if row["latency_s"] is not None:
                    lat.append(row["latency_s"])
                if row["reaction_s"] is not None:
                    react.append(row["reaction_s"])
            rows.append(row)
            print(f"push {i:2d}: {'left ' if side > 0 else 'right'} {a.impulse:.0f} N·s at {t_push:4.2f} s -> "
                  f"{rec.status}" + (f"; ground-truth onset {fs['events'][0]['onset_t']:.3f} s, sequencer flag "
                                     f"+{row['latency_s'] * 1e3:.0f} ms (pose stamps), goal aborted at +{row['reaction_s'] * 1e3:.0f} ms "
                                     f"(sequencer clock)" if row.get("latency_s") is not None else
                                     ("; ground truth fell, sequencer did NOT flag" if fs["events"] else "; no fall"))
                  + (f"; reason: {reason[:70]}" if reason else ""), flush=True)
    finally:
        stack.close()
    falls = [r for r in rows if r["gt_fell"]]
    ok = [r for r in falls if r.get("latency_s") is not None and 0 <= r["latency_s"] <= LIMIT_S and r["aborted_fell"]]
    print(f"\n{len(rows)} pushes (real_time_factor {a.rtf}), {len(falls)} falls; flagged within {LIMIT_S * 1e3:.0f} ms and ABORTED 'fell': "
          f"{len(ok)}/{len(falls)}" + (f"; flag latency median {np.median(lat) * 1e3:.0f} ms, max {max(lat) * 1e3:.0f} ms"
                                       if lat else "")
          + (f"; goal aborted after median {np.median(react) * 1e3:.0f} ms, max {max(react) * 1e3:.0f} ms" if react
             else ""))
    return 0 if falls and len(ok) == len(falls) else 1


if __name__ == "__main__":
    sys.exit(main())
