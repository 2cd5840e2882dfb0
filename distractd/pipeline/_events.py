"""Online, causal eye events: saccades from gaze-rotation velocity, blinks from eyelid or track
loss, and fixations between them.

Both detectors are run-length state machines over accepted samples. A sample that may belong to an
event is added to its hop as *pending*; when the run ends, the event is accepted (pending added to
the hop sums and written to the event list) or rejected (pending dropped). A run that outgrows its
maximum duration is rejected at once, so every event is settled at most ``lag_s`` after it started.

Saccades: the velocity of each eye's gaze rotation between consecutive samples (the great-circle
angle, small-angle form), averaged over the eyes valid in both samples (binocular where possible),
less the *smooth gaze velocity* (its exponential mean over the samples in no saccade candidate, time
constant ``pursuit_tau_s``: zero on a still gaze, the pursuit's velocity during smooth pursuit), is
compared with the adaptive threshold (``saccade_velocity_deg_s`` or, when higher,
``saccade_noise_factor`` times the stream's median-based noise scale, after Engbert & Kliegl 2003).
A run of fast samples is a saccade when it lasts at least
``saccade_min_s`` (from the sample before the first fast one), at most ``saccade_max_s``, moves the
cyclopean gaze by at least ``saccade_min_amplitude_deg`` (or, when larger,
``saccade_noise_amplitude_factor`` times the recent fixation samples' mean gaze step: the tracker's
noise) and ends on a tracked sample (a fast run into track loss is the eyelid sweeping over the
pupil at a blink, not a saccade). Below ``saccade_min_rate_hz`` saccades are unavailable (NaN).

Blinks: the eye is *closed* when the mean eyelid opening is below ``blink_opening_max`` or, where a
sample has no eyelid value, when the eye is not tracked. A closed run is a blink when its duration
(midpoint of the last open and first closed sample to midpoint of last closed and next open)
is within ``[blink_min_s, blink_max_s]``; runs cut by a gap are rejected. A stream that starts
closed starts in a blink (from its first sample's period on, as a coder marks one). Below
``blink_min_rate_hz`` blinks are unavailable (NaN).

Smooth pursuit: while the smooth gaze velocity is faster than ``pursuit_velocity_deg_s`` and than
three times the mean the tracker's noise alone would give it, the gaze is pursuing: such samples
are neither saccade nor fixation (the explicit *other*: tracked, in no event), and they end an open
fixation.

Fixations: a run of tracked samples that are in no saccade candidate, blink candidate or pursuit, of at
least ``fixation_min_s`` (the samples' periods), as an I-VT filter post-processes its fixations
(Olsen 2012): an accepted saccade (or a fast run too long to be one) ends the fixation before it;
a rejected candidate's samples stay in it; track loss or eyelid closure ends it after
``fixation_merge_gap_s``, and a shorter gap ends it only when the gaze comes back more than
``fixation_merge_deg`` away. A fixation still open at the end of the data (or of a clock) ends
there. Fixations feed no window feature; they are events and per-sample flags, found only when
the processor is asked for events.

With ``use_tracker_flags`` the tracker's ``saccade``/``blink`` fields replace the detectors' closed
and fast tests (a NaN flag is unavailable), and the duration and amplitude tests are skipped except
the maxima.
"""

import numpy as np
from numba import njit

from ._config import _BLINK_FLAG, _EYELID, _GAZE, _GAZE_PITCH, _GAZE_YAW, _SACCADE_FLAG, _record
from .channels._face import cyclopean as _cyclopean
from ._windows import BLINK, SACCADE, _settle, _slot

__all__ = ["EVENT_KINDS", "EVENT_ROW"]

EVENT_KINDS = ("saccade", "blink", "fixation")
"""Event kinds, indexed by the ``kind`` field of an event row."""

