"""The per-stream processor and its two batch drivers.

:class:`StreamProcessor` runs validation, eye events, derived measures and windows over each block
it is fed, in one compiled pass per block, and returns the windows the block completed.
:func:`extract_features` and :func:`detect_events` feed a whole recording to a fresh processor: the
batch results are the streaming results, whatever the block sizes (DESIGN §4.4).

The module is over 450 lines because the compiled driver loop (:func:`_run`) calls every stage's
kernel in one pass and the two batch drivers (features, events) share it.
"""

import csv
import math
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
from numba import njit

from .._errors import SchemaError
from . import _events, _fatigue, _glances, _measures, _validate, _windows
from ._baseline import RunningBaseline
from ._config import _TIME, PipelineConfig, _params
from ._events import (
    _EV_EPOCH, EVENT_KINDS, _blink_step, _end_fixation, _fixation_step, _saccade_step,
)
from ._fatigue import (
    _F_MAX_ROWS, _F_SIZE, _F_WINDOW, FatigueAlert, FatigueChannel, FatigueTrace, _aperture,
    _facing_forward, _fatigue_step,
)
from ._fatigue import _alerts_from_rows as _fatigue_alerts_from_rows
from ._feature_names import FEATURE_NAMES
from ._glances import (
    _A_MAX_ROWS, _A_SIZE, _A_WINDOW, Alert, GlanceChannel, GlanceTrace, _alerts_from_rows,
    _glance_step,
)
from .formats import N_FIELDS
from ._validate import (
    _B_INDEX, _B_LABEL, ORDER_ACCEPT, ORDER_RESET, REJECTED, SAMPLE_REJECT_REASONS, TRACK_LOSS,
    _no_gaze, _order, _release, _validate_row,
)
from ._windows import (
    _O_SIZE, BLINK, N_TEMPORAL, SACCADE, Windows, _add_fatigue, _add_glance, _add_sample,
    _emit, _slot,
)

__all__ = ["StreamProcessor", "extract_features", "detect_events", "Events", "detect_glances",
           "detect_fatigue"]

# Per-row outputs: status code, gaze speed (rad/s), saccade status, blink status, clock epoch,
# glance class, glance away so far (s), AttenD buffer (s), road centre yaw and pitch (rad), then
# the fatigue outputs (available, eyes closed so far, PERCLOS, blink duration, drowsy).
(_R_STATUS, _R_VELOCITY, _R_SACCADE, _R_BLINK, _R_EPOCH, _R_GLANCE, _R_OFF_S, _R_BUFFER,
 _R_ROAD_YAW, _R_ROAD_PITCH, _R_FATIGUE) = range(11)
_R_SIZE = _R_FATIGUE + 5
_R_HELD = -1.0   # status of a sample still held back (none is after the end of the stream)
_CHUNK = 4096    # rows per output buffer at most
_FLUSH_PERIODS = 1.5   # the last hop is complete when the next sample is due within this

_NO_LABELS = np.empty(0, dtype=np.int8)
_NO_SAMPLES = np.empty((0, N_FIELDS))
_FLOAT64 = np.dtype(np.float64)
_NO_ROWS = np.empty((0, _R_SIZE))   # also stands for "no event buffer" (the kernel skips both)


_NO_WINDOWS = Windows.empty()   # shared: arrays of size 0 cannot be changed

_StreamState = namedtuple("_StreamState", (
    "params", "validation", "held", "events", "windows", "ring", "hop_sums", "measures",
    "measure_ring", "glances", "glance_hist", "glance_ring", "glance_out", "fatigue",
    "fatigue_ring", "closures", "fatigue_out"))
"""One stream's kernel state, in the order :func:`_run` unpacks it: one-record arrays (the
parameters, and the validation, event, window, measure and glance states: :data:`PARAMS`,
``_validate.STATE``, ...), the held-sample buffer, the hop ring and a hop record for a window's
sums (``_windows.HOP``), the measure ring, the glance histogram and glance ring, the glance
channel's per-sample outputs, and the fatigue channel's state, PERCLOS ring, closure ring and
per-sample outputs. :func:`_run` takes it as a plain
tuple: numba reads a plain tuple of arrays about as fast as separate arguments, a named one about
10 us slower per call."""


