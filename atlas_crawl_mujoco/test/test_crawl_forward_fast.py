"""crawl_forward_fast (Crawl GAIT_DIAGONAL): the dynamic diagonal-pair crawl in MuJoCo, and check_gaits skipping it.

Measured (seed 0, 2 part-loop cycles, run_gait.run): see the assertions' comments; the thesis-protocol numbers are
in the script's header (python -m atlas_crawl_eval.evaluate --behaviour crawl_forward_fast --loop part|full).
"""


def test_fast_crawl_2_cycles_moves_forward_without_falling():
    from atlas_crawl_mujoco.run_gait import run
    r = run("crawl_forward_fast", 2, "part", quiet=True)
    assert not r["fell"]
    assert r["along_m"] >= 0.5               # measured +0.852 m in 3.23 s, 0 falls (static crawl_forward: ~0.75 m)
    assert r["final_pelvis_z_m"] > 0.45      # measured 0.540 m: still on all fours, not on the torso


def test_check_gaits_skips_dynamic_scripts_with_a_reason():
    from atlas_crawl_controller.keyframes import load_script
    from atlas_crawl_mujoco.check_gaits import skip_reason
    assert "two contacts" in skip_reason(load_script("crawl_forward_fast"))
    assert skip_reason(load_script("crawl_forward")) == ""


def test_check_gaits_skips_the_dynamic_script_explicitly():
    import io

    from atlas_crawl_mujoco.check_gaits import check
    skipped, out = {}, io.StringIO()
    worst = check(["crawl_forward_fast"], out=out, skipped=skipped)
    assert "crawl_forward_fast" not in worst
    assert "static_stability: false" in skipped["crawl_forward_fast"]
    assert "SKIPPED" in out.getvalue()
