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

One implementation, per sample and per window: :func:`vehicle_step` advances a stream's state
(:data:`STATE`) by one sample and writes its outputs (:data:`OUTPUT`); the vehicle channel
(:mod:`distractd.pipeline.channels._vehicle`) calls it inside the processor's compiled pass and adds
the outputs to the sample's hop (:func:`add_to_hop`), and :func:`window_features` turns a window's
hop sums into :data:`~distractd.pipeline.VEHICLE_FEATURES`. The sums decompose over any split of
time, so a stream fed in blocks and a whole recording (``extract_features``) give the same bits.
"""

import math

import numpy as np
from numba import njit

from ._config import _record
from ._feature_names import NAIVE_VEHICLE_FEATURES, VEHICLE_FEATURES
from .formats import FIELD_INDEX

__all__ = ["VEHICLE_FEATURES", "NAIVE_VEHICLE_FEATURES", "VehicleSettings", "STATE", "OUTPUT",
           "HOP_SUMS", "vehicle_step", "add_to_hop", "window_features"]

_SIGNALS = ("lane_offset", "steering", "speed", "accelerator", "brake")
"""The fields the measures read, in the order of the moments' sums."""
_LANE, _STEER, _SPEED, _ACCEL, _BRAKE = (FIELD_INDEX[name] for name in _SIGNALS)
N_SIGNALS = len(_SIGNALS)
N_BINS = 9   # Nakayama et al.'s entropy bins

OUTPUT = _record(
    "lane_offset", "steering", "speed", "accelerator", "brake",   # the sample's values (NaN: none)
    "lane_abs", "lane_dt",          # |Δ offset| and Δt of a valid step (0 otherwise)
    "steer_abs", "steer_sq", "steer_dt",
    "speed_abs", "speed_dt",
    "pedal_abs", "pedal_dt",
    "reversal_small", "reversal_large",   # 1 at the sample that completes a reversal
    "entropy_bin",                  # entropy bin 0-8 of the sample's prediction error, -1 none
    "tlc_s",                        # time to line crossing, s (NaN: no lane step)
)
"""One sample's vehicle outputs (the vehicle channel's per-sample output record)."""

STATE = _record(
    "lane_t", "lane_v", "steer_t", "steer_v", "speed_t", "speed_v",
    "accel_t", "accel_v", "brake_t", "brake_v",
    "filter_t", "filter_v",              # the low-pass filtered steering angle
    ("rev_dir", (2,)), ("rev_ext", (2,)),  # per gap: direction (+1, -1, 0 unset), extremum
    ("ent_t", (3,)), ("ent_v", (3,)),    # the last three steering samples taken for entropy
    "ent_n", "alpha",                    # samples taken (capped at 3); running 90th percentile
    ("ref", (N_SIGNALS,)),               # each signal's first value on this clock (NaN: none)
    "quiet",                             # 1 while samples come without a signal (the channel's)
    "input_t",                           # the driver's last steering or pedal input, s (NaN)
)
"""A stream's vehicle state (the vehicle channel's state record)."""

HOP_SUMS = (
    "v_samples",                  # samples with a value of any signal
    ("v_count", (N_SIGNALS,)),    # per signal: values, sum and sum of squares of (value - ref)
    ("v_sum", (N_SIGNALS,)),
    ("v_squares", (N_SIGNALS,)),
    ("v_ref", (N_SIGNALS,)),      # not a sum: the stream's reference (the same in every hop)
    "v_lane_abs", "v_lane_dt", "v_steer_abs", "v_steer_dt", "v_steer_sq", "v_steer_steps",
    "v_speed_abs", "v_speed_dt", "v_pedal_abs", "v_pedal_dt", "v_reversal_small",
    "v_reversal_large", ("v_bins", (N_BINS,)),
    "v_tlc_n", "v_tlc_min",       # times to line crossing seen, and the shortest (not a sum)
    "v_input_t",                  # not a sum: the last steering or pedal input at the hop's end
)
"""The vehicle fields of a hop of the window ring (``_windows.HOP``): what a window's
:func:`window_features` need, summed per hop by :func:`add_to_hop`."""

