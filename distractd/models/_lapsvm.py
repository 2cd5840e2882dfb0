"""Laplacian SVM trained in the primal (ALGORITHMS §1.4 and appendix A 2.1; Melacci & Belkin 2011).

Objective, exactly as implemented (and as in the reference ``lapsvmp.m``)::

    J(α, b) = ½ [ γ_A αᵀKα + Σ_{i ∈ sv} (1 − y_i f_i)² + γ_I (Kα)ᵀ L (Kα) ],   f = Kα + b

over all n = l + u training points, where ``sv`` is the set of labelled points with
``y_i f_i < 1`` (squared hinge). Neither gamma is normalised. The thesis (S0 eq 5.3) writes
``(1/l) Σ ξ_i + γ_A' αᵀKα + γ_I'/(l+u)² αᵀKLKα``; multiplying by l, ``γ_A = 2·l·γ_A'`` and
``γ_I = 2·l·γ_I'/(l+u)²`` (the factor 2 from the ½ in J; the loss is squared, not linear, hinge).

Solvers: Newton (each step solves the bordered linear system of the current ``sv`` set and stops
when the set repeats) and preconditioned conjugate gradient (preconditioner K, exact line search
over the hinge breakpoints, Polak-Ribière with restart) with early stopping by prediction
stability on the unlabelled points or by objective decrease.
"""

import math

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from numba import njit
from scipy.linalg import lapack
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._errors import ModelError
from .._validation import Interval, Options, check_params
from ._elm import _weighted_graph_product
from ._graph import _GraphMixin, _distances_from_gram, _squared_distances

__all__ = ["LapSVMClassifier", "rbf_kernel"]

_STOP_DEFAULTS = {None: 0.0, "stability": 0.015, "objective": 1e-6}


