"""Hyper-parameter selection by cross-validation on the labelled rows (S0 §5.4.3; ALGORITHMS §1.11).

:func:`select_params` runs the protocol's inner ``n_repeats`` × ``n_folds`` CV on the labelled rows
(unlabelled rows join every inner training fold of a semi-supervised model) with a model's
selection function. Every selection function has the signature
``select(estimator, grid, X, y, cv, random_state) -> params``: ``X, y`` hold every row (y = -1 for
unlabelled rows, which only ever appear in training folds), ``cv`` lists (train, test) index pairs,
and the grid point of best mean G-mean over the folds wins (ties: first in
:class:`~sklearn.model_selection.ParameterGrid` order).

SS-ELM (:func:`sselm_grid_search`): the hidden layer is computed once for all rows; per fold the
graph, ``S = HᵀLH`` and one tridiagonal reduction ``S = ZTZᵀ`` (LAPACK ``dsytrd``, several times
cheaper than an eigendecomposition) are computed once, and the labelled and test hidden rows are
rotated by Zᵀ; then every λ is one tridiagonal SPD solve ``(I + λT)⁻¹`` with l right-hand sides
(O(n_H·l)), and by the push-through identity
``β = (I + λS)⁻¹H_lᵀ(C̃⁻¹ + H_l(I + λS)⁻¹H_lᵀ)⁻¹T_l`` every C costs one l×l Cholesky solve
(l labelled rows).

LapSVM (:func:`lapsvm_grid_search`): per fold the graph Laplacian once, per fold and kernel width
the Gram matrices and ``LK``; with the Newton solver every ratio γ_A/γ_I is one solve with l
right-hand sides (an LU of ``γ_A/γ_I I + LK`` for a few ratios, else one Hessenberg reduction
``LK = Z Hs Zᵀ`` shared by every ratio), and every (γ_A, γ_I) only the Newton steps on the
labelled points.
"""

import numpy as np
import scipy.linalg as la
from numba import njit
from scipy.linalg import lapack
from sklearn import config_context
from sklearn.base import clone
from sklearn.metrics.pairwise import rbf_kernel as sklearn_rbf_kernel
from sklearn.model_selection import GroupKFold, ParameterGrid, RepeatedStratifiedKFold
from sklearn.svm import SVC

from ..._errors import ModelError
from ._elm import _encode_targets, _weighted_graph_product, hidden_output, hidden_weights
from ._scorers import rbf_kernel
from ._primal_solvers import _labelled_rows_of_solve, _newton_sv_steps
from ._scores import g_mean_rows
from ._sselm import _class_weights

__all__ = ["UNLABELLED", "select_params", "grid_search", "svm_grid_search", "sselm_grid_search",
           "lapsvm_grid_search"]

UNLABELLED = -1
"""Label of an unlabelled window or row (as in :mod:`sklearn.semi_supervised`)."""


def select_params(spec, X_labelled, y_labelled, X_unlabelled, n_folds=4, n_repeats=3,
                  random_state=0, groups=None):
    """Choose hyper-parameters by ``n_repeats`` × ``n_folds`` CV on the labelled rows only.

    Parameters
    ----------
    spec : ModelSpec
        See :func:`~distractd.models.detectors.model_specs`.
    X_labelled, y_labelled : ndarray
        Labelled rows (z-scored) and their 0/1 labels.
    X_unlabelled : ndarray
        Unlabelled rows, added to every inner training fold of a semi-supervised model.
    n_folds, n_repeats : int, default=4, 3
        The inner cross-validation (stratified).
    random_state : int, default=0
        Seed of the inner folds and of randomised estimators.
    groups : array-like of shape (n_labelled,) or None, default=None
        Driver (or drive) of each labelled row: the inner folds are then grouped
        (:class:`~sklearn.model_selection.GroupKFold`, ``min(n_folds, n_groups)`` folds, no
        repeats), so that selection is judged on driving the fold did not train on.

    Returns
    -------
    dict
        The chosen hyper-parameters.
    """
    n_lab = len(y_labelled)
    if groups is None:
        inner = RepeatedStratifiedKFold(n_splits=n_folds, n_repeats=n_repeats,
                                        random_state=random_state)
        folds = list(inner.split(X_labelled, y_labelled))
    else:
        n_groups = len(np.unique(groups))
        folds = list(GroupKFold(n_splits=min(n_folds, n_groups)).split(X_labelled, y_labelled,
                                                                      groups))
    if spec.semi_supervised:
        X = np.vstack([X_labelled, X_unlabelled])
        y = np.r_[y_labelled, np.full(len(X_unlabelled), UNLABELLED)]
        extra = np.arange(n_lab, len(y))
        folds = [(np.r_[train, extra], test) for train, test in folds]
    else:
        X, y = X_labelled, y_labelled
    select = grid_search if spec.select is None else spec.select
    return select(spec.make_estimator(random_state), spec.grid, X, y, folds, random_state)


