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

from ..._errors import ModelError
from ..._validation import Interval, Options, check_params
from ._scorers import distances_from_gram

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
    return _knn_graph(X, n_neighbors, weights, width)


_DISTANCE_ROWS = 1024
"""Rows of the distance matrix :func:`knn_graph` screens at a time (8 MB per 1000 samples)."""


def _squared_distances(X, rows=slice(None)):
    """Squared distances from one Gram product of the centred rows, and the centred norms.

    ``D2[r, j] = ‖x_i‖² + ‖x_j‖² − 2 x_i·x_j`` for the rows ``i`` of ``rows`` (centred, clipped
    at 0) is within ``_DISTANCE_ERROR · n_features · (sq[i] + sq[j])`` of the exact squared
    distance.

    Returns
    -------
    D2 : ndarray of shape (n_rows, n_samples)
        Squared distances, feature units squared.
    sq : ndarray of shape (n_samples,)
        Squared norms of all centred rows.
    """
    centred = X - X.mean(axis=0)
    sq = np.einsum("ij,ij->i", centred, centred)
    D2 = centred[rows] @ centred.T
    distances_from_gram(D2, sq[rows], sq, 1.0)
    return D2, sq


def _knn_graph(X, n_neighbors, weights, width, distances=None):
    """:func:`knn_graph` given checked parameters; ``distances`` = :func:`_squared_distances`
    of all of X if already computed, else they are computed ``_DISTANCE_ROWS`` rows at a time."""
    if distances is not None:
        squared, indices = _knn(X, *distances, n_neighbors, 0)
    else:
        parts = [_knn(X, *_squared_distances(X, slice(lo, lo + _DISTANCE_ROWS)), n_neighbors, lo)
                 for lo in range(0, len(X), _DISTANCE_ROWS)]
        squared = np.concatenate([part[0] for part in parts])
        indices = np.concatenate([part[1] for part in parts])
    distances = np.sqrt(squared)
    if weights == "binary":
        values = np.ones_like(distances)
    else:
        t = distances.mean() if width is None else width
        values = np.exp(squared / (-2.0 * t * t))
    indptr, columns, data = _union(indices, values)
    n_samples = len(X)
    return sp.csr_matrix((data, columns, indptr), shape=(n_samples, n_samples))


_DISTANCE_ERROR = 16.0 * np.finfo(np.float64).eps
"""Rounding bound of the Gram-product distances per feature, relative to ``sq[i] + sq[j]``.

Both the Gram-product value and the exact sum of squared differences are within about
``(2 n_features + 4) ε (sq[i] + sq[j])`` of the true squared distance of the centred rows
(Higham, Accuracy and Stability of Numerical Algorithms, §3.1), the centring adds a few ε more;
16ε per feature covers their difference with a margin.
"""


@njit(cache=True)
def _insert(best_d, best_j, m, k, d, j):
    """Insert (d, j) into the m sorted slots (k at most kept; the caller checks d against the
    k-th); equal distances keep the earlier-inserted (lower) index first. Returns the count."""
    p = m - 1 if m < k else k - 2
    while p >= 0 and best_d[p] > d:
        best_d[p + 1] = best_d[p]
        best_j[p + 1] = best_j[p]
        p -= 1
    best_d[p + 1] = d
    best_j[p + 1] = j
    return m + 1 if m < k else m


_SCREEN_BLOCK = 32


@njit(cache=True, nogil=True)
def _knn(X, D2, sq, k, first):
    """Exact squared distances and indices of the k nearest other rows of X, nearest first, for
    the rows ``first + r`` of ``D2`` (rows of :func:`_squared_distances`).

    The Gram-product distances ``D2`` only screen. Per row, the k-th smallest of the minima of
    at least 2k column blocks (of up to 32 columns) is a distance with at least k other rows at
    or below it; with the rounding bound it gives ``tau`` ≥ the k-th exact distance. Every row whose screened distance minus its
    bound is within ``tau`` is re-measured exactly, feature by feature from the differences (no
    ``‖a‖² + ‖b‖² − 2ab`` cancellation), and the k smallest kept, ties keeping the lower index
    first, as a full exact scan would give.
    """
    n, n_features = X.shape
    margin = _DISTANCE_ERROR * n_features
    block_size = max(1, min(_SCREEN_BLOCK, n // (2 * k)))  # at least 2k blocks
    n_blocks = (n + block_size - 1) // block_size
    sq_max = sq.max()
    squared = np.empty((D2.shape[0], k))
    indices = np.empty((D2.shape[0], k), dtype=np.int64)
    minima = np.empty(n_blocks)
    screen_d = np.empty(k)
    screen_j = np.empty(k, dtype=np.int64)
    candidates = np.empty(n, dtype=np.int64)
    exact = np.empty(n)
    for r in range(D2.shape[0]):
        i = first + r
        row = D2[r]
        own = row[i]
        row[i] = np.inf  # a row is not its own neighbour
        for block in range(n_blocks):
            lo = block * block_size
            best = np.inf
            for j in range(lo, min(lo + block_size, n)):
                best = min(best, row[j])
            minima[block] = best
        m = 0
        kth = np.inf
        for block in range(n_blocks):
            if minima[block] < kth:
                m = _insert(screen_d, screen_j, m, k, minima[block], block)
                if m == k:
                    kth = screen_d[k - 1]
        bound_i = kth + 2.0 * margin * (sq[i] + sq_max)  # ≥ the k-th exact distance, + bound
        n_candidates = 0
        for j in range(n):
            if row[j] - margin * sq[j] <= bound_i and j != i:
                candidates[n_candidates] = j
                n_candidates += 1
        for c in range(n_candidates):
            exact[c] = 0.0
        for f in range(n_features):
            a = X[i, f]
            for c in range(n_candidates):
                diff = a - X[candidates[c], f]
                exact[c] += diff * diff
        best_d = squared[r]
        best_j = indices[r]
        m = 0
        kth = np.inf
        for c in range(n_candidates):
            if exact[c] < kth:
                m = _insert(best_d, best_j, m, k, exact[c], candidates[c])
                if m == k:
                    kth = best_d[k - 1]
        row[i] = own
    return squared, indices


@njit(cache=True, nogil=True)
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
        for q in range(start + 1, nnz):  # insertion sort of the row by column
            column = columns[q]
            value = data[q]
            p = q - 1
            while p >= start and columns[p] > column:
                columns[p + 1] = columns[p]
                data[p + 1] = data[p]
                p -= 1
            columns[p + 1] = column
            data[p + 1] = value
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

    def _graph_laplacian(self, X, distances=None):
        """Laplacian of the kNN graph of X; ``distances``: :func:`_squared_distances` of X."""
        W = _knn_graph(X, min(self.n_neighbors, len(X) - 1), self.graph_weights,
                       self.graph_width, distances)
        return laplacian(W, self.laplacian_normalized, self.laplacian_power)
