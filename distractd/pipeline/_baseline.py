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
  model's kernel;
- optionally (``gate``) a window enters the ring only while it looks attentive: no feature with a
  gate direction stands more than ``gate_z`` robust standard deviations beyond the ring in that
  direction (more track loss, more time off the road, a longer glance away, less percent road
  centre: :data:`GATE_DIRECTIONS`). A sustained distraction then stays out of the ring however
  long it lasts, instead of becoming the driver's normal after one memory; a lasting change that
  is not a distraction (a tracker that loses the eyes more from now on) is still taken in: a run
  of gated-out windows enters anyway once it has lasted ``gate_max_s``;
- optionally (``absolute``) some features are given as they are, unstandardised, once the baseline
  is ready (the glance features are already relative to the driver's own road centre, or
  fractions): they still enter the ring, which the gate judges them against.

The ring is updated *after* a window is standardised against it, so a window is judged against the
past only. Batch and stream share this one implementation: the batch result is the running
baseline fed a whole recording's windows at once.
"""

import numpy as np
from numba import njit

from .._errors import ConfigError
from .._validation import Interval, check_params

__all__ = ["RunningBaseline", "SCALE_FLOOR", "CLIP", "GATE_DIRECTIONS"]

SCALE_FLOOR = 1e-6
"""Smallest scale a feature is divided by, in its own units."""

CLIP = 8.0
"""Standardised values are clipped to [-CLIP, CLIP]."""

GATE_DIRECTIONS = {"glance_track_loss_fraction": 1, "glance_off_road_fraction": 1,
                   "glance_longest_away_s": 1, "glance_prc": -1}
"""The features the attentive gate judges a window by, and the direction (+1: higher, -1: lower)
in which a distraction moves them."""

_CONSTRAINTS = {
    "memory_s": Interval(0, None, closed="neither"),
    "spacing_s": Interval(0, None, closed="neither"),
    "warmup_s": Interval(0, None),
    "min_entries": Interval(2, None, integer=True),
    "gate_z": Interval(0, None, closed="neither"),
    "gate_max_s": Interval(0, None),
}


@njit(cache=True)
def _standardise(t_end, X, ring, count, head, state, fit, gate, absolute, spacing_s, min_entries,
                 warmup_s, gate_z, gate_max_s, clip, floor, out):
    """Standardise rows of ``X`` against the ring, then add the rows due to it that pass the gate.

    ``state = [time the next entry is due, time of the first entry (NaN: none), whether the ring
    changed since fit was computed, time the current run of gated-out windows began (NaN: none)]``;
    ``count[j]`` finite entries of feature j; ``head`` the next ring slot; ``fit[0, j], fit[1, j]``
    feature j's location and scale from the ring as it is (computed again only after the ring
    changes: once per ``spacing_s``, not per window). ``gate[j]`` is +1 (-1) where a standardised
    value above ``gate_z`` (below ``-gate_z``) keeps the window out of the ring, 0 where feature j
    does not vote; a run of gated-out windows enters anyway from ``gate_max_s`` after it began.
    ``absolute[j]`` passes feature j through unstandardised. Returns whether the last row has data
    and every feature with data in it is given.
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
        attentive = True
        for j in range(n_features):
            x = X[i, j]
            out[i, j] = np.nan
            if np.isnan(x) or not ready_time or count[j] < min_entries:
                continue
            z = min(max((x - fit[0, j]) / fit[1, j], -clip), clip)
            if gate[j] * z > gate_z:
                attentive = False
            out[i, j] = x if absolute[j] else z
        if t_end[i] < state[0]:
            continue
        if attentive:
            state[3] = np.nan
        elif np.isnan(state[3]):
            state[3] = t_end[i]
        if not attentive and t_end[i] - state[3] < gate_max_s:
            continue
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
    gate : array-like of shape (n_features,) or None, default=None
        Per feature +1, -1 or 0: a window whose standardised feature lies above ``gate_z`` (+1) or
        below ``-gate_z`` (-1) does not enter the ring; 0 (and ``None``: every feature) no vote.
    gate_z : float, default=2.0
        The gate's threshold, robust standard deviations.
    gate_max_s : float, default=300.0
        Window end time after which a run of gated-out windows enters the ring all the same.
    absolute : array-like of shape (n_features,) or None, default=None
        Per feature, whether it is given unstandardised (``None``: none is).

    Attributes
    ----------
    ready : bool
        Whether the last window standardised had every feature that had data ready.
    progress : float
        How far the warm-up is, 0..1: window end time since the first entry over ``warmup_s``
        (1 once :attr:`ready`; it can read 1 while not ready when a feature still lacks
        ``min_entries``). For the state message's calibration status.

    Examples
    --------
    >>> import numpy as np
    >>> baseline = RunningBaseline(1, memory_s=60.0, spacing_s=1.0, warmup_s=5.0)
    >>> t = np.arange(1.0, 11.0)
    >>> Z = baseline.update(t, (t % 2)[:, None] + 10.0)
    >>> bool(np.isnan(Z[4, 0])), round(float(Z[9, 0]), 2), baseline.ready
    (True, -1.8, True)
    """

    def __init__(self, n_features, memory_s=300.0, spacing_s=5.0, warmup_s=60.0, min_entries=6,
                 gate=None, gate_z=2.0, gate_max_s=300.0, absolute=None):
        check_params({"memory_s": memory_s, "spacing_s": spacing_s, "warmup_s": warmup_s,
                      "min_entries": min_entries, "gate_z": gate_z, "gate_max_s": gate_max_s},
                     _CONSTRAINTS, owner="baseline")
        n_slots = max(int(round(memory_s / spacing_s)), min_entries)
        self.n_features = n_features
        self.spacing_s = float(spacing_s)
        self.warmup_s = float(warmup_s)
        self.min_entries = int(min_entries)
        self.gate = _per_feature(gate, n_features, "gate", np.float64)
        self.gate_z = float(gate_z)
        self.gate_max_s = float(gate_max_s)
        self.absolute = _per_feature(absolute, n_features, "absolute", np.bool_)
        self.ring = np.full((n_slots, n_features), np.nan)
        self.count = np.zeros(n_features, dtype=np.int64)
        self.head = np.zeros(1, dtype=np.int64)
        self.state = np.array([-np.inf, np.nan, 1.0, np.nan])
        self.fit = np.full((2, n_features), np.nan)
        self.ready = False
        self.last_t_s = np.nan

    @property
    def progress(self):
        if self.ready:
            return 1.0
        elapsed_s = self.last_t_s - self.state[1]
        if not elapsed_s > 0.0:   # no entry yet (NaN), or none after the first
            return 0.0
        return min(elapsed_s / self.warmup_s, 1.0) if self.warmup_s > 0.0 else 1.0

    @classmethod
    def from_config(cls, config, feature_names):
        """The baseline a :class:`~distractd.pipeline.PipelineConfig` describes for windows with
        these feature names (the one place the ``baseline_*`` settings are read)."""
        gate = [GATE_DIRECTIONS.get(name, 0) if config.baseline_gate else 0
                for name in feature_names]
        absolute = [config.baseline_absolute_glances and name.startswith("glance_")
                    for name in feature_names]
        return cls(len(feature_names), config.baseline_memory_s, config.baseline_spacing_s,
                   config.baseline_warmup_s, gate=gate, gate_z=config.baseline_gate_z,
                   gate_max_s=config.baseline_gate_max_s, absolute=absolute)

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
                             self.gate, self.absolute, self.spacing_s, self.min_entries,
                             self.warmup_s, self.gate_z, self.gate_max_s, CLIP, SCALE_FLOOR, Z)
        if len(Z):
            self.ready = ready
            self.last_t_s = float(t_end[-1])
        return Z

    def reset(self):
        """Forget the stream's past (a tracker clock reset, a new driver)."""
        self.ring[:] = np.nan
        self.count[:] = 0
        self.head[:] = 0
        self.state[:] = (-np.inf, np.nan, 1.0, np.nan)
        self.fit[:] = np.nan
        self.ready = False
        self.last_t_s = np.nan


def _per_feature(values, n_features, name, dtype):
    """``values`` as one entry per feature (zeros for ``None``); a wrong length names itself."""
    if values is None:
        return np.zeros(n_features, dtype=dtype)
    values = np.asarray(values, dtype=dtype)
    if values.shape != (n_features,):
        raise ConfigError(f"baseline.{name} must have one entry per feature ({n_features}), got "
                          f"shape {values.shape}")
    return values
