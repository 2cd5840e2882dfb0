"""The random sigmoid hidden layer of the ELM family, and the supervised ELM classifier.

ALGORITHMS §1.1 (S0 §2.2): hidden weights drawn once from U[-1, 1] and fixed; only the output
weights β are learned, in closed form. :func:`hidden_weights` and :func:`hidden_output` are shared
by every ELM-family model of the package (ELM, SS-ELM, US-ELM, ELM-JEC, ELM-CLR).
"""

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.linalg import lapack, solve_triangular
from sklearn.utils.validation import check_is_fitted

from ..._errors import ModelError
from ..._estimator import fit_context
from ._base import _DetectorBase
from ._scorers import CONSTRAINTS, ELMScorer, elm_decision, sigmoid_layer

__all__ = ["hidden_weights", "hidden_output", "ELMClassifier"]


def hidden_weights(n_features, n_hidden, rng, bias=True):
    """Draw the random input weights and biases of a sigmoid hidden layer.

    Parameters
    ----------
    n_features : int
        Input dimension.
    n_hidden : int
        Number of hidden neurons, n_H.
    rng : int, numpy.random.Generator or None
        Seed or generator; the weights are drawn first, then the biases.
    bias : bool, default=True
        Draw biases from U[-1, 1]; False gives zero biases (the SS-ELM/US-ELM reference).

    Returns
    -------
    W : ndarray of shape (n_features, n_hidden)
        Input weights, U[-1, 1].
    b : ndarray of shape (n_hidden,)
        Biases, U[-1, 1] or zeros.
    """
    rng = np.random.default_rng(rng)
    W = rng.uniform(-1.0, 1.0, size=(n_features, n_hidden))
    b = rng.uniform(-1.0, 1.0, size=n_hidden) if bias else np.zeros(n_hidden)
    return W, b


def hidden_output(X, W, b):
    """Sigmoid hidden-layer output ``H = 1 / (1 + exp(-(X W + b)))``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    W : ndarray of shape (n_features, n_hidden)
    b : ndarray of shape (n_hidden,)

    Returns
    -------
    H : ndarray of shape (n_samples, n_hidden)
        Values in [0, 1].
    """
    return sigmoid_layer(X, -np.vstack([W, b]))


@njit(cache=True, nogil=True)
def _weighted_graph_product(c, lam, indptr, indices, data, B):
    """``diag(c) B + lam L B``, L in CSR arrays (``indptr``, ``indices``, ``data``), row by row.

    Four neighbour rows are added per pass over an output row (a quarter of the stores).
    """
    out = np.empty_like(B)
    n_columns = B.shape[1]
    for i in range(B.shape[0]):
        row = out[i]
        ci = c[i]
        source = B[i]
        for j in range(n_columns):
            row[j] = ci * source[j]
        p = indptr[i]
        end = indptr[i + 1]
        while p + 4 <= end:
            w0, w1, w2, w3 = lam * data[p], lam * data[p + 1], lam * data[p + 2], lam * data[p + 3]
            b0, b1, b2, b3 = B[indices[p]], B[indices[p + 1]], B[indices[p + 2]], B[indices[p + 3]]
            for j in range(n_columns):
                row[j] += (w0 * b0[j] + w1 * b1[j]) + (w2 * b2[j] + w3 * b3[j])
            p += 4
        for q in range(p, end):
            weight = lam * data[q]
            other = B[indices[q]]
            for j in range(n_columns):
                row[j] += weight * other[j]
    return out


def _primal_is_cheaper(n_rows, n_hidden, graph):
    """Compare multiply-add counts: Gram product plus factorisation, primal vs dual."""
    if graph:
        return n_hidden * n_hidden * n_rows + n_hidden ** 3 / 6 < (
            n_rows * n_rows * n_hidden / 2 + n_rows ** 3 / 3)
    return n_hidden < n_rows


