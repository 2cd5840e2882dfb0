"""US-ELM: unsupervised ELM, a Laplacian-eigenmap embedding through a random hidden layer.

The output weights solve (S0 eq 2.16; Huang et al. 2014; ALGORITHMS §1.5)::

    min_beta  ||beta||_F**2 + lam * Tr(beta' H' L H beta)   s.t.  (H beta)' (H beta) = I

and the clusters are k-means on the embedding ``H beta``. The first eigenvector (the near-constant
embedding, which the graph penalty does not see) is dropped, as in the reference ``uselm.m``.

Regularisation of the ill-posed eigenproblem (ALGORITHMS A.1.2, A.9.3). The reference solves
``(I + lam H'LH) v = g H'H v`` for its smallest ``g``; ``H'H`` (or ``HH'``) is numerically singular
(condition 1e17-1e24 on iris) because sigmoid features of a low-dimensional input have low rank, so
the eigenvectors a general solver returns depend on rounding. Here the problem is solved exactly
but well-posed: ``beta`` is restricted to the row space of ``H`` (thin SVD ``H = U S V'``, singular
values below ``1e-10 * s_max`` dropped; components of ``beta`` outside the row space only add to
``||beta||`` and never change the embedding, so the optimum has none), and the pencil is flipped so
that its right-hand matrix ``reg I + S U'LU S`` is positive definite:
``S**2 z = mu (reg I + S U'LU S) z`` with ``mu = 1 / g``, largest ``mu`` first. No ridge is added;
the solutions are exact eigenpairs of the original problem (tested through the eigen-residual), and
the same helper serves ELM-CLR.
"""

import numpy as np
from scipy.linalg import eigh
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.cluster import KMeans
from sklearn.utils.validation import validate_data

from ..._errors import ModelError
from ..._estimator import check_fitted_input, fit_context
from ..._validation import Interval
from ..detectors import hidden_output, hidden_weights, knn_graph, laplacian

__all__ = ["USELM"]

_SVD_RCOND = 1e-10


class USELM(ClusterMixin, TransformerMixin, BaseEstimator):
    """Unsupervised ELM clustering: graph-smooth ELM embedding, then k-means.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters c.
    n_components : int or None, default=None
        Embedding dimension n_O; None uses ``n_clusters`` (the reference's ``NE``).
    n_hidden : int, default=1000
        Random sigmoid hidden neurons n_H (no bias, as in the reference).
    lam : float, default=0.1
        Weight λ of the manifold penalty (reference demo: 0.1).
    n_neighbors : int, default=5
        k of the binary symmetric kNN graph (unnormalised Laplacian ``D - W``).
    n_init : int, default=10
        k-means restarts on the embedding; the lowest inertia is kept.
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the hidden layer and of k-means.

    Attributes
    ----------
    hidden_weights_ : ndarray of shape (n_features_in_, n_hidden)
        Random input weights, uniform in [-1, 1].
    hidden_bias_ : ndarray of shape (n_hidden,)
        Hidden biases, zero (the reference US-ELM has none).
    coef_ : ndarray of shape (n_hidden, n_components)
        Output weights β, scaled so that each embedding column has unit norm.
    eigenvalues_ : ndarray of shape (n_components,)
        Generalised eigenvalues γ of the kept eigenvectors, ascending.
    embedding_ : ndarray of shape (n_samples, n_components)
        ``H beta`` of the training points.
    cluster_centers_ : ndarray of shape (n_clusters, n_components)
        k-means centres in the embedding.
    labels_ : ndarray of shape (n_samples,)
        Cluster of every training point, 0..c-1.

    References
    ----------
    S0 §2.3.2 eq 2.16; ALGORITHMS §1.5 and appendix A.1.2.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X = load_iris().data
    >>> USELM(n_clusters=3, n_hidden=200, random_state=0).fit(X).embedding_.shape
    (150, 3)
    """

    _constraints = {
        "n_clusters": Interval(2, None, closed="left", integer=True),
        "n_components": [None, Interval(1, None, closed="left", integer=True)],
        "n_hidden": Interval(1, None, closed="left", integer=True),
        "lam": Interval(0, None, closed="neither"),
        "n_neighbors": Interval(1, None, closed="left", integer=True),
        "n_init": Interval(1, None, closed="left", integer=True),
    }

    def __init__(self, n_clusters=2, n_components=None, n_hidden=1000, lam=0.1, n_neighbors=5,
                 n_init=10, random_state=None):
        self.n_clusters = n_clusters
        self.n_components = n_components
        self.n_hidden = n_hidden
        self.lam = lam
        self.n_neighbors = n_neighbors
        self.n_init = n_init
        self.random_state = random_state

    @fit_context
    def fit(self, X, y=None):
        """Embed ``X`` (n_samples, n_features) and cluster it; ``y`` is ignored. Returns self."""
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=self.n_neighbors + 1)
        rng = np.random.default_rng(self.random_state)
        n_components = self.n_clusters if self.n_components is None else self.n_components
        W, b = hidden_weights(X.shape[1], self.n_hidden, rng, bias=False)
        H = hidden_output(X, W, b)
        L = laplacian(knn_graph(X, n_neighbors=self.n_neighbors, weights="binary"))
        beta, gammas = _smooth_output_weights(*_thin_svd(H), self.lam * L, 1.0, n_components,
                                              skip=1)
        self.hidden_weights_ = W
        self.hidden_bias_ = b
        self.coef_ = beta
        self.eigenvalues_ = gammas
        self.embedding_ = H @ beta
        kmeans = KMeans(self.n_clusters, n_init=self.n_init, random_state=_seed(rng))
        self.labels_ = kmeans.fit_predict(self.embedding_)
        self.cluster_centers_ = kmeans.cluster_centers_
        return self

    def transform(self, X):
        """Embedding ``h(x) beta`` of new points, shape (n_samples, n_components)."""
        X = check_fitted_input(self, X)
        return hidden_output(X, self.hidden_weights_, self.hidden_bias_) @ self.coef_

    def predict(self, X):
        """Cluster of new points: the nearest k-means centre in the embedding."""
        Y = self.transform(X)
        return _nearest(Y, self.cluster_centers_)


