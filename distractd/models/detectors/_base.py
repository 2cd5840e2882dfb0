"""What every detector shares: fit-input validation, the decision function and prediction.

The ELM family (:class:`~._elm._ELMBase`) and the kernel expansions (LapSVM, SVM, TSVM:
:class:`~._kernel_expansion._KernelExpansionBase`) derive from :class:`_DetectorBase`; their
``fit`` is decorated with :func:`distractd._estimator.fit_context` (hyper-parameters checked once
against ``_constraints``) and starts with :meth:`_DetectorBase._check_fit_data`.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ..._errors import ModelError
from ..._estimator import check_fitted_input

__all__ = []


class _DetectorBase(ClassifierMixin, BaseEstimator):
    """Classifiers trained on labelled and unlabelled rows (y = -1), scored by ``_decision(X)``.

    Subclasses implement ``_decision(X)`` on validated float rows (the lean path the daemon
    calls) and set ``_binary_only`` when they separate exactly two classes.
    """

    _binary_only = False
    _constraint_error = ModelError

    def _check_fit_data(self, X, y):
        """Validate ``X, y``; set ``classes_`` (the labelled classes); return X, y, labelled mask."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        labelled = y != -1 if y.dtype.kind in "iuf" else np.ones(len(y), dtype=bool)
        self.classes_ = np.unique(y[labelled])
        name = type(self).__name__
        if self._binary_only and len(self.classes_) != 2:
            raise ModelError(f"Only binary classification is supported. {name}: y must hold "
                             f"exactly two labelled classes, got {len(self.classes_)} class "
                             f"{self.classes_.tolist()}")
        if len(self.classes_) < 2:
            raise ModelError(f"{name}: y must hold at least two labelled classes, got "
                             f"{len(self.classes_)} class {self.classes_.tolist()}")
        return X, y, labelled

    def decision_function(self, X):
        """Decision values of the fitted detector.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For two classes, positive favours ``classes_[1]``; else (ELM family) one column per
            class.
        """
        return self._decision(check_fitted_input(self, X))

    def predict(self, X):
        """Class labels: the sign of the decision value for two classes, else its argmax."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]
