"""graph_trial: recorded graph messages -> TrialLog -> thesis metrics (§4.1.2/§4.1.3), its failure modes, the CLI's
bad-goal path, and (when the embedded stack is importable) one live crawl cycle through the real action client."""

import math

import numpy as np
import pytest
import yaml

from atlas_crawl_eval import graph_trial as gt
from atlas_crawl_eval.metrics import MetricError, crawl_metrics, turning_metrics

atlas_description = pytest.importorskip("atlas_description")
JOINT_NAMES = atlas_description.JOINT_NAMES
PITCH = math.radians(75.0)  # on all fours the pelvis is pitched forward: its +z axis points ahead (metrics doc)


def _rot(yaw, pitch=PITCH):
    """R = Rz(yaw) Ry(pitch), built by hand (independent of scipy's quaternion conventions)."""
    cy, sy, cp, sp = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch)
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    return rz @ ry


def _quat_wxyz(yaw, pitch=PITCH):
    # q = qz(yaw) * qy(pitch)
    cz, sz, cp, sp = math.cos(yaw / 2), math.sin(yaw / 2), math.cos(pitch / 2), math.sin(pitch / 2)
    return (cz * cp, -sz * sp, cz * sp, sz * cp)


@pytest.fixture(scope="module")
def model():
    return gt.default_model()


@pytest.fixture(scope="module")
def q_stance():
    """A fixed, non-symmetric joint configuration (so the CoM is off the pelvis axes)."""
    rng = np.random.default_rng(1)
    return rng.uniform(-0.3, 0.3, len(JOINT_NAMES))


