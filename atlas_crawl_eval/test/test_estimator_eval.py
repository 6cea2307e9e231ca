"""The state-estimator benchmark harness on a short physics run (the figures themselves are benchmark output:
python -m atlas_crawl_eval.estimator_eval)."""
import math

from atlas_crawl_eval import estimator_eval as ee


def test_one_crawl_cycle_estimate_stays_close_and_metrics_compare():
    r = ee.run("crawl_forward", 1, seed=1)
    assert r.est_valid.any() and not r.est_valid[0]          # nothing before the alignment ends
    d = ee.drift_figures(r)
    assert d["path_m"] > 0.3
    assert d["drift_pct"] < 4.0 and abs(d["yaw_error_final_deg"]) < 1.0 and abs(d["z_error_final_m"]) < 0.02
    cmp_ = ee.metric_comparison(r)
    assert set(cmp_) == set(ee.CRAWL_KEYS)
    g, e, rel = cmp_["velocity_m_s"]
    assert g > 0.05 and math.isfinite(e) and rel < 0.1


def test_the_loop_mode_is_the_players_and_a_bad_one_is_refused():
    """--loop-mode part plays the gait's partial loop (the log says so); anything else is refused with the reason."""
    import pytest
    r = ee.run("crawl_forward_fast", 1, seed=0, loop_mode="part", settle_after_s=0.5)
    assert r.gt.meta_loop_mode == "part" and r.est_valid.any()
    with pytest.raises(ValueError, match="loop_mode must be full or part"):
        ee.run("crawl_forward_fast", 1, loop_mode="half")
