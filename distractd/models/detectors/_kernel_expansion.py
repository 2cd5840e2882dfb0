"""Gaussian-kernel expansions ``f(x) = Σ α_j k(x_j, x) + b``: the base of LapSVM, SVM and TSVM
(fitted state, decision path, artifact arrays); the kernel is :func:`._scorers.rbf_kernel`."""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._base import _DetectorBase
from ._scorers import KernelScorer, kernel_decision

__all__ = []


class _KernelExpansionBase(_DetectorBase):
    """Binary classifiers ``f(x) = Σ α_j k(x_j, x) + b`` over the training points (Gaussian k)."""

    _binary_only = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _check_binary_fit_input(self, X, y):
        """Validate once; set ``classes_``; return X, ±1/0 labels and the labelled mask."""
        X, y, labelled = self._check_fit_data(X, y)
        signed = np.zeros(len(y))
        signed[labelled] = np.where(y[labelled] == self.classes_[1], 1.0, -1.0)
        return X, signed, labelled

    def _set_expansion(self, X, alpha, b):
        self.X_fit_ = X
        self._X_fit_sq = np.einsum("ij,ij->i", X, X)
        self.dual_coef_ = alpha
        self.intercept_ = float(b)

    def _decision(self, X):
        """Decision values of validated float rows (the lean path used by the daemon)."""
        return kernel_decision(X, self.X_fit_, self._X_fit_sq, self.dual_coef_,
                               self.intercept_, self.kernel_width)

    _ARRAY_SHAPES = KernelScorer.ARRAY_SHAPES

    def _to_arrays(self):
        """The fitted model as (JSON-able hyper-parameters, arrays) for the artifact."""
        check_is_fitted(self)
        arrays = {"X_fit": self.X_fit_, "dual_coef": self.dual_coef_,
                  "intercept": np.array([self.intercept_]), "classes": self.classes_}
        return self.get_params(), arrays

    @classmethod
    def _from_arrays(cls, params, arrays):
        """Rebuild a fitted estimator (for prediction) from :meth:`_to_arrays` output."""
        model = cls(**params)
        model._set_expansion(np.asarray(arrays["X_fit"], dtype=np.float64),
                             np.asarray(arrays["dual_coef"], dtype=np.float64),
                             arrays["intercept"][0])
        model.classes_ = np.asarray(arrays["classes"])
        model.n_features_in_ = model.X_fit_.shape[1]
        return model
