"""Vehicle measures of driver distraction: lane keeping, steering, speed and pedals per window.

What the field measures when the eyes leave the road or the mind leaves the drive:

- **lane keeping**: visual load widens the spread of the lane position (SDLP) and lets the car
  drift, cognitive load narrows it (Engström, Johansson & Östlund 2005, "Effects of visual and
  cognitive load in real and simulated motorway driving", Transp. Res. F 8(2):97-120,
  doi:10.1016/j.trf.2005.04.012; Liang & Lee 2010, "Combining cognitive and visual distraction:
  less than the sum of its parts", Accid. Anal. Prev. 42(3):881-890,
  doi:10.1016/j.aap.2009.05.001: steering neglect then over-compensation under visual load);
  time to line crossing (TLC) shortens as the car drifts towards the lane's edge;
- **steering reversal rate** (Markkula & Engström 2006, "A steering wheel reversal rate metric
  for assessing effects of visual and cognitive secondary task load", ITS World Congress,
  London): reversals of the low-pass filtered (0.6 Hz) steering-wheel angle by at least a gap;
  small gaps (a fraction of a degree) rise with cognitive load, large gaps (degrees) with visual
  load's corrections; both rates are kept (0.1° and 2° by default);
- **steering entropy** (Nakayama, Futami, Nakamura & Boer 1999, "Development of a steering
  entropy method for evaluating driver workload", SAE 1999-01-0892): the steering angle taken
  every 150 ms at least, predicted by a second-order Taylor expansion of the last three; the
  prediction errors binned at ±0.5α, ±α, ±2.5α, ±5α (nine bins) and the bins' entropy in base 9,
  α being the 90th percentile of the error in the driver's own baseline driving; here α is a
  running 90th percentile of the stream's own past errors (a multiplicative Robbins-Monro
  update), so no baseline drive is needed and the batch and streaming drivers agree;
- **high-frequency steering**: the share of the steering variance in sample-to-sample changes,
  ``mean((Δθ)²) / (2 var θ)`` (1 for white noise, near 0 for slow steering), the rate-free
  counterpart of Östlund et al.'s high-frequency steering power (HASTE, 2005);
- **speed**: visual load slows drivers down (Engström et al. 2005); the level, spread and mean
  absolute change of speed;
- **pedals**: the mean absolute change of the accelerator and brake positions per second, and
  their mean positions.

Two functions, one implementation: :func:`vehicle_samples` runs the per-sample kernel over a
block with an explicit state record (a stream passes the state from block to block; a recording
passes a fresh one), and :func:`vehicle_window_features` sums the per-sample outputs over windows.
Both are pure functions of arrays (numba); the window sums decompose over any split of time, as
the pipeline's hop ring needs.
"""

import functools
import math

import numpy as np
from numba import njit

from ._config import _record
from .formats import FIELD_INDEX

__all__ = [
    "VEHICLE_FEATURES", "NAIVE_VEHICLE_FEATURES", "VehicleSettings", "vehicle_samples", "vehicle_window_features",
    "new_vehicle_state", "vehicle_features_of",
]

VEHICLE_FEATURES = (
    "mean_lane_offset", "sd_lane_offset", "lane_offset_speed_m_s", "lane_tlc_min_s",
    "mean_steering", "sd_steering", "steering_speed_rad_s", "steering_reversals_small_per_min",
    "steering_reversals_large_per_min", "steering_entropy", "steering_hf_ratio",
    "mean_speed", "sd_speed", "speed_change_m_s2",
    "pedal_change_per_s", "mean_accelerator", "sd_accelerator", "mean_brake", "sd_brake",
)
"""The window's vehicle features (units in the names where not the field's own):

- ``mean_lane_offset`` (m) and ``sd_lane_offset`` (SDLP, m, ddof=1);
- ``lane_offset_speed_m_s``: mean absolute lateral speed in the lane, m/s;
- ``lane_tlc_min_s``: shortest time to line crossing in the window, s, capped at
  ``tlc_cap_s`` (the cap when the car never heads for an edge);
- ``mean_steering``, ``sd_steering`` (rad), ``steering_speed_rad_s`` (mean absolute steering speed, rad/s);
- ``steering_reversals_small_per_min``, ``steering_reversals_large_per_min``: reversals of the
  filtered steering angle by at least the small and the large gap, per minute of steering data;
- ``steering_entropy``: Nakayama et al.'s entropy (0-1, base 9) of the window's prediction errors;
- ``steering_hf_ratio``: ``mean((Δθ)²) / (2 var θ)``;
- ``mean_speed``, ``sd_speed`` (m/s), ``speed_change_m_s2`` (mean absolute speed change per s);
- ``pedal_change_per_s``: mean absolute change of accelerator plus brake per second;
- ``mean_accelerator``, ``sd_accelerator``, ``mean_brake``, ``sd_brake`` (0-1).

NaN where the window has no data for the measure (no lane offset, no steering, ...)."""