class StreamProcessor:
    """Validation, eye events, derived measures and feature windows of one stream.

    Feed blocks of samples in arrival order with :meth:`update`; each call returns the windows
    that the block completed. A window ``[t_start, t_end)`` completes once a sample at or after
    ``t_end + config.lag_s`` arrives (the eye events that touch it are settled by then). At the end
    of the stream, :meth:`flush` returns the windows the data so far can complete. Windows with no
    accepted sample (inside a long gap) are skipped. A clock jump or reset is handled as
    :mod:`~distractd.pipeline._validate` describes: a lone future sample is dropped (``t_jump``);
    after a clock reset the windows and derived measures start afresh on the new clock (the old
    clock's windows are flushed first). Per-stream memory is about 64 KB: 34 KB for validation,
    events, measures and windows, 24 KB for the glance channel's road-centre histogram and hop
    sums, 6 KB for the fatigue channel's PERCLOS bins and closures.

    The glance channel (``config.glances``) runs per sample: each window carries the 5 glance
    features in ``X``, the glance state at its end and the alerts raised since the previous
    window (see :class:`Windows`); :attr:`glances` holds the channel's state. The fatigue
    channel (``config.fatigue``) runs per sample after it: each window carries the fatigue state
    at its end and the fatigue alerts with the glance alerts; :attr:`fatigue` holds its state. With
    ``config.baseline`` the features of every window are standardised against the stream's own
    running baseline (:attr:`baseline`, built by :meth:`RunningBaseline.from_config`: by default
    the glance features are given as they are) before they are returned; the baseline runs on
    across a clock reset (the driver is the same).

    Parameters
    ----------
    config : PipelineConfig, default=None
        Settings; ``None`` means ``PipelineConfig()``.

    Attributes
    ----------
    rejected : dict
        Count per reason of :data:`SAMPLE_REJECT_REASONS`.
    rate_hz : float
        Measured sample rate in Hz (NaN before two samples).
    n_samples : int
        Samples received, rejected ones included.
    glances : GlanceChannel
        The stream's glance channel (road centre, readiness).
    fatigue : FatigueChannel
        The stream's fatigue channel (open-eye level).
    baseline : RunningBaseline or None
        The stream's feature baseline when ``config.baseline`` is on.

    Examples
    --------
    >>> import numpy as np
    >>> from distractd.pipeline import FEATURE_NAMES, FIELD_INDEX, StreamProcessor, empty_block
    >>> block = empty_block(1300)
    >>> block[:, 0] = np.arange(1300) / 60.0
    >>> block[:, FIELD_INDEX["gaze_r_yaw"]] = 0.1
    >>> block[:, FIELD_INDEX["gaze_r_pitch"]] = 0.0
    >>> processor = StreamProcessor()
    >>> windows = processor.update(block)
    >>> len(windows), float(windows.t_end[0]), round(processor.rate_hz, 6)
    (23, 10.0, 60.0)
    >>> windows.X.shape, float(windows.X[0, FEATURE_NAMES.index("glance_prc")])
    ((23, 30), 1.0)
    >>> [float(t) for t in processor.flush().t_end]
    [21.5]
    """

    def __init__(self, config=None):
        if config is None:
            config = PipelineConfig()
        if not isinstance(config, PipelineConfig):
            raise TypeError(f"config must be a PipelineConfig or None, got {type(config).__name__}")
        self.config = config
        self.n_samples = 0
        params = _params(config)
        self._margin = int(params["ring_hops"][0])
        self.glances = g = GlanceChannel(config)
        self.fatigue = f = FatigueChannel(config)
        self._state = _StreamState(
            params=params, validation=_validate._new_state(), held=_validate._new_buffer(),
            events=_events._new_state(), windows=np.zeros(1, _windows.STATE),
            ring=_windows._new_ring(self._margin), hop_sums=np.zeros(1, _windows.HOP),
            measures=_measures._new_state(),
            measure_ring=_measures._new_ring(int(params["measure_hops"][0])), glances=g._state,
            glance_hist=g._hist, glance_ring=g._ring, glance_out=g._out, fatigue=f._state,
            fatigue_ring=f._ring, closures=f._closures, fatigue_out=f._out)
        self._kernel_state = tuple(self._state)
        self._pending_alerts = []
        self.baseline = (RunningBaseline.from_config(config, FEATURE_NAMES) if config.baseline
                         else None)

    @property
    def rejected(self):
        counts = self._state.validation["counts"][0]
        return {reason: int(n) for reason, n in zip(SAMPLE_REJECT_REASONS, counts)}

    @property
    def rate_hz(self):
        period = self._state.validation["period"][0]
        return float(1.0 / period) if period > 0.0 else math.nan

    def update(self, block, labels=None):
        """Consume a block of samples; return the windows it completed.

        Parameters
        ----------
        block : ndarray of shape (n_samples, N_FIELDS) or (N_FIELDS,)
            Canonical samples in arrival order (see :data:`FIELDS`); bad values are counted in
            :attr:`rejected`, never raised.
        labels : array-like of shape (n_samples,), default=None
            Per-sample labels (1 distracted, 0 attentive, -1 unknown); ``None`` means unknown.

        Returns
        -------
        Windows
        """
        return self._feed(block, labels, with_events=False, final=False)[0]

    def flush(self):
        """End of the stream: return the windows that the data so far can complete.

        A window is emitted when its last hop is complete: the next sample, due one measured
        period after the latest, would fall at or after the window's end (within half a period).
        Eye-event runs still open are unresolved: their samples leave the event means rather than
        count as "no event"; a still unconfirmed clock jump or reset is dropped (``t_jump``,
        ``backwards_t``). Samples fed after a flush continue the stream; windows already emitted are
        not emitted again.

        Returns
        -------
        Windows
        """
        return self._feed(_NO_SAMPLES, None, with_events=False, final=True)[0]

    def _feed(self, block, labels, with_events, final):
        """Run the kernel over ``block``; return the windows, the events and the per-row outputs
        (only ``with_events``), and the glance and fatigue alerts it raised, in time order."""
        block = _as_block(block)
        n = len(block)
        labels = _NO_LABELS if labels is None else _as_labels(labels, n)
        chunk = min(n, _CHUNK)
        out_w = np.empty((chunk + self._margin, _O_SIZE))
        if with_events:
            rows = np.empty((n, _R_SIZE))
            out_e = np.empty((chunk + 4, _events._EV_SIZE))
        else:
            rows = out_e = _NO_ROWS
        out_a = np.empty((_A_MAX_ROWS + 8, _A_SIZE))
        out_fa = np.empty((_F_MAX_ROWS + 8, _F_SIZE))
        out = (out_w, out_e, out_a, out_fa, rows)
        found_w, found_e, found_a, found_fa = [], [], [], []
        n_found = 0
        start = 0
        done = False
        while not done:
            start, n_w, n_e, n_a, n_fa, done = _run(block, labels, start, self.n_samples, final,
                                                    self._kernel_state, out,
                                                    out_e if with_events else None)
            if n_w:
                found_w.append(out_w[:n_w].copy())
            if n_e:
                found_e.append(out_e[:n_e].copy())
            for found, buffer, count, column in ((found_a, out_a, n_a, _A_WINDOW),
                                                 (found_fa, out_fa, n_fa, _F_WINDOW)):
                if count:
                    alert_rows = buffer[:count].copy()
                    alert_rows[:, column] += n_found
                    found.append(alert_rows)
            n_found += n_w
        self.n_samples += n
        glance_alerts, where = (_alerts_from_rows(np.concatenate(found_a)) if found_a
                                else ([], []))
        fatigue_alerts, fatigue_where = (_fatigue_alerts_from_rows(np.concatenate(found_fa))
                                         if found_fa else ([], []))
        alerts = glance_alerts + fatigue_alerts
        where = where + fatigue_where
        if fatigue_alerts and glance_alerts:   # both channels: in time order within a window
            order = sorted(range(len(alerts)), key=lambda a: (where[a], alerts[a].t))
            alerts = [alerts[a] for a in order]
            where = [where[a] for a in order]
        if not found_w:
            windows = _NO_WINDOWS
            self._pending_alerts.extend(alerts)
        else:
            per_window = [[] for _ in range(n_found)]
            per_window[0].extend(self._pending_alerts)
            self._pending_alerts = []
            for alert, index in zip(alerts, where):
                if index < n_found:
                    per_window[index].append(alert)
                else:
                    self._pending_alerts.append(alert)
            attached = np.empty(n_found, dtype=object)
            attached[:] = [tuple(a) for a in per_window]
            rows_w = found_w[0] if len(found_w) == 1 else np.concatenate(found_w)
            windows = Windows._from_rows(rows_w, attached)
            if self.baseline is not None:
                windows.X = self.baseline.update(windows.t_end, windows.X)
        events = np.concatenate(found_e) if found_e else np.empty((0, _events._EV_SIZE))
        return windows, events, rows, alerts


