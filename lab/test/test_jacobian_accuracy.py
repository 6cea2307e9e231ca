"""Short run of the Jacobian accuracy harness: dead-reckoning error must shrink with the loop rate."""

import numpy as np

from jacobian_accuracy import evaluate, simulate


def test_harness_error_decreases_with_rate():
    log = simulate(seconds_per_move=0.6, own_model=True, settle_s=0.3)
    res = evaluate(log, rates_hz=(5, 50, 100))
    assert res[100]["mean"] < res[50]["mean"] < res[5]["mean"]
    # first-order integration: halving the step roughly halves the error; at 100 Hz it is small
    assert res[100]["mean"] < 0.02
    assert res[100]["com_mean"] < 0.01
    assert np.all(np.isfinite(log["q"]))