EVENT_ROW = _record(
    "kind",        # index into EVENT_KINDS
    "t_first",     # first and last sample time, s
    "t_last",
    "duration",    # s
    "amplitude",   # degrees (saccades; NaN otherwise)
    "peak",        # peak speed, degrees per second (saccades; NaN otherwise)
    "epoch",       # the stream's clock epoch: clock resets before the event (set by the processor)
)
"""One eye event as the detectors write it (:class:`~distractd.pipeline.Events` tabulates them)."""

_IDLE, _OPEN, _DEAD = 0.0, 1.0, 2.0

# Event state.
STATE = _record(
    "started",
    "last_t",
    ("prev", (4,)),   # previous sample's r_yaw, r_pitch, l_yaw, l_pitch (NaN when untracked)
    "prev_yaw",       # previous cyclopean gaze
    "prev_pitch",
    "velocity",       # current gaze speed, rad/s (NaN when undefined)
    "s_state", "s_t0", "s_t_first", "s_t_last", "s_hop0", "s_yaw0", "s_pitch0", "s_yaw1",
    "s_pitch1", "s_peak",
    "b_state", "b_t_before", "b_t_first", "b_t_last", "b_hop0",
    "b_shut",         # 1 when the stream's first sample was closed (its rate still unknown)
    "noise_w",        # exponentially weighted sums of the fixation speeds: weight,
    "noise_s1",       # and speed (rad/s) of the samples under the threshold
    "threshold",      # current saccade speed threshold, rad/s
    "median",         # running median of the relative gaze speed, rad/s
    "n_median",       # speeds it has seen
    "s_break",        # 1 when a fast run was just accepted as a saccade or killed as too long
    "f_state",
    "f_t_first",
    "f_t_last",       # last sample of the open fixation
    "f_yaw",          # its cyclopean gaze
    "f_pitch",
    "f_away",         # 1 when samples outside the fixation followed its last one
    "smooth_w",       # weight of the smooth gaze velocity (0 until a still sample set it)
    "smooth_yaw",     # smooth gaze velocity, rad/s: exponential mean over samples in no candidate
    "smooth_pitch",
    "pursuit",        # 1 while the smooth velocity is a pursuit (this sample)
    "p_run",          # how long the smooth velocity has passed the pursuit test, s
)
_ZEROS = np.zeros(1, STATE)   # copied to clear a state (a global array, so numba never frees it)

_CONTINUITY_PERIODS = 2.5   # velocity only between samples at most this many periods apart

NOISE_TAU_S = 5.0
"""Memory of the saccade detector's noise estimate, seconds."""

_MEDIAN_MIN = 1e-6   # rad/s: the running median's floor (a still, noiseless gaze)


def _new_state():
    states = np.empty(1, STATE)
    _clear(states)
    return states


@njit(cache=True)
def _clear(states):
    """Reset the detectors of the one-record array ``states`` to their initial state (no
    previous sample, no open run)."""
    states[0] = _ZEROS[0]
    state = states[0]
    state.prev[:] = np.nan
    state.prev_yaw = state.prev_pitch = np.nan


@njit(cache=True)
def _abandon(state, ring, last_hop):
    """End of data: open runs can no longer be settled; their samples become unresolved (taken
    out of the event counts), and the runs are closed for good."""
    if state.s_state == _OPEN:
        _unresolve(ring, state.s_hop0, last_hop, SACCADE)
        state.s_state = _DEAD
    if state.b_state == _OPEN:
        _unresolve(ring, state.b_hop0, last_hop, BLINK)
        state.b_state = _DEAD


@njit(cache=True)
def _unresolve(ring, first_hop, last_hop, kind):
    """Take the pending samples of an open ``kind`` run over hops ``first_hop..last_hop`` out of
    the event counts, and drop them."""
    h = first_hop
    while h <= last_hop:
        row = _slot(ring, h)
        if row >= 0:
            slot = ring[row]
            if kind == SACCADE:
                slot.t_count[SACCADE] -= slot.pending_saccade
                slot.pending_saccade = 0.0
            else:
                counted = slot.pending_blink - slot.pending_blink_count
                slot.pending_blink_count = 0.0
                slot.t_count[BLINK] -= counted
                slot.pending_blink = 0.0
        h += 1.0


