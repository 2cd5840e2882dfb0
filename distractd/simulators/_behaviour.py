"""What the driver looks at and when they blink: event sequences, before any signal is rendered.

Gaze is a semi-Markov process over targets. On the road, fixations (optokinetic pursuit of points on
the future path, Lappi & Lehtonen 2013) follow each other with small resetting saccades; their
positions are an AR(1) scatter around the road centre. After each road fixation an off-road glance
starts with a hazard equal to the driver's glance rate; the glance goes to a mirror or the
speedometer (or, in visual-manual episodes, the phone/display low and left of the road: runs of
glances with short on-road glances between, as when texting; :class:`PhoneUse` sets their
timing). Cognitive load and a slow driving-demand process modulate scatter, glance rate and fixation duration; the road's bends
and hills move the road centre. Blinks are a gamma
renewal process in time rescaled by the momentary blink rate, plus blinks attached to large gaze
shifts (Cardona & Quevedo 2014).
"""

from dataclasses import dataclass

import numpy as np
from numba import njit

from ._oculomotor import main_sequence_peak, saccade_duration

__all__ = ["TARGETS", "GLANCE_TARGETS", "GazePlan", "BlinkPlan", "PhoneUse", "DASHBOARD_DISPLAY",
           "HAND_HELD_PHONE", "ScriptedGlance", "plan_gaze", "plan_blinks", "script_gaze"]

TARGETS = ("road", "interior_mirror", "right_mirror", "left_mirror", "speedometer", "display")
"""Gaze targets of a right-hand-drive car, indexed as in :attr:`GazePlan.target`."""

GLANCE_TARGETS = ("road", "mirror_rear", "mirror_right", "mirror_left", "instrument", "display")
"""The same targets by the names of glance ground truth (:meth:`DriveTruth.glances`)."""

# Per target: yaw range, pitch range (degrees, + = right / up), viewing distance (m).
_TARGET_GEOMETRY = np.array([
    [0.0, 0.0, 0.0, 0.0, 30.0],
    [-30.0, -20.0, 5.0, 10.0, 0.6],
    [35.0, 45.0, -10.0, -5.0, 1.0],
    [-70.0, -55.0, -10.0, -5.0, 1.6],
    [0.0, 5.0, -20.0, -15.0, 0.7],
    [-25.0, -5.0, -30.0, -20.0, 0.5],   # phone/display: centre console or held low (A)
])
# Share of mirror/instrument glances per target (road and display are never drawn here).
_GLANCE_SHARE = np.array([0.0, 0.40, 0.25, 0.10, 0.25, 0.0])
_LINKED_BLINK_DEG, _LINKED_BLINK_P = 30.0, 0.85
_BLINK_CV = 0.8
_GRID_DT_S = 0.1
_ROAD_SPAN_S = 10.0   # script_gaze: the road fixations either side that set a fill's direction
SCATTER_DEMAND_MAX = 1.5
"""Driving demand widens the road fixations' scatter up to this factor: beyond it the road
fixations of a busy stretch left the forward roadway (+25 deg up) for seconds on end and made 2.7
glances away of >= 3 s and 2.7 time-sharing events per calm hour (development cohort 1, 6 drivers),
three and thirteen times the naturalistic rates below, where a driver looks at the road."""
NATURAL_LONG_PER_H, NATURAL_SHARING_PER_H = 0.89, 0.21
"""A calm driver's own long glances away (>= 3 s) and time-sharing episodes (>= 10 s away within
30 s), per hour of driving: the naturalistic base rate over 168.8 h of automotive-grade monitoring
(Mulhall et al. 2024, SIMULATOR_EVIDENCE section 5b). Both go to the display (target 5)."""
NATURAL_LONG_S = (3.0, 6.0)
"""A natural long glance lasts uniformly this long (s; our choice: the protocol's 3 s to twice it)."""
NATURAL_SHARING_AWAY_S = 11.0
NATURAL_SHARING_GAP_S = (0.3, 1.0)
"""A natural time-sharing episode: display looks (the visual-manual dwell) until this much time
away (s: the protocol's 10 s and a margin for the looks' transitions), with road checks drawn
uniformly from this range before the next look (plus the road fixation that ends it: under the
2 s that would reset the count; our choice)."""


