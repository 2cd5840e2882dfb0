"""Segment prototypes: reference segments learned offline, with each cluster's distraction label.

:class:`SegmentPrototypes` holds everything derived from the reference segments once (frames
transposed, cluster terms, lengths), shared by every stream's :class:`~._online_segmenter.
OnlineSegmenter`; :meth:`SegmentPrototypes.segment` is the batch forward programme against them and
the compiled :func:`_dp_frames` its one-frame-at-a-time step, which the online segmenter drives
(one core, two drivers). :func:`~._prototype_fitting.fit_segment_prototypes` learns them from a
drive with the driving defaults of ACA or HACA (apart, so that the daemon, which only matches
against them, loads no scikit-learn or scipy); they travel in a model artifact's extras.
"""

import numpy as np
from numba import njit

from ..._errors import ModelError
from ..._validation import Interval, Options, check_params
from ._dtak import _segment_matrix
from ._kernels import KERNELS, _kernel_diag, _kernel_row
from ._segment_chain import _INF, _backtrack, _cluster_terms, _nearest_cluster

__all__ = ["SEGMENT_DTYPE", "SegmentPrototypes", "PROTOTYPE_MAX_SECONDS", "PROTOTYPE_SEGMENTS"]

SEGMENT_DTYPE = np.dtype([("start", np.int64), ("end", np.int64), ("cluster", np.int64),
                          ("label", np.int8), ("committed_at", np.int64)])
"""One segment: frames [start, end) (0-based), its cluster, the cluster's distraction label
(1 distracted, 0 attentive, -1 unknown) and the frame after which it was committed (-1 if not)."""

_FORMAT = "distractd.segment-prototypes/1"

PROTOTYPE_MAX_SECONDS = 10.0
"""Longest prototype segment, seconds (20 windows at the 0.5 s hop)."""

PROTOTYPE_SEGMENTS = 16
"""Prototype segments kept: about 320 frames, 26 KB of DTAK cells per stream."""

MAX_SEGMENT_FRAMES = 256
"""Largest ``max_length`` (and ``min_length``) a set of prototypes may have: 128 s at the 0.5 s
hop. Each stream holds prototype frames x ``max_length`` float32 DTAK cells (318 KB for 311
frames here); a forged 10**7 took a daemon to 12 GB at its first stream."""
MAX_COMMIT_LAG = 4 * MAX_SEGMENT_FRAMES
"""Largest ``commit_lag``, frames: the online segmenter's buffers are as long (a forged 10**12
failed to allocate them)."""
SIGMA_RANGE = (1e-9, 1e9)
"""Bounds of the Gaussian width, feature units (beyond them the kernel is 0 or 1 everywhere)."""


