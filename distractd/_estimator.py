"""The estimator conventions every model wing shares: one hyper-parameter check at ``fit``, one
fitted-input check at ``predict``/``transform``/``decision_function``.

As scikit-learn's ``_fit_context``: an estimator declares what each hyper-parameter accepts as data
in the class attribute ``_constraints`` (rules of :mod:`distractd._validation`) and decorates
``fit`` with :func:`fit_context`; the constraints are checked against ``get_params()`` once, before
the body runs, and the error names the estimator, the parameter, the rule and the value. The class
attribute ``_constraint_error`` chooses the exception (``ModelError`` unless set). Methods that use
a fitted estimator start with :func:`check_fitted_input`.

Package-level (beside ``_validation`` and ``_errors``) because the four model wings use it and no
wing imports another wing's private names; only the model wings import it (it imports
scikit-learn, which stays out of the command's start-up path).

>>> from sklearn.base import BaseEstimator
>>> from distractd._validation import Interval
>>> class Ridge(BaseEstimator):
...     _constraints = {"alpha": Interval(0, None, closed="neither")}
...     def __init__(self, alpha=1.0):
...         self.alpha = alpha
...     @fit_context
...     def fit(self, X, y=None):
...         return self
>>> Ridge(alpha=-1.0).fit([[0.0]])
Traceback (most recent call last):
...
distractd._errors.ModelError: Ridge.alpha must be in (0, inf), got -1.0
"""

import functools

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from ._errors import ModelError
from ._validation import check_params

__all__ = ["fit_context", "check_fitted_input"]


def fit_context(fit):
    """Decorate an estimator's ``fit``: check ``get_params()`` against ``_constraints`` first.

    Parameters
    ----------
    fit : callable
        The ``fit`` method; called unchanged once the hyper-parameters pass.

    Returns
    -------
    callable
        The wrapped method (same name and docstring).
    """
    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        cls = type(self)
        check_params(self.get_params(), cls._constraints, owner=cls.__name__,
                     error=getattr(cls, "_constraint_error", ModelError))
        return fit(self, *args, **kwargs)

    return wrapper


def check_fitted_input(estimator, X):
    """Raise ``NotFittedError`` unless ``estimator`` is fitted; return ``X`` validated against it.

    Parameters
    ----------
    estimator : estimator
    X : array-like of shape (n_samples, n_features)

    Returns
    -------
    ndarray of shape (n_samples, n_features), float64
        With the feature count of the training data (scikit-learn's ``validate_data``,
        ``reset=False``).
    """
    check_is_fitted(estimator)
    return validate_data(estimator, X, dtype=np.float64, reset=False)
