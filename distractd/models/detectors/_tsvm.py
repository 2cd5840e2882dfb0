"""Transductive SVM baseline: Joachims' label switching with a class-ratio constraint.

The inner problem is the primal squared-hinge kernel SVM of :mod:`._lapsvm` without graph term,
with per-point loss weights::

    J(α, b) = ½ [ αᵀKα + Σ_i c_i max(0, 1 − y_i f_i)² ],   f = Kα + b

``c_i = C`` on labelled points and ``C*`` (annealed) on unlabelled points carrying their current
guessed label. Algorithm (T. Joachims, "Transductive inference for text classification using
support vector machines", ICML 1999, Fig. 2; S0's TSVM baseline):

1. train on the labelled points; label the ``round(r·u)`` unlabelled points with the highest
   scores positive and the rest negative, r = positive fraction of the labelled points;
2. start ``C*`` at ``1e-5·C_unlabelled``; at each stage retrain and, while a positive/negative pair
   of unlabelled points has ``ξ_i > 0, ξ_j > 0, ξ_i + ξ_j > 2`` (each swap strictly lowers J and
   keeps the class ratio), swap the pair with the largest ``ξ_i + ξ_j`` and retrain;
3. double ``C*`` up to ``C_unlabelled`` and repeat 2.

Stages are bounded (⌈log2(1e5)⌉ + 1 = 18) and swaps per stage by ``max_swaps``.
"""

import numpy as np

from ..._estimator import fit_context
from ._kernel_expansion import _KernelExpansionBase
from ._primal_solvers import _newton
from ._scorers import CONSTRAINTS, rbf_kernel

__all__ = ["TSVMClassifier"]

_NEWTON_MAX_ITER = 100


class TSVMClassifier(_KernelExpansionBase):
    """Transductive SVM (Gaussian kernel, squared hinge, label switching).

    Parameters
    ----------
    C : float, default=1.0
        Loss weight of labelled points.
    C_unlabelled : float, default=1.0
        Final loss weight C* of unlabelled points.
    kernel_width : float, default=1.0
        Gaussian kernel width σ in feature units.
    positive_fraction : float or None, default=None
        Fraction of unlabelled points labelled positive; None = the labelled fraction.
    max_swaps : int, default=1000
        Label swaps allowed per annealing stage.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    X_fit_ : ndarray of shape (n_samples, n_features)
    dual_coef_ : ndarray of shape (n_samples,)
    intercept_ : float
    transductive_labels_ : ndarray of shape (n_unlabelled,)
        Final ±1 labels of the unlabelled points.
    n_swaps_ : int
        Label swaps performed.
    n_features_in_ : int
    """

    _constraints = CONSTRAINTS["TSVMClassifier"]

    def __init__(self, C=1.0, C_unlabelled=1.0, kernel_width=1.0, positive_fraction=None,
                 max_swaps=1000):
        self.C = C
        self.C_unlabelled = C_unlabelled
        self.kernel_width = kernel_width
        self.positive_fraction = positive_fraction
        self.max_swaps = max_swaps

    @fit_context
    def fit(self, X, y):
        """Fit on labelled and unlabelled rows (y = -1 marks unlabelled).

        Returns
        -------
        self : TSVMClassifier
        """
        X, signed, labelled = self._check_binary_fit_input(X, y)
        K = rbf_kernel(X, X, self.kernel_width)
        weights = np.where(labelled, float(self.C), 0.0)
        alpha, b, _ = _newton(K, None, signed, 1.0, 0.0, True, _NEWTON_MAX_ITER, weights)
        unlabelled = np.flatnonzero(~labelled)
        n_swaps = 0
        if len(unlabelled):
            fraction = (np.mean(signed[labelled] > 0) if self.positive_fraction is None
                        else self.positive_fraction)
            scores = K[unlabelled] @ alpha + b
            guess = -np.ones(len(unlabelled))
            guess[np.argsort(-scores, kind="stable")[:round(fraction * len(unlabelled))]] = 1.0
            signed[unlabelled] = guess
            c_star = 1e-5 * self.C_unlabelled
            while True:
                weights[unlabelled] = c_star
                alpha, b, _ = _newton(K, None, signed, 1.0, 0.0, True, _NEWTON_MAX_ITER, weights)
                for _ in range(self.max_swaps):
                    pair = _worst_pair(K[unlabelled] @ alpha + b, signed[unlabelled])
                    if pair is None:
                        break
                    signed[unlabelled[list(pair)]] *= -1.0
                    n_swaps += 1
                    alpha, b, _ = _newton(K, None, signed, 1.0, 0.0, True, _NEWTON_MAX_ITER,
                                          weights)
                if c_star >= self.C_unlabelled:
                    break
                c_star = min(2.0 * c_star, self.C_unlabelled)
        self._set_expansion(X, alpha, b)
        self.transductive_labels_ = signed[unlabelled]
        self.n_swaps_ = n_swaps
        return self


def _worst_pair(scores, labels):
    """The positive/negative pair with the largest ``ξ_i + ξ_j > 2`` (both > 0), or None."""
    slack = np.maximum(0.0, 1.0 - labels * scores)
    positive = np.flatnonzero((labels > 0) & (slack > 0))
    negative = np.flatnonzero((labels < 0) & (slack > 0))
    if len(positive) == 0 or len(negative) == 0:
        return None
    i = positive[np.argmax(slack[positive])]
    j = negative[np.argmax(slack[negative])]
    return (i, j) if slack[i] + slack[j] > 2.0 else None
