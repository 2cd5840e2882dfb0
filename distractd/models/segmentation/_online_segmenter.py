"""Online fixed-lag ACA segmentation of a stream against segment prototypes learned offline.

The ACA forward programme is causal: the best segmentation of frames ≤ u needs only those frames.
Held against a fixed set of reference segments (:class:`~._prototypes.SegmentPrototypes`, from an
offline ACA or HACA fit, with each cluster's distraction label), the compiled
:func:`~._prototypes._dp_frames` runs the forward programme of :mod:`._aca_search` one new frame
(window) at a time. Any future segmentation ends its previous segment at one of the last
``max_length`` frames, so a boundary is final once the best chains back from all of them pass
through it (they coalesce); :class:`OnlineSegmenter` commits exactly those. Run over a whole
sequence and flushed, its committed segments equal
:meth:`~._prototypes.SegmentPrototypes.segment`, the batch programme (one core, two drivers), as
long as no commit was forced.

Label-final commits: the forward programme often keeps several ways of cutting a long stretch of
one cluster into segments of at most ``max_length`` frames, and those chains coalesce late (a
median of 3-5 ``max_length`` on driving data). What a consumer needs is the cluster of every frame,
and it is final sooner: once every live chain gives frames ``[committed_end, e)`` the same
clusters, any future best segmentation does too (it continues one of them), so those frames are
committed as runs of one cluster, exactly as the batch programme will label them.

Bounded lag: agreement can take arbitrarily long near a change of cluster, so every frame older
than ``max_lag`` frames (default ``prototypes.commit_lag``) is committed regardless: the best
current chain is committed up to the end of its segment that holds that frame, and the paths that
disagree are pruned. Every frame is then final at most ``max_lag`` frames after it arrived
(measured at the end of each ``update``), memory stays bounded, and ``forced_commits`` /
``forced_frames`` count where the result may differ from the batch programme.

Memory: everything derived from the prototypes (their frames transposed, cluster terms, lengths) is
held once by :class:`SegmentPrototypes` and shared by every stream. A stream owns one DTAK column
per live candidate start, ``max_length`` float32 cells per prototype frame, updated in place, and
the programme's cost, head and label of its pending frames (O(max_lag + max_length)); its frames
are not kept, only their kernel diagonal.
"""

import numpy as np
from numba import njit

from ..._errors import ModelError
from ..._validation import Interval, check_params
from ._kernels import _kernel_diag
from ._prototypes import SEGMENT_DTYPE
from ._segment_chain import _INF, _backtrack

__all__ = ["OnlineSegmenter"]


@njit(cache=True)
def _coalesced_end(head, obj, offset, committed, last, max_len):
    """Latest frame at which every live chain ending in the last ``max_len`` frames ends a segment."""
    lo = max(committed, last - max_len + 1)
    nodes = np.empty(last - lo + 1, dtype=np.int64)
    count = 0
    for e in range(lo, last + 1):
        if e == committed or obj[e - offset + 1] < _INF:
            nodes[count] = e
            count += 1
    nodes = nodes[:count]
    while True:
        top = nodes.max()
        if top == nodes.min():
            return top
        for i in range(count):
            if nodes[i] == top:
                nodes[i] = head[top - offset] - 1


@njit(cache=True)
def _agreed_end(head, lab, obj, offset, committed, start, last, max_len):
    """End (exclusive) of the frames from ``start`` on to which every live chain ending in the last
    ``max_len`` frames gives the same cluster (``start`` when none)."""
    lo = max(committed, last - max_len + 1)
    agreed = last + 1
    reference = np.empty(last + 1 - start, dtype=np.int64)
    first = True
    for e in range(lo, last + 1):
        if not (e == committed or obj[e - offset + 1] < _INF):
            continue
        agreed = min(agreed, e + 1)
        if agreed <= start:  # a chain ends before the first pending frame: nothing agreed yet
            return start
        u = e
        while u >= start and u >= 0:
            head_u = head[u - offset]
            cluster = lab[u - offset]
            for f in range(max(head_u, start), min(u, agreed - 1) + 1):
                if first:
                    reference[f - start] = cluster
                elif reference[f - start] != cluster:
                    agreed = f
                    break
            u = head_u - 1
        first = False
    return max(agreed, start)


