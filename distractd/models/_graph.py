"""Neighbourhood graphs and graph Laplacians (ALGORITHMS §1.2; reference ``adjacency.m``/``laplacian.m``).

Every graph-regularised model of the package (SS-ELM, LapSVM, US-ELM, ELM-JEC) builds its manifold
penalty from these two functions. Matrices are ``scipy.sparse`` CSR throughout.

Heat-kernel width. The reference code weighs an edge of length d by ``exp(-d**2 / (2 * t**2))`` with
``t`` the mean length of the directed kNN edges when no width is given; :func:`knn_graph` does the
same (checked against the golden ``L`` of ``lapsvmp_moons.mat``). The thesis writes the heat kernel
as ``exp(-d**2 / t)`` with ``t = 1`` (S0 §5.4.3); that is ``width = 1 / sqrt(2)`` here.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors

from .._errors import ModelError
from .._validation import Interval, Options, check_params

__all__ = ["knn_graph", "laplacian"]

_GRAPH_CONSTRAINTS = {
    "n_neighbors": Interval(1, None, closed="left", integer=True),
    "weights": Options(("heat", "binary")),
    "width": [None, Interval(0, None, closed="neither")],
}
_LAPLACIAN_CONSTRAINTS = {
    "normalized": bool,
    "power": Interval(1, None, closed="left", integer=True),
}


def knn_graph(X, n_neighbors=10, weights="heat", width=None):
    """Symmetric k-nearest-neighbour affinity matrix (union rule).

    Points i and j are joined when either is among the other's ``n_neighbors`` nearest neighbours
    (Euclidean; a point is never its own neighbour, duplicates included).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Points, in the units of the (normalised) features.
    n_neighbors : int, default=10
        Neighbours per point, k; must be below ``n_samples``.
    weights : {"heat", "binary"}, default="heat"
        ``"heat"``: ``exp(-d**2 / (2 * width**2))``; ``"binary"``: 1 on every edge.
    width : float or None, default=None
        Heat-kernel width in feature units; None uses the mean directed kNN edge length.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Symmetric, non-negative, zero diagonal.
    """
    check_params({"n_neighbors": n_neighbors, "weights": weights, "width": width},
                 _GRAPH_CONSTRAINTS, owner="knn_graph", error=ModelError)
    X = np.asarray(X, dtype=np.float64)
    n_samples = X.shape[0]
    if n_neighbors >= n_samples:
        raise ModelError(f"knn_graph.n_neighbors must be below the number of samples "
                         f"{n_samples}, got {n_neighbors}")
    distances, indices = NearestNeighbors(n_neighbors=n_neighbors).fit(X).kneighbors()
    if weights == "binary":
        values = np.ones(distances.size)
    else:
        t = distances.mean() if width is None else width
        values = np.exp(-distances.ravel() ** 2 / (2.0 * t * t))
    rows = np.repeat(np.arange(n_samples), n_neighbors)
    directed = sp.csr_matrix((values, (rows, indices.ravel())), shape=(n_samples, n_samples))
    return directed.maximum(directed.T).tocsr()


def laplacian(W, normalized=False, power=1):
    """Graph Laplacian ``D - W`` or ``I - D^-1/2 W D^-1/2``, raised to an integer power.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric affinity matrix, e.g. from :func:`knn_graph`.
    normalized : bool, default=False
        Use the symmetric normalised Laplacian; isolated points get a zero row.
    power : int, default=1
        Integer power p of the Laplacian (``L**p`` by repeated sparse products).

    Returns
    -------
    L : scipy.sparse.csr_matrix of shape (n, n)
    """
    check_params({"normalized": normalized, "power": power}, _LAPLACIAN_CONSTRAINTS,
                 owner="laplacian", error=ModelError)
    W = sp.csr_matrix(W, dtype=np.float64)
    degree = np.asarray(W.sum(axis=1)).ravel()
    if normalized:
        with np.errstate(divide="ignore"):
            scale = np.where(degree > 0, 1.0 / np.sqrt(degree), 0.0)
        D_half = sp.diags(scale)
        L = sp.diags((degree > 0).astype(np.float64)) - D_half @ W @ D_half
    else:
        L = sp.diags(degree) - W
    L = L.tocsr()
    result = L
    for _ in range(power - 1):
        result = result @ L
    return result.tocsr()


class _GraphMixin:
    """``_graph_laplacian(X)`` from the estimator's graph hyper-parameters (k at most n − 1)."""

    def _graph_laplacian(self, X):
        W = knn_graph(X, min(self.n_neighbors, len(X) - 1), self.graph_weights, self.graph_width)
        return laplacian(W, self.laplacian_normalized, self.laplacian_power)