PARAMS = _record(
    "max_step_s", "lane_width_m", "car_width_m", "tlc_cap_s",
    "reversal_cutoff_hz", ("reversal_gap_rad", (2,)),
    "entropy_step_s", "entropy_rate", "input_steering_rad_s", "input_pedal_per_s",
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
    input_steering_deg_s : float, default=10.0
        Steering-wheel speed at or above which a step is the driver's input, deg/s: well above
        lane keeping's corrections (Taamneh et al.'s normal drives: 0.7 deg/s on average from
        second to second), as a hand turning the wheel gives.
    input_pedal_per_s : float, default=0.2
        Pedal travel per second (accelerator plus brake, of the full range) at or above which a
        step is the driver's input.
    """

    def __init__(self, max_step_s=2.0, lane_width_m=3.65, car_width_m=1.8, tlc_cap_s=20.0,
                 reversal_cutoff_hz=0.6, reversal_gaps_deg=(0.1, 2.0), entropy_step_s=0.15,
                 entropy_rate=0.02, input_steering_deg_s=10.0, input_pedal_per_s=0.2):
        self.max_step_s = max_step_s
        self.lane_width_m = lane_width_m
        self.car_width_m = car_width_m
        self.tlc_cap_s = tlc_cap_s
        self.reversal_cutoff_hz = reversal_cutoff_hz
        self.reversal_gaps_deg = reversal_gaps_deg
        self.entropy_step_s = entropy_step_s
        self.entropy_rate = entropy_rate
        self.input_steering_deg_s = input_steering_deg_s
        self.input_pedal_per_s = input_pedal_per_s

    def params(self):
        """The settings as the kernel's parameter record, in a one-record array."""
        params = np.zeros(1, PARAMS)
        for name in PARAMS.names:   # each setting under its own name, angles in radians
            params[name] = (np.radians(self.reversal_gaps_deg) if name == "reversal_gap_rad"
                            else np.radians(self.input_steering_deg_s)
                            if name == "input_steering_rad_s" else getattr(self, name))
        return params


@njit(cache=True, inline="always")
def _step(state_t, state_v, t, v, max_step_s):
    """``(|Δv|, Δt)`` of a signal's step to ``v`` at ``t`` (``(0, 0)`` for none), and whether
    the sample holds a value (then it becomes the signal's last)."""
    if np.isnan(v):
        return 0.0, 0.0, False
    if np.isnan(state_t) or t - state_t > max_step_s or t <= state_t:
        return 0.0, 0.0, True
    return abs(v - state_v), t - state_t, True


_ZEROS = np.zeros(1, STATE)   # copied to clear a state (a global array: numba never frees it)


@njit(cache=True)
def new_state(states):
    """Set the one-record array ``states`` to a fresh state: no sample seen."""
    states[0] = _ZEROS[0]
    s = states[0]
    s.lane_t = s.steer_t = s.speed_t = s.accel_t = s.brake_t = s.filter_t = np.nan
    s.alpha = s.input_t = np.nan
    for j in range(N_SIGNALS):
        s.ref[j] = np.nan