def make_recording(pose_fn, q, t_end=14.0, cycles=(3.0, 2.0, 4), pose_hz=250.0, js_hz=100.0, fb_hz=10.0,
                   kind="crawl", support=True, names=JOINT_NAMES, js_offset_s=0.0):
    """Messages as the graph would publish them: poses at pose_hz, joint states at js_hz (offset phase), feedback
    every 1/fb_hz during the cycles timed by the newest pose stamp, the result at the end of the last cycle.
    The 100 Hz grid starts at the later of the first pose and the first joint state (js_offset_s)."""
    t_first, cycle_s, n_cycles = cycles
    rec = gt.GraphRecording(kind=kind)
    tp = np.arange(0.0, t_end + 1e-9, 1.0 / pose_hz)
    for t in tp:
        p, quat = pose_fn(t)
        rec.poses.append((float(t), tuple(p), tuple(quat)))
    for t in np.arange(js_offset_s, t_end, 1.0 / js_hz):
        rec.joints.append((float(t), list(names), list(q)))
    t_res = t_first + n_cycles * cycle_s
    for t in np.arange(t_first, t_res - 1e-9, 1.0 / fb_hz):
        t_pose = float(tp[np.searchsorted(tp, t + 1e-9) - 1])  # newest pose stamp before the feedback
        c = int((t - t_first + 1e-9) // cycle_s)
        rec.feedback.append((t_pose, c, int(((t - t_first) % cycle_s) / cycle_s * 12), "moving:x"))
    rec.goal_sent_t_s = t_first
    rec.result_t_s = t_res
    if support:
        for t in np.arange(0.0, t_end, 0.02):
            rec.support.append((float(t), [True, True, (t % 2) < 1, True]))
    return rec


def straight(v, yaw, z=0.6):
    d = np.array([math.cos(yaw), math.sin(yaw), 0.0])
    return lambda t: (np.array([1.0, -2.0, z]) + v * t * d, _quat_wxyz(yaw))


def test_straight_crawl_metrics_match_the_known_motion(model, q_stance):
    v, yaw = 0.05, math.radians(30.0)
    rec = make_recording(straight(v, yaw), q_stance)
    log, notes = gt.trial_log_from_recording(rec, model)
    assert log.dt_s == pytest.approx(0.01)
    assert notes == []
    m = crawl_metrics(log)
    assert m.n_cycles == 4
    assert m.duration_s == pytest.approx(8.0, abs=1e-9)
    assert m.velocity_m_s == pytest.approx(v, rel=1e-6)
    assert m.distance_per_gait_m == pytest.approx(2.0 * v, rel=1e-6)
    assert m.progress_per_gait_m == pytest.approx(2.0 * v, rel=1e-6)  # along the pelvis-z heading: forward
    assert m.drift_per_gait_m == pytest.approx(0.0, abs=1e-6)
    assert m.turn_per_gait_deg == pytest.approx(0.0, abs=1e-6)
    assert m.edge_samples == 0
    # CoM / contacts = pelvis pose ∘ our FK, with the rotation built independently of the quaternion code
    kin = model.forward(q_stance)
    i = 321
    p, _ = straight(v, yaw)(log.time_s[i])
    r = _rot(yaw)
    np.testing.assert_allclose(log.com_pos_m[i], p + r @ kin.com(), atol=1e-9)
    np.testing.assert_allclose(log.contact_pos_m[i], p + kin.positions(atlas_description.CONTACT_FRAMES) @ r.T,
                               atol=1e-9)
    np.testing.assert_allclose(log.q_rad[i], q_stance, atol=1e-12)
    # the heading the metrics see is the pelvis-z projection = yaw
    assert math.degrees(math.atan2(r[1, 2], r[0, 2])) == pytest.approx(30.0)
    # cycle bookkeeping: -1 before the first feedback and after the result
    assert log.cycle_index[log.time_s < 3.0 - 1e-9].max() == -1
    assert log.cycle_index[log.time_s > 11.0 + 1e-9].max() == -1
    assert set(np.unique(log.cycle_index)) == {-1, 0, 1, 2, 3}
    # support state: measured estimate, zero-order hold; placeholders
    assert log.contact_in_touch[:, 0].all() and not log.contact_in_touch[:, 2].all()
    assert np.array_equal(log.planned_stance, log.contact_in_touch)
    assert np.all(log.contact_force_n == 0) and np.all(np.isnan(log.ground_points_m))
    assert gt.phase_time_s(rec) == {"moving": pytest.approx(8.0, abs=1e-6)}  # first feedback 3.0 -> result 11.0


def test_reposition_phases_are_not_a_gait_cycle(model, q_stance):
    """A Cartesian crawl's reposition steps (feedback phase *:reposition_*, reported as cycle 0) are preparation:
    cycle_index -1 there, so the metrics count the gait cycles only, like the runner that starts in that stance."""
    rec = make_recording(straight(0.05, 0.0), q_stance)
    rec.feedback = [(t, c, k, "moving:reposition_shift_LW" if t < 5.0 else ph) for t, c, k, ph in rec.feedback]
    rec.feedback[5] = rec.feedback[5][:3] + ("waiting_support:reposition_RK_apex",)
    log, _ = gt.trial_log_from_recording(rec, model)
    assert log.cycle_index[log.time_s < 5.0 - 0.05].max() == -1
    m = crawl_metrics(log)
    assert m.n_cycles == 3 and m.duration_s == pytest.approx(6.0, abs=0.02)     # cycles 1-3: 5.0 -> 11.0
    assert m.velocity_m_s == pytest.approx(0.05, rel=1e-3)


def test_the_end_stance_hold_is_not_a_gait_cycle(model, q_stance):
    """The sequencer holds the end stance before the result (feedback phase confirming:*, success.confirm_*): the
    last gait cycle ends where the hold starts."""
    rec = make_recording(straight(0.05, 0.0), q_stance)
    rec.feedback = [f if f[0] < 9.0 else f[:3] + ("confirming:end_stance",) for f in rec.feedback]
    log, _ = gt.trial_log_from_recording(rec, model)
    assert log.cycle_index[(log.time_s > 9.0 + 0.05)].max() == -1
    m = crawl_metrics(log)
    assert m.duration_s == pytest.approx(6.0, abs=0.02)                          # cycles 0-2: 3.0 -> 9.0


def test_backward_crawl_is_negative_progress(model, q_stance):
    yaw = math.radians(-100.0)
    rec = make_recording(straight(-0.03, yaw), q_stance, js_offset_s=0.003)  # grid off the cycle boundaries
    m = crawl_metrics(gt.trial_log_from_recording(rec, model)[0])
    assert m.velocity_m_s == pytest.approx(0.03, rel=1e-6)  # constant speed: exact whatever the boundaries
    assert m.duration_s == pytest.approx(7.99, abs=1e-9)  # boundaries quantised to the grid (3.003 .. 10.993)
    assert m.progress_per_gait_m == pytest.approx(-0.03 * 7.99 / 4, rel=1e-6)


@pytest.mark.parametrize("sign", [1, -1])
def test_turn_on_the_spot_metrics(model, q_stance, sign):
    w = sign * 2 * math.pi / 6.0  # one circle per 6 s
    rec = make_recording(lambda t: (np.array([0.0, 0.0, 0.6]), _quat_wxyz(w * t)), q_stance, kind="turn",
                         t_end=14.0)
    m = turning_metrics(gt.trial_log_from_recording(rec, model)[0])
    assert m.turn_direction == sign
    assert m.total_turn_deg == pytest.approx(sign * 480.0, abs=1e-3)  # 8 s of cycles
    assert m.turn_per_cycle_deg == pytest.approx(sign * 120.0, abs=1e-3)
    assert m.n_circles == 1
    assert m.time_per_circle_s == pytest.approx(6.0, abs=0.011)
    assert m.cycles_per_circle == pytest.approx(3.0, abs=0.01)
    # the CoM circles the pelvis axis: its horizontal offset, shrunk by the Gaussian smoothing of a circle
    r = np.linalg.norm((_rot(0.0) @ model.forward(q_stance).com())[:2])
    assert m.radius_m == pytest.approx(r * math.exp(-0.5 * (abs(w) * 0.5) ** 2), rel=0.02)


def test_out_of_order_and_duplicate_stamps_give_the_same_log(model, q_stance):
    rec = make_recording(straight(0.05, 0.3), q_stance, js_offset_s=0.003)
    ref, _ = gt.trial_log_from_recording(rec, model)
    rng = np.random.default_rng(0)
    shuffled = gt.GraphRecording(**{**rec.__dict__})
    shuffled.poses = [rec.poses[i] for i in rng.permutation(len(rec.poses))] + rec.poses[100:140]
    shuffled.joints = [rec.joints[i] for i in rng.permutation(len(rec.joints))] + rec.joints[:7]
    log, notes = gt.trial_log_from_recording(shuffled, model)
    for k in ("time_s", "pelvis_pos_m", "pelvis_quat_wxyz", "com_pos_m", "q_rad", "cycle_index"):
        np.testing.assert_allclose(getattr(log, k), getattr(ref, k), atol=1e-12, err_msg=k)
    assert any("duplicate" in n for n in notes) and any("out-of-order" in n for n in notes)
    # of equal stamps the LAST received wins
    aligned = make_recording(straight(0.05, 0.3), q_stance)  # grid k/100: pose 500 (2.0 s) is a grid sample
    t, p, quat = aligned.poses[500]
    later = gt.GraphRecording(**{**aligned.__dict__})
    later.poses = aligned.poses + [(t, (p[0] + 0.5, p[1], p[2]), quat)]
    log2, _ = gt.trial_log_from_recording(later, model)
    i = int(np.argmin(np.abs(log2.time_s - t)))
    assert log2.time_s[i] == pytest.approx(t) and log2.pelvis_pos_m[i, 0] == pytest.approx(p[0] + 0.5)


def test_joint_names_are_mapped_by_name_and_unknown_ones_rejected(model, q_stance):
    perm = np.random.default_rng(2).permutation(len(JOINT_NAMES))
    rec = make_recording(straight(0.05, 0.0), q_stance, names=[JOINT_NAMES[i] for i in perm])
    rec.joints = [(t, n, [q_stance[i] for i in perm]) for t, n, _ in rec.joints]
    log, _ = gt.trial_log_from_recording(rec, model)
    np.testing.assert_allclose(log.q_rad[10], q_stance, atol=1e-12)
    rec.joints = [(t, n + ["hokuyo_joint"], q + [0.0]) for t, n, q in rec.joints]
    with pytest.raises(gt.GraphTrialError, match="hokuyo_joint"):
        gt.trial_log_from_recording(rec, model)
    log, _ = gt.trial_log_from_recording(rec, model, ignore_joints=["hokuyo_joint"])
    np.testing.assert_allclose(log.q_rad[10], q_stance, atol=1e-12)


def test_missing_topics_are_clear_errors(model, q_stance):
    rec = make_recording(straight(0.05, 0.0), q_stance)
    no_pose = gt.GraphRecording(**{**rec.__dict__, "poses": []})
    with pytest.raises(gt.GraphTrialError, match="/atlas/pelvis_pose"):
        gt.trial_log_from_recording(no_pose, model)
    no_js = gt.GraphRecording(**{**rec.__dict__, "joints": []})
    with pytest.raises(gt.GraphTrialError, match="/joint_states"):
        gt.trial_log_from_recording(no_js, model)
    partial = gt.GraphRecording(**{**rec.__dict__, "joints": [(t, list(n[:-1]), list(q[:-1]))
                                                               for t, n, q in rec.joints]})
    with pytest.raises(gt.GraphTrialError, match=JOINT_NAMES[-1]):
        gt.trial_log_from_recording(partial, model)
    # no support state: still a log, all False, with a note; no feedback: no cycles -> the metric refuses
    bare = gt.GraphRecording(**{**rec.__dict__, "support": [], "feedback": []})
    log, notes = gt.trial_log_from_recording(bare, model)
    assert not log.contact_in_touch.any() and not log.planned_stance.any()
    assert any("/support_state" in n for n in notes) and any("feedback" in n for n in notes)
    assert np.all(log.cycle_index == -1)
    with pytest.raises(MetricError):
        crawl_metrics(log)


def test_comparison_table_uses_the_action_result(model, q_stance):
    m = gt.compute_metrics(gt.trial_log_from_recording(make_recording(straight(0.05, 0.0), q_stance), model)[0],
                           "crawl_forward")
    rows = dict((q, (a, b)) for q, a, b in gt.comparison_rows(
        "crawl_forward", m, {"distance_m": 0.4, "lateral_drift_m": -0.02, "heading_change_rad": 0.1,
                             "cycles_completed": 4, "duration_s": 8.0}))
    assert rows["velocity [m/s]"] == (pytest.approx(0.05), pytest.approx(math.hypot(0.4, 0.02) / 8.0))
    assert rows["progress/gait [m] (signed)"] == (pytest.approx(0.1), pytest.approx(0.1))
    assert rows["lateral drift, whole goal [m]"] == (pytest.approx(0.0, abs=1e-9), pytest.approx(0.02))
    assert math.isnan(rows["drift/gait [m] (per cycle)"][1])  # the action result has no per-cycle drift
    assert rows["turn/gait [deg]"][1] == pytest.approx(math.degrees(0.1) / 4)
    assert "velocity [m/s]" in gt.format_table("crawl_forward", gt.comparison_rows("crawl_forward", m, None))


def test_cli_bad_goal_exits_2_before_sending(tmp_path, capsys):
    pytest.importorskip("atlas_crawl_msgs")
    out = tmp_path / "o"
    assert gt.main(["crawl", "{cycles: [", "--out", str(out)]) == 2
    assert gt.main(["crawl", "{no_such_field: 1}", "--out", str(out)]) == 2
    assert gt.main(["turn", "[1, 2]", "--out", str(out)]) == 2
    assert "bad goal" in capsys.readouterr().err
    assert not out.exists()


# ------------------------------------------------------------------------------------------------ live (embedded)
def test_live_no_pose_is_reported_not_waited_for():
    """A graph with the /crawl action server but no pose / joint-state publisher: 'unavailable' with the reason,
    and the goal is never sent (the server counts goals)."""
    rclpy = pytest.importorskip("rclpy")
    pytest.importorskip("atlas_crawl_msgs")
    import random
    import threading
    from atlas_crawl_msgs.action import Crawl
    from rclpy.action import ActionServer
    from rclpy.executors import MultiThreadedExecutor
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=random.SystemRandom().randint(201, 230))
    ex = MultiThreadedExecutor(context=ctx)
    server_node = rclpy.create_node("dummy_graph", context=ctx)
    node = rclpy.create_node("graph_trial_test", context=ctx)
    goals = []

    def execute(gh):
        goals.append(gh)
        gh.succeed()
        return Crawl.Result(success=True)

    server = ActionServer(server_node, Crawl, "/crawl", execute)
    for n in (server_node, node):
        ex.add_node(n)
    th = threading.Thread(target=ex.spin, daemon=True)
    th.start()
    try:
        out = gt.run_graph_trial(node, "crawl", _crawl_goal(cycles=1), settle_before_s=2.0, settle_after_s=2.0,
                                 server_timeout_s=20.0, pose_timeout_s=1.0)
    finally:
        server.destroy()
        ex.shutdown(timeout_sec=2.0)
        rclpy.try_shutdown(context=ctx)
        th.join(timeout=2.0)
    assert out.status == "unavailable"
    assert "/atlas/pelvis_pose" in out.reason and "/joint_states" in out.reason
    assert goals == []


