"""Per-sample validation: timestamps, clock jumps and resets, finiteness, ranges, gaps, track loss,
measured rate.

Every problem is counted by reason (:data:`SAMPLE_REJECT_REASONS`). A sample with a bad ``t`` is
dropped; a sample with a bad *field* keeps its other fields (the field becomes NaN); a gap or a
low-confidence sample is counted and kept. The sample rate is measured per stream: a running
estimate of the typical sample period that ignores drops and jitter and re-locks when the tracker
changes rate.

Time order (:func:`_order`) is decided before the fields are checked, and may hold a sample back:

- a forward step over ``max_jump_s`` is *suspect*: the sample is held; if the next sample goes on
  from it (later, within ``max_jump_s``) the jump is real (a pause: both are processed, the step is
  a gap); otherwise the suspect is dropped as ``t_jump`` and the next sample is judged against the
  old clock;
- a sample before the stream's latest time starts (or extends) a *backwards run* of held samples.
  The run goes on while its samples increase with steps up to ``max(max_gap_s, 2.5 periods)``; once
  it is at least 3 samples and ``clock_reset_s`` long it is a clock reset (``clock_reset`` counted
  once): the caller restarts the stream's state and processes the run. A run that breaks (a step
  out of line, or a sample on the old clock) is dropped as ``backwards_t``. The run buffer holds
  the last :data:`HOLD_ROWS` samples; earlier ones are dropped as ``backwards_t`` as they leave it.

The held samples (suspect, run, and the queue of samples released for processing) share one small
buffer per stream, as their uses never overlap.
"""

import numpy as np
from numba import njit

from ._config import _CONFIDENCE, _GAZE, _PUPIL, _TIME, _record
from .formats import N_FIELDS

__all__ = ["SAMPLE_REJECT_REASONS"]

SAMPLE_REJECT_REASONS = (
    "nonfinite_t", "t_out_of_range", "duplicate_t", "backwards_t", "nonfinite_value", "out_of_range", "gap",
    "low_confidence", "t_jump", "clock_reset",
)
"""Counted reasons, in order. ``nonfinite_t``, ``t_out_of_range`` (``|t|`` over :data:`T_MAX_S`, a
clock in the wrong unit), ``duplicate_t``, ``backwards_t`` and ``t_jump`` (a lone forward jump over
``max_jump_s``) drop the sample; ``nonfinite_value`` (an infinite field) and ``out_of_range`` (a field
outside :data:`~distractd.pipeline.RANGES`) blank that field only; ``gap`` (a time step over
``max_gap_s`` and 2.5 sample periods) and ``low_confidence`` (confidence below ``confidence_min``:
track loss) keep the sample; ``clock_reset`` counts restarts of the stream's clock (not samples)."""

T_MAX_S = 1e12
"""Largest accepted ``|t|`` in seconds (about 31,700 years)."""

HOLD_ROWS = 32
"""Samples a stream can hold back while its clock is in question."""

# Per-row status codes written by the kernel.
ACCEPTED = 0      # a tracked sample
TRACK_LOSS = 1    # accepted, but the eyes are not tracked (low confidence or no gaze)
REJECTED = 2      # 2 + index into SAMPLE_REJECT_REASONS for the dropping reasons
_NONFINITE_T, _T_RANGE, _DUPLICATE, _BACKWARDS = 0, 1, 2, 3
_NONFINITE_VALUE, _OUT_OF_RANGE, _GAP, _LOW_CONFIDENCE, _T_JUMP, _CLOCK_RESET = 4, 5, 6, 7, 8, 9

# Decisions of _order.
ORDER_ACCEPT = 0    # process the sample now
ORDER_DROP = 1      # rejected and counted
ORDER_HOLD = 2      # held back (suspect or backwards run)
ORDER_QUEUED = 3    # a suspect confirmed: it and this sample wait in the queue
ORDER_RESET = 4     # a clock reset: restart the stream, then process the queued run

