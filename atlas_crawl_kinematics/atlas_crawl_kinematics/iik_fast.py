"""Compiled fast path of :class:`~atlas_crawl_kinematics.iik.IIKSolver` (issue 4 §7): the whole iterative solve
(thesis Algorithm 2 with our improvements) in one `numba <https://numba.pydata.org>`_ kernel.

Why: profiling the numpy path (``python -m atlas_crawl_kinematics.iik_benchmark --profile``) shows one iteration is
~60 numpy calls (FK: 9 depth levels of batched 4×4 products, Jacobian assembly, two m×m solves per limit pass), each
costing 0.5–10 µs of interpreter/dispatch overhead on this machine: ≥ 250 µs per iteration even on a calm machine,
whatever the arithmetic (≈ 25 k flops).  The same arithmetic as straight loops compiled by numba is ~5–15 µs.

The kernel computes, per iteration, exactly what the numpy path computes (tests assert equality to 1e-9):

* FK of the movable tree in internal (depth-sorted) order, ``T_f = T_parent · X_f · Rot(a_f, q_f)`` (thesis Eq. 2.1),
  then the fixed frames from their movable anchor;
* link CoMs and, in one reverse sweep over the tree, the subtree sums ``Σ_{i∈S(j)} m_i c_i`` (CoM Jacobian, DESIGN §6);
* the stacked task Jacobian: 3 rows per contact (thesis Eq. 4.4–4.6) + 2 horizontal CoM rows (basis of the plane ⟂ up;
  the numpy path uses the rank-2 3×3 projector, same solution), in the pelvis frame or in a support frame ``root``
  (thesis Eq. 4.13);
* ``A = J W⁻¹ Jᵀ + C⁻¹`` (14×14), hand-written Cholesky, thesis Eq. 4.9–4.10 step, exact or thesis null space, joint
  limits by locking violators at their limit and re-solving the (cheap) 14×14 system, locality threshold;
* convergence / no-progress guards and best-iterate tracking as in the numpy path.

numba is optional: without it (``HAVE_NUMBA`` False) :class:`IIKSolver` uses the numpy path.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

try:  # pragma: no cover - exercised by the environment
    import numba

    HAVE_NUMBA = True
    NUMBA_VERSION = numba.__version__
except ImportError:  # pragma: no cover
    numba = None
    HAVE_NUMBA = False
    NUMBA_VERSION = None

__all__ = ["HAVE_NUMBA", "NUMBA_VERSION", "FastModel", "solve_fast", "fk_points_com"]


def _njit(f):
    if HAVE_NUMBA:
        return numba.njit(cache=True, nogil=True, fastmath=False)(f)
    return f


class FastModel:
    """Flat arrays of a :class:`RobotModel` for the kernel (internal = depth-sorted joint order)."""

    @classmethod
    def of(cls, model) -> "FastModel":
        """The model's FastModel, built once per RobotModel (a new solver, e.g. the controller core's next tracker,
        reuses it)."""
        fm = getattr(model, "_fast_model", None)
        if fm is None:
            fm = model._fast_model = cls(model)
        return fm

    def __init__(self, model) -> None:
        nj, nf = model.n_joints, model.n_frames
        self.nj, self.nf = nj, nf
        eff = (model._E2 + model._EKK[:, 1].reshape(nj, 4, 4))  # L(q=0) = X (effective joint origin)
        self.eff_R = np.ascontiguousarray(eff[:, :3, :3])
        self.eff_t = np.ascontiguousarray(eff[:, :3, 3])
        self.axis = np.ascontiguousarray(model._axis_int)
        anchor = np.arange(nf, dtype=np.int64)
        anchor[nj + 1:] = model._fixed_anchor
        fp = model.frame_parent
        # parent anchor of the child frame of internal joint i (frame i + 1)
        self.par = np.ascontiguousarray(anchor[fp[1:nj + 1]])
        self.fix_anchor = np.ascontiguousarray(model._fixed_anchor.astype(np.int64))
        self.fix_R = np.ascontiguousarray(model._fixed_offset[:, :3, :3])
        self.fix_t = np.ascontiguousarray(model._fixed_offset[:, :3, 3])
        self.mass = np.ascontiguousarray(model.link_mass)
        self.com_local = np.ascontiguousarray(model.link_com)
        self.total_mass = float(model.total_mass)
        self.zero3 = np.zeros(3)
        self.sub_mass_frac = np.ascontiguousarray(model._sub_mass_frac)
        self.sub = np.ascontiguousarray(model._sub_f)  # (nj_int, nf)
        self.perm = model._q_perm  # public index of internal joint i
        self.lower = np.ascontiguousarray(model.lower[model._q_perm])
        self.upper = np.ascontiguousarray(model.upper[model._q_perm])
        if np.any(self.par[np.arange(nj)] > np.arange(nj)):  # parents (frame index) precede the child frame i+1
            raise ValueError("internal frame order is not topological")
        #: work arrays of fk_points_com (R, p, subtree CoM sums)
        self._ws = (np.empty((nf, 3, 3)), np.empty((nf, 3)), np.empty((nf, 3)))


# ----------------------------------------------------------------------------------------------- kernels
@_njit
def _fk(q, eff_R, eff_t, axis, par, fix_anchor, fix_R, fix_t, R, p):  # pragma: no cover - compiled
    nj = q.shape[0]
    for a in range(3):
        for b in range(3):
            R[0, a, b] = 1.0 if a == b else 0.0
        p[0, a] = 0.0
    Rl = np.empty((3, 3))
    L = np.empty((3, 3))
    for i in range(nj):
        s = np.sin(q[i])
        c = np.cos(q[i])
        x, y, z = axis[i, 0], axis[i, 1], axis[i, 2]
        t = 1.0 - c
        # Rodrigues: I + s K + (1 − c) K²
        Rl[0, 0] = c + t * x * x
        Rl[0, 1] = t * x * y - s * z
        Rl[0, 2] = t * x * z + s * y
        Rl[1, 0] = t * x * y + s * z
        Rl[1, 1] = c + t * y * y
        Rl[1, 2] = t * y * z - s * x
        Rl[2, 0] = t * x * z - s * y
        Rl[2, 1] = t * y * z + s * x
        Rl[2, 2] = c + t * z * z
        for a in range(3):
            for b in range(3):
                L[a, b] = eff_R[i, a, 0] * Rl[0, b] + eff_R[i, a, 1] * Rl[1, b] + eff_R[i, a, 2] * Rl[2, b]
        pa = par[i]
        f = i + 1
        for a in range(3):
            for b in range(3):
                R[f, a, b] = R[pa, a, 0] * L[0, b] + R[pa, a, 1] * L[1, b] + R[pa, a, 2] * L[2, b]
            p[f, a] = (p[pa, a] + R[pa, a, 0] * eff_t[i, 0] + R[pa, a, 1] * eff_t[i, 1]
                       + R[pa, a, 2] * eff_t[i, 2])
    for k in range(fix_anchor.shape[0]):
        f = nj + 1 + k
        pa = fix_anchor[k]
        for a in range(3):
            for b in range(3):
                R[f, a, b] = R[pa, a, 0] * fix_R[k, 0, b] + R[pa, a, 1] * fix_R[k, 1, b] + R[pa, a, 2] * fix_R[k, 2, b]
            p[f, a] = (p[pa, a] + R[pa, a, 0] * fix_t[k, 0] + R[pa, a, 1] * fix_t[k, 1]
                       + R[pa, a, 2] * fix_t[k, 2])


@_njit
def _subtree_com(R, p, mass, com_local, par, fix_anchor, total_mass, acc):  # pragma: no cover - compiled
    """acc[f] = Σ_{i∈subtree(f)} m_i c_i / M (acc[0] = whole-body CoM)."""
    nf = R.shape[0]
    nj = par.shape[0]
    for f in range(nf):
        m = mass[f] / total_mass
        for a in range(3):
            acc[f, a] = m * (R[f, a, 0] * com_local[f, 0] + R[f, a, 1] * com_local[f, 1]
                             + R[f, a, 2] * com_local[f, 2] + p[f, a])
    for k in range(fix_anchor.shape[0] - 1, -1, -1):
        f = nj + 1 + k
        for a in range(3):
            acc[fix_anchor[k], a] += acc[f, a]
    for i in range(nj - 1, -1, -1):
        for a in range(3):
            acc[par[i], a] += acc[i + 1, a]


@_njit
def _fk_points_com(q, eff_R, eff_t, axis, par, fix_anchor, fix_R, fix_t, mass, com_local, total_mass, idx,
                   base_pos, base_R, R, p, acc, out_pts, out_com):  # pragma: no cover - compiled
    """World points of the frames ``idx`` and the whole-body CoM, ``x = R_b x_pelvis + p_b``."""
    _fk(q, eff_R, eff_t, axis, par, fix_anchor, fix_R, fix_t, R, p)
    _subtree_com(R, p, mass, com_local, par, fix_anchor, total_mass, acc)
    for t in range(idx.shape[0]):
        f = idx[t]
        for a in range(3):
            out_pts[t, a] = base_R[a, 0] * p[f, 0] + base_R[a, 1] * p[f, 1] + base_R[a, 2] * p[f, 2] + base_pos[a]
    for a in range(3):
        out_com[a] = base_R[a, 0] * acc[0, 0] + base_R[a, 1] * acc[0, 1] + base_R[a, 2] * acc[0, 2] + base_pos[a]


def fk_points_com(fm: FastModel, q_pub: NDArray, idx: NDArray, base_pos: NDArray, base_rot: NDArray
                  ) -> tuple[NDArray, NDArray]:
    """Compiled forward kinematics for the real-time path (~3 µs instead of ~40 µs for ``RobotModel.forward``):
    world positions (k, 3) of the frames ``idx`` (frame indices) and the world CoM (3,), for the pelvis pose
    ``(base_pos, base_rot)``. Same quantities as :meth:`RobotModel.forward` (agree to ~1e-16 m, test)."""
    ws = fm._ws
    pts = np.empty((idx.shape[0], 3))
    com = np.empty(3)
    _fk_points_com(np.ascontiguousarray(q_pub[fm.perm]), fm.eff_R, fm.eff_t, fm.axis, fm.par, fm.fix_anchor,
                   fm.fix_R, fm.fix_t, fm.mass, fm.com_local, fm.total_mass, idx,
                   np.ascontiguousarray(base_pos, dtype=float), np.ascontiguousarray(base_rot, dtype=float),
                   ws[0], ws[1], ws[2], pts, com)
    return pts, com


@_njit
def _cholesky_solve(A, b, Lw, y):  # pragma: no cover - compiled
    """Solve A y = b (A SPD, m×m) by a Cholesky factorisation into the work array Lw; tiny pivots are floored."""
    m = A.shape[0]
    for j in range(m):
        d = A[j, j]
        for k in range(j):
            d -= Lw[j, k] * Lw[j, k]
        if d < 1e-300:
            d = 1e-300
        d = np.sqrt(d)
        Lw[j, j] = d
        for i in range(j + 1, m):
            s = A[i, j]
            for k in range(j):
                s -= Lw[i, k] * Lw[j, k]
            Lw[i, j] = s / d
    for i in range(m):
        s = b[i]
        for k in range(i):
            s -= Lw[i, k] * y[k]
        y[i] = s / Lw[i, i]
    for i in range(m - 1, -1, -1):
        s = y[i]
        for k in range(i + 1, m):
            s -= Lw[k, i] * y[k]
        y[i] = s / Lw[i, i]


@_njit
def _task(q, fm_eff_R, fm_eff_t, axis, par, fix_anchor, fix_R, fix_t, mass, com_local, total_mass, sub_mass_frac,
          sub, idx, root, x_star, use_com, c_star, u1, u2, R, p, acc, A_ax, J, e, want_J):  # pragma: no cover
    """FK + errors (+ Jacobian if want_J). Returns (max point error, horizontal CoM error)."""
    _fk(q, fm_eff_R, fm_eff_t, axis, par, fix_anchor, fix_R, fix_t, R, p)
    nj = q.shape[0]
    k = idx.shape[0]
    # positions in the task frame (pelvis, or root r: R_rᵀ (p − p_r))
    err = 0.0
    for t in range(k):
        f = idx[t]
        s2 = 0.0
        for a in range(3):
            if root >= 0:
                v = 0.0
                for b in range(3):
                    v += R[root, b, a] * (p[f, b] - p[root, b])
            else:
                v = p[f, a]
            d = x_star[t, a] - v
            e[3 * t + a] = d
            s2 += d * d
        s2 = np.sqrt(s2)
        if s2 > err:
            err = s2
    com_err = 0.0
    if use_com:
        _subtree_com(R, p, mass, com_local, par, fix_anchor, total_mass, acc)
        cv = np.empty(3)
        for a in range(3):
            if root >= 0:
                v = 0.0
                for b in range(3):
                    v += R[root, b, a] * (acc[0, b] - p[root, b])
            else:
                v = acc[0, a]
            cv[a] = c_star[a] - v
        e1 = u1[0] * cv[0] + u1[1] * cv[1] + u1[2] * cv[2]
        e2 = u2[0] * cv[0] + u2[1] * cv[1] + u2[2] * cv[2]
        e[3 * k] = e1
        e[3 * k + 1] = e2
        com_err = np.sqrt(e1 * e1 + e2 * e2)
    if not want_J:
        return err, com_err
    for i in range(nj):
        f = i + 1
        for a in range(3):
            A_ax[i, a] = R[f, a, 0] * axis[i, 0] + R[f, a, 1] * axis[i, 1] + R[f, a, 2] * axis[i, 2]
    col = np.empty(3)
    for i in range(nj):
        f = i + 1
        ax0, ax1, ax2 = A_ax[i, 0], A_ax[i, 1], A_ax[i, 2]
        sr = sub[i, root] if root >= 0 else 0.0
        for t in range(k):
            s = sub[i, idx[t]] - sr
            if s == 0.0:
                for a in range(3):
                    J[3 * t + a, i] = 0.0
                continue
            d0 = p[idx[t], 0] - p[f, 0]
            d1 = p[idx[t], 1] - p[f, 1]
            d2 = p[idx[t], 2] - p[f, 2]
            col[0] = s * (ax1 * d2 - ax2 * d1)
            col[1] = s * (ax2 * d0 - ax0 * d2)
            col[2] = s * (ax0 * d1 - ax1 * d0)
            if root >= 0:
                for a in range(3):
                    J[3 * t + a, i] = R[root, 0, a] * col[0] + R[root, 1, a] * col[1] + R[root, 2, a] * col[2]
            else:
                for a in range(3):
                    J[3 * t + a, i] = col[a]
        if use_com:
            fr = sub_mass_frac[i]
            v0 = acc[f, 0] - fr * p[f, 0] - sr * (acc[0, 0] - p[f, 0])
            v1 = acc[f, 1] - fr * p[f, 1] - sr * (acc[0, 1] - p[f, 1])
            v2 = acc[f, 2] - fr * p[f, 2] - sr * (acc[0, 2] - p[f, 2])
            c0 = ax1 * v2 - ax2 * v1
            c1 = ax2 * v0 - ax0 * v2
            c2 = ax0 * v1 - ax1 * v0
            if root >= 0:
                col[0] = R[root, 0, 0] * c0 + R[root, 1, 0] * c1 + R[root, 2, 0] * c2
                col[1] = R[root, 0, 1] * c0 + R[root, 1, 1] * c1 + R[root, 2, 1] * c2
                col[2] = R[root, 0, 2] * c0 + R[root, 1, 2] * c1 + R[root, 2, 2] * c2
            else:
                col[0], col[1], col[2] = c0, c1, c2
            J[3 * k, i] = u1[0] * col[0] + u1[1] * col[1] + u1[2] * col[2]
            J[3 * k + 1, i] = u2[0] * col[0] + u2[1] * col[1] + u2[2] * col[2]
    return err, com_err


@_njit
def _step(J, e, c_diag, q, w_inv, h_gain, home, exact, limit_passes, lower, upper, dv,
          A, A0, Lw, rhs, y, locked, fixed_dq, e_eff, hw, w):  # pragma: no cover - compiled
    """One regularised step (see :meth:`IIKSolver._step`). Sparse in J: a row of a contact (orientation) task has
    non-zeros only in the base columns and the joints of its chain, so every sum runs over the non-zero columns of
    one row only (the skipped terms are exact zeros: the same sums, term for term, as the dense loops, ~3x fewer
    flops). The Gram matrix :math:`G = J W^{-1} J^T` is built once per step; a limit pass that locks joints
    subtracts their columns, :math:`G \\mathrel{-}= w_j J_{:,j} J_{:,j}^T`, instead of building it again (equal to
    the rebuilt sums up to rounding, ~1e-16 relative)."""
    m, nj = J.shape
    nzc = np.empty((m, nj), dtype=np.int64)   # non-zero columns of each row, ascending
    nzn = np.empty(m, dtype=np.int64)
    nzr = np.empty((nj, m), dtype=np.int64)   # non-zero rows of each column
    nzrn = np.zeros(nj, dtype=np.int64)
    for r in range(m):
        n = 0
        for j in range(nj):
            if J[r, j] != 0.0:
                nzc[r, n] = j
                n += 1
                nzr[j, nzrn[j]] = r
                nzrn[j] += 1
        nzn[r] = n
    tmp = np.empty(nj)
    G = np.empty((m, m))
    newly = np.empty(nj, dtype=np.int64)
    n_new = 0
    for j in range(nj):
        w[j] = w_inv[j]
        locked[j] = False
        fixed_dq[j] = 0.0
    for r in range(m):
        e_eff[r] = e[r]
    for r in range(m):
        for c in range(r + 1):
            # sum over the non-zero columns of the sparser row (the other terms are 0 · x)
            a, b = (r, c) if nzn[r] <= nzn[c] else (c, r)
            s = 0.0
            for t in range(nzn[a]):
                j = nzc[a, t]
                s += J[r, j] * w[j] * J[c, j]
            G[r, c] = s
            G[c, r] = s
    for _pass in range(limit_passes + 1):
        for i in range(n_new):   # columns locked by the previous pass leave the Gram matrix
            j = newly[i]
            wj = w_inv[j]
            for u in range(nzrn[j]):
                r = nzr[j, u]
                v = J[r, j] * wj
                for t in range(nzrn[j]):
                    c = nzr[j, t]
                    G[r, c] -= v * J[c, j]
        n_new = 0
        for j in range(nj):
            hw[j] = h_gain * (home[j] - q[j]) if w[j] > 0.0 else 0.0
        tr = 0.0
        for r in range(m):
            for c in range(m):
                A[r, c] = G[r, c]
            tr += G[r, r]
        if exact and h_gain > 0.0:
            eps = 1e-9 * (tr / m + 1e-12)
            for r in range(m):
                for c in range(m):
                    A0[r, c] = A[r, c]
                A0[r, r] += eps
                s = 0.0
                for t in range(nzn[r]):
                    j = nzc[r, t]
                    s += J[r, j] * hw[j]
                rhs[r] = s
            _cholesky_solve(A0, rhs, Lw, y)
            _jt_y(J, y, nzc, nzn, tmp)
            for j in range(nj):  # nh = hw − W⁻¹Jᵀ y
                dv[j] = hw[j] - w[j] * tmp[j]
            for r in range(m):
                A[r, r] += c_diag[r]
                rhs[r] = e_eff[r]
        else:
            for r in range(m):
                A[r, r] += c_diag[r]
                s = 0.0
                for t in range(nzn[r]):
                    j = nzc[r, t]
                    s += J[r, j] * hw[j]
                rhs[r] = e_eff[r] - s
            for j in range(nj):
                dv[j] = hw[j]
        _cholesky_solve(A, rhs, Lw, y)
        _jt_y(J, y, nzc, nzn, tmp)
        any_viol = False
        for j in range(nj):
            dv[j] += w[j] * tmp[j] + fixed_dq[j]
            qn = q[j] + dv[j]
            if (qn < lower[j] or qn > upper[j]) and not locked[j]:
                any_viol = True
        if _pass == limit_passes or not any_viol:
            return
        for j in range(nj):
            qn = q[j] + dv[j]
            if (qn < lower[j] or qn > upper[j]) and not locked[j]:
                locked[j] = True
                fixed_dq[j] = min(max(qn, lower[j]), upper[j]) - q[j]
                if w[j] > 0.0:
                    newly[n_new] = j
                    n_new += 1
                w[j] = 0.0
        for r in range(m):
            s = 0.0
            for t in range(nzn[r]):
                j = nzc[r, t]
                s += J[r, j] * fixed_dq[j]
            e_eff[r] = e[r] - s


@_njit
def _jt_y(J, y, nzc, nzn, out):  # pragma: no cover - compiled
    """out = Jᵀ y over the non-zeros of J, each sum in ascending row order (as the dense column loop)."""
    for j in range(out.shape[0]):
        out[j] = 0.0
    for r in range(J.shape[0]):
        yr = y[r]
        for t in range(nzn[r]):
            j = nzc[r, t]
            out[j] += J[r, j] * yr


@_njit
def _solve(q0, x_star, c_row, use_com, c_star, u1, u2, idx, root,
           eff_R, eff_t, axis, par, fix_anchor, fix_R, fix_t, mass, com_local, total_mass, sub_mass_frac, sub,
           lower, upper, w_inv, home, h_gain, exact, limit_passes, locality, conv, no_prog, no_prog_iters, max_it,
           c_inv, c_inv_min, anneal, q_best, errors):  # pragma: no cover - compiled
    """Returns (status 0 converged / 1 no progress / 2 max iterations, iterations, n_errors, best score,
    best CoM error, best point error); q_best and errors filled in place."""
    nj = q0.shape[0]
    nf = mass.shape[0]
    k = idx.shape[0]
    m = 3 * k + (2 if use_com else 0)
    R = np.empty((nf, 3, 3))
    p = np.empty((nf, 3))
    acc = np.empty((nf, 3))
    A_ax = np.empty((nj, 3))
    J = np.empty((m, nj))
    e = np.empty(m)
    dv = np.empty(nj)
    A = np.empty((m, m))
    A0 = np.empty((m, m))
    Lw = np.zeros((m, m))
    rhs = np.empty(m)
    y = np.empty(m)
    locked = np.zeros(nj, dtype=np.bool_)
    fixed_dq = np.empty(nj)
    e_eff = np.empty(m)
    hw = np.empty(nj)
    w = np.empty(nj)
    c_diag = np.empty(m)
    q = q0.copy()
    best = np.inf
    best_com = 0.0
    best_err = np.inf
    status = 2
    stalled = 0
    n_err = 0
    it = 0
    for it in range(1, max_it + 1):
        err, com_err = _task(q, eff_R, eff_t, axis, par, fix_anchor, fix_R, fix_t, mass, com_local, total_mass,
                             sub_mass_frac, sub, idx, root, x_star, use_com, c_star, u1, u2, R, p, acc, A_ax, J, e,
                             True)
        score = max(err, com_err)
        errors[n_err] = score
        n_err += 1
        if score < best:
            best = score
            best_com = com_err
            best_err = err
            q_best[:] = q
        if score < conv:
            status = 0
            break
        if n_err >= 2 and errors[n_err - 2] - errors[n_err - 1] < no_prog:
            stalled += 1
            if stalled >= no_prog_iters:
                status = 1
                break
        else:
            stalled = 0
        scale = max(c_inv_min / c_inv, min(1.0, score / anneal))
        for r in range(m):
            c_diag[r] = c_row[r] * scale
        _step(J, e, c_diag, q, w_inv, h_gain, home, exact, limit_passes, lower, upper, dv,
              A, A0, Lw, rhs, y, locked, fixed_dq, e_eff, hw, w)
        amax = 0.0
        for j in range(nj):
            a = abs(dv[j])
            if a > amax:
                amax = a
        f = locality / amax if amax > locality else 1.0
        for j in range(nj):
            q[j] = min(max(q[j] + dv[j] * f, lower[j]), upper[j])
    if status != 0:
        err, com_err = _task(q, eff_R, eff_t, axis, par, fix_anchor, fix_R, fix_t, mass, com_local, total_mass,
                             sub_mass_frac, sub, idx, root, x_star, use_com, c_star, u1, u2, R, p, acc, A_ax, J, e,
                             False)
        score = max(err, com_err)
        if score < best:
            best = score
            best_com = com_err
            best_err = err
            q_best[:] = q
        if best < conv:
            status = 0
    return status, it, n_err, best, best_com, best_err


def solve_fast(fm: FastModel, q0_pub: NDArray, x_star: NDArray, c_row: NDArray, com_target: NDArray | None,
               basis: tuple[NDArray, NDArray], idx: NDArray, root: int, w_inv_int: NDArray, home_int: NDArray, params) -> tuple:
    """Run the kernel. Inputs already validated; ``q0_pub`` public order (clipped), ``basis`` two unit vectors
    spanning the plane ⟂ up, ``w_inv_int``/``home_int`` internal order.  Returns (q_best public order, status code, iterations, errors list, point error of q_best, CoM error)."""
    P = params
    q0 = q0_pub[fm.perm]
    use_com = com_target is not None
    u1, u2 = basis
    c_star = fm.zero3 if com_target is None else com_target
    q_best = np.empty(fm.nj)
    errors = np.empty(P.max_iterations + 1)
    status, it, n_err, best, best_com, best_err = _solve(
        q0, x_star if x_star.flags.c_contiguous else np.ascontiguousarray(x_star), c_row, use_com, c_star, u1, u2, idx, root,
        fm.eff_R, fm.eff_t, fm.axis, fm.par, fm.fix_anchor, fm.fix_R, fm.fix_t, fm.mass, fm.com_local,
        fm.total_mass, fm.sub_mass_frac, fm.sub, fm.lower, fm.upper, w_inv_int, home_int,
        float(P.nullspace_gain), bool(P.exact_nullspace), int(P.limit_passes), float(P.locality_threshold_rad),
        float(P.convergence_m), float(P.no_progress_m), int(P.no_progress_iterations), int(P.max_iterations),
        float(P.c_inv), float(P.c_inv_min), float(P.anneal_scale_m), q_best, errors)
    q_pub = np.empty(fm.nj)
    q_pub[fm.perm] = q_best
    return q_pub, status, it, errors[:n_err].tolist(), best_err, best_com
