"""Detection and clustering metrics, with distracted (1) as the positive class.

Window metrics (S0 §5.4.2; ALGORITHMS §1.9) compare per-window truth and prediction, both 0/1:

- accuracy = (TP + TN) / n, sensitivity = TP / (TP + FN), specificity = TN / (TN + FP),
- G-mean = sqrt(sensitivity * specificity), the primary metric because the classes are imbalanced.

A ratio whose denominator is zero (no distracted windows for sensitivity, no attentive ones for
specificity) is NaN, never silently 0 or 1.

Clustering metrics (S1 eq 15, S0 eq 5.12) score a clustering ``c`` against labels ``y`` after the
best mapping of clusters to classes: one-to-one by the Hungarian algorithm for the accuracy, and the
G-mean-maximising map for the clustering G-mean.

Deployment metrics judge the *smoothed state sequence* a detector publishes over a drive, one entry
per window (times ``t`` in seconds, normally the window ends):

- an **episode** is a maximal run of consecutive windows whose truth is 1; a window of truth 0 or
  -1 (unknown) ends it. Its onset is the time of its first window. The **detection delay** is the
  time from the onset to the first window of the episode whose state is 1 (0 when the state is
  already distracted at the onset), NaN when the state never turns distracted within the episode.
- a **false alarm** is a transition of the state from attentive to distracted (the state before the
  first window counts as attentive) at a window whose truth is 0. **False alarms per hour** divide
  their number by the attentive time: the number of truth-0 windows times the hop (the median
  positive spacing of ``t``). Windows of unknown truth count neither alarms nor time.

>>> y_true = [1, 1, 0, 0, 0, 0]
>>> y_pred = [1, 0, 0, 0, 0, 1]
>>> accuracy(y_true, y_pred), sensitivity(y_true, y_pred), specificity(y_true, y_pred)
(0.6666666666666666, 0.5, 0.75)
>>> round(g_mean(y_true, y_pred), 4)
0.6124
>>> detection_delays([0.5, 1.0, 1.5, 2.0, 2.5], [0, 1, 1, 1, 0], [0, 0, 0, 1, 1]).tolist()
[1.0]
"""

import itertools

import numpy as np
from scipy.optimize import linear_sum_assignment

from .._errors import SchemaError

__all__ = [
    "accuracy", "sensitivity", "specificity", "g_mean", "binary_scores",
    "clustering_accuracy", "clustering_accuracy_many_to_one", "clustering_g_mean",
    "detection_delays", "false_alarms_per_hour",
]

SECONDS_PER_HOUR = 3600.0
MAX_CLUSTERS_MAPPED = 16


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
    return _ratio(tp + tn, tp + tn + fp + fn)


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
    return _ratio(tp, tp + fn)


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
    return _ratio(tn, tn + fp)


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
    sens, spec = _ratio(tp, tp + fn), _ratio(tn, tn + fp)
    return {"accuracy": _ratio(tp + tn, tp + tn + fp + fn), "sensitivity": sens,
            "specificity": spec, "g_mean": float(np.sqrt(sens * spec))}


def clustering_accuracy(y, c):
    """Fraction of samples correct after the best one-to-one map of clusters to classes.

    The map maximises the number of matches (Hungarian algorithm on the contingency table, S1 eq 15);
    with more clusters than classes, the clusters left unmatched count as wrong.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        True class labels (any integers).
    c : array-like of shape (n_samples,)
        Cluster labels (any integers).

    Returns
    -------
    float
        In [0, 1].
    """
    y, c = _pair(y, c, "y", "c")
    classes, y_idx = np.unique(y, return_inverse=True)
    clusters, c_idx = np.unique(c, return_inverse=True)
    table = np.zeros((len(clusters), len(classes)), dtype=np.int64)
    np.add.at(table, (c_idx, y_idx), 1)
    rows, cols = linear_sum_assignment(table, maximize=True)
    return float(table[rows, cols].sum()) / len(y)


def clustering_accuracy_many_to_one(y, c):
    """Fraction of samples correct when each cluster is mapped to its majority class.

    The fair score when there are more clusters than classes (e.g. k segment clusters against
    distracted/attentive): several clusters may share a class. It is never below
    :func:`clustering_accuracy` and equals it when every class is some cluster's majority.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        True class labels (any integers).
    c : array-like of shape (n_samples,)
        Cluster labels (any integers).

    Returns
    -------
    float
        In [0, 1].
    """
    y, c = _pair(y, c, "y", "c")
    _, y_idx = np.unique(y, return_inverse=True)
    clusters, c_idx = np.unique(c, return_inverse=True)
    table = np.zeros((len(clusters), y_idx.max() + 1), dtype=np.int64)
    np.add.at(table, (c_idx, y_idx), 1)
    return float(table.max(axis=1).sum()) / len(y)


