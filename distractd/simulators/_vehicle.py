"""The simulated car: lane keeping, steering, speed, pedals and a lead vehicle that respond to the
driver's eyes and mind.

A kinematic single-track car (heading error ``ψ`` to the lane, lateral offset ``y``, positive left)
on a road of slowly varying curvature, pushed by lateral disturbances (wind, road camber), steered
by an intermittent driver controller: every ``interval`` seconds the driver, **while looking at
the road**, sets the steering wheel to the curve's angle plus a correction of offset and heading
(a damped second-order lane keeper of natural frequency ``ω`` and damping 0.7), with motor noise;
the wheel follows with a 0.2 s lag. What the literature reports is built in:

- **eyes off the road** (any glance away: mirrors, instruments, phone): only the loose, rare
  corrections of peripheral vision (Summala, Nieminen & Punto 1996, Human Factors 38(3):442-451:
  lane keeping survives on peripheral vision, less precisely) — the wheel is mostly held
  (steering neglect) and the car drifts; on the return the first corrections are stronger
  for ``_RETURN_S`` (over-compensation; Liang & Lee 2010, doi:10.1016/j.aap.2009.05.001: steering
  neglect and over-compensation are the failures of visual distraction); visual load lowers the
  speed chosen (Engström, Johansson & Östlund 2005, doi:10.1016/j.trf.2005.04.012);
- **cognitive load**: corrections more frequent and tighter with more motor noise — more small
  steering reversals (Markkula & Engström 2006) and a narrower lane position (Engström et al.
  2005; He & McCarley 2011), speed unchanged (Engström et al. 2005);
- **speed**: a cruise speed per driver with slow traffic drift, held by a proportional
  accelerator; the brake when the car is too fast or closes on the lead vehicle (time headway
  per driver); the pedals are held while the eyes are away.

Calibrated against the shared Taamneh et al. 2017 drives (development half, 18 drivers; 1 Hz
rows; medians over drivers): normal drive SDLP 0.24 m, mean absolute steering change per second
0.012 rad, speed 19.7 m/s; texting seconds: mean absolute steering change 0.037 rad per second
(3.1 times the normal drive's), lateral speed 0.064 m/s (1.3 times); cognitive question seconds:
SDLP 0.12 m against 0.29 m off task in the same drive, steering change +8 %, speed unchanged.
docs/simulator.md lists each number with its source.
"""

import math

import numpy as np
from numba import njit

from ..pipeline import FIELD_INDEX, VEHICLE_FIELDS

__all__ = ["VehicleTraits", "draw_vehicle_traits", "simulate_vehicle", "VEHICLE_COLUMNS"]

VEHICLE_COLUMNS = [FIELD_INDEX[name] for name in VEHICLE_FIELDS]
"""Block columns of the vehicle fields, in :data:`~distractd.pipeline.VEHICLE_FIELDS` order."""

_DT_S = 0.05                 # integration step, s
_WHEELBASE_M = 2.8           # a mid-size car (A)
_STEERING_RATIO = 15.0       # steering-wheel to road-wheel angle (A)
_WHEEL_LAG_S = 0.2           # the wheel follows the driver's aim (A)
_DAMPING = 0.7               # lane keeper's damping (A)
_CURVATURE_SD, _CURVATURE_TAU_S = 0.0012, 20.0   # 1/m: Taamneh steering SD 0.05 rad (L)
_WIND_SD, _WIND_TAU_S = 0.001, 1.5                # heading disturbance, rad/s (L: SDLP 0.24 m)
_RETURN_S, _RETURN_GAIN = 1.0, 1.3               # over-compensation after a glance (Liang & Lee)
_LOAD_GAIN = 0.6             # cognitive load: lane keeper frequency x (1 + 0.6 load) (L: SDLP)
_LOAD_INTERVAL = 0.35        # ... and correction interval x (1 - 0.35 load) (Markkula & Engström)
_LOAD_NOISE = 0.4            # ... and motor noise x (1 + 0.4 load) (L: steering change +8 %)
_VISUAL_SLOWING = 0.04       # visual load: chosen speed x (1 - 0.04) (Engström et al. 2005)
_SPEED_DRIFT_SD, _SPEED_DRIFT_TAU_S = 1.5, 60.0  # traffic, m/s (L: speed SD 2.8 m/s)
_LEAD_SD, _LEAD_TAU_S = 1.5, 30.0                # lead vehicle speed around the cruise speed
_PERIPHERAL_GAIN, _PERIPHERAL_INTERVAL = 0.4, 3.0  # eyes away: peripheral vision keeps the
                             # lane loosely, with rarer corrections (Summala et al. 1996) (A)
