"""The pelvis tilt error seen by the stance contacts on known ground (issue 14 §1).

Stance contact i, at uᵢ = R rᵢ from the pelvis (world frame, forward kinematics) and resting on ground of height hᵢ,
leaves the residual eᵢ = hᵢ − (p_z + uᵢ,z). For a small world rotation φ missing from R (R_true ≈ Exp(φ)·R) and a
height error δz::

    eᵢ = δz + (φ × uᵢ)_z = δz + φ_x uᵢ,y − φ_y uᵢ,x

Three or more contacts spread in the plane give [δz, φ_x, φ_y] by weighted least squares, with covariance
σ_h² (AᵀWA)⁻¹ (σ_h the contact height noise). The accelerometer alone cannot tell its bias b_a from a tilt of
b_a / g, which puts millimetres between the left and right limbs' clearances; the contacts can.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np


@dataclass
class TiltMeasurement:
    phi_xy: np.ndarray      # (2,) [rad] world rotation about x, y missing from the estimate
    cov: np.ndarray         # (2, 2) [rad²]
    dz_m: float             # height error of the pelvis the same fit gives [m]
    rms_m: float            # residual of the fit [m]


def contact_tilt(u_world: np.ndarray, residual_m: np.ndarray, weight: np.ndarray, noise_m: float,
                 max_tilt_rad: float, min_contacts: int = 3) -> tuple[Optional[TiltMeasurement], str]:
    """Fit of the module doc over the contacts with ``weight`` ≥ 0.5. Returns (measurement, "") or (None, reason):
    fewer than ``min_contacts``, contacts (nearly) on one line, a tilt above ``max_tilt_rad`` or a residual above
    3 ``noise_m`` (a contact is not on the ground it is assumed on: lifted, sliding up an edge, or a wrong map)."""
    w = np.asarray(weight, float).reshape(-1)
    use = (w >= 0.5) & np.isfinite(residual_m) & np.all(np.isfinite(u_world), axis=1)
    if int(use.sum()) < min_contacts:
        return None, f"{int(use.sum())} stance contacts on known ground (< {min_contacts})"
    u = np.asarray(u_world, float)[use]
    e = np.asarray(residual_m, float)[use]
    W = np.diag(w[use])
    A = np.column_stack([np.ones(len(u)), u[:, 1], -u[:, 0]])
    N = A.T @ W @ A
    if np.linalg.cond(N) > 1e6:
        return None, "stance contacts on one line"
    Ni = np.linalg.inv(N)
    x = Ni @ A.T @ W @ e
    rms = float(np.sqrt(np.mean((A @ x - e) ** 2)))
    if float(np.hypot(x[1], x[2])) > max_tilt_rad:
        return None, f"tilt {np.degrees(np.hypot(x[1], x[2])):.2f} deg > max"
    if rms > 3.0 * noise_m:
        return None, f"contact heights off the plane by {1e3 * rms:.1f} mm"
    return TiltMeasurement(phi_xy=x[1:3].copy(), cov=noise_m ** 2 * Ni[1:3, 1:3], dz_m=float(x[0]), rms_m=rms), ""