NAIVE_VEHICLE_FEATURES = tuple(f"{stat}_{field}" for field in (
    "lane_offset", "steering", "speed", "accelerator", "brake") for stat in ("mean", "sd"))
"""The naive floor's vehicle features: its own recipe (the mean and SD of each field) applied to
the vehicle's signals, so that the floor rises with the signals a stream has."""

_LANE, _STEER, _SPEED, _ACCEL, _BRAKE = (FIELD_INDEX[name] for name in (
    "lane_offset", "steering", "speed", "accelerator", "brake"))
_TIME = FIELD_INDEX["t"]

# Per-sample outputs of the kernel (columns of the array vehicle_samples returns).
(S_LANE, S_STEER, S_SPEED, S_ACCEL, S_BRAKE,   # the sample's values (NaN missing)
 S_LANE_ABS, S_LANE_DT,          # |Δ offset| and Δt of a valid step (0 otherwise)
 S_STEER_ABS, S_STEER_SQ, S_STEER_DT,
 S_SPEED_ABS, S_SPEED_DT,
 S_PEDAL_ABS, S_PEDAL_DT,
 S_REV_SMALL, S_REV_LARGE,       # 1 at the sample that completes a reversal
 S_BIN,                          # entropy bin 0-8 of the sample's prediction error, -1 none
 S_TLC,                          # time to line crossing, s (NaN: no lane data or not moving)
 N_SAMPLE_COLUMNS) = range(19)

STATE = _record(
    "lane_t", "lane_v", "steer_t", "steer_v", "speed_t", "speed_v",
    "accel_t", "accel_v", "brake_t", "brake_v",
    "filter_t", "filter_v",              # the low-pass filtered steering angle
    ("rev_dir", (2,)), ("rev_ext", (2,)),  # per gap: direction (+1, -1, 0 unset), extremum
    ("ent_t", (3,)), ("ent_v", (3,)),    # the last three steering samples taken for entropy
    "ent_n", "alpha",                    # samples taken (capped at 3); running 90th percentile
)

PARAMS = _record(
    "max_step_s", "lane_width_m", "car_width_m", "tlc_cap_s",
    "reversal_cutoff_hz", ("reversal_gap_rad", (2,)),
    "entropy_step_s", "entropy_rate",
)


class VehicleSettings:
    """Settings of the vehicle measures.

    Parameters
    ----------
    max_step_s : float, default=2.0
        Longest step between two samples of a signal that still counts as a change, s.
    lane_width_m : float, default=3.65
        Lane width for the time to line crossing, m (a 12 ft motorway lane; the Taamneh et al.
        route's lanes, from ``LaneOffset + Lane.Position = 1.825`` m).
    car_width_m : float, default=1.8
        Car width, m: a wheel crosses the line when the centre is half of it from the line.
    tlc_cap_s : float, default=20.0
        Time to line crossing reported when the car does not head for an edge, s.
    reversal_cutoff_hz : float, default=0.6
        Low-pass cut-off of the steering angle before reversals are counted (Markkula &
        Engström 2006), Hz.
    reversal_gaps_deg : tuple of float, default=(0.1, 2.0)
        The small and the large reversal gap, degrees of steering-wheel angle.
    entropy_step_s : float, default=0.15
        Least spacing of the steering samples the entropy predicts (Nakayama et al. 1999), s.
    entropy_rate : float, default=0.02
        Step of the running 90th percentile of the prediction error (log scale, per sample).
    """

    def __init__(self, max_step_s=2.0, lane_width_m=3.65, car_width_m=1.8, tlc_cap_s=20.0,
                 reversal_cutoff_hz=0.6, reversal_gaps_deg=(0.1, 2.0), entropy_step_s=0.15,
                 entropy_rate=0.02):
        self.max_step_s = max_step_s
        self.lane_width_m = lane_width_m
        self.car_width_m = car_width_m
        self.tlc_cap_s = tlc_cap_s
        self.reversal_cutoff_hz = reversal_cutoff_hz
        self.reversal_gaps_deg = reversal_gaps_deg
        self.entropy_step_s = entropy_step_s
        self.entropy_rate = entropy_rate

    @functools.cached_property
    def params(self):
        """The settings as the kernel's parameter record (built once)."""
        p = np.zeros(1, PARAMS)[0]
        for name in PARAMS.names:   # each setting under its own name, the gaps in radians
            p[name] = (np.radians(self.reversal_gaps_deg) if name == "reversal_gap_rad"
                       else getattr(self, name))
        return p


