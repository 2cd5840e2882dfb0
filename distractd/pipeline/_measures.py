"""Derived measures: blink frequency and mean blink duration (60 s), PERCLOS (180 s).

Per hop the ring keeps the blinks that ended in it, their summed duration, the time the eye was
observed (tracked samples and blink candidates, weighted by their time step), the time an
eyelid signal was present and the part of it with closure at or above ``perclos_closure``. A
measure at a sample covers the last ``blink_window_s`` (``perclos_window_s``) of hops, the current
one included, so its span is the window plus up to one hop. Totals over the complete hops are
recomputed from the ring when a hop opens, so they never drift.

Unavailable is NaN, never zero: blink measures when blinks are unresolvable (rate below
``blink_min_rate_hz``) or observed for less than ``warmup_s``; mean duration also when no blink
ended in the span; PERCLOS when the eyelid signal covered less than ``warmup_s`` (always, for a
tracker without eyelid signal). Warm-up: from ``warmup_s`` of signal on, a measure is computed over
the part of its window seen so far.
"""

import numpy as np
from numba import njit

from ._config import _EYELID, _record

# A hop of the measure ring: its hop number (-1: none held), then its sums.
HOP = _record("id", "blinks", "blink_s", "observed_s", "eyelid_s", "closed_s")
_EMPTY_HOP = np.zeros(1, HOP)   # copied to clear a hop (a global array: numba never frees it)

# Measure state: totals over the complete hops of each span.
STATE = _record("blinks", "blink_s", "observed_s", "eyelid_s", "closed_s")


def _new_ring(n_hops):
    ring = np.empty(n_hops, HOP)
    _clear_ring(ring)
    return ring


@njit(cache=True)
def _clear_ring(ring):
    """Forget every hop (no hop held)."""
    for row in range(ring.shape[0]):
        ring[row] = _EMPTY_HOP[0]
        ring[row].id = -1.0


def _new_state():
    return np.zeros(1, STATE)


@njit(cache=True, inline="always")
def _clear_totals(state):
    state.blinks = 0.0
    state.blink_s = 0.0
    state.observed_s = 0.0
    state.eyelid_s = 0.0
    state.closed_s = 0.0


@njit(cache=True)
def _advance(ring, state, last_hop, hop, params):
    """Open the hops after ``last_hop`` up to ``hop`` and recompute the complete-hop totals."""
    n = ring.shape[0]
    h = max(last_hop + 1.0, hop - n + 1.0)
    while h <= hop:
        row = int(h) % n
        ring[row] = _EMPTY_HOP[0]
        ring[row].id = h
        h += 1.0
    _clear_totals(state)
    for i in range(1, int(params.blink_hops)):
        row = int(hop - i) % n
        if ring[row].id == hop - i:
            state.blinks += ring[row].blinks
            state.blink_s += ring[row].blink_s
            state.observed_s += ring[row].observed_s
    for i in range(1, int(params.perclos_hops)):
        row = int(hop - i) % n
        if ring[row].id == hop - i:
            state.eyelid_s += ring[row].eyelid_s
            state.closed_s += ring[row].closed_s


@njit(cache=True, inline="always")
def _measure_sample(ring, state, hop, params, x, dt, blink_status, blink_duration, out):
    """Add one accepted sample; write blink frequency (Hz), duration (s), PERCLOS to ``out[2:5]``."""
    slot = ring[int(hop) % ring.shape[0]]
    if blink_status >= 0:
        slot.observed_s += dt
    if not np.isnan(blink_duration):
        slot.blinks += 1.0
        slot.blink_s += blink_duration
    opening = np.nan
    right = x[_EYELID[0]]
    left = x[_EYELID[1]]
    if not np.isnan(right) and not np.isnan(left):
        opening = 0.5 * (right + left)
    elif not np.isnan(right):
        opening = right
    elif not np.isnan(left):
        opening = left
    if not np.isnan(opening):
        slot.eyelid_s += dt
        if opening <= params.perclos_opening_max:
            slot.closed_s += dt
    warmup = params.warmup_s
    out[2] = out[3] = out[4] = np.nan
    if blink_status >= -1:
        observed = state.observed_s + slot.observed_s
        if observed >= warmup and observed > 0.0:
            blinks = state.blinks + slot.blinks
            out[2] = blinks / observed
            if blinks > 0.0:
                out[3] = (state.blink_s + slot.blink_s) / blinks
    eyelid = state.eyelid_s + slot.eyelid_s
    if eyelid >= warmup and eyelid > 0.0:
        out[4] = (state.closed_s + slot.closed_s) / eyelid
