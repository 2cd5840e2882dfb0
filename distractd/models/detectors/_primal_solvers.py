"""The primal solvers of the squared-hinge kernel expansion: Newton and preconditioned CG.

Objective (ALGORITHMS §1.4 and appendix A 2.1; Melacci & Belkin 2011), as in the reference
``lapsvmp.m``::

    J(α, b) = ½ [ γ_A αᵀKα + Σ_{i ∈ sv} c_i (1 − y_i f_i)² + γ_I (Kα)ᵀ L (Kα) ],   f = Kα + b

with ``y`` ±1 on labelled points and 0 elsewhere. Newton (:func:`_newton`; each step solves the
bordered linear system of the current ``sv`` set and stops when the set repeats) serves LapSVM, the
TSVM (γ_I = 0, per-point weights c) and the LapSVM grid search (:func:`_newton_sv_steps`);
preconditioned conjugate gradient (:func:`_pcg`; preconditioner K, exact line search over the hinge
breakpoints, Polak-Ribière with restart) stops early by prediction stability on the unlabelled
points or by objective decrease. The compiled kernels are pure functions of arrays; the estimators
own the checks.
"""

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from numba import njit
from scipy.linalg import lapack

from ..._errors import ModelError
from ._elm import _weighted_graph_product

__all__ = []


def _newton(K, L, y, gamma_A, gamma_I, fit_intercept, max_iter, weights=None):
    """Newton's method on J; ``y`` is ±1 on labelled points and 0 elsewhere.

    Each step solves the bordered system ``[0 1ᵀ; c_sv  B + I_sv C K] [b; α] = [0; I_sv C y]``
    of the current ``sv`` set, ``B = γ_A I + γ_I L K``; it stops when the set repeats. ``weights``
    (C, default 1) scale each point's squared-hinge term (used by the TSVM). Without a graph term
    only the support-vector rows are solved for, α being 0 elsewhere; with one, see
    :func:`_newton_graph`.
    """
    n = len(y)
    c = np.ones(n) if weights is None else weights
    if gamma_I != 0.0:
        return _newton_graph(K, L, y, c, gamma_A, gamma_I, fit_intercept, max_iter)
    labelled = y != 0
    alpha, b = np.zeros(n), 0.0
    f = np.zeros(n)
    sv_prev = np.zeros(n, dtype=bool)
    n_iter = 0
    while True:
        sv = labelled & (y * (f + b) < 1.0)
        if n_iter >= max_iter or np.array_equal(sv, sv_prev):
            break
        n_iter += 1
        rows = np.flatnonzero(sv)
        A = c[rows, None] * K[np.ix_(rows, rows)]
        A[np.diag_indices_from(A)] += gamma_A
        rhs = c[rows] * y[rows]
        alpha = np.zeros(n)
        if fit_intercept:
            m = len(rows)
            bordered = np.empty((m + 1, m + 1))
            bordered[0, 0] = 0.0
            bordered[0, 1:] = 1.0
            bordered[1:, 0] = c[rows]
            bordered[1:, 1:] = A
            solution = la.solve(bordered, np.r_[0.0, rhs], overwrite_a=True, check_finite=False)
            b, alpha[rows] = solution[0], solution[1:]
        else:
            alpha[rows] = la.solve(A, rhs, overwrite_a=True, check_finite=False)
        f = K @ alpha
        sv_prev = sv
    return alpha, b, n_iter