def new_vehicle_state():
    """A fresh per-stream state record (no sample seen)."""
    state = np.zeros(1, STATE)
    for name in ("lane_t", "steer_t", "speed_t", "accel_t", "brake_t", "filter_t"):
        state[name] = np.nan
    state["alpha"] = np.nan
    return state


def vehicle_samples(block, settings=None, state=None):
    """The per-sample vehicle outputs of a canonical block, in time order.

    Parameters
    ----------
    block : ndarray of shape (n_samples, N_FIELDS)
        Validated canonical samples (``t`` increasing).
    settings : VehicleSettings or None, default=None
    state : ndarray of STATE or None, default=None
        The stream's state, updated in place (None: a fresh one, for a whole recording).

    Returns
    -------
    ndarray of shape (n_samples, N_SAMPLE_COLUMNS)
    """
    params = (settings or VehicleSettings()).params
    state = new_vehicle_state() if state is None else state
    block = np.ascontiguousarray(block, dtype=np.float64)
    out = np.empty((len(block), N_SAMPLE_COLUMNS))
    _samples(block, params, state, out)
    return out


@njit(cache=True, inline="always")
def _step(state_t, state_v, t, v, max_step_s):
    """``(|Δv|, Δt)`` of a signal's step to ``v`` at ``t`` (``(0, 0)`` for none), and whether
    the sample holds a value (then it becomes the signal's last)."""
    if np.isnan(v):
        return 0.0, 0.0, False
    if np.isnan(state_t) or t - state_t > max_step_s or t <= state_t:
        return 0.0, 0.0, True
    return abs(v - state_v), t - state_t, True


@njit(cache=True)
def _samples(block, p, state_array, out):
    s = state_array[0]
    half_room = 0.5 * (p.lane_width_m - p.car_width_m)
    tau = 1.0 / (2.0 * np.pi * p.reversal_cutoff_hz)
    for i in range(block.shape[0]):
        x = block[i]
        t = x[_TIME]
        lane, steer, speed, accel, brake = x[_LANE], x[_STEER], x[_SPEED], x[_ACCEL], x[_BRAKE]
        row = out[i]
        row[S_LANE] = lane
        row[S_STEER] = steer
        row[S_SPEED] = speed
        row[S_ACCEL] = accel
        row[S_BRAKE] = brake
        row[S_TLC] = np.nan
        row[S_REV_SMALL] = 0.0
        row[S_REV_LARGE] = 0.0
        row[S_BIN] = -1.0
        # lane: lateral speed and time to line crossing (a jump of half a lane is a lane change)
        d, dt, seen = _step(s.lane_t, s.lane_v, t, lane, p.max_step_s)
        if dt > 0.0 and d > 0.5 * p.lane_width_m:
            d, dt = 0.0, 0.0
        row[S_LANE_ABS] = d
        row[S_LANE_DT] = dt
        if dt > 0.0:
            velocity = (lane - s.lane_v) / dt
            room = half_room - lane if velocity > 0.0 else half_room + lane
            if velocity == 0.0:
                row[S_TLC] = p.tlc_cap_s
            else:
                row[S_TLC] = min(p.tlc_cap_s, max(room, 0.0) / abs(velocity))
        if seen:
            s.lane_t, s.lane_v = t, lane
        # steering: speed, squared change, reversals, entropy
        d, dt, seen = _step(s.steer_t, s.steer_v, t, steer, p.max_step_s)
        row[S_STEER_ABS] = d
        row[S_STEER_SQ] = d * d
        row[S_STEER_DT] = dt
        if seen:
            if dt > 0.0:
                _reversals(s, p, t, steer, tau, row)
            else:   # the first sample, or one after a gap: the signal's history starts again
                s.filter_t, s.filter_v = t, steer
                s.rev_dir[0] = s.rev_dir[1] = 0.0
                s.rev_ext[0] = s.rev_ext[1] = steer
                s.ent_n = 0.0
            _entropy(s, p, t, steer, row)
            s.steer_t, s.steer_v = t, steer
        # speed and pedals
        d, dt, seen = _step(s.speed_t, s.speed_v, t, speed, p.max_step_s)
        row[S_SPEED_ABS] = d
        row[S_SPEED_DT] = dt
        if seen:
            s.speed_t, s.speed_v = t, speed
        da, dta, seen_a = _step(s.accel_t, s.accel_v, t, accel, p.max_step_s)
        db, dtb, seen_b = _step(s.brake_t, s.brake_v, t, brake, p.max_step_s)
        row[S_PEDAL_ABS] = da + db
        row[S_PEDAL_DT] = max(dta, dtb)
        if seen_a:
            s.accel_t, s.accel_v = t, accel
        if seen_b:
            s.brake_t, s.brake_v = t, brake