@dataclass(frozen=True)
class PhoneUse:
    """The timing of a visual-manual task's looks at the phone/display (times in s).

    During a task section, each road fixation starts an episode with probability
    ``1 - exp(-duration / episode_tau_s)``; an episode is ``episode_looks[0]`` to
    ``episode_looks[1] - 1`` looks at the phone with ``road_gap_s`` (uniform range) on the road
    between them. One look lasts the driver's ``display_glance_median_s`` times ``dwell_scale``
    (and, with ``per_driver``, times the driver's ``phone_dwell_factor``), log-normal with the
    driver's ``display_glance_sigma`` plus ``extra_sigma``, clipped to ``dwell_range_s``.
    """

    dwell_scale: float = 1.0
    extra_sigma: float = 0.0
    dwell_range_s: tuple = (0.4, 4.0)
    road_gap_s: tuple = (0.5, 1.5)
    episode_looks: tuple = (3, 11)
    episode_tau_s: float = 6.0
    per_driver: bool = False


DASHBOARD_DISPLAY = PhoneUse()
"""Glances to a display while texting in short runs (texting glances 0.5-4 s; docs/simulator.md)."""

HAND_HELD_PHONE = PhoneUse(dwell_scale=1.7, extra_sigma=0.35, dwell_range_s=(0.4, 20.0),
                           road_gap_s=(0.4, 2.4), episode_looks=(4, 16), episode_tau_s=3.0,
                           per_driver=True)
"""Texting on a hand-held phone in long blocks (Taamneh et al. 2017): long looks down with short
looks at the road between; calibrated on the real drives' development half (docs/simulator.md)."""


@dataclass
class GazePlan:
    """Fixations (with pursuit drift) and the saccades leading into them; times in s, angles in deg.

    Saccade ``i`` moves gaze from the end of fixation ``i - 1`` to the start of fixation ``i``
    (``saccade_duration[0]`` is 0). ``distance_m`` is the viewing distance of each fixation.
    ``head_share`` (None, or NaN where the driver's own head model applies) is the share of a
    scripted fixation's gaze rotation, from the road, that the head makes (:func:`script_gaze`).
    """

    start: np.ndarray
    duration: np.ndarray
    yaw: np.ndarray
    pitch: np.ndarray
    drift_yaw: np.ndarray
    drift_pitch: np.ndarray
    target: np.ndarray
    distance_m: np.ndarray
    saccade_start: np.ndarray
    saccade_duration: np.ndarray
    saccade_amplitude: np.ndarray
    saccade_peak: np.ndarray
    head_share: np.ndarray = None

    def __len__(self):
        return len(self.start)


@dataclass(frozen=True)
class ScriptedGlance:
    """One scripted glance away from the road (times in s, angles in deg, + = right / up).

    The glance runs from ``start_s``, where the saccade leaving the road starts (ISO 15007 counts
    the transition into the glance), for ``duration_s``, to the start of the saccade back.
    ``head_share`` is the share of the gaze rotation the head makes: about 0.8 for an "owl"
    (head turns), 0 for a "lizard" (eyes only; the head still makes up what exceeds the eye's
    range). ``target`` 0 (road) scripts a stretch of road fixations instead, facing forward with
    no glance away (the fatigue scenarios' closures); its angles are not used.
    """

    start_s: float
    duration_s: float
    yaw_deg: float
    pitch_deg: float
    head_share: float
    target: int = 5
    distance_m: float = 0.7


@dataclass
class BlinkPlan:
    """Blink onsets and phase durations (s) and depth (peak closure, 0..1)."""

    start: np.ndarray
    close_s: np.ndarray
    closed_s: np.ndarray
    open_s: np.ndarray
    depth: np.ndarray