def _as_block(block):
    if not (type(block) is np.ndarray and block.dtype is _FLOAT64 and block.ndim == 2
            and block.flags.c_contiguous):
        block = np.ascontiguousarray(block, dtype=np.float64)
        if block.ndim == 1:
            block = block.reshape(1, -1)
    if block.flags.writeable:   # one array type for the kernel (wire blocks are read-only),
        block = block.view()     # so one compile serves every input (issue 26)
        block.flags.writeable = False
    if block.ndim != 2 or block.shape[1] != N_FIELDS:
        raise SchemaError(f"block must have shape (n_samples, {N_FIELDS}), got {block.shape}")
    return block


def _as_labels(labels, n):
    labels = np.array(labels, dtype=np.int8)   # a writable C copy, as _NO_LABELS: one type
    if labels.shape != (n,):
        raise SchemaError(f"labels must have shape ({n},), got {labels.shape}")
    return labels


@njit(cache=True)
def _run(block, labels, start, base, final, state, out, out_f):
    """Process the queued held samples and the block's rows from ``start`` until all are done or
    an output buffer is nearly full; at the end, with ``final``, flush the stream.

    ``base`` is the stream index of the block's first row; ``state`` is the stream's
    :data:`_StreamState` as a plain tuple, and ``out`` the output buffers ``(out_w, out_e, out_a,
    out_fa, rows)``. Per-row outputs and events are written only when ``rows`` is not empty (an empty
    ``out_e`` then drops events). Fixations go to ``out_f`` (``out_e`` itself) or, with
    ``out_f=None``, are not looked for: numba then compiles a separate feature-path kernel without
    the fixation step, whose mere presence in the loop made every sample about 50 % slower even
    where it never ran. Glance and fatigue alert rows go to ``out_a`` and ``out_fa`` with the
    count of windows written before them. Returns ``(next row, windows written, events written,
    glance alert rows written, fatigue alert rows written, done)``.
    """
    (param_array, v_array, held, e_array, w_array, ring, hop_sums, m_array, mring, g_array, ghist,
     gring, g_out, f_array, fring, closures, f_out) = state
    out_w, out_e, out_a, out_fa, rows = out
    params = param_array[0]
    vstate = v_array[0]
    estate = e_array[0]
    wstate = w_array[0]
    mstate = m_array[0]
    gstate = g_array[0]
    gout = g_out[0]
    fstate = f_array[0]
    fout = f_out[0]
    hop_s = params.hop_s
    lag_s = params.lag_s
    n_hops = params.window_hops
    margin = ring.shape[0]
    n_rows = block.shape[0]
    x = np.empty(N_FIELDS)
    measures = np.full(N_TEMPORAL, np.nan)
    has_labels = labels.shape[0] > 0
    record = rows.shape[0] > 0   # per-row outputs and events are wanted
    glances = params.glances == 1.0
    fatigue = params.fatigue == 1.0
    n_w = 0
    n_e = 0
    n_a = 0
    n_fa = 0
    i = start
    while True:
        if (n_w + margin > out_w.shape[0] or record and n_e + 4 > out_e.shape[0]
                or n_a + _A_MAX_ROWS > out_a.shape[0] or n_fa + _F_MAX_ROWS > out_fa.shape[0]):
            return i, n_w, n_e, n_a, n_fa, False
        if vstate.q_n > 0.0:   # held samples released for processing come first
            q = int(vstate.q_head)
            for j in range(N_FIELDS):
                x[j] = held[q, j]
            label = int(held[q, _B_LABEL])
            k = int(held[q, _B_INDEX]) - base
            vstate.q_head = (q + 1) % held.shape[0]
            vstate.q_n -= 1.0
        elif i < n_rows:
            for j in range(N_FIELDS):
                x[j] = block[i, j]
            label = int(labels[i]) if has_labels else -1
            k = i
            i += 1
            if record:
                rows[k, 0] = _R_HELD
                rows[k, 1] = np.nan
                rows[k, 2] = -2.0
                rows[k, 3] = -2.0
                rows[k, 4] = vstate.epoch
                rows[k, 5:] = np.nan
                rows[k, _R_GLANCE] = -1.0
            order = _order(x, label, base + k, params, vstate, held, rows, base)
            if order == ORDER_RESET:
                n_e = _close_fixation(vstate, params, estate, out_e, n_e)
                n_w = _finish(params, vstate, estate, wstate, ring, hop_sums, out_w, n_w)
                _restart(vstate, e_array, w_array, ring, mstate, mring)
                _glances._restart(g_array, ghist, gring)
                _fatigue._restart(f_array, fring)
            if order != ORDER_ACCEPT:
                continue
        else:
            break
        has_gaze = not _no_gaze(x)
        status = _validate_row(x, params, vstate)
        keep_row = record and 0 <= k < rows.shape[0]
        if keep_row:
            rows[k, 0] = status
            rows[k, 4] = vstate.epoch
        t = x[_TIME]
        hop = np.floor(t / hop_s)
        if wstate.started == 0.0:
            wstate.started = 1.0
            wstate.hop = hop - 1.0
            wstate.next_end = hop + n_hops
        last_hop = wstate.hop
        lost = status == TRACK_LOSS
        dt = vstate.dt
        gap = vstate.gap == 1.0
        period = vstate.period
        # events first (the saccade step reads the previous sample's time the blink step updates)
        first_event = n_e
        s_status, n_e = _saccade_step(x, t, dt, gap, period, hop, last_hop, params, estate,
                                      ring, out_e, n_e)
        b_status, b_duration, n_e = _blink_step(x, t, gap, lost, period, hop, last_hop, params,
                                                estate, ring, out_e, n_e)
        if out_f is not None:   # fixations feed no window: found only when events are asked for
            if record:
                n_e = _fixation_step(t, gap, period, s_status, b_status, params, estate, out_f,
                                     n_e)
        for e in range(first_event, n_e):
            out_e[e, _EV_EPOCH] = vstate.epoch
        # then the windows this sample completes, before its hop reuses ring rows
        while t >= wstate.next_end * hop_s + lag_s:
            if wstate.next_end - n_hops > last_hop:   # the rest lie in a gap: empty
                wstate.next_end = max(wstate.next_end, hop + 1.0)
                break
            if _emit(ring, wstate, params, period, hop_sums, out_w[n_w]):
                n_w += 1
            wstate.next_end += 1.0
        if hop > last_hop:
            _windows._advance(ring, last_hop, hop)
            _measures._advance(mring, mstate, last_hop, hop, params)
            wstate.hop = hop
        slot = ring[_slot(ring, hop)]
        if s_status >= 0:
            slot.t_count[SACCADE] += 1.0
            if s_status == 1:
                slot.pending_saccade += 1.0
        if b_status == 0 or b_status == 1:
            slot.t_count[BLINK] += 1.0
        if b_status == 1 or b_status == 2:
            slot.pending_blink += 1.0
        if b_status == 2:
            slot.pending_blink_count += 1.0
        _measures._measure_sample(mring, mstate, hop, params, x, 0.0 if gap else dt, b_status,
                                  b_duration, measures)
        _add_sample(ring, wstate, hop, x, not lost, measures, label)
        if glances:
            first_alert = n_a
            closed = fatigue and _closed_forward(x, lost, params, gstate, fstate)
            n_a = _glance_step(x, has_gaze, t, dt, gap, lost, closed, params, gstate, ghist,
                               gring, gout, out_a, n_a)
            for a in range(first_alert, n_a):
                out_a[a, _A_WINDOW] = n_w
            _add_glance(ring, hop, gout)
        if fatigue:
            first_alert = n_fa
            n_fa = _fatigue_step(x, t, dt, gap, b_duration, params, gstate, fstate, fring,
                                 closures, fout, out_fa, n_fa)
            for a in range(first_alert, n_fa):
                out_fa[a, _F_WINDOW] = n_w
            _add_fatigue(ring, hop, fout)
        if keep_row:
            rows[k, 1] = estate.velocity
            rows[k, 2] = s_status
            rows[k, 3] = b_status
            if glances:
                rows[k, _R_GLANCE] = gout.cls
                rows[k, _R_OFF_S] = gout.off_s
                rows[k, _R_BUFFER] = gout.buffer
                rows[k, _R_ROAD_YAW] = gstate.yaw
                rows[k, _R_ROAD_PITCH] = gstate.pitch
            if fatigue:
                rows[k, _R_FATIGUE] = fout.available
                rows[k, _R_FATIGUE + 1] = fout.closed_s
                rows[k, _R_FATIGUE + 2] = fout.perclos
                rows[k, _R_FATIGUE + 3] = fout.blink_s
                rows[k, _R_FATIGUE + 4] = fout.drowsy
    if final:
        _release(vstate, held, rows, base)
        n_e = _close_fixation(vstate, params, estate, out_e, n_e)
        n_w = _finish(params, vstate, estate, wstate, ring, hop_sums, out_w, n_w)
    return i, n_w, n_e, n_a, n_fa, True