def grid_search(estimator, grid, X, y, cv, random_state=None):
    """The grid point of best mean G-mean over the folds (ties: first in grid order).

    Equivalent to :class:`~sklearn.model_selection.GridSearchCV` with a G-mean scorer, without its
    per-fit overhead (the protocol runs about 10⁵ small fits per driver).

    Parameters
    ----------
    estimator : estimator
        Unfitted classifier, cloned per grid point.
    grid : dict of str to sequence
    X, y : ndarray
        Rows and labels (-1 rows only ever appear in training folds).
    cv : list of (ndarray, ndarray)
        (train, test) index pairs.
    random_state : object, default=None
        Unused; part of the selection signature of :class:`ModelSpec`.

    Returns
    -------
    dict
        The chosen hyper-parameters.
    """
    candidates = list(ParameterGrid(grid))
    scores = np.zeros(len(candidates))
    for i, params in enumerate(candidates):
        model = clone(estimator).set_params(**params)
        for train, test in cv:
            scores[i] += _fold_g_mean(y[test], model.fit(X[train], y[train]).predict(X[test]))
    return candidates[int(np.argmax(scores))]


def svm_grid_search(estimator, grid, X, y, cv, random_state=None):
    """:func:`grid_search` for :class:`SVMClassifier`, one Gram matrix per kernel width.

    Parameters
    ----------
    estimator : SVMClassifier
    grid : dict
        ``{"C": [...], "kernel_width": [...]}``.
    X, y, cv, random_state :
        As for :func:`grid_search`.

    Returns
    -------
    dict
        ``{"C": ..., "kernel_width": ...}``.
    """
    candidates = list(ParameterGrid(grid))
    scores = np.zeros(len(candidates))
    # On ~45 rows SVC's argument checks cost more than libsvm's fit; the parameter and
    # finiteness checks are skipped (the inputs are built here, finite and valid).
    with config_context(assume_finite=True, skip_parameter_validation=True):
        for width in grid["kernel_width"]:
            K = sklearn_rbf_kernel(X, gamma=0.5 / width ** 2)
            points = [(i, SVC(kernel="precomputed", C=params["C"]))
                      for i, params in enumerate(candidates) if params["kernel_width"] == width]
            for train, test in cv:
                K_train, K_test = K[np.ix_(train, train)], K[np.ix_(test, train)]
                for i, model in points:
                    model.fit(K_train, y[train])
                    scores[i] += _fold_g_mean(y[test], model.predict(K_test))
    return candidates[int(np.argmax(scores))]


def _fold_g_mean(y_true, predictions):
    """G-mean of one fold (rows of ``predictions`` at once); an undefined fold (a class absent
    from ``y_true``) scores 0 for every grid point, so it decides nothing."""
    return np.nan_to_num(g_mean_rows(y_true, predictions), nan=0.0)


def _axes(grid, estimator, names):
    unknown = sorted(set(grid) - set(names))
    if unknown:
        raise ModelError(f"selection grid keys must be among {list(names)}, got {unknown}")
    params = estimator.get_params()
    return {name: list(grid.get(name, [params[name]])) for name in names}


