"""Compiled floating-base path of :class:`~atlas_crawl_kinematics.iik.IIKSolver` (``mode="floating"``, issue 10 §1
real-time budget): the iterative solve with 6 virtual base DOF, orientation tasks and the horizontal CoM task in one
`numba <https://numba.pydata.org>`_ kernel, reusing the FK, subtree-CoM, Cholesky and limit-locking step kernels of
:mod:`.iik_fast`. Used when ``IIKParams.backend == "numba"`` (explicit; ``"auto"`` keeps the numpy path for the
floating base, whose numbers the MuJoCo runner's golden logs were recorded with).

Per iteration, in world coordinates with the base pose :math:`(p_b, R_b)` (the numpy path's quantities):

* points :math:`x_f = R_b p_f + p_b`, rows :math:`[I,\\ -[R_b p_f]_\\times,\\ R_b J_f]` (Eq. 4.4–4.6 + base);
* orientations :math:`e = w_o\\,\\mathrm{log}(R^*_f (R_b R_f)^T)`, rows :math:`w_o [0,\\ I,\\ R_b J^\\omega_f]`;
* CoM :math:`c = R_b c_{pelvis} + p_b`, 2 horizontal rows (basis of the plane ⟂ up) with base columns
  :math:`[I,\\ -[R_b c]_\\times]`, plus a zero third row so the system has the numpy path's size (its rank-2
  projector has a zero row; the exact null space's regulariser ``1e-9 trace(A)/rows`` then matches);
* the step of :func:`iik_fast._step` on the augmented vector (base entries: no home pull, no limits); locality
  threshold on the joints, the whole step scaled; :math:`p_b \\mathrel{+}= \\Delta_{0:3}`,
  :math:`R_b \\leftarrow \\exp(\\Delta_{3:6}) R_b`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from . import iik_fast
from .iik_fast import _cholesky_solve, _fk, _njit, _step, _subtree_com  # noqa: F401  (reused kernels)

__all__ = ["solve_fast_floating", "solve_fast_floating_steps", "drain"]


@_njit
def _quat_from_matrix(M, qo):  # pragma: no cover - compiled
    """Unit quaternion (x, y, z, w) of a rotation matrix (largest-pivot method, as scipy's from_matrix)."""
    tr = M[0, 0] + M[1, 1] + M[2, 2]
    d0, d1, d2 = M[0, 0], M[1, 1], M[2, 2]
    k = 3
    best = tr
    if d0 > best:
        best, k = d0, 0
    if d1 > best:
        best, k = d1, 1
    if d2 > best:
        best, k = d2, 2
    if k == 3:
        qo[3] = 1.0 + tr
        qo[0] = M[2, 1] - M[1, 2]
        qo[1] = M[0, 2] - M[2, 0]
        qo[2] = M[1, 0] - M[0, 1]
    else:
        i = k
        j = (i + 1) % 3
        kk = (j + 1) % 3
        qo[i] = 1.0 - tr + 2.0 * M[i, i]
        qo[j] = M[j, i] + M[i, j]
        qo[kk] = M[kk, i] + M[i, kk]
        qo[3] = M[kk, j] - M[j, kk]
    n = np.sqrt(qo[0] * qo[0] + qo[1] * qo[1] + qo[2] * qo[2] + qo[3] * qo[3])
    for a in range(4):
        qo[a] /= n


@_njit
def _rotvec(M, out, qo):  # pragma: no cover - compiled
    """Rotation vector (axis · angle) of a rotation matrix (as scipy's as_rotvec)."""
    _quat_from_matrix(M, qo)
    if qo[3] < 0.0:
        for a in range(4):
            qo[a] = -qo[a]
    s = np.sqrt(qo[0] * qo[0] + qo[1] * qo[1] + qo[2] * qo[2])
    angle = 2.0 * np.arctan2(s, qo[3])
    if angle <= 1e-3:
        a2 = angle * angle
        scale = 2.0 + a2 / 12.0 + 7.0 * a2 * a2 / 2880.0
    else:
        scale = angle / np.sin(angle / 2.0)
    for a in range(3):
        out[a] = scale * qo[a]


@_njit
def _exp_left(v, Rb, tmp):  # pragma: no cover - compiled
    """Rb ← exp([v]×) Rb (Rodrigues)."""
    th = np.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    if th < 1e-12:
        return
    x, y, z = v[0] / th, v[1] / th, v[2] / th
    s = np.sin(th)
    c = np.cos(th)
    t = 1.0 - c
    E = np.empty((3, 3))
    E[0, 0] = c + t * x * x
    E[0, 1] = t * x * y - s * z
    E[0, 2] = t * x * z + s * y
    E[1, 0] = t * x * y + s * z
    E[1, 1] = c + t * y * y
    E[1, 2] = t * y * z - s * x
    E[2, 0] = t * x * z - s * y
    E[2, 1] = t * y * z + s * x
    E[2, 2] = c + t * z * z
    for a in range(3):
        for b in range(3):
            tmp[a, b] = E[a, 0] * Rb[0, b] + E[a, 1] * Rb[1, b] + E[a, 2] * Rb[2, b]
    for a in range(3):
        for b in range(3):
            Rb[a, b] = tmp[a, b]


@_njit
def _task_floating(qa, bp, Rb, eff_R, eff_t, axis, par, fix_anchor, fix_R, fix_t, mass, com_local, total_mass,
                   sub_mass_frac, sub, idx, x_star, oidx, o_star, ow, use_com, c_star, u1, u2,
                   R, p, acc, A_ax, J, e, want_J, M3, rv, qo):  # pragma: no cover - compiled
    """FK + errors (+ Jacobian, 6 base + nj joint columns). Returns (max point error, CoM error, max ori error)."""
    nj = qa.shape[0] - 6
    q = qa[6:]
    _fk(q, eff_R, eff_t, axis, par, fix_anchor, fix_R, fix_t, R, p)
    k = idx.shape[0]
    no = oidx.shape[0]
    err = 0.0
    xw = np.empty((k, 3))
    for t in range(k):
        f = idx[t]
        s2 = 0.0
        for a in range(3):
            v = Rb[a, 0] * p[f, 0] + Rb[a, 1] * p[f, 1] + Rb[a, 2] * p[f, 2]
            xw[t, a] = v
            d = x_star[t, a] - (v + bp[a])
            e[3 * t + a] = d
            s2 += d * d
        s2 = np.sqrt(s2)
        if s2 > err:
            err = s2
    ori_err = 0.0
    r0 = 3 * k
    for o in range(no):
        f = oidx[o]
        # M3 = R* (Rb R_f)^T = R* R_f^T Rb^T
        for a in range(3):
            for b in range(3):
                s = 0.0
                for c in range(3):
                    # (Rb R_f)[b, c]
                    rbf = Rb[b, 0] * R[f, 0, c] + Rb[b, 1] * R[f, 1, c] + Rb[b, 2] * R[f, 2, c]
                    s += o_star[o, a, c] * rbf
                M3[a, b] = s
        _rotvec(M3, rv, qo)
        n2 = 0.0
        for a in range(3):
            e[r0 + 3 * o + a] = ow * rv[a]
            n2 += (ow * rv[a]) ** 2
        n2 = np.sqrt(n2)
        if n2 > ori_err:
            ori_err = n2
    rc = r0 + 3 * no
    com_err = 0.0
    cw = np.empty(3)
    if use_com:
        _subtree_com(R, p, mass, com_local, par, fix_anchor, total_mass, acc)
        cv = np.empty(3)
        for a in range(3):
            cw[a] = Rb[a, 0] * acc[0, 0] + Rb[a, 1] * acc[0, 1] + Rb[a, 2] * acc[0, 2]
            cv[a] = c_star[a] - (cw[a] + bp[a])
        e1 = u1[0] * cv[0] + u1[1] * cv[1] + u1[2] * cv[2]
        e2 = u2[0] * cv[0] + u2[1] * cv[1] + u2[2] * cv[2]
        e[rc] = e1
        e[rc + 1] = e2
        e[rc + 2] = 0.0
        com_err = np.sqrt(e1 * e1 + e2 * e2)
    if not want_J:
        return err, com_err, ori_err
    m = J.shape[0]
    for r in range(m):
        for c in range(6 + nj):
            J[r, c] = 0.0
    # base columns
    for t in range(k):
        x0, x1, x2 = xw[t, 0], xw[t, 1], xw[t, 2]
        for a in range(3):
            J[3 * t + a, a] = 1.0
        J[3 * t + 0, 4] = x2
        J[3 * t + 0, 5] = -x1
        J[3 * t + 1, 3] = -x2
        J[3 * t + 1, 5] = x0
        J[3 * t + 2, 3] = x1
        J[3 * t + 2, 4] = -x0
    for o in range(no):
        for a in range(3):
            J[r0 + 3 * o + a, 3 + a] = ow
    if use_com:
        c0, c1, c2 = cw[0], cw[1], cw[2]
        # rows u · [I, -[c]x]
        for rr in range(2):
            u = u1 if rr == 0 else u2
            J[rc + rr, 0] = u[0]
            J[rc + rr, 1] = u[1]
            J[rc + rr, 2] = u[2]
            J[rc + rr, 3] = -u[1] * c2 + u[2] * c1
            J[rc + rr, 4] = u[0] * c2 - u[2] * c0
            J[rc + rr, 5] = -u[0] * c1 + u[1] * c0
    for i in range(nj):
        f = i + 1
        for a in range(3):
            A_ax[i, a] = R[f, a, 0] * axis[i, 0] + R[f, a, 1] * axis[i, 1] + R[f, a, 2] * axis[i, 2]
    col = np.empty(3)
    for i in range(nj):
        f = i + 1
        ax0, ax1, ax2 = A_ax[i, 0], A_ax[i, 1], A_ax[i, 2]
        cj = 6 + i
        for t in range(k):
            s = sub[i, idx[t]]
            if s == 0.0:
                continue
            d0 = p[idx[t], 0] - p[f, 0]
            d1 = p[idx[t], 1] - p[f, 1]
            d2 = p[idx[t], 2] - p[f, 2]
            col[0] = s * (ax1 * d2 - ax2 * d1)
            col[1] = s * (ax2 * d0 - ax0 * d2)
            col[2] = s * (ax0 * d1 - ax1 * d0)
            for a in range(3):
                J[3 * t + a, cj] = Rb[a, 0] * col[0] + Rb[a, 1] * col[1] + Rb[a, 2] * col[2]
        for o in range(no):
            s = sub[i, oidx[o]]
            if s == 0.0:
                continue
            for a in range(3):
                J[r0 + 3 * o + a, cj] = ow * s * (Rb[a, 0] * ax0 + Rb[a, 1] * ax1 + Rb[a, 2] * ax2)
        if use_com:
            fr = sub_mass_frac[i]
            v0 = acc[f, 0] - fr * p[f, 0]
            v1 = acc[f, 1] - fr * p[f, 1]
            v2 = acc[f, 2] - fr * p[f, 2]
            c0 = ax1 * v2 - ax2 * v1
            c1 = ax2 * v0 - ax0 * v2
            c2 = ax0 * v1 - ax1 * v0
            for a in range(3):
                col[a] = Rb[a, 0] * c0 + Rb[a, 1] * c1 + Rb[a, 2] * c2
            J[rc, cj] = u1[0] * col[0] + u1[1] * col[1] + u1[2] * col[2]
            J[rc + 1, cj] = u2[0] * col[0] + u2[1] * col[1] + u2[2] * col[2]
    return err, com_err, ori_err


@_njit
def _solve_floating(qa, bp, Rb, x_star, c_row, oidx, o_star, ow, use_com, c_star, u1, u2, idx,
                    eff_R, eff_t, axis, par, fix_anchor, fix_R, fix_t, mass, com_local, total_mass, sub_mass_frac,
                    sub, lower, upper, w_inv, home, h_gain, exact, limit_passes, locality, conv, no_prog,
                    no_prog_iters, max_it, c_inv, c_inv_min, anneal, q_best, bp_best, Rb_best,
                    errors, si, sf, budget):  # pragma: no cover - compiled
    """Augmented vectors (6 base + nj joints, internal order). Resumable: the iterate ``qa`` (base entries stay 0:
    the base moves through ``bp`` / ``Rb``), ``bp``, ``Rb``, the best iterate and ``errors`` are updated in place;
    ``si`` = (iterations, n_errors, stalled, status, done), ``sf`` = (best score, best CoM error, best point error).
    Runs at most ``budget`` iterations (≤ 0: no limit) and returns True once the solve has ended (status 0
    converged / 1 no progress / 2 max iterations); the same iterations in the same order however it is sliced."""
    nv = qa.shape[0]
    nj = nv - 6
    nf = mass.shape[0]
    k = idx.shape[0]
    no = oidx.shape[0]
    m = 3 * k + 3 * no + (3 if use_com else 0)
    R = np.empty((nf, 3, 3))
    p = np.empty((nf, 3))
    acc = np.empty((nf, 3))
    A_ax = np.empty((nj, 3))
    J = np.empty((m, nv))
    e = np.empty(m)
    dv = np.empty(nv)
    A = np.empty((m, m))
    A0 = np.empty((m, m))
    Lw = np.zeros((m, m))
    rhs = np.empty(m)
    y = np.empty(m)
    locked = np.zeros(nv, dtype=np.bool_)
    fixed_dq = np.empty(nv)
    e_eff = np.empty(m)
    hw = np.empty(nv)
    w = np.empty(nv)
    c_diag = np.empty(m)
    M3 = np.empty((3, 3))
    rv = np.empty(3)
    qo = np.empty(4)
    tmp = np.empty((3, 3))
    it, n_err, stalled, status = si[0], si[1], si[2], si[3]
    best, best_com, best_err = sf[0], sf[1], sf[2]
    ended = False
    done_here = 0
    while it < max_it:
        if budget > 0 and done_here >= budget:
            si[0], si[1], si[2], si[3], si[4] = it, n_err, stalled, status, 0
            sf[0], sf[1], sf[2] = best, best_com, best_err
            return False
        it += 1
        done_here += 1
        err, com_err, ori_err = _task_floating(
            qa, bp, Rb, eff_R, eff_t, axis, par, fix_anchor, fix_R, fix_t, mass, com_local, total_mass,
            sub_mass_frac, sub, idx, x_star, oidx, o_star, ow, use_com, c_star, u1, u2, R, p, acc, A_ax, J, e,
            True, M3, rv, qo)
        score = max(err, com_err, ori_err)
        errors[n_err] = score
        n_err += 1
        if score < best:
            best = score
            best_com = com_err
            best_err = err
            q_best[:] = qa[6:]
            bp_best[:] = bp
            Rb_best[:, :] = Rb
        if score < conv:
            status = 0
            ended = True
            break
        if n_err >= 2 and errors[n_err - 2] - errors[n_err - 1] < no_prog:
            stalled += 1
            if stalled >= no_prog_iters:
                status = 1
                ended = True
                break
        else:
            stalled = 0
        scale = max(c_inv_min / c_inv, min(1.0, score / anneal))
        for r in range(m):
            c_diag[r] = c_row[r] * scale
        _step(J, e, c_diag, qa, w_inv, h_gain, home, exact, limit_passes, lower, upper, dv,
              A, A0, Lw, rhs, y, locked, fixed_dq, e_eff, hw, w)
        amax = 0.0
        for j in range(6, nv):
            a = abs(dv[j])
            if a > amax:
                amax = a
        f = locality / amax if amax > locality else 1.0
        for j in range(6, nv):
            qa[j] = min(max(qa[j] + dv[j] * f, lower[j]), upper[j])
        for a in range(3):
            bp[a] += dv[a] * f
            rv[a] = dv[3 + a] * f
        _exp_left(rv, Rb, tmp)
    if not ended:
        status = 2
    if status != 0:
        err, com_err, ori_err = _task_floating(
            qa, bp, Rb, eff_R, eff_t, axis, par, fix_anchor, fix_R, fix_t, mass, com_local, total_mass,
            sub_mass_frac, sub, idx, x_star, oidx, o_star, ow, use_com, c_star, u1, u2, R, p, acc, A_ax, J, e,
            False, M3, rv, qo)
        score = max(err, com_err, ori_err)
        if score < best:
            best = score
            best_com = com_err
            best_err = err
            q_best[:] = qa[6:]
            bp_best[:] = bp
            Rb_best[:, :] = Rb
        if best < conv:
            status = 0
    si[0], si[1], si[2], si[3], si[4] = it, n_err, stalled, status, 1
    sf[0], sf[1], sf[2] = best, best_com, best_err
    return True


def solve_fast_floating_steps(fm: iik_fast.FastModel, q0_pub: NDArray, base_pos: NDArray, base_rot: NDArray,
                              x_star: NDArray, c_row: NDArray, o_idx: NDArray, o_star: NDArray, ow: float,
                              com_target: NDArray | None, basis: tuple[NDArray, NDArray], idx: NDArray,
                              w_inv_aug: NDArray, home_int: NDArray, params, budget: int = 0):
    """Generator over the kernel; inputs validated by the caller. ``w_inv_aug`` = 6 base + joint weights (internal
    order). Each resumption runs at most ``budget`` iterations (≤ 0: all); it yields while the solve has not ended
    and returns (q public order, base_pos, base_rot, status code, iterations, errors list, CoM error, point error)
    of the best iterate: the same whatever ``budget`` is."""
    P = params
    nj = fm.nj
    qa = np.zeros(6 + nj)
    qa[6:] = q0_pub[fm.perm]
    aug = getattr(fm, "_floating_aug", None)
    if aug is None:   # limits with 6 unbounded base entries (constant per model)
        inf = np.full(6, np.inf)
        aug = fm._floating_aug = (np.r_[-inf, fm.lower], np.r_[inf, fm.upper])
    lower, upper = aug
    home = np.zeros(6 + nj)
    home[6:] = home_int
    use_com = com_target is not None
    u1, u2 = basis
    c_star = fm.zero3 if com_target is None else com_target
    q_best = np.empty(nj)
    bp_best = np.empty(3)
    Rb_best = np.empty((3, 3))
    errors = np.empty(P.max_iterations + 1)
    si = np.zeros(5, dtype=np.int64)
    sf = np.array([np.inf, 0.0, np.inf])
    bp = np.array(base_pos, dtype=float)       # copies: the kernel moves the base in place
    Rb = np.array(base_rot, dtype=float)
    xs = np.ascontiguousarray(x_star, dtype=float)
    args = (qa, bp, Rb, xs, c_row, o_idx, o_star, float(ow), use_com, c_star, u1, u2, idx,
            fm.eff_R, fm.eff_t, fm.axis, fm.par, fm.fix_anchor, fm.fix_R, fm.fix_t, fm.mass, fm.com_local,
            fm.total_mass, fm.sub_mass_frac, fm.sub, lower, upper, w_inv_aug, home,
            float(P.nullspace_gain), bool(P.exact_nullspace), int(P.limit_passes), float(P.locality_threshold_rad),
            float(P.convergence_m), float(P.no_progress_m), int(P.no_progress_iterations), int(P.max_iterations),
            float(P.c_inv), float(P.c_inv_min), float(P.anneal_scale_m), q_best, bp_best, Rb_best, errors, si, sf,
            int(budget))
    while not _solve_floating(*args):
        yield
    q_pub = np.empty(nj)
    q_pub[fm.perm] = q_best
    return q_pub, bp_best, Rb_best, int(si[3]), int(si[0]), errors[:si[1]].tolist(), float(sf[1]), float(sf[2])


def drain(gen):
    """Run a solve generator to its end; its return value."""
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value


def solve_fast_floating(*args, **kwargs) -> tuple:
    """:func:`solve_fast_floating_steps` run to its end in one call."""
    return drain(solve_fast_floating_steps(*args, **kwargs))
