"""The fatigue channel: eye closures, PERCLOS and the Euro NCAP fatigue alerts, from the eyelid.

Everything runs per accepted sample inside the processor's compiled pass (:func:`_fatigue_step`, the
channel protocol's step), on arrays owned by a :class:`FatigueChannel`; batch is the same step fed
a whole recording
(:func:`~distractd.pipeline.detect_fatigue`). docs/pipeline.md ("Fatigue") gives the rules and the
source of every threshold; in short:

- **Aperture**: the mean of the eyes' ``eyelid_*`` values present in the sample.
- **Eyes visible**: the aperture is finite and the tracker's confidence is at least
  ``confidence_min`` (or absent), or low only because the lid hides the pupil (aperture below
  ``fatigue_open_fraction`` of the open level). A stream that never had an eyelid value, or whose
  eyes are not visible now (sunglasses), has no fatigue state: it is unavailable, never guessed,
  and nothing about blinks or closures is learned from it.
- **Open level**: the driver's open-eye aperture. During the first ``warmup_s`` of visible eyelid
  it is the running mean of every visible aperture (blinks are a few percent of the time) and the
  channel is unavailable; then an exponential mean (time constant ``fatigue_open_memory_s``) of the
  visible samples outside closures with the eye open.
- **Closures** (hysteresis): a closure starts at the first visible sample at or below
  ``fatigue_closed_fraction`` of the open level (P80: at least 80 % closed) and ends at the first
  visible sample at or above ``fatigue_open_fraction`` of it. The eyes hidden for up to
  ``fatigue_hidden_s`` inside a closure, or a gap as short, do not end it; longer, and the closure
  is dropped (its current duration NaN: closed, since when unknown) and the eye must be seen open
  before a new one starts (its start would be unknown).
- **Alerts**: ``microsleep`` when a closure reaches ``fatigue_microsleep_s`` and ``sleep`` when it
  reaches ``fatigue_sleep_s``, each once per closure, at a visible sample with the head facing
  forward (head pose within ``fatigue_head_*`` of the glance channel's recent on-road head pose;
  assumed without a head pose or before the glance channel has one). ``drowsiness`` when PERCLOS
  (P80 share of the visible time over the last ``fatigue_perclos_window_s``) reaches
  ``fatigue_perclos_drowsy`` while the mean blink duration over the same span reaches
  ``fatigue_blink_drowsy_s``; once, re-armed when PERCLOS falls below
  ``fatigue_perclos_recovered``. PERCLOS and the mean blink duration are re-evaluated every
  :data:`BIN_S` over the span's whole bins.
"""

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from .._config import _CONFIDENCE, _record
from ._alerts import ChannelAlert, keep_episode, write_alert, write_episodes
from ._face import aperture, facing_forward
from ._protocol import Channel, ChannelTrace, implement, one_record

__all__ = ["FATIGUE_ALERT_KINDS", "FatigueAlert", "FatigueChannel", "FatigueTrace"]

FATIGUE_ALERT_KINDS = ("microsleep", "sleep", "drowsiness")
"""Fatigue alert kinds, indexed by the ``kind`` column of a fatigue alert row."""
MICROSLEEP, SLEEP, DROWSINESS = range(3)

MIN_OPEN_LEVEL = 0.6
"""The smallest open-eye aperture on the schema's scale (1: the open baseline, a 10 mm eye):
Euro NCAP's 6 mm (SIMULATOR_EVIDENCE §5c). Until a driver's own level is learned, closures are
judged against it (a closure from the stream's first sample, or over a restart, is seen), and only
apertures open for every driver teach the level."""
CLOSURES = 32
"""Recent long closures kept per stream, for the drowsiness alert's record."""
LONG_CLOSURE_S = 0.15
"""A closure this long or longer is kept for the drowsiness record: Anund, Fors & Ahlström
(2017)'s "long blink" sleepiness threshold (SIMULATOR_EVIDENCE §3)."""
BIN_S = 0.5
"""PERCLOS and blink sums are kept per bin of this many seconds of the stream clock; PERCLOS, the
mean blink duration and the drowsiness rule are evaluated as each bin opens, over the span's
whole bins before it."""
MIN_COVER = 0.5
"""PERCLOS and the mean blink duration are defined once the eyes were visible for at least this
share of their span (at the stream's start, with sunglasses)."""