@njit(cache=True, inline="always")
def _closed_forward(x, lost, params, gstate, fstate):
    """The eyelids of sample ``x`` are closed with the head facing forward, as the fatigue
    channel reads a closure (its open level learned; at or below ``fatigue_closed_fraction`` of
    it, or, eyes untracked (``lost``), below ``fatigue_open_fraction`` inside a closure; its
    forward head ellipse): the fatigue channel's to judge, so the glance channel takes it as
    track loss, not as time away. A gaze tracked while the lid reopens is the gaze's."""
    if fstate.seen_s < params.warmup_s:
        return False
    aperture = _aperture(x)
    if aperture != aperture:
        return False
    level = fstate.level
    if aperture > params.fatigue_closed_fraction * level and not (
            lost and fstate.closed == 1.0 and aperture < params.fatigue_open_fraction * level):
        return False
    return _facing_forward(x, params, gstate)


@njit(cache=True)
def _close_fixation(vstate, params, estate, out_e, n_e):
    """End of the current clock: the open fixation ends at its last sample, on this clock."""
    first = n_e
    n_e = _end_fixation(vstate.period, params, estate, out_e, n_e)
    if n_e > first:
        out_e[first, _EV_EPOCH] = vstate.epoch
    return n_e


@njit(cache=True)
def _finish(params, vstate, estate, wstate, ring, hop_sums, out_w, n_w):
    """End of the current clock: leave open event runs unresolved and write the windows whose
    last hop is complete into ``out_w`` from row ``n_w``; return the new row count."""
    if wstate.started == 0.0:
        return n_w
    hop_s = params.hop_s
    n_hops = params.window_hops
    last_hop = wstate.hop
    period = vstate.period
    _events._abandon(estate, ring, last_hop)
    limit = vstate.last_t + _FLUSH_PERIODS * period
    while wstate.next_end * hop_s <= limit and wstate.next_end - n_hops <= last_hop:
        if _emit(ring, wstate, params, period, hop_sums, out_w[n_w]):
            n_w += 1
        wstate.next_end += 1.0
    return n_w


