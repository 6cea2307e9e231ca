"""HeightMap: malformed maps rejected with a reason, bilinear lookup exact on planes, NaN off the map."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from atlas_crawl_controller.height_map import HeightMap, HeightMapError


def _plane(a, b, c, n=11, res=0.1, origin=(-0.5, -0.5)):
    xs = origin[0] + res * np.arange(n)
    ys = origin[1] + res * np.arange(n)
    X, Y = np.meshgrid(xs, ys)
    return HeightMap.from_fields(1.0, res, n, n, origin[0], origin[1], (a * X + b * Y + c).ravel())


@settings(max_examples=60, deadline=None)
@given(st.floats(-0.3, 0.3), st.floats(-0.3, 0.3), st.floats(-1, 1), st.floats(-0.5, 0.5), st.floats(-0.5, 0.5))
def test_bilinear_is_exact_on_a_plane(a, b, c, x, y):
    assert _plane(a, b, c).height_at(x, y) == pytest.approx(a * x + b * y + c, abs=1e-9)


def test_off_map_and_unknown_cells_are_nan_and_freshness():
    hm = _plane(0.0, 0.0, 0.1)
    assert math.isnan(hm.height_at(2.0, 0.0))
    h = hm.heights.copy()
    h[5, 5] = np.nan
    hole = HeightMap.from_fields(1.0, 0.1, 11, 11, -0.5, -0.5, h.ravel())
    assert math.isnan(hole.height_at(0.0, 0.0)) and hole.height_at(-0.4, -0.4) == pytest.approx(0.1)
    assert hm.fresh(1.4, 0.5) and not hm.fresh(1.6, 0.5) and not hm.fresh(0.9, 0.5)


@pytest.mark.parametrize("kw,needle", [
    (dict(resolution_m=0.0), "resolution"), (dict(resolution_m=float("nan")), "resolution"),
    (dict(size_x=0), "size"), (dict(heights_m=[0.0] * 5), "heights for"),
    (dict(heights_m=[float("inf")] * 4), "finite"), (dict(origin_x_m=float("nan")), "finite"),
])
def test_malformed_maps_are_rejected_with_a_reason(kw, needle):
    args = dict(stamp_s=0.0, resolution_m=0.1, size_x=2, size_y=2, origin_x_m=0.0, origin_y_m=0.0,
                heights_m=[0.0] * 4)
    args.update(kw)
    with pytest.raises(HeightMapError, match=needle):
        HeightMap.from_fields(**args)


@settings(max_examples=40, deadline=None)
@given(st.floats(-0.3, 0.3), st.floats(-0.3, 0.3), st.floats(-1, 1))
def test_ground_fit_of_a_plane_is_its_tilt_and_no_roughness(a, b, c):
    fit = _plane(a, b, c).ground_fit((0.0, 0.0), 0.4)
    assert fit.tilt_rad == pytest.approx(math.atan(math.hypot(a, b)), abs=1e-9)
    assert fit.roughness_m == pytest.approx(0.0, abs=1e-9)
    assert fit.n_cells == sum(1 for i in range(11) for j in range(11)
                              if (0.1 * i - 0.5) ** 2 + (0.1 * j - 0.5) ** 2 <= 0.4 ** 2 + 1e-12)


def test_ground_fit_roughness_is_the_rms_about_the_plane_and_unknown_cells_are_left_out():
    hm = _plane(0.0, 0.0, 0.0)
    h = hm.heights.copy()
    h[::2, :] += 0.02                 # rows alternate +2 cm / 0 about a level plane
    h[5, 6] = np.nan
    fit = HeightMap.from_fields(1.0, 0.1, 11, 11, -0.5, -0.5, h.ravel()).ground_fit((0.0, 0.0), 10.0)
    z = h[np.isfinite(h)]
    assert fit.n_cells == z.size == 120
    assert fit.roughness_m == pytest.approx(0.01, rel=0.02)     # a ±1 cm square wave about the fitted plane
    assert fit.tilt_rad < 0.01


def test_ground_fit_needs_enough_known_cells_and_a_finite_centre():
    hm = _plane(0.1, 0.0, 0.0)
    assert hm.ground_fit((5.0, 5.0), 0.3) is None          # off the map
    assert hm.ground_fit((0.0, 0.0), 0.1) is None          # 5 cells < min_cells
    assert hm.ground_fit((math.nan, 0.0), 0.4) is None
    assert hm.ground_fit((0.0, 0.0), -1.0) is None
