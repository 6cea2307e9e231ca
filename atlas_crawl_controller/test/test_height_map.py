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