def clustering_g_mean(y, c):
    """G-mean of a clustering after the map of clusters to classes that maximises it (S0 eq 5.12).

    Every cluster is mapped to distracted (1) or attentive (0) and all such maps are tried; with two
    clusters this is the two label assignments of the source. At most 16 clusters.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        True labels, 1 distracted and 0 attentive.
    c : array-like of shape (n_samples,)
        Cluster labels (any integers).

    Returns
    -------
    float
        In [0, 1]; NaN when either class is absent from ``y``.
    """
    y, c = _pair(y, c, "y", "c")
    _check_binary(y, "y")
    clusters, c_idx = np.unique(c, return_inverse=True)
    if len(clusters) > MAX_CLUSTERS_MAPPED:
        raise SchemaError(f"c must hold at most {MAX_CLUSTERS_MAPPED} clusters, "
                          f"got {len(clusters)}")
    positives = np.bincount(c_idx, weights=y, minlength=len(clusters))
    negatives = np.bincount(c_idx, weights=1 - y, minlength=len(clusters))
    n_pos, n_neg = positives.sum(), negatives.sum()
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    maps = np.array(list(itertools.product((0, 1), repeat=len(clusters))), dtype=np.float64)
    sens = maps @ positives / n_pos
    spec = (1 - maps) @ negatives / n_neg
    return float(np.sqrt(sens * spec).max())


def detection_delays(t, y_true, y_state):
    """Seconds from each distraction onset to the first distracted state in that episode.

    Parameters
    ----------
    t : array-like of shape (n_windows,)
        Window times in seconds (normally the window ends), increasing.
    y_true : array-like of shape (n_windows,)
        Truth: 1 distracted, 0 attentive, -1 unknown. Episodes are maximal runs of 1.
    y_state : array-like of shape (n_windows,)
        Published (smoothed) state: 1 distracted, 0 attentive.

    Returns
    -------
    ndarray of shape (n_episodes,)
        Delay in seconds per episode in time order, NaN for a missed episode.
    """
    t, y_true, y_state = _deployment(t, y_true, y_state)
    inside = y_true == 1
    edges = np.diff(np.r_[0, inside.astype(np.int8), 0])
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    delays = np.full(len(starts), np.nan)
    for k, (start, stop) in enumerate(zip(starts, stops)):
        hits = np.flatnonzero(y_state[start:stop] == 1)
        if hits.size:
            delays[k] = t[start + hits[0]] - t[start]
    return delays


def false_alarms_per_hour(t, y_true, y_state):
    """Attentive-to-distracted state transitions while the truth is attentive, per attentive hour.

    Parameters
    ----------
    t : array-like of shape (n_windows,)
        Window times in seconds, increasing; their median positive spacing is the hop.
    y_true : array-like of shape (n_windows,)
        Truth: 1 distracted, 0 attentive, -1 unknown.
    y_state : array-like of shape (n_windows,)
        Published (smoothed) state: 1 distracted, 0 attentive.

    Returns
    -------
    float
        False alarms per hour of attentive time; NaN when there is no attentive window.
    """
    t, y_true, y_state = _deployment(t, y_true, y_state)
    spacing = np.diff(t)
    spacing = spacing[spacing > 0]
    attentive = y_true == 0
    if not attentive.any() or spacing.size == 0:
        return float("nan")
    onsets = (y_state == 1) & (np.r_[0, y_state[:-1]] == 0)
    hours = attentive.sum() * float(np.median(spacing)) / SECONDS_PER_HOUR
    return float((onsets & attentive).sum() / hours)


def _confusion(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred, "y_true", "y_pred")
    _check_binary(y_true, "y_true")
    _check_binary(y_pred, "y_pred")
    tp = int(np.sum((y_true == 1) & (y_pred == 1)))
    tn = int(np.sum((y_true == 0) & (y_pred == 0)))
    fp = int(np.sum((y_true == 0) & (y_pred == 1)))
    fn = int(np.sum((y_true == 1) & (y_pred == 0)))
    return tp, tn, fp, fn


def _ratio(num, den):
    return num / den if den else float("nan")


def _pair(a, b, name_a, name_b):
    a, b = np.asarray(a).ravel(), np.asarray(b).ravel()
    if a.shape != b.shape:
        raise SchemaError(f"{name_b} must have the shape of {name_a} {a.shape}, got {b.shape}")
    return a, b


def _check_binary(values, name):
    bad = (values != 0) & (values != 1)
    if bad.any():
        row = int(np.argmax(bad))
        raise SchemaError(f"{name}[{row}] must be 1 or 0, got {values[row].item()!r}")


def _deployment(t, y_true, y_state):
    t = np.asarray(t, dtype=np.float64).ravel()
    y_true, y_state = _pair(y_true, y_state, "y_true", "y_state")
    if t.shape != y_true.shape:
        raise SchemaError(f"t must have the shape of y_true {y_true.shape}, got {t.shape}")
    bad = ~np.isin(y_true, (-1, 0, 1))
    if bad.any():
        row = int(np.argmax(bad))
        raise SchemaError(f"y_true[{row}] must be 1, 0 or -1, got {y_true[row].item()!r}")
    _check_binary(y_state, "y_state")
    if np.any(np.diff(t) < 0):
        row = int(np.argmax(np.diff(t) < 0)) + 1
        raise SchemaError(f"t must not decrease, got t[{row}] = {t[row].item()!r} after "
                          f"{t[row - 1].item()!r}")
    return t, y_true.astype(np.int8), y_state.astype(np.int8)
