"""Hierarchical ACA (HACA): ACA level by level, each level's frames being the previous segments.

Level 1 is ACA on the frames with a short maximum length. Each higher level runs ACA on the previous
level's segments, whose kernel is the previous segment DTAK matrix and whose weights are their
lengths in frames, so the DTAK between two level-l segments is the GDTAK of their sub-segments
(S2 §3.3, ``segHaca.m``). Two levels with maximum lengths a and b reach segments of a·b frames at a
fraction of the cost of one ACA with that maximum length.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ..._errors import ConfigError
from ..._estimator import fit_context
from ..._validation import Interval, Options
from ._aca import ACA
from ._aca_search import (
    Segmentation, _as_segmentation, _check_lengths, _make_problem, _Problem, _segment_problem,
)
from ._kernels import KERNELS
from ._representation import drift_features, drift_free_windows

__all__ = ["HACA", "segment_drive", "driving_segmenter", "standardize_windows", "DRIVING_NEI",
           "DRIVING_MAX_SECONDS", "DRIVING_N_CLUSTERS", "PRIOR_WEIGHT"]

DRIVING_NEI = 0.3
"""Gaussian bandwidth rule's neighbourhood fraction for z-scored window features."""
DRIVING_MAX_SECONDS = 20.0
"""Longest driving segment, in seconds."""
DRIVING_N_CLUSTERS = 4
"""Segment clusters for a drive."""

PRIOR_WEIGHT = 3.0
"""Weight of a cohort model's view in :func:`segment_drive`: its logit column z-scored and scaled
to count like about nine feature columns (chosen on development drives, cohort seed 31415)."""


