"""Sliding windows of features, built incrementally from per-hop partial sums.

Time is cut into hops ``[k * hop_s, (k + 1) * hop_s)`` of the stream's own clock. Each hop keeps
partial sums of its samples: per spatial field the count, the sum and the sum of squares of the value
minus a per-stream reference (the field's first value, so the sums stay small and the variance does
not cancel catastrophically); per temporal measure the count and the sum; and counts of samples,
valid samples and labels. A window is the sum of its ``window_s / hop_s`` hops, taken fresh when it
completes, so nothing drifts and the result depends only on the samples, never on how they were split
into blocks. The ring also holds hops whose eye events are still pending (a blink or saccade is only
known once it ends), which is why a window is emitted ``lag_s`` after its end.
"""

import csv
from dataclasses import dataclass

import numpy as np
from numba import njit

from ._config import _P_HOP_S, _P_LABEL_PURITY, _P_WINDOW_HOPS, _P_WINDOW_S
from .formats import SPATIAL_FIELDS

__all__ = ["FEATURE_NAMES", "MEASURES", "Windows"]

MEASURES = SPATIAL_FIELDS + (
    "saccade", "blink", "blink_frequency_hz", "blink_duration_s", "perclos",
)
"""The 15 per-sample measures of Table 5.1 (S0 §5.3.4), in feature order."""

FEATURE_NAMES = tuple(f"mean_{m}" for m in MEASURES) + tuple(f"sd_{m}" for m in SPATIAL_FIELDS)
"""The 25 window features (S0 §5.3.5): the mean of the 15 measures, then the standard deviation
(ddof=1) of the 10 spatial ones."""

N_SPATIAL = len(SPATIAL_FIELDS)
N_TEMPORAL = len(MEASURES) - N_SPATIAL
N_FEATURES = len(FEATURE_NAMES)
SACCADE, BLINK, BLINK_FREQUENCY, BLINK_DURATION, PERCLOS = range(N_TEMPORAL)

# Hop ring columns.
_H_ID = 0
_H_ACCEPTED = 1
_H_VALID = 2
_H_LABEL1 = 3
_H_LABEL0 = 4
_H_COUNT = 5                          # spatial counts
_H_SUM = _H_COUNT + N_SPATIAL         # spatial sums of (value - reference)
_H_SQUARES = _H_SUM + N_SPATIAL       # spatial sums of squares of (value - reference)
_H_T_COUNT = _H_SQUARES + N_SPATIAL   # temporal counts
_H_T_SUM = _H_T_COUNT + N_TEMPORAL    # temporal sums
_H_PENDING_SACCADE = _H_T_SUM + N_TEMPORAL   # samples of an open saccade candidate
_H_PENDING_BLINK = _H_PENDING_SACCADE + 1    # samples of an open blink candidate
_H_PENDING_BLINK_COUNT = _H_PENDING_BLINK + 1  # of which not yet counted (untracked samples)
_H_SIZE = _H_PENDING_BLINK_COUNT + 1

# Window state vector layout.
_W_STARTED = 0
_W_HOP = 1          # hop of the latest sample
_W_NEXT_END = 2     # end hop of the next window to emit
_W_REF_SET = 3      # N_SPATIAL flags
_W_REF = _W_REF_SET + N_SPATIAL
_W_SIZE = _W_REF + N_SPATIAL

# Output row layout: t_start, t_end, quality, label, then the features.
_O_FEATURES = 4
_O_SIZE = _O_FEATURES + N_FEATURES


@dataclass
class Windows:
    """Feature windows of one stream, in time order.

    Attributes
    ----------
    t_start, t_end : ndarray of shape (n_windows,)
        Window bounds in seconds of the stream clock, half-open ``[t_start, t_end)``.
    quality : ndarray of shape (n_windows,)
        Valid tracked samples over the samples expected (``window_s`` times the measured rate),
        clipped to [0, 1].
    label : ndarray of shape (n_windows,), dtype int8
        1 distracted, 0 attentive, -1 unknown or mixed (see ``PipelineConfig.label_purity``).
    X : ndarray of shape (n_windows, 25)
        Features in :data:`FEATURE_NAMES` order; NaN where a measure had no data in the window.
    """

    t_start: np.ndarray
    t_end: np.ndarray
    quality: np.ndarray
    label: np.ndarray
    X: np.ndarray

    def __len__(self):
        return len(self.t_end)

    @classmethod
    def empty(cls):
        """Windows with no rows."""
        return cls._from_rows(np.empty((0, _O_SIZE)))

    @classmethod
    def concat(cls, windows):
        """Concatenate a sequence of :class:`Windows` in order."""
        windows = list(windows)
        if not windows:
            return cls.empty()
        return cls(*(np.concatenate([getattr(w, name) for w in windows])
                     for name in ("t_start", "t_end", "quality", "label", "X")))

    @classmethod
    def _from_rows(cls, rows):
        return cls(rows[:, 0].copy(), rows[:, 1].copy(), rows[:, 2].copy(),
                   rows[:, 3].astype(np.int8), rows[:, _O_FEATURES:].copy())

    def write_csv(self, path):
        """Write ``t_start,t_end,quality,label`` and the 25 named features, one row per window."""
        with open(path, "w", newline="") as file:
            writer = csv.writer(file)
            writer.writerow(("t_start", "t_end", "quality", "label") + FEATURE_NAMES)
            for i in range(len(self)):
                writer.writerow([repr(float(self.t_start[i])), repr(float(self.t_end[i])),
                                 repr(float(self.quality[i])), int(self.label[i])]
                                + ["" if np.isnan(v) else repr(float(v)) for v in self.X[i]])


