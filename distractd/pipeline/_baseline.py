"""Per-stream baselines: each window feature judged against the driver's own recent past.

A detector trained on many drivers cannot use raw features: posture, calibration, eyelid aperture
and road differ more between drivers (and drives) than distraction changes them. Real driver
monitors learn each driver's neutral state online (openpilot's head-pose model is ready after about
a minute and forgets over minutes) and judge each moment against it. :class:`RunningBaseline` does
this for every window feature, causally and without labels:

- every ``spacing_s`` seconds of window end time one window's features enter a ring of the last
  ``memory_s / spacing_s`` entries (5 min at 5 s spacing: 60 entries, a few KB per stream; the
  pipeline's ``baseline_memory_s`` is 3 min);
- each window is standardised as ``(x - location) / scale``, where ``location`` is the median of
  the ring and ``scale`` the larger of 1.4826 × the median absolute deviation and 1.2533 × the mean
  absolute deviation from the median (both equal the standard deviation for Gaussian data; the
  second keeps a feature that is constant most of the time, such as track loss, from dividing by
  zero), with a floor of :data:`SCALE_FLOOR`;
- a feature is ready once ``warmup_s`` of window end time has entered its ring with at least
  ``min_entries`` finite values; before that its standardised value is NaN, and
  :attr:`RunningBaseline.ready` is False until every feature with data is ready (published as the
  state's ``"baseline": "warming"``);
- a feature missing in a window (NaN) stays NaN and does not enter the ring;
- standardised values are clipped to ±:data:`CLIP` so a single wild window cannot dominate a
  model's kernel.

The ring is updated *after* a window is standardised against it, so a window is judged against the
past only. Batch and stream share this one implementation: the batch result is the running
baseline fed a whole recording's windows at once.
"""

import numpy as np
from numba import njit

from .._validation import Interval, check_params

__all__ = ["RunningBaseline", "SCALE_FLOOR", "CLIP"]

SCALE_FLOOR = 1e-6
"""Smallest scale a feature is divided by, in its own units."""

CLIP = 8.0
"""Standardised values are clipped to [-CLIP, CLIP]."""

_CONSTRAINTS = {
    "memory_s": Interval(0, None, closed="neither"),
    "spacing_s": Interval(0, None, closed="neither"),
    "warmup_s": Interval(0, None),
    "min_entries": Interval(2, None, integer=True),
}


@njit(cache=True)
def _standardise(t_end, X, ring, count, head, state, fit, spacing_s, min_entries, warmup_s,
                 clip, floor, out):
    """Standardise rows of ``X`` against the ring, then add the rows due to it.

    ``state = [time the next entry is due, time of the first entry (NaN: none), whether the ring
    changed since fit was computed]``; ``count[j]`` finite entries of feature j; ``head`` the next
    ring slot; ``fit[0, j], fit[1, j]`` feature j's location and scale from the ring as it is
    (computed again only after the ring changes: once per ``spacing_s``, not per window). Returns
    whether the last row has data and every feature with data in it is standardised.
    """
    n_slots, n_features = ring.shape
    values = np.empty(n_slots)
    for i in range(X.shape[0]):
        ready_time = not np.isnan(state[1]) and t_end[i] - state[1] >= warmup_s
        if ready_time and state[2] != 0.0:
            for j in range(n_features):
                if count[j] < min_entries:
                    continue
                m = 0
                for k in range(n_slots):
                    if not np.isnan(ring[k, j]):
                        values[m] = ring[k, j]
                        m += 1
                location = np.median(values[:m])
                mad = np.median(np.abs(values[:m] - location))
                mean_ad = np.mean(np.abs(values[:m] - location))
                fit[0, j] = location
                fit[1, j] = max(1.4826 * mad, 1.2533 * mean_ad, floor)
            state[2] = 0.0
        for j in range(n_features):
            x = X[i, j]
            out[i, j] = np.nan
            if np.isnan(x) or not ready_time or count[j] < min_entries:
                continue
            z = (x - fit[0, j]) / fit[1, j]
            out[i, j] = min(max(z, -clip), clip)
        if t_end[i] >= state[0]:
            slot = head[0]
            for j in range(n_features):
                if not np.isnan(ring[slot, j]):
                    count[j] -= 1
                ring[slot, j] = X[i, j]
                if not np.isnan(X[i, j]):
                    count[j] += 1
            head[0] = (slot + 1) % n_slots
            if np.isnan(state[1]):
                state[1] = t_end[i]
            state[0] = t_end[i] + spacing_s
            state[2] = 1.0
    last = X.shape[0] - 1
    has_data = False
    for j in range(n_features if last >= 0 else 0):
        if not np.isnan(X[last, j]):
            has_data = True
            if np.isnan(out[last, j]):
                return False
    return has_data