class HACA(ClusterMixin, BaseEstimator):
    """Hierarchical Aligned Cluster Analysis.

    Parameters
    ----------
    n_clusters : tuple of int, default=(6, 2)
        Clusters k at each level, bottom first.
    min_length : tuple of int, default=(2, 2)
        Shortest segment at each level, in units of the level below (frames at level 1).
    max_length : tuple of int, default=(5, 8)
        Longest segment at each level, in units of the level below.
    enforce_min_length : bool, default=False
        Also forbid segments shorter than ``min_length`` in the DP (see :class:`ACA`).
    kernel : {"gaussian", "binary", "linear", "precomputed"}, default="gaussian"
        Level-1 frame kernel; with "precomputed", ``X`` is the frame kernel matrix.
    sigma : float or None, default=None
        Gaussian width in feature units; None uses the reference rule with ``nei``.
    nei : float, default=0.1
        Neighbourhood fraction of the bandwidth rule.
    init : {"random", "propagative", "kmeans"}, default="random"
        Level-1 initialisation. Higher levels use "propagative" unless this is "random" (their
        "frames" have no features for k-means).
    n_init : int, default=5
        Restarts per level; the lowest objective wins.
    max_iter : int, default=20
        Coordinate-descent iterations per restart.
    psd_shift : bool, default=False
        Diagonal shift of each level's kernel when its segment kernel matrix is not PSD.
    random_state : int, Generator or None, default=None
        Seed of the initialisations.

    Attributes
    ----------
    levels_ : list of Segmentation
        Each level's segmentation, starts in frames.
    level_starts_ : list of ndarray
        Each level's starts in units of the level below (``sH`` of the reference).
    objectives_ : list of float
        ACA objective of each level.
    segments_ : Segmentation
        The top level, starts in frames.
    labels_ : ndarray of shape (n_frames,)
        Top-level cluster of every frame.
    sigma_ : float
        Level-1 Gaussian width, in feature units.

    References
    ----------
    S2 §3.3; F. Zhou, F. De la Torre, J. Hodgins, "Hierarchical Aligned Cluster Analysis for
    temporal clustering of human motion", IEEE TPAMI 35(3), 2013.
    """

    _constraint_error = ConfigError
    _constraints = {
        "n_clusters": tuple,
        "min_length": tuple,
        "max_length": tuple,
        "enforce_min_length": bool,
        "kernel": Options(tuple(KERNELS)),
        "sigma": [None, Interval(0, None)],
        "nei": Interval(0, 1),
        "init": Options(("random", "propagative", "kmeans")),
        "n_init": Interval(1, None, integer=True),
        "max_iter": Interval(1, None, integer=True),
        "psd_shift": bool,
    }

    def __init__(self, n_clusters=(6, 2), min_length=(2, 2), max_length=(5, 8),
                 enforce_min_length=False, kernel="gaussian", sigma=None, nei=0.1, init="random",
                 n_init=5, max_iter=20, psd_shift=False, random_state=None):
        self.n_clusters = n_clusters
        self.min_length = min_length
        self.max_length = max_length
        self.enforce_min_length = enforce_min_length
        self.kernel = kernel
        self.sigma = sigma
        self.nei = nei
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.psd_shift = psd_shift
        self.random_state = random_state

    @fit_context
    def fit(self, X, y=None, init_segmentation=None, sample_weight=None):
        """Segment ``X`` level by level.

        Parameters
        ----------
        X : ndarray of shape (n_frames, n_features) or (n_frames, n_frames) when precomputed
            Frames in time order.
        y : ignored
        init_segmentation : Segmentation, default=None
            Level-1 initial segmentation (instead of ``n_init`` initialisations).
        sample_weight : ndarray of shape (n_frames,), default=None
            Frame weights (unit when None).

        Returns
        -------
        self : HACA
        """
        levels = self._levels()
        X = validate_data(self, X, dtype=np.float64, order="C")
        problem = _make_problem(X, self.kernel, self.sigma, self.nei, sample_weight, "HACA")
        self.sigma_ = problem.sigma
        rng = np.random.default_rng(check_random_state(self.random_state).randint(2**31 - 1))
        to_frames = np.arange(X.shape[0] + 1)
        seg0 = _as_segmentation(init_segmentation)
        init = self.init
        self.levels_, self.level_starts_, self.objectives_ = [], [], []
        for k, min_len, max_len in levels:
            min_dp = min_len if self.enforce_min_length else 1
            seg, obj, _, shift = _segment_problem(
                problem, init, seg0, k, min_len, min_dp, max_len, self.n_init, self.max_iter,
                self.psd_shift, rng)
            self.level_starts_.append(seg.starts)
            to_frames = to_frames[seg.starts]
            self.levels_.append(Segmentation(to_frames, seg.labels))
            self.objectives_.append(obj)
            weights = np.add.reduceat(problem.weights, seg.starts[:-1])
            T = problem._replace(shift=shift).segment_matrix(seg.starts)
            problem = _Problem(KERNELS["precomputed"], 0.0, T, weights, 0.0)
            seg0 = None
            init = "random" if self.init == "random" else "propagative"
        self.segments_ = self.levels_[-1]
        self.labels_ = self.segments_.frame_labels()
        self.objective_ = self.objectives_[-1]
        return self

    def fit_predict(self, X, y=None, **fit_params):
        """Fit and return the top-level cluster of every frame, shape (n_frames,)."""
        return self.fit(X, **fit_params).labels_

    def segment_table(self):
        """Rows (start, end, cluster) of the top-level segments, frames 0-based, end exclusive."""
        check_is_fitted(self)
        s = self.segments_
        return np.column_stack([s.starts[:-1], s.starts[1:], s.labels])

    def _levels(self):
        sizes = {len(self.n_clusters), len(self.min_length), len(self.max_length)}
        if len(sizes) != 1 or 0 in sizes:
            raise ConfigError(f"HACA: n_clusters, min_length and max_length need one entry per "
                             f"level, got {self.n_clusters}, {self.min_length}, {self.max_length}")
        rule = Interval(1, None, integer=True)
        for name in ("n_clusters", "min_length", "max_length"):
            for level, value in enumerate(getattr(self, name), start=1):
                if not rule.accepts(value):
                    raise ConfigError(f"HACA.{name}[level {level}] must be {rule}, got {value!r}")
        for lo, hi in zip(self.min_length, self.max_length):
            _check_lengths(lo, hi, "HACA")
        return list(zip(self.n_clusters, self.min_length, self.max_length))


def standardize_windows(X, mean=None, scale=None):
    """z-score window features per column; missing values (NaN) become the column mean (0).

    Parameters
    ----------
    X : ndarray of shape (n_windows, n_features)
        Raw window features (NaN where a measure had no data).
    mean, scale : ndarray of shape (n_features,), default=None
        Column means and standard deviations to apply (e.g. a model's z-score); computed from ``X``
        when None (columns with no data: mean 0; constant columns: scale 1).

    Returns
    -------
    Z : ndarray of shape (n_windows, n_features)
    mean, scale : ndarray of shape (n_features,)
    """
    X = np.asarray(X, dtype=np.float64)
    if mean is None:
        counts = np.sum(~np.isnan(X), axis=0)
        mean = np.nansum(X, axis=0) / np.maximum(counts, 1)
        centred = np.where(np.isnan(X), 0.0, X - mean)
        scale = np.sqrt(np.sum(centred**2, axis=0) / np.maximum(counts, 1))
        scale = np.where(scale > 0, scale, 1.0)
    Z = (X - mean) / scale
    return np.ascontiguousarray(np.where(np.isnan(Z), 0.0, Z)), mean, scale