@njit(cache=True, inline="always")
def _reversals(s, p, t, steer, tau, row):
    """Low-pass the steering angle and count a reversal per gap when the filtered angle turns
    back from its extremum by the gap (the direction is set by the first such move)."""
    a = 1.0 - math.exp(-(t - s.filter_t) / tau)
    s.filter_v += a * (steer - s.filter_v)
    s.filter_t = t
    v = s.filter_v
    for g in range(2):
        gap = p.reversal_gap_rad[g]
        direction = s.rev_dir[g]
        if direction == 0.0:
            if abs(v - s.rev_ext[g]) >= gap:
                s.rev_dir[g] = 1.0 if v > s.rev_ext[g] else -1.0
                s.rev_ext[g] = v
        elif (v - s.rev_ext[g]) * direction >= 0.0:
            s.rev_ext[g] = v                      # further the same way: a new extremum
        elif abs(v - s.rev_ext[g]) >= gap:
            s.rev_dir[g] = -direction             # turned back by the gap: a reversal
            s.rev_ext[g] = v
            row[S_REV_SMALL + g] = 1.0


@njit(cache=True, inline="always")
def _entropy(s, p, t, steer, row):
    """Take the sample when ``entropy_step_s`` has passed since the last taken one; with three
    taken before it, bin its prediction error against the running 90th percentile α."""
    n = int(s.ent_n)
    if n > 0 and t - s.ent_t[n - 1] < p.entropy_step_s:
        return
    if n == 3:
        a, b, c = s.ent_v[0], s.ent_v[1], s.ent_v[2]
        predicted = c + (c - b) + 0.5 * ((c - b) - (b - a))
        error = steer - predicted
        size = abs(error)
        if np.isnan(s.alpha):
            if size > 0.0:
                s.alpha = size
        else:
            s.alpha *= math.exp(p.entropy_rate * ((1.0 if size > s.alpha else 0.0) - 0.1))
        if not np.isnan(s.alpha):
            row[S_BIN] = _bin(error, s.alpha)
        s.ent_t[0], s.ent_t[1] = s.ent_t[1], s.ent_t[2]
        s.ent_v[0], s.ent_v[1] = s.ent_v[1], s.ent_v[2]
        n = 2
    s.ent_t[n] = t
    s.ent_v[n] = steer
    s.ent_n = n + 1


@njit(cache=True, inline="always")
def _bin(error, alpha):
    """Nakayama et al.'s bin (0-8) of a prediction error: edges ±0.5α, ±α, ±2.5α, ±5α."""
    edges = (-5.0, -2.5, -1.0, -0.5, 0.5, 1.0, 2.5, 5.0)
    k = 0
    for edge in edges:
        if error >= edge * alpha:
            k += 1
    return float(k)