# Fatigue state.
STATE = _record(
    "has_eyelid",   # the stream has had an eyelid value
    "seen_s",       # visible eyelid time seen, s (open-level warm-up)
    "level",        # open-eye aperture
    "closed",       # 1 inside a closure
    "dead",         # 1 while a closure of unknown start lasts (no alert, no record)
    "start",        # first closed sample of the current closure, s
    "last_closed",  # last visible sample of the current closure, s
    "hidden_t",     # first sample of the current hidden run (NaN: eyes visible)
    "micro_done",   # the current closure raised its microsleep alert
    "sleep_done",   # the current closure raised its sleep alert
    "drowsy",       # a drowsiness alert was raised and PERCLOS has not recovered since
    "bin",          # bin of the latest sample (-inf: none on this clock)
    "perclos",      # PERCLOS over the span's complete bins (NaN: undefined)
    "blink_mean",   # mean blink duration over them, s (NaN: none)
    "c_head",       # next row of the closure ring
    "c_n",          # closures in the ring
)
_ZEROS = np.zeros(1, STATE)   # copied to clear a state (a global array, so numba never frees it)

# A bin of the PERCLOS ring: its number (-1: none held), then its sums.
BIN = _record("id", "visible_s", "closed_s", "blinks", "blink_s")
_EMPTY_BIN = np.zeros(1, BIN)

# Per-sample outputs of _fatigue_step.
OUTPUT = _record(
    "available",    # eyelid signal, eyes visible and open level learned
    "closed_s",     # current closure so far (0 open; NaN unavailable), s
    "perclos",      # P80 over the span (NaN while warming up or mostly hidden)
    "blink_s",      # mean blink duration over the span (NaN: none)
    "drowsy",
)


@dataclass(frozen=True)
class FatigueAlert(ChannelAlert):
    """A fatigue alert (Euro NCAP driver state monitoring: non-transient states): ``kind`` one of
    :data:`FATIGUE_ALERT_KINDS`, ``t`` the time it was raised, and

    Attributes
    ----------
    closures : tuple of (float, float)
        Start and end (so far), seconds, of the eye closures the alert is based on: the current
        closure (microsleep, sleep), or the closures of at least :data:`LONG_CLOSURE_S` within the
        PERCLOS span (drowsiness; the latest :data:`CLOSURES` at most).
    closed_s : float
        The closure's duration so far, seconds (microsleep, sleep); NaN for drowsiness.
    perclos : float
        PERCLOS at ``t`` (share of time, 0..1); NaN if not yet defined.
    """

    closures: tuple
    closed_s: float
    perclos: float


@dataclass
class FatigueTrace(ChannelTrace):
    """Per-sample fatigue channel of a recording (see :func:`~distractd.pipeline.detect_fatigue`):
    ``t``, and

    Attributes
    ----------
    available : ndarray of shape (n_samples,), dtype bool
        The fatigue state is known at the sample (False for a rejected sample).
    eyes_closed_s : ndarray of shape (n_samples,)
        Current eye closure so far, seconds (0 open; NaN unavailable or rejected).
    perclos : ndarray of shape (n_samples,)
        P80 PERCLOS over ``fatigue_perclos_window_s`` (share of time; NaN undefined).
    blink_duration_s : ndarray of shape (n_samples,)
        Mean blink duration over the same span, seconds (NaN: none).
    drowsy : ndarray of shape (n_samples,), dtype bool
    alerts : list of FatigueAlert
    """

    available: np.ndarray
    eyes_closed_s: np.ndarray
    perclos: np.ndarray
    blink_duration_s: np.ndarray
    drowsy: np.ndarray
    alerts: list