def driving_segmenter(method="aca", n_clusters=DRIVING_N_CLUSTERS, max_seconds=DRIVING_MAX_SECONDS,
                      hop_s=0.5, random_state=0):
    """Unfitted ACA or HACA with the driving defaults (docs/segmentation.md, "Driving defaults").

    ACA: Gaussian kernel with ``nei`` = :data:`DRIVING_NEI` on z-scored window features, segments
    up to ``max_seconds``, k-means initialisation merged into segments of at least 1 s, 3 restarts.
    HACA: level 1 with 2 × n_clusters clusters and segments up to 5 s, level 2 with ``n_clusters``
    clusters and up to ``max_seconds`` / 5 s level-1 segments.

    Parameters
    ----------
    method : {"aca", "haca"}, default="aca"
    n_clusters : int, default=DRIVING_N_CLUSTERS
        Clusters (top level).
    max_seconds : float, default=DRIVING_MAX_SECONDS
        Longest segment, in seconds.
    hop_s : float, default=0.5
        Window hop, in seconds (one frame per window).
    random_state : int, default=0
        Seed of the initialisations.

    Returns
    -------
    ACA or HACA
    """
    if method not in ("aca", "haca"):
        raise ConfigError(f"segment method must be 'aca' or 'haca', got {method!r}")
    max_len = max(2, int(round(max_seconds / hop_s)))
    min_len = max(1, int(round(1.0 / hop_s)))
    if method == "aca":
        return ACA(n_clusters=n_clusters, min_length=min(min_len, max_len), max_length=max_len,
                   nei=DRIVING_NEI, init="kmeans", n_init=3, random_state=random_state)
    level1 = min(max(2, int(round(5.0 / hop_s))), max_len)
    return HACA(n_clusters=(2 * n_clusters, n_clusters), min_length=(min(min_len, level1), 1),
                max_length=(level1, max(2, int(round(max_len / level1)))), nei=DRIVING_NEI,
                init="kmeans", n_init=3, random_state=random_state)


def segment_drive(X, method="aca", n_clusters=DRIVING_N_CLUSTERS, max_seconds=DRIVING_MAX_SECONDS,
                  hop_s=0.5, random_state=0, *, t_end=None, features="all", prior=None):
    """Segment a drive's window-feature sequence with the driving defaults.

    The features (the drift-free representation when ``t_end`` is given,
    :func:`~._representation.drift_free_windows`) are z-scored per drive
    (:func:`standardize_windows`), restricted to the label-free selection when ``features="auto"``
    (:func:`~._representation.drift_features`), optionally joined by a cohort model's view (its
    probability of distraction per window, as a column: the logit z-scored and weighted by
    :data:`PRIOR_WEIGHT`), then segmented by :func:`driving_segmenter`.

    Parameters
    ----------
    X : ndarray of shape (n_windows, n_features)
        Raw window features in time order (NaN where a measure had no data).
    method, n_clusters, max_seconds, hop_s, random_state
        See :func:`driving_segmenter`.
    t_end : ndarray of shape (n_windows,) or None, default=None
        Window end times, seconds: segment the drift-free representation (None, or a drive
        shorter than the baseline's warm-up: the raw features, each z-scored over the drive).
    features : {"all", "auto"}, default="all"
        Every feature, or the label-free selection.
    prior : ndarray of shape (n_windows,) or None, default=None
        Probability that each window is distracted
        (:func:`distractd.models.clustering.model_prior`; NaN: no view, taken as 0.5).

    Returns
    -------
    estimator : ACA or HACA
        The fitted estimator (``segments_``, ``labels_``); ``features_`` marks the columns used.
    """
    if features not in ("all", "auto"):
        raise ConfigError(f"segment features must be 'all' or 'auto', got {features!r}")
    X = np.asarray(X, dtype=np.float64)
    if t_end is not None:
        drift_free = drift_free_windows(t_end, X)
        if np.isfinite(drift_free).any():  # else shorter than the baseline's warm-up: raw features
            X = drift_free
    keep = (drift_features(X, hop_s=hop_s) if features == "auto"
            else np.ones(X.shape[1], dtype=bool))
    if not keep.any():
        keep[:] = True
    Z = standardize_windows(X)[0][:, keep]
    if prior is not None:
        p = np.clip(np.nan_to_num(np.asarray(prior, dtype=np.float64), nan=0.5), 1e-3, 1 - 1e-3)
        if p.shape != (X.shape[0],):
            raise ConfigError(f"segment prior must have one value per window ({X.shape[0]}), "
                              f"got shape {p.shape}")
        logit = np.log(p / (1.0 - p))
        Z = np.column_stack([Z, PRIOR_WEIGHT * (logit - logit.mean()) / (logit.std() or 1.0)])
    est = driving_segmenter(method, n_clusters, max_seconds, hop_s, random_state)
    est.fit(np.ascontiguousarray(Z))
    est.features_ = keep
    return est