def _best(axes, scores):
    """The best grid point in ParameterGrid order from a score array indexed like ``axes``."""
    names = list(axes)
    candidates = list(ParameterGrid(axes))
    flat = [scores[tuple(axes[n].index(p[n]) for n in names)] for p in candidates]
    return candidates[int(np.argmax(flat))]


def _sselm_fold_outputs(estimator, H, X, y, train, test, C_grid, lam_grid):
    """Validation outputs, shape (len(C_grid), len(lam_grid), n_test, n_outputs), of one fold."""
    L = estimator._graph_laplacian(X[train])
    H_train = H[train]
    S = H_train.T @ _weighted_graph_product(np.zeros(len(train)), 1.0, L.indptr, L.indices,
                                            L.data, H_train)
    reflectors, diagonal, off_diagonal, tau, _ = lapack.dsytrd(
        S.T, lower=1, lwork=int(lapack.dsytrd_lwork(len(S), lower=1)[0]), overwrite_a=1)
    labelled = y[train] != -1
    y_l = y[train][labelled]
    classes = np.unique(y_l)
    weights = _class_weights(y_l, np.ones(len(y_l), dtype=bool), classes, 1.0)
    T = _encode_targets(y_l, classes)
    n_l = len(y_l)
    Y = _reflect(reflectors, tau, np.vstack([H_train[labelled], H[test]]).T)
    Y0 = np.asfortranarray(Y[:, :n_l])
    root_w = np.sqrt(weights)
    inverse_C = 1.0 / np.asarray(C_grid, dtype=np.float64)
    outputs = np.empty((len(C_grid), len(lam_grid), len(test), T.shape[1]))
    for j, lam in enumerate(lam_grid):
        _, _, Z, info = lapack.dptsv(1.0 + lam * diagonal, lam * off_diagonal, Y0)
        if info != 0:
            raise ModelError(f"sselm_grid_search: I + lam HᵀLH is not positive definite "
                             f"(lam={lam}, LAPACK dptsv info={info})")
        QP = Y.T @ Z
        Q, P = QP[:n_l], QP[n_l:]
        # (Q + diag(1/(C w)))⁻¹ = W^½ (W^½QW^½ + I/C)⁻¹ W^½: one Cholesky per C (l³/3 each;
        # one l×l eigh serving every C costs about 13 of them).
        weighted = root_w[:, None] * Q * root_w[None, :]
        for i, inverse in enumerate(inverse_C):
            shifted = weighted.copy()
            shifted[np.diag_indices(n_l)] += inverse
            factor, info = lapack.dpotrf(shifted.T, lower=1, overwrite_a=1, clean=0)
            if info != 0:
                raise ModelError(f"sselm_grid_search: Q + I/(C w) is not positive definite "
                                 f"(C={1.0 / inverse}, lam={lam}, LAPACK dpotrf info={info})")
            solved, _ = lapack.dpotrs(factor, root_w[:, None] * T, lower=1)
            outputs[i, j] = P @ (root_w[:, None] * solved)
    return outputs


def _reflect(reflectors, tau, Y):
    """``QᵀY`` (Y of shape (n, m)), Q = H_0 … H_{n-2} of ``dsytrd(lower=1)`` or ``dgehrd``.

    ``H_i = I − τ_i v vᵀ`` with ``v = (0, …, 0, 1, reflectors[i+2:, i])`` (1 at position i+1):
    the reflectors of a QR factorisation of rows 1 and beyond, so LAPACK ``dormqr`` applies
    them blocked (about twice as fast as one reflector at a time). Returns a new array.
    """
    n = len(Y)
    if n < 2:  # Q = I
        return Y.copy()
    V = reflectors[1:, :n - 1]
    rows = np.asfortranarray(Y[1:])
    lwork = int(lapack.dormqr("L", "T", V, tau[:n - 1], rows, -1)[1][0])
    rotated = lapack.dormqr("L", "T", V, tau[:n - 1], rows, lwork, overwrite_c=1)[0]
    return np.vstack([Y[:1], rotated])