@njit(cache=True, inline="always")
def vehicle_step(s, p, t, x, row):
    """Advance the state ``s`` (:data:`STATE`) by the sample ``x`` (canonical fields, accepted,
    after the previous one in time) and write its outputs to ``row`` (:data:`OUTPUT`); ``p`` is
    :meth:`VehicleSettings.params`' record and ``t`` the sample's time. A sample without any of
    the five signals changes nothing."""
    lane, steer, speed, accel, brake = x[_LANE], x[_STEER], x[_SPEED], x[_ACCEL], x[_BRAKE]
    row.lane_offset = lane
    row.steering = steer
    row.speed = speed
    row.accelerator = accel
    row.brake = brake
    row.tlc_s = np.nan
    row.reversal_small = 0.0
    row.reversal_large = 0.0
    row.entropy_bin = -1.0
    # lane: lateral speed and time to line crossing (a jump of half a lane is a lane change)
    d, dt, seen = _step(s.lane_t, s.lane_v, t, lane, p.max_step_s)
    if dt > 0.0 and d > 0.5 * p.lane_width_m:
        d, dt = 0.0, 0.0
    row.lane_abs = d
    row.lane_dt = dt
    if dt > 0.0:
        velocity = (lane - s.lane_v) / dt
        half_room = 0.5 * (p.lane_width_m - p.car_width_m)
        room = half_room - lane if velocity > 0.0 else half_room + lane
        if velocity == 0.0:
            row.tlc_s = p.tlc_cap_s
        else:
            row.tlc_s = min(p.tlc_cap_s, max(room, 0.0) / abs(velocity))
    if seen:
        s.lane_t, s.lane_v = t, lane
    # steering: speed, squared change, reversals, entropy
    d, dt, seen = _step(s.steer_t, s.steer_v, t, steer, p.max_step_s)
    row.steer_abs = d
    row.steer_sq = d * d
    row.steer_dt = dt
    if seen:
        if dt > 0.0:
            _reversals(s, p, t, steer, row)
        else:   # the first sample, or one after a gap: the signal's history starts again
            s.filter_t, s.filter_v = t, steer
            s.rev_dir[0] = s.rev_dir[1] = 0.0
            s.rev_ext[0] = s.rev_ext[1] = steer
            s.ent_n = 0.0
        _entropy(s, p, t, steer, row)
        s.steer_t, s.steer_v = t, steer
    # speed and pedals
    d, dt, seen = _step(s.speed_t, s.speed_v, t, speed, p.max_step_s)
    row.speed_abs = d
    row.speed_dt = dt
    if seen:
        s.speed_t, s.speed_v = t, speed
    da, dta, seen_a = _step(s.accel_t, s.accel_v, t, accel, p.max_step_s)
    db, dtb, seen_b = _step(s.brake_t, s.brake_v, t, brake, p.max_step_s)
    row.pedal_abs = da + db
    row.pedal_dt = max(dta, dtb)
    if seen_a:
        s.accel_t, s.accel_v = t, accel
    if seen_b:
        s.brake_t, s.brake_v = t, brake
    if (row.steer_dt > 0.0 and row.steer_abs >= p.input_steering_rad_s * row.steer_dt
            or row.pedal_dt > 0.0 and row.pedal_abs >= p.input_pedal_per_s * row.pedal_dt):
        s.input_t = t   # the driver's hand or foot


@njit(cache=True, inline="always")
def _reversals(s, p, t, steer, row):
    """Low-pass the steering angle and count a reversal per gap when the filtered angle turns
    back from its extremum by the gap (the direction is set by the first such move)."""
    tau = 1.0 / (2.0 * np.pi * p.reversal_cutoff_hz)
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
            if g == 0:
                row.reversal_small = 1.0
            else:
                row.reversal_large = 1.0


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
            row.entropy_bin = _bin(error, s.alpha)
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


@njit(cache=True, inline="always")
def add_to_hop(s, row, slot):
    """Add a sample's outputs ``row`` (a sample with a value of some signal) to its hop ``slot``
    (:data:`HOP_SUMS` fields), the moments relative to each signal's first value on this clock
    (kept in ``s.ref``)."""
    slot.v_samples += 1.0
    values = (row.lane_offset, row.steering, row.speed, row.accelerator, row.brake)
    for j in range(N_SIGNALS):
        v = values[j]
        if v == v:
            if s.ref[j] != s.ref[j]:
                s.ref[j] = v
            d = v - s.ref[j]
            slot.v_count[j] += 1.0
            slot.v_sum[j] += d
            slot.v_squares[j] += d * d
            slot.v_ref[j] = s.ref[j]
    slot.v_lane_abs += row.lane_abs
    slot.v_lane_dt += row.lane_dt
    slot.v_steer_abs += row.steer_abs
    slot.v_steer_dt += row.steer_dt
    slot.v_steer_sq += row.steer_sq
    if row.steer_dt > 0.0:
        slot.v_steer_steps += 1.0
    slot.v_speed_abs += row.speed_abs
    slot.v_speed_dt += row.speed_dt
    slot.v_pedal_abs += row.pedal_abs
    slot.v_pedal_dt += row.pedal_dt
    slot.v_reversal_small += row.reversal_small
    slot.v_reversal_large += row.reversal_large
    if row.entropy_bin >= 0.0:
        slot.v_bins[int(row.entropy_bin)] += 1.0
    if row.tlc_s == row.tlc_s:
        slot.v_tlc_min = row.tlc_s if slot.v_tlc_n == 0.0 else min(slot.v_tlc_min, row.tlc_s)
        slot.v_tlc_n += 1.0
    slot.v_input_t = s.input_t


