"""SS-ELM: golden parity with sselm.m (both branches), n_H = N, zero-weight unlabelled rows."""

import warnings

import numpy as np
import pytest
import scipy.io as sio
from scipy.special import expit

from distractd.models import SSELMClassifier
from distractd.models.detectors import hidden_output, knn_graph, laplacian
from distractd.models.detectors._elm import _solve_graph_dual_mixed, _solve_output_weights
from distractd.models.detectors._sselm import _class_weights, _sselm_beta


@pytest.fixture(scope="module")
def g50c(shared_data):
    golden = sio.loadmat(shared_data / "golden" / "sselm_g50c.mat", squeeze_me=True,
                         struct_as_record=False)
    X = np.vstack([golden["Xl"], golden["Xu"]])
    y = np.r_[(golden["Yl"] > 0).astype(int), np.full(len(golden["Xu"]), -1)]
    return golden, X, y


@pytest.mark.parametrize("n_hidden", [100, 2000])
def test_beta_matches_reference_both_branches(g50c, n_hidden):
    golden, X, y = g50c
    H = expit(X @ golden[f"W_nh{n_hidden}"])
    beta = _sselm_beta(H, golden["L"], y, y != -1, np.array([0, 1]), 100.0, 1000.0)[:, 0]
    reference = golden[f"beta_nh{n_hidden}"]
    assert np.abs(beta - reference).max() / np.abs(reference).max() < 1e-10


def test_estimator_reference_settings_reproduce_graph_and_solution(g50c):
    golden, X, y = g50c
    model = SSELMClassifier(n_hidden=100, C=100.0, lam=1000.0, n_neighbors=50,
                            graph_weights="binary", laplacian_normalized=True, laplacian_power=5,
                            bias=False, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.hidden_bias_, 0)
    H = expit(X @ model.hidden_weights_)
    beta = _sselm_beta(H, golden["L"], y, y != -1, np.array([0, 1]), 100.0, 1000.0)
    np.testing.assert_allclose(model.beta_, beta, rtol=1e-9, atol=1e-12)
    train = model.predict(X[y != -1])
    assert np.mean(train == y[y != -1]) >= 0.98


def test_class_balanced_weights():
    y = np.array([0, 0, 0, 1, -1, -1])
    c = _class_weights(y, y != -1, np.array([0, 1]), 10.0)
    np.testing.assert_allclose(c, [10 * 4 / 6] * 3 + [10 * 4 / 2, 0, 0])
    assert c[y != -1].mean() == pytest.approx(10.0)


@pytest.mark.parametrize("n_hidden", [29, 30, 31])
def test_branches_agree_around_n_hidden_equal_n_samples(n_hidden):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = np.where(rng.random(30) < 0.5, -1, (X[:, 0] > 0).astype(int))
    model = SSELMClassifier(n_hidden=n_hidden, C=5.0, lam=0.3, n_neighbors=4,
                            random_state=1).fit(X, y)
    H = hidden_output(X, model.hidden_weights_, model.hidden_bias_)
    L = laplacian(knn_graph(X, 4)).toarray()
    c = _class_weights(y, y != -1, model.classes_, 5.0)
    T = np.where(y == 1, 1.0, -1.0) * (y != -1)
    primal = np.linalg.solve(np.eye(n_hidden) + H.T @ (c[:, None] * H) + 0.3 * H.T @ L @ H,
                             H.T @ (c * T))
    np.testing.assert_allclose(model.beta_[:, 0], primal, rtol=1e-8, atol=1e-10)


def _dual_problem(C, lam):
    rng = np.random.default_rng(6)
    X = rng.normal(size=(150, 4))
    y = np.where(rng.random(150) < 0.3, (X[:, 0] > 0).astype(int), -1)
    H = hidden_output(X, rng.uniform(-1, 1, (4, 300)), rng.uniform(-1, 1, 300))
    L = laplacian(knn_graph(X, 6))
    c = _class_weights(y, y != -1, np.array([0, 1]), C)
    T = (np.where(y == 1, 1.0, -1.0) * (y != -1))[:, None]
    A = np.eye(150) + (np.diag(c) + lam * L.toarray()) @ H @ H.T
    exact = np.linalg.solve(A, c[:, None] * T)
    return H, L, c, T, exact


