"""Grid search with reuse: fold outputs equal plain refits; choices equal a brute-force search."""

import numpy as np
import pytest
from scipy.linalg import lapack
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid, StratifiedKFold

from distractd._errors import ModelError
from distractd.models import LapSVMClassifier, SSELMClassifier
from distractd.models.detectors import g_mean, g_mean_rows, rbf_kernel
from distractd.models.detectors._elm import hidden_output
from distractd.models.detectors import _selection
from distractd.models.detectors._primal_solvers import _labelled_rows_of_solve, _newton_sv_steps
from distractd.models.detectors._selection import (
    _lapsvm_width_outputs, _reflect, _sselm_fold_outputs, lapsvm_grid_search,
    sselm_grid_search,
)


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(loc=-1.0, size=(60, 3)), rng.normal(loc=1.0, size=(60, 3))]
    y_true = np.repeat([0, 1], 60)
    labelled = np.r_[rng.choice(60, 12, replace=False), 60 + rng.choice(60, 12, replace=False)]
    order = np.r_[labelled, np.setdiff1d(np.arange(120), labelled)]
    X, y_true = X[order], y_true[order]
    y = np.r_[y_true[:24], np.full(96, -1)]
    folds = [(np.r_[train, np.arange(24, 120)], test) for train, test in
             StratifiedKFold(4, shuffle=True, random_state=0).split(X[:24], y[:24])]
    return X, y, folds


def _brute_force(estimator, grid, X, y, folds):
    candidates = list(ParameterGrid(grid))
    scores = [sum(g_mean(y[test], clone(estimator).set_params(**p).fit(X[train], y[train])
                         .predict(X[test])) for train, test in folds) for p in candidates]
    return candidates[int(np.argmax(scores))]


def test_sselm_fold_outputs_equal_refits():
    X, y, folds = _problem()
    estimator = SSELMClassifier(n_hidden=50, n_neighbors=5, random_state=3)
    train, test = folds[0]
    C_grid, lam_grid = [0.1, 10.0], [0.0, 0.5, 100.0]
    model = clone(estimator).fit(X, y)
    H = hidden_output(X, model.hidden_weights_, model.hidden_bias_)
    outputs = _sselm_fold_outputs(estimator, H, X, y, train, test, C_grid, lam_grid)
    for i, C in enumerate(C_grid):
        for j, lam in enumerate(lam_grid):
            refit = clone(estimator).set_params(C=C, lam=lam).fit(X[train], y[train])
            np.testing.assert_allclose(outputs[i, j, :, 0], refit.decision_function(X[test]),
                                       rtol=1e-7, atol=1e-9)


def test_sselm_choice_equals_brute_force():
    X, y, folds = _problem(1)
    estimator = SSELMClassifier(n_hidden=40, n_neighbors=5, random_state=0)
    grid = {"C": [1e-3, 1.0, 1e3], "lam": [1e-2, 1.0, 1e2]}
    assert sselm_grid_search(estimator, grid, X, y, folds) == _brute_force(estimator, grid, X,
                                                                           y, folds)


def test_lapsvm_choice_equals_brute_force():
    X, y, folds = _problem(2)
    estimator = LapSVMClassifier(n_neighbors=5)
    grid = {"gamma_A": [1e-3, 1.0], "gamma_I": [1e-3, 1.0], "kernel_width": [0.3, 3.0]}
    chosen = lapsvm_grid_search(estimator, grid, X, y, folds)
    assert chosen == _brute_force(estimator, grid, X, y, folds)
    assert estimator.get_params()["gamma_A"] == 1e-6


@pytest.mark.parametrize("lu_ratios_max", [0, 100], ids=["hessenberg", "lu_per_ratio"])
def test_lapsvm_width_outputs_equal_newton_refits(lu_ratios_max, monkeypatch):
    monkeypatch.setattr(_selection, "_LU_RATIOS_MAX", lu_ratios_max)
    X, y, folds = _problem(3)
    train, test = folds[1]
    estimator = LapSVMClassifier(n_neighbors=5, kernel_width=1.5)
    L = estimator._graph_laplacian(X[train])
    signed = np.where(y[train] == -1, 0.0, np.where(y[train] == 1, 1.0, -1.0))
    K, K_test = rbf_kernel(X[train], X[train], 1.5), rbf_kernel(X[test], X[train], 1.5)
    gamma_A, gamma_I = [1e-6, 1e-2, 10.0], [1e-4, 1.0, 1e3]
    outputs = _lapsvm_width_outputs(K, K_test, L, signed, gamma_A, gamma_I, True, 200)
    for i, a in enumerate(gamma_A):
        for j, g in enumerate(gamma_I):
            refit = clone(estimator).set_params(gamma_A=a, gamma_I=g).fit(X[train], y[train])
            expected = refit.decision_function(X[test])
            # cond(γ_A I + γ_I LK) reaches 3e12 here (γ_A = 1e-6, γ_I = 1e3), so the solvers may
            # differ by up to cond·eps ≈ 3e-4 of the largest output, with the CPU's BLAS kernels:
            # measured 5e-6 (OpenBLAS Haswell), 1.1e-5 (OPENBLAS_CORETYPE=Prescott: Katmai);
            # 1e-12 where the condition number is below 1e5.
            np.testing.assert_allclose(outputs[i, j], expected, rtol=0,
                                       atol=1e-4 * np.abs(expected).max())


