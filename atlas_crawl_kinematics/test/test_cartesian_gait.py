"""Cartesian gait generator and CoM modulation inputs (issue 4 §3/§4)."""
import numpy as np
import pytest

from atlas_crawl_kinematics.cartesian_gait import CartesianGait, GaitError, GaitParams, margin_point, swing_arc
from atlas_crawl_kinematics.com_modulation import CoMModulatedIIK
from atlas_crawl_kinematics.iik import InvalidTargetError, four_point_stance
from atlas_crawl_kinematics.support import stability_margin, support_polygon

C0 = np.array([[0.62, 0.36, 0.0], [0.62, -0.36, 0.0], [0.0, 0.22, 0.03], [0.0, -0.22, 0.03]])


def test_stance_fixed_and_swing_clears():
    p = GaitParams(stride_m=0.25, t_shift_s=0.3, t_swing_s=0.4)
    g = CartesianGait(C0, [0.3, 0.0], 0.0, p, cycles=2)
    ts, tg, st = g.trajectory(0.01)
    for l in range(4):
        s = st[:, l]
        i = 0
        while i < len(s):  # every stance interval: the contact does not move
            j = i
            while j < len(s) and s[j]:
                j += 1
            if j > i:
                assert np.abs(tg[i:j, l] - tg[i, l]).max() < 1e-12
            i = j + 1
        sw = ~s
        assert sw.any()
        ground = C0[l, 2]
        inner = sw & np.r_[False, sw[:-1]] & np.r_[sw[1:], False]
        assert (tg[inner, l, 2] > ground + 1e-3).all()  # clears the ground inside the swing
    # exactly one limb at a time, order LW, RK, RW, LK, each advances 2 strides
    assert (st.sum(axis=1) >= 3).all()
    np.testing.assert_allclose(tg[-1, :, 0] - C0[:, 0], 0.5, atol=1e-9)
    first_swing = [np.flatnonzero(~st[:, l])[0] for l in range(4)]
    assert np.argsort(first_swing).tolist() == [0, 3, 1, 2]


def test_planned_com_has_margin():
    g = CartesianGait(C0, [0.3, 0.0], 0.0, GaitParams(margin_m=0.04), cycles=1)
    for ph in g.phases:
        if ph[2] == "swing":
            tri = np.delete(ph[4][:, :2], ph[3], axis=0)
            assert stability_margin(ph[7], support_polygon(tri)) >= 0.04 - 1e-3


def test_swing_arc_parabola():
    p = swing_arc([0, 0, 0], [0.2, 0, 0], 0.08, 0.5)
    np.testing.assert_allclose(p, [0.1, 0, 0.08])


def test_margin_point():
    tri = np.array([[0, 0], [1, 0], [0, 1]])
    p = margin_point([2.0, 2.0], tri, 0.1)
    assert stability_margin(p, support_polygon(tri)) >= 0.1 - 1e-2
    np.testing.assert_allclose(margin_point([0.3, 0.3], tri, 0.1), [0.3, 0.3])


def test_bad_inputs_raise():
    with pytest.raises(GaitError):
        CartesianGait(np.full((4, 3), np.nan), [0, 0], 0.0)
    with pytest.raises(GaitError):
        CartesianGait(C0, [0, 0], 0.0, GaitParams(t_swing_s=0.0))
    g = CartesianGait(C0, [0.3, 0.0], 0.0, cycles=1)
    with pytest.raises(GaitError):
        g.sample(float("nan"))


def test_modulated_iik_nan_refused(model):
    ctl = CoMModulatedIIK(model)
    q = four_point_stance(model)
    tg = C0.copy()
    tg[1, 0] = np.nan
    with pytest.raises(InvalidTargetError):
        ctl.solve(q, [0, 0, 0.5], np.eye(3), tg, np.ones(4, bool))
    with pytest.raises(InvalidTargetError):
        ctl.solve(q, [0, 0, 0.5], np.eye(3), C0, np.ones(4, bool), com_desired_xy=[np.inf, 0.0])
    with pytest.raises(InvalidTargetError):
        ctl.solve(q, [0, 0, 0.5], np.eye(3), C0, np.ones(4, bool), root="head")
