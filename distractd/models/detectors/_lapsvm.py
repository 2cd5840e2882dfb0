"""Laplacian SVM trained in the primal (ALGORITHMS §1.4 and appendix A 2.1; Melacci & Belkin 2011).

Objective, exactly as implemented (and as in the reference ``lapsvmp.m``)::

    J(α, b) = ½ [ γ_A αᵀKα + Σ_{i ∈ sv} (1 − y_i f_i)² + γ_I (Kα)ᵀ L (Kα) ],   f = Kα + b

over all n = l + u training points, where ``sv`` is the set of labelled points with
``y_i f_i < 1`` (squared hinge). Neither gamma is normalised. The thesis (S0 eq 5.3) writes
``(1/l) Σ ξ_i + γ_A' αᵀKα + γ_I'/(l+u)² αᵀKLKα``; multiplying by l, ``γ_A = 2·l·γ_A'`` and
``γ_I = 2·l·γ_I'/(l+u)²`` (the factor 2 from the ½ in J; the loss is squared, not linear, hinge).

Solvers: Newton (each step solves the bordered linear system of the current ``sv`` set and stops
when the set repeats) and preconditioned conjugate gradient (preconditioner K, exact line search
over the hinge breakpoints, Polak-Ribière with restart) with early stopping by prediction
stability on the unlabelled points or by objective decrease.
"""

import math

import numpy as np

from ..._estimator import fit_context
from ._graph import _GraphMixin, _squared_distances
from ._kernel_expansion import _KernelExpansionBase
from ._primal_solvers import _newton, _pcg
from ._scorers import CONSTRAINTS

__all__ = ["LapSVMClassifier"]

_STOP_DEFAULTS = {None: 0.0, "stability": 0.015, "objective": 1e-6}


class LapSVMClassifier(_GraphMixin, _KernelExpansionBase):
    """Laplacian SVM with a Gaussian kernel, trained in the primal (binary).

    See the module docstring for the objective and its mapping to the thesis' scaling.

    Parameters
    ----------
    gamma_A : float, default=1e-6
        Ambient (RKHS norm) regularisation γ_A, unscaled.
    gamma_I : float, default=1.0
        Intrinsic (manifold) regularisation γ_I, unscaled (≥ 0; 0 gives an L2-SVM).
    kernel_width : float, default=1.0
        Gaussian kernel width σ in feature units: ``exp(-‖x − x'‖² / (2σ²))``.
    n_neighbors : int, default=10
        k of the symmetric kNN graph; at most ``n_samples - 1`` is used.
    graph_weights : {"heat", "binary"}, default="heat"
    graph_width : float or None, default=None
        Heat width in feature units; None = mean kNN edge length (reference behaviour).
    laplacian_normalized : bool, default=False
    laplacian_power : int, default=1
    solver : {"newton", "pcg"}, default="newton"
    max_iter : int, default=200
        Newton steps or CG iterations at most.
    cg_stop : {None, "stability", "objective"}, default="stability"
        PCG early stopping: ``"stability"`` stops when fewer than ``cg_stop_param`` (default 0.015)
        of the unlabelled predictions changed sign since the previous check (reference
        CgStopType 1); ``"objective"`` when J decreased by less than ``cg_stop_param`` (default
        1e-6, an absolute decrease as coded in the reference's CgStopType 7) since the previous
        check; None runs until the line search stalls, the gradient's K-norm falls to 1e-14 of
        its initial value (rounding level), or ``max_iter``.
    cg_stop_param : float or None, default=None
        Threshold of the rule; None takes the default above.
    cg_stop_iter : int or None, default=None
        Check the rule every this many iterations; None = ``round(sqrt(n)/2)`` for stability,
        1 for objective.
    fit_intercept : bool, default=True
        Learn the bias b (the reference's UseBias).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the positive class (+1).
    X_fit_ : ndarray of shape (n_samples, n_features)
        Training points (the kernel expansion).
    dual_coef_ : ndarray of shape (n_samples,)
        α of the expansion ``f(x) = Σ α_j k(x_j, x) + b``.
    intercept_ : float
        b.
    n_iter_ : int
        Newton steps or CG iterations performed.
    n_features_in_ : int
    """

    _constraints = CONSTRAINTS["LapSVMClassifier"]

    def __init__(self, gamma_A=1e-6, gamma_I=1.0, kernel_width=1.0, n_neighbors=10,
                 graph_weights="heat", graph_width=None, laplacian_normalized=False,
                 laplacian_power=1, solver="newton", max_iter=200, cg_stop="stability",
                 cg_stop_param=None, cg_stop_iter=None, fit_intercept=True):
        self.gamma_A = gamma_A
        self.gamma_I = gamma_I
        self.kernel_width = kernel_width
        self.n_neighbors = n_neighbors
        self.graph_weights = graph_weights
        self.graph_width = graph_width
        self.laplacian_normalized = laplacian_normalized
        self.laplacian_power = laplacian_power
        self.solver = solver
        self.max_iter = max_iter
        self.cg_stop = cg_stop
        self.cg_stop_param = cg_stop_param
        self.cg_stop_iter = cg_stop_iter
        self.fit_intercept = fit_intercept

    @fit_context
    def fit(self, X, y):
        """Fit on labelled and unlabelled rows (y = -1 marks unlabelled).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two class labels, -1 for unlabelled rows.

        Returns
        -------
        self : LapSVMClassifier
        """
        X, signed, _ = self._check_binary_fit_input(X, y)
        D2, sq = _squared_distances(X)
        L = self._graph_laplacian(X, (D2, sq))
        D2 *= -0.5 / (self.kernel_width * self.kernel_width)
        K = np.exp(D2, out=D2)
        alpha, b, self.n_iter_ = self._solve(K, L, signed)
        self._set_expansion(X, alpha, b)
        return self

    def _solve(self, K, L, signed):
        """Run the configured solver on a precomputed kernel and Laplacian (±1/0 labels)."""
        if self.solver == "newton":
            return _newton(K, L, signed, self.gamma_A, self.gamma_I, self.fit_intercept,
                           self.max_iter)
        stop_param = (_STOP_DEFAULTS[self.cg_stop] if self.cg_stop_param is None
                      else self.cg_stop_param)
        if self.cg_stop is None:
            stop_every = self.max_iter + 1
        elif self.cg_stop_iter is not None:
            stop_every = self.cg_stop_iter
        else:
            stop_every = (max(round(math.sqrt(len(signed)) / 2), 1)
                          if self.cg_stop == "stability" else 1)
        return _pcg(K, L, signed, self.gamma_A, self.gamma_I, self.fit_intercept,
                    self.max_iter, self.cg_stop, stop_param, stop_every)
