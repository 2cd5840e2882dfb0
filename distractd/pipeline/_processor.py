"""The per-stream processor: validation, eye events, derived measures, windows and the channels.

:class:`StreamProcessor` runs them over each block it is fed, in one compiled pass per block
(:func:`_run`), and returns the windows the block completed; :mod:`._batch` feeds it whole
recordings.
"""

import math
from collections import namedtuple

import numpy as np
from numba import njit

from .._errors import SchemaError
from . import _events, _measures, _validate, _windows
from ._baseline import RunningBaseline
from ._config import _TIME, PipelineConfig, _params, _record
from ._events import EVENT_ROW, _blink_step, _end_fixation, _fixation_step, _saccade_step
from ._feature_names import FEATURE_NAMES
from .channels import CHANNELS, _protocol
from .channels._alerts import ALERT_ROW, alerts_from_rows
from .channels._face import SAMPLE, new_face
from .formats import N_FIELDS
from ._validate import (
    _B_INDEX, _B_LABEL, ORDER_ACCEPT, ORDER_RESET, SAMPLE_REJECT_REASONS, TRACK_LOSS, _no_gaze,
    _order, _release, _validate_row,
)
from ._windows import BLINK, N_TEMPORAL, SACCADE, WINDOW, Windows, _add_sample, _emit, _slot

__all__ = ["StreamProcessor", "ROW"]

ROW = _record(
    "status",     # validation's status code (TRACK_LOSS, REJECTED + reason, ...)
    "velocity",   # gaze speed, rad/s
    "saccade",    # saccade status (-2: not resolvable)
    "blink",      # blink status (-2: not resolvable)
    "epoch",      # clock epoch
)
"""Per-sample outputs of the compiled pass (batch only: :mod:`~distractd.pipeline._batch`)."""
_HELD = -1.0     # status of a sample still held back (none is after the end of the stream)
_CHUNK = 4096    # rows per output buffer at most
_ALERT_SPARE = 64   # alert rows beyond what one sample can write (every channel's MAX_ALERT_ROWS)
_FLUSH_PERIODS = 1.5   # the last hop is complete when the next sample is due within this
CHANNEL_SLOTS = 4
"""Channels one processor runs at most. The compiled pass has this many channel slots, each a
channel's kernel or None (numba compiles an empty slot away), unpacked once per call: a loop over
a tuple of kernels inside the per-sample loop made every sample about twice as slow."""

_UNLABELLED = np.empty(0, dtype=np.int8)
_EMPTY_BLOCK = np.empty((0, N_FIELDS))
_FLOAT64 = np.dtype(np.float64)
_EMPTY_ROWS = np.empty(0, ROW)   # no per-sample outputs wanted: the kernel skips them ...
_EMPTY_EVENTS = np.empty(0, EVENT_ROW)   # ... and the events
_EMPTY_WINDOWS = Windows.empty()   # shared: arrays of size 0 cannot be changed

_StreamState = namedtuple("_StreamState", (
    "params", "validation", "held", "events", "windows", "ring", "hop_sums", "measures",
    "measure_ring", "face", "sample"))
"""One stream's kernel state, in the order :func:`_run` unpacks it: one-record arrays (the
parameters, and the validation, event, window and measure states: :data:`PARAMS`,
``_validate.STATE``, ...), the held-sample buffer, the hop ring and a hop record for a window's
sums (``_windows.HOP``), the measure ring, and the face and sample records the channels share
(``channels._face``). :func:`_run` takes it as a plain tuple: numba reads a plain tuple of arrays
about as fast as separate arguments, a named one about 10 us slower per call."""


