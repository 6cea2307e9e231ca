"""Weighted regularised pseudo-inverse (thesis §4.2.1, Eq. 4.8–4.10) and the inverse-mass joint weighting.

Minimising ``‖x* − x − J Δq‖²_C + ‖Δq‖²_W`` gives (thesis Eq. 4.10, both forms; the printed first form has a typo,
``JᵀC⁻¹`` for ``JᵀC``)::

    J♯ = (Jᵀ C J + W)⁻¹ Jᵀ C  =  W⁻¹ Jᵀ (J W⁻¹ Jᵀ + C⁻¹)⁻¹.

The second ("12×12") form needs only an m×m solve (m = task rows, 12 for four contacts); we factor
``A = J W⁻¹ Jᵀ + C⁻¹`` (symmetric positive definite when ``C⁻¹ ≻ 0``) by Cholesky and never form an explicit inverse.
Thesis values: ``C⁻¹ = 1e-3 · I``; ``W`` diagonal = mass moved by each joint, its inverse normalised to sum to one.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import cho_factor, cho_solve

__all__ = [
    "PinvError",
    "inverse_mass_weights",
    "weighted_pinv",
    "weighted_pinv_apply",
    "weighted_pinv_primal",
    "nullspace_projector",
]

#: thesis §4.2.1: C⁻¹ = 0.001 · I₁₂
THESIS_C_INV = 1e-3


class PinvError(ValueError):
    """Bad input to the pseudo-inverse (shape mismatch, non-finite, non-positive weights)."""


def inverse_mass_weights(mass_moved: ArrayLike) -> NDArray[np.float64]:
    """Diagonal of ``W⁻¹`` from the per-joint mass moved (thesis §4.2.1): ``w⁻¹_j = (1/m_j) / Σ_k (1/m_k)``.

    Joints near the pelvis move more mass, so they are more expensive (smaller ``w⁻¹``).  Use
    ``RobotModel.mass_moved(root)`` for ``mass_moved``.
    """
    m = np.asarray(mass_moved, dtype=float).reshape(-1)
    if m.size == 0 or not np.all(np.isfinite(m)) or np.any(m <= 0.0):
        raise PinvError("mass_moved must be finite and positive")
    inv = 1.0 / m
    return inv / inv.sum()


def _c_inv_matrix(c_inv: float | ArrayLike, m: int) -> NDArray[np.float64]:
    c = np.asarray(c_inv, dtype=float)
    if c.ndim == 0:
        return float(c) * np.eye(m)
    if c.ndim == 1:
        if c.shape[0] != m:
            raise PinvError(f"C⁻¹ diagonal must have {m} entries, got {c.shape[0]}")
        return np.diag(c)
    if c.shape != (m, m):
        raise PinvError(f"C⁻¹ must be ({m},{m}), got {c.shape}")
    return c


def _factor(J: NDArray, w_inv: NDArray, c_inv: float | ArrayLike):
    if J.ndim != 2 or w_inv.shape != (J.shape[1],):
        raise PinvError(f"shape mismatch: J {J.shape}, w_inv {w_inv.shape}")
    if not (np.all(np.isfinite(J)) and np.all(np.isfinite(w_inv))):
        raise PinvError("J and w_inv must be finite")
    JW = J * w_inv[None, :]  # J W⁻¹
    A = JW @ J.T
    A += _c_inv_matrix(c_inv, J.shape[0])
    try:
        return JW, cho_factor(A, lower=True, check_finite=False)
    except np.linalg.LinAlgError as exc:
        raise PinvError("J W⁻¹ Jᵀ + C⁻¹ is not positive definite (C⁻¹ must be > 0 or J full row rank)") from exc


def weighted_pinv(J: ArrayLike, w_inv: ArrayLike, c_inv: float | ArrayLike = THESIS_C_INV) -> NDArray[np.float64]:
    """``J♯ = W⁻¹ Jᵀ (J W⁻¹ Jᵀ + C⁻¹)⁻¹`` (n × m), thesis Eq. 4.10 second form, via Cholesky.

    Args:
        J: (m, n) task Jacobian.
        w_inv: (n,) diagonal of ``W⁻¹`` (e.g. :func:`inverse_mass_weights`, or ones for the identity weighting).
        c_inv: scalar (times I), (m,) diagonal or (m, m) SPD matrix ``C⁻¹``; thesis 1e-3.  Per-task weights
            ``c_i`` (stance above swing) enter as ``C⁻¹ = diag(1e-3 / c_i)``.
    """
    J = np.asarray(J, dtype=float)
    w = np.asarray(w_inv, dtype=float).reshape(-1)
    JW, cf = _factor(J, w, c_inv)
    # A symmetric:  J♯ = (A⁻¹ J W⁻¹)ᵀ
    return cho_solve(cf, JW, check_finite=False).T


def weighted_pinv_apply(
    J: ArrayLike, w_inv: ArrayLike, c_inv: float | ArrayLike, e: ArrayLike
) -> NDArray[np.float64]:
    """``J♯ e`` without forming ``J♯`` (one m×m Cholesky solve): ``W⁻¹ Jᵀ A⁻¹ e``."""
    J = np.asarray(J, dtype=float)
    w = np.asarray(w_inv, dtype=float).reshape(-1)
    e = np.asarray(e, dtype=float)
    if e.shape[0] != J.shape[0]:
        raise PinvError(f"e has {e.shape[0]} rows, J has {J.shape[0]}")
    JW, cf = _factor(J, w, c_inv)
    return JW.T @ cho_solve(cf, e, check_finite=False)


def weighted_pinv_primal(J: ArrayLike, W: ArrayLike, C: ArrayLike) -> NDArray[np.float64]:
    """First form of Eq. 4.10, ``(Jᵀ C J + W)⁻¹ Jᵀ C`` (n×n solve) — for checking only."""
    J = np.asarray(J, dtype=float)
    W = np.asarray(W, dtype=float)
    C = np.asarray(C, dtype=float)
    return np.linalg.solve(J.T @ C @ J + W, J.T @ C)


def nullspace_projector(J: ArrayLike, J_pinv: ArrayLike) -> NDArray[np.float64]:
    """``N = I − J♯ J`` (thesis Eq. 4.9): secondary motion ``N h`` barely disturbs the task."""
    J = np.asarray(J, dtype=float)
    return np.eye(J.shape[1]) - np.asarray(J_pinv, dtype=float) @ J