def vehicle_window_features(t, samples, t_start, t_end, settings=None):
    """The vehicle features (:data:`VEHICLE_FEATURES`) of each window ``[t_start, t_end)``.

    Parameters
    ----------
    t : ndarray of shape (n_samples,)
        Sample times, s, increasing.
    samples : ndarray of shape (n_samples, N_SAMPLE_COLUMNS)
        :func:`vehicle_samples` of the same samples.
    t_start, t_end : ndarray of shape (n_windows,)
    settings : VehicleSettings or None, default=None

    Returns
    -------
    ndarray of shape (n_windows, len(VEHICLE_FEATURES))
    """
    params = (settings or VehicleSettings()).params
    first = np.searchsorted(t, t_start, side="left")
    stop = np.searchsorted(t, t_end, side="left")
    out = np.empty((len(t_start), len(VEHICLE_FEATURES)))
    _windows(np.ascontiguousarray(samples, dtype=np.float64), first, stop, params, out)
    return out


def vehicle_features_of(recording, t_start, t_end, settings=None):
    """:func:`vehicle_window_features` of a whole recording (samples in time order)."""
    samples = vehicle_samples(recording.samples, settings)
    return vehicle_window_features(recording.samples[:, _TIME], samples, t_start, t_end,
                                   settings)


@njit(cache=True, inline="always")
def _moments(samples, first, stop, column):
    """Mean and SD (ddof=1) of a column's finite values over rows ``first..stop-1``."""
    n = 0.0
    ref = np.nan
    total = 0.0
    squares = 0.0
    for i in range(first, stop):
        v = samples[i, column]
        if not np.isnan(v):
            if np.isnan(ref):
                ref = v
            d = v - ref
            n += 1.0
            total += d
            squares += d * d
    mean = ref + total / n if n > 0.0 else np.nan
    sd = math.sqrt(max((squares - total * total / n) / (n - 1.0), 0.0)) if n > 1.0 else np.nan
    return mean, sd


@njit(cache=True, inline="always")
def _rate(samples, first, stop, value, time):
    """Sum of a column over the sum of its step times (NaN with none)."""
    total = 0.0
    seconds = 0.0
    for i in range(first, stop):
        total += samples[i, value]
        seconds += samples[i, time]
    return total / seconds if seconds > 0.0 else np.nan


@njit(cache=True)
def _windows(samples, first, stop, p, out):
    for w in range(out.shape[0]):
        a, b = first[w], stop[w]
        o = out[w]
        o[0], o[1] = _moments(samples, a, b, S_LANE)
        o[2] = _rate(samples, a, b, S_LANE_ABS, S_LANE_DT)
        tlc = np.inf
        for i in range(a, b):
            if not np.isnan(samples[i, S_TLC]):
                tlc = min(tlc, samples[i, S_TLC])
        o[3] = tlc if tlc < np.inf else np.nan
        o[4], o[5] = _moments(samples, a, b, S_STEER)
        o[6] = _rate(samples, a, b, S_STEER_ABS, S_STEER_DT)
        o[7] = 60.0 * _rate(samples, a, b, S_REV_SMALL, S_STEER_DT)
        o[8] = 60.0 * _rate(samples, a, b, S_REV_LARGE, S_STEER_DT)
        counts = np.zeros(9)
        for i in range(a, b):
            k = samples[i, S_BIN]
            if k >= 0.0:
                counts[int(k)] += 1.0
        n = counts.sum()
        entropy = np.nan
        if n > 0.0:
            entropy = 0.0
            for k in range(9):
                if counts[k] > 0.0:
                    share = counts[k] / n
                    entropy -= share * math.log(share) / math.log(9.0)
        o[9] = entropy
        steps = 0.0
        squares = 0.0
        for i in range(a, b):
            if samples[i, S_STEER_DT] > 0.0:
                steps += 1.0
                squares += samples[i, S_STEER_SQ]
        variance = o[5] * o[5]
        o[10] = squares / steps / (2.0 * variance) if steps > 0.0 and variance > 0.0 else np.nan
        o[11], o[12] = _moments(samples, a, b, S_SPEED)
        o[13] = _rate(samples, a, b, S_SPEED_ABS, S_SPEED_DT)
        o[14] = _rate(samples, a, b, S_PEDAL_ABS, S_PEDAL_DT)
        o[15], o[16] = _moments(samples, a, b, S_ACCEL)
        o[17], o[18] = _moments(samples, a, b, S_BRAKE)