def _solve_output_weights(H, T, c, L=None, lam=0.0):
    """Minimise ``½‖c^½(T − Hβ)‖² + ½‖β‖² + (λ/2) tr(βᵀHᵀLHβ)`` in closed form.

    With ``M = C + λL`` (C = diag(c)), the primal ``β = (I + HᵀMH)⁻¹HᵀCT`` or the dual
    ``β = Hᵀ(I + MHHᵀ)⁻¹CT`` (ALGORITHMS §1.3, eq 5.6), whichever costs fewer multiply-adds.
    Without a graph term only rows with ``c > 0`` enter, and the dual is the SPD system
    ``(C⁻¹ + HHᵀ)u = T``. Gram products ``HHᵀ`` are symmetric rank-k updates; SPD systems are
    solved by Cholesky, the non-symmetric graph dual by a float32 LU with float64 refinement
    (:func:`_solve_graph_dual_mixed`), else a float64 LU.
    """
    graph = L is not None and lam != 0.0
    if not graph:
        rows = c > 0
        H, T, c = H[rows], T[rows], c[rows]
    n_rows, n_hidden = H.shape
    if _primal_is_cheaper(n_rows, n_hidden, graph):
        if graph:
            L = sp.csr_matrix(L)
            A = H.T @ _weighted_graph_product(c, float(lam), L.indptr, L.indices, L.data, H)
        else:
            root_c_H = np.sqrt(c)[:, None] * H
            A = root_c_H.T @ root_c_H
        A[np.diag_indices_from(A)] += 1.0
        return _solve_spd(A, H.T @ (c[:, None] * T))
    if not graph:
        G = H @ H.T
        G[np.diag_indices_from(G)] += 1.0 / c
        return H.T @ _solve_spd(G, T)
    L = sp.csr_matrix(L)
    u = _solve_graph_dual_mixed(H, L, c, float(lam), c[:, None] * T)
    if u is None:
        A = _weighted_graph_product(c, float(lam), L.indptr, L.indices, L.data, H @ H.T)
        A[np.diag_indices_from(A)] += 1.0
        lu, piv, info = lapack.dgetrf(A.T, overwrite_a=True)
        if info > 0:
            raise ModelError(f"singular SS-ELM system (lam={lam}); use a smaller lam or C")
        u, _ = lapack.dgetrs(lu, piv, c[:, None] * T, trans=1)
    return H.T @ u


_REFINEMENT_STEPS = 30
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _solve_graph_dual_mixed(H, L, c, lam, CT):
    """``(I + MHHᵀ)⁻¹CT`` by a float32 LU refined in float64 (LAPACK ``dsgesv``'s strategy).

    ``HHᵀ`` and the LU are formed in float32 (half the time of float64); the residual
    ``CT − u − M(H(Hᵀu))`` is computed in float64 from H and the sparse M = C + λL, without the
    float64 Gram matrix, and scaled per column to a largest entry of 1 before each float32
    solve, so no cast can overflow. Stops, like ``dsgesv``, once every column's residual is below
    ``√N·ε·‖A‖∞·‖u‖∞`` (a float64 backward-stable solution). Returns None (the caller then
    solves in float64) when C, λ or A do not fit float32, when a float32 step is not finite,
    when the largest relative residual grows (refinement diverges, geometrically, when
    cond(A)·ε₃₂ ≳ 1) or after 30 steps.
    """
    n = len(H)
    if not max(c.max(), lam, lam * np.abs(L.data).max()) < _FLOAT32_MAX:
        return None
    H32 = H.astype(np.float32)
    A32 = _weighted_graph_product(c.astype(np.float32), np.float32(lam), L.indptr, L.indices,
                                  L.data.astype(np.float32), H32 @ H32.T)
    norm_A = _add_identity_and_norm(A32)
    if not norm_A < _FLOAT32_MAX:
        return None
    lu, piv, info = lapack.sgetrf(A32.T, overwrite_a=True)
    if info != 0:
        return None
    u = np.zeros_like(CT)
    residual = CT
    tolerance = np.sqrt(n) * np.finfo(np.float64).eps * norm_A
    previous = np.inf
    for _ in range(_REFINEMENT_STEPS):
        scale = np.abs(residual).max(axis=0)
        scale[scale == 0.0] = 1.0
        step, _ = lapack.sgetrs(lu, piv, (residual / scale).astype(np.float32), trans=1)
        if not np.isfinite(step).all():
            return None
        u += step * scale
        MG_u = H @ (H.T @ u)
        residual = CT - u - (c[:, None] * MG_u + lam * (L @ MG_u))
        size = np.abs(residual).max(axis=0)
        if np.all(size <= tolerance * np.abs(u).max(axis=0)):
            return u
        largest = float((size / np.abs(CT).max(axis=0).clip(min=np.finfo(float).tiny)).max())
        if not largest < previous:
            return None
        previous = largest
    return None


@njit(cache=True, nogil=True)
def _add_identity_and_norm(A):
    """``A += I`` in place; returns ``‖A‖∞`` (largest absolute row sum)."""
    norm = 0.0
    for i in range(A.shape[0]):
        A[i, i] += 1.0
        total = 0.0
        for j in range(A.shape[1]):
            total += abs(A[i, j])
        norm = max(norm, total)
    return norm


def _solve_spd(A, B):
    """``A⁻¹B`` by Cholesky for A = I + PSD or diag(1/c) + PSD.

    numpy's factorisation releases the GIL while LAPACK runs (scipy's LAPACK wrappers hold it), so
    a fit in a background thread — the daemon's adaptation — does not stop the daemon's loop for
    the whole factorisation (30-80 ms at n_hidden = 1000 on the shared VM).
    """
    try:
        factor = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        raise ModelError("ELM output-weight system is not positive definite (Cholesky failed); "
                         "the penalties C are too large for float64") from None
    y = solve_triangular(factor, B, lower=True, check_finite=False)
    return solve_triangular(factor, y, lower=True, trans="T", check_finite=False)


