"""ELM-CLR: the row problem, the normalised distances, the initial graph and the published results."""

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_blobs
from sklearn.exceptions import ConvergenceWarning

from distractd._errors import ModelError
from distractd.models import ELMCLR
from distractd.models.clustering._elmclr import _initial_graph, _normalized_distances, _project_rows
from distractd.models.evaluation import clustering_accuracy


def test_rows_are_euclidean_projections_onto_the_simplex():
    rng = np.random.default_rng(0)
    V = rng.normal(size=(6, 6))
    W = _project_rows(V).toarray()
    assert np.all(np.diag(W) == 0) and np.all(W >= 0)
    np.testing.assert_allclose(W.sum(axis=1), 1.0)
    for i in range(6):
        # KKT of min ||w - v||^2 on the simplex: w = max(v - theta, 0) for one threshold theta.
        v, w = np.delete(V[i], i), np.delete(W[i], i)
        support = w > 0
        theta = (v[support] - w[support]).mean()
        np.testing.assert_allclose(v[support] - w[support], theta, atol=1e-12)
        assert np.all(v[~support] <= theta + 1e-12)


def test_normalized_distance_is_eq_4_3_and_symmetric():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(7, 3))
    D = ((X[:, None] - X[None]) ** 2).sum(axis=2)
    dn = _normalized_distances(D)
    i, j = 2, 5
    expected = np.sqrt(D[i, j] / np.linalg.norm(D[i]) * D[j, i] / np.linalg.norm(D[j]))
    assert dn[i, j] == pytest.approx(expected)
    np.testing.assert_allclose(dn, dn.T)


def test_initial_graph_has_k_neighbours_and_can_gamma():
    X = np.random.default_rng(2).normal(size=(30, 2))
    D = _normalized_distances(((X[:, None] - X[None]) ** 2).sum(axis=2))
    k = 4
    W, gamma = _initial_graph(D, k)
    off = np.sort(D + np.diag(np.full(30, np.inf)), axis=1)
    expected_gamma = np.mean(0.5 * (k * off[:, k] - off[:, :k].sum(axis=1)))
    assert gamma == pytest.approx(expected_gamma)
    np.testing.assert_allclose(W.toarray(), W.toarray().T)
    assert np.all((W.toarray() > 0).sum(axis=1) >= k)


def test_iris_three_components():
    # S0 Table 4.3 reports 96.00 % on iris; raw features, k=5, δ=1, n_O=c.
    X, y = load_iris(return_X_y=True)
    accuracies = []
    for seed in range(2):
        model = ELMCLR(3, n_components=3, n_hidden=1000, delta=1.0, n_neighbors=5,
                       random_state=seed).fit(X)
        assert model.converged_ and model.n_iter_ <= 30
        assert len(set(model.labels_.tolist())) == 3
        accuracies.append(clustering_accuracy(y, model.labels_))
    assert np.mean(accuracies) > 0.955


def test_components_of_the_learned_graph_are_the_clusters():
    X, y = make_blobs(200, centers=2, cluster_std=0.6, random_state=0)
    model = ELMCLR(2, n_hidden=200, random_state=0).fit(X)
    assert model.converged_
    assert clustering_accuracy(y, model.labels_) == 1.0
    W = model.affinity_.toarray()
    assert W[np.ix_(model.labels_ == 0, model.labels_ == 1)].max() == 0.0


def test_non_convergence_warns_and_still_labels():
    X, _ = make_blobs(120, centers=4, cluster_std=2.0, random_state=1)
    with pytest.warns(ConvergenceWarning, match="did not reach 2 connected components"):
        model = ELMCLR(2, n_hidden=100, max_iter=1, random_state=0).fit(X)
    assert not model.converged_ and set(model.labels_.tolist()) == {0, 1}


def test_bad_parameter_names_field_and_value():
    with pytest.raises(ModelError, match=r"ELMCLR.delta must be in \(0, inf\), got 0"):
        ELMCLR(delta=0).fit(np.zeros((10, 2)))
