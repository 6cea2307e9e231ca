"""gen_crawl's --scene / --disturbance build the simulator the robustness matrix builds."""
import numpy as np
import pytest

from atlas_crawl_eval.gen_crawl import make_sim


def test_disturbances_change_the_model_as_the_matrix_does():
    base = make_sim()
    a = base.map.act_id
    weak = make_sim(disturbance="gains")
    np.testing.assert_allclose(weak.model.actuator_gainprm[a, 0], 0.8 * base.model.actuator_gainprm[a, 0])
    np.testing.assert_allclose(weak.model.actuator_biasprm[a, 1:3], 0.8 * base.model.actuator_biasprm[a, 1:3])
    heavy = make_sim(disturbance="mass")
    b = base.model.body("utorso").id
    assert heavy.model.body_mass[b] == pytest.approx(1.1 * base.model.body_mass[b])
    slippery = make_sim(disturbance="friction_low")
    floor = [g for g in range(slippery.model.ngeom) if slippery.model.geom_bodyid[g] == 0]
    assert floor and all(slippery.model.geom_friction[g, 0] == pytest.approx(0.5) for g in floor)
    slope = make_sim(scene="slope:angle_deg=5")
    assert slope.model.nbody == base.model.nbody and not np.array_equal(
        slope.model.geom_quat[[g for g in range(slope.model.ngeom) if slope.model.geom_bodyid[g] == 0]],
        base.model.geom_quat[[g for g in range(base.model.ngeom) if base.model.geom_bodyid[g] == 0]])
    with pytest.raises(ValueError, match="unknown disturbance"):
        make_sim(disturbance="push")