def plan_gaze(rng, traits, t_end_s, load, visual, road, demand, *, grid_dt_s=_GRID_DT_S,
              phone=DASHBOARD_DISPLAY, natural=False):
    """Draw the fixation and saccade sequence of one drive.

    Parameters
    ----------
    rng : numpy.random.Generator
    traits : DriverTraits
    t_end_s : float
        Drive length in seconds.
    load, visual : ndarray
        Cognitive load (0..1) and visual-task flag (0/1) on a grid of step ``grid_dt_s`` from 0 s.
    road : ndarray of shape (n_grid, 2)
        Direction (yaw, pitch; deg) of the road ahead relative to the car on the same grid: bends
        and hills move the road-centre fixations (tangent-point looking, Land & Lee 1994).
    demand : ndarray of shape (n_grid,)
        Driving demand factor (around 1) on the same grid: scales road scatter and glance rate.
    phone : PhoneUse, default=DASHBOARD_DISPLAY
        How the visual task uses the phone/display.
    natural : bool, default=False
        Unscripted (naturalistic) driving: the driver makes their own long glances and
        time-sharing episodes at the naturalistic rates (:data:`NATURAL_LONG_PER_H`) and the road
        fixations stay on the road (:data:`SCATTER_DEMAND_MAX`). The task protocols script their
        distraction in sections and keep the road scatter their calibration on real drives was
        measured with (docs/results/simulator-calibration.md).

    Returns
    -------
    GazePlan
    """
    n_max = int(t_end_s * 11) + 64
    geometry = _TARGET_GEOMETRY.copy()
    geometry[1:, 0] = rng.uniform(geometry[1:, 0], geometry[1:, 1])
    geometry[1:, 2] = rng.uniform(geometry[1:, 2], geometry[1:, 3])
    geometry[0, 2] = traits.road_pitch_deg
    normals = rng.standard_normal((n_max, 5))
    uniforms = rng.random((n_max, 4))
    own = rng.random((n_max, 3))   # the natural events' draws: last, so those above stay
    params = np.array([
        traits.road_sd_yaw_deg, traits.road_sd_pitch_deg, traits.road_pitch_deg,
        traits.fixation_median_s, traits.glance_rate_per_min / 60.0, traits.glance_median_s,
        traits.okn_gain_per_s, traits.load_gaze_sd_yaw, traits.load_gaze_sd_pitch,
        traits.load_glance_rate, traits.load_fixation, traits.vmax_deg_s, traits.c_deg,
        traits.load_velocity, traits.load_gaze_pitch_deg,
        traits.display_glance_median_s * phone.dwell_scale
        * (traits.phone_dwell_factor if phone.per_driver else 1.0),
        traits.display_glance_sigma + phone.extra_sigma, *phone.dwell_range_s,
        phone.road_gap_s[0], phone.road_gap_s[1] - phone.road_gap_s[0], phone.episode_looks[0],
        phone.episode_looks[1] - phone.episode_looks[0], phone.episode_tau_s,
        SCATTER_DEMAND_MAX if natural else np.inf, natural * NATURAL_LONG_PER_H / 3600.0,
        natural * NATURAL_SHARING_PER_H / 3600.0,
        NATURAL_LONG_S[0], NATURAL_LONG_S[1] - NATURAL_LONG_S[0], NATURAL_SHARING_AWAY_S,
        NATURAL_SHARING_GAP_S[0], NATURAL_SHARING_GAP_S[1] - NATURAL_SHARING_GAP_S[0],
    ])
    out = np.empty((n_max, 10))
    n = _plan_gaze_kernel(t_end_s, grid_dt_s, load, demand, visual, road, geometry[:, 0],
                          geometry[:, 2], np.cumsum(_GLANCE_SHARE), params, normals, uniforms,
                          own, out)
    out = out[:n]
    start, duration = out[:, 0], out[:, 1]
    target = out[:, 6].astype(np.int8)
    amplitude, into = out[:, 7], out[:, 8]
    return GazePlan(
        start=start, duration=duration, yaw=out[:, 2], pitch=out[:, 3], drift_yaw=out[:, 4],
        drift_pitch=out[:, 5], target=target, distance_m=geometry[target, 4],
        saccade_start=start - into, saccade_duration=into,
        saccade_amplitude=amplitude, saccade_peak=out[:, 9],
    )


