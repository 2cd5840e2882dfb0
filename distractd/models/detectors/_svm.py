"""The supervised SVM baseline, kept as its kernel expansion so model artifacts can hold it."""

import numpy as np
from sklearn.svm import SVC

from ..._estimator import fit_context
from ._kernel_expansion import _KernelExpansionBase
from ._scorers import CONSTRAINTS

__all__ = ["SVMClassifier"]


class SVMClassifier(_KernelExpansionBase):
    """Gaussian-kernel SVM (scikit-learn's :class:`~sklearn.svm.SVC`, hinge loss) on labelled rows.

    The fitted SVC is stored as ``f(x) = Σ α_j k(x_j, x) + b`` over its support vectors, the form
    LapSVM and TSVM share, so it is saved to and loaded from a model artifact without pickle and
    scored by the same lean path. Rows labelled -1 are ignored: this is the supervised baseline.

    Parameters
    ----------
    C : float, default=1.0
        Loss weight.
    kernel_width : float, default=1.0
        Gaussian kernel width σ in feature units (SVC's ``gamma = 1 / (2 σ²)``).
    class_weight : {None, "balanced"} or dict, default=None
        ``"balanced"`` weighs each class's loss by the inverse of its frequency; a dict maps a
        class to its weight (SVC's option).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    X_fit_ : ndarray of shape (n_support, n_features)
        Support vectors.
    dual_coef_ : ndarray of shape (n_support,)
        ``y_j α_j`` of the support vectors.
    intercept_ : float
    n_features_in_ : int
    """

    _constraints = CONSTRAINTS["SVMClassifier"]

    def __init__(self, C=1.0, kernel_width=1.0, class_weight=None):
        self.C = C
        self.kernel_width = kernel_width
        self.class_weight = class_weight

    @fit_context
    def fit(self, X, y):
        """Fit on the labelled rows of ``X`` (``y != -1``); returns self."""
        X, signed, labelled = self._check_binary_fit_input(X, y)
        weights = self.class_weight
        if isinstance(weights, dict):  # keyed by the fitted ±1 labels SVC sees
            weights = {1.0 if c == self.classes_[1] else -1.0: w for c, w in weights.items()}
        svc = SVC(C=self.C, kernel="rbf", gamma=0.5 / self.kernel_width ** 2,
                  class_weight=weights)
        svc.fit(X[labelled], signed[labelled])
        self._set_expansion(np.ascontiguousarray(svc.support_vectors_), svc.dual_coef_[0].copy(),
                            svc.intercept_[0])
        return self