@pytest.mark.parametrize("C, lam", [(1.0, 1e-3), (1.0, 1.0), (10.0, 10.0)])
def test_mixed_precision_dual_reaches_float64_solution(C, lam):
    H, L, c, T, exact = _dual_problem(C, lam)
    u = _solve_graph_dual_mixed(H, L, c, lam, c[:, None] * T)
    assert u is not None and u.dtype == np.float64
    np.testing.assert_allclose(u, exact, rtol=0, atol=1e-9 * np.abs(exact).max())


@pytest.mark.parametrize("C, lam", [(1e3, 1e3), (1.0, 1e3)])
def test_ill_conditioned_dual_falls_back_to_float64_without_warnings(C, lam):
    # float32 refinement diverges here (the residual grows ~40x per step; unscaled, its cast
    # to float32 overflowed after ~25 steps): it must stop at once and solve in float64
    H, L, c, T, exact = _dual_problem(C, lam)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _solve_graph_dual_mixed(H, L, c, lam, c[:, None] * T) is None
        beta = _solve_output_weights(H, T, c, L, lam)
    np.testing.assert_allclose(beta, H.T @ exact, rtol=0, atol=1e-8 * np.abs(beta).max())


@pytest.mark.parametrize("C, lam", [(1e39, 1.0), (1.0, 1e39)])
def test_penalties_beyond_float32_fall_back_to_float64_without_warnings(C, lam):
    H, L, c, T, _ = _dual_problem(C, lam)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _solve_graph_dual_mixed(H, L, c, lam, c[:, None] * T) is None
        beta = _solve_output_weights(H, T, c, L, lam)
    # float64 backward stability of the dual solve u (β = Hᵀu): residual ~ ε·‖A‖·‖u‖
    A = np.eye(150) + (np.diag(c) + lam * L.toarray()) @ H @ H.T
    u = np.linalg.lstsq(H.T, beta, rcond=None)[0]
    assert np.all(np.isfinite(beta))
    assert np.abs(A @ u - c[:, None] * T).max() <= 1e-10 * np.abs(A).sum(axis=1).max() * np.abs(
        u).max()


def test_unlabelled_rows_have_no_weight_without_manifold_term():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    y = (X[:, 1] > 0).astype(int)
    y_semi = np.r_[y[:20], np.full(20, -1)]
    full = SSELMClassifier(n_hidden=15, C=3.0, lam=0.0, random_state=2).fit(X, y_semi)
    labelled_only = SSELMClassifier(n_hidden=15, C=3.0, lam=0.0, random_state=2).fit(X[:20],
                                                                                   y[:20])
    np.testing.assert_allclose(full.beta_, labelled_only.beta_, rtol=1e-9)


def test_manifold_term_propagates_labels_along_clusters():
    rng = np.random.default_rng(4)
    t = rng.uniform(0, np.pi, 150)
    X = np.r_[np.c_[np.cos(t), np.sin(t)], np.c_[1 - np.cos(t), 0.5 - np.sin(t)]]
    X += rng.normal(scale=0.05, size=X.shape)
    y_true = np.repeat([0, 1], 150)
    y = np.full(300, -1)
    y[[0, 150]] = [0, 1]
    accuracy = {lam: np.mean(SSELMClassifier(n_hidden=300, C=1e3, lam=lam, n_neighbors=6,
                                             random_state=0).fit(X, y).predict(X) == y_true)
                for lam in (0.0, 1e6)}
    assert accuracy[1e6] > accuracy[0.0] + 0.1


def test_multiclass():
    rng = np.random.default_rng(5)
    X = np.repeat([[0, 0], [5, 0], [0, 5]], 40, axis=0) + rng.normal(size=(120, 2))
    y_true = np.repeat([0, 1, 2], 40)
    y = np.where(rng.random(120) < 0.3, y_true, -1)
    model = SSELMClassifier(n_hidden=100, C=100.0, lam=1.0, random_state=0).fit(X, y)
    assert model.beta_.shape == (100, 3)
    assert np.mean(model.predict(X) == y_true) > 0.95