@njit(cache=True, inline="always")
def _eye_angle(yaw0, pitch0, yaw1, pitch1):
    dyaw = (yaw1 - yaw0) * np.cos(0.5 * (pitch0 + pitch1))
    dpitch = pitch1 - pitch0
    return np.sqrt(dyaw * dyaw + dpitch * dpitch)


@njit(cache=True, inline="always")
def _saccade_step(x, t, dt, gap, period, hop, last_hop, params, state, ring, events, n_events):
    """Advance the saccade detector by one accepted sample.

    Returns ``(status, n_events)``: status -2 unresolvable (rate too low), -1 no gaze, 0 not in a
    candidate, 1 joins one (the caller adds it to ``hop`` as pending).
    """
    velocity = np.nan
    v_yaw = v_pitch = np.nan
    if state.started == 1.0 and not gap and 0.0 < dt <= _CONTINUITY_PERIODS * period:
        dyaw = 0.0
        dpitch = 0.0
        n_eyes = 0
        for eye in range(2):
            yaw0 = state.prev[2 * eye]
            pitch0 = state.prev[2 * eye + 1]
            yaw1 = x[_GAZE_YAW[eye]]
            pitch1 = x[_GAZE_PITCH[eye]]
            if not (np.isnan(yaw0) or np.isnan(pitch0) or np.isnan(yaw1) or np.isnan(pitch1)):
                dyaw += (yaw1 - yaw0) * np.cos(0.5 * (pitch0 + pitch1))
                dpitch += pitch1 - pitch0
                n_eyes += 1
        if n_eyes > 0:   # the mean rotation of the eyes valid in both samples
            v_yaw = dyaw / n_eyes / dt
            v_pitch = dpitch / n_eyes / dt
            velocity = np.sqrt(v_yaw * v_yaw + v_pitch * v_pitch)
    relative = _relative_speed(v_yaw, v_pitch, velocity, params, state)
    threshold = _threshold(relative, dt, params, state)
    yaw, pitch = _cyclopean(x)
    if params.use_flags == 1.0:
        rate_ok = True
        available = not np.isnan(x[_SACCADE_FLAG])
        fast = available and x[_SACCADE_FLAG] >= 0.5
    else:
        rate_ok = period > 0.0 and params.saccade_min_rate_hz * period <= 1.0
        available = rate_ok and not np.isnan(yaw)
        fast = available and relative > threshold
    _smooth(v_yaw, v_pitch, dt, fast or state.s_state == _OPEN, period, params, state)
    flags = params.use_flags == 1.0

    if state.s_state == _OPEN:
        if fast and t - state.s_t0 <= params.saccade_max_s:
            state.s_t_last = t
            state.s_yaw1 = yaw
            state.s_pitch1 = pitch
            state.s_peak = max(state.s_peak, velocity)
        elif fast:
            _settle(ring, state.s_hop0, last_hop, SACCADE, False)
            state.s_state = _DEAD
            state.s_break = 1.0
        else:
            duration = state.s_t_last - state.s_t0
            amplitude = _eye_angle(state.s_yaw0, state.s_pitch0, state.s_yaw1,
                                   state.s_pitch1)
            accept = flags or (available and duration >= params.saccade_min_s
                               and amplitude >= _min_amplitude(period, params, state))
            _settle(ring, state.s_hop0, last_hop, SACCADE, accept)
            if accept:
                state.s_break = 1.0
            if accept:
                n_events = _write_event(events, n_events, 0.0, state.s_t_first, state.s_t_last,
                                        duration, np.degrees(amplitude) if not flags else np.nan,
                                        np.degrees(state.s_peak) if not flags else np.nan)
            state.s_state = _IDLE
    elif state.s_state == _DEAD and not fast:
        state.s_state = _IDLE
    joined = state.s_state == _OPEN
    if state.s_state == _IDLE and fast:
        state.s_state = _OPEN
        state.s_t0 = state.last_t if state.started == 1.0 and not gap else t
        state.s_t_first = t
        state.s_t_last = t
        state.s_hop0 = hop
        state.s_yaw0 = state.prev_yaw if not np.isnan(state.prev_yaw) else yaw
        state.s_pitch0 = state.prev_pitch if not np.isnan(state.prev_yaw) else pitch
        state.s_yaw1 = yaw
        state.s_pitch1 = pitch
        state.s_peak = velocity
        joined = True
        if t - state.s_t0 > params.saccade_max_s:
            state.s_state = _DEAD
            state.s_break = 1.0
            joined = False

    for j in range(4):
        state.prev[j] = x[_GAZE[j]]
    state.prev_yaw = yaw
    state.prev_pitch = pitch
    state.velocity = velocity
    if not available:
        return (-1 if rate_ok else -2), n_events
    return (1 if joined else 0), n_events