def _to_labels(outputs, classes):
    if outputs.shape[-1] == 1:
        return classes[(outputs[..., 0] > 0).astype(np.intp)]
    return classes[np.argmax(outputs, axis=-1)]


def sselm_grid_search(estimator, grid, X, y, cv, random_state=None):
    """Best ``C`` and ``lam`` of an :class:`SSELMClassifier` by mean fold G-mean.

    Parameters
    ----------
    estimator : SSELMClassifier
        Supplies the fixed parameters (hidden layer, graph) and the defaults of absent grid keys.
    grid : dict
        Values of ``"C"`` and/or ``"lam"``.
    X, y : ndarray
        All rows (z-scored) and labels, -1 for unlabelled rows.
    cv : list of (ndarray, ndarray)
        (train, test) index pairs; test rows are labelled.
    random_state : object, default=None
        Unused (the estimator's ``random_state`` seeds the hidden layer).

    Returns
    -------
    dict
    """
    axes = _axes(grid, estimator, ("C", "lam"))
    params = estimator.get_params()
    W, b = hidden_weights(X.shape[1], params["n_hidden"], params["random_state"],
                          bias=params["bias"])
    H = hidden_output(np.asarray(X, dtype=np.float64), W, b)
    classes = np.unique(y[y != -1])
    scores = np.zeros((len(axes["C"]), len(axes["lam"])))
    for train, test in cv:
        outputs = _sselm_fold_outputs(estimator, H, X, y, train, test, axes["C"], axes["lam"])
        scores += _fold_g_mean(y[test], _to_labels(outputs, classes))
    return _best(axes, scores)


def lapsvm_grid_search(estimator, grid, X, y, cv, random_state=None):
    """Best ``gamma_A``, ``gamma_I`` and ``kernel_width`` of a :class:`LapSVMClassifier`.

    Parameters are as for :func:`sselm_grid_search`; the estimator's solver settings are used for
    every fit. With the Newton solver and every ``gamma_I > 0``, every ratio γ_A/γ_I of a fold
    and width costs one solve shared by its grid points (see :func:`_lapsvm_width_outputs`);
    otherwise every grid point is one solver run on the fold's Gram matrices.

    Returns
    -------
    dict
    """
    axes = _axes(grid, estimator, ("gamma_A", "gamma_I", "kernel_width"))
    scores = np.zeros([len(v) for v in axes.values()])
    classes = np.unique(y[y != -1])
    params = estimator.get_params()
    reuse = params["solver"] == "newton" and min(axes["gamma_I"]) > 0
    model = clone(estimator)
    for train, test in cv:
        X_train = X[train]
        L = estimator._graph_laplacian(X_train)
        labelled = y[train] != -1
        signed = np.where(labelled, np.where(y[train] == classes[1], 1.0, -1.0), 0.0)
        sq = np.einsum("ij,ij->i", X_train, X_train)
        outputs = np.empty((len(axes["gamma_A"]), len(axes["gamma_I"]), len(test)))
        for k, width in enumerate(axes["kernel_width"]):
            K = rbf_kernel(X_train, X_train, width, sq)
            K_test = rbf_kernel(X[test], X_train, width, sq)
            if reuse:
                outputs = _lapsvm_width_outputs(K, K_test, L, signed, axes["gamma_A"],
                                                axes["gamma_I"], params["fit_intercept"],
                                                params["max_iter"])
            else:
                for i, gamma_A in enumerate(axes["gamma_A"]):
                    for j, gamma_I in enumerate(axes["gamma_I"]):
                        model.set_params(gamma_A=gamma_A, gamma_I=gamma_I)
                        alpha, b, _ = model._solve(K, L, signed)
                        outputs[i, j] = K_test @ alpha + b
            scores[:, :, k] += _fold_g_mean(y[test], classes[(outputs > 0).astype(np.intp)])
    return _best(axes, scores)


_LU_RATIOS_MAX = 6
"""Up to this many distinct ratios γ_A/γ_I, one LU of ``μI + LK`` per ratio (LAPACK ``dgetrf``,
blocked BLAS-3) is cheaper than one Hessenberg reduction (``dgehrd``, 14 times slower than
``dgetrf`` at n = 2100 on one core, measured 2026-11-25) and its reflector applications."""