# Validation state.
STATE = _record(
    "last_t",
    "period",       # running estimate of the sample period, s (0 = unknown)
    "n_outliers",   # consecutive periods far from the estimate
    "started",
    "dt",           # time since the previous accepted sample (0 for the first), s
    "gap",          # 1 when the last accepted sample followed a gap
    "epoch",        # clock resets so far
    "suspect",      # 1 while a suspect sample is held in row 0 of the buffer
    "run_n",        # samples in the backwards run (evicted ones included)
    "run_t0",
    "run_last",
    "q_head",       # first queued buffer row
    "q_n",          # queued rows
    ("counts", (len(SAMPLE_REJECT_REASONS),)),   # per reason of SAMPLE_REJECT_REASONS
)

# Held-sample buffer columns: the raw fields, the label, the sample's index in the stream.
_B_LABEL = N_FIELDS
_B_INDEX = N_FIELDS + 1
_B_SIZE = N_FIELDS + 2

_RATE_ALPHA = 1.0 / 32.0   # smoothing of the period estimate, per sample
_RATE_BAND = 1.5           # periods within [p / band, p * band] update the estimate
_RATE_RELOCK = 8           # this many consecutive outside the band re-lock it
_GAP_PERIODS = 2.5
_RESET_MIN_SAMPLES = 3



def _new_state():
    return np.zeros(1, STATE)


def _new_buffer():
    return np.zeros((HOLD_ROWS, _B_SIZE))


@njit(cache=True, inline="always")
def _mark(rows, k, status):
    """Record ``status`` for row ``k`` of the per-row outputs (``_processor.ROW`` records) when
    they are wanted and hold it."""
    if 0 <= k < rows.shape[0]:
        rows[k].status = status


@njit(cache=True, inline="always")
def _drop(state, reason, rows, k):
    state.counts[reason] += 1.0
    _mark(rows, k, REJECTED + reason)
    return ORDER_DROP


@njit(cache=True, inline="always")
def _store(buffer, slot, x, label, index):
    for j in range(N_FIELDS):
        buffer[slot, j] = x[j]
    buffer[slot, _B_LABEL] = label
    buffer[slot, _B_INDEX] = index


@njit(cache=True)
def _break_run(state, buffer, rows, base):
    """Drop the held backwards run (its evicted samples were counted when they left)."""
    n = int(state.run_n)
    cap = buffer.shape[0]
    for k in range(max(0, n - cap), n):
        _drop(state, _BACKWARDS, rows, int(buffer[k % cap, _B_INDEX]) - base)
    state.run_n = 0.0


@njit(cache=True)
def _backwards(x, label, index, params, state, buffer, rows, base):
    """A sample before the stream's latest time: extend or start the backwards run."""
    t = x[_TIME]
    cap = buffer.shape[0]
    n = int(state.run_n)
    if n > 0:
        step = t - state.run_last
        if step == 0.0:
            return _drop(state, _DUPLICATE, rows, index - base)
        if not 0.0 < step <= max(params.max_gap_s, _GAP_PERIODS * state.period):
            _break_run(state, buffer, rows, base)
            n = 0
    if n == 0:
        state.run_t0 = t
    elif n >= cap:   # the oldest held sample leaves the buffer
        _drop(state, _BACKWARDS, rows, int(buffer[n % cap, _B_INDEX]) - base)
    _store(buffer, n % cap, x, label, index)
    n += 1
    state.run_n = n
    state.run_last = t
    if n >= _RESET_MIN_SAMPLES and t - state.run_t0 >= params.clock_reset_s:
        kept = min(n, cap)
        state.q_head = (n - kept) % cap
        state.q_n = kept
        state.run_n = 0.0
        state.counts[_CLOCK_RESET] += 1.0
        return ORDER_RESET
    return ORDER_HOLD