def _encode_targets(y, classes):
    """±1 targets: one column (positive = ``classes[1]``) for two classes, else one per class."""
    if len(classes) == 2:
        return np.where(y == classes[1], 1.0, -1.0)[:, None]
    return np.where(y[:, None] == classes[None, :], 1.0, -1.0)


class _ELMBase(_DetectorBase):
    """The random hidden layer, decision and serialisation shared by the ELM-family classifiers."""

    _constraints = CONSTRAINTS["ELMClassifier"]

    def _draw_hidden(self, n_features):
        self._set_hidden(*hidden_weights(n_features, self.n_hidden, self.random_state,
                                         bias=self.bias))

    def _set_hidden(self, W, b):
        """Set the hidden layer and ``[−W; −b]``, the form :meth:`_decision` multiplies by."""
        self.hidden_weights_, self.hidden_bias_ = W, b
        self._negated_layer = -np.vstack([W, b])

    def _share_hidden_layer(self, other):
        """Use ``other``'s hidden-layer arrays when they hold the same layer as this model's (the
        same ``random_state``), so that many refits of one model (the daemon's adapted streams)
        keep one hidden layer in memory, each only its own output weights."""
        if np.array_equal(self.hidden_weights_, other.hidden_weights_) \
                and np.array_equal(self.hidden_bias_, other.hidden_bias_):
            self.hidden_weights_, self.hidden_bias_ = other.hidden_weights_, other.hidden_bias_
            self._negated_layer = other._negated_layer

    def _decision(self, X):
        """Decision values of validated float rows (the lean path used by the daemon).

        ``h(x)β``, the hidden layer from ``[−W; −b]`` kept with the hidden weights (no stacking
        per call); float64, the same arithmetic as :func:`hidden_output` in ``fit``.
        """
        return elm_decision(X, self._negated_layer, self.beta_)

    _ARRAY_SHAPES = ELMScorer.ARRAY_SHAPES

    def _to_arrays(self):
        """The fitted model as (JSON-able hyper-parameters, arrays) for the artifact."""
        check_is_fitted(self)
        arrays = {"hidden_weights": self.hidden_weights_, "hidden_bias": self.hidden_bias_,
                  "beta": self.beta_, "classes": self.classes_}
        return self.get_params(), arrays

    @classmethod
    def _from_arrays(cls, params, arrays):
        """Rebuild a fitted estimator from :meth:`_to_arrays` output."""
        model = cls(**params)
        model._set_hidden(np.asarray(arrays["hidden_weights"], dtype=np.float64),
                          np.asarray(arrays["hidden_bias"], dtype=np.float64))
        model.beta_ = np.asarray(arrays["beta"], dtype=np.float64)
        model.classes_ = np.asarray(arrays["classes"])
        model.n_features_in_ = model.hidden_weights_.shape[0]
        return model


class ELMClassifier(_ELMBase):
    """Extreme learning machine: random sigmoid hidden layer, ridge output weights.

    Minimises ``½‖β‖² + (C/2)‖T − Hβ‖²`` over the labelled rows (S0 eq 2.11–2.12 with I/C): the
    primal ``(HᵀH + I/C)⁻¹HᵀT`` when ``n_hidden <= n_labelled``, else ``Hᵀ(HHᵀ + I/C)⁻¹T``.
    Targets are ±1: one output for two classes, one per class otherwise. Rows labelled -1 are
    ignored (it is the supervised baseline of the semi-supervised models).

    Parameters
    ----------
    n_hidden : int, default=1000
        Hidden neurons, n_H.
    C : float, default=1.0
        Weight of the squared error against the ridge term.
    bias : bool, default=True
        Random hidden biases in U[-1, 1]; False for the reference's bias-free layer.
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the hidden layer.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    hidden_weights_ : ndarray of shape (n_features, n_hidden)
    hidden_bias_ : ndarray of shape (n_hidden,)
    beta_ : ndarray of shape (n_hidden, n_outputs)
        Output weights; n_outputs is 1 for two classes.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [0.9], [1.0]])
    >>> ELMClassifier(n_hidden=20, C=100.0, random_state=0).fit(X, [0, 0, 1, 1]).predict(X)
    array([0, 0, 1, 1])
    """

    def __init__(self, n_hidden=1000, C=1.0, bias=True, random_state=None):
        self.n_hidden = n_hidden
        self.C = C
        self.bias = bias
        self.random_state = random_state

    @fit_context
    def fit(self, X, y):
        """Fit the output weights on the labelled rows of ``X`` (rows with y = -1 are ignored)."""
        X, y, labelled = self._check_fit_data(X, y)
        self._draw_hidden(X.shape[1])
        H = hidden_output(X[labelled], self.hidden_weights_, self.hidden_bias_)
        T = _encode_targets(y[labelled], self.classes_)
        self.beta_ = _solve_output_weights(H, T, np.full(len(T), float(self.C)))
        return self