_MAX_AIM_RAD = 1.5           # the largest correction a driver makes at speed (A)
_TREMOR_SD, _TREMOR_TAU_S = 0.008, 0.3           # fast wheel jitter, rad (L: steering change)
_TASK_TREMOR_SD, _TASK_TREMOR_TAU_S = 0.028, 0.1  # a visual-manual task's jitter (L: x 3.1)
_MAX_ACCEL, _MAX_BRAKE = 2.5, 7.0                # m/s² at full accelerator / brake (A)


class VehicleTraits:
    """A driver's way with the car, drawn once per driver (:func:`draw_vehicle_traits`).

    Attributes
    ----------
    cruise_m_s : float
        Chosen speed, m/s (Taamneh normal drives 19.7 m/s, driver SD about 1).
    omega : float
        Lane keeper natural frequency, rad/s.
    interval_s : float
        Time between steering corrections, s.
    motor_sd_rad : float
        Steering-wheel aim noise per correction, rad.
    headway_s : float
        Time headway the driver keeps to a lead vehicle, s.
    """

    def __init__(self, cruise_m_s, omega, interval_s, motor_sd_rad, headway_s):
        self.cruise_m_s = cruise_m_s
        self.omega = omega
        self.interval_s = interval_s
        self.motor_sd_rad = motor_sd_rad
        self.headway_s = headway_s


def draw_vehicle_traits(rng):
    """One driver's :class:`VehicleTraits` (log-normal spreads of about 15-25 %)."""
    return VehicleTraits(
        cruise_m_s=19.7 + 1.0 * rng.standard_normal(),
        omega=0.35 * math.exp(0.2 * rng.standard_normal()),
        interval_s=0.45 * math.exp(0.2 * rng.standard_normal()),
        motor_sd_rad=0.004 * math.exp(0.25 * rng.standard_normal()),
        headway_s=2.0 * math.exp(0.2 * rng.standard_normal()),
    )


def simulate_vehicle(rng, traits, t, on_road, load, visual):
    """The car's signals at times ``t`` (s) for a driver whose eyes are on the road where
    ``on_road`` and under ``load`` (0-1, cognitive) and ``visual`` (0-1, a visual-manual task).

    Parameters
    ----------
    rng : numpy.random.Generator
        The drive's vehicle stream (road, wind, noise).
    traits : VehicleTraits
    t : ndarray of shape (n,)
        Frame times, s, from 0, increasing.
    on_road, load, visual : ndarray of shape (n,)

    Returns
    -------
    ndarray of shape (n, len(VEHICLE_FIELDS))
        The vehicle fields in :data:`~distractd.pipeline.VEHICLE_FIELDS` order.
    """
    n_steps = int(math.ceil((t[-1] if len(t) else 0.0) / _DT_S)) + 2
    grid = np.arange(n_steps) * _DT_S
    eyes = np.interp(grid, t, on_road.astype(np.float64)) >= 0.5 if len(t) else np.ones(0, bool)
    curvature = _smooth(rng, n_steps, _CURVATURE_TAU_S, _CURVATURE_SD)
    wind = _ou(rng, n_steps, _WIND_TAU_S, _WIND_SD)
    cruise = traits.cruise_m_s + _smooth(rng, n_steps, _SPEED_DRIFT_TAU_S, _SPEED_DRIFT_SD)
    lead = traits.cruise_m_s + _ou(rng, n_steps, _LEAD_TAU_S, _LEAD_SD)
    noise = rng.standard_normal(n_steps)
    visual_grid = np.interp(grid, t, visual)
    tremor = (_ou(rng, n_steps, _TREMOR_TAU_S, _TREMOR_SD)
              + _ou(rng, n_steps, _TASK_TREMOR_TAU_S, _TASK_TREMOR_SD) * visual_grid)
    out = np.empty((n_steps, len(VEHICLE_FIELDS)))
    _drive(eyes, np.interp(grid, t, load), visual_grid, curvature, wind, tremor, cruise,
           lead, noise, traits.omega, traits.interval_s, traits.motor_sd_rad, traits.headway_s,
           out)
    return np.column_stack([np.interp(t, grid, out[:, j]) for j in range(out.shape[1])])