def _live_available():
    try:
        import atlas_crawl_mujoco.sim  # noqa: F401
        import rclpy  # noqa: F401
        from atlas_crawl_bringup.stack import Stack  # noqa: F401
    except Exception:
        return False
    return True


@pytest.fixture(scope="module")
def live_stack():
    """The composed embedded graph of the bringup tests' ``ros_fixtures.stack`` (same Stack class, isolated ROS
    domain), but paced at real_time_factor 1 like ``embedded --serve``: at 0 (as fast as possible) the physics runs
    ahead of the ROS messages on a loaded machine and the closed-loop sequencer can abort a key-frame ("did not
    reach ... within ... s (sim time)"), which is the graph's behaviour, not the measurement's."""
    from atlas_crawl_bringup.stack import Stack
    s = Stack(node_params={"mujoco_sim": {"real_time_factor": 1.0}})
    yield s
    s.close()


@pytest.mark.skipif(not _live_available(), reason="embedded stack (rclpy, MuJoCo) not available")
def test_live_one_crawl_cycle_through_the_embedded_graph(live_stack, tmp_path):
    node = live_stack.create_node("graph_trial_test")
    out = gt.run_graph_trial(node, "crawl", _crawl_goal(cycles=1), settle_before_s=2.1, settle_after_s=2.1,
                             server_timeout_s=30.0, pose_timeout_s=30.0, result_timeout_s=300.0)
    assert out.status == "succeeded", out.reason
    rec = out.recording
    assert rec.feedback and rec.support and rec.result_t_s > rec.goal_sent_t_s
    log, notes = gt.trial_log_from_recording(rec)
    m = crawl_metrics(log)
    assert m.n_cycles == 1
    # the thesis metric (smoothed CoM) and the sequencer's own pelvis displacement describe the same motion
    assert m.progress_per_gait_m > 0.05
    assert m.distance_per_gait_m == pytest.approx(abs(out.result["distance_m"]), abs=0.05)
    assert m.duration_s == pytest.approx(out.result["duration_s"], abs=0.5)


