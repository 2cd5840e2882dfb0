"""Clustering metrics, with distracted (1) as the positive class.

The window metrics (accuracy, sensitivity, specificity, G-mean) live in
:mod:`distractd.models.detectors` (hyper-parameter selection uses them) and are re-exported by this
wing; they and the clustering G-mean share one convention: a class absent from the truth gives NaN.

Clustering metrics (S1 eq 15, S0 eq 5.12) score a clustering ``c`` against labels ``y`` after the
best mapping of clusters to classes: one-to-one by the Hungarian algorithm for the accuracy, and the
G-mean-maximising map for the clustering G-mean.

The deployment metrics (detection delays, false alarms per hour) live in
:mod:`distractd.models.detectors` beside the decision rule and are re-exported by this wing.

>>> round(clustering_g_mean([1, 1, 0, 0, 0, 0], [5, 5, 7, 7, 7, 5]), 4)
0.866
"""

import itertools

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..._errors import SchemaError
from ..detectors import check_binary_labels, paired_labels

__all__ = ["clustering_accuracy", "clustering_accuracy_many_to_one", "clustering_g_mean"]

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