@njit(cache=True)
def _restart(vstate, e_array, w_array, ring, mstate, mring):
    """A new clock: events, windows and derived measures start afresh (counts and rate are kept)."""
    vstate.started = 0.0
    vstate.epoch += 1.0
    _events._clear(e_array)
    w_array[0] = _windows._ZEROS[0]
    _windows._clear_ring(ring)
    _measures._clear_totals(mstate)
    _measures._clear_ring(mring)


def extract_features(recording, config=None):
    """Feature windows of a whole recording: a fresh :class:`StreamProcessor` fed all of it, then
    flushed (the same windows as any sequence of :meth:`~StreamProcessor.update` calls followed by
    :meth:`~StreamProcessor.flush`).

    Parameters
    ----------
    recording : Recording
    config : PipelineConfig, default=None

    Returns
    -------
    Windows
    """
    return StreamProcessor(config)._feed(recording.samples, recording.labels, with_events=False,
                                         final=True)[0]


@dataclass
class Events:
    """Per-sample eye events of a recording, and the events themselves.

    Attributes
    ----------
    t : ndarray of shape (n_samples,)
        Sample times in seconds, as received.
    saccade, blink, fixation : ndarray of shape (n_samples,)
        1 inside a detected event, 0 outside, NaN where the event cannot be resolved (sample
        rate too low) or the sample was rejected.
    track_loss : ndarray of shape (n_samples,)
        1 where the eyes were not tracked, 0 where they were, NaN for rejected samples.
    gaze_velocity_deg_s : ndarray of shape (n_samples,)
        Binocular gaze rotation speed in deg/s (NaN where undefined).
    rejected : ndarray of shape (n_samples,), dtype object
        The reason a sample was dropped (see :data:`SAMPLE_REJECT_REASONS`), or ``""``.
    events : ndarray of shape (n_events, 6)
        One row per event: kind (index into :data:`EVENT_KINDS`), first and last sample time (s),
        duration (s), amplitude (deg) and peak speed (deg/s), NaN where not applicable.
    """

    t: np.ndarray
    saccade: np.ndarray
    blink: np.ndarray
    fixation: np.ndarray
    track_loss: np.ndarray
    gaze_velocity_deg_s: np.ndarray
    rejected: np.ndarray
    events: np.ndarray

    COLUMNS = ("t", "saccade", "blink", "fixation", "track_loss", "gaze_velocity_deg_s",
               "rejected")

    def write_csv(self, path):
        """Write one row per sample: :attr:`COLUMNS`, empty cells for NaN."""
        with open(path, "w", newline="") as file:
            writer = csv.writer(file)
            writer.writerow(self.COLUMNS)
            for t, s, b, f, lost, v, reason in zip(
                    self.t.tolist(), self.saccade.tolist(), self.blink.tolist(),
                    self.fixation.tolist(), self.track_loss.tolist(),
                    self.gaze_velocity_deg_s.tolist(), self.rejected):
                writer.writerow([repr(t), _flag(s), _flag(b), _flag(f), _flag(lost),
                                 "" if math.isnan(v) else f"{v:.3f}", reason])