class RunningBaseline:
    """Causal, robust, per-feature standardisation of one stream's windows.

    Parameters
    ----------
    n_features : int
        Columns of the feature rows.
    memory_s : float, default=300.0
        How far back the baseline looks, in seconds of window end time (the pipeline passes its
        ``baseline_memory_s``).
    spacing_s : float, default=5.0
        One window enters the baseline every ``spacing_s`` seconds.
    warmup_s : float, default=60.0
        Window end time, after the first entry, before any standardised value is given.
    min_entries : int, default=6
        Finite entries a feature needs before it is standardised.

    Attributes
    ----------
    ready : bool
        Whether the last window standardised had every feature that had data ready.

    Examples
    --------
    >>> import numpy as np
    >>> baseline = RunningBaseline(1, memory_s=60.0, spacing_s=1.0, warmup_s=5.0)
    >>> t = np.arange(1.0, 11.0)
    >>> Z = baseline.update(t, (t % 2)[:, None] + 10.0)
    >>> bool(np.isnan(Z[4, 0])), round(float(Z[9, 0]), 2), baseline.ready
    (True, -1.8, True)
    """

    def __init__(self, n_features, memory_s=300.0, spacing_s=5.0, warmup_s=60.0, min_entries=6):
        check_params({"memory_s": memory_s, "spacing_s": spacing_s, "warmup_s": warmup_s,
                      "min_entries": min_entries}, _CONSTRAINTS, owner="baseline")
        n_slots = max(int(round(memory_s / spacing_s)), min_entries)
        self.n_features = n_features
        self.spacing_s = float(spacing_s)
        self.warmup_s = float(warmup_s)
        self.min_entries = int(min_entries)
        self.ring = np.full((n_slots, n_features), np.nan)
        self.count = np.zeros(n_features, dtype=np.int64)
        self.head = np.zeros(1, dtype=np.int64)
        self.state = np.array([-np.inf, np.nan, 1.0])
        self.fit = np.full((2, n_features), np.nan)
        self.ready = False

    def update(self, t_end, X):
        """Standardise a block of windows (in time order); return the standardised rows.

        Parameters
        ----------
        t_end : array-like of shape (n_windows,)
            Window end times in seconds, increasing across calls.
        X : array-like of shape (n_windows, n_features)
            Raw feature rows, NaN where a feature had no data.

        Returns
        -------
        Z : ndarray of shape (n_windows, n_features)
            NaN where the feature is missing or its baseline is not ready.
        """
        t_end = np.ascontiguousarray(t_end, dtype=np.float64)
        X = np.ascontiguousarray(X, dtype=np.float64).reshape(len(t_end), self.n_features)
        Z = np.empty_like(X)
        ready = _standardise(t_end, X, self.ring, self.count, self.head, self.state, self.fit,
                             self.spacing_s, self.min_entries, self.warmup_s, CLIP, SCALE_FLOOR, Z)
        if len(Z):
            self.ready = ready
        return Z

    def reset(self):
        """Forget the stream's past (a tracker clock reset, a new driver)."""
        self.ring[:] = np.nan
        self.count[:] = 0
        self.head[:] = 0
        self.state[:] = (-np.inf, np.nan, 1.0)
        self.fit[:] = np.nan
        self.ready = False