@njit(cache=True, inline="always")
def _relative_speed(v_yaw, v_pitch, velocity, params, state):
    """The gaze speed relative to the smooth gaze velocity (rad/s; the speed itself without one)."""
    if params.pursuit_tau_s > 0.0 and state.smooth_w > 0.0 and not np.isnan(v_yaw):
        d_yaw = v_yaw - state.smooth_yaw
        d_pitch = v_pitch - state.smooth_pitch
        return np.sqrt(d_yaw * d_yaw + d_pitch * d_pitch)
    return velocity


@njit(cache=True, inline="always")
def _smooth(v_yaw, v_pitch, dt, in_candidate, period, params, state):
    """Update the smooth gaze velocity with a sample in no saccade candidate (a sample without a
    velocity forgets it), and decide whether the gaze is in smooth pursuit: the smooth velocity is
    faster than ``pursuit_velocity`` and than 3 times the mean the noise alone would give it (the
    exponential mean of white noise keeps ``sqrt(w / (2 - w))`` of its speed, w the weight of one
    sample; 3 times a Rayleigh mean is exceeded with p < 0.001), and has been for a time constant
    (the drift after a saccade passes sooner)."""
    tau = params.pursuit_tau_s
    state.pursuit = 0.0
    if tau <= 0.0:
        return
    if np.isnan(v_yaw):
        state.smooth_w = 0.0
        state.smooth_yaw = state.smooth_pitch = 0.0
        state.p_run = 0.0
        return
    if in_candidate:
        return
    w = 1.0 - np.exp(-dt / tau)
    if state.smooth_w == 0.0:
        state.smooth_yaw = v_yaw
        state.smooth_pitch = v_pitch
    else:
        state.smooth_yaw += w * (v_yaw - state.smooth_yaw)
        state.smooth_pitch += w * (v_pitch - state.smooth_pitch)
    state.smooth_w = min(state.smooth_w + w, 1.0)
    if state.smooth_w < 0.5 or state.noise_w <= 0.0:   # not settled, or no noise known yet
        return
    w_period = 1.0 - np.exp(-period / tau)
    noise = state.noise_s1 / state.noise_w * np.sqrt(w_period / (2.0 - w_period))
    speed = np.sqrt(state.smooth_yaw * state.smooth_yaw + state.smooth_pitch * state.smooth_pitch)
    if speed <= max(params.pursuit_velocity, 3.0 * noise):
        state.p_run = 0.0
        return
    state.p_run += dt
    if state.p_run >= tau:   # sustained for a time constant: not a transient after a saccade
        state.pursuit = 1.0


