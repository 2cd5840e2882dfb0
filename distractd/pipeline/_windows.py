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

from ._config import _SPATIAL, _record
from ._feature_names import FEATURE_NAMES, GLANCE_FEATURES, MEASURES, VEHICLE_FEATURES
from ._vehicle_measures import HOP_SUMS, add_hop_sums, window_features
from .formats import FIELDS, SPATIAL_FIELDS

__all__ = ["Windows", "feature_fields", "feature_min_rate_hz", "gaze_only_features"]

_SOURCES = {"saccade": ("gaze",), "blink": ("eyelid", "gaze"), "perclos": ("eyelid",),
            "glance": ("gaze",), "lane": ("lane_offset",), "steering": ("steering",),
            "speed": ("speed",), "pedal": ("accelerator", "brake")}
"""Field groups each derived measure (a feature name's first word after ``mean_``/``sd_``) is
computed from, any one sufficing: saccades from gaze velocity; blinks from the eyelid or, without
one, from track loss of the gaze; PERCLOS from the eyelid only; glances from gaze; the vehicle
measures from their signal (lane offset, steering, speed; the pedal change from either pedal)."""

_FLAG_SOURCES = {"saccade": ("saccade",), "blink": ("blink",)}
"""With ``use_tracker_flags`` the tracker's own event flags replace the detectors."""


def feature_fields(feature_names, use_tracker_flags=False):
    """The canonical fields each window feature is computed from, derived from its name.

    A derived measure (``mean_saccade``, ``mean_blink_frequency_hz``, ``glance_prc``, ...) needs one
    of the fields of the groups its first word names in :data:`_SOURCES`; any other feature
    ``mean_<m>`` / ``sd_<m>`` needs the group ``m``. A group ``g`` is every field named ``g`` or
    ``g_*``: ``head_x`` is itself, ``pupil`` is ``pupil_r`` and ``pupil_l``.

    Parameters
    ----------
    feature_names : sequence of str
        Window feature names (:data:`FEATURE_NAMES` or a model's subset).
    use_tracker_flags : bool, default=False
        The pipeline's ``use_tracker_flags``: saccades and blinks come from the ``saccade`` and
        ``blink`` fields.

    Returns
    -------
    list of ndarray of int
        Per feature, the indices into :data:`~distractd.pipeline.formats.FIELDS` of the fields any
        one of which makes it computable; empty for a name it cannot relate (never reported).
    """
    sources = {**_SOURCES, **_FLAG_SOURCES} if use_tracker_flags else _SOURCES
    needs = []
    for name in feature_names:
        measure = name.removeprefix("mean_").removeprefix("sd_")
        groups = sources.get(measure.split("_")[0], (measure,))
        needs.append(np.array([i for i, field in enumerate(FIELDS) if field != "t" and any(
            field == group or field.startswith(group + "_") for group in groups)], dtype=np.intp))
    return needs


def feature_min_rate_hz(feature_names, config):
    """The lowest sample rate, in Hz, at which each window feature has data, derived from its name.

    A derived measure whose first word ``w`` (after ``mean_``/``sd_``) has a ``w_min_rate_hz``
    setting in ``config`` (``saccade_min_rate_hz``, ``blink_min_rate_hz``) is NaN below that rate
    (the events cannot be resolved); every other feature has data at any rate (0). With
    ``use_tracker_flags`` the tracker's own flags give saccades and blinks at any rate.

    Parameters
    ----------
    feature_names : sequence of str
    config : PipelineConfig

    Returns
    -------
    ndarray of shape (n_features,)
    """
    rates = []
    for name in feature_names:
        measure = name.removeprefix("mean_").removeprefix("sd_").split("_")[0]
        flagged = config.use_tracker_flags and measure in _FLAG_SOURCES
        rates.append(0.0 if flagged else float(getattr(config, f"{measure}_min_rate_hz", 0.0)))
    return np.array(rates)


def gaze_only_features(feature_names, use_tracker_flags=False):
    """The features among ``feature_names`` that a gaze-only tracker (gaze angles and a
    confidence, as Pupil Core sends) can give: those a gaze field suffices for."""
    gaze = np.array([name.startswith("gaze_") for name in FIELDS])
    return [name for name, fields in zip(feature_names,
                                         feature_fields(feature_names, use_tracker_flags))
            if gaze[fields].any()]