class StreamProcessor:
    """Validation, eye events, derived measures and feature windows of one stream.

    Feed blocks of samples in arrival order with :meth:`update`; each call returns the windows
    that the block completed. A window ``[t_start, t_end)`` completes once a sample at or after
    ``t_end + config.lag_s`` arrives (the eye events that touch it are settled by then). At the end
    of the stream, :meth:`flush` returns the windows the data so far can complete. Windows with no
    accepted sample (inside a long gap) are skipped. A clock jump or reset is handled as
    :mod:`~distractd.pipeline._validate` describes: a lone future sample is dropped (``t_jump``);
    after a clock reset the windows and derived measures start afresh on the new clock (the old
    clock's windows are flushed first). Per-stream memory is about 75 KB: 48 KB for validation,
    events, measures and windows (8 KB of it the car's hop sums), the rest the channels' (21 KB
    glance, 6 KB the eyelid's, 0.5 KB the car's).

    The channels (:data:`~distractd.pipeline.channels.CHANNELS`, each on its ``config`` switch)
    run per sample, in order: each window carries their features and state at its end, and the
    alerts they raised since the previous window, in time order (see :class:`Windows`); each
    channel is an attribute named by its ``NAME`` (``glances``, ...). With ``config.baseline`` the features of every window are standardised against the stream's own
    running baseline (:attr:`baseline`, built by :meth:`RunningBaseline.from_config`: by default
    the glance features are given as they are) before they are returned; the baseline runs on
    across a clock reset (the driver is the same).

    Parameters
    ----------
    config : PipelineConfig, default=None
        Settings; ``None`` means ``PipelineConfig()``.
    channels : sequence of channel classes, default=CHANNELS
        The channels to run, in order (a new channel is tried here before it joins CHANNELS).

    Attributes
    ----------
    rejected : dict
        Count per reason of :data:`SAMPLE_REJECT_REASONS`.
    rate_hz : float
        Measured sample rate in Hz (NaN before two samples).
    n_samples : int
        Samples received, rejected ones included.
    glances : GlanceChannel
        The stream's glance channel (road centre, readiness); the other channels likewise.
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
    ((23, 49), 1.0)
    >>> [float(t) for t in processor.flush().t_end]
    [21.5]
    """

    def __init__(self, config=None, channels=CHANNELS):
        if config is None:
            config = PipelineConfig()
        if not isinstance(config, PipelineConfig):
            raise TypeError(f"config must be a PipelineConfig or None, got {type(config).__name__}")
        self.config = config
        self.n_samples = 0
        params = _params(config)
        self._margin = int(params["ring_hops"][0])
        self._channels = tuple(channel(config) for channel in channels)
        if len(self._channels) > CHANNEL_SLOTS:
            raise ValueError(f"channels: at most {CHANNEL_SLOTS} channels, got "
                             f"{len(self._channels)}")
        for channel in self._channels:
            setattr(self, channel.NAME, channel)
        self._max_alert_rows = sum(channel.MAX_ALERT_ROWS for channel in self._channels)
        self._state = _StreamState(
            params=params, validation=_validate._new_state(), held=_validate._new_buffer(),
            events=_events._new_state(), windows=np.zeros(1, _windows.STATE),
            ring=_windows._new_ring(self._margin), hop_sums=np.zeros(1, _windows.HOP),
            measures=_measures._new_state(),
            measure_ring=_measures._new_ring(int(params["measure_hops"][0])), face=new_face(),
            sample=np.zeros(1, SAMPLE))
        self._kernel_state = tuple(self._state)
        self._lanes = self._with_traces(0)
        self._pending_alerts = []
        self.baseline = (RunningBaseline.from_config(config, FEATURE_NAMES) if config.baseline
                         else None)

    def _with_traces(self, n):
        """The channel slots: each channel's kernel, and its buffer of ``n`` per-sample outputs
        (NaN until written), None in the empty slots."""
        empty = (None,) * (CHANNEL_SLOTS - len(self._channels))
        return (tuple(channel.kernel for channel in self._channels) + empty,
                tuple(np.full(n, np.nan, channel.OUTPUT) for channel in self._channels) + empty)

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
        return self._feed(_EMPTY_BLOCK, None, with_events=False, final=True)[0]

    def _feed(self, block, labels, with_events, final):
        """Run the kernel over ``block``; return the windows, the events (``_events.EVENT_ROW``
        records), the per-sample outputs (:data:`ROW` records) and the channels' (these three
        only ``with_events``), and the alerts it raised, in time order."""
        block = _as_block(block)
        n = len(block)
        labels = _UNLABELLED if labels is None else _as_labels(labels, n)
        chunk = min(n, _CHUNK)
        out_w = np.empty(chunk + self._margin, WINDOW)
        if with_events:
            rows = np.empty(n, ROW)
            out_e = np.empty(chunk + 4, EVENT_ROW)
            lanes = self._with_traces(n)
        else:
            rows, out_e = _EMPTY_ROWS, _EMPTY_EVENTS
            lanes = self._lanes
        out_a = np.empty(self._max_alert_rows + _ALERT_SPARE, ALERT_ROW)
        out = (out_w, out_e, out_a, rows)
        found_w, found_e, found_a = [], [], []
        n_found = 0
        start = 0
        done = False
        while not done:
            start, n_w, n_e, n_a, done = _run(block, labels, start, self.n_samples, final,
                                              self._kernel_state, lanes, out,
                                              out_e if with_events else None)
            if n_w:   # the last fill of a buffer made for this call is not copied
                found_w.append(out_w[:n_w] if done else out_w[:n_w].copy())
            if n_e:
                found_e.append(out_e[:n_e].copy())
            if n_a:
                alert_rows = out_a[:n_a].copy()
                alert_rows["window"] += n_found
                found_a.append(alert_rows)
            n_found += n_w
        self.n_samples += n
        alerts, where = (alerts_from_rows(np.concatenate(found_a), self._channels) if found_a
                         else ([], []))
        if not found_w:
            windows = _EMPTY_WINDOWS
            self._pending_alerts.extend(alerts)
        else:
            windows = Windows._from_rows(found_w[0] if len(found_w) == 1
                                         else np.concatenate(found_w),
                                         self._attach(alerts, where, n_found))
            if self.baseline is not None:
                windows.X = self.baseline.update(windows.t_end, windows.X)
        events = np.concatenate(found_e) if found_e else _EMPTY_EVENTS
        return windows, events, rows, list(lanes[1][:len(self._channels)]), alerts

    def _attach(self, alerts, where, n_windows):
        """Per window of ``n_windows``, the tuple of alerts it carries: those pending and the new
        ones raised before it (``where``: their window); the later ones wait for the next."""
        attached = np.empty(n_windows, dtype=object)
        if not (alerts or self._pending_alerts):   # the common case
            attached.fill(())
            return attached
        per_window = [[] for _ in range(n_windows)]
        per_window[0].extend(self._pending_alerts)
        self._pending_alerts = []
        for alert, index in zip(alerts, where):
            if index < n_windows:
                per_window[index].append(alert)
            else:
                self._pending_alerts.append(alert)
        attached[:] = [tuple(a) for a in per_window]
        return attached


