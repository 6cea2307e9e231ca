"""gen_crawl's --scene / --disturbance build the simulator the robustness matrix builds; its arc measurement."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


@settings(max_examples=40, deadline=None)
@given(cx=st.floats(-5, 5), cy=st.floats(-5, 5), r=st.floats(0.2, 5.0), a0=st.floats(-3.1, 3.1),
       span=st.floats(0.3, 6.2))
def test_fit_circle_reads_back_the_circle_of_points_on_an_arc(cx, cy, r, a0, span):
    from atlas_crawl_eval.gen_crawl import fit_circle
    a = a0 + np.linspace(0.0, span, 11)
    c, rr = fit_circle(np.c_[cx + r * np.cos(a), cy + r * np.sin(a)])
    assert rr == pytest.approx(r, rel=1e-6, abs=1e-6) and np.allclose(c, [cx, cy], atol=1e-5 * max(1.0, r))


def test_arc_radius_samples_one_phase_per_cycle_and_ignores_the_sway():
    """A pelvis on a 1.5 m circle, swaying ±5 cm across its path once per 5.6 s cycle: the per-cycle samples give
    the radius back; bad inputs are refused."""
    from atlas_crawl_eval.gen_crawl import arc_radius, command_for, fit_circle
    T, v, R = 5.6, 0.035, 1.5
    t = np.arange(0.0, 10 * T + 0.5, 0.01)
    s = np.clip(t - 0.5, 0.0, None) * v
    sway = 0.05 * np.sin(2 * np.pi * (t - 0.5) / T)
    rad = R - sway
    xy = np.c_[rad * np.sin(s / R), R - rad * np.cos(s / R)]
    stance = np.ones((len(t), 4), bool)
    stance[t >= 0.5, 0] = False                        # "lifting" from 0.5 s on
    arr = {"time_s": t, "pelvis_pos_m": np.c_[xy, np.zeros(len(t))], "planned_stance": stance}
    assert arc_radius(arr, T) == pytest.approx(R, rel=1e-3)
    assert abs(fit_circle(xy[t >= 0.5])[1] / R - 1.0) > 2e-3          # all samples: the sway biases the fit
    cmd = command_for("arc", 0.035, 0.0, -2.0)
    assert cmd.vx_m_per_s == pytest.approx(0.035) and cmd.wz_rad_per_s == pytest.approx(-0.0175)
    for bad in (0.0, math.inf, math.nan):
        with pytest.raises(ValueError):
            command_for("arc", 0.035, 0.0, bad)
    with pytest.raises(ValueError):
        fit_circle([[0.0, 0.0], [1.0, 0.0]])


def test_progress_along_the_commanded_direction_flags_a_crawl_that_went_the_wrong_way():
    """A backward crawl that slid forward down a slope has a thesis velocity (|displacement| / time) but must be
    flagged; a turn on the spot has no direction to check."""
    from atlas_crawl_eval.gen_crawl import progress_along
    assert progress_along("backward", -0.134, 0.46) == pytest.approx((0.134 / 0.46, False))
    v, wrong = progress_along("backward", 0.036, 0.46)
    assert v < 0 and wrong
    v, wrong = progress_along("forward", -0.01, 0.6)
    assert v < 0 and wrong
    assert progress_along("forward", 0.2, 0.5) == pytest.approx((0.4, False))
    for mode in ("turn", "arc"):    # an arc of 0.5 m turns past 90 deg in 10 cycles: its start heading says nothing
        v, wrong = progress_along(mode, -0.3, 0.5)
        assert math.isnan(v) and not wrong
    assert progress_along("forward", float("nan"), 0.5)[1] is True


def test_video_films_every_trial(tmp_path):
    """``--video`` writes one mp4 per trial (it used to be accepted and ignored)."""
    from atlas_crawl_mujoco.render import select_gl_backend
    if select_gl_backend() is None:
        pytest.skip("no offscreen GL backend")
    from atlas_crawl_eval.gen_crawl import main
    assert main(["--modes", "forward", "--cycles", "1", "--trials", "1", "--video", "--out", str(tmp_path)]) == 0
    mp4 = tmp_path / "forward_seed0.mp4"
    assert mp4.is_file() and mp4.stat().st_size > 10_000