N_SPATIAL = len(SPATIAL_FIELDS)
N_TEMPORAL = len(MEASURES) - N_SPATIAL
N_FEATURES = len(FEATURE_NAMES)
N_GLANCE_FEATURES = len(GLANCE_FEATURES)
N_VEHICLE_FEATURES = len(VEHICLE_FEATURES)
SACCADE, BLINK, BLINK_FREQUENCY, BLINK_DURATION, PERCLOS = range(N_TEMPORAL)

# A hop of the hop ring: its hop number (-1: none held), then its partial sums.
HOP = _record(
    "id", "accepted", "valid", "label1", "label0",
    ("count", (N_SPATIAL,)),     # spatial counts
    ("sum", (N_SPATIAL,)),       # spatial sums of (value - reference)
    ("squares", (N_SPATIAL,)),   # spatial sums of squares of (value - reference)
    ("t_count", (N_TEMPORAL,)),  # temporal counts
    ("t_sum", (N_TEMPORAL,)),    # temporal sums
    "pending_saccade",           # samples of an open saccade candidate
    "pending_blink",             # samples of an open blink candidate
    "pending_blink_count",       # of which not yet counted (untracked samples)
    # Glance sums (samples after the stream's first gaze value; times in s).
    "g_n",                       # samples
    "g_lost",                    # lost samples
    "g_tracked",                 # classified tracked samples
    "g_road",                    # of which on road
    "g_time_s",                  # observed time
    "g_away_s",                  # of which away (off road, mirror, instrument)
    "g_count",                   # glances counted
    # Not sums: the longest glance (max), then the glance state after the hop's last sample.
    "g_longest", "g_set", "g_on_road", "g_off_s", "g_buffer", "g_ready",
    # The fatigue state after the hop's last sample.
    "f_set", "f_available", "f_closed_s", "f_perclos", "f_blink_s", "f_drowsy",
    # The vehicle channel's sums (_vehicle_measures.HOP_SUMS).
    *HOP_SUMS,
)
_EMPTY_HOP = np.zeros(1, HOP)   # copied to clear a hop (a global array: numba never frees it)

# Window state.
STATE = _record(
    "started",
    "hop",                      # hop of the latest sample
    "next_end",                 # end hop of the next window to emit
    ("ref_set", (N_SPATIAL,)),  # 1 once a spatial field's reference is set
    ("ref", (N_SPATIAL,)),      # the reference: the field's first value
)
_ZEROS = np.zeros(1, STATE)   # copied to clear a state (a global array, so numba never frees it)