@njit(cache=True)
def _plan_gaze_kernel(t_end, grid_dt, load, demand, visual, road, target_yaw, target_pitch,
                      glance_cdf, params, normals, uniforms, own, out):
    (sd_yaw, sd_pitch, road_pitch, fix_median, glance_rate, glance_median, okn_gain,
     m_sd_yaw, m_sd_pitch, m_glance, m_fix, vmax, c, m_vel, ahead_pitch, display_median,
     display_sigma, display_min, display_max, gap_min, gap_span, looks_min, looks_span,
     episode_tau, scatter_demand_max, long_rate, sharing_rate, long_min, long_span,
     sharing_away, sharing_gap_min, sharing_gap_span) = params
    n_grid = len(load)
    t = 0.0
    road_yaw, road_pitch_now = 0.0, road_pitch
    end_yaw, end_pitch = 0.0, road_pitch
    target = 0
    episode_left = 0
    road_since_display, road_needed = 0.0, 0.0
    long_next, sharing_left, decided = False, 0.0, 0.0
    i = 0
    while t < t_end and i < len(out):
        k = min(int(t / grid_dt), n_grid - 1)
        level, dem, vis = load[k], demand[k], visual[k] > 0.5
        z, u = normals[i], uniforms[i]
        if target == 0:
            rho = 0.5
            spread = min(dem, scatter_demand_max)
            s_yaw = sd_yaw * spread * m_sd_yaw ** level
            s_pitch = sd_pitch * spread * m_sd_pitch ** level
            road_yaw = rho * road_yaw + np.sqrt(1 - rho * rho) * s_yaw * z[0]
            road_pitch_now = road_pitch + rho * (road_pitch_now - road_pitch) + \
                np.sqrt(1 - rho * rho) * s_pitch * z[1]
            yaw = road_yaw + road[k, 0]
            pitch = road_pitch_now + road[k, 1] + ahead_pitch * level
            duration = fix_median * m_fix ** level * np.exp(0.45 * z[2])
            duration = min(max(duration, 0.1), 3.0)
            drift_yaw = okn_gain * yaw + 0.3 * z[3]
            drift_pitch = -okn_gain * 2.0
        elif target == 5:
            yaw, pitch = target_yaw[5] + z[0], target_pitch[5] + z[1]
            duration = min(max(display_median * np.exp(display_sigma * z[2]), display_min),
                           display_max)
            if long_next:
                duration = long_min + long_span * own[i, 2]
                long_next = False
            sharing_left -= duration
            drift_yaw, drift_pitch = 0.0, 0.0
        else:
            yaw, pitch = target_yaw[target] + z[0], target_pitch[target] + 0.5 * z[1]
            duration = min(max(glance_median * np.exp(0.35 * z[2]), 0.2), 3.0)
            drift_yaw, drift_pitch = 0.0, 0.0
        amplitude, saccade, peak = 0.0, 0.0, 0.0
        if i > 0:
            amplitude = np.sqrt((yaw - end_yaw) ** 2 + (pitch - end_pitch) ** 2)
            peak = main_sequence_peak(amplitude, vmax, c) * m_vel ** level * np.exp(0.07 * z[4])
            saccade = saccade_duration(amplitude, peak, c / vmax)
        t += saccade
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = t, duration, yaw, pitch
        out[i, 4], out[i, 5], out[i, 6] = drift_yaw, drift_pitch, target
        out[i, 7], out[i, 8], out[i, 9] = amplitude, saccade, peak
        end_yaw, end_pitch = yaw + drift_yaw * duration, pitch + drift_pitch * duration
        t += duration
        # choose the next target
        if target != 0:
            if target == 5 and sharing_left > 0.0:   # a natural time-sharing episode
                road_since_display, road_needed = 0.0, sharing_gap_min + sharing_gap_span * u[3]
            elif target == 5:
                road_since_display, road_needed = 0.0, gap_min + gap_span * u[3]
            road_yaw, road_pitch_now = 0.3 * z[3], road_pitch
            target = 0
        else:
            road_since_display += duration
            if vis and episode_left == 0 and u[2] < 1 - np.exp(-duration / episode_tau):
                episode_left = int(looks_min) + int(looks_span * u[3])
                road_needed = 0.0
            if episode_left > 0 and not vis:
                episode_left = 0
            if episode_left > 0 and road_since_display >= road_needed:
                target = 5
                episode_left -= 1
            elif not vis and sharing_left > 0.0:
                if road_since_display >= road_needed:
                    target = 5
            elif not vis and own[i, 0] < 1 - np.exp(-long_rate * (t - decided)):
                target, long_next = 5, True
            elif not vis and own[i, 1] < 1 - np.exp(-sharing_rate * (t - decided)):
                target, sharing_left = 5, sharing_away
            elif u[0] < 1 - np.exp(-glance_rate * dem * m_glance ** level * duration):
                target = 1
                while target < 4 and u[1] > glance_cdf[target]:
                    target += 1
            decided = t   # the natural events' hazards run over driving time, glances included
        i += 1
    return i


