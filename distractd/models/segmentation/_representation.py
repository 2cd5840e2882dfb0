"""The drift-free representation segmentation and clustering run on, and its label-free features.

Clusters of a whole drive's z-scored window features follow the slow posture and calibration
drift, not the task (docs/labelling.md, "What drives the clusters"). Two steps remove it:

- :func:`drift_free_windows`: every window judged against the driver's own recent past by the
  pipeline's :class:`~distractd.pipeline.RunningBaseline` (the detectors' per-stream baseline).
  Offline, the windows of its warm-up (the first minute or so, NaN forward in time) are judged by
  the same baseline run backwards in time, so every window of a drive gets a value;
- :func:`drift_features`: a feature selection chosen without labels. A feature whose standardised
  values still correlate with themselves ``lag_s`` seconds later follows something slower than a
  task section (tasks last 30-80 s, drivers' posture drifts over minutes) and is left out; so are
  features with data in fewer than half of the windows, or no variance.
"""

import numpy as np

from ...pipeline import RunningBaseline

__all__ = ["drift_free_windows", "drift_features", "DRIFT_LAG_S", "DRIFT_MAX_AUTOCORRELATION"]

DRIFT_LAG_S = 120.0
"""Lag of the drift test, seconds: longer than any task section (at most 80 s)."""

DRIFT_MAX_AUTOCORRELATION = 0.2
"""Features whose autocorrelation at :data:`DRIFT_LAG_S` reaches this are left out."""


def drift_free_windows(t_end, X, memory_s=300.0, spacing_s=5.0, warmup_s=60.0):
    """Window features standardised against the driver's running baseline, warm-up filled.

    Parameters
    ----------
    t_end : ndarray of shape (n_windows,)
        Window end times, seconds, increasing.
    X : ndarray of shape (n_windows, n_features)
        Raw window features (NaN where a measure had no data).
    memory_s, spacing_s, warmup_s : float
        The :class:`~distractd.pipeline.RunningBaseline` settings (the pipeline's
        ``baseline_*``).

    Returns
    -------
    Z : ndarray of shape (n_windows, n_features)
        Forward (causal) standardised values; where those are NaN because the baseline was still
        warming up, the values of the backward pass. NaN only where the feature had no data.
    """
    t_end = np.asarray(t_end, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    settings = {"memory_s": memory_s, "spacing_s": spacing_s, "warmup_s": warmup_s}
    forward = RunningBaseline(X.shape[1], **settings).update(t_end, X)
    backward = RunningBaseline(X.shape[1], **settings).update(-t_end[::-1], X[::-1])[::-1]
    return np.where(np.isnan(forward), backward, forward)


def drift_features(Z, hop_s=0.5, lag_s=DRIFT_LAG_S, max_autocorrelation=DRIFT_MAX_AUTOCORRELATION,
                   min_finite=0.5):
    """Which columns of ``Z`` to segment or cluster on, chosen without labels.

    Parameters
    ----------
    Z : ndarray of shape (n_windows, n_features)
        A drive's windows in time order, ``hop_s`` apart (:func:`drift_free_windows`).
    hop_s : float, default=0.5
        Time between consecutive rows, seconds.
    lag_s : float, default=DRIFT_LAG_S
    max_autocorrelation : float, default=DRIFT_MAX_AUTOCORRELATION
    min_finite : float, default=0.5
        Least fraction of finite values a kept feature has.

    Returns
    -------
    keep : ndarray of shape (n_features,), dtype bool
        True for the features kept. When the drive is shorter than twice the lag, only the data
        and variance tests apply.
    """
    Z = np.asarray(Z, dtype=np.float64)
    finite = np.isfinite(Z)
    keep = finite.mean(axis=0) >= min_finite
    medians = np.array([np.median(column[ok]) if ok.any() else 0.0
                        for column, ok in zip(Z.T, finite.T)])
    filled = np.where(finite, Z, medians)
    keep &= filled.std(axis=0) > 0
    lag = int(round(lag_s / hop_s))
    if 2 * lag <= Z.shape[0]:
        keep &= _autocorrelation(filled, lag) < max_autocorrelation
    return keep


def _autocorrelation(A, lag):
    """Pearson correlation of every column with itself ``lag`` rows later (1 for a constant)."""
    a, b = A[:-lag] - A[:-lag].mean(axis=0), A[lag:] - A[lag:].mean(axis=0)
    norm = np.sqrt((a**2).sum(axis=0) * (b**2).sum(axis=0))
    return np.where(norm > 0, (a * b).sum(axis=0) / np.where(norm > 0, norm, 1.0), 1.0)
