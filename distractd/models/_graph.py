"""Neighbourhood graphs and graph Laplacians (ALGORITHMS §1.2; ``adjacency.m``/``laplacian.m``).

Every graph-regularised model of the package (SS-ELM, LapSVM, US-ELM, ELM-JEC) builds its manifold
penalty from these two functions. Matrices are ``scipy.sparse`` CSR throughout.

Heat-kernel width. The reference code weighs an edge of length d by ``exp(-d**2 / (2 * t**2))`` with
``t`` the mean length of the directed kNN edges when no width is given; :func:`knn_graph` does the
same (checked against the golden ``L`` of ``lapsvmp_moons.mat``). The thesis writes the heat kernel
as ``exp(-d**2 / t)`` with ``t = 1`` (S0 §5.4.3); that is ``width = 1 / sqrt(2)`` here.
"""

import numpy as np
import scipy.sparse as sp
from numba import njit

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
    squared, indices = _knn(X, np.ascontiguousarray(X.T), n_neighbors)
    distances = np.sqrt(squared)
    if weights == "binary":
        values = np.ones_like(distances)
    else:
        t = distances.mean() if width is None else width
        values = np.exp(squared / (-2.0 * t * t))
    indptr, columns, data = _union(indices, values)
    return sp.csr_matrix((data, columns, indptr), shape=(n_samples, n_samples))


@njit(cache=True)
def _knn(X, XT, k):
    """Squared distances and indices of each row's k nearest other rows, nearest first.

    Distances are summed feature by feature from exact differences (no ``‖a‖² + ‖b‖² − 2ab``
    cancellation), vectorised over the other rows through ``XT`` = Xᵀ in C order; ties keep the
    lower index first.
    """
    n, n_features = X.shape
    squared = np.empty((n, k))
    indices = np.empty((n, k), dtype=np.int64)
    row = np.empty(n)
    for i in range(n):
        row[:] = 0.0
        for f in range(n_features):
            a = X[i, f]
            col = XT[f]
            for j in range(n):
                diff = a - col[j]
                row[j] += diff * diff
        best_d = squared[i]
        best_j = indices[i]
        m = 0
        for j in range(n):
            if j == i:
                continue
            d = row[j]
            if m == k and not d < best_d[k - 1]:
                continue
            p = m - 1 if m < k else k - 2
            while p >= 0 and best_d[p] > d:
                best_d[p + 1] = best_d[p]
                best_j[p + 1] = best_j[p]
                p -= 1
            best_d[p + 1] = d
            best_j[p + 1] = j
            if m < k:
                m += 1
    return squared, indices


@njit(cache=True)
def _union(indices, values):
    """CSR arrays (sorted columns) of the union of the directed kNN edges and their reverses.

    An edge and its reverse carry the same value (the distance is symmetric bit for bit).
    """
    n, k = indices.shape
    in_count = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        for p in range(k):
            in_count[indices[i, p] + 1] += 1
    in_ptr = np.cumsum(in_count)
    in_from = np.empty(n * k, dtype=np.int64)
    in_value = np.empty(n * k)
    fill = in_ptr[:-1].copy()
    for i in range(n):
        for p in range(k):
            j = indices[i, p]
            in_from[fill[j]] = i
            in_value[fill[j]] = values[i, p]
            fill[j] += 1
    mark = np.full(n, -1, dtype=np.int64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    columns = np.empty(2 * n * k, dtype=np.int64)
    data = np.empty(2 * n * k)
    nnz = 0
    for i in range(n):
        start = nnz
        for p in range(k):
            j = indices[i, p]
            mark[j] = i
            columns[nnz] = j
            data[nnz] = values[i, p]
            nnz += 1
        for q in range(in_ptr[i], in_ptr[i + 1]):
            j = in_from[q]
            if mark[j] != i:
                columns[nnz] = j
                data[nnz] = in_value[q]
                nnz += 1
        order = np.argsort(columns[start:nnz])
        columns[start:nnz] = columns[start:nnz][order]
        data[start:nnz] = data[start:nnz][order]
        indptr[i + 1] = nnz
    return indptr, columns[:nnz], data[:nnz]

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
