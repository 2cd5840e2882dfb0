"""ELM-JEC: the published iris accuracy, the alternating updates and the estimator contract."""

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_blobs
from sklearn.preprocessing import MinMaxScaler

from distractd._errors import ModelError
from distractd.models import ELMJEC
from distractd.models.clustering._elmjec import _centroids, _same_partition
from distractd.models.evaluation import clustering_accuracy


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return MinMaxScaler((-1, 1)).fit_transform(X), y


def test_iris_reproduces_published_accuracy(iris):
    # S1 Table 4: 97.20 +- 0.28 %; reference demo settings (n_O=4, lam=4, gamma=8, n_H=1000).
    X, y = iris
    accuracies = [clustering_accuracy(y, ELMJEC(3, n_components=4, n_hidden=1000, lam=4.0,
                                                gamma=8.0, random_state=seed).fit(X).labels_)
                  for seed in range(3)]
    assert np.mean(accuracies) == pytest.approx(0.972, abs=0.01)


def test_fitted_state_is_consistent(iris):
    X, _ = iris
    model = ELMJEC(3, n_components=4, n_hidden=300, lam=4.0, gamma=8.0, random_state=1).fit(X)
    np.testing.assert_allclose(model.coef_.T @ model.coef_, np.eye(4), atol=1e-10)
    np.testing.assert_allclose(model.transform(X), model.embedding_, atol=1e-10)
    np.testing.assert_allclose(model.cluster_centers_,
                               _centroids(model.embedding_, model.labels_, 3), atol=1e-12)
    assert model.converged_ and 1 <= model.n_iter_ <= 20
    assert set(model.labels_.tolist()) == {0, 1, 2}


def test_beta_maximises_the_reduced_objective(iris):
    # eq 3.6-3.9: β are the leading eigenvectors of H̄'MH̄ with M = (1-λ)I + λF(F'F)^-1F' - γL.
    from distractd.models.detectors import hidden_output, knn_graph, laplacian

    X, _ = iris
    model = ELMJEC(3, n_components=2, n_hidden=120, lam=2.0, gamma=0.5, max_iter=1,
                   random_state=3).fit(X)
    H = hidden_output(X, model.hidden_weights_, model.hidden_bias_) - model.hidden_mean_
    L = laplacian(knn_graph(X, 5, weights="binary")).toarray()
    F = np.eye(3)[model.labels_]
    M = (1 - 2.0) * np.eye(150) + 2.0 * F @ np.linalg.inv(F.T @ F) @ F.T - 0.5 * L
    values = np.linalg.eigvalsh(H.T @ M @ H)
    achieved = np.trace(model.coef_.T @ H.T @ M @ H @ model.coef_)
    assert achieved == pytest.approx(values[-2:].sum(), rel=1e-8)


def test_separated_blobs_are_found_exactly():
    X, y = make_blobs(300, centers=2, cluster_std=0.5, random_state=0)
    model = ELMJEC(2, n_components=1, n_hidden=200, random_state=0).fit(X)
    assert clustering_accuracy(y, model.labels_) == 1.0


def test_same_partition_ignores_cluster_names():
    a = np.array([0, 0, 1, 1, 2])
    assert _same_partition(a, np.array([2, 2, 0, 0, 1]))
    assert not _same_partition(a, np.array([0, 1, 1, 1, 2]))


def test_bad_parameter_names_field_and_value():
    with pytest.raises(ModelError, match=r"ELMJEC.max_iter must be .*\[1, inf\), got 0"):
        ELMJEC(max_iter=0).fit(np.zeros((10, 2)))