@njit(cache=True, inline="always")
def _min_amplitude(period, params, state):
    """The smallest saccade amplitude (rad): ``saccade_min_amplitude_deg`` or, when larger,
    ``saccade_noise_amplitude_factor`` times the mean gaze step of the recent fixation samples."""
    floor = params.saccade_min_amplitude
    weight = state.noise_w
    if weight > 0.0:
        return max(floor, params.saccade_noise_amplitude * state.noise_s1 / weight * period)
    return floor


@njit(cache=True, inline="always")
def _threshold(velocity, dt, params, state):
    """The saccade speed threshold (rad/s) for this sample, and the noise estimates updated.

    ``saccade_velocity_deg_s`` or, when higher, ``saccade_noise_factor`` times the stream's noise
    scale: the running median of its (relative) speeds over all samples divided by 1.1774, the
    median of the speed of unit two-dimensional Gaussian noise. This is Engbert & Kliegl's (2003)
    median-based threshold made causal: the median is a stochastic-approximation estimate with
    multiplicative steps (steps of ``1 / n`` at first, then ``2 dt /`` :data:`NOISE_TAU_S`), so it
    follows the stream's noise and rate and ignores the few fast samples. The mean speed of the
    samples below the threshold (exponential forgetting, time constant :data:`NOISE_TAU_S`; after
    Nystrom & Holmqvist 2010) is kept for the smallest amplitude and the pursuit test.
    """
    floor = params.saccade_velocity
    factor = params.saccade_noise_factor
    threshold = floor
    weight = state.noise_w
    if factor > 0.0 and state.n_median > 0.0:
        threshold = max(floor, factor * state.median / 1.1774)
    if velocity >= 0.0:   # False for NaN
        state.n_median += 1.0
        if state.n_median == 1.0:
            state.median = max(velocity, _MEDIAN_MIN)
        else:
            step = max(2.0 * dt / NOISE_TAU_S, 1.0 / state.n_median)
            state.median *= (1.0 + step) if velocity > state.median else 1.0 / (1.0 + step)
            state.median = max(state.median, _MEDIAN_MIN)
    if velocity <= threshold:   # False for NaN
        keep = np.exp(-dt / NOISE_TAU_S)
        state.noise_w = keep * weight + 1.0
        state.noise_s1 = keep * state.noise_s1 + velocity
    state.threshold = threshold
    return threshold


@njit(cache=True, inline="always")
def _blink_step(x, t, gap, lost, period, hop, last_hop, params, state, ring, events, n_events):
    """Advance the blink detector by one accepted sample.

    Returns ``(status, duration, n_events)``: status -2 unresolvable (rate too low), -1 eye not
    observed (track loss outside a candidate), 0 open eye, 1 in a candidate and tracked (eyelid
    below threshold), 2 in a candidate by track loss; ``duration`` is the length
    in seconds of a blink accepted at this sample, else NaN.
    """
    flags = params.use_flags == 1.0
    if flags:
        available = not np.isnan(x[_BLINK_FLAG])
        shut = available and x[_BLINK_FLAG] >= 0.5
    else:
        available = period > 0.0 and params.blink_min_rate_hz * period <= 1.0
        opening = np.nan
        n = 0
        for j in _EYELID:
            if not np.isnan(x[j]):
                opening = x[j] if n == 0 else opening + x[j]
                n += 1
        shut = opening / n < params.blink_opening_max if n > 0 else lost
    closed = available and shut
    duration = np.nan
    if state.b_state == _OPEN:
        if closed and not gap and t - state.b_t_first <= params.blink_max_s:
            state.b_t_last = t
        elif closed or gap:
            _settle(ring, state.b_hop0, last_hop, BLINK, False)
            state.b_state = _DEAD
        else:
            length = (0.5 * (t + state.b_t_last)
                      - 0.5 * (state.b_t_first + state.b_t_before))
            accept = flags or params.blink_min_s <= length <= params.blink_max_s
            accept = accept and length <= params.blink_max_s
            _settle(ring, state.b_hop0, last_hop, BLINK, accept)
            if accept:
                duration = length
                n_events = _write_event(events, n_events, 1.0, state.b_t_first, state.b_t_last,
                                        length, np.nan, np.nan)
            state.b_state = _IDLE
    if state.b_state == _DEAD and not closed:
        state.b_state = _IDLE
    if state.b_state == _IDLE and closed:
        if state.started == 1.0 and not gap:
            state.b_state = _OPEN
            state.b_t_first = t
            state.b_t_before = state.last_t
            if state.b_shut == 1.0:   # the stream's first sample, closed: the blink is under way
                state.b_t_first = state.last_t
                state.b_t_before = 2.0 * state.last_t - t
            state.b_t_last = t
            state.b_hop0 = hop
        else:
            state.b_state = _DEAD   # its start is unknown
    state.b_shut = 1.0 if shut and state.started == 0.0 else 0.0
    state.last_t = t
    state.started = 1.0
    if not available:
        return -2, duration, n_events
    if state.b_state != _OPEN:
        return (-1 if lost else 0), duration, n_events
    return (2 if lost else 1), duration, n_events


