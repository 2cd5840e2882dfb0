"""ELM-JEC: ELM for joint embedding and clustering (S0 ch. 3, Alg. 1; S1 Alg. 1; ALGORITHMS §1.7).

Maximises over the output weights β (n_H × n_O), the centroids G and the 0/1 indicator F::

    Tr(β' H̄'H̄ β) - lam ||H̄ β - F G'||**2 - gamma Tr(β' H̄' L H̄ β)   s.t.  β'β = I

with H̄ the centred sigmoid hidden layer and L the Laplacian of the 5-NN binary graph. The
alternating optimisation starts from k-means on the raw data, then repeats

1. β: the n_O leading eigenvectors of ``H̄' M H̄``, ``M = (1-lam) I + lam F(F'F)^-1 F' - gamma L``
   (eq 3.8-3.9), formed without the dense n × n matrix M;
2. G = β'H̄'F(F'F)^-1, the cluster means of the embedding (eq 3.5);
3. F: k-means on the embedding started at G; 20 further k-means runs from random (k-means++)
   starts replace it when their objective is lower (the DEC rule, S0 §3.2);

until F no longer changes (as a partition) or ``max_iter`` (20) F-steps have run.

β is computed in the row space of H̄ (thin SVD ``H̄ = U S V'``, singular values below
``1e-10 * s_max`` dropped): components outside it leave the embedding unchanged, so the eigenproblem
shrinks from n_H × n_H to rank(H̄) × rank(H̄) without changing the result.

Hidden layer: weights and biases uniform in [-1, 1] (the reference draws biases from [0, 1]).
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
from ._uselm import _nearest, _seed, _thin_svd

__all__ = ["ELMJEC"]


class ELMJEC(ClusterMixin, TransformerMixin, BaseEstimator):
    """ELM joint embedding and clustering.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters c.
    n_components : int, default=1
        Embedding dimension n_O (S0 §5.5.2 uses 1 on driver data; 2-32 on benchmarks).
    n_hidden : int, default=500
        Random sigmoid hidden neurons n_H (500 on driver data, 1000-2000 on benchmarks).
    lam : float, default=1.0
        Weight λ of the k-means distortion in the embedding (grid 2**-4 .. 2**4 in the source).
    gamma : float, default=1.0
        Weight γ of the manifold penalty (grid 2**-4 .. 2**4 in the source).
    n_neighbors : int, default=5
        k of the binary symmetric kNN graph (unnormalised Laplacian).
    max_iter : int, default=20
        Maximum number of F-steps.
    n_restarts : int, default=20
        Random k-means restarts per F-step.
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the hidden layer and of every k-means run.

    Attributes
    ----------
    hidden_weights_ : ndarray of shape (n_features_in_, n_hidden)
    hidden_bias_ : ndarray of shape (n_hidden,)
    hidden_mean_ : ndarray of shape (n_hidden,)
        Mean hidden output of the training data (the centring of H̄).
    coef_ : ndarray of shape (n_hidden, n_components)
        Output weights β, orthonormal columns.
    embedding_ : ndarray of shape (n_samples, n_components)
        ``H̄ β`` of the training points.
    cluster_centers_ : ndarray of shape (n_clusters, n_components)
        Centroids G' of the final clusters in the embedding.
    labels_ : ndarray of shape (n_samples,)
        Cluster of every training point, 0..c-1.
    n_iter_ : int
        F-steps run.
    converged_ : bool
        True when F stopped changing before ``max_iter``.

    References
    ----------
    S0 §3.2, Algorithm 1; S1 §4; ALGORITHMS §1.7 and appendix A.4.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X = load_iris().data
    >>> model = ELMJEC(n_clusters=3, n_components=2, n_hidden=200, random_state=0).fit(X)
    >>> model.embedding_.shape, sorted(set(model.labels_.tolist()))
    ((150, 2), [0, 1, 2])
    """

    _constraints = {
        "n_clusters": Interval(2, None, closed="left", integer=True),
        "n_components": Interval(1, None, closed="left", integer=True),
        "n_hidden": Interval(1, None, closed="left", integer=True),
        "lam": Interval(0, None, closed="neither"),
        "gamma": Interval(0, None, closed="left"),
        "n_neighbors": Interval(1, None, closed="left", integer=True),
        "max_iter": Interval(1, None, closed="left", integer=True),
        "n_restarts": Interval(0, None, closed="left", integer=True),
    }

    def __init__(self, n_clusters=2, n_components=1, n_hidden=500, lam=1.0, gamma=1.0,
                 n_neighbors=5, max_iter=20, n_restarts=20, random_state=None):
        self.n_clusters = n_clusters
        self.n_components = n_components
        self.n_hidden = n_hidden
        self.lam = lam
        self.gamma = gamma
        self.n_neighbors = n_neighbors
        self.max_iter = max_iter
        self.n_restarts = n_restarts
        self.random_state = random_state

    @fit_context
    def fit(self, X, y=None):
        """Embed and cluster ``X`` (n_samples, n_features); ``y`` is ignored. Returns self."""
        X = validate_data(self, X, dtype=np.float64,
                          ensure_min_samples=max(self.n_neighbors, self.n_clusters) + 1)
        rng = np.random.default_rng(self.random_state)
        W, b = hidden_weights(X.shape[1], self.n_hidden, rng)
        H = hidden_output(X, W, b)
        mean = H.mean(axis=0)
        U, s, Vt = _thin_svd(H - mean)
        if self.n_components > s.size:
            raise ModelError(f"ELMJEC.n_components must be at most {s.size}, the numerical rank "
                             f"of the hidden layer, got {self.n_components}")
        L = laplacian(knn_graph(X, n_neighbors=self.n_neighbors, weights="binary"))
        US = U * s
        fixed = US.T @ (L @ US)
        fixed = (1.0 - self.lam) * np.diag(s * s) - self.gamma * 0.5 * (fixed + fixed.T)

        labels = KMeans(self.n_clusters, n_init=10, random_state=_seed(rng)).fit_predict(X)
        Z = self._weights_step(US, fixed, labels)
        converged = False
        for n_iter in range(1, self.max_iter + 1):
            embedding = US @ Z
            new_labels = self._indicator_step(embedding, labels, rng)
            converged = _same_partition(new_labels, labels)
            labels = new_labels
            if converged:
                break
            Z = self._weights_step(US, fixed, labels)
        self.hidden_weights_ = W
        self.hidden_bias_ = b
        self.hidden_mean_ = mean
        self.coef_ = Vt.T @ Z
        self.embedding_ = US @ Z
        self.labels_ = labels
        self.cluster_centers_ = _centroids(self.embedding_, labels, self.n_clusters)
        self.n_iter_ = n_iter
        self.converged_ = converged
        return self

    def transform(self, X):
        """Embedding ``(h(x) - mean) β`` of new points, shape (n_samples, n_components)."""
        X = check_fitted_input(self, X)
        return (hidden_output(X, self.hidden_weights_, self.hidden_bias_)
                - self.hidden_mean_) @ self.coef_

    def predict(self, X):
        """Cluster of new points: the nearest centroid in the embedding."""
        return _nearest(self.transform(X), self.cluster_centers_)

    def _weights_step(self, US, fixed, labels):
        """Leading eigenvectors of ``S U' M U S`` for the indicator ``labels`` (eq 3.8-3.9)."""
        F = np.eye(self.n_clusters)[labels]
        FUS = F.T @ US
        counts = np.maximum(F.sum(axis=0), 1.0)
        K = fixed + self.lam * (FUS.T / counts) @ FUS
        rank = K.shape[0]
        _, Z = eigh(K, subset_by_index=[rank - self.n_components, rank - 1])
        return Z[:, ::-1]

    def _indicator_step(self, embedding, labels, rng):
        """k-means from the current centroids, replaced by a better random restart (DEC rule)."""
        start = _centroids(embedding, labels, self.n_clusters)
        best = KMeans(self.n_clusters, init=start, n_init=1).fit(embedding)
        if self.n_restarts:
            restart = KMeans(self.n_clusters, n_init=self.n_restarts,
                             random_state=_seed(rng)).fit(embedding)
            if restart.inertia_ < best.inertia_:
                best = restart
        return best.labels_


def _centroids(embedding, labels, n_clusters):
    """Mean embedding of every cluster, shape (n_clusters, n_components)."""
    F = np.eye(n_clusters)[labels]
    return (F.T @ embedding) / np.maximum(F.sum(axis=0), 1.0)[:, None]


def _same_partition(a, b):
    """True when the labelings ``a`` and ``b`` group the points identically (up to renaming)."""
    pairs = np.unique(a * (b.max() + 1) + b).size
    return pairs == np.unique(a).size == np.unique(b).size
