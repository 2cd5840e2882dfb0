"""Per-sample validation: timestamps, finiteness, ranges, gaps, track loss, measured rate.

Every problem is counted by reason (:data:`REJECT_REASONS`). A sample with a bad ``t`` is dropped; a
sample with a bad *field* keeps its other fields (the field becomes NaN); a gap or a low-confidence
sample is counted and kept. The sample rate is measured per stream: a running estimate of the typical
sample period that ignores drops and jitter and re-locks when the tracker changes rate.
"""

import numpy as np
from numba import njit

from ._config import _P_CONFIDENCE_MIN, _P_HIGH, _P_LOW, _P_MAX_GAP_S

__all__ = ["REJECT_REASONS"]

REJECT_REASONS = (
    "nonfinite_t", "t_out_of_range", "duplicate_t", "backwards_t", "nonfinite_value", "out_of_range", "gap",
    "low_confidence",
)
"""Counted reasons, in order. The first four drop the sample (``t_out_of_range``: ``|t|`` over
:data:`T_MAX_S`, a clock in the wrong unit that would stall the stream); ``nonfinite_value`` (an infinite
field) and ``out_of_range`` (a field outside :data:`~distractd.pipeline.RANGES`) blank that field
only; ``gap`` (a time step over ``max_gap_s`` and 2.5 sample periods) and ``low_confidence``
(confidence below ``confidence_min``: track loss) keep the sample."""

T_MAX_S = 1e12
"""Largest accepted ``|t|`` in seconds (about 31,700 years)."""

# Per-row status codes written by the kernel.
ACCEPTED = 0      # a tracked sample
TRACK_LOSS = 1    # accepted, but the eyes are not tracked (low confidence or no gaze)
REJECTED = 2      # 2 + index into REJECT_REASONS for the dropping reasons

# Validation state vector layout.
_V_LAST_T = 0
_V_PERIOD = 1          # running estimate of the sample period, s (0 = unknown)
_V_N_OUTLIERS = 2      # consecutive periods far from the estimate
_V_STARTED = 3
_V_DT = 4              # time since the previous accepted sample (0 for the first), s
_V_GAP = 5             # 1 when the last accepted sample followed a gap
_V_COUNTS = 6          # len(REJECT_REASONS) counters
_V_SIZE = _V_COUNTS + len(REJECT_REASONS)

_RATE_ALPHA = 1.0 / 32.0   # smoothing of the period estimate, per sample
_RATE_BAND = 1.5           # periods within [p / band, p * band] update the estimate
_RATE_RELOCK = 8           # this many consecutive outside the band re-lock it
_GAP_PERIODS = 2.5

_CONFIDENCE = 15


def _new_state():
    return np.zeros(_V_SIZE)


@njit(cache=True, inline="always")
def _validate_row(x, params, state):
    """Validate sample ``x`` (a copy, cleaned in place); return its status code."""
    t = x[0]
    if not np.isfinite(t):
        state[_V_COUNTS + 0] += 1
        return REJECTED + 0
    if abs(t) > T_MAX_S:
        state[_V_COUNTS + 1] += 1
        return REJECTED + 1
    if state[_V_STARTED] == 1.0:
        if t == state[_V_LAST_T]:
            state[_V_COUNTS + 2] += 1
            return REJECTED + 2
        if t < state[_V_LAST_T]:
            state[_V_COUNTS + 3] += 1
            return REJECTED + 3
    nonfinite = False
    out_of_range = False
    for j in range(1, x.shape[0]):
        v = x[j]
        if np.isinf(v):
            nonfinite = True
            x[j] = np.nan
        elif v < params[_P_LOW + j] or v > params[_P_HIGH + j]:
            out_of_range = True
            x[j] = np.nan
    if nonfinite:
        state[_V_COUNTS + 4] += 1
    if out_of_range:
        state[_V_COUNTS + 5] += 1
    if state[_V_STARTED] == 1.0:
        dt = t - state[_V_LAST_T]
        _update_period(dt, state)
        gap = dt > params[_P_MAX_GAP_S] and dt > _GAP_PERIODS * state[_V_PERIOD]
        if gap:
            state[_V_COUNTS + 6] += 1
    else:
        dt = 0.0
        gap = False
        state[_V_STARTED] = 1.0
    state[_V_LAST_T] = t
    state[_V_DT] = dt
    state[_V_GAP] = 1.0 if gap else 0.0
    lost = False
    if x[_CONFIDENCE] < params[_P_CONFIDENCE_MIN]:   # False for NaN: no confidence field
        state[_V_COUNTS + 7] += 1
        lost = True
    elif np.isnan(x[7]) and np.isnan(x[8]) and np.isnan(x[9]) and np.isnan(x[10]):
        lost = True
    if lost:
        for j in range(7, 15):   # gaze, eyelid, pupil of an untracked eye are not data
            x[j] = np.nan
        return TRACK_LOSS
    return ACCEPTED


@njit(cache=True, inline="always")
def _update_period(dt, state):
    period = state[_V_PERIOD]
    if period == 0.0:
        state[_V_PERIOD] = dt
    elif period / _RATE_BAND <= dt <= period * _RATE_BAND:
        state[_V_PERIOD] = period + _RATE_ALPHA * (dt - period)
        state[_V_N_OUTLIERS] = 0.0
    else:
        state[_V_N_OUTLIERS] += 1.0
        if state[_V_N_OUTLIERS] >= _RATE_RELOCK:
            state[_V_PERIOD] = dt
            state[_V_N_OUTLIERS] = 0.0