def _ou(rng, n, tau_s, sd):
    a = math.exp(-_DT_S / tau_s)
    x = np.empty(n)
    x[0] = rng.standard_normal() * sd
    steps = rng.standard_normal(n) * sd * math.sqrt(1 - a * a)
    _ar1(steps, a, x)
    return x


def _smooth(rng, n, tau_s, sd):
    """An OU series filtered once more (smooth), scaled to SD ``sd``."""
    a = math.exp(-_DT_S / tau_s)
    x = _ou(rng, n, tau_s, 1.0)
    y = np.empty(n)
    y[0] = x[0]
    _ar1((1 - a) * x, a, y)
    scale = math.sqrt((1 + a * a) / (1 + a) ** 2)
    return y * sd / scale


@njit(cache=True)
def _ar1(steps, a, x):
    for i in range(1, len(x)):
        x[i] = a * x[i - 1] + steps[i]


@njit(cache=True)
def _drive(eyes, load, visual, curvature, wind, tremor, cruise, lead, noise, omega, interval_s,
           motor_sd, headway_s, out):
    """Integrate the car and the driver over the grid; one row of vehicle fields per step."""
    y = 0.0
    psi = 0.0
    wheel = _STEERING_RATIO * _WHEELBASE_M * curvature[0]
    aim = wheel
    v = cruise[0]
    gap = headway_s * v
    distance = 0.0
    accelerator = 0.2
    brake = 0.0
    next_correction = 0.0
    away_until = -1.0   # the time the eyes last came back, s
    t = 0.0
    was_on = True
    for i in range(len(eyes)):
        t = i * _DT_S
        on = eyes[i]
        if on and not was_on:
            away_until = t
        was_on = on
        if t >= next_correction:
            w = omega * (1.0 + _LOAD_GAIN * load[i])
            if not on:
                w *= _PERIPHERAL_GAIN
            elif t - away_until < _RETURN_S:
                w *= _RETURN_GAIN
            k_y = w * w * _STEERING_RATIO * _WHEELBASE_M / max(v * v, 1.0)
            k_psi = 2.0 * _DAMPING * w * _STEERING_RATIO * _WHEELBASE_M / max(v, 1.0)
            aim = (_STEERING_RATIO * _WHEELBASE_M * curvature[i] - k_y * y - k_psi * psi
                   + motor_sd * (1.0 + _LOAD_NOISE * load[i]) * noise[i])
            aim = min(max(aim, -_MAX_AIM_RAD), _MAX_AIM_RAD)
            interval = interval_s * (1.0 - _LOAD_INTERVAL * load[i])
            if not on:
                interval *= _PERIPHERAL_INTERVAL
            elif t - away_until < _RETURN_S:
                interval *= 0.5
            next_correction = t + interval
            # the feet: follow the chosen speed and keep the headway to the lead vehicle
            target = cruise[i] * (1.0 - _VISUAL_SLOWING * visual[i])
            target = min(target, lead[i] + 0.25 * (gap - headway_s * v))
            error = target - v
            accelerator = min(max(0.25 + 0.35 * error, 0.0), 1.0)
            brake = min(max(-0.2 * (error + 1.5), 0.0), 1.0)
            if brake > 0.0:
                accelerator = 0.0
        wheel += (aim - wheel) * (1.0 - math.exp(-_DT_S / _WHEEL_LAG_S))
        steering = wheel + tremor[i]
        yaw_rate = v * steering / (_STEERING_RATIO * _WHEELBASE_M)
        psi += (yaw_rate - v * curvature[i] + wind[i]) * _DT_S
        y += v * math.sin(psi) * _DT_S
        accel = _MAX_ACCEL * (accelerator - 0.25) - _MAX_BRAKE * brake - 0.01 * (v - cruise[i])
        v = max(v + accel * _DT_S, 0.0)
        gap = min(max(gap + (lead[i] - v) * _DT_S, 5.0), 200.0)
        distance += v * _DT_S
        row = out[i]
        row[0] = v
        row[1] = steering
        row[2] = y
        row[3] = accel
        row[4] = accelerator
        row[5] = brake
        row[6] = yaw_rate
        row[7] = gap
        row[8] = distance
