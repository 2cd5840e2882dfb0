"""Hyper-parameter selection with reuse across the grid (S0 §5.4.3; ALGORITHMS §1.11).

Both functions have the selection signature of the evaluation protocol,
``select(estimator, grid, X, y, cv, random_state) -> params``: ``X, y`` hold every row (y = -1 for
unlabelled rows, which only ever appear in training folds), ``cv`` lists (train, test) index pairs,
and the grid point of best mean G-mean over the folds wins (ties: first in
:class:`~sklearn.model_selection.ParameterGrid` order).

SS-ELM (:func:`sselm_grid_search`): the hidden layer is computed once for all rows; per fold the
graph, ``S = HᵀLH`` and one tridiagonal reduction ``S = ZTZᵀ`` (LAPACK ``dsytrd``, several times
cheaper than an eigendecomposition) are computed once, and the labelled and test hidden rows are
rotated by Zᵀ; then every λ is one tridiagonal SPD solve ``(I + λT)⁻¹`` with l right-hand sides
(O(n_H·l)), and by the push-through identity
``β = (I + λS)⁻¹H_lᵀ(C̃⁻¹ + H_l(I + λS)⁻¹H_lᵀ)⁻¹T_l`` every C costs one l×l solve (l labelled rows).

LapSVM (:func:`lapsvm_grid_search`): per fold the graph Laplacian once, per fold and kernel width
the Gram matrices once; every (γ_A, γ_I) is then one solver run.
"""

import numpy as np
import scipy.linalg as la
from numba import njit
from scipy.linalg import lapack
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid

from .._errors import ModelError
from ._elm import _encode_targets, _weighted_graph_product, hidden_output, hidden_weights
from ._lapsvm import rbf_kernel
from ._metrics import g_mean
from ._sselm import _class_weights

__all__ = ["sselm_grid_search", "lapsvm_grid_search"]


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
    Y = np.vstack([H_train[labelled], H[test]]).T.copy()
    _reflect(reflectors, tau, Y)
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
        # (Q + diag(1/(C w)))⁻¹ = W^½ (W^½QW^½ + I/C)⁻¹ W^½: one l×l eigh serves every C.
        mu, U = la.eigh(root_w[:, None] * Q * root_w[None, :], check_finite=False)
        UT = U.T @ (root_w[:, None] * T)
        PU = P @ (root_w[:, None] * U)
        outputs[:, j] = np.einsum("tk,ck,ko->cto", PU, 1.0 / (mu[None, :] + inverse_C[:, None]),
                                  UT)
    return outputs


@njit(cache=True)
def _reflect(reflectors, tau, Y):
    """``Y ← QᵀY`` (Y in C order) for the orthogonal Q of ``dsytrd(lower=1)``: ``Q = H_0 … H_{n-2}``.

    ``H_i = I − τ_i v vᵀ`` with ``v = (0, …, 0, 1, reflectors[i+2:, i])`` (1 at position i+1).
    Loops run along the rows of Y so that they vectorise.
    """
    n = reflectors.shape[0]
    s = np.empty(Y.shape[1])
    for i in range(n - 1):
        t = tau[i]
        if t == 0.0:
            continue
        s[:] = Y[i + 1]
        for r in range(i + 2, n):
            vr = reflectors[r, i]
            row = Y[r]
            for col in range(s.shape[0]):
                s[col] += vr * row[col]
        s *= t
        Y[i + 1] -= s
        for r in range(i + 2, n):
            vr = reflectors[r, i]
            row = Y[r]
            for col in range(s.shape[0]):
                row[col] -= vr * s[col]


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
        predictions = _to_labels(outputs, classes)
        for index in np.ndindex(scores.shape):
            scores[index] += g_mean(y[test], predictions[index])
    return _best(axes, scores)


def lapsvm_grid_search(estimator, grid, X, y, cv, random_state=None):
    """Best ``gamma_A``, ``gamma_I`` and ``kernel_width`` of a :class:`LapSVMClassifier`.

    Parameters are as for :func:`sselm_grid_search`; the estimator's solver settings are used for
    every fit.

    Returns
    -------
    dict
    """
    axes = _axes(grid, estimator, ("gamma_A", "gamma_I", "kernel_width"))
    scores = np.zeros([len(v) for v in axes.values()])
    classes = np.unique(y[y != -1])
    model = clone(estimator)
    for train, test in cv:
        X_train = X[train]
        L = estimator._graph_laplacian(X_train)
        labelled = y[train] != -1
        signed = np.where(labelled, np.where(y[train] == classes[1], 1.0, -1.0), 0.0)
        sq = np.einsum("ij,ij->i", X_train, X_train)
        for k, width in enumerate(axes["kernel_width"]):
            K = rbf_kernel(X_train, X_train, width, sq)
            K_test = rbf_kernel(X[test], X_train, width, sq)
            for i, gamma_A in enumerate(axes["gamma_A"]):
                for j, gamma_I in enumerate(axes["gamma_I"]):
                    model.set_params(gamma_A=gamma_A, gamma_I=gamma_I)
                    alpha, b, _ = model._solve(K, L, signed)
                    predicted = classes[(K_test @ alpha + b > 0).astype(np.intp)]
                    scores[i, j, k] += g_mean(y[test], predicted)
    return _best(axes, scores)