def test_g_mean_rows_equal_g_mean_row_by_row():
    rng = np.random.default_rng(4)
    predictions = rng.integers(0, 2, size=(3, 5, 17))
    for y_true in (rng.integers(0, 2, size=17), np.zeros(17, dtype=int)):
        expected = [[g_mean(y_true, row) for row in block] for block in predictions]
        np.testing.assert_array_equal(g_mean_rows(y_true, predictions), expected)


def test_reflect_applies_the_transposed_orthogonal_factor():
    rng = np.random.default_rng(6)
    for n in (2, 30):
        reduced, tau, _ = lapack.dgehrd(np.asfortranarray(rng.normal(size=(n, n))))
        Z = lapack.dorghr(reduced, tau)[0]
        Y = rng.normal(size=(n, 4))
        np.testing.assert_allclose(_reflect(reduced, tau, Y), Z.T @ Y, rtol=0, atol=1e-13)
    one = rng.normal(size=(1, 4))
    np.testing.assert_array_equal(_reflect(np.ones((1, 1)), np.zeros(0), one), one)


def test_newton_sv_steps_equal_a_plain_numpy_newton():
    X, y, _ = _problem(5)
    K = rbf_kernel(X, X, 3.0)
    L = LapSVMClassifier(n_neighbors=5)._graph_laplacian(X).toarray()
    lab = np.flatnonzero(y != -1)
    P = np.linalg.solve(1e-4 * np.eye(len(y)) + 1e-2 * L @ K, np.eye(len(y))[:, lab])
    Q, ones_P = K[lab] @ P, P.sum(axis=0)
    y_l = np.where(y[lab] == 1, 1.0, -1.0)
    c_l = np.random.default_rng(5).uniform(0.5, 2.0, len(lab))
    z, sv_rows, b, n_iter = _newton_sv_steps(Q, ones_P, y_l, c_l, True, 200)
    f_l, b_ref, sv_prev = np.zeros(len(lab)), 0.0, np.zeros(len(lab), dtype=bool)
    for steps in range(200):
        sv = y_l * (f_l + b_ref) < 1.0
        if np.array_equal(sv, sv_prev):
            break
        rows = np.flatnonzero(sv)
        M = np.eye(len(rows)) + c_l[rows, None] * Q[np.ix_(rows, rows)]
        m, k = np.linalg.solve(M, np.c_[c_l[rows] * y_l[rows], c_l[rows]]).T
        b_ref = ones_P[rows] @ m / (ones_P[rows] @ k)
        z_ref = m - b_ref * k
        f_l, sv_prev = Q[:, rows] @ z_ref, sv
    assert n_iter == steps == 4
    np.testing.assert_array_equal(sv_rows, rows)
    np.testing.assert_allclose(z, z_ref, rtol=1e-12)
    assert b == pytest.approx(b_ref, rel=1e-12)


def test_unknown_grid_key():
    X, y, folds = _problem()
    with pytest.raises(ModelError, match="selection grid keys"):
        sselm_grid_search(SSELMClassifier(n_hidden=5), {"n_hidden": [5]}, X, y, folds)


def test_labelled_rows_of_solve_equal_a_dense_solve():
    rng = np.random.default_rng(7)
    A = rng.normal(size=(40, 40)) + 8.0 * np.eye(40)
    rhs = rng.normal(size=(40, 5))
    lu, piv, info = lapack.dgetrf(A)
    assert info == 0
    for start in (0, 31, 39):
        np.testing.assert_allclose(_labelled_rows_of_solve(lu, piv, rhs, start),
                                   np.linalg.solve(A, rhs)[start:], rtol=0, atol=1e-12)


def test_lapsvm_fit_does_not_depend_on_where_the_labelled_rows_are():
    X, y, _ = _problem(8)
    order = np.random.default_rng(8).permutation(len(y))  # labelled rows scattered
    model = LapSVMClassifier(n_neighbors=5, gamma_A=1e-2, gamma_I=1.0, kernel_width=1.5)
    first = clone(model).fit(X, y)
    scattered = clone(model).fit(X[order], y[order])
    np.testing.assert_allclose(scattered.dual_coef_, first.dual_coef_[order], rtol=0,
                               atol=1e-10 * np.abs(first.dual_coef_).max())
    assert scattered.intercept_ == pytest.approx(first.intercept_, rel=1e-10)