# One emitted window: bounds, quality, label, the features, then the glance, fatigue and car state
# at its end (the :class:`Windows` columns of the same names), the three flags last and together
# (one comparison turns them into booleans).
_FLAGS = ("road_ready", "fatigue_available", "drowsy")   # 1.0 / 0.0 in a row, bool in Windows
WINDOW = _record(
    "t_start", "t_end", "quality", "label", ("X", (N_FEATURES,)),
    "on_road", "off_road_s", "buffer_s", "eyes_closed_s", "perclos", "blink_duration_s",
    "input_age_s", *_FLAGS,
)
_GLANCE_X = len(MEASURES) + N_SPATIAL   # the glance features' first column in X
_VEHICLE_X = _GLANCE_X + N_GLANCE_FEATURES   # the vehicle features' first column
_FLAT_WINDOW = np.dtype((np.float64, WINDOW.itemsize // 8))   # a window row as its floats
_COLUMN = {name: WINDOW.fields[name][1] // 8 for name in WINDOW.names}   # first float of each
_FEATURES_FIRST = _COLUMN["X"]
_LABEL_COLUMN = _COLUMN["label"]
_FLAGS_FIRST = _COLUMN[_FLAGS[0]]
_PLAIN_COLUMNS = tuple((name, first) for name, first in _COLUMN.items()
                       if name not in _FLAGS + ("X", "label"))


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
    X : ndarray of shape (n_windows, 49)
        Features in :data:`FEATURE_NAMES` order (the 25 of S0 §5.3.5, the 5 glance features,
        then the 19 vehicle features); NaN where a measure had no data in the window.
    on_road : ndarray of shape (n_windows,)
        Glance state after the window's last sample: 1.0 on road, 0.0 away, NaN unknown (track
        loss, road centre warming up, glances off).
    off_road_s : ndarray of shape (n_windows,)
        The current glance away at the window's end, seconds (0 on road; NaN unknown).
    buffer_s : ndarray of shape (n_windows,)
        The AttenD attention buffer at the window's end, seconds (NaN unknown).
    road_ready : ndarray of shape (n_windows,), dtype bool
        The road centre was learned at the window's end (False: warming up).
    fatigue_available : ndarray of shape (n_windows,), dtype bool
        The fatigue state is known at the window's end: the stream has an eyelid signal, the
        eyes are visible to the tracker and the open-eye level is learned (False with fatigue
        off).
    eyes_closed_s : ndarray of shape (n_windows,)
        The current eye closure at the window's end, seconds (0 open; NaN unavailable).
    perclos : ndarray of shape (n_windows,)
        P80 PERCLOS over ``fatigue_perclos_window_s`` at the window's end, share of time (NaN
        while warming up or with the eyes mostly hidden).
    blink_duration_s : ndarray of shape (n_windows,)
        Mean blink duration over the same span, seconds (NaN: no blink).
    drowsy : ndarray of shape (n_windows,), dtype bool
        A drowsiness alert was raised and PERCLOS has not recovered since.
    input_age_s : ndarray of shape (n_windows,)
        Seconds from the driver's last steering or pedal input (the vehicle channel:
        ``VehicleSettings.input_*``) to the window's end; NaN without one on this clock, or
        without the car in the window's hops.
    alerts : ndarray of shape (n_windows,), dtype object
        Per window, the tuple of glance :class:`~distractd.pipeline.Alert` and
        :class:`~distractd.pipeline.FatigueAlert` raised since the previous window was emitted
        (in time order; an alert raised up to ``lag_s`` after a window's end rides with that
        window).
    """

    t_start: np.ndarray
    t_end: np.ndarray
    quality: np.ndarray
    label: np.ndarray
    X: np.ndarray
    on_road: np.ndarray
    off_road_s: np.ndarray
    buffer_s: np.ndarray
    road_ready: np.ndarray
    fatigue_available: np.ndarray
    eyes_closed_s: np.ndarray
    perclos: np.ndarray
    blink_duration_s: np.ndarray
    drowsy: np.ndarray
    input_age_s: np.ndarray
    alerts: np.ndarray

    _COLUMNS = ("t_start", "t_end", "quality", "label", "X", "on_road", "off_road_s", "buffer_s",
                "road_ready", "fatigue_available", "eyes_closed_s", "perclos", "blink_duration_s",
                "drowsy", "input_age_s", "alerts")

    def __len__(self):
        return len(self.t_end)

    @classmethod
    def empty(cls):
        """Windows with no rows."""
        return cls._from_rows(np.empty(0, WINDOW))

    @classmethod
    def concat(cls, windows):
        """Concatenate a sequence of :class:`Windows` in order."""
        windows = list(windows)
        if not windows:
            return cls.empty()
        return cls(*(np.concatenate([getattr(w, name) for w in windows])
                     for name in cls._COLUMNS))

    @classmethod
    def _from_rows(cls, rows, alerts=None):
        """Windows of ``rows`` (:data:`WINDOW` records)."""
        if alerts is None:
            alerts = np.empty(len(rows), dtype=object)
            for i in range(len(rows)):
                alerts[i] = ()
        columns = np.ascontiguousarray(rows.view(_FLAT_WINDOW).T)   # one copy; a column a row
        named = {name: columns[first] for name, first in _PLAIN_COLUMNS}
        named.update(zip(_FLAGS, columns[_FLAGS_FIRST:_FLAGS_FIRST + len(_FLAGS)] == 1.0))
        return cls(**named, label=columns[_LABEL_COLUMN].astype(np.int8),
                   X=columns[_FEATURES_FIRST:_FEATURES_FIRST + N_FEATURES].T.copy(), alerts=alerts)

    def __getitem__(self, rows):
        """The windows selected by ``rows`` (a slice, index array or boolean mask)."""
        return type(self)(*(getattr(self, name)[rows] for name in self._COLUMNS))

    def alert_list(self):
        """``(time_s, kind)`` of every alert (glance and fatigue) the windows carry, in order."""
        return [(alert.t, alert.kind) for group in self.alerts for alert in group]

    def write_csv(self, path):
        """Write ``t_start,t_end,quality,label`` and the named features, one row per window."""
        with open(path, "w", newline="") as file:
            writer = csv.writer(file)
            writer.writerow(("t_start", "t_end", "quality", "label") + FEATURE_NAMES)
            for i in range(len(self)):
                writer.writerow([repr(float(self.t_start[i])), repr(float(self.t_end[i])),
                                 repr(float(self.quality[i])), int(self.label[i])]
                                + ["" if np.isnan(v) else repr(float(v)) for v in self.X[i]])


def _new_ring(n_hops):
    ring = np.empty(n_hops, HOP)
    _clear_ring(ring)
    return ring


@njit(cache=True)
def _clear_ring(ring):
    """Empty every hop of the ring (no hop held)."""
    for row in range(ring.shape[0]):
        ring[row] = _EMPTY_HOP[0]
        ring[row].id = -1.0


@njit(cache=True, inline="always")
def _slot(ring, hop):
    """Row of ``hop`` in the ring, or -1 when the ring no longer (or not yet) holds it."""
    row = int(hop) % ring.shape[0]
    return row if ring[row].id == hop else -1


@njit(cache=True)
def _advance(ring, last_hop, hop):
    """Open the hops after ``last_hop`` up to ``hop``, clearing the rows they reuse."""
    first = max(last_hop + 1.0, hop - ring.shape[0] + 1.0)
    h = first
    while h <= hop:
        row = int(h) % ring.shape[0]
        ring[row] = _EMPTY_HOP[0]
        ring[row].id = h
        h += 1.0


@njit(cache=True)
def _settle(ring, first_hop, last_hop, kind, accept):
    """Close a pending event of ``kind`` (:data:`SACCADE` or :data:`BLINK`) over hops
    ``first_hop..last_hop``: add it to the sums, or drop it."""
    h = first_hop
    while h <= last_hop:
        row = _slot(ring, h)
        if row >= 0:
            slot = ring[row]
            if kind == SACCADE:
                if accept:
                    slot.t_sum[SACCADE] += slot.pending_saccade
                slot.pending_saccade = 0.0
            else:
                if accept:
                    slot.t_sum[BLINK] += slot.pending_blink
                    slot.t_count[BLINK] += slot.pending_blink_count
                slot.pending_blink = 0.0
                slot.pending_blink_count = 0.0
        h += 1.0


@njit(cache=True, inline="always")
def _add_sample(ring, state, hop, x, valid, measures, label):
    """Add one accepted sample's spatial values, derived measures and label to its hop."""
    row = _slot(ring, hop)
    ring[row].accepted += 1.0
    if valid:
        ring[row].valid += 1.0
    if label == 1:
        ring[row].label1 += 1.0
    elif label == 0:
        ring[row].label0 += 1.0
    for j in range(N_SPATIAL):
        v = x[_SPATIAL[j]]
        if not np.isnan(v):
            if state.ref_set[j] == 0.0:
                state.ref_set[j] = 1.0
                state.ref[j] = v
            d = v - state.ref[j]
            ring[row].count[j] += 1.0
            ring[row].sum[j] += d
            ring[row].squares[j] += d * d
    for m in range(BLINK_FREQUENCY, N_TEMPORAL):
        v = measures[m]
        if not np.isnan(v):
            ring[row].t_count[m] += 1.0
            ring[row].t_sum[m] += v