def _as_block(block):
    """``block`` as the one array type the kernel is compiled for: 2-D float64, C-contiguous,
    aligned and read-only (wire blocks are read-only), so one compile serves every input (issue
    26)."""
    if not (type(block) is np.ndarray and block.dtype is _FLOAT64 and block.ndim == 2
            and block.flags.c_contiguous and block.flags.aligned):
        block = np.ascontiguousarray(block, dtype=np.float64)
        if block.ndim == 1:
            block = block.reshape(1, -1)
        if not block.flags.aligned:
            block = block.copy()
    if block.flags.writeable:
        block = block.view()
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
def _run(block, labels, start, base, final, state, lanes, out, out_f):
    """Process the queued held samples and the block's rows from ``start`` until all are done or
    an output buffer is nearly full; at the end, with ``final``, flush the stream.

    ``base`` is the stream index of the block's first row; ``state`` the stream's
    :data:`_StreamState` as a plain tuple; ``lanes`` the channel slots' kernels and per-sample
    output buffers; ``out`` the output buffers ``(out_w, out_e, out_a, rows)``. Per-sample outputs
    and events are written only when ``rows`` is not empty (an empty ``out_e`` drops events).
    Fixations go to ``out_f`` (``out_e`` itself) or, with ``out_f=None``, are not looked for: numba
    then compiles a separate feature-path kernel without the fixation step, whose mere presence in
    the loop made every sample about 50 % slower even where it never ran. Alert rows go to
    ``out_a`` with their channel and the count of windows before them. Returns ``(next row,
    windows, events and alert rows written, done)``."""
    (param_array, v_array, held, e_array, w_array, ring, hop_sums, m_array, mring, face_array,
     sample_array) = state
    out_w, out_e, out_a, rows = out
    params = param_array[0]
    vstate = v_array[0]
    estate = e_array[0]
    wstate = w_array[0]
    mstate = m_array[0]
    face = face_array[0]
    sample = sample_array[0]
    (k0, k1, k2, k3), (t0, t1, t2, t3) = lanes
    on0, on1, on2, on3 = (_protocol.enabled(k0, params), _protocol.enabled(k1, params),
                          _protocol.enabled(k2, params), _protocol.enabled(k3, params))
    margin = ring.shape[0]
    x = np.empty(N_FIELDS)
    measures = np.full(N_TEMPORAL, np.nan)
    has_labels = labels.shape[0] > 0
    record = rows.shape[0] > 0   # per-row outputs and events are wanted
    n_w = n_e = n_a = 0
    i = start
    while True:
        if (n_w + margin > out_w.shape[0] or record and n_e + 4 > out_e.shape[0]
                or n_a > _ALERT_SPARE):
            return i, n_w, n_e, n_a, False
        if vstate.q_n > 0.0:   # held samples released for processing come first
            label, k = _take_held(vstate, held, base, x)
        elif i < block.shape[0]:
            for j in range(N_FIELDS):
                x[j] = block[i, j]
            label = int(labels[i]) if has_labels else -1
            k = i
            i += 1
            if record:
                _held_row(rows[k], vstate.epoch)
            order = _order(x, label, base + k, params, vstate, held, rows, base)
            if order == ORDER_RESET:
                n_e, n_w = _end_clock(params, vstate, estate, wstate, ring, hop_sums, out_e, n_e,
                                      out_w, n_w)
                _restart(vstate, e_array, w_array, ring, mstate, mring)
                _restart_channels(lanes[0], face)
            if order != ORDER_ACCEPT:
                continue
        else:
            break
        has_gaze = not _no_gaze(x)
        status = _validate_row(x, params, vstate)
        keep_row = record and 0 <= k < rows.shape[0]
        if keep_row:
            rows[k].status = status
            rows[k].epoch = vstate.epoch
        t = x[_TIME]
        hop = _hop_of(t, params, wstate)
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
            out_e[e].epoch = vstate.epoch
        n_w = _turn_hop(t, hop, period, params, wstate, ring, hop_sums, mring, mstate, out_w, n_w)
        slot = ring[_slot(ring, hop)]
        _count_events(slot, s_status, b_status)
        _measures._measure_sample(mring, mstate, hop, params, x, 0.0 if gap else dt, b_status,
                                  b_duration, measures)
        _add_sample(ring, wstate, hop, x, not lost, measures, label)
        _describe(sample, t, dt, gap, lost, has_gaze, b_duration)
        first_alert = n_a
        row = k if keep_row else -1
        if on0:
            n_a = _protocol.step(k0, t0, 0.0, x, sample, params, face, slot, out_a, n_a, row)
        if on1:
            n_a = _protocol.step(k1, t1, 1.0, x, sample, params, face, slot, out_a, n_a, row)
        if on2:
            n_a = _protocol.step(k2, t2, 2.0, x, sample, params, face, slot, out_a, n_a, row)
        if on3:
            n_a = _protocol.step(k3, t3, 3.0, x, sample, params, face, slot, out_a, n_a, row)
        for a in range(first_alert, n_a):
            out_a[a].window = n_w
        if keep_row:
            rows[k].velocity = estate.velocity
            rows[k].saccade = s_status
            rows[k].blink = b_status
    if final:
        _release(vstate, held, rows, base)
        n_e, n_w = _end_clock(params, vstate, estate, wstate, ring, hop_sums, out_e, n_e, out_w,
                              n_w)
    return i, n_w, n_e, n_a, True


