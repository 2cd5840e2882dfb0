"""Learning segment prototypes (:class:`~._prototypes.SegmentPrototypes`) from a training drive
with ACA or HACA: offline only, apart from the prototypes the daemon matches streams against, since
the segmenters load scikit-learn and scipy (DESIGN §1)."""

import numpy as np

from ..._errors import ModelError
from ._haca import DRIVING_N_CLUSTERS, driving_segmenter
from ._prototypes import PROTOTYPE_MAX_SECONDS, PROTOTYPE_SEGMENTS, SegmentPrototypes

__all__ = ["fit_segment_prototypes"]


def fit_segment_prototypes(X_normalized, y_window_labels=None, *, method="aca",
                           n_clusters=DRIVING_N_CLUSTERS, max_seconds=PROTOTYPE_MAX_SECONDS,
                           hop_s=0.5, max_segments=PROTOTYPE_SEGMENTS, random_state=0):
    """Prototypes for the online segmenter from a training drive's normalised windows.

    Runs :func:`~._haca.driving_segmenter` (ACA or HACA with the driving defaults, segments of at
    most ``max_seconds``) on the windows, maps every cluster to the majority label of its labelled
    windows, and keeps at most ``max_segments`` segments (at least one per cluster), which bounds
    the online cost and state (prototype frames × ``max_length`` float32 cells per stream). The
    commit lag is twice the longest segment: a frame's cluster is final once every chain ending in
    the last ``max_length`` frames agrees on it, so one more ``max_length`` leaves room for that
    agreement before a commit is forced (docs/segmentation.md, the budget table).

    Parameters
    ----------
    X_normalized : ndarray of shape (n_windows, n_features)
        Window features in time order, z-scored as the model normalises them, without NaN.
    y_window_labels : ndarray of shape (n_windows,), default=None
        1 distracted, 0 attentive, -1 unknown; None leaves every cluster's label unknown (-1).
    method : {"aca", "haca"}, default="aca"
    n_clusters : int, default=DRIVING_N_CLUSTERS
    max_seconds : float, default=PROTOTYPE_MAX_SECONDS
        Longest segment, in seconds.
    hop_s : float, default=0.5
        Window hop, in seconds.
    max_segments : int, default=PROTOTYPE_SEGMENTS
        Prototype segments kept.
    random_state : int, default=0
        Seed of the segmentation and of the draw of kept segments.

    Returns
    -------
    SegmentPrototypes
    """
    X = np.ascontiguousarray(X_normalized, dtype=np.float64)
    if X.ndim != 2 or not np.all(np.isfinite(X)):
        raise ModelError(f"fit_segment_prototypes: X_normalized must be a finite 2-D array, got "
                         f"shape {X.shape}")
    est = driving_segmenter(method, n_clusters, max_seconds, hop_s, random_state).fit(X)
    seg = est.segments_
    max_len = max(int(round(max_seconds / hop_s)), int(np.diff(seg.starts).max()))
    return SegmentPrototypes.from_segmentation(
        X, seg, y_window_labels, n_clusters=n_clusters, sigma=est.sigma_, max_length=max_len,
        commit_lag=2 * max_len, max_segments=max_segments, seed=random_state)