def _crawl_goal(**fields):
    from atlas_crawl_controller.nodes.goal_client import make_goal
    return make_goal("crawl", fields)


def test_live_cli_end_to_end_writes_its_outputs(live_stack, tmp_path):
    """The command itself (main), not only run_graph_trial: it once raised NameError on its first print (an
    undefined ``fields``) and no test ran it to the end."""
    out = tmp_path / "cli"
    rc = gt.main(["crawl", "{cycles: 1}", "--out", str(out), "--no-feedback",
                  "--settle-before", "0.5", "--settle-after", "0.5", "--timeout", "300"])
    assert rc == 0, (out / "result.yaml").read_text(encoding="utf-8") if (out / "result.yaml").exists() else rc
    res = yaml.safe_load((out / "result.yaml").read_text(encoding="utf-8"))
    assert res["status"] == "succeeded" and res["goal"] == {"cycles": 1}


def test_contact_scores_compare_the_estimate_with_the_simulator_contacts():
    """A perfect estimate scores MCC 1 and every touchdown on time; one 30 ms late per touchdown is not within 20 ms;
    without the ground-truth topic there is no score (not a made-up one)."""
    from atlas_crawl_eval.graph_trial import GraphRecording, contact_scores
    t = np.arange(0.0, 6.0, 0.01)
    truth = [(float(x), [bool((x + 0.5 * i) % 2.0 > 0.5) for i in range(4)]) for x in t]
    rec = GraphRecording(support=list(truth), contacts_truth=list(truth), goal_sent_t_s=0.0, result_t_s=6.0)
    s = contact_scores(rec)
    assert s["scores"]["all"]["mcc"] == pytest.approx(1.0)
    assert s["touchdown"]["n"] > 0 and s["touchdown"]["within_20ms"] == pytest.approx(1.0)
    late = [(x + 0.03, f) for x, f in truth]
    s = contact_scores(GraphRecording(support=late, contacts_truth=truth, goal_sent_t_s=0.0, result_t_s=6.0))
    assert s["scores"]["all"]["mcc"] < 1.0 and s["touchdown"]["within_20ms"] == pytest.approx(0.0)
    assert contact_scores(GraphRecording(support=truth, goal_sent_t_s=0.0, result_t_s=6.0)) is None