def _flag(value):
    return "" if math.isnan(value) else str(int(value))


def detect_events(recording, config=None):
    """Per-sample saccades, blinks and fixations of a whole recording, by the streaming detectors.

    A sample is flagged when its time lies within an event's first and last sample times (on the
    same clock: after a clock reset, times start again).

    Parameters
    ----------
    recording : Recording
    config : PipelineConfig, default=None

    Returns
    -------
    Events
    """
    processor = StreamProcessor(config)
    _, events, rows, _ = processor._feed(recording.samples, recording.labels, with_events=True,
                                         final=True)
    t = recording.t
    accepted = rows[:, _R_STATUS] < REJECTED
    epochs = rows[:, _R_EPOCH]
    flags = {}
    for kind, column in ((0, _R_SACCADE), (1, _R_BLINK), (2, _R_SACCADE)):
        flag = np.where(rows[:, column] == -2.0, np.nan, 0.0)
        flag[~accepted] = np.nan
        for epoch in np.unique(epochs[accepted]):   # times increase strictly within a clock
            kept = np.flatnonzero(accepted & (epochs == epoch))
            spans = events[(events[:, 0] == kind) & (events[:, _EV_EPOCH] == epoch)]
            inside = np.zeros(len(kept) + 1, dtype=np.int64)
            np.add.at(inside, np.searchsorted(t[kept], spans[:, 1], side="left"), 1)
            np.add.at(inside, np.searchsorted(t[kept], spans[:, 2], side="right"), -1)
            flag[kept[np.cumsum(inside[:-1]) > 0]] = 1.0
        flags[EVENT_KINDS[kind]] = flag
    lost = np.where(rows[:, _R_STATUS] == TRACK_LOSS, 1.0, 0.0)
    lost[~accepted] = np.nan
    reasons = np.array([""] + list(SAMPLE_REJECT_REASONS), dtype=object)
    code = np.where(accepted, 0, rows[:, _R_STATUS].astype(np.int64) - REJECTED + 1)
    return Events(t.copy(), flags["saccade"], flags["blink"], flags["fixation"], lost,
                  np.degrees(rows[:, _R_VELOCITY]), reasons[code], events[:, :_EV_EPOCH])


