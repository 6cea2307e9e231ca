"""Robustness matrix (issue 13 §3): disturbance hooks, CLI checks, and a Ray smoke (1-cell CLI run + the same
results with 1 and 2 workers)."""
import json
import math

import numpy as np
import pytest

from atlas_crawl_eval import robustness as rb


def test_gain_and_mass_disturbances_change_the_model_not_the_players_belief():
    from atlas_crawl_mujoco.sim import AtlasSim
    nominal = AtlasSim()
    sim = AtlasSim()
    rb.Hooks("gains", 0).on_sim(sim)
    a = sim.map.act_id
    assert np.allclose(sim.model.actuator_gainprm[a, 0], 0.8 * nominal.model.actuator_gainprm[a, 0])
    assert np.allclose(sim.model.actuator_biasprm[a, 1:3], 0.8 * nominal.model.actuator_biasprm[a, 1:3])
    assert np.array_equal(sim.kp, nominal.kp)          # the gait player still gets the nominal gains
    heavy = AtlasSim()
    rb.Hooks("mass", 0).on_sim(heavy)
    b = heavy.model.body("utorso").id
    dm = heavy.model.body_mass[b] - nominal.model.body_mass[b]
    assert dm == pytest.approx(0.1 * nominal.model.body_mass[b])
    assert heavy.map.total_mass == pytest.approx(nominal.map.total_mass + dm)


def test_friction_disturbance_is_added_to_the_scene():
    assert rb.scene_for("rough", "friction_low") == "rough:friction=0.5"
    assert rb.scene_for("slope:angle_deg=5", "friction_high") == "slope:angle_deg=5,friction=1.25"
    assert rb.scene_for("rough", "push") == "rough"


class _Player:
    """The KeyframePlayer fields the push hook reads."""
    def __init__(self, script):
        self.script, self.time_scale, self.cycle = script, 1.0, 0


def _pushes(seed, cycles=2):
    from atlas_crawl_mujoco.sim import AtlasSim

    from atlas_crawl_controller import keyframes
    sim = AtlasSim(seed=seed)
    sim.reset("crawl_forward")
    pl = _Player(keyframes.load_script("crawl_forward"))
    period = sum(k.duration_s for k in pl.script.keyframes)
    h = rb.Hooks("push", seed)
    forces = []
    for c in range(cycles):
        pl.cycle = c
        for _ in range(int(period / sim.dt) + 1):
            h.on_step(sim, pl)
            forces.append(np.linalg.norm(sim.data.xfrc_applied[sim.map.pelvis, :3]))
            sim.data.time += sim.dt        # time only: the hook's schedule, not the physics, is under test
            if sim._push_end is not None and sim.data.time >= sim._push_end - 1e-9:
                sim.data.xfrc_applied[:] = 0
                sim._push_end = None
    return h.pushes, np.array(forces), sim.dt, period


def test_push_one_30Ns_push_per_cycle_at_seeded_phase_and_direction():
    p0, f, dt, period = _pushes(0)
    assert len(p0) == 2
    assert f.max() == pytest.approx(rb.PUSH_NS / rb.PUSH_S)
    assert (f > 0).sum() * dt == pytest.approx(2 * rb.PUSH_S, abs=2 * dt)   # 2 pushes x 0.1 s -> 2 x 30 N s
    for _t, jx, jy in p0:
        assert math.hypot(jx, jy) == pytest.approx(rb.PUSH_NS, abs=0.02)
    assert _pushes(0)[0] == p0                    # deterministic per seed
    assert _pushes(1)[0] != p0                    # another seed, other phases and directions
    assert period < p0[1][0] < 2 * period + dt


def test_cli_rejects_bad_input_before_ray_starts(capsys):
    for argv, reason in [(["--scenes", "slope:angle_deg=40"], "out of bounds"),
                         (["--gaits", "moonwalk"], "unknown gait"),
                         (["--cycles", "0"], "must be >= 1"),
                         (["--num-cpus", "2", "--address", "auto"], "not both"),
                         (["--disturbances", "earthquake"], "invalid choice")]:
        with pytest.raises(SystemExit) as e:
            rb.main(argv + ["--out", "/nonexistent/x"])
        assert e.value.code == 2
        assert reason in capsys.readouterr().err


def test_evaluate_rejects_a_bad_scene(capsys, tmp_path):
    from atlas_crawl_eval import evaluate
    with pytest.raises(SystemExit) as e:
        evaluate.main(["--behaviour", "crawl_forward", "--scene", "rough:amplitude_m=1", "--out", str(tmp_path)])
    assert e.value.code == 2 and "amplitude_m=1.0 out of bounds" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())            # nothing ran


