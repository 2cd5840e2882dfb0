"""The naive floor: a fixed recipe every quality figure of the project stands beside.

On real texting drives (Taamneh et al. 2017, doi:10.1038/sdata.2017.110) a plain recipe beat every
model of the project; it is kept as a model kind so that it is measured in the same run, on the
same windows and truth, as the models it judges:

- features: the window's track-loss fraction
  (:data:`~distractd.models.detectors.LOSS_FEATURE`) and the mean and SD of every spatial field
  (gaze angles, head pose) the stream has data for — for a 1 Hz gaze-only tracker the valid-gaze
  fraction and the mean and SD of gaze x and y — and, the same recipe on the car's signals, the
  mean and SD of each vehicle signal it has (:data:`~distractd.pipeline.NAIVE_VEHICLE_FEATURES`),
  so that the floor rises with the signals a stream has;
- a missing value in a window the representation knows something of is the centre (0 after
  standardisation): a window whose gaze was lost throughout still gets scored, by its loss;
- an RBF SVM with ``class_weight="balanced"``, C = 1 and scikit-learn's ``gamma="scale"``
  (no hyper-parameter search: it is a floor, not a contender).

Two variants differ only in the standardisation: ``naive`` (deployable) takes the features through
the running per-stream baseline, what the daemon does; ``naive-offline`` z-scores each driver's
windows with that driver's mean and SD over all the driver's drives, future included — an upper
reference no causal detector has, and the floor the project's targets refer to.
"""

from dataclasses import dataclass

import numpy as np

from ...pipeline import FEATURE_NAMES, NAIVE_VEHICLE_FEATURES, Windows
from ...pipeline.formats import SPATIAL_FIELDS
from ._decision import LOSS_FEATURE

__all__ = ["NaiveRepresentation", "naive_feature_names", "scale_width"]

_CANDIDATES = (LOSS_FEATURE,) + tuple(f"{stat}_{field}" for field in SPATIAL_FIELDS
                                      for stat in ("mean", "sd")) + NAIVE_VEHICLE_FEATURES
"""The recipe's features before the data decides which exist: loss, then per spatial field its
mean and SD, then per vehicle signal its mean and SD."""


def naive_feature_names(windows, min_fraction=0.5, vehicle=False):
    """The naive recipe's features that have data in at least ``min_fraction`` of the windows.

    Parameters
    ----------
    windows : Windows or sequence of Windows
    min_fraction : float, default=0.5
    vehicle : bool, default=False
        Also the car's (:data:`~distractd.pipeline.NAIVE_VEHICLE_FEATURES`): set when the models
        compared read the car (``usable_features(..., vehicle=True)``), so that the floor has the
        same signals.

    Returns
    -------
    list of str
        The track-loss fraction, then the mean and SD of each spatial field and each vehicle
        signal with data.
    """
    parts = [windows] if isinstance(windows, Windows) else list(windows)
    X = np.vstack([w.X for w in parts]) if parts else np.empty((0, len(FEATURE_NAMES)))
    finite = dict(zip(FEATURE_NAMES, np.isfinite(X).mean(axis=0) if len(X) else
                      np.zeros(len(FEATURE_NAMES))))
    return [name for name in _CANDIDATES if finite[name] >= min_fraction
            and (vehicle or name not in NAIVE_VEHICLE_FEATURES)]


@dataclass(frozen=True)
class NaiveRepresentation:
    """The features a naive model is evaluated on: its own, whatever the other models use.

    Attributes
    ----------
    normalisation : {"running", "driver"}
        The running per-stream baseline (causal) or the per-driver z-score over all of the
        driver's drives (offline).
    vehicle : bool, default=False
        With the car's signals (:func:`naive_feature_names`).
    """

    normalisation: str
    vehicle: bool = False

    def feature_names(self, windows):
        """:func:`naive_feature_names` of ``windows``."""
        return naive_feature_names(windows, vehicle=self.vehicle)

    def impute(self, X):
        """``X`` with a missing value set to the centre (0) in rows with any value; a row with
        none (the baseline still warming up) stays missing and undecided."""
        X = np.array(X, dtype=np.float64)
        known = np.isfinite(X).any(axis=1)
        X[known] = np.nan_to_num(X[known], nan=0.0)
        return X


def scale_width(estimator, grid, X, y, cv, random_state=None):
    """The kernel width of scikit-learn's ``gamma="scale"`` on the training rows, no search.

    ``gamma = 1 / (n_features · var(X))`` is ``1 / (2 σ²)`` for ``σ = sqrt(n_features · var(X) /
    2)``. The signature is :class:`~distractd.models.detectors.ModelSpec`'s ``select``; the
    grid and the folds are unused.
    """
    X = np.asarray(X, dtype=np.float64)
    spread = float(X.var()) if X.size else 1.0
    return {"kernel_width": float(np.sqrt(X.shape[1] * (spread if spread > 0 else 1.0) / 2))}