def _lapsvm_width_outputs(K, K_test, L, signed, gamma_A_grid, gamma_I_grid, fit_intercept,
                          max_iter):
    """Newton LapSVM test outputs, shape (len(gamma_A_grid), len(gamma_I_grid), n_test).

    ``B⁻¹E_l = X_μ / γ_I`` with ``X_μ = (μI + LK)⁻¹E_l`` and ``μ = γ_A/γ_I``: grid points
    sharing a ratio μ (5 distinct ratios on a 3 × 3 decade grid, 25 on a 13 × 13 one; ratios
    equal to 12 significant digits are merged) share ``K_l X_μ`` and ``1ᵀX_μ``; each point then
    runs the Newton steps of :func:`._primal_solvers._newton_sv_steps` on the labelled points
    only, and its test outputs are ``K_test X_μ[:, sv] z / γ_I + b``. The ratio's products come
    from one LU per ratio (up to :data:`_LU_RATIOS_MAX` ratios, :func:`_lu_ratio_products`) or
    else from one Hessenberg reduction ``LK = Z Hs Zᵀ`` shared by every ratio
    (:func:`_hessenberg_ratio_products`).
    """
    n = len(K)
    lab = np.flatnonzero(signed != 0)
    LK = _weighted_graph_product(np.zeros(n), 1.0, L.indptr, L.indices, L.data, K)
    ratios = {}
    for i, gamma_A in enumerate(gamma_A_grid):
        for j, gamma_I in enumerate(gamma_I_grid):
            ratios.setdefault(float(f"{gamma_A / gamma_I:.12e}"), []).append((i, j))
    if len(ratios) <= _LU_RATIOS_MAX:
        products = _lu_ratio_products(LK, K, K_test, lab, ratios)
    else:
        products = _hessenberg_ratio_products(LK, K, K_test, lab, ratios)
    y_l, c_l = signed[lab], np.ones(len(lab))
    outputs = np.empty((len(gamma_A_grid), len(gamma_I_grid), len(K_test)))
    for (Q_mu, ones_mu, test_outputs), points in zip(products, ratios.values()):
        for i, j in points:
            scale = 1.0 / gamma_I_grid[j]
            z, sv_rows, b, _ = _newton_sv_steps(scale * Q_mu, scale * ones_mu, y_l, c_l,
                                                fit_intercept, max_iter)
            outputs[i, j] = scale * test_outputs(sv_rows, z) + b
    return outputs


def _lu_ratio_products(LK, K, K_test, lab, ratios):
    """``(K_l X_μ, 1ᵀX_μ, test_outputs)`` per ratio μ, from an LU of ``A = μI + LK``.

    ``K_l X_μ`` and ``1ᵀX_μ`` are the labelled rows of ``A⁻ᵀ[K_lᵀ, 1]``. The points are
    reordered with the labelled ones last, so that with ``Aᵀ = PLU`` only the trailing l × l
    block of U is back-substituted (n²(l + 1) + l²(l + 1) multiply-adds instead of 2n²(l + 1)).
    ``test_outputs(sv_rows, z)`` is ``K_test X_μ[:, sv_rows] z = K_test A⁻¹(E_sv z)``: one
    vector solve per grid point instead of n_test more right-hand sides per ratio.
    """
    n, n_l = len(LK), len(lab)
    order = np.r_[np.setdiff1d(np.arange(n), lab), lab]
    LK = LK[np.ix_(order, order)]
    K_test = np.ascontiguousarray(K_test[:, order])
    rhs = np.empty((n, n_l + 1), order="F")
    rhs[:, :n_l] = K[np.ix_(order, lab)]
    rhs[:, n_l] = 1.0
    for mu in ratios:
        shifted = LK.copy()
        shifted[np.diag_indices(n)] += mu
        lu, piv, info = lapack.dgetrf(shifted.T, overwrite_a=True)
        if info > 0:
            raise ModelError(f"lapsvm_grid_search: μI + LK is singular (μ = γ_A/γ_I = {mu})")
        solved = _labelled_rows_of_solve(lu, piv, rhs, n - n_l)
        yield solved[:, :n_l].T, solved[:, n_l], _vector_solve_outputs(lu, piv, K_test, n - n_l)