@njit(cache=True, inline="always")
def _take_held(vstate, held, base, x):
    """Copy the next queued held sample into ``x``; return its label and block row."""
    q = int(vstate.q_head)
    for j in range(N_FIELDS):
        x[j] = held[q, j]
    vstate.q_head = (q + 1) % held.shape[0]
    vstate.q_n -= 1.0
    return int(held[q, _B_LABEL]), int(held[q, _B_INDEX]) - base


@njit(cache=True, inline="always")
def _held_row(row, epoch):
    """A block row's per-sample outputs as it arrives: held back, nothing known yet."""
    row.status = _HELD
    row.velocity = np.nan
    row.saccade = row.blink = -2.0
    row.epoch = epoch


@njit(cache=True, inline="always")
def _hop_of(t, params, wstate):
    """The hop of time ``t``; the first sample of a clock starts the windows before it."""
    hop = np.floor(t / params.hop_s)
    if wstate.started == 0.0:
        wstate.started = 1.0
        wstate.hop = hop - 1.0
        wstate.next_end = hop + params.window_hops
    return hop


@njit(cache=True, inline="always")
def _turn_hop(t, hop, period, params, wstate, ring, hop_sums, mring, mstate, out_w, n_w):
    """Write the windows a sample at ``t`` completes into ``out_w`` from row ``n_w``, then open
    the hops up to ``hop`` (so the windows are read before the new hops reuse ring rows); return
    the new row count."""
    last_hop = wstate.hop
    n_hops = params.window_hops
    while t >= wstate.next_end * params.hop_s + params.lag_s:
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
    return n_w