class FatigueChannel(Channel, name="fatigue", output=OUTPUT, alert=FatigueAlert,
                     kinds=FATIGUE_ALERT_KINDS, max_alert_rows=CLOSURES + 3):   # a row per closure
    """State of one stream's fatigue channel; the processor feeds it (see the module docstring and
    :mod:`~distractd.pipeline.channels`).

    Per-stream memory: about 1 KB, plus 40 bytes per :data:`BIN_S` of
    ``fatigue_perclos_window_s`` (4.8 KB at the defaults).

    Parameters
    ----------
    config : PipelineConfig

    Attributes
    ----------
    has_eyelid : bool
        The stream has had an eyelid value (without one the fatigue state is never available).
    level_ready : bool
        The open-eye level is learned (``warmup_s`` of visible eyelid seen).
    open_level : float
        The driver's open-eye aperture as learned so far (1.0, the schema's open baseline,
        before any eyelid value).
    """

    def __init__(self, config):
        super().__init__(config)
        self._state = one_record(STATE, _reset)
        n_bins = math.ceil(config.fatigue_perclos_window_s / BIN_S) + 1 if config.fatigue else 2
        ring = np.empty(n_bins, BIN)
        _clear_ring(ring)
        self.kernel = (self._state, np.zeros(1, OUTPUT), ring, np.zeros((CLOSURES, 2)))
        """The compiled pass's arrays: the state, the latest sample's outputs, the PERCLOS bins
        and the recent long closures (start, end)."""

    @staticmethod
    def trace(t, rejected, outputs, alerts):
        """The :class:`FatigueTrace` of a recording's per-sample outputs (``rejected``: samples
        validation dropped: unavailable, NaN)."""
        outputs[rejected] = np.nan
        return FatigueTrace(t, outputs["available"] == 1.0, outputs["closed_s"].copy(),
                            outputs["perclos"].copy(), outputs["blink_s"].copy(),
                            outputs["drowsy"] == 1.0, alerts)

    @property
    def has_eyelid(self):
        return bool(self._state["has_eyelid"][0] == 1.0)

    @property
    def level_ready(self):
        return bool(self._state["seen_s"][0] >= self.config.warmup_s)

    @property
    def open_level(self):
        return float(self._state["level"][0])


@njit(cache=True)
def _reset(states):
    """The initial state in the one-record array ``states``: nothing seen."""
    states[0] = _ZEROS[0]
    state = states[0]
    state.level = 1.0
    state.hidden_t = np.nan
    state.bin = -np.inf
    state.perclos = state.blink_mean = np.nan


@njit(cache=True)
def _restart(kernel, face):
    """A new clock: the fatigue channel starts afresh, open-eye level and drowsy latch included,
    like the glance channel (a restarted tracker may have a new eyelid scale)."""
    states, _, ring, _ = kernel
    _reset(states)
    _clear_ring(ring)
    _publish(states[0], face)


@njit(cache=True)
def _clear_ring(ring):
    """Forget every bin (none held)."""
    for row in range(ring.shape[0]):
        ring[row] = _EMPTY_BIN[0]
        ring[row].id = -1.0


@njit(cache=True)
def _advance(ring, state, b, t, params, closures, alerts, n_a):
    """Open the bins after the state's latest up to ``b``; evaluate PERCLOS, the mean blink
    duration and the drowsiness rule over the span's complete bins. Returns the alert row count.
    """
    n = ring.shape[0]
    h = max(state.bin + 1.0, b - n + 1.0)
    while h <= b:
        row = int(h) % n
        ring[row] = _EMPTY_BIN[0]
        ring[row].id = h
        h += 1.0
    state.bin = b
    visible = closed = blinks = blink_s = 0.0
    for i in range(1, n):
        row = int(b - i) % n
        if ring[row].id == b - i:
            visible += ring[row].visible_s
            closed += ring[row].closed_s
            blinks += ring[row].blinks
            blink_s += ring[row].blink_s
    span = (n - 1) * BIN_S
    state.perclos = closed / visible if visible >= MIN_COVER * span and visible > 0.0 else np.nan
    state.blink_mean = blink_s / blinks if blinks > 0.0 and visible > 0.0 else np.nan
    perclos = state.perclos
    if perclos == perclos:
        if state.drowsy == 1.0 and perclos < params.fatigue_perclos_recovered:
            state.drowsy = 0.0
        elif (state.drowsy == 0.0 and perclos >= params.fatigue_perclos_drowsy
              and state.blink_mean >= params.fatigue_blink_drowsy_s):
            state.drowsy = 1.0
            n_a = _drowsiness_rows(t, perclos, span, state, closures, alerts, n_a)
    return n_a