@njit(cache=True, inline="always")
def _order(x, label, index, params, state, buffer, rows, base):
    """Decide a new sample's place in time (an ``ORDER_*`` code); ``index - base`` is its row."""
    t = x[_TIME]
    if not np.isfinite(t):
        return _drop(state, _NONFINITE_T, rows, index - base)
    if abs(t) > T_MAX_S:
        return _drop(state, _T_RANGE, rows, index - base)
    if state.started == 0.0:
        return ORDER_ACCEPT
    if state.suspect == 1.0:
        suspect = buffer[0, _TIME]
        if t == suspect:
            return _drop(state, _DUPLICATE, rows, index - base)
        state.suspect = 0.0
        if suspect < t <= suspect + params.max_jump_s:
            _store(buffer, 1, x, label, index)
            state.q_head = 0.0
            state.q_n = 2.0
            return ORDER_QUEUED
        _drop(state, _T_JUMP, rows, int(buffer[0, _B_INDEX]) - base)
    last = state.last_t
    if t == last:
        return _drop(state, _DUPLICATE, rows, index - base)
    if t < last:
        return _backwards(x, label, index, params, state, buffer, rows, base)
    if state.run_n > 0.0:
        _break_run(state, buffer, rows, base)
    if t - last > params.max_jump_s:
        _store(buffer, 0, x, label, index)
        state.suspect = 1.0
        return ORDER_HOLD
    return ORDER_ACCEPT


@njit(cache=True)
def _release(state, buffer, rows, base):
    """End of stream: drop what is still held (an unconfirmed suspect, a short backwards run)."""
    if state.suspect == 1.0:
        state.suspect = 0.0
        _drop(state, _T_JUMP, rows, int(buffer[0, _B_INDEX]) - base)
    if state.run_n > 0.0:
        _break_run(state, buffer, rows, base)


@njit(cache=True, inline="always")
def _validate_row(x, params, state):
    """Check the fields of sample ``x`` (a copy, cleaned in place), whose time order is settled;
    return its status code."""
    t = x[_TIME]
    nonfinite = False
    out_of_range = False
    for j in range(1, x.shape[0]):
        v = x[j]
        if np.isinf(v):
            nonfinite = True
            x[j] = np.nan
        elif v < params.low[j] or v > params.high[j]:
            out_of_range = True
            x[j] = np.nan
    if nonfinite:
        state.counts[_NONFINITE_VALUE] += 1
    if out_of_range:
        state.counts[_OUT_OF_RANGE] += 1
    if state.started == 1.0:
        dt = t - state.last_t
        _update_period(dt, state)
        gap = dt > params.max_gap_s and dt > _GAP_PERIODS * state.period
        if gap:
            state.counts[_GAP] += 1
    else:
        dt = 0.0
        gap = False
        state.started = 1.0
    state.last_t = t
    state.dt = dt
    state.gap = 1.0 if gap else 0.0
    lost = False
    if x[_CONFIDENCE] < params.confidence_min:   # False for NaN: no confidence field
        state.counts[_LOW_CONFIDENCE] += 1
        lost = True
    elif _no_gaze(x):
        lost = True
    if lost:
        # Gaze and pupil of an untracked eye are not data. The eyelid aperture is measured from
        # the lids, not the pupil, so a finite value is kept: a tracker loses the pupil exactly
        # when the lid closes, and blanking the lid would hide every closure from PERCLOS.
        for j in _GAZE + _PUPIL:
            x[j] = np.nan
        return TRACK_LOSS
    return ACCEPTED


@njit(cache=True, inline="always")
def _no_gaze(x):
    """Sample ``x`` has no gaze value of either eye."""
    for j in _GAZE:
        if not np.isnan(x[j]):
            return False
    return True


@njit(cache=True, inline="always")
def _update_period(dt, state):
    period = state.period
    if period == 0.0:
        state.period = dt
    elif period / _RATE_BAND <= dt <= period * _RATE_BAND:
        state.period = period + _RATE_ALPHA * (dt - period)
        state.n_outliers = 0.0
    else:
        state.n_outliers += 1.0
        if state.n_outliers >= _RATE_RELOCK:
            state.period = dt
            state.n_outliers = 0.0
