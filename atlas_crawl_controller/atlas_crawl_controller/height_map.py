"""A received height map (atlas_crawl_msgs/HeightMap) as a plain, checked object (issue 13 §2).

``HeightMap.from_fields`` rejects a malformed map with a reason (HeightMapError) and changes nothing;
``height_at`` interpolates bilinearly and answers NaN off the map or next to an unknown cell, so a consumer falls
back to "blind" (flat-ground) placement there; ``fresh`` says whether the map is recent enough to use at all.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["GroundFit", "HeightMap", "HeightMapError", "fit_plane"]


class HeightMapError(ValueError):
    """A height map that cannot be used (the message says why)."""


def fit_plane(xy, z):
    """Least-squares plane :math:`z = a x + b y + d` through the points ``xy`` (N, 2), ``z`` (N,) (N >= 3):
    (a, b, d, RMS of the heights about it)."""
    A = np.c_[np.asarray(xy, float).reshape(-1, 2), np.ones(len(z))]
    coef, *_ = np.linalg.lstsq(A, z, rcond=None)
    res = z - A @ coef
    return float(coef[0]), float(coef[1]), float(coef[2]), float(np.sqrt(np.mean(res ** 2)))


@dataclass(frozen=True)
class GroundFit:
    """The least-squares plane :math:`z = a + b x + c y` through the known cells of a disc of the map."""
    tilt_rad: float        # angle between the plane's normal and the vertical: atan(hypot(b, c))
    roughness_m: float     # RMS of the cells' heights about the plane
    n_cells: int


@dataclass(frozen=True)
class HeightMap:
    stamp_s: float
    resolution_m: float
    origin_xy: np.ndarray      # (2,) centre of cell (0, 0)
    heights: np.ndarray        # (size_y, size_x), NaN = unknown

    @classmethod
    def from_fields(cls, stamp_s: float, resolution_m: float, size_x: int, size_y: int, origin_x_m: float,
                    origin_y_m: float, heights_m) -> "HeightMap":
        if not (math.isfinite(resolution_m) and resolution_m > 0):
            raise HeightMapError(f"resolution_m must be finite and > 0, got {resolution_m}")
        if not (0 < size_x <= 4096 and 0 < size_y <= 4096):
            raise HeightMapError(f"size must be 1..4096 cells per side, got {size_x} x {size_y}")
        if not (math.isfinite(origin_x_m) and math.isfinite(origin_y_m) and math.isfinite(stamp_s)):
            raise HeightMapError("origin and stamp must be finite")
        h = np.asarray(heights_m, dtype=float)
        if h.size != size_x * size_y:
            raise HeightMapError(f"{h.size} heights for a {size_x} x {size_y} grid")
        if np.any(np.isinf(h)) or np.nanmax(np.abs(h), initial=0.0) > 1e3:
            raise HeightMapError("heights must be finite (NaN = unknown) and within ±1 km")
        return cls(float(stamp_s), float(resolution_m), np.array([origin_x_m, origin_y_m], float),
                   h.reshape(size_y, size_x))

    def fresh(self, now_s: float, max_age_s: float) -> bool:
        return 0.0 <= now_s - self.stamp_s <= max_age_s

    def height_at(self, x: float, y: float) -> float:
        """Bilinear ground height at (x, y); NaN off the map or where a neighbouring cell is unknown."""
        return float(self.heights_at(np.array([[x, y]], float))[0])

    def heights_at(self, xy) -> np.ndarray:
        """:meth:`height_at` for many points: ``xy`` (N, 2) -> (N,)."""
        xy = np.asarray(xy, float).reshape(-1, 2)
        fx = (xy[:, 0] - self.origin_xy[0]) / self.resolution_m
        fy = (xy[:, 1] - self.origin_xy[1]) / self.resolution_m
        ny, nx = self.heights.shape
        out = np.full(len(xy), np.nan)
        ok = (fx >= 0.0) & (fx <= nx - 1) & (fy >= 0.0) & (fy <= ny - 1)
        if not ok.any():
            return out
        fx, fy = fx[ok], fy[ok]
        if nx < 2 or ny < 2:           # a one-cell-wide map: nearest cell
            out[ok] = self.heights[np.rint(fy).astype(int), np.rint(fx).astype(int)]
            return out
        ix = np.minimum(fx.astype(int), nx - 2)
        iy = np.minimum(fy.astype(int), ny - 2)
        ax, ay = fx - ix, fy - iy
        H = self.heights
        out[ok] = ((1 - ay) * ((1 - ax) * H[iy, ix] + ax * H[iy, ix + 1])
                   + ay * ((1 - ax) * H[iy + 1, ix] + ax * H[iy + 1, ix + 1]))
        return out

    def ground_fit(self, centre_xy, radius_m: float, min_cells: int = 10):
        """:class:`GroundFit` of the known cells whose centres lie within ``radius_m`` of ``centre_xy``; None with
        fewer than ``min_cells`` of them (off the map, unknown ground) or a non-finite centre."""
        c = np.asarray(centre_xy, float).reshape(-1)[:2]
        if not (np.all(np.isfinite(c)) and math.isfinite(radius_m) and radius_m > 0):
            return None
        ny, nx = self.heights.shape
        x = self.origin_xy[0] + self.resolution_m * np.arange(nx)
        y = self.origin_xy[1] + self.resolution_m * np.arange(ny)
        X, Y = np.meshgrid(x, y)
        sel = np.isfinite(self.heights) & ((X - c[0]) ** 2 + (Y - c[1]) ** 2 <= radius_m ** 2)
        n = int(sel.sum())
        if n < max(3, min_cells):
            return None
        a, b, _d, rms = fit_plane(np.c_[X[sel] - c[0], Y[sel] - c[1]], self.heights[sel])
        return GroundFit(float(math.atan(math.hypot(a, b))), rms, n)
