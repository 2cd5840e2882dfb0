"""What a fitted detector of each kind is once saved, with numpy and numba only: its scoring, its
hyper-parameter constraints and its arrays' shapes.

The estimators' ``decision_function`` (scikit-learn estimators, for fitting) and a loaded model
artifact's :class:`~._artifact.Detector` (the daemon's scoring) call the same functions here, so
there is one implementation of each kind's mathematics, and loading and scoring a model load
neither scikit-learn nor scipy (DESIGN §1).
"""

import numpy as np
from numba import njit

from ..._validation import Interval, Options

__all__ = ["rbf_kernel"]


def sigmoid_layer(X, negated_layer):
    """``1 / (1 + exp([X, 1] @ negated_layer))`` with ``negated_layer = [−W; −b]``.

    One matrix product gives ``−(XW + b)``, numpy's vectorised ``exp`` works in place (overflow
    to inf gives an output of exactly 0) and one compiled pass forms ``1 / (1 + e)``.
    """
    X_one = np.empty((X.shape[0], X.shape[1] + 1))
    X_one[:, :-1] = X
    X_one[:, -1] = 1.0
    E = X_one @ negated_layer
    with np.errstate(over="ignore"):
        np.exp(E, out=E)
    _sigmoid_from_exp(E)
    return E


@njit(cache=True, error_model="numpy")
def _sigmoid_from_exp(E):
    """``E ← 1 / (1 + E)`` in place: sigmoid outputs from ``E = exp(−z)``."""
    for i in range(E.shape[0]):
        row = E[i]
        for j in range(row.shape[0]):
            row[j] = 1.0 / (1.0 + row[j])


def elm_decision(X, negated_layer, beta):
    """ELM-family decision values ``h(x)β`` of validated float rows: one column per output, the
    column itself for one output (two classes)."""
    out = sigmoid_layer(X, negated_layer) @ beta
    return out[:, 0] if out.shape[1] == 1 else out


@njit(cache=True, nogil=True)
def distances_from_gram(G, a_sq, b_sq, scale):
    """``G[i, j] ← scale · max(a_sq[i] + b_sq[j] − 2 G[i, j], 0)`` in place (G = A Bᵀ)."""
    for i in range(G.shape[0]):
        row = G[i]
        a = a_sq[i]
        for j in range(G.shape[1]):
            row[j] = scale * max(a + b_sq[j] - 2.0 * row[j], 0.0)


def rbf_kernel(A, B, width, B_sq=None):
    """Gaussian kernel ``exp(-‖a − b‖² / (2 width²))`` between the rows of A and B.

    Parameters
    ----------
    A : ndarray of shape (n_a, n_features)
    B : ndarray of shape (n_b, n_features)
    width : float
        Kernel width σ in feature units.
    B_sq : ndarray of shape (n_b,), optional
        Precomputed squared norms of the rows of B.

    Returns
    -------
    K : ndarray of shape (n_a, n_b)
    """
    if B_sq is None:
        B_sq = np.einsum("ij,ij->i", B, B)
    K = A @ B.T
    distances_from_gram(K, np.einsum("ij,ij->i", A, A), B_sq, -0.5 / (width * width))
    return np.exp(K, out=K)


def kernel_decision(X, X_fit, X_fit_sq, dual_coef, intercept, width):
    """Kernel-expansion decision values ``Σ α_j k(x_j, x) + b`` of validated float rows."""
    return rbf_kernel(X, X_fit, width, X_fit_sq) @ dual_coef + intercept


class ELMScorer:
    """A saved ELM-family model (ELM, SS-ELM): its hidden layer and output weights."""

    ARRAY_SHAPES = {"hidden_weights": ("n_features", "n_hidden"), "hidden_bias": ("n_hidden",),
                    "beta": ("n_hidden", 1), "classes": (2,)}
    """The shape of each saved array (two classes), checked at load."""

    def __init__(self, arrays):
        W = np.asarray(arrays["hidden_weights"], dtype=np.float64)
        b = np.asarray(arrays["hidden_bias"], dtype=np.float64)
        self.negated_layer = -np.vstack([W, b])
        self.beta = np.asarray(arrays["beta"], dtype=np.float64)

    def _decision(self, X):
        """Decision values of validated float rows (the estimators' lean path)."""
        return elm_decision(X, self.negated_layer, self.beta)


