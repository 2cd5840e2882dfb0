"""Hidden layer and supervised ELM: closed forms, both branches, multi-class."""

import warnings

import numpy as np
import pytest
from scipy.special import expit

from distractd.models import ELMClassifier
from distractd.models.detectors import hidden_output, hidden_weights


def test_hidden_layer_is_seeded_uniform_sigmoid():
    W, b = hidden_weights(3, 500, 7)
    W2, b2 = hidden_weights(3, 500, np.random.default_rng(7))
    np.testing.assert_array_equal(W, W2)
    np.testing.assert_array_equal(b, b2)
    assert W.shape == (3, 500) and b.shape == (500,)
    assert -1 <= W.min() < -0.9 and 0.9 < W.max() <= 1 and b.min() < -0.9
    _, b0 = hidden_weights(3, 5, 7, bias=False)
    np.testing.assert_array_equal(b0, 0)
    X = np.random.default_rng(1).normal(size=(4, 3))
    np.testing.assert_allclose(hidden_output(X, W, b), expit(X @ W + b), rtol=1e-15)


@pytest.mark.parametrize("n_hidden", [10, 200])
def test_elm_matches_ridge_closed_form_both_branches(n_hidden):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    y_semi = y.copy()
    y_semi[::3] = -1
    model = ELMClassifier(n_hidden=n_hidden, C=10.0, random_state=3).fit(X, y_semi)
    W, b = hidden_weights(4, n_hidden, 3)
    keep = y_semi != -1
    H = expit(X[keep] @ W + b)
    T = np.where(y[keep] == 1, 1.0, -1.0)
    beta = np.linalg.solve(H.T @ H + np.eye(n_hidden) / 10.0, H.T @ T)
    np.testing.assert_allclose(model.beta_[:, 0], beta, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(model.decision_function(X), expit(X @ W + b) @ beta, rtol=1e-7,
                               atol=1e-9)
    # the prediction path (exp of [x, 1][-W; -b], compiled 1/(1+e)) is float64 to rounding
    reference = expit(X @ W + b) @ model.beta_[:, 0]
    np.testing.assert_allclose(model.decision_function(X), reference, rtol=0,
                               atol=1e-13 * np.abs(model.beta_).sum())
    assert list(model.classes_) == [0, 1]
    assert np.mean(model.predict(X) == y) > 0.8


def test_elm_multiclass_argmax():
    rng = np.random.default_rng(2)
    centres = np.array([[0, 0], [4, 0], [0, 4]])
    y = np.repeat([3, 5, 9], 30)
    X = centres[np.repeat([0, 1, 2], 30)] + rng.normal(scale=0.5, size=(90, 2))
    model = ELMClassifier(n_hidden=50, C=100.0, random_state=0).fit(X, y)
    assert model.decision_function(X).shape == (90, 3)
    assert np.mean(model.predict(X) == y) > 0.95


def test_elm_refuses_a_single_labelled_class():
    with pytest.raises(ValueError, match="two labelled"):
        ELMClassifier(n_hidden=5).fit(np.zeros((4, 2)), [1, 1, -1, -1])


def test_saturated_hidden_units_predict_without_warnings():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    model = ELMClassifier(n_hidden=30, C=10.0, random_state=0).fit(X, [0, 0, 1, 1])
    far = np.array([[-1e4], [1e4]])  # exp(-z) overflows to inf: the unit outputs exactly 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scores = model.decision_function(far)
    H = expit(far @ model.hidden_weights_ + model.hidden_bias_)
    np.testing.assert_allclose(scores, H @ model.beta_[:, 0], rtol=1e-12)