def _newton_graph(K, L, y, c, gamma_A, gamma_I, fit_intercept, max_iter):
    """Newton's method with a graph term: one LU of B for every step (Woodbury on the sv rows).

    The sv-dependent part ``E_s C_s K_s`` of the system matrix has rank |sv| ≤ l, so with
    ``P = B⁻¹E_l`` (l labelled columns) and ``Q = K_l P``, ``(B + E_s C_s K_s)⁻¹E_s =
    P_s (I + C_s Q_ss)⁻¹`` (push-through); see :func:`_newton_sv_steps`. Only Q, ``1ᵀP`` and
    ``α = P_s z`` are needed, all from solves with the LU of B, whose points are reordered with
    the labelled ones last (:func:`_labelled_rows_of_solve`).
    """
    n = len(y)
    lab = np.flatnonzero(y != 0)
    order = np.r_[np.flatnonzero(y == 0), lab]
    start = n - len(lab)
    L = sp.csr_matrix(L)
    B = _weighted_graph_product(np.zeros(n), float(gamma_I), L.indptr, L.indices, L.data, K)
    B = B[np.ix_(order, order)]
    B[np.diag_indices(n)] += gamma_A
    lu, piv, info = lapack.dgetrf(B.T, overwrite_a=True)
    if info > 0:
        raise ModelError(f"LapSVMClassifier: γ_A I + γ_I L K is singular (gamma_A={gamma_A}, "
                         f"gamma_I={gamma_I})")
    # Q = K_l P and 1ᵀP are the labelled rows of B⁻ᵀ[K_lᵀ, 1] (one solve, P never formed: the
    # LU is of Bᵀ, B being C-ordered), and α = P_s z = B⁻¹(E_s z) is one more solve.
    rhs = np.empty((n, len(lab) + 1), order="F")
    rhs[:, :-1] = K[np.ix_(order, lab)]
    rhs[:, -1] = 1.0
    solved = _labelled_rows_of_solve(lu, piv, rhs, start)
    z, sv_rows, b, n_iter = _newton_sv_steps(solved[:, :-1].T, solved[:, -1], y[lab], c[lab],
                                             fit_intercept, max_iter)
    E_z = np.zeros(n)
    E_z[start + sv_rows] = z
    alpha = np.empty(n)
    alpha[order] = lapack.dgetrs(lu, piv, E_z, trans=1, overwrite_b=True)[0]
    return alpha, b, n_iter


def _labelled_rows_of_solve(lu, piv, rhs, start):
    """Rows ``start:`` of ``(PLU)⁻¹ rhs`` from ``dgetrf``'s (lu, piv): the row interchanges and
    the unit lower solve on every row, the upper solve on the trailing block only."""
    permuted = np.asfortranarray(rhs[_pivot_order(piv)])
    forward = la.solve_triangular(lu, permuted, lower=True, unit_diagonal=True,
                                  check_finite=False, overwrite_b=True)
    return la.solve_triangular(lu[start:, start:], forward[start:], check_finite=False,
                               overwrite_b=True)


def _pivot_order(piv):
    """The row order that ``dgetrf``'s sequential interchanges (0-based ``piv``) produce."""
    order = np.arange(len(piv))
    for i, p in enumerate(piv):
        order[i], order[p] = order[p], order[i]
    return order


@njit(cache=True)
def _newton_sv_steps(Q, ones_P, y_l, c_l, fit_intercept, max_iter):
    """Newton steps on the labelled points given ``Q = K_l B⁻¹E_l`` and ``ones_P = 1ᵀB⁻¹E_l``.

    Each step solves ``(I + C_s Q_ss) [m, n] = [C_s y_s, c_s]`` on the current sv set (LAPACK
    ``dgesv``, as ``scipy.linalg.solve``); the bias ``b = 1ᵀP_s m / 1ᵀP_s n`` makes ``1ᵀα = 0``
    and ``α = P_s z`` with ``z = m − b n``. Stops when the sv set repeats or after ``max_iter``
    steps. Compiled: the grid search runs it for every (γ_A, γ_I) of every fold and width.

    Returns
    -------
    z : ndarray of shape (n_sv,)
    sv_rows : ndarray of shape (n_sv,)
        Positions among the labelled points.
    b : float
    n_iter : int
    """
    n_l = y_l.shape[0]
    f_l = np.zeros(n_l)
    b = 0.0
    z = np.zeros(0)
    sv_prev = np.zeros(n_l, dtype=np.bool_)
    sv_rows = np.zeros(0, dtype=np.intp)
    n_iter = 0
    while True:
        sv = y_l * (f_l + b) < 1.0
        if n_iter >= max_iter or (sv == sv_prev).all():
            break
        n_iter += 1
        sv_rows = np.flatnonzero(sv)
        m = sv_rows.shape[0]
        M = np.empty((m, m))
        rhs = np.empty((m, 2))
        for p in range(m):
            c = c_l[sv_rows[p]]
            for q in range(m):
                M[p, q] = c * Q[sv_rows[p], sv_rows[q]]
            M[p, p] += 1.0
            rhs[p, 0] = c * y_l[sv_rows[p]]
            rhs[p, 1] = c
        solved = np.linalg.solve(M, rhs)
        if fit_intercept and m:
            top = 0.0
            bottom = 0.0
            for p in range(m):
                top += ones_P[sv_rows[p]] * solved[p, 0]
                bottom += ones_P[sv_rows[p]] * solved[p, 1]
            b = top / bottom
        z = solved[:, 0] - b * solved[:, 1]
        for i in range(n_l):
            total = 0.0
            for p in range(m):
                total += Q[i, sv_rows[p]] * z[p]
            f_l[i] = total
        sv_prev = sv
    return z, sv_rows, b, n_iter