def rbf_kernel(A, B, width, B_sq=None):
    """Gaussian kernel ``exp(-‖a − b‖² / (2 width²))`` between the rows of A and B.

    Parameters
    ----------
    A : ndarray of shape (n_a, n_features)
    B : ndarray of shape (n_b, n_features)
    width : float
        Kernel width σ in feature units.
    B_sq : ndarray of shape (n_b,), optional
        Precomputed squared norms of the rows of B.

    Returns
    -------
    K : ndarray of shape (n_a, n_b)
    """
    if B_sq is None:
        B_sq = np.einsum("ij,ij->i", B, B)
    K = A @ B.T
    _distances_from_gram(K, np.einsum("ij,ij->i", A, A), B_sq, -0.5 / (width * width))
    return np.exp(K, out=K)


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
    P_s (I + C_s Q_ss)⁻¹`` (push-through); see :func:`_newton_sv_steps`.
    """
    n = len(y)
    lab = np.flatnonzero(y != 0)
    L = sp.csr_matrix(L)
    B = _weighted_graph_product(np.zeros(n), float(gamma_I), L.indptr, L.indices, L.data, K)
    B[np.diag_indices(n)] += gamma_A
    lu, piv, info = lapack.dgetrf(B.T, overwrite_a=True)
    if info > 0:
        raise ModelError(f"LapSVMClassifier: γ_A I + γ_I L K is singular (gamma_A={gamma_A}, "
                         f"gamma_I={gamma_I})")
    E = np.zeros((n, len(lab)), order="F")
    E[lab, np.arange(len(lab))] = 1.0
    P, _ = lapack.dgetrs(lu, piv, E, trans=1, overwrite_b=True)
    z, sv_rows, b, n_iter = _newton_sv_steps(K[lab] @ P, P.sum(axis=0), y[lab], c[lab],
                                             fit_intercept, max_iter)
    return P[:, sv_rows] @ z, b, n_iter


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


class _KernelExpansionBase(ClassifierMixin, BaseEstimator):
    """Binary classifiers ``f(x) = Σ α_j k(x_j, x) + b`` over the training points (Gaussian k)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _check_binary_fit_input(self, X, y):
        """Validate once; set ``classes_``; return X, ±1/0 labels and the labelled mask."""
        check_params(self.get_params(), self._constraints, owner=type(self).__name__,
                     error=ModelError)
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        labelled = y != -1 if y.dtype.kind in "iuf" else np.ones(len(y), dtype=bool)
        self.classes_ = np.unique(y[labelled])
        if len(self.classes_) != 2:
            raise ModelError(f"Only binary classification is supported. {type(self).__name__}: "
                             f"y must hold exactly two labelled classes, got "
                             f"{len(self.classes_)} class {self.classes_.tolist()}")
        signed = np.zeros(len(y))
        signed[labelled] = np.where(y[labelled] == self.classes_[1], 1.0, -1.0)
        return X, signed, labelled

    def _set_expansion(self, X, alpha, b):
        self.X_fit_ = X
        self._X_fit_sq = np.einsum("ij,ij->i", X, X)
        self.dual_coef_ = alpha
        self.intercept_ = float(b)

    def _decision(self, X):
        """Decision values of validated float rows (the lean path used by the daemon)."""
        K = rbf_kernel(X, self.X_fit_, self.kernel_width, self._X_fit_sq)
        return K @ self.dual_coef_ + self.intercept_

    def decision_function(self, X):
        """``f(x) = Σ α_j k(x_j, x) + b``; positive favours ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._decision(X)

    def predict(self, X):
        """Class labels, ``classes_[1]`` where the decision value is positive."""
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(np.intp)]

    def _to_arrays(self):
        """The fitted model as (JSON-able hyper-parameters, arrays) for the artifact."""
        check_is_fitted(self)
        arrays = {"X_fit": self.X_fit_, "dual_coef": self.dual_coef_,
                  "intercept": np.array([self.intercept_]), "classes": self.classes_}
        return self.get_params(), arrays

    @classmethod
    def _from_arrays(cls, params, arrays):
        """Rebuild a fitted estimator (for prediction) from :meth:`_to_arrays` output."""
        model = cls(**params)
        model._set_expansion(np.asarray(arrays["X_fit"], dtype=np.float64),
                             np.asarray(arrays["dual_coef"], dtype=np.float64),
                             arrays["intercept"][0])
        model.classes_ = np.asarray(arrays["classes"])
        model.n_features_in_ = model.X_fit_.shape[1]
        return model


class LapSVMClassifier(_GraphMixin, _KernelExpansionBase):
    """Laplacian SVM with a Gaussian kernel, trained in the primal (binary).

    See the module docstring for the objective and its mapping to the thesis' scaling.

    Parameters
    ----------
    gamma_A : float, default=1e-6
        Ambient (RKHS norm) regularisation γ_A, unscaled.
    gamma_I : float, default=1.0
        Intrinsic (manifold) regularisation γ_I, unscaled (≥ 0; 0 gives an L2-SVM).
    kernel_width : float, default=1.0
        Gaussian kernel width σ in feature units: ``exp(-‖x − x'‖² / (2σ²))``.
    n_neighbors : int, default=10
        k of the symmetric kNN graph; at most ``n_samples - 1`` is used.
    graph_weights : {"heat", "binary"}, default="heat"
    graph_width : float or None, default=None
        Heat width in feature units; None = mean kNN edge length (reference behaviour).
    laplacian_normalized : bool, default=False
    laplacian_power : int, default=1
    solver : {"newton", "pcg"}, default="newton"
    max_iter : int, default=200
        Newton steps or CG iterations at most.
    cg_stop : {None, "stability", "objective"}, default="stability"
        PCG early stopping: ``"stability"`` stops when fewer than ``cg_stop_param`` (default 0.015)
        of the unlabelled predictions changed sign since the previous check (reference
        CgStopType 1); ``"objective"`` when J decreased by less than ``cg_stop_param`` (default
        1e-6, an absolute decrease as coded in the reference's CgStopType 7) since the previous
        check; None runs until the line search stalls, the gradient's K-norm falls to 1e-14 of
        its initial value (rounding level), or ``max_iter``.
    cg_stop_param : float or None, default=None
        Threshold of the rule; None takes the default above.
    cg_stop_iter : int or None, default=None
        Check the rule every this many iterations; None = ``round(sqrt(n)/2)`` for stability,
        1 for objective.
    fit_intercept : bool, default=True
        Learn the bias b (the reference's UseBias).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the positive class (+1).
    X_fit_ : ndarray of shape (n_samples, n_features)
        Training points (the kernel expansion).
    dual_coef_ : ndarray of shape (n_samples,)
        α of the expansion ``f(x) = Σ α_j k(x_j, x) + b``.
    intercept_ : float
        b.
    n_iter_ : int
        Newton steps or CG iterations performed.
    n_features_in_ : int
    """

    _constraints = {
        "gamma_A": Interval(0, None, closed="neither"),
        "gamma_I": Interval(0, None, closed="left"),
        "kernel_width": Interval(0, None, closed="neither"),
        "n_neighbors": Interval(1, None, closed="left", integer=True),
        "graph_weights": Options(("heat", "binary")),
        "graph_width": [None, Interval(0, None, closed="neither")],
        "laplacian_normalized": bool,
        "laplacian_power": Interval(1, None, closed="left", integer=True),
        "solver": Options(("newton", "pcg")),
        "max_iter": Interval(1, None, closed="left", integer=True),
        "cg_stop": Options((None, "stability", "objective")),
        "cg_stop_param": [None, Interval(0, None, closed="left")],
        "cg_stop_iter": [None, Interval(1, None, closed="left", integer=True)],
        "fit_intercept": bool,
    }

    def __init__(self, gamma_A=1e-6, gamma_I=1.0, kernel_width=1.0, n_neighbors=10,
                 graph_weights="heat", graph_width=None, laplacian_normalized=False,
                 laplacian_power=1, solver="newton", max_iter=200, cg_stop="stability",
                 cg_stop_param=None, cg_stop_iter=None, fit_intercept=True):
        self.gamma_A = gamma_A
        self.gamma_I = gamma_I
        self.kernel_width = kernel_width
        self.n_neighbors = n_neighbors
        self.graph_weights = graph_weights
        self.graph_width = graph_width
        self.laplacian_normalized = laplacian_normalized
        self.laplacian_power = laplacian_power
        self.solver = solver
        self.max_iter = max_iter
        self.cg_stop = cg_stop
        self.cg_stop_param = cg_stop_param
        self.cg_stop_iter = cg_stop_iter
        self.fit_intercept = fit_intercept

    def fit(self, X, y):
        """Fit on labelled and unlabelled rows (y = -1 marks unlabelled).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two class labels, -1 for unlabelled rows.

        Returns
        -------
        self : LapSVMClassifier
        """
        X, signed, _ = self._check_binary_fit_input(X, y)
        D2, sq = _squared_distances(X)
        L = self._graph_laplacian(X, (D2, sq))
        D2 *= -0.5 / (self.kernel_width * self.kernel_width)
        K = np.exp(D2, out=D2)
        alpha, b, self.n_iter_ = self._solve(K, L, signed)
        self._set_expansion(X, alpha, b)
        return self

    def _solve(self, K, L, signed):
        """Run the configured solver on a precomputed kernel and Laplacian (±1/0 labels)."""
        if self.solver == "newton":
            return _newton(K, L, signed, self.gamma_A, self.gamma_I, self.fit_intercept,
                           self.max_iter)
        stop_param = (_STOP_DEFAULTS[self.cg_stop] if self.cg_stop_param is None
                      else self.cg_stop_param)
        if self.cg_stop is None:
            stop_every = self.max_iter + 1
        elif self.cg_stop_iter is not None:
            stop_every = self.cg_stop_iter
        else:
            stop_every = (max(round(math.sqrt(len(signed)) / 2), 1)
                          if self.cg_stop == "stability" else 1)
        return _pcg(K, L, signed, self.gamma_A, self.gamma_I, self.fit_intercept,
                    self.max_iter, self.cg_stop, stop_param, stop_every)