@njit(cache=True)
def _emit(ring, state, params, period, total, out):
    """Write the window ending at hop ``state.next_end`` into ``out``; False if it is empty.
    ``total`` (a one-record :data:`HOP` array) receives the window's sums."""
    n_hops = int(params.window_hops)
    end = state.next_end
    total[0] = _EMPTY_HOP[0]
    sums = total[0]
    for i in range(n_hops):
        row = _slot(ring, end - n_hops + i)
        if row >= 0:
            _add_hop(sums, ring[row])
    if sums.accepted == 0.0:
        return False
    hop_s = params.hop_s
    out.t_start = (end - n_hops) * hop_s
    out.t_end = end * hop_s
    expected = params.window_s / period if period > 0.0 else np.inf
    out.quality = min(1.0, sums.valid / expected)
    n1 = sums.label1
    n0 = sums.label0
    purity = params.label_purity
    out.label = -1.0
    if n1 > n0 and n1 >= purity * (n1 + n0):
        out.label = 1.0
    elif n0 > n1 and n0 >= purity * (n1 + n0):
        out.label = 0.0
    x = out.X
    for j in range(N_SPATIAL):
        n = sums.count[j]
        s = sums.sum[j]
        x[j] = state.ref[j] + s / n if n > 0.0 else np.nan
        if n > 1.0:
            var = (sums.squares[j] - s * s / n) / (n - 1.0)
            x[N_SPATIAL + N_TEMPORAL + j] = np.sqrt(max(var, 0.0))
        else:
            x[N_SPATIAL + N_TEMPORAL + j] = np.nan
    for m in range(N_TEMPORAL):
        n = sums.t_count[m]
        x[N_SPATIAL + m] = sums.t_sum[m] / n if n > 0.0 else np.nan
    _emit_glances(ring, end, n_hops, params, sums, out)
    _emit_fatigue(ring, end, n_hops, out)
    _emit_vehicle(ring, end, n_hops, sums, out)
    return True