def test_ray_smoke_and_same_results_for_1_and_2_workers(tmp_path):
    """CI smoke: 2 tiny cells (1 cycle, 1 seed) through the CLI on 2 local Ray workers, then the same jobs on 1
    worker: identical results (wall time aside)."""
    pytest.importorskip("ray")
    out = tmp_path / "smoke"
    assert rb.main(["--gaits", "crawl_forward", "--scenes", "flat", "tunnel", "--disturbances", "none", "push",
                    "--seeds", "3", "--cycles", "1", "--num-cpus", "2", "--quiet", "--out", str(out)]) == 0
    doc = json.loads((out / "robustness.json").read_text())
    assert len(doc["runs"]) == 4 and len(doc["cells"]) == 4 and doc["num_cpus"] == 2
    r = doc["runs"][0]
    assert (r["scene"], r["disturbance"]) == ("flat", "none")
    assert r["success"] and not r["fell"] and r["speed"] > 0.05 and doc["cells"][0]["speed_pct_flat"] == 100
    assert (out / "heatmap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| crawl_forward | flat | none | 100% of 1 |" in (out / "report.md").read_text()
    pushed = [x for x in doc["runs"] if x["disturbance"] == "push"]
    assert all(len(x["pushes"]) == 1 for x in pushed) and pushed[0]["pushes"] == pushed[1]["pushes"]

    jobs = rb.make_jobs(["crawl_forward"], ["flat", "tunnel"], ["none", "push"], [3], 1, tmp_path / "one")
    one, cpus = rb.run_matrix(jobs, num_cpus=1)
    assert cpus == 1
    assert _norm(one) == _norm(doc["runs"])


def _norm(runs):
    """Runs without wall time, through JSON (tuples -> lists, NaN -> "NaN") so that equal results compare equal."""
    return [json.loads(json.dumps({k: v for k, v in r.items() if k != "wall_s"}), parse_constant=str) for r in runs]


def test_a_generator_gait_runs_in_the_matrix_with_its_pushes_and_the_map():
    """One gait-generator run (1 cycle on the rough floor, pushed): through the same run_one as the key-frame gaits,
    deterministic per seed."""
    job = rb.make_jobs(["gen_forward"], ["rough"], ["push"], [2], 1, "/nonexistent", baseline=False)[0]
    r = rb.run_one(job)
    assert (r["gait"], r["scene"], r["disturbance"]) == ("gen_forward", "rough", "push")
    assert len(r["pushes"]) == 1 and r["success"] and r["speed"] > 0.0 and math.isfinite(r["drift_m"])
    assert _norm([rb.run_one(job)]) == _norm([r])


def test_speed_units():
    assert [rb.speed_unit(g) for g in ("crawl_forward", "turn_right", "gen_backward", "gen_turn_left")] == \
        ["m/gait", "deg/gait", "m/gait", "deg/gait"]


def test_report_lists_a_fallen_run_with_or_without_its_fall_time(tmp_path):
    base = {"gait": "gen_turn_left", "scene": "rubble", "disturbance": "none", "ceiling_touches": 0, "pushes": [],
            "error": "", "speed": float("nan"), "drift_m": float("nan"), "sim_s": 6.0, "success": False, "fell": True}
    runs = [dict(base, seed=0, fall_time_s=4.25), dict(base, seed=1, fall_time_s=None)]
    info = {"command": "x", "commit": "y", "cycles": 1, "num_cpus": 1, "wall_s": 1.0}
    md = rb.write_report(tmp_path, runs, rb.summarize(runs), info).read_text()
    assert "seed 0: fell at 4.25 s" in md and "seed 1: fell;" in md


def test_a_run_that_went_the_wrong_way_is_a_failure(tmp_path):
    """No fall, metrics computed, but the backward crawl slid forward down the slope (speed <= 0 in the gait's
    direction): not a success, and the report says why."""
    base = {"gait": "gen_diagonal_backward", "scene": "slope:direction_deg=180", "disturbance": "none",
            "ceiling_touches": 0, "pushes": [], "error": "", "drift_m": 0.01, "sim_s": 3.0, "fell": False,
            "fall_time_s": None}
    ok, wrong = rb.judge(dict(base, seed=0, speed=0.06)), rb.judge(dict(base, seed=1, speed=-0.006))
    assert ok["success"] and not ok["wrong_way"]
    assert wrong["wrong_way"] and not wrong["success"]
    fell = rb.judge(dict(base, seed=2, speed=float("nan"), fell=True))
    assert not fell["wrong_way"] and not fell["success"]
    info = {"command": "x", "commit": "y", "cycles": 1, "num_cpus": 1, "wall_s": 1.0}
    cells = rb.summarize([ok, wrong])
    assert cells[0]["success_rate"] == 0.5
    md = rb.write_report(tmp_path, [ok, wrong], cells, info).read_text()
    assert "seed 1: wrong way (speed -0.006 m/gait)" in md
