"""lab/stance_slip.py: stance intervals and their miss / slip from a synthetic log."""
import numpy as np
import pytest

import stance_slip as ss


def test_stance_intervals_are_the_true_runs():
    assert ss.stance_intervals([True, True, False, True, False, False, True]) == [(0, 2), (3, 4), (6, 7)]
    assert ss.stance_intervals([False, False]) == []


def test_slip_rows_measure_miss_slip_height_and_touch():
    n = 10
    t = np.arange(n) * 0.1
    cp = np.zeros((n, 4, 3))
    cp[:, 0, 0] = np.linspace(0.0, 0.09, n)           # LW slides 9 cm in x while in stance
    cp[3:6, 0, 2] = 0.02                               # and lifts 2 cm for three samples
    stance = np.ones((n, 4), bool)
    touch = np.ones((n, 4), bool)
    touch[3:6, 0] = False
    arr = {"time_s": t, "contact_pos_m": cp, "contact_in_touch": touch, "planned_stance": stance}
    planned = np.zeros((4, 3))
    planned[0, :2] = [-0.03, 0.04]                     # planned 5 cm from where LW is at the start
    (r,) = ss.slip_rows(arr, lambda _t: planned, [0])
    assert r["limb"] == "LW" and r["miss_m"] == pytest.approx(0.05)
    assert r["slip_m"] == pytest.approx(0.09) and r["path_m"] == pytest.approx(0.09)
    assert r["z_max_m"] == pytest.approx(0.02) and r["in_touch"] == pytest.approx(0.7)