def test_estimate_error_is_measured_at_the_last_estimate():
    from atlas_crawl_eval.graph_trial import GraphRecording, estimate_error
    q = (1.0, 0.0, 0.0, 0.0)
    poses = [(0.1 * k, (0.01 * k, 0.0, 0.6), q) for k in range(101)]
    odom = [(0.1 * k, (0.01 * k + 0.001 * k, 0.0, 0.6), q) for k in range(90)]   # 10 % drift, ends at t = 8.9 s
    e = estimate_error(GraphRecording(poses=poses, odom=odom), path_m=1.0)
    assert e["error_m"] == pytest.approx(0.089) and e["error_pct_of_path"] == pytest.approx(8.9)
    assert e["stamp_gap_s"] == pytest.approx(0.0, abs=1e-9) and e["yaw_error_deg"] == pytest.approx(0.0, abs=1e-9)
    assert estimate_error(GraphRecording(poses=poses), path_m=1.0) is None


@pytest.mark.skipif(not _live_available(), reason="embedded stack (rclpy, MuJoCo) not available")
def test_live_contact_inference_reads_the_slope_from_the_height_map():
    """On a 5° slope the contact inference measures each limb's clearance above the height map's ground
    (``ground_height_source`` map, the default): its stance estimate agrees with the simulator's contacts. Above the
    flat plane z = 0 instead, the uphill limbs look lifted and the downhill ones sunk (session 17, 4 cycles: MCC
    0.90 with the map, 0.23 flat); this fails if the map is not used."""
    from rclpy.parameter import Parameter
    from atlas_crawl_bringup.stack import Stack
    s = Stack(node_params={"mujoco_sim": {"real_time_factor": 1.0, "physics.scene": "slope:angle_deg=5"}},
              pose_source="ground_truth")
    try:
        mcc = {}
        for source in ("map", "flat"):
            assert s.contact.set_parameters([Parameter("ground_height_source", value=source)])[0].successful
            assert s.reset_sim()
            out = gt.run_graph_trial(s.create_node(f"graph_trial_{source}"), "crawl", _crawl_goal(cycles=2),
                                     settle_before_s=1.0, settle_after_s=0.5, server_timeout_s=30.0,
                                     pose_timeout_s=30.0, result_timeout_s=300.0)
            assert out.status == "succeeded", out.reason
            sc = gt.contact_scores(out.recording)
            assert sc is not None
            mcc[source] = sc["scores"]["all"]["mcc"]
        assert mcc["map"] >= 0.6 and mcc["map"] - mcc["flat"] >= 0.3, mcc   # measured 0.79 and 0.23
    finally:
        s.close()