@njit(cache=True, inline="always")
def _emit_vehicle(ring, end, n_hops, sums, out):
    """The vehicle features and the driver's last input of the window ending at hop ``end``
    (NaN, quickly, in a window without the car)."""
    out.input_age_s = np.nan
    if sums.v_samples == 0.0:
        for f in range(N_VEHICLE_FEATURES):
            out.X[_VEHICLE_X + f] = np.nan
        return
    window_features(sums, out.X, _VEHICLE_X)
    for i in range(n_hops):   # the driver's last input, from the latest hop with the car
        row = _slot(ring, end - 1 - i)
        if row >= 0 and ring[row].v_samples > 0.0:
            out.input_age_s = out.t_end - ring[row].v_input_t
            break


@njit(cache=True, inline="always")
def _add_hop(sums, hop):
    """Add a hop's partial sums (not its pending samples, maxima or glance state) to ``sums``,
    its vehicle sums included."""
    sums.accepted += hop.accepted
    sums.valid += hop.valid
    sums.label1 += hop.label1
    sums.label0 += hop.label0
    for j in range(N_SPATIAL):
        sums.count[j] += hop.count[j]
        sums.sum[j] += hop.sum[j]
        sums.squares[j] += hop.squares[j]
    for m in range(N_TEMPORAL):
        sums.t_count[m] += hop.t_count[m]
        sums.t_sum[m] += hop.t_sum[m]
    sums.g_n += hop.g_n
    sums.g_lost += hop.g_lost
    sums.g_tracked += hop.g_tracked
    sums.g_road += hop.g_road
    sums.g_time_s += hop.g_time_s
    sums.g_away_s += hop.g_away_s
    sums.g_count += hop.g_count
    if hop.v_samples > 0.0:
        add_hop_sums(sums, hop)


@njit(cache=True, inline="always")
def _emit_glances(ring, end, n_hops, params, sums, out):
    """The glance features and the glance state at the end of the window ending at hop ``end``."""
    x = out.X
    for f in range(N_GLANCE_FEATURES):
        x[_GLANCE_X + f] = np.nan
    out.on_road = out.off_road_s = out.buffer_s = np.nan
    out.road_ready = 0.0
    n = sums.g_n
    if n > 0.0:
        longest = 0.0
        for i in range(n_hops):
            row = _slot(ring, end - n_hops + i)
            if row >= 0:
                longest = max(longest, ring[row].g_longest)
        tracked = sums.g_tracked
        x[_GLANCE_X] = sums.g_road / tracked if tracked > 0.0 else np.nan
        time_s = sums.g_time_s
        x[_GLANCE_X + 1] = sums.g_away_s / time_s if time_s > 0.0 else np.nan
        x[_GLANCE_X + 2] = longest
        x[_GLANCE_X + 3] = sums.g_count / params.glance_window_min
        x[_GLANCE_X + 4] = sums.g_lost / n
    for i in range(n_hops):
        row = _slot(ring, end - 1 - i)
        if row >= 0 and ring[row].g_set == 1.0:
            out.on_road = ring[row].g_on_road
            out.off_road_s = ring[row].g_off_s
            out.buffer_s = ring[row].g_buffer
            out.road_ready = ring[row].g_ready
            break


@njit(cache=True, inline="always")
def _emit_fatigue(ring, end, n_hops, out):
    """The fatigue state after the last sample of the window ending at hop ``end``."""
    out.fatigue_available = 0.0
    out.eyes_closed_s = out.perclos = out.blink_duration_s = np.nan
    out.drowsy = 0.0
    for i in range(n_hops):
        row = _slot(ring, end - 1 - i)
        if row >= 0 and ring[row].f_set == 1.0:
            hop = ring[row]
            out.fatigue_available = hop.f_available
            out.eyes_closed_s = hop.f_closed_s
            out.perclos = hop.f_perclos
            out.blink_duration_s = hop.f_blink_s
            out.drowsy = hop.f_drowsy
            break