class KernelScorer:
    """A saved Gaussian-kernel expansion (LapSVM, SVM, TSVM): its points, weights and offset."""

    ARRAY_SHAPES = {"X_fit": ("n_points", "n_features"), "dual_coef": ("n_points",),
                    "intercept": (1,), "classes": (2,)}
    """The shape of each saved array, checked at load."""

    def __init__(self, arrays, kernel_width):
        self.X_fit = np.asarray(arrays["X_fit"], dtype=np.float64)
        self.X_fit_sq = np.einsum("ij,ij->i", self.X_fit, self.X_fit)
        self.dual_coef = np.asarray(arrays["dual_coef"], dtype=np.float64)
        self.intercept = float(arrays["intercept"][0])
        self.kernel_width = kernel_width

    def _decision(self, X):
        """Decision values of validated float rows (the estimators' lean path)."""
        return kernel_decision(X, self.X_fit, self.X_fit_sq, self.dual_coef, self.intercept,
                               self.kernel_width)


_ELM = {"n_hidden": Interval(1, None, closed="left", integer=True),
        "C": Interval(0, None, closed="neither"), "bias": bool}
_GRAPH = {"n_neighbors": Interval(1, None, closed="left", integer=True),
          "graph_weights": Options(("heat", "binary")),
          "graph_width": [None, Interval(0, None, closed="neither")],
          "laplacian_normalized": bool,
          "laplacian_power": Interval(1, None, closed="left", integer=True)}
_WIDTH = {"kernel_width": Interval(0, None, closed="neither")}

CONSTRAINTS = {
    "ELMClassifier": _ELM,
    "SSELMClassifier": {**_ELM, "lam": Interval(0, None, closed="left"), **_GRAPH},
    "LapSVMClassifier": {"gamma_A": Interval(0, None, closed="neither"),
                         "gamma_I": Interval(0, None, closed="left"), **_WIDTH, **_GRAPH,
                         "solver": Options(("newton", "pcg")),
                         "max_iter": Interval(1, None, closed="left", integer=True),
                         "cg_stop": Options((None, "stability", "objective")),
                         "cg_stop_param": [None, Interval(0, None, closed="left")],
                         "cg_stop_iter": [None, Interval(1, None, closed="left", integer=True)],
                         "fit_intercept": bool},
    "TSVMClassifier": {"C": Interval(0, None, closed="neither"),
                       "C_unlabelled": Interval(0, None, closed="neither"), **_WIDTH,
                       "positive_fraction": [None, Interval(0, 1, closed="both")],
                       "max_swaps": Interval(0, None, closed="left", integer=True)},
    "SVMClassifier": {"C": Interval(0, None, closed="neither"), **_WIDTH,
                      "class_weight": [None, Options(("balanced",)), dict]},
}
"""Each estimator kind's hyper-parameter rules (:mod:`distractd._validation`): its ``fit`` and
the artifact's load check them."""

PARAMETERS = {kind: (*rules, *(("random_state",) if kind in ("ELMClassifier", "SSELMClassifier")
                               else ())) for kind, rules in CONSTRAINTS.items()}
"""Every hyper-parameter each estimator kind takes (its constructor's): those of
:data:`CONSTRAINTS` and the ELM family's ``random_state`` (a seed, checked where it is drawn);
a saved model naming another is refused at load."""

SCORERS = {"ELMClassifier": ELMScorer, "SSELMClassifier": ELMScorer,
           "LapSVMClassifier": KernelScorer, "TSVMClassifier": KernelScorer,
           "SVMClassifier": KernelScorer}
"""The saved form of each estimator kind an artifact can hold."""


def scorer(kind, params, arrays):
    """The :data:`SCORERS` entry of ``kind`` built from its saved hyper-parameters and arrays."""
    if SCORERS[kind] is KernelScorer:
        return KernelScorer(arrays, params["kernel_width"])
    return ELMScorer(arrays)