@njit(cache=True, inline="always")
def _end_closure(state, closures):
    """The current closure ends at its last closed sample; keep it if it is long."""
    start = state.start
    end = state.last_closed
    if end - start >= LONG_CLOSURE_S:
        state.c_head, state.c_n = keep_episode(closures, state.c_head, state.c_n, start, end)
    state.closed = 0.0


@njit(cache=True, inline="always")
def _learn_level(aperture, step, open_at, params, state):
    """Follow the open-eye level: during the warm-up the running mean of the apertures open for
    every driver (at least ``fatigue_open_fraction`` of :data:`MIN_OPEN_LEVEL`: eyes closed or
    near shut from the start teach nothing; the first such sample sets it), then an exponential
    mean of open eyes outside closures."""
    if state.seen_s < params.warmup_s:
        if aperture < params.fatigue_open_fraction * MIN_OPEN_LEVEL:
            return
        seen = state.seen_s + step
        if seen > 0.0:
            state.level += step / seen * (aperture - state.level)
        else:
            state.level = aperture
        state.seen_s = seen
        return
    if state.closed == 0.0 and aperture >= open_at:
        state.level += min(step / params.fatigue_open_memory_s, 1.0) * (aperture - state.level)
    state.seen_s += step


@njit(cache=True, inline="always")
def _fatigue_step(x, t, dt, gap, blink_s, params, face, state, ring, closures, out, alerts,
                  n_a):
    """Advance the fatigue channel by one accepted sample; write its outputs to ``out`` (an
    :data:`OUTPUT` record) and any alert rows to ``alerts`` from row ``n_a``. Returns the new
    alert row count.

    ``dt`` is the step from the previous accepted sample, ``gap`` whether it is a gap,
    ``blink_s`` the duration of a blink the blink detector accepted at this
    sample (else NaN), ``face`` the shared face record (the on-road head pose it reads).
    """
    b = np.floor(t / BIN_S)
    if b > state.bin:
        n_a = _advance(ring, state, b, t, params, closures, alerts, n_a)
    slot = ring[int(b) % ring.shape[0]]
    step = 0.0 if gap else dt
    lids = aperture(x)
    if lids == lids:
        state.has_eyelid = 1.0
    ready = state.seen_s >= params.warmup_s
    level = state.level if ready else MIN_OPEN_LEVEL   # until learned, every driver's eye
    closed_at = params.fatigue_closed_fraction * level
    open_at = params.fatigue_open_fraction * level
    visible = lids == lids and not (x[_CONFIDENCE] < params.confidence_min and lids >= open_at)
    if gap and state.closed == 1.0 and dt > params.fatigue_hidden_s:   # its end is unknown
        state.closed = 0.0
        state.dead = 1.0
    if visible:
        state.hidden_t = np.nan
        _learn_level(lids, step, open_at, params, state)
        slot.visible_s += step
        if lids <= closed_at:
            slot.closed_s += step
        if blink_s == blink_s:
            slot.blinks += 1.0
            slot.blink_s += blink_s
    else:
        if state.hidden_t != state.hidden_t:
            state.hidden_t = t
        if state.closed == 1.0 and t - state.hidden_t > params.fatigue_hidden_s:
            state.closed = 0.0   # hidden too long: the closure's end is unknown
            state.dead = 1.0
    if visible:
        if lids >= open_at:
            if state.closed == 1.0:
                _end_closure(state, closures)
                shut_s = state.last_closed - state.start
                if params.blink_max_s < shut_s < params.fatigue_microsleep_s:
                    slot.blinks += 1.0   # a slow closure, longer than any blink the detector
                    slot.blink_s += shut_s   # accepts, shorter than a microsleep
            state.dead = 0.0
        elif lids <= closed_at and state.closed == 0.0 and state.dead == 0.0:
            if gap:
                state.dead = 1.0   # closed since some time in the gap
            else:
                state.closed = 1.0
                state.start = t
                state.micro_done = 0.0
                state.sleep_done = 0.0
        if state.closed == 1.0:
            state.last_closed = t
            if facing_forward(x, params, face):
                n_a = _closure_alerts(t, state.perclos, params, state, alerts, n_a)
    available = visible and (state.seen_s >= params.warmup_s or state.closed == 1.0)
    out.available = 1.0 if available else 0.0
    if available:
        out.closed_s = t - state.start if state.closed == 1.0 \
            else np.nan if state.dead == 1.0 else 0.0   # dead: closed, since when unknown
    else:
        out.closed_s = np.nan
    out.perclos = state.perclos
    out.blink_s = state.blink_mean
    out.drowsy = state.drowsy
    return n_a