class SegmentPrototypes:
    """Reference segments for the online segmenter, with each cluster's distraction label.

    Parameters
    ----------
    X : ndarray of shape (n_frames, n_features)
        Frames of the reference segments, concatenated (z-scored window features for driving).
    starts : ndarray of shape (n_segments + 1,)
        0-based starts of the segments in ``X``, with ``n_frames`` appended.
    clusters : ndarray of shape (n_segments,)
        Cluster of each segment, in ``[0, n_clusters)``; every cluster must have a segment.
    cluster_labels : ndarray of shape (n_clusters,)
        Distraction label of each cluster: 1 distracted, 0 attentive, -1 unknown.
    kernel : {"gaussian", "binary", "linear"}, default="gaussian"
        Frame kernel.
    sigma : float, default=1.0
        Gaussian width, in feature units.
    min_length, max_length : int, default=1, 10
        Segment length bounds of the programme, in frames.
    commit_lag : int, default=None
        Frames after which the online segmenter commits a frame even if its cluster could still
        change (:class:`~._online_segmenter.OnlineSegmenter`'s default ``max_lag``); None:
        ``max_length``.
    """

    def __init__(self, X, starts, clusters, cluster_labels, kernel="gaussian", sigma=1.0,
                 min_length=1, max_length=10, commit_lag=None):
        commit_lag = max_length if commit_lag is None else commit_lag
        check_params({"kernel": kernel, "sigma": sigma, "min_length": min_length,
                      "max_length": max_length, "commit_lag": commit_lag},
                     {"kernel": Options(("gaussian", "binary", "linear")),
                      "sigma": Interval(*SIGMA_RANGE, closed="both"),
                      "min_length": Interval(1, MAX_SEGMENT_FRAMES, integer=True, closed="both"),
                      "max_length": Interval(1, MAX_SEGMENT_FRAMES, integer=True, closed="both"),
                      "commit_lag": Interval(0, MAX_COMMIT_LAG, integer=True, closed="both")},
                     owner="SegmentPrototypes", error=ModelError)
        if min_length > max_length:
            raise ModelError(f"SegmentPrototypes.min_length must be <= max_length={max_length}, "
                             f"got {min_length}")
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.starts = np.asarray(starts, dtype=np.int64)
        self.clusters = np.asarray(clusters, dtype=np.int64)
        self.cluster_labels = np.asarray(cluster_labels, dtype=np.int8)
        self.kernel = kernel
        self.sigma = float(sigma)
        self.min_length = int(min_length)
        self.max_length = int(max_length)
        self.commit_lag = int(commit_lag)
        k = self.cluster_labels.shape[0]
        if (self.X.ndim != 2 or self.starts.shape != (self.clusters.shape[0] + 1,)
                or self.starts[0] != 0 or self.starts[-1] != self.X.shape[0]
                or np.any(np.diff(self.starts) < 1)):
            raise ModelError(f"SegmentPrototypes: starts must rise from 0 to n_frames="
                             f"{self.X.shape[0]} with one more entry than clusters "
                             f"({self.clusters.shape[0]}), got {self.starts.shape[0]} starts")
        if not np.array_equal(np.unique(self.clusters), np.arange(k)):
            raise ModelError(f"SegmentPrototypes: clusters must cover 0..{k - 1} (one per "
                             f"cluster label), got {np.unique(self.clusters).tolist()}")
        self.XT = np.ascontiguousarray(self.X.T)
        self.code = KERNELS[kernel]
        T = _segment_matrix(self.code, self.sigma, self.X, self.starts, np.ones(self.X.shape[0]),
                            0.0)
        self.inv_count, self.t3 = _cluster_terms(T, self.clusters, k)
        self.lengths = np.diff(self.starts).astype(np.float64)

    @classmethod
    def from_segmentation(cls, X, segmentation, frame_labels=None, *, n_clusters, kernel="gaussian",
                          sigma=1.0, min_length=1, max_length=10, commit_lag=None, max_segments=None,
                          seed=None):
        """Prototypes from a fitted segmentation of ``X`` (ACA or the top level of HACA).

        Parameters
        ----------
        X : ndarray of shape (n_frames, n_features)
            The segmented sequence.
        segmentation : Segmentation
            Its segments and clusters (``ACA.segments_``, ``HACA.segments_``).
        frame_labels : ndarray of shape (n_frames,), default=None
            Distraction label of each frame (1, 0, -1 unknown); each cluster takes the majority
            label of its labelled frames (-1 when it has none, or when None).
        n_clusters : int
            Number of clusters.
        max_segments : int, default=None
            Keep at most this many segments, drawn at random but at least one per cluster.
        seed : int, default=None
            Seed of that draw.
        """
        starts = np.asarray(segmentation.starts, dtype=np.int64)
        clusters = np.asarray(segmentation.labels, dtype=np.int64)
        present = np.unique(clusters)
        remap = np.full(n_clusters, -1, dtype=np.int64)
        remap[present] = np.arange(present.shape[0])
        labels = np.full(present.shape[0], -1, dtype=np.int8)
        if frame_labels is not None:
            frame_clusters = np.repeat(clusters, np.diff(starts))
            for c_new, c in enumerate(present):
                votes = np.asarray(frame_labels)[frame_clusters == c]
                votes = votes[votes >= 0]
                if votes.size:
                    labels[c_new] = int(np.mean(votes) > 0.5)
        keep = np.arange(clusters.shape[0])
        if max_segments is not None and max_segments < keep.shape[0]:
            rng = np.random.default_rng(seed)
            first = np.array([rng.choice(np.flatnonzero(clusters == c)) for c in present])
            rest = rng.permutation(np.setdiff1d(keep, first))[:max(0, max_segments - first.size)]
            keep = np.sort(np.concatenate([first, rest]))
        lengths = np.diff(starts)[keep]
        rows = np.concatenate([np.arange(starts[j], starts[j + 1]) for j in keep])
        return cls(np.asarray(X)[rows], np.concatenate([[0], np.cumsum(lengths)]),
                   remap[clusters[keep]], labels, kernel=kernel, sigma=sigma,
                   min_length=min_length, max_length=max_length, commit_lag=commit_lag)

    @property
    def n_segments(self):
        return self.clusters.shape[0]

    def to_artifact(self):
        """(JSON-able parameters, arrays) for the model artifact's ``extras["segmenter"]``."""
        params = {"format": _FORMAT, "kernel": self.kernel, "sigma": self.sigma,
                  "min_length": self.min_length, "max_length": self.max_length,
                  "commit_lag": self.commit_lag}
        arrays = {"X": self.X, "starts": self.starts, "clusters": self.clusters,
                  "cluster_labels": self.cluster_labels}
        return params, arrays

    @classmethod
    def from_artifact(cls, params, arrays):
        """Rebuild from :meth:`to_artifact` output; a mismatch raises ModelError."""
        if params.get("format") != _FORMAT:
            raise ModelError(f"segmenter extras: format must be {_FORMAT!r}, "
                             f"got {params.get('format')!r}")
        missing = {"X", "starts", "clusters", "cluster_labels"} - set(arrays)
        if missing:
            raise ModelError(f"segmenter extras: missing arrays {sorted(missing)}")
        missing = {"kernel", "sigma", "min_length", "max_length"} - set(params)
        if missing:
            raise ModelError(f"segmenter extras: missing settings {sorted(missing)}")
        return cls(arrays["X"], arrays["starts"], arrays["clusters"], arrays["cluster_labels"],
                   kernel=params["kernel"], sigma=params["sigma"],
                   min_length=params["min_length"], max_length=params["max_length"],
                   commit_lag=params.get("commit_lag"))

    def segment(self, X):
        """Batch forward programme and backtrack over a whole sequence.

        Parameters
        ----------
        X : ndarray of shape (n_frames, n_features)

        Returns
        -------
        segments : ndarray of SEGMENT_DTYPE, shape (n_segments,)
        """
        X = np.ascontiguousarray(X, dtype=np.float64)
        n = X.shape[0]
        obj = np.empty(n + 1)
        obj[0] = 0.0
        head = np.empty(n, dtype=np.int64)
        lab = np.empty(n, dtype=np.int64)
        self._advance(X, _kernel_diag(self.code, self.sigma, X), 0, 0, self.new_columns(), obj,
                      head, lab)
        if obj[n] == _INF:
            raise ModelError(f"SegmentPrototypes: {n} frames cannot be cut into segments of "
                             f"[{self.min_length}, {self.max_length}] frames")
        starts, clusters = _backtrack(head, lab, 0, -1, n - 1)
        return self._rows(starts, clusters, -1)

    def new_columns(self):
        """One stream's DTAK cells: ``(prototype frames, max_length)`` float32 zeros."""
        return np.zeros((self.X.shape[0], self.max_length), dtype=np.float32)

    def _advance(self, X, dq, offset, v0, Q, obj, head, lab):
        _dp_frames(self.code, self.sigma, self.XT, self.starts, self.clusters, self.lengths,
                   self.inv_count, self.t3, self.min_length, self.max_length, X, dq, offset, v0,
                   Q, obj, head, lab)

    def _rows(self, starts, clusters, committed_at):
        rows = np.empty(clusters.shape[0], dtype=SEGMENT_DTYPE)
        rows["start"] = starts[:-1]
        rows["end"] = starts[1:]
        rows["cluster"] = clusters
        rows["label"] = self.cluster_labels[clusters]
        rows["committed_at"] = committed_at
        return rows