@njit(cache=True, inline="always")
def add_hop_sums(sums, hop):
    """Add a hop's vehicle sums to a window's ``sums`` (both ``_windows.HOP`` records)."""
    sums.v_samples += hop.v_samples
    for j in range(N_SIGNALS):
        if hop.v_count[j] > 0.0:
            sums.v_count[j] += hop.v_count[j]
            sums.v_sum[j] += hop.v_sum[j]
            sums.v_squares[j] += hop.v_squares[j]
            sums.v_ref[j] = hop.v_ref[j]
    sums.v_lane_abs += hop.v_lane_abs
    sums.v_lane_dt += hop.v_lane_dt
    sums.v_steer_abs += hop.v_steer_abs
    sums.v_steer_dt += hop.v_steer_dt
    sums.v_steer_sq += hop.v_steer_sq
    sums.v_steer_steps += hop.v_steer_steps
    sums.v_speed_abs += hop.v_speed_abs
    sums.v_speed_dt += hop.v_speed_dt
    sums.v_pedal_abs += hop.v_pedal_abs
    sums.v_pedal_dt += hop.v_pedal_dt
    sums.v_reversal_small += hop.v_reversal_small
    sums.v_reversal_large += hop.v_reversal_large
    for k in range(N_BINS):
        sums.v_bins[k] += hop.v_bins[k]
    if hop.v_tlc_n > 0.0:
        sums.v_tlc_min = hop.v_tlc_min if sums.v_tlc_n == 0.0 else min(sums.v_tlc_min,
                                                                       hop.v_tlc_min)
        sums.v_tlc_n += hop.v_tlc_n


@njit(cache=True, inline="always")
def _moments(sums, j):
    """Mean and SD (ddof=1) of signal ``j`` from a window's sums (NaN without data)."""
    n = sums.v_count[j]
    total = sums.v_sum[j]
    mean = sums.v_ref[j] + total / n if n > 0.0 else np.nan
    sd = (math.sqrt(max((sums.v_squares[j] - total * total / n) / (n - 1.0), 0.0)) if n > 1.0
          else np.nan)
    return mean, sd


@njit(cache=True, inline="always")
def _rate(total, seconds):
    """A sum over the seconds it was seen in (NaN with none)."""
    return total / seconds if seconds > 0.0 else np.nan


@njit(cache=True, inline="always")
def window_features(sums, x, first):
    """Write a window's :data:`VEHICLE_FEATURES` from its hop sums ``sums`` into ``x`` from
    column ``first``."""
    x[first], x[first + 1] = _moments(sums, 0)
    x[first + 2] = _rate(sums.v_lane_abs, sums.v_lane_dt)
    x[first + 3] = sums.v_tlc_min if sums.v_tlc_n > 0.0 else np.nan
    x[first + 4], x[first + 5] = _moments(sums, 1)
    x[first + 6] = _rate(sums.v_steer_abs, sums.v_steer_dt)
    x[first + 7] = 60.0 * _rate(sums.v_reversal_small, sums.v_steer_dt)
    x[first + 8] = 60.0 * _rate(sums.v_reversal_large, sums.v_steer_dt)
    n = 0.0
    for k in range(N_BINS):
        n += sums.v_bins[k]
    entropy = np.nan
    if n > 0.0:
        entropy = 0.0
        for k in range(N_BINS):
            if sums.v_bins[k] > 0.0:
                share = sums.v_bins[k] / n
                entropy -= share * math.log(share) / math.log(9.0)
    x[first + 9] = entropy
    variance = x[first + 5] * x[first + 5]
    steps = sums.v_steer_steps
    x[first + 10] = (sums.v_steer_sq / steps / (2.0 * variance) if steps > 0.0 and variance > 0.0
                     else np.nan)
    x[first + 11], x[first + 12] = _moments(sums, 2)
    x[first + 13] = _rate(sums.v_speed_abs, sums.v_speed_dt)
    x[first + 14] = _rate(sums.v_pedal_abs, sums.v_pedal_dt)
    x[first + 15], x[first + 16] = _moments(sums, 3)
    x[first + 17], x[first + 18] = _moments(sums, 4)
