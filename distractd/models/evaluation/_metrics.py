"""Clustering and deployment metrics, with distracted (1) as the positive class.

The window metrics (accuracy, sensitivity, specificity, G-mean) live in
:mod:`distractd.models.detectors` (hyper-parameter selection uses them) and are re-exported by this
wing; they and the clustering G-mean share one convention: a class absent from the truth gives NaN.

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

>>> round(clustering_g_mean([1, 1, 0, 0, 0, 0], [5, 5, 7, 7, 7, 5]), 4)
0.866
>>> detection_delays([0.5, 1.0, 1.5, 2.0, 2.5], [0, 1, 1, 1, 0], [0, 0, 0, 1, 1]).tolist()
[1.0]
"""

import itertools

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..._errors import SchemaError
from ..detectors import check_binary_labels, paired_labels

__all__ = [
    "clustering_accuracy", "clustering_accuracy_many_to_one", "clustering_g_mean",
    "detection_delays", "false_alarms_per_hour",
]

SECONDS_PER_HOUR = 3600.0
MAX_CLUSTERS_MAPPED = 16


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
    y, c = paired_labels(y, c, "y", "c")
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
    y, c = paired_labels(y, c, "y", "c")
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
    y, c = paired_labels(y, c, "y", "c")
    check_binary_labels(y, "y")
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
        Published state: 1 distracted, 0 attentive, -1 no decision.

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


def false_alarms_per_hour(t, y_true, y_state, grace_s=0.0):
    """Transitions into the distracted state while the truth is attentive, per attentive hour.

    Parameters
    ----------
    t : array-like of shape (n_windows,)
        Window times in seconds, increasing; their median positive spacing is the hop.
    y_true : array-like of shape (n_windows,)
        Truth: 1 distracted, 0 attentive, -1 unknown.
    y_state : array-like of shape (n_windows,)
        Published state: 1 distracted, 0 attentive, -1 no decision.
    grace_s : float, default=0.0
        Transitions less than ``grace_s`` seconds before a distraction episode's first window are
        not false: a window's truth is its majority label, so it turns distracted only half a
        window after a task starts, while a glance alert can fire from the task's first seconds
        (the evaluation passes half the window length).

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
    onsets = (y_state == 1) & (np.r_[0, y_state[:-1]] != 1)  # from attentive or unknown
    starts = t[np.flatnonzero(np.diff(np.r_[0, (y_true == 1).astype(np.int8)]) == 1)]
    if grace_s > 0 and len(starts):
        at = np.searchsorted(starts, t, side="left")  # the next episode start at or after t
        next_start = np.r_[starts, np.inf][at]
        onsets &= next_start - t >= grace_s
    hours = attentive.sum() * float(np.median(spacing)) / SECONDS_PER_HOUR
    return float((onsets & attentive).sum() / hours)


def _deployment(t, y_true, y_state):
    t = np.asarray(t, dtype=np.float64).ravel()
    y_true, y_state = paired_labels(y_true, y_state, "y_true", "y_state")
    if t.shape != y_true.shape:
        raise SchemaError(f"t must have the shape of y_true {y_true.shape}, got {t.shape}")
    for name, values in (("y_true", y_true), ("y_state", y_state)):
        bad = ~np.isin(values, (-1, 0, 1))
        if bad.any():
            row = int(np.argmax(bad))
            raise SchemaError(f"{name}[{row}] must be 1, 0 or -1, got {values[row].item()!r}")
    if np.any(np.diff(t) < 0):
        row = int(np.argmax(np.diff(t) < 0)) + 1
        raise SchemaError(f"t must not decrease, got t[{row}] = {t[row].item()!r} after "
                          f"{t[row - 1].item()!r}")
    return t, y_true.astype(np.int8), y_state.astype(np.int8)