@njit(cache=True, inline="always")
def _closure_alerts(t, perclos, params, state, alerts, n_a):
    """Microsleep and sleep: once per closure, when it reaches their durations."""
    closed_s = t - state.start
    if state.micro_done == 0.0 and closed_s >= params.fatigue_microsleep_s:
        state.micro_done = 1.0
        n_a = write_alert(alerts, n_a, MICROSLEEP, t, closed_s, perclos, state.start, t, True)
    if state.sleep_done == 0.0 and closed_s >= params.fatigue_sleep_s:
        state.sleep_done = 1.0
        n_a = write_alert(alerts, n_a, SLEEP, t, closed_s, perclos, state.start, t, True)
    return n_a


@njit(cache=True, inline="always")
def _drowsiness_rows(t, perclos, span, state, closures, alerts, n_a):
    """Write a drowsiness alert with the long closures that ended within the span."""
    since = t - span
    size = closures.shape[0]
    head = int(state.c_head)
    used = 0
    for i in range(int(state.c_n)):
        if closures[(head - 1 - i) % size, 1] <= since:
            break
        used += 1
    if used == 0:
        return write_alert(alerts, n_a, DROWSINESS, t, np.nan, perclos, np.nan, np.nan, True)
    return write_episodes(alerts, n_a, DROWSINESS, t, np.nan, perclos, closures, head, used)


@njit(cache=True, inline="always")
def _step(kernel, x, sample, params, face, alerts, n_a):
    """The protocol's step: :func:`_fatigue_step`, then the eyelid published in ``face``."""
    states, outs, ring, closures = kernel
    state = states[0]
    n_a = _fatigue_step(x, sample.t, sample.dt, sample.gap == 1.0, sample.blink_s, params, face,
                        state, ring, closures, outs[0], alerts, n_a)
    _publish(state, face)
    return n_a


@njit(cache=True, inline="always")
def _publish(state, face):
    """What the glance channel reads of the eyelid: the open level, how long it was learned, the
    closure."""
    face.eyes_seen_s = state.seen_s
    face.eyes_level = state.level
    face.eyes_closed = state.closed


@njit(cache=True, inline="always")
def _to_hop(kernel, slot):
    """Keep the latest sample's outputs as its hop's latest fatigue state."""
    f = kernel[1][0]
    slot.f_set = 1.0
    slot.f_available = f.available
    slot.f_closed_s = f.closed_s
    slot.f_perclos = f.perclos
    slot.f_blink_s = f.blink_s
    slot.f_drowsy = f.drowsy


implement(STATE, "fatigue", _step, _to_hop, _restart)