@njit(cache=True)
def _prune_to(head, obj, offset, anchor, last, max_len):
    """After forcing a commit at ``anchor``, make unreachable every frame whose chain avoids it.

    Frames after ``anchor`` whose best chain does not end a segment at ``anchor`` lose their cost,
    and so do the frames before it (no later segment may start before ``anchor + 1``).
    """
    for u in range(max(offset - 1, anchor - max_len), anchor):
        obj[u - offset + 1] = _INF
    ok = np.zeros(last - anchor + 1, dtype=np.bool_)
    ok[0] = True
    for u in range(anchor + 1, last + 1):
        parent = head[u - offset] - 1
        ok[u - anchor] = obj[u - offset + 1] < _INF and parent >= anchor and ok[parent - anchor]
        if not ok[u - anchor]:
            obj[u - offset + 1] = _INF


class OnlineSegmenter:
    """Causal fixed-lag ACA segmentation of a frame stream against :class:`SegmentPrototypes`.

    Parameters
    ----------
    prototypes : SegmentPrototypes
        Reference segments, clusters and cluster labels.
    max_lag : int, default=None
        Frames after which a frame is committed even if its cluster could still change (None:
        ``prototypes.commit_lag``). The clusters of the committed frames equal the batch
        programme's whenever ``forced_commits`` stays 0, e.g. with ``max_lag`` ≥ the stream length.

    Attributes
    ----------
    n_frames : int
        Frames consumed.
    committed_end : int
        Frames [0, committed_end) are in committed segments.
    forced_commits : int
        Commits forced by ``max_lag`` (each may make the result differ from the batch programme).
    forced_frames : int
        Frames those forced commits made final.
    """

    def __init__(self, prototypes, max_lag=None, horizon=None):
        max_len = prototypes.max_length
        max_lag = prototypes.commit_lag if max_lag is None else max_lag
        horizon = max(4 * max_len, max_lag + max_len) if horizon is None else horizon
        check_params({"max_lag": max_lag, "horizon": horizon},
                     {"max_lag": Interval(0, None, integer=True),
                      "horizon": Interval(max_lag + max_len, None, integer=True)},
                     owner="OnlineSegmenter")
        self.prototypes = prototypes
        self.max_lag = max_lag
        self.horizon = horizon
        self.n_frames = 0
        self.committed_end = 0
        self.forced_commits = 0
        self.forced_frames = 0
        self.pruned = 0
        self._boundary = 0  # the programme's segment boundary: no chain is cut before it
        self._chunk = max_len
        capacity = horizon + 3 * max_len + 1
        self._diag = np.zeros(capacity)
        self._obj = np.zeros(capacity + 1)
        self._head = np.zeros(capacity, dtype=np.int64)
        self._lab = np.zeros(capacity, dtype=np.int64)
        self._offset = 0
        self._Q = prototypes.new_columns()

    def update(self, x_rows):
        """Consume new frames (windows); return what they complete.

        Parameters
        ----------
        x_rows : ndarray of shape (n_new, n_features) or (n_features,)
            New frames in time order, in the prototypes' feature space.

        Returns
        -------
        committed : ndarray of SEGMENT_DTYPE
            Segments that became final, in time order; a segment whose first frames became final
            before its end is known is split there, and goes on in a later row of its cluster.
        provisional : numpy.void of SEGMENT_DTYPE or None
            The best current segment holding the newest frame, from the first frame not yet
            committed (None when every frame consumed is already committed).
        """
        x_rows = np.ascontiguousarray(np.atleast_2d(x_rows), dtype=np.float64)
        d = self.prototypes.X.shape[1]
        if x_rows.shape[1] != d:
            raise ModelError(f"OnlineSegmenter: frames need {d} features, got {x_rows.shape[1]}")
        out = []
        for lo in range(0, x_rows.shape[0], self._chunk):
            out.append(self._step(x_rows[lo:lo + self._chunk]))
        committed = np.concatenate(out) if out else np.empty(0, dtype=SEGMENT_DTYPE)
        return committed, self._provisional()

    def flush(self):
        """Commit the best segmentation of the frames still pending (end of the stream)."""
        last = self.n_frames - 1
        if last < self.committed_end:
            return np.empty(0, dtype=SEGMENT_DTYPE)
        if self._obj[last - self._offset + 1] == _INF:
            raise ModelError(f"OnlineSegmenter: frames {self.committed_end}..{last} cannot end "
                             "a segment (stream shorter than min_length)")
        return self._commit(last, last)

    def _step(self, rows):
        self._compact(rows.shape[0])
        v0 = self.n_frames - self._offset
        self._diag[v0:v0 + rows.shape[0]] = _kernel_diag(self.prototypes.code,
                                                         self.prototypes.sigma, rows)
        self.prototypes._advance(rows, self._diag, self._offset, v0, self._Q, self._obj,
                                 self._head, self._lab)
        self.n_frames += rows.shape[0]
        last = self.n_frames - 1
        max_len = self.prototypes.max_length
        committed = []
        end = _coalesced_end(self._head, self._obj, self._offset, self._boundary - 1, last,
                             max_len)
        if end >= self._boundary:
            committed.append(self._commit(end, last))
        agreed = _agreed_end(self._head, self._lab, self._obj, self._offset, self._boundary - 1,
                             self.committed_end, last, max_len)
        limit = last - self.max_lag
        if (agreed > self.committed_end or limit >= self.committed_end) and \
                self._obj[last - self._offset + 1] < _INF:
            starts, clusters = _backtrack(self._head, self._lab, self._offset,
                                          self._boundary - 1, last)
            if agreed <= limit:  # frames older than max_lag still undecided: force a boundary
                anchor = last
                while self._head[anchor - self._offset] > limit:
                    anchor = self._head[anchor - self._offset] - 1
                self.forced_commits += 1
                self.forced_frames += anchor + 1 - max(agreed, self.committed_end)
                committed.append(self._commit(anchor, last))
                _prune_to(self._head, self._obj, self._offset, anchor, last, max_len)
            else:  # agreed frames up to the last change of cluster, or all of them when due
                upto = agreed
                if limit < self.committed_end:
                    change = starts[1:-1][clusters[1:] != clusters[:-1]]
                    change = change[change <= agreed]
                    upto = int(change[-1]) if change.size else self.committed_end
                if upto > self.committed_end:
                    committed.append(self._emit(np.append(np.minimum(starts[:-1], upto), upto),
                                                clusters, last))
        if last - self._boundary >= self.horizon and self._obj[last - self._offset + 1] < _INF:
            anchor = last
            while self._head[anchor - self._offset] > last - self.horizon:
                anchor = self._head[anchor - self._offset] - 1
            self.pruned += 1
            committed.append(self._commit(anchor, last))
            _prune_to(self._head, self._obj, self._offset, anchor, last, max_len)
        return np.concatenate(committed) if committed else np.empty(0, dtype=SEGMENT_DTYPE)

    def _commit(self, end, now):
        """Cut the programme at the segment boundary after ``end``; emit its frames not yet
        committed."""
        starts, clusters = _backtrack(self._head, self._lab, self._offset, self._boundary - 1,
                                      end)
        self._boundary = end + 1
        return self._emit(starts, clusters, now)

    def _emit(self, starts, clusters, now):
        """Rows of the parts of segments ``starts``/``clusters`` from ``committed_end`` on;
        ``committed_end`` moves to their end."""
        starts = np.maximum(starts, self.committed_end)
        keep = np.flatnonzero(starts[1:] > starts[:-1])
        if keep.size == 0:
            return np.empty(0, dtype=SEGMENT_DTYPE)
        self.committed_end = int(starts[keep[-1] + 1])
        return self.prototypes._rows(np.append(starts[keep], self.committed_end), clusters[keep],
                                     now)

    def _provisional(self):
        if self.committed_end >= self.n_frames:
            return None
        last = self.n_frames - 1
        u = last - self._offset
        if self._obj[u + 1] == _INF:
            return None
        starts = np.array([max(self._head[u], self.committed_end), last + 1])
        return self.prototypes._rows(starts, self._lab[u:u + 1], -1)[0]

    def _compact(self, n_new):
        """Drop buffered frames that neither the programme nor a pending backtrack still needs."""
        used = self.n_frames - self._offset
        if used + n_new <= self._head.shape[0]:
            return
        keep = min(self._boundary, self.n_frames - self.prototypes.max_length + 1)
        delta = keep - self._offset
        for buf in (self._diag, self._head, self._lab):
            buf[:used - delta] = buf[delta:used]
        self._obj[:used - delta + 1] = self._obj[delta:used + 1]
        self._offset = keep
