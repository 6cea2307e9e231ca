"""Short CoM-modulated Cartesian crawl in MuJoCo physics (issue 4 §4): quasi-static, 1 cycle."""
import numpy as np
import pytest

from atlas_crawl_kinematics.cartesian_gait import CartesianGait, GaitParams
from atlas_crawl_kinematics.iik import InvalidTargetError
from atlas_crawl_mujoco.iik_crawl import (AtlasSim, TrackConfig, robot_model, start_stance, track,
                                          tripod_phase_margins)


@pytest.mark.xfail(strict=True, reason="not met yet (measured: no fall, but min tripod margin -0.030 m in one "
                   "tripod phase; physics tracking of the CoM target lags); ~120 s under load 17")
def test_modulated_crawl_keeps_margin_and_advances():
    model = robot_model()
    sim = AtlasSim()
    home, _ = start_stance(sim, model)
    c0 = sim.com()[:2].copy()
    plan = CartesianGait(sim.contact_site_pos(), c0, 0.0, GaitParams(stride_m=0.2, t_shift_s=1.0, t_swing_s=1.0),
                         cycles=1)
    arr, st, summ = track(sim, model, plan, TrackConfig(com_modulation=True, rest_s=0.5), home, quiet=True)
    assert not summ["fell"], summ["fall_reason"]
    ph = tripod_phase_margins(arr)
    assert len(ph) == 4
    assert min(p["min_margin_m"] for p in ph) > 0.0
    assert arr["com_pos_m"][-1, 0] - c0[0] > 0.1


def test_nan_target_refused():
    model = robot_model()
    from atlas_crawl_kinematics.com_modulation import CoMModulatedIIK
    from atlas_crawl_kinematics.iik import four_point_stance
    tg = np.zeros((4, 3))
    tg[2, 2] = np.nan
    with pytest.raises(InvalidTargetError):
        CoMModulatedIIK(model).solve(four_point_stance(model), [0, 0, 0.5], np.eye(3), tg, np.ones(4, bool))