@njit(cache=True)
def _hinge_line_step(deltas, order, sv, outstep, residual, left, right):
    """Exact minimiser along a direction of the piecewise-quadratic squared-hinge objective.

    ``deltas`` are the sorted step lengths at which a labelled point enters or leaves the hinge
    (negatives clipped to 0), ``order`` their point indices; ``left``/``right`` the slope at 0 and
    curvature of the current piece. Walks the breakpoints until the piece's minimiser lies in it.
    """
    step = -left / right if right > 0.0 else 0.0
    n = deltas.shape[0]
    i = 0
    while i < n and not deltas[i] > 0.0:
        i += 1
    if i == n:
        return step
    k = order[i]
    inside = (0.0 <= step < deltas[i]) if sv[k] else (0.0 <= step <= deltas[i])
    while not inside:
        k = order[i]
        sign = -1.0 if sv[k] else 1.0
        sv[k] = not sv[k]
        left += sign * outstep[k] * residual[k]
        right += sign * outstep[k] * outstep[k]
        step = -left / right
        if i == n - 1:
            break
        lo_open = sv[order[i]]
        hi_open = sv[order[i + 1]]
        above = deltas[i] < step if lo_open else deltas[i] <= step
        below = step < deltas[i + 1] if hi_open else step <= deltas[i + 1]
        inside = above and below
        i += 1
    return step


_STOP_CODES = {None: 0, "stability": 1, "objective": 2}
_GRADIENT_FLOOR_SQ = 1e-28
"""PCG stops once the squared K-norm of the gradient falls below this fraction of the initial one.

The reference stops only when the exact line search returns a zero step; past convergence,
rounding can instead keep steps positive and let the iterates drift (measured on 80 points).
"""


def _pcg(K, L, y, gamma_A, gamma_I, fit_intercept, max_iter, stop, stop_param, stop_every):
    """Preconditioned conjugate gradient on J with the reference's early-stopping rules."""
    n = len(y)
    if gamma_I != 0.0:
        L = sp.csr_matrix(L)
        indptr, indices, data = L.indptr, L.indices, L.data
    else:
        indptr, indices, data = np.zeros(n + 1, dtype=np.int32), np.zeros(0, np.int32), np.zeros(0)
    return _pcg_loop(np.ascontiguousarray(K), indptr, indices, data, np.asarray(y, np.float64),
                     float(gamma_A), float(gamma_I), bool(fit_intercept), int(max_iter),
                     _STOP_CODES[stop], float(stop_param), int(stop_every))


@njit(cache=True)
def _csr_matvec(indptr, indices, data, x, out):
    for i in range(out.shape[0]):
        total = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            total += data[p] * x[indices[p]]
        out[i] = total


