import inspect

import pytest

from atlas_crawl_eval import metrics, params, run_trials


def test_yaml_defaults_match_code_defaults():
    p = params.load_params()
    assert p["slip_min_duration_s"] == inspect.signature(metrics.slip_metrics).parameters["min_duration_s"].default
    assert p["heading_source"] == inspect.signature(metrics.trial_metrics).parameters["heading_source"].default
    cfg = run_trials.TrialConfig("crawl_forward")
    assert (p["init_noise_rad"], p["settle_before_s"], p["settle_after_s"]) == (
        cfg.init_noise_rad, cfg.settle_before_s, cfg.settle_after_s)


def test_bad_overrides_raise():
    with pytest.raises(ValueError, match="unknown parameter"):
        params.load_params(overrides={"sigma": 3})
    with pytest.raises(ValueError, match="outside bounds"):
        params.load_params(overrides={"settle_before_s": 0.5})  # < the smoothing half window
    with pytest.raises(ValueError, match="not one of"):
        params.load_params(overrides={"heading_source": "pelvis_y"})
