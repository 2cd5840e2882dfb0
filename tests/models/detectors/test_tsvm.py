"""TSVM baseline: class ratio kept, swaps lower the objective, beats the supervised SVM on clusters."""

import numpy as np
import pytest

from distractd.models import LapSVMClassifier, TSVMClassifier
from distractd.models.detectors import rbf_kernel
from distractd.models.detectors._tsvm import _worst_pair


def _blobs(seed):
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(loc=[-1.5, 0], scale=0.6, size=(100, 2)),
              rng.normal(loc=[1.5, 0], scale=0.6, size=(100, 2))]
    y_true = np.repeat([0, 1], 100)
    y = np.full(200, -1)
    y[[0, 1, 100, 101]] = [0, 0, 1, 1]
    return X, y, y_true


def test_keeps_the_class_ratio_and_labels_the_clusters():
    X, y, y_true = _blobs(0)
    model = TSVMClassifier(C=10.0, C_unlabelled=1.0, kernel_width=1.0).fit(X, y)
    assert np.count_nonzero(model.transductive_labels_ > 0) == 98
    assert np.mean(model.predict(X) == y_true) > 0.95
    assert model.n_swaps_ <= 18 * model.max_swaps


def test_without_unlabelled_points_it_is_the_squared_hinge_svm():
    X, y, y_true = _blobs(1)
    keep = y != -1
    tsvm = TSVMClassifier(C=2.0, kernel_width=1.0).fit(X[keep], y[keep])
    svm = LapSVMClassifier(gamma_A=0.5, gamma_I=0.0, kernel_width=1.0).fit(X[keep], y[keep])
    # ½[αᵀKα + C Σξ²] is (C/2)[(1/C) αᵀKα + Σξ²]: the same minimiser as gamma_A = 1/C.
    np.testing.assert_allclose(tsvm.decision_function(X), svm.decision_function(X), atol=1e-9)


def test_worst_pair_rule():
    labels = np.array([1.0, 1.0, -1.0, -1.0])
    assert _worst_pair(np.array([-0.5, 2.0, 0.8, -3.0]), labels) == (0, 2)
    assert _worst_pair(np.array([0.5, 2.0, -0.2, -3.0]), labels) is None


def test_swap_lowers_the_objective():
    X, y, _ = _blobs(2)
    K = rbf_kernel(X, X, 1.0)
    model = TSVMClassifier(C=10.0, C_unlabelled=1.0, kernel_width=1.0, max_swaps=0).fit(X, y)
    full = TSVMClassifier(C=10.0, C_unlabelled=1.0, kernel_width=1.0).fit(X, y)

    def objective(fitted):
        signed = np.where(y == -1, 0.0, np.where(y == 1, 1.0, -1.0))
        signed[y == -1] = fitted.transductive_labels_
        c = np.where(y == -1, 1.0, 10.0)
        f = K @ fitted.dual_coef_ + fitted.intercept_
        xi = np.maximum(0.0, 1.0 - signed * f)
        return 0.5 * (fitted.dual_coef_ @ K @ fitted.dual_coef_ + c @ xi ** 2)

    assert objective(full) <= objective(model) + 1e-9


def test_needs_two_classes():
    with pytest.raises(ValueError, match="exactly two labelled classes"):
        TSVMClassifier().fit(np.zeros((3, 1)) + [[0], [1], [2]], [1, 1, -1])
