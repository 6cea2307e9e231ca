"""Reliability command (not in the default test suite): N random goal / cancel / preempt sequences from 3 clients.

    python -m atlas_crawl_bringup.reliability [--sequences 1000] [--clients 3] [--seed 0] [--json out.json]

Brings the embedded graph up (MuJoCo + controller + contact inference + gait sequencer, one process), starts
``--clients`` action clients that each loop over random scenarios (complete / cancel / cancel right after
acceptance / preempt with a second goal while one runs / invalid goal) until ``--sequences`` sequences were
started in total, then prints the counts of hangs (a bounded wait that expired), crashes (client exceptions, dead
executor/physics thread) and terminal states, plus the server's own counters.  Exit status 0 when there were no
hangs and no crashes and every accepted goal reached exactly one terminal state.
"""
from __future__ import annotations

import argparse
import json
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sequences", type=int, default=1000)
    ap.add_argument("--clients", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--result-timeout", type=float, default=120.0, help="[s] wall bound per goal = hang threshold")
    ap.add_argument("--json", help="write the summary here")
    args = ap.parse_args(argv)

    from atlas_crawl_controller.nodes.reliability import run_random_clients
    from atlas_crawl_bringup.stack import Stack

    w0 = time.monotonic()
    stack = Stack()
    try:
        print(f"graph up in {time.monotonic() - w0:.1f} s; {args.sequences} sequences from {args.clients} clients",
              flush=True)

        def progress(s):
            print(f"  [{time.monotonic() - w0:6.0f} s] sequences {s['sequences']}, goals {s['goals']}, hangs "
                  f"{s['hangs']}, crashes {s['crashes']}, terminal {s['terminal']}", flush=True)

        s = run_random_clients(stack, n_clients=args.clients, sequences=args.sequences, seed=args.seed,
                               result_timeout_s=args.result_timeout, progress=progress)
        s["sim_time_s"] = stack.sim.sim_time()
        s["fall"] = stack.sim.fall_state()   # ground-truth FallDetector: flag, posture, events
    finally:
        stack.close()
    srv = s["server_counters"]
    consistent = srv["accepted"] == srv["succeeded"] + srv["canceled"] + srv["aborted"]
    print("\nreliability summary")
    print(f"  sequences: {s['sequences']}  goals sent: {s['goals']}  wall: {s['wall_s']:.0f} s  "
          f"sim time: {s['sim_time_s']:.0f} s")
    print(f"  HANGS: {s['hangs']}   CRASHES: {s['crashes']}")
    print(f"  client terminal states: {s['terminal']}")
    print(f"  rejection reasons: {s['rejection_reasons']}")
    print(f"  abort reasons: {s.get('abort_reasons', {})}")
    print(f"  scenarios: {s['scenarios']}")
    print(f"  server counters: {srv} (accepted = succeeded + canceled + aborted: {consistent})")
    fall = s["fall"]
    print(f"  ground-truth falls: {len(fall['events'])} events"
          + "".join(f"; t={e['onset_t']:.1f} s {e['reason']}" for e in fall["events"][:5])
          + f"; at the end: fallen {fall['fallen']} ({fall['reason'] or 'upright'}), posture {fall['posture']}")
    if s["errors"]:
        print(f"  errors: {s['errors']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(s, f, indent=2, default=str)
    return 0 if (s["hangs"] == 0 and s["crashes"] == 0 and consistent) else 1


if __name__ == "__main__":
    sys.exit(main())