@njit(cache=True, error_model="numpy")
def _pcg_loop(K, indptr, indices, data, y, gamma_A, gamma_I, fit_intercept, max_iter, stop,
              stop_param, stop_every):
    """The PCG iterations (one K matvec and one sparse L matvec each); see :func:`_pcg`.

    ``stop``: 0 none, 1 stability of the unlabelled signs, 2 objective decrease.
    """
    n = y.shape[0]
    lab = np.flatnonzero(y != 0.0)
    unl = np.flatnonzero(y == 0.0)
    n_l = lab.shape[0]
    n_unlabelled = max(unl.shape[0], 1)
    use_graph = gamma_I != 0.0
    y_l = y[lab]
    alpha = np.zeros(n)
    b = 0.0
    K_alpha = np.zeros(n)
    LK_alpha = np.zeros(n)
    LK_step = np.zeros(n)
    go = y.copy()
    go_b = y_l.sum() if fit_intercept else 0.0
    direction = go.copy()
    direction_b = go_b
    K_go = K @ go
    K_step = K_go.copy()
    gradient0_sq = K_go @ go + go_b * go_b
    obj_prev = 0.5 * n_l
    signs_prev = np.zeros(unl.shape[0])
    out = np.empty(n_l)
    outstep = np.empty(n_l)
    residual = np.empty(n_l)
    deltas = np.empty(n_l)
    sv = np.empty(n_l, dtype=np.bool_)
    g = np.empty(n)
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        # exact line search along (direction, direction_b)
        left = 0.0
        right = 0.0
        for q in range(n_l):
            out[q] = K_alpha[lab[q]] + b
            outstep[q] = K_step[lab[q]] + direction_b
            residual[q] = out[q] - y_l[q]
            sv[q] = (1.0 - out[q] * y_l[q]) > 0.0
            if sv[q]:
                left += outstep[q] * residual[q]
                right += outstep[q] * outstep[q]
            d = -residual[q] / outstep[q]
            deltas[q] = 0.0 if d < 0.0 else d
        left += gamma_A * (direction @ K_alpha)
        right += gamma_A * (direction @ K_step)
        if use_graph:
            _csr_matvec(indptr, indices, data, K_step, LK_step)
            left += gamma_I * (LK_step @ K_alpha)
            right += gamma_I * (LK_step @ K_step)
        order = np.argsort(deltas, kind="mergesort")
        step = _hinge_line_step(deltas[order], order, sv, outstep, residual, left, right)
        if not step > 0.0:
            n_iter -= 1
            break
        K_alpha += step * K_step
        if use_graph:
            LK_alpha += step * LK_step
        alpha += step * direction
        b += step * direction_b
        # new (preconditioned) gradient and objective
        for i in range(n):
            g[i] = gamma_A * alpha[i]
            if use_graph:
                g[i] += gamma_I * LK_alpha[i]
        obj = K_alpha @ g
        err_sq = 0.0
        err_sum = 0.0
        for q in range(n_l):
            value = K_alpha[lab[q]] + b
            if y_l[q] * value < 1.0:
                err = value - y_l[q]
                err_sq += err * err
                err_sum += err
                g[lab[q]] += err
        obj = 0.5 * (obj + err_sq)
        gn = -g
        gn_b = -err_sum if fit_intercept else 0.0
        if n_iter % stop_every == 0:
            if stop == 1:
                changed = 0
                for q in range(unl.shape[0]):
                    sign = np.sign(K_alpha[unl[q]] + b)
                    if sign != signs_prev[q]:
                        changed += 1
                    signs_prev[q] = sign
                if changed / n_unlabelled < stop_param:
                    break
            elif stop == 2:
                if obj_prev - obj < stop_param:
                    break
                obj_prev = obj
        K_gn = K @ gn
        gradient_sq = K_gn @ gn + gn_b * gn_b
        if not gradient_sq > _GRADIENT_FLOOR_SQ * gradient0_sq:  # converged to rounding
            break
        beta = (K_gn @ (gn - go) + gn_b * (gn_b - go_b)) / (K_go @ go + go_b * go_b)
        if not beta > 0.0:  # Polak-Ribière restart; also when 0/0 at convergence
            beta = 0.0
        direction = beta * direction + gn
        direction_b = beta * direction_b + gn_b
        K_step = beta * K_step + K_gn
        go, go_b, K_go = gn, gn_b, K_gn
    return alpha, b, n_iter