@njit(cache=True)
def _dp_frames(code, sigma, XrT, r_starts, r_labels, r_len, inv_count, t3, min_len, max_len, X,
               dq, offset, v0, Q, obj, head, lab):
    """Forward programme (``_dp_advance`` of :mod:`._aca`, unit weights) over the rows of ``X``.

    Row r of ``X`` is local frame ``v0 + r`` (absolute ``offset + v0 + r``); ``dq``, ``obj``,
    ``head`` and ``lab`` are as in ``_dp_advance`` (``dq`` already holds the new frames' kernel
    diagonal, and ``max_len - 1`` frames before v0 unless the buffer starts the stream).
    ``Q[s, a % max_len]`` is the DTAK cell of the candidate starting at absolute frame a, ending at
    the newest frame, against prototype frame s. A new frame extends every candidate by one frame
    in place (``old`` keeps the previous frame's cell of the row above) and starts a new candidate
    in the slot of the one that just exceeded ``max_len``. The cells are float32 and the recursion
    runs in float32; everything else is float64 as in ``_dp_advance``.
    """
    k = t3.shape[0]
    m = r_labels.shape[0]
    krow = np.empty(XrT.shape[1])
    old = np.empty(max_len, dtype=np.float32)
    t2 = np.empty((max_len, k))
    n_cand = np.empty(max_len)
    t1 = np.empty(max_len)
    for r in range(X.shape[0]):
        v = v0 + r
        new = (offset + v) % max_len
        _kernel_row(code, sigma, X, r, XrT, 0, krow)
        n_len = min(max_len, v + 1)
        t1_acc = 0.0
        for q in range(max_len):
            slot = (new - q + max_len) % max_len
            n_cand[slot] = q + 1.0
            if q < n_len:
                t1_acc += dq[v - q]
                t1[q] = t1_acc / (q + 1.0)
            for c in range(k):
                t2[slot, c] = 0.0
        for j in range(m):
            s0 = r_starts[j]
            s1 = r_starts[j + 1]
            kk = np.float32(krow[s0])
            for a in range(max_len):
                old[a] = Q[s0, a]
                Q[s0, a] = old[a] + kk
            Q[s0, new] = kk + kk
            for s in range(s0 + 1, s1):
                kk = np.float32(krow[s])
                k2 = kk + kk
                for a in range(max_len):
                    cell = Q[s, a]
                    Q[s, a] = max(old[a] + k2, Q[s - 1, a] + kk, cell + kk)
                    old[a] = cell
                Q[s, new] = Q[s - 1, new] + kk
            c = r_labels[j]
            for a in range(max_len):
                t2[a, c] += Q[s1 - 1, a] / (n_cand[a] + r_len[j])
        best = _INF
        best_head = -1
        best_lab = -1
        for q in range(min_len - 1, n_len):
            i = v - q
            if obj[i] == _INF:
                continue
            slot = (new - q + max_len) % max_len
            dist_min, c_min = _nearest_cluster(t1[q], t2[slot], t3, inv_count, k)
            total = obj[i] + dist_min
            if total < best:
                best = total
                best_head = offset + i
                best_lab = c_min
        obj[v + 1] = best
        head[v] = best_head
        lab[v] = best_lab