def script_gaze(plan, glances, traits, *, clear_s=4.0, road_fixation_s=0.5):
    """Replace a drive's gaze around scripted glances; return a new :class:`GazePlan`.

    Every planned fixation that overlaps a scripted run (consecutive glances and the road
    checks between them) widened by ``clear_s`` on each side is removed; the cleared time and the
    road checks are filled with road fixations of ``road_fixation_s`` (at the median direction of
    the road fixations within ``_ROAD_SPAN_S`` of the run, so bends carry on; one fixation's
    direction could sit far out in the road scatter and make the whole fill a glance away), and
    the glances are inserted with main-sequence saccades into them. The scripted glances' truth (:meth:`DriveTruth.glances`) is then exactly
    ``start_s`` to ``start_s + duration_s``; a road stretch (``target`` 0) is all road fixations.
    """
    glances = sorted(glances, key=lambda g: g.start_s)
    runs, current = [], [glances[0]] if glances else []
    for glance in glances[1:]:
        if glance.start_s - (current[-1].start_s + current[-1].duration_s) < 2 * clear_s:
            current.append(glance)
        else:
            runs.append(current)
            current = [glance]
    if current:
        runs.append(current)
    rows = [dict(start=plan.start[i], duration=plan.duration[i], yaw=plan.yaw[i],
                 pitch=plan.pitch[i], drift_yaw=plan.drift_yaw[i],
                 drift_pitch=plan.drift_pitch[i], target=plan.target[i],
                 distance_m=plan.distance_m[i], saccade_start=plan.saccade_start[i],
                 head_share=np.nan) for i in range(len(plan))]
    for run in runs:
        lo = run[0].start_s - clear_s
        hi = run[-1].start_s + run[-1].duration_s + clear_s
        before = [r for r in rows if r["start"] + r["duration"] <= lo]
        after = [r for r in rows if r["saccade_start"] >= hi]
        near = [r for r in rows if r["target"] == 0
                and lo - _ROAD_SPAN_S <= r["start"] <= hi + _ROAD_SPAN_S]
        yaw0, pitch0 = ((np.median([r["yaw"] for r in near]),
                         np.median([r["pitch"] for r in near])) if near
                        else (0.0, traits.road_pitch_deg))
        t = before[-1]["start"] + before[-1]["duration"] if before else lo
        t_next = after[0]["saccade_start"] if after else hi
        inserted = []
        for glance in run:
            inserted += _road_fill(t, glance.start_s, yaw0, pitch0, road_fixation_s)
            t = glance.start_s
            if glance.target == 0:   # a road stretch: the fill after it covers it
                continue
            inserted.append(dict(start=glance.start_s, duration=glance.duration_s,
                                 yaw=glance.yaw_deg, pitch=glance.pitch_deg, drift_yaw=0.0,
                                 drift_pitch=0.0, target=glance.target,
                                 distance_m=glance.distance_m, saccade_start=glance.start_s,
                                 head_share=glance.head_share))
            t = glance.start_s + glance.duration_s
        inserted += _road_fill(t, t_next, yaw0, pitch0, road_fixation_s)
        rows = before + inserted + after
    return _plan_from_rows(rows, traits)


