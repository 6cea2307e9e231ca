"""Storm command (issue 11): abuse the embedded graph the way users and other tools do, and check it never dies.

    python -m atlas_crawl_bringup.storm [--long] [--json out.json]

One graph (MuJoCo + controller + contact inference + gait sequencer) for the whole run, no restart.  Each case
runs while a probe client measures how fast the graph answers (a ChangeState, a GetParameters and an invalid goal,
in turn, every 50 ms: target ≤ 0.2 s wall), and is followed by a fresh 1-cycle Crawl that must succeed.  Cases:

* the five rows of issue 11: NaN pelvis pose at 500 Hz during a Crawl; raw ChangeState requests the current state
  does not allow; a foreign NaN reference during a Crawl; a Cartesian distance goal (long planning); a gait
  parameter naming a FIFO / a missing / an oversized file;
* NaN, ±inf and huge (1e300) values on every topic the graph subscribes to (pelvis pose, joint states, controller
  status, support state, reference);
* every invalid lifecycle transition id (0–9, 77, 255) on every lifecycle node;
* parameter abuse: wrong type, NaN, out of range, unknown name, for every parameter of the sequencer;
* floods: 1000 invalid references/s for 1 s.

Counted: cases, probe requests answered within 0.2 s (and the worst latency), graph deaths (dead executor or a
follow-up Crawl that fails), goals wrongly aborted (a goal that should have succeeded did not), non-finite joint
commands seen on ``/crawl_controller/commands``, and follow-up crawls that fell from the pose a case left the robot
in (then ``/sim/reset`` and one retry: a gait limitation, not a graph death).  Exit 0 when deaths, wrong aborts and non-finite commands are 0.
``--long`` repeats the input abuse with more messages and more parameter values.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, List, Optional

ANSWER_TARGET_S = 0.2
PROBE_PERIOD_S = 0.05


@dataclass
class CaseResult:
    name: str
    ok: bool = True
    notes: List[str] = field(default_factory=list)
    probes: int = 0
    probes_in_time: int = 0
    worst_latency_s: float = 0.0
    wrongly_aborted: int = 0
    follow_up_crawl: str = ""


class Probe:
    """Background client: every PROBE_PERIOD_S one request (ChangeState invalid / GetParameters / invalid goal)."""

    def __init__(self, stack):
        from atlas_crawl_msgs.action import Crawl
        from lifecycle_msgs.srv import ChangeState
        from rcl_interfaces.srv import GetParameters
        from atlas_crawl_controller.nodes.goal_client import SafeActionClient
        self.node = stack.create_node("storm_probe")
        self.crawl = SafeActionClient(self.node, Crawl, "/crawl")
        self.crawl.wait_for_server(timeout_sec=10.0)
        self.bad_goal = Crawl.Goal(cycles=0)
        self.cs = self.node.create_client(ChangeState, "/gait_sequencer/change_state")
        self.gp = self.node.create_client(GetParameters, "/gait_sequencer/get_parameters")
        self.ChangeState, self.GetParameters = ChangeState, GetParameters
        for c in (self.cs, self.gp):
            c.wait_for_service(timeout_sec=10.0)
        self.latencies: List[float] = []
        self._stop = threading.Event()
        self._th: Optional[threading.Thread] = None

    def _one(self, k: int) -> float:
        t0 = time.monotonic()
        if k % 3 == 2:   # goal response time of an invalid goal (rejected in the goal callback)
            fut = self.crawl.send_goal_async(self.bad_goal)
        elif k % 3 == 0:
            req = self.ChangeState.Request()
            req.transition.id = 77
            fut = self.cs.call_async(req)
        else:
            fut = self.gp.call_async(self.GetParameters.Request(names=["rate_hz"]))
        return time.monotonic() - t0 if _answered(fut, 2.0) else math.inf

    def _loop(self):
        k = 0
        while not self._stop.is_set():
            self.latencies.append(self._one(k))
            k += 1
            self._stop.wait(PROBE_PERIOD_S)

    def start(self):
        self.latencies = []
        self._stop.clear()
        self._th = threading.Thread(target=self._loop, daemon=True)
        self._th.start()

    def stop(self) -> List[float]:
        self._stop.set()
        if self._th is not None:
            self._th.join(5.0)
        return list(self.latencies)


def _answered(fut, timeout_s: float) -> bool:
    """Wait (bounded) for a service/goal future; True when it completed."""
    ev = threading.Event()
    fut.add_done_callback(lambda _f: ev.set())
    return ev.wait(timeout_s)


def _publish_for(pub, msgs: List, seconds: float, rate_hz: float):
    t_end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < t_end:
        pub.publish(msgs[i % len(msgs)])
        i += 1
        time.sleep(1.0 / rate_hz)


def bad_values():
    return [math.nan, math.inf, -math.inf, 1e300, -1e300]


def run_storm(stack, long: bool = False, log: Callable[[str], None] = print) -> dict:
    from atlas_crawl_msgs.msg import ContactState, ControllerReference, ControllerStatus, SupportState
    from geometry_msgs.msg import PoseStamped
    from lifecycle_msgs.srv import ChangeState
    from rcl_interfaces.msg import Parameter as PMsg
    from rcl_interfaces.msg import ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from atlas_crawl_controller.nodes import topics
    from atlas_crawl_controller.nodes.goal_client import GoalClient
    from atlas_description import JOINT_NAMES

    node = stack.create_node("storm")
    goals = GoalClient(node, sim_time=stack.sim.sim_time)
    assert goals.wait_for_servers(10.0), "action servers not available"
    probe = Probe(stack)
    nonfinite_cmd = [0]
    node.create_subscription(Float64MultiArray, topics.COMMANDS,
                             lambda m: nonfinite_cmd.__setitem__(0, nonfinite_cmd[0] + (not all(
                                 math.isfinite(v) for v in m.data))), 10)
    results: List[CaseResult] = []
    deaths = [0]
    falls = [0]
    n_msgs = 2000 if long else 300

    def follow_up(res: CaseResult):
        stack.wait_inputs_settled()   # queued bad messages drain (each would rightly abort the crawl)
        rec = goals.run("crawl", {"cycles": 1}, result_timeout_s=120)
        why = getattr(rec.result, "reason", "") or rec.rejection_reason or ""
        if rec.status in ("aborted", "rejected") and ("fell" in why or "robot is down" in why):
            # the case left the robot mid-step and the crawl from there tipped it over: a gait limitation, not a
            # graph death. Counted, then a fresh trial (/sim/reset, a service of the running graph) and retry.
            falls[0] += 1
            res.notes.append(f"follow-up crawl fell ({why[:60]}); /sim/reset and retry")
            stack.reset_sim()
            stack.wait_sim_time(1.5)   # the fall flag clears after fall.clear_s upright (hysteresis)
            rec = goals.run("crawl", {"cycles": 1}, result_timeout_s=120)
        res.follow_up_crawl = rec.status
        if rec.status != "succeeded" or stack.executor_error is not None:
            res.ok = False
            deaths[0] += 1
            res.notes.append(f"follow-up crawl {rec.status}: {getattr(rec.result, 'reason', rec.rejection_reason)}")

    def case(name: str, body: Callable[[CaseResult], None]):
        res = CaseResult(name)
        probe.start()
        try:
            body(res)
        except Exception as e:   # noqa: BLE001 — a failing case is reported, the storm goes on
            res.ok = False
            res.notes.append(f"case raised {type(e).__name__}: {e}")
        lat = probe.stop()
        res.probes = len(lat)
        res.probes_in_time = sum(1 for x in lat if x <= ANSWER_TARGET_S)
        res.worst_latency_s = max(lat) if lat else 0.0
        follow_up(res)
        results.append(res)
        log(f"  {'ok ' if res.ok else 'BAD'} {name}: probes {res.probes_in_time}/{res.probes} within "
            f"{ANSWER_TARGET_S} s (worst {res.worst_latency_s:.3f} s), follow-up crawl {res.follow_up_crawl}"
            + (f"; {'; '.join(res.notes)}" if res.notes else ""))

    # -------------------------------------------------------------------------------- issue 11 row 1
    pose_topic = topics.POSE_ESTIMATE if stack.pose_source == "estimate" else topics.PELVIS_POSE  # what they read

    def nan_pose_during_crawl(res):
        pub = node.create_publisher(PoseStamped, pose_topic, 10)
        bad = PoseStamped()
        bad.pose.position.x = bad.pose.position.y = bad.pose.position.z = math.nan
        bad.pose.orientation.x = bad.pose.orientation.w = math.nan
        fired = threading.Event()

        def start_flood(_fb):
            if not fired.is_set():
                fired.set()
                threading.Thread(target=_publish_for, args=(pub, [bad], 1.0, 500.0), daemon=True).start()
            return False
        rec = goals.run("crawl", {"cycles": 2}, result_timeout_s=120, cancel_when=start_flood)
        if rec.status != "aborted" or "pelvis pose" not in rec.result.reason:
            res.ok = False
            res.notes.append(f"expected abort with the reason, got {rec.status}: {rec.result}")
        time.sleep(1.2)
    case("row 1: NaN pelvis pose at 500 Hz during a Crawl", nan_pose_during_crawl)

    # -------------------------------------------------------------------------------- row 2 + every transition
    def invalid_transitions(res):
        for target in ("gait_sequencer", "contact_inference"):
            cli = node.create_client(ChangeState, f"/{target}/change_state")
            cli.wait_for_service(timeout_sec=10.0)
            for tid in list(range(0, 10)) + [77, 255]:
                if (target, tid) in (("gait_sequencer", 4), ("contact_inference", 4), ("gait_sequencer", 7),
                                     ("contact_inference", 7)):
                    continue   # valid from active (deactivate, shutdown): not abuse
                req = ChangeState.Request()
                req.transition.id = tid
                t0 = time.monotonic()
                fut = cli.call_async(req)
                if not _answered(fut, 5.0):
                    res.ok = False
                    res.notes.append(f"{target} change_state {tid} not answered")
                elif fut.result().success:
                    res.ok = False
                    res.notes.append(f"{target} change_state {tid} succeeded")
                else:
                    dt = time.monotonic() - t0
                    if dt > ANSWER_TARGET_S:
                        res.notes.append(f"{target} {tid} answered in {dt:.3f} s")
    case("row 2: every invalid ChangeState id on every lifecycle node", invalid_transitions)

    # -------------------------------------------------------------------------------- row 3
    def foreign_reference(res):
        pub = node.create_publisher(ControllerReference, topics.REFERENCE, 10)
        sent = threading.Event()

        def inject(_fb):
            if not sent.is_set():
                sent.set()
                for seq in range(1, 60):
                    pub.publish(ControllerReference(sequence_id=seq, sender="storm", mode=1, joint_names=["neck_ay"],
                                                    joint_positions_rad=[math.nan], duration_s=0.5))
            return False
        rec = goals.run("crawl", {"cycles": 1}, result_timeout_s=120, cancel_when=inject)
        if rec.status != "succeeded":
            res.ok = False
            res.wrongly_aborted += 1
            res.notes.append(f"goal {rec.status}: {rec.result.reason}")
    case("row 3: foreign NaN references during a Crawl", foreign_reference)

    # -------------------------------------------------------------------------------- row 4
    def cartesian_distance(res):
        from atlas_crawl_msgs.action import Crawl
        t0 = time.monotonic()
        rec = goals.run("crawl", {"distance_m": 0.3, "method": Crawl.Goal.METHOD_IIK}, cancel_after_s=3.0,
                        result_timeout_s=120)
        res.notes.append(f"Cartesian distance goal {rec.status} after {time.monotonic() - t0:.1f} s "
                         f"({getattr(rec.result, 'reason', rec.rejection_reason)[:80]})")
    case("row 4: Crawl{distance_m: 0.3, METHOD_IIK} (planning), canceled after 3 s", cartesian_distance)

    # -------------------------------------------------------------------------------- row 5
    def file_params(res):
        d = tempfile.mkdtemp(prefix="storm_")
        fifo = os.path.join(d, "fifo.yaml")
        os.mkfifo(fifo)
        big = os.path.join(d, "big.yaml")
        with open(big, "w", encoding="utf-8") as f:
            f.write("#" * (2 << 20))
        cli = node.create_client(SetParameters, "/gait_sequencer/set_parameters")
        cli.wait_for_service(timeout_sec=10.0)
        for value in (fifo, big, os.path.join(d, "missing.yaml"), d, "\x00bad"):
            req = SetParameters.Request(parameters=[PMsg(name="gaits.turn_left", value=ParameterValue(
                type=ParameterType.PARAMETER_STRING, string_value=value))])
            t0 = time.monotonic()
            fut = cli.call_async(req)
            if not _answered(fut, 5.0):
                res.ok = False
                res.notes.append(f"set gaits.turn_left={value!r} not answered")
                continue
            dt = time.monotonic() - t0
            r = fut.result().results[0]
            if r.successful:
                res.ok = False
                res.notes.append(f"gaits.turn_left={value!r} accepted")
            if dt > ANSWER_TARGET_S:
                res.notes.append(f"{os.path.basename(value)} answered in {dt:.3f} s")
    case("row 5: gait parameter naming a FIFO / huge / missing file / directory / NUL", file_params)

    # -------------------------------------------------------------------------------- every subscribed topic
    def topic_abuse(res):
        vals = bad_values()
        poses, jss, sts, sups, refs = [], [], [], [], []
        for v in vals:
            p = PoseStamped()
            p.pose.position.x = v
            p.pose.orientation.w = 1.0
            poses.append(p)
            q = PoseStamped()
            q.pose.orientation.w = v
            poses.append(q)
            js = JointState(name=list(JOINT_NAMES), position=[v] * len(JOINT_NAMES),
                            velocity=[0.0] * len(JOINT_NAMES), effort=[v] * len(JOINT_NAMES))
            jss.append(js)
            jss.append(JointState(name=["x"], position=[1.0, 2.0]))
            sts.append(ControllerStatus(sequence_id=4294967295, sender="gait_sequencer", accepted=False,
                                        reached=True, task_error_m=v, stability_margin_m=v, state=255))
            s = SupportState(stability_margin_m=v, statically_stable=True)
            s.com_projection.x = v
            s.contacts = [ContactState(name="x", in_contact=True, confidence=v) for _ in range(4)]   # ContactState[4]
            sups.append(s)
            refs.append(ControllerReference(sequence_id=1, sender="storm", mode=2, duration_s=v,
                                            contact_targets=[], stance=[True] * 4))
            r = ControllerReference(sequence_id=2, sender="storm", mode=1, joint_names=list(JOINT_NAMES),
                                    joint_positions_rad=[v] * len(JOINT_NAMES), duration_s=1.0)
            refs.append(r)
        refs.append(ControllerReference(sequence_id=3, sender="storm", mode=99, duration_s=1.0))
        per_topic = max(1, n_msgs // 5)
        for msg_type, topic, msgs in ((PoseStamped, pose_topic, poses),
                                      (JointState, topics.JOINT_STATES, jss),
                                      (ControllerStatus, topics.STATUS, sts),
                                      (SupportState, topics.SUPPORT_STATE, sups),
                                      (ControllerReference, topics.REFERENCE, refs)):
            pub = node.create_publisher(msg_type, topic, 10)
            _publish_for(pub, msgs, per_topic / 400.0, 400.0)
        if stack.executor_error is not None:
            res.ok = False
    case("NaN / ±inf / 1e300 on every subscribed topic (pose, joint states, status, support, reference)",
         topic_abuse)

    # -------------------------------------------------------------------------------- parameter abuse
    def param_abuse(res):
        cli = node.create_client(SetParameters, "/gait_sequencer/set_parameters")
        cli.wait_for_service(timeout_sec=10.0)
        names = [k for k in stack.sequencer.params.as_dict()] + ["no_such_parameter"]
        values = [ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=math.nan),
                  ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=-1e300),
                  ParameterValue(type=ParameterType.PARAMETER_STRING, string_value="\u00a7" * 100),
                  ParameterValue(type=ParameterType.PARAMETER_INTEGER, integer_value=-(2 ** 62))]
        if long:
            values += [ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=math.inf),
                       ParameterValue(type=ParameterType.PARAMETER_BOOL, bool_value=True),
                       ParameterValue(type=ParameterType.PARAMETER_BYTE_ARRAY, byte_array_value=[b"\x00"])]
        accepted = []
        orig = {n: stack.sequencer.get_parameter(n).get_parameter_value() for n in names
                if stack.sequencer.has_parameter(n)}
        for n in names:
            for v in values:
                fut = cli.call_async(SetParameters.Request(parameters=[PMsg(name=n, value=v)]))
                if not _answered(fut, 5.0):
                    res.ok = False
                    res.notes.append(f"{n} not answered")
                elif fut.result().results[0].successful:
                    accepted.append(n)
        # a bool for a bool parameter or a string for a free string parameter can be valid: only report
        if accepted:
            res.notes.append(f"accepted (valid values for their type): {sorted(set(accepted))}")
            fut = cli.call_async(SetParameters.Request(parameters=[PMsg(name=n, value=orig[n])
                                                                   for n in sorted(set(accepted))]))
            _answered(fut, 5.0)   # restore, so the follow-up crawl runs as configured
    case("parameter abuse on every gait_sequencer parameter", param_abuse)

    # -------------------------------------------------------------------------------- flood
    def flood(res):
        pub = node.create_publisher(ControllerReference, topics.REFERENCE, 10)
        bad = ControllerReference(sequence_id=5, sender="flood", mode=1, joint_names=["nope"],
                                  joint_positions_rad=[0.0], duration_s=1.0)
        secs = 3.0 if long else 1.0
        t_sim0, t0 = stack.sim.sim_time(), time.monotonic()
        time.sleep(secs)
        base = (stack.sim.sim_time() - t_sim0) / max(time.monotonic() - t0, 1e-9)
        n0 = stack.sim.core.rejected_references
        t_sim0, t0 = stack.sim.sim_time(), time.monotonic()
        _publish_for(pub, [bad], secs, 1000.0)
        rtf = (stack.sim.sim_time() - t_sim0) / max(time.monotonic() - t0, 1e-9)
        res.notes.append(f"sim speed {rtf:.2f} s/wall s during the flood vs {base:.2f} without; "
                         f"{stack.sim.core.rejected_references - n0} references rejected and counted")
    case("flood: 1000 invalid references/s", flood)

    summary = {
        "cases": len(results),
        "cases_ok": sum(r.ok for r in results),
        "probes": sum(r.probes for r in results),
        "probes_within_0.2s": sum(r.probes_in_time for r in results),
        "worst_latency_s": max((r.worst_latency_s for r in results), default=0.0),
        "graph_deaths": deaths[0] + (stack.executor_error is not None),
        "goals_wrongly_aborted": sum(r.wrongly_aborted for r in results),
        "follow_up_falls": falls[0],
        "nonfinite_commands": nonfinite_cmd[0],
        "results": [asdict(r) for r in results],
    }
    return summary


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--long", action="store_true", help="more messages and parameter values per case")
    ap.add_argument("--json", help="write the summary here")
    args = ap.parse_args(argv)
    from atlas_crawl_bringup.stack import Stack
    w0 = time.monotonic()
    stack = Stack()
    try:
        print(f"graph up in {time.monotonic() - w0:.1f} s; storm{' (long)' if args.long else ''}:", flush=True)
        s = run_storm(stack, long=args.long, log=lambda m: print(m, flush=True))
    finally:
        stack.close()
    print(f"\nstorm summary ({time.monotonic() - w0:.0f} s wall): cases {s['cases']} ({s['cases_ok']} ok); probe "
          f"requests answered within {ANSWER_TARGET_S} s: {s['probes_within_0.2s']}/{s['probes']} (worst "
          f"{s['worst_latency_s']:.3f} s); graph deaths {s['graph_deaths']}; goals wrongly aborted "
          f"{s['goals_wrongly_aborted']}; non-finite commands {s['nonfinite_commands']}; follow-up crawls that "
          f"fell from the pose a case left (then /sim/reset) {s['follow_up_falls']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(s, f, indent=2, default=str)
    return 0 if s["graph_deaths"] == 0 and s["goals_wrongly_aborted"] == 0 and s["nonfinite_commands"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
