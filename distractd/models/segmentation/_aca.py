"""Aligned Cluster Analysis (ACA): kernel k-means over variable-length segments of a sequence.

ACA (S2 §3.2; Zhou, De la Torre & Hodgins) splits a frame sequence into contiguous segments of at
most ``max_length`` frames and clusters them with the DTAK segment kernel. Coordinate descent
alternates a forward dynamic programme (the best segmentation and labels given the previous
segmentation's clusters, S2 eq 3.9) and its backtrack, until the segmentation stops changing.

The search (:mod:`._aca_search`) is apart from this estimator. The forward step is the compiled
:func:`~._aca_search._dp_advance`. It keeps, per candidate length, one DTAK row
against every reference frame for the current and the previous end frame (the incremental DTAK
table ``Q`` of the reference, cut to 2 × max_length × n floats instead of max_length² × n), and the
frame kernel is evaluated one row at a time, so memory is O(n · max_length), never O(n²).
The online segmenter (:mod:`._online_segmenter`) runs the same programme against fixed prototypes
with its own float32, in-place kernel, tested equal to this one.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ..._errors import ConfigError
from ..._estimator import fit_context
from ..._validation import Interval, Options
from ._aca_search import (
    Segmentation, _as_segmentation, _check_lengths, _make_problem, _segment_problem,
)
from ._kernels import KERNELS

__all__ = ["ACA", "Segmentation"]


class ACA(ClusterMixin, BaseEstimator):
    """Aligned Cluster Analysis: segment a frame sequence and cluster the segments.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of segment clusters k.
    min_length : int, default=1
        Shortest segment, in frames: used by the initialisation, and by the DP when
        ``enforce_min_length``.
    max_length : int, default=10
        Longest segment, in frames (n_max).
    enforce_min_length : bool, default=False
        Also forbid segments shorter than ``min_length`` in the DP. The reference code does not,
        and the objective already charges every segment its own distance.
    kernel : {"gaussian", "binary", "linear", "precomputed"}, default="gaussian"
        Frame kernel; with "precomputed", ``X`` is the (n_frames, n_frames) kernel matrix.
    sigma : float or None, default=None
        Gaussian width in feature units; None sets it by the reference rule with ``nei``.
    nei : float, default=0.1
        Neighbourhood fraction of the bandwidth rule (:func:`~._kernels.gaussian_bandwidth`).
    init : {"random", "propagative", "kmeans"}, default="random"
        Initial segmentation: random lengths and spectral labels, propagative similarity (dense,
        O(n²) memory), or k-means frame labels merged into segments (O(n) memory).
    n_init : int, default=5
        Restarts; the lowest objective wins.
    max_iter : int, default=20
        Coordinate-descent iterations per restart (the reference's nIterMa).
    psd_shift : bool, default=False
        Add |λ_min(T)| of the initial segment kernel matrix to the frame kernel's diagonal when T is
        not positive semi-definite (S2 §3.2); the reference code does not.
    random_state : int, Generator or None, default=None
        Seed of the initialisation.

    Attributes
    ----------
    segments_ : Segmentation
        Segment starts (0-based, n appended) and clusters.
    labels_ : ndarray of shape (n_frames,)
        Cluster of every frame.
    objective_ : float
        ACA energy J of ``segments_`` (inf if a cluster emptied).
    n_iter_ : int
        Coordinate-descent iterations of the kept restart.
    sigma_ : float
        Gaussian width used, in feature units.
    shift_ : float
        Diagonal shift applied by ``psd_shift`` (0 when none).

    References
    ----------
    S2 §3.2; F. Zhou, F. De la Torre, J. Hodgins, "Aligned Cluster Analysis for temporal
    segmentation of human motion", FG 2008.
    """

    _constraint_error = ConfigError
    _constraints = {
        "n_clusters": Interval(1, None, integer=True),
        "min_length": Interval(1, None, integer=True),
        "max_length": Interval(1, None, integer=True),
        "enforce_min_length": bool,
        "kernel": Options(tuple(KERNELS)),
        "sigma": [None, Interval(0, None)],
        "nei": Interval(0, 1),
        "init": Options(("random", "propagative", "kmeans")),
        "n_init": Interval(1, None, integer=True),
        "max_iter": Interval(1, None, integer=True),
        "psd_shift": bool,
    }

    def __init__(self, n_clusters=2, min_length=1, max_length=10, enforce_min_length=False,
                 kernel="gaussian", sigma=None, nei=0.1, init="random", n_init=5, max_iter=20,
                 psd_shift=False, random_state=None):
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
        """Segment and cluster the sequence ``X``.

        Parameters
        ----------
        X : ndarray of shape (n_frames, n_features) or (n_frames, n_frames) when precomputed
            Frames in time order.
        y : ignored
        init_segmentation : Segmentation, default=None
            Start from this segmentation instead of ``n_init`` initialisations.
        sample_weight : ndarray of shape (n_frames,), default=None
            Frame weights (unit when None).

        Returns
        -------
        self : ACA
        """
        _check_lengths(self.min_length, self.max_length, "ACA")
        X = validate_data(self, X, dtype=np.float64, order="C")
        problem = _make_problem(X, self.kernel, self.sigma, self.nei, sample_weight, "ACA")
        rng = np.random.default_rng(check_random_state(self.random_state).randint(2**31 - 1))
        min_dp = self.min_length if self.enforce_min_length else 1
        seg, obj, n_iter, shift = _segment_problem(
            problem, self.init, _as_segmentation(init_segmentation), self.n_clusters,
            self.min_length, min_dp, self.max_length, self.n_init, self.max_iter, self.psd_shift,
            rng)
        self.segments_ = seg
        self.labels_ = seg.frame_labels()
        self.objective_ = obj
        self.n_iter_ = n_iter
        self.sigma_ = problem.sigma
        self.shift_ = shift
        return self

    def fit_predict(self, X, y=None, **fit_params):
        """Fit and return the cluster of every frame, shape (n_frames,)."""
        return self.fit(X, **fit_params).labels_

    def segment_table(self):
        """Rows (start, end, cluster) of the fitted segments, frames 0-based, end exclusive."""
        check_is_fitted(self)
        s = self.segments_
        return np.column_stack([s.starts[:-1], s.starts[1:], s.labels])