def _road_fill(t0, t1, yaw, pitch, fixation_s):
    """Road fixations from saccade start ``t0`` to ``t1``, about ``fixation_s`` each, alternating
    0.5 deg either side of the road direction."""
    n = max(int(round((t1 - t0) / fixation_s)), 1) if t1 > t0 else 0
    edges = np.linspace(t0, t1, n + 1)
    return [dict(start=a, duration=b - a, yaw=yaw + 0.5 * (-1) ** k, pitch=pitch, drift_yaw=0.0,
                 drift_pitch=0.0, target=0, distance_m=30.0, saccade_start=a, head_share=np.nan)
            for k, (a, b) in enumerate(zip(edges[:-1], edges[1:]))]


def _plan_from_rows(rows, traits):
    """A :class:`GazePlan` from fixation rows whose ``start`` is their saccade's start: each
    saccade takes its main-sequence duration out of the fixation it leads into."""
    column = {key: np.array([r[key] for r in rows], dtype=np.float64) for key in rows[0]}
    amplitude = np.r_[0.0, np.hypot(np.diff(column["yaw"]), np.diff(column["pitch"]))]
    peak = np.array([main_sequence_peak(a, traits.vmax_deg_s, traits.c_deg) for a in amplitude])
    into = np.array([saccade_duration(a, p, traits.c_deg / traits.vmax_deg_s) if a > 0 else 0.0
                     for a, p in zip(amplitude, peak)])
    scripted = column["start"] == column["saccade_start"]
    into = np.where(scripted, np.minimum(into, 0.5 * column["duration"]), column["start"]
                    - column["saccade_start"])
    start = np.where(scripted, column["saccade_start"] + into, column["start"])
    return GazePlan(
        start=start, duration=column["start"] + column["duration"] - start, yaw=column["yaw"],
        pitch=column["pitch"], drift_yaw=column["drift_yaw"], drift_pitch=column["drift_pitch"],
        target=column["target"].astype(np.int8), distance_m=column["distance_m"],
        saccade_start=start - into, saccade_duration=into, saccade_amplitude=amplitude,
        saccade_peak=peak, head_share=column["head_share"])


def plan_blinks(rng, traits, t_end_s, load, visual, gaze, *, grid_dt_s=_GRID_DT_S):
    """Draw the blinks of one drive.

    Spontaneous blinks form a gamma renewal process (within-driver inter-blink CV 0.8, Doughty
    2002) in operational time, mapped to clock time by the momentary rate: the driver's rate times
    ``load_blink_rate ** load``, halved during visual tasks (blink inhibition). A blink joins a
    gaze shift over 30 deg with probability 0.85; spontaneous blinks make up the rest of the rate.
    Blinks closer than 0.4 s to the previous one are dropped.
    """
    large = gaze.saccade_amplitude > _LINKED_BLINK_DEG
    linked = gaze.saccade_start[large & (rng.random(len(gaze)) < _LINKED_BLINK_P)]
    linked_rate = len(linked) / t_end_s
    base = max(traits.blink_rate_per_min / 60.0 - linked_rate, 0.5 * traits.blink_rate_per_min / 60)
    rate = base * traits.load_blink_rate ** load * (1 - 0.5 * visual)
    grid_t = np.arange(len(load)) * grid_dt_s
    cumulative = np.r_[0.0, np.cumsum(rate[:-1] * grid_dt_s)]
    shape = 1 / _BLINK_CV ** 2
    n_max = int(cumulative[-1] * 1.5) + 32
    operational = np.cumsum(rng.gamma(shape, 1 / shape, n_max)) - rng.random() * 2
    operational = operational[(operational >= 0) & (operational < cumulative[-1])]
    onsets = np.sort(np.r_[np.interp(operational, cumulative, grid_t), linked])
    onsets = onsets[np.diff(onsets, prepend=-np.inf) > 0.4]
    n = len(onsets)
    partial = rng.random(n) < traits.blink_partial_fraction
    return BlinkPlan(
        start=onsets,
        close_s=traits.blink_close_s * np.exp(0.1 * rng.standard_normal(n)),
        closed_s=rng.uniform(0.03, 0.09, n),
        open_s=traits.blink_open_s * np.exp(0.15 * rng.standard_normal(n)),
        depth=np.where(partial, rng.uniform(0.4, 0.9, n), 1.0),
    )