def detect_glances(recording, config=None):
    """Per-sample glance channel of a whole recording (DESIGN §4.5), by the streaming processor.

    Parameters
    ----------
    recording : Recording
    config : PipelineConfig, default=None

    Returns
    -------
    GlanceTrace
        Class, glance away so far, AttenD buffer and road centre per sample (rejected samples:
        class -1, NaN), and every alert raised.
    """
    processor = StreamProcessor(config)
    _, _, rows, alerts = processor._feed(recording.samples, recording.labels, with_events=True,
                                         final=True)
    return _trace(recording.t, rows, [alert for alert in alerts if isinstance(alert, Alert)])


def _trace(t, rows, alerts):
    glance = np.where(np.isnan(rows[:, _R_GLANCE]), -1, rows[:, _R_GLANCE]).astype(np.int8)
    return GlanceTrace(np.asarray(t, dtype=float).copy(), glance, rows[:, _R_OFF_S].copy(),
                       rows[:, _R_BUFFER].copy(), np.degrees(rows[:, _R_ROAD_YAW]),
                       np.degrees(rows[:, _R_ROAD_PITCH]), list(alerts))


def detect_fatigue(recording, config=None):
    """Per-sample fatigue channel of a whole recording (docs/pipeline.md "Fatigue"), by the
    streaming processor.

    Parameters
    ----------
    recording : Recording
    config : PipelineConfig, default=None

    Returns
    -------
    FatigueTrace
        Availability, current closure, PERCLOS, mean blink duration and the drowsy latch per
        sample (rejected samples: unavailable, NaN), and every fatigue alert raised.
    """
    processor = StreamProcessor(config)
    _, _, rows, alerts = processor._feed(recording.samples, recording.labels, with_events=True,
                                         final=True)
    f = _R_FATIGUE
    rejected = rows[:, _R_STATUS] >= REJECTED
    columns = rows[:, f:f + 5].copy()
    columns[rejected] = np.nan
    return FatigueTrace(np.asarray(recording.t, dtype=float).copy(), columns[:, 0] == 1.0,
                        columns[:, 1], columns[:, 2], columns[:, 3], columns[:, 4] == 1.0,
                        [alert for alert in alerts if isinstance(alert, FatigueAlert)])
