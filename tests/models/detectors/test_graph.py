"""Graphs and Laplacians: golden parity with adjacency.m / laplacian.m, and properties."""

import numpy as np
import pytest
import scipy.io as sio
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors

from distractd._errors import ModelError
from distractd.models.detectors import knn_graph, laplacian
from distractd.models.detectors._graph import _knn_graph, _squared_distances


def _load(shared_data, name):
    return sio.loadmat(shared_data / "golden" / name, squeeze_me=True, struct_as_record=False)


def test_heat_graph_matches_lapsvmp_golden_laplacian(shared_data):
    golden = _load(shared_data, "lapsvmp_moons.mat")
    L = laplacian(knn_graph(golden["X"], n_neighbors=6, weights="heat"))
    assert sp.issparse(L)
    np.testing.assert_allclose(L.toarray(), golden["gI0p7852"].L, rtol=0, atol=1e-12)


def test_binary_normalised_fifth_power_matches_sselm_golden(shared_data):
    golden = _load(shared_data, "sselm_g50c.mat")
    X = np.vstack([golden["Xl"], golden["Xu"]])
    L = laplacian(knn_graph(X, n_neighbors=50, weights="binary"), normalized=True, power=5)
    np.testing.assert_allclose(L.toarray(), golden["L"], rtol=0, atol=1e-12)


def test_union_rule_and_heat_width():
    X = np.array([[0.0], [1.0], [3.0], [7.0]])
    W = knn_graph(X, n_neighbors=1, weights="heat", width=2.0).toarray()
    # directed 1-NN: 0->1, 1->0, 2->1, 3->2; union adds 1-2 and 2-3 both ways.
    expected_edges = {(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)}
    assert {tuple(e) for e in np.argwhere(W > 0)} == expected_edges
    assert W[2, 3] == pytest.approx(np.exp(-16.0 / 8.0))
    mean_edge = np.mean([1.0, 1.0, 2.0, 4.0])
    W_auto = knn_graph(X, n_neighbors=1).toarray()
    assert W_auto[0, 1] == pytest.approx(np.exp(-1.0 / (2 * mean_edge ** 2)))


def test_laplacian_properties_and_power():
    X = np.random.default_rng(0).normal(size=(40, 3))
    W = knn_graph(X, n_neighbors=5)
    L = laplacian(W).toarray()
    np.testing.assert_allclose(L.sum(axis=1), 0, atol=1e-12)
    assert np.linalg.eigvalsh(L).min() > -1e-10
    Ln = laplacian(W, normalized=True).toarray()
    d = np.asarray(W.sum(axis=1)).ravel()
    np.testing.assert_allclose(Ln @ np.sqrt(d), 0, atol=1e-12)
    np.testing.assert_allclose(laplacian(W, power=3).toarray(), L @ L @ L, atol=1e-10)


def test_compiled_knn_matches_sklearn_on_random_data():
    X = np.random.default_rng(7).normal(size=(300, 25))
    distances, indices = NearestNeighbors(n_neighbors=10).fit(X).kneighbors()
    width = distances.mean()
    directed = sp.csr_matrix((np.exp(-distances.ravel() ** 2 / (2 * width ** 2)),
                              (np.repeat(np.arange(300), 10), indices.ravel())), shape=(300, 300))
    expected = directed.maximum(directed.T).toarray()
    W = knn_graph(X, n_neighbors=10)
    assert W.has_sorted_indices
    np.testing.assert_allclose(W.toarray(), expected, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(W.toarray(), W.toarray().T)


def test_duplicates_are_not_their_own_neighbours():
    X = np.array([[0.0], [0.0], [5.0], [5.1]])
    W = knn_graph(X, n_neighbors=1, weights="binary").toarray()
    assert np.all(np.diag(W) == 0)
    assert W[0, 1] == 1 and W[2, 3] == 1


@pytest.mark.parametrize("kwargs, field", [
    ({"n_neighbors": 0}, "knn_graph.n_neighbors"),
    ({"n_neighbors": 4}, "knn_graph.n_neighbors"),
    ({"weights": "cosine"}, "knn_graph.weights"),
    ({"width": -1.0}, "knn_graph.width"),
])
def test_bad_graph_parameters_name_the_field(kwargs, field):
    with pytest.raises(ModelError, match=field):
        knn_graph(np.zeros((4, 2)) + np.arange(4)[:, None], **kwargs)


def test_bad_laplacian_power():
    with pytest.raises(ModelError, match="laplacian.power"):
        laplacian(sp.eye(3), power=0)


@pytest.mark.parametrize("shift", [0.0, 1e3])
def test_screened_knn_equals_a_full_exact_scan_with_ties(shift):
    # integer coordinates: every distance is exact, so ties are exact and must go to the lower
    # index; 1100 rows span two blocks of the row-blocked screening
    X = np.random.default_rng(3).integers(0, 5, size=(1100, 3)).astype(float) + shift
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1)
    np.fill_diagonal(D, np.inf)
    k = 7
    nearest = np.argsort(D, axis=1, kind="stable")[:, :k]
    expected = np.zeros_like(D)
    expected[np.repeat(np.arange(1100), k), nearest.ravel()] = 1.0
    expected = np.maximum(expected, expected.T)
    np.testing.assert_array_equal(knn_graph(X, n_neighbors=k, weights="binary").toarray(),
                                  expected)


def test_row_blocked_graph_equals_the_graph_from_full_distances():
    X = np.random.default_rng(4).normal(size=(1300, 6))
    full = _knn_graph(X, 10, "heat", None, _squared_distances(X))
    blocked = knn_graph(X, n_neighbors=10)
    assert (full != blocked).nnz == 0