def _smooth_output_weights(U, s, Vt, L, reg, n_components, skip=0):
    """Output weights of a graph-smooth ELM embedding, solved in the row space of ``H``.

    ``U, s, Vt`` is the thin SVD of the hidden-layer output ``H`` (:func:`_thin_svd`). Minimises
    ``reg ||beta||**2 + Tr(beta' H' L H beta)`` subject to ``(H beta)' H beta = I``: the
    ``n_components`` smallest generalised eigenvalues ``g`` of ``(reg I + H'LH) v = g H'H v`` after
    skipping the ``skip`` smallest. Returns ``beta`` (n_hidden, n_components), columns scaled
    to ``||H beta_j|| = 1``, and the ``g`` ascending.
    """
    rank = s.size
    wanted = n_components + skip
    if wanted > rank:
        raise ModelError(f"n_components must be at most {rank - skip}, the numerical rank of the "
                         f"hidden layer minus {skip}, got {n_components}")
    A = U.T @ (L @ U)
    A = s[:, None] * (0.5 * (A + A.T)) * s[None, :]
    A[np.diag_indices(rank)] += reg
    mu, Z = eigh(np.diag(s * s), A, subset_by_index=[rank - wanted, rank - 1])
    mu, Z = mu[::-1][skip:], Z[:, ::-1][:, skip:]
    Z = Z / np.linalg.norm(s[:, None] * Z, axis=0)
    return Vt.T @ Z, 1.0 / mu


def _thin_svd(H):
    """Thin SVD ``H = U diag(s) Vt`` without the singular values below ``1e-10 * s_max``."""
    U, s, Vt = np.linalg.svd(H, full_matrices=False)
    keep = s > _SVD_RCOND * s[0]
    return U[:, keep], s[keep], Vt[keep]


def _nearest(Y, centers):
    """Index of the nearest row of ``centers`` for every row of ``Y`` (Euclidean)."""
    distances = ((Y[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
    return distances.argmin(axis=1)


def _seed(rng):
    """A 31-bit integer seed for scikit-learn components, drawn from ``rng``."""
    return int(rng.integers(2**31 - 1))