@njit(cache=True, inline="always")
def _describe(sample, t, dt, gap, lost, has_gaze, blink_s):
    """Fill the :data:`~.channels._face.SAMPLE` record the channels read."""
    sample.t = t
    sample.dt = dt
    sample.gap = 1.0 if gap else 0.0
    sample.lost = 1.0 if lost else 0.0
    sample.has_gaze = 1.0 if has_gaze else 0.0
    sample.blink_s = blink_s


@njit(cache=True)
def _restart_channels(kernels, face):
    """A new clock: every channel starts afresh."""
    k0, k1, k2, k3 = kernels
    _protocol.restart(k0, face)
    _protocol.restart(k1, face)
    _protocol.restart(k2, face)
    _protocol.restart(k3, face)


@njit(cache=True, inline="always")
def _count_events(slot, s_status, b_status):
    """Count a sample's saccade and blink statuses in its hop (pending until the event ends)."""
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


@njit(cache=True)
def _end_clock(params, vstate, estate, wstate, ring, hop_sums, out_e, n_e, out_w, n_w):
    """End of the current clock: close the open fixation, leave open event runs unresolved and
    write the windows whose last hop is complete; return the new event and window row counts."""
    n_e = _close_fixation(vstate, params, estate, out_e, n_e)
    return n_e, _finish(params, vstate, estate, wstate, ring, hop_sums, out_w, n_w)


@njit(cache=True)
def _close_fixation(vstate, params, estate, out_e, n_e):
    """End of the current clock: the open fixation ends at its last sample, on this clock."""
    first = n_e
    n_e = _end_fixation(vstate.period, params, estate, out_e, n_e)
    if n_e > first:
        out_e[first].epoch = vstate.epoch
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
