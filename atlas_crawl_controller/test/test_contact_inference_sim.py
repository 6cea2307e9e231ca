"""Contact estimators against MuJoCo ground truth on a short recorded crawl (plain Python stack, no ROS)."""
import numpy as np
import pytest

pytest.importorskip("mujoco")

from atlas_crawl_controller.contact_inference_eval import evaluate, record_run  # noqa: E402


@pytest.fixture(scope="module")
def log():
    t, pos, eff, truth, outcome = record_run("crawl_forward", cycles=1, speed=2.0, rate_hz=100.0)
    assert outcome is not None and outcome.status == "succeeded", outcome
    return t, pos, eff, truth


def test_ground_truth_has_swing_and_stance(log):
    truth = log[3]
    assert truth.any(axis=0).all() and (~truth).any(axis=0).all()   # every limb both touches and lifts


@pytest.mark.parametrize("method,min_f1", [("height", 0.8), ("velocity", 0.75), ("effort", 0.75)])
def test_estimators_agree_with_ground_truth(log, method, min_f1):
    res = evaluate(*log)[method]["all"]
    assert res["f1"] >= min_f1, res
    assert np.isfinite(res["precision"]) and np.isfinite(res["recall"])