def _vector_solve_outputs(lu, piv, K_test, start):
    """``test_outputs(sv_rows, z) = K_test A⁻¹ e`` with e = z on the labelled rows ``start +
    sv_rows``, A⁻¹ from the LU of Aᵀ (a transposed solve)."""
    def test_outputs(sv_rows, z):
        e = np.zeros(len(lu))
        e[start + sv_rows] = z
        return K_test @ lapack.dgetrs(lu, piv, e, trans=1, overwrite_b=True)[0]
    return test_outputs


def _hessenberg_ratio_products(LK, K, K_test, lab, ratios):
    """``(K_l X_μ, 1ᵀX_μ, test_outputs)`` per ratio μ from one Hessenberg reduction of LK.

    ``LK = Z Hs Zᵀ`` (LAPACK ``dgehrd`` once; Z is kept as reflectors, applied by
    :func:`_reflect`), so ``ZᵀX_μ = (μI + Hs)⁻¹ZᵀE_l``: one O(n²) elimination of the shifted
    Hessenberg matrix and one triangular solve with l right-hand sides per ratio, then the
    products with ``K_l Z``, ``1ᵀZ`` and ``K_test Z`` (``test_outputs(sv_rows, z)`` is
    ``K_test X_μ[:, sv_rows] z``).
    """
    n = len(LK)
    reduced, tau, _ = lapack.dgehrd(np.asfortranarray(LK), overwrite_a=1,
                                    lwork=int(lapack.dgehrd_lwork(n)[0]))
    Hs = np.ascontiguousarray(reduced)
    # Zᵀ applied to [E_l, K_lᵀ, 1, K_testᵀ] at once, Z never formed.
    n_l, n_test = len(lab), len(K_test)
    Y = np.zeros((n, 2 * n_l + 1 + n_test))
    Y[lab, np.arange(n_l)] = 1.0
    Y[:, n_l:2 * n_l] = K[lab].T
    Y[:, 2 * n_l] = 1.0
    Y[:, 2 * n_l + 1:] = K_test.T
    Y = _reflect(reduced, tau, Y)
    ZE = Y[:, :n_l].copy()
    K_lab_Z, ones_Z, K_test_Z = Y[:, n_l:2 * n_l].T, Y[:, 2 * n_l], Y[:, 2 * n_l + 1:].T
    for mu in ratios:
        R = ZE.copy()
        U = _eliminate_shifted_hessenberg(Hs, mu, R)
        X_mu = la.solve_triangular(U, R, check_finite=False, overwrite_b=True)
        test_mu = K_test_Z @ X_mu
        yield K_lab_Z @ X_mu, ones_Z @ X_mu, lambda sv_rows, z, test_mu=test_mu: (
            test_mu[:, sv_rows] @ z)


@njit(cache=True, error_model="numpy")
def _eliminate_shifted_hessenberg(Hs, mu, R):
    """Upper-triangular U of ``Hs + mu I`` (Hs upper Hessenberg) by Gaussian elimination with
    partial pivoting; the same row operations are applied to ``R`` in place (O(n²) + O(n·m))."""
    n = Hs.shape[0]
    U = Hs.copy()
    for i in range(n):
        U[i, i] += mu
    for k in range(n - 1):
        if abs(U[k + 1, k]) > abs(U[k, k]):
            for j in range(k, n):
                U[k, j], U[k + 1, j] = U[k + 1, j], U[k, j]
            for j in range(R.shape[1]):
                R[k, j], R[k + 1, j] = R[k + 1, j], R[k, j]
        m = U[k + 1, k] / U[k, k]
        U[k + 1, k] = 0.0
        for j in range(k + 1, n):
            U[k + 1, j] -= m * U[k, j]
        for j in range(R.shape[1]):
            R[k + 1, j] -= m * R[k, j]
    return U
