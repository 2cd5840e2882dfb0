"""Window classification scores, with distracted (1) as the positive class, and the G-mean.

S0 §5.4.2; ALGORITHMS §1.9. Per-window truth and prediction, both 0/1:

- accuracy = (TP + TN) / n, sensitivity = TP / (TP + FN), specificity = TN / (TN + FP),
- G-mean = sqrt(sensitivity * specificity), the primary metric because the classes are imbalanced.

**One convention for a missing class**: a rate whose denominator is zero (no distracted windows
for sensitivity, no attentive ones for specificity) is NaN, never silently 0 or 1, and so is the
G-mean built from it. Every G-mean of the package — :func:`g_mean`, :func:`binary_scores`, the
row-wise :func:`g_mean_rows` of hyper-parameter selection — goes through :func:`_rate`. Selection,
which sums fold scores, counts an undefined fold as 0 for every grid point (the fold then decides
nothing).

These live with the detectors because hyper-parameter selection and training scores use them; the
evaluation wing re-exports them beside the clustering and deployment metrics.

>>> y_true = [1, 1, 0, 0, 0, 0]
>>> y_pred = [1, 0, 0, 0, 0, 1]
>>> accuracy(y_true, y_pred), sensitivity(y_true, y_pred), specificity(y_true, y_pred)
(0.6666666666666666, 0.5, 0.75)
>>> round(g_mean(y_true, y_pred), 4)
0.6124
>>> g_mean([0, 0], [0, 1])
nan
"""

import numpy as np

from ..._errors import SchemaError

__all__ = [
    "accuracy", "sensitivity", "specificity", "g_mean", "binary_scores", "g_mean_rows",
    "paired_labels", "check_binary_labels",
]


def accuracy(y_true, y_pred):
    """Fraction of windows whose prediction equals the truth.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_windows,)
        Truth and prediction, 1 distracted and 0 attentive.

    Returns
    -------
    float
        (TP + TN) / n_windows; NaN for no windows.
    """
    tp, tn, fp, fn = _confusion(y_true, y_pred)
    return _rate(tp + tn, tp + tn + fp + fn)


def sensitivity(y_true, y_pred):
    """True-positive rate TP / (TP + FN): the fraction of distracted windows detected.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_windows,)
        Truth and prediction, 1 distracted and 0 attentive.

    Returns
    -------
    float
        NaN when no window is truly distracted.
    """
    tp, _, _, fn = _confusion(y_true, y_pred)
    return _rate(tp, tp + fn)


def specificity(y_true, y_pred):
    """True-negative rate TN / (TN + FP): the fraction of attentive windows left alone.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_windows,)
        Truth and prediction, 1 distracted and 0 attentive.

    Returns
    -------
    float
        NaN when no window is truly attentive.
    """
    _, tn, fp, _ = _confusion(y_true, y_pred)
    return _rate(tn, tn + fp)


def g_mean(y_true, y_pred):
    """Geometric mean of sensitivity and specificity, sqrt(sens * spec).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_windows,)
        Truth and prediction, 1 distracted and 0 attentive.

    Returns
    -------
    float
        In [0, 1]; NaN when either class is absent from the truth.
    """
    return binary_scores(y_true, y_pred)["g_mean"]


def binary_scores(y_true, y_pred):
    """All four window metrics from one confusion count.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_windows,)
        Truth and prediction, 1 distracted and 0 attentive.

    Returns
    -------
    dict
        ``accuracy``, ``sensitivity``, ``specificity``, ``g_mean`` (floats, NaN where undefined).
    """
    tp, tn, fp, fn = _confusion(y_true, y_pred)
    sens, spec = _rate(tp, tp + fn), _rate(tn, tn + fp)
    return {"accuracy": _rate(tp + tn, tp + tn + fp + fn), "sensitivity": sens,
            "specificity": spec, "g_mean": float(np.sqrt(sens * spec))}


def g_mean_rows(y_true, predictions):
    """:func:`g_mean` of every row of ``predictions`` at once, for trusted 0/1 arrays.

    The hot path of hyper-parameter selection: no validation, the same counts and float
    operations as :func:`g_mean` row by row, the same convention (NaN when a class is absent
    from ``y_true``).

    Parameters
    ----------
    y_true : ndarray of shape (n_windows,)
        Truth, 1 distracted and 0 attentive.
    predictions : ndarray of shape (..., n_windows)
        Predictions, 1 distracted and 0 attentive.

    Returns
    -------
    ndarray of shape predictions.shape[:-1]
    """
    positive = y_true == 1
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    tp = (predictions[..., positive] == 1).sum(axis=-1)
    tn = (predictions[..., ~positive] == 0).sum(axis=-1)
    return np.sqrt(_rate(tp, n_pos) * _rate(tn, n_neg))


def paired_labels(a, b, name_a, name_b):
    """Two label vectors as flat arrays of one shape, else a :class:`SchemaError` naming both.

    Parameters
    ----------
    a, b : array-like
    name_a, name_b : str
        Names used in the error message.

    Returns
    -------
    a, b : ndarray of shape (n,)
    """
    a, b = np.asarray(a).ravel(), np.asarray(b).ravel()
    if a.shape != b.shape:
        raise SchemaError(f"{name_b} must have the shape of {name_a} {a.shape}, got {b.shape}")
    return a, b


def check_binary_labels(values, name):
    """Raise a :class:`SchemaError` naming the first entry of ``values`` that is not 0 or 1.

    Parameters
    ----------
    values : ndarray
    name : str
        Name used in the error message.
    """
    bad = (values != 0) & (values != 1)
    if bad.any():
        row = int(np.argmax(bad))
        raise SchemaError(f"{name}[{row}] must be 1 or 0, got {values[row].item()!r}")


def _confusion(y_true, y_pred):
    y_true, y_pred = paired_labels(y_true, y_pred, "y_true", "y_pred")
    check_binary_labels(y_true, "y_true")
    check_binary_labels(y_pred, "y_pred")
    tp = int(np.sum((y_true == 1) & (y_pred == 1)))
    tn = int(np.sum((y_true == 0) & (y_pred == 0)))
    fp = int(np.sum((y_true == 0) & (y_pred == 1)))
    fn = int(np.sum((y_true == 1) & (y_pred == 0)))
    return tp, tn, fp, fn


def _rate(hits, n):
    """``hits / n``, NaN (of the shape of ``hits``) when ``n`` is 0: the one missing-class rule."""
    if n:
        return hits / n
    return np.full(np.shape(hits), np.nan) if np.ndim(hits) else float("nan")