def _new_ring(n_hops):
    ring = np.empty((n_hops, _H_SIZE))
    _clear_ring(ring)
    return ring


@njit(cache=True)
def _clear_ring(ring):
    """Empty every hop of the ring (no hop held)."""
    ring[:, :] = 0.0
    ring[:, _H_ID] = -1.0


@njit(cache=True, inline="always")
def _slot(ring, hop):
    """Row of ``hop`` in the ring, or -1 when the ring no longer (or not yet) holds it."""
    row = int(hop) % ring.shape[0]
    return row if ring[row, _H_ID] == hop else -1


@njit(cache=True)
def _advance(ring, last_hop, hop):
    """Open the hops after ``last_hop`` up to ``hop``, clearing the rows they reuse."""
    first = max(last_hop + 1.0, hop - ring.shape[0] + 1.0)
    h = first
    while h <= hop:
        row = int(h) % ring.shape[0]
        ring[row, :] = 0.0
        ring[row, _H_ID] = h
        h += 1.0


@njit(cache=True)
def _settle(ring, first_hop, last_hop, pending, total, pending_count, count, accept):
    """Close a pending event over hops ``first_hop..last_hop``: add it to the sums, or drop it."""
    h = first_hop
    while h <= last_hop:
        row = _slot(ring, h)
        if row >= 0:
            if accept:
                ring[row, total] += ring[row, pending]
                if pending_count >= 0:
                    ring[row, count] += ring[row, pending_count]
            ring[row, pending] = 0.0
            if pending_count >= 0:
                ring[row, pending_count] = 0.0
        h += 1.0


@njit(cache=True, inline="always")
def _add_sample(ring, state, hop, x, valid, measures, label):
    """Add one accepted sample's spatial values, derived measures and label to its hop."""
    row = _slot(ring, hop)
    ring[row, _H_ACCEPTED] += 1.0
    if valid:
        ring[row, _H_VALID] += 1.0
    if label == 1:
        ring[row, _H_LABEL1] += 1.0
    elif label == 0:
        ring[row, _H_LABEL0] += 1.0
    for j in range(N_SPATIAL):
        v = x[1 + j]
        if not np.isnan(v):
            if state[_W_REF_SET + j] == 0.0:
                state[_W_REF_SET + j] = 1.0
                state[_W_REF + j] = v
            d = v - state[_W_REF + j]
            ring[row, _H_COUNT + j] += 1.0
            ring[row, _H_SUM + j] += d
            ring[row, _H_SQUARES + j] += d * d
    for m in range(BLINK_FREQUENCY, N_TEMPORAL):
        v = measures[m]
        if not np.isnan(v):
            ring[row, _H_T_COUNT + m] += 1.0
            ring[row, _H_T_SUM + m] += v


@njit(cache=True)
def _emit(ring, state, params, period, out):
    """Write the window ending at hop ``state[_W_NEXT_END]`` into ``out``; False if it is empty."""
    n_hops = int(params[_P_WINDOW_HOPS])
    end = state[_W_NEXT_END]
    sums = np.zeros(_H_SIZE)
    for i in range(n_hops):
        row = _slot(ring, end - n_hops + i)
        if row >= 0:
            for c in range(1, _H_SIZE):
                sums[c] += ring[row, c]
    if sums[_H_ACCEPTED] == 0.0:
        return False
    hop_s = params[_P_HOP_S]
    out[0] = (end - n_hops) * hop_s
    out[1] = end * hop_s
    expected = params[_P_WINDOW_S] / period if period > 0.0 else np.inf
    out[2] = min(1.0, sums[_H_VALID] / expected)
    n1 = sums[_H_LABEL1]
    n0 = sums[_H_LABEL0]
    purity = params[_P_LABEL_PURITY]
    out[3] = -1.0
    if n1 > n0 and n1 >= purity * (n1 + n0):
        out[3] = 1.0
    elif n0 > n1 and n0 >= purity * (n1 + n0):
        out[3] = 0.0
    for j in range(N_SPATIAL):
        n = sums[_H_COUNT + j]
        s = sums[_H_SUM + j]
        out[_O_FEATURES + j] = state[_W_REF + j] + s / n if n > 0.0 else np.nan
        if n > 1.0:
            var = (sums[_H_SQUARES + j] - s * s / n) / (n - 1.0)
            out[_O_FEATURES + N_SPATIAL + N_TEMPORAL + j] = np.sqrt(max(var, 0.0))
        else:
            out[_O_FEATURES + N_SPATIAL + N_TEMPORAL + j] = np.nan
    for m in range(N_TEMPORAL):
        n = sums[_H_T_COUNT + m]
        out[_O_FEATURES + N_SPATIAL + m] = sums[_H_T_SUM + m] / n if n > 0.0 else np.nan
    return True