@njit(cache=True, inline="always")
def _fixation_step(t, gap, period, s_status, b_status, params, state, events, n_events):
    """Advance the fixation detector by one accepted sample, after the saccade and blink steps
    (``s_status`` and ``b_status`` are theirs). Returns ``n_events``."""
    if state.s_break == 1.0 or gap:   # a saccade (or a too long fast run) ends the fixation
        state.s_break = 0.0
        n_events = _end_fixation(period, params, state, events, n_events)
    yaw = state.prev_yaw   # this sample's cyclopean gaze (the saccade step stored it)
    pitch = state.prev_pitch
    if s_status == 0 and b_status == 0 and state.pursuit == 1.0:   # smooth pursuit: other
        n_events = _end_fixation(period, params, state, events, n_events)
    elif s_status == 0 and b_status == 0:   # still: tracked, in no saccade or blink candidate
        if state.f_state == _OPEN and state.f_away == 1.0:
            shift = _eye_angle(state.f_yaw, state.f_pitch, yaw, pitch)
            if shift > params.fixation_merge_angle:
                n_events = _end_fixation(period, params, state, events, n_events)
        if state.f_state != _OPEN:
            state.f_state = _OPEN
            state.f_t_first = t
        state.f_t_last = t
        state.f_yaw = yaw
        state.f_pitch = pitch
        state.f_away = 0.0
    elif state.f_state == _OPEN:
        if s_status != 1:   # lost, closing or unresolvable (a candidate may still be fixation)
            state.f_away = 1.0
            if s_status == -2 or t - state.f_t_last > params.fixation_merge_s:
                n_events = _end_fixation(period, params, state, events, n_events)
    return n_events


@njit(cache=True)
def _end_fixation(period, params, state, events, n_events):
    """Close the open fixation at its last sample; write it when it lasts ``fixation_min_s``."""
    if state.f_state != _OPEN:
        return n_events
    state.f_state = _IDLE
    duration = state.f_t_last - state.f_t_first + period
    if duration >= params.fixation_min_s:
        n_events = _write_event(events, n_events, 2.0, state.f_t_first, state.f_t_last, duration,
                                np.nan, np.nan)
    return n_events


@njit(cache=True)
def _write_event(events, n_events, kind, t_first, t_last, duration, amplitude, peak):
    """Write one event (``kind`` an index into :data:`EVENT_KINDS`) at row ``n_events`` of the
    :data:`EVENT_ROW` array ``events`` when it has room; return the new row count."""
    if n_events >= events.shape[0]:
        return n_events
    row = events[n_events]
    row.kind = kind
    row.t_first = t_first
    row.t_last = t_last
    row.duration = duration
    row.amplitude = amplitude
    row.peak = peak
    return n_events + 1
