"""Simulated drives: one driver per seed, all canonical fields, ground-truth labels.

A drive is assembled in stages, each with its own child of the seed's
:class:`numpy.random.SeedSequence` so that switching one option (say ``drops``) leaves every other
signal unchanged: driver traits, schedule, gaze plan, blinks, body (head, pupil, eyelid), tracker.
"""

import math
from dataclasses import dataclass

import numpy as np

from .._validation import Interval, check_params
from ..pipeline import FIELD_INDEX, Recording, empty_block
from ._behaviour import plan_blinks, plan_gaze
from ._driver import draw_driver
from ._oculomotor import ou_noise, render_eyelid, render_gaze, render_head, smooth_drift
from ._protocol import cognitive_load, drive_schedule, schedule_labels
from ._tracker import apply_tracker

__all__ = ["simulate_drive", "simulate_drive_truth", "DriveTruth", "simulate_cohort",
           "cohort_seeds"]

SIMULATOR_VERSION = 2
_GRID_DT_S = 0.1
_IPD_M = 0.063
_EYE_RANGE_DEG = 50.0       # eye-in-head yaw limit (human range about 55 deg)
_HEAD_OMEGA = 8.0  # rad/s: a critically damped head settles (95 %) in about 0.6 s
_SECTION_GAIN_SIGMA = 0.3   # log-normal spread of the load level between task sections (A)
_SECTION_SET_SD = 0.5       # per-section variation of the load posture, times its mean size (A)
_POSTURE_TAU_S = 300.0      # posture creep (A)
_LIGHT_TAU_S = 90.0         # ambient-light pupil drift: clouds, road direction (A)
_DEMAND_SD, _DEMAND_TAU_S = 0.8, 60.0         # log driving demand: traffic, junctions (A)
_ROAD_SD_DEG, _ROAD_TAU_S = (2.5, 1.0), 40.0  # road direction ahead: bends, hills (A)
_DEFAULT_OPTIONS = {"cognitive": True, "visual": False, "noise": True, "track_loss": True,
                    "drops": True, "duplicates": True, "jitter": True}
_CONSTRAINTS = {
    "seed": Interval(0, None, integer=True),
    "duration_s": [None, Interval(0, None, closed="neither")],
    "rate_hz": Interval(1.0, 2000.0),
    "cognitive": bool, "visual": bool, "noise": bool, "track_loss": bool, "drops": bool,
    "duplicates": bool, "jitter": bool,
}


@dataclass
class DriveTruth:
    """What really happened in a simulated drive (angles in degrees, times in seconds).

    ``t`` is the nominal frame grid; ``rows`` maps each delivered sample to its frame. ``gaze`` and
    ``blinks`` are the event plans (:class:`GazePlan`, :class:`BlinkPlan`); ``load`` the cognitive
    load per frame; ``gaze_yaw``/``gaze_pitch`` the true gaze in the world, ``head`` (n, 3) the true
    head yaw/pitch/roll, ``closure`` the true eyelid closure, per frame; ``gaze_offset`` (n, 2) the
    tracker's gaze offset (yaw, pitch) per frame; ``section_gains`` the load level of each task
    section.
    """

    traits: object
    sections: tuple
    t: np.ndarray
    rows: np.ndarray
    gaze: object
    blinks: object
    load: np.ndarray
    gaze_yaw: np.ndarray
    gaze_pitch: np.ndarray
    head: np.ndarray
    closure: np.ndarray
    gaze_offset: np.ndarray
    section_gains: np.ndarray


def simulate_drive(seed, duration_s=None, rate_hz=60.0, *, cognitive=True, visual=False,
                   noise=True, track_loss=True, drops=True, duplicates=True, jitter=True):
    """Simulate one driver's drive under the source protocol.

    Parameters
    ----------
    seed : int
        Non-negative seed; it fixes the driver and the drive.
    duration_s : float or None, default=None
        Drive length in seconds; None follows the protocol (nine task sections, about 20-35 min).
    rate_hz : float, default=60.0
        Nominal tracker frame rate in Hz.
    cognitive : bool, default=True
        Task sections load the driver cognitively (the sound-counting task).
    visual : bool, default=False
        Task sections also contain visual-manual episodes: runs of 3-10 display glances (median
        1.1 s, some over 2 s).
    noise, track_loss, drops, duplicates, jitter : bool, default=True
        Tracker imperfections; see :func:`~distractd.simulators._tracker.apply_tracker`.

    Returns
    -------
    Recording
        Samples as delivered by the tracker; labels 1 inside task sections, 0 elsewhere (recovery
        gaps included); ``meta`` holds the seed, rate, options, driver traits and schedule.

    Examples
    --------
    >>> recording = simulate_drive(7, duration_s=60.0, rate_hz=30.0)
    >>> recording.meta["source"], recording.samples.shape[1]
    ('simulator', 18)
    """
    return simulate_drive_truth(
        seed, duration_s, rate_hz, cognitive=cognitive, visual=visual, noise=noise,
        track_loss=track_loss, drops=drops, duplicates=duplicates, jitter=jitter)[0]


def simulate_drive_truth(seed, duration_s=None, rate_hz=60.0, **options):
    """:func:`simulate_drive` plus the ground truth behind it.

    Returns
    -------
    recording : Recording
    truth : DriveTruth
        The events and true signals, for calibration and for evaluating event detectors.
    """
    unknown = set(options) - set(_DEFAULT_OPTIONS)
    if unknown:
        raise TypeError(f"simulate_drive got unknown options {sorted(unknown)}")
    options = {**_DEFAULT_OPTIONS, **options}
    check_params({"seed": seed, "duration_s": duration_s, "rate_hz": rate_hz, **options},
                 _CONSTRAINTS, owner="simulate_drive")
    cognitive, visual = options["cognitive"], options["visual"]
    streams = np.random.SeedSequence(seed).spawn(7)
    rng_schedule, rng_gaze, rng_blinks, rng_body, rng_tracker, rng_road = (
        np.random.default_rng(s) for s in streams[1:])
    traits = draw_driver(streams[0])
    sections = drive_schedule(rng_schedule, duration_s)
    task_starts = np.array([s.start_s for s in sections if s.kind == "task"])
    gains = np.exp(_SECTION_GAIN_SIGMA * rng_schedule.standard_normal(len(task_starts)))
    # each task section's load posture (head lean, head set) varies around the driver's own
    section_sets = rng_schedule.standard_normal((len(task_starts), 6)) * _SECTION_SET_SD
    t_end = sections[-1].end_s
    n = int(math.floor(t_end * rate_hz))
    t = np.arange(n) / rate_hz

    grid_t = np.arange(int(math.ceil(t_end / _GRID_DT_S)) + 1) * _GRID_DT_S
    load_grid = (cognitive_load(grid_t, sections, gains=gains) if cognitive
                 else np.zeros(len(grid_t)))
    visual_grid = (schedule_labels(grid_t, sections).astype(np.float64) if visual
                   else np.zeros(len(grid_t)))
    demand_grid = np.exp(ou_noise(rng_road, len(grid_t), _GRID_DT_S, _DEMAND_TAU_S, _DEMAND_SD)
                         - _DEMAND_SD ** 2 / 2)   # mean 1
    road_grid = np.column_stack([smooth_drift(rng_road, len(grid_t), _GRID_DT_S, _ROAD_TAU_S, sd)
                                 for sd in _ROAD_SD_DEG])
    gaze = plan_gaze(rng_gaze, traits, t_end, load_grid, visual_grid, road_grid, demand_grid,
                     grid_dt_s=_GRID_DT_S)
    blinks = plan_blinks(rng_blinks, traits, t_end, load_grid, visual_grid, gaze,
                         grid_dt_s=_GRID_DT_S)
    load = np.interp(t, grid_t, load_grid)
    demand = np.interp(t, grid_t, demand_grid)

    gaze_yaw, gaze_pitch, in_saccade = render_gaze(gaze, n, rate_hz)
    fixation = np.maximum(np.searchsorted(gaze.start, t, side="right") - 1, 0)
    posture = np.column_stack([smooth_drift(rng_body, n, 1 / rate_hz, _POSTURE_TAU_S, 1.0)
                               for _ in range(2)])
    current = np.maximum(np.searchsorted(task_starts, t, side="right") - 1, 0)
    load_set = load[:, None] * (1 + section_sets[current]) if len(task_starts) else \
        np.zeros((n, 6))
    head = _head(rng_body, traits, gaze, t, load, demand, posture, load_set[:, 3:])
    # the eye stops at its mechanical range; the head makes up the rest (Guitton & Volle 1987)
    head[:, 0] = np.clip(head[:, 0], gaze_yaw - _EYE_RANGE_DEG, gaze_yaw + _EYE_RANGE_DEG)
    eye_yaw, eye_pitch = gaze_yaw - head[:, 0], gaze_pitch - head[:, 1]
    closure = render_eyelid(t, blinks)

    block = empty_block(n)
    block[:, 0] = t
    block[:, [FIELD_INDEX[f] for f in ("head_yaw", "head_pitch", "head_roll")]] = np.radians(head)
    block[:, [FIELD_INDEX[f] for f in ("head_x", "head_y", "head_z")]] = _head_position(
        rng_body, traits, head, rate_hz, load, demand, posture, load_set[:, :3])
    half_vergence = np.degrees(np.arctan(_IPD_M / 2 / gaze.distance_m[fixation]))
    for eye, sign in (("r", -1.0), ("l", 1.0)):
        block[:, FIELD_INDEX[f"gaze_{eye}_yaw"]] = np.radians(gaze_yaw + sign * half_vergence)
        block[:, FIELD_INDEX[f"gaze_{eye}_pitch"]] = np.radians(gaze_pitch)
    opening = (1 - closure) * (1 + 0.012 * np.clip(eye_pitch, -30.0, 10.0))
    opening *= 1 + ou_noise(rng_body, n, 1 / rate_hz, 5.0, 0.03)
    pupil = traits.pupil_mm + ou_noise(rng_body, n, 1 / rate_hz, 8.0, 0.15)
    pupil += traits.load_pupil_mm * load
    pupil += smooth_drift(rng_body, n, 1 / rate_hz, _LIGHT_TAU_S, traits.pupil_light_sd_mm)
    for eye, sign in (("r", 0.5), ("l", -0.5)):
        block[:, FIELD_INDEX[f"eyelid_{eye}"]] = np.clip(opening * (1 + sign * 0.02), 0.0, 1.3)
        block[:, FIELD_INDEX[f"pupil_{eye}"]] = np.clip(pupil + sign * traits.anisocoria_mm,
                                                        1.5, 9.0)
    block[:, FIELD_INDEX["saccade"]] = in_saccade
    block[:, FIELD_INDEX["blink"]] = closure >= 0.5

    switches = {k: options[k] for k in ("noise", "track_loss", "drops", "duplicates", "jitter")}
    samples, rows, offset = apply_tracker(rng_tracker, traits, block.copy(), eye_yaw, eye_pitch,
                                          closure, rate_hz, **switches)
    meta = {
        "source": "simulator", "simulator_version": SIMULATOR_VERSION, "seed": int(seed),
        "driver_id": f"sim-{seed}", "rate_hz": float(rate_hz),
        "internal_rate_hz": float(rate_hz * max(1, math.ceil(500 / rate_hz))),
        "duration_s": float(t_end), "options": options, "traits": traits.summary(),
        "schedule": [[s.kind, round(s.start_s, 6), round(s.end_s, 6)] for s in sections],
    }
    recording = Recording(samples, schedule_labels(t[rows], sections), meta)
    truth = DriveTruth(traits=traits, sections=sections, t=t, rows=rows, gaze=gaze, blinks=blinks,
                       load=load, gaze_yaw=gaze_yaw, gaze_pitch=gaze_pitch, head=head,
                       closure=closure, gaze_offset=offset, section_gains=gains)
    return recording, truth


def _head(rng, traits, gaze, t, load, demand, posture, load_set):
    """Head yaw, pitch, roll (deg): gaze-coupled turns, postural sway, the rotation that comes with
    the two posture modes (``posture``, unit SD each) and the head set under load (``load_set``:
    per frame and angle, the multiple of the driver's head set in effect)."""
    set_head = posture @ np.reshape(traits.posture_rot_deg, (2, 3))
    # gaze shifts are carried from where the posture has set the head
    rel_yaw = gaze.yaw - set_head[np.minimum(np.searchsorted(t, gaze.start), len(t) - 1), 0]
    excess_yaw = np.maximum(np.abs(rel_yaw) - traits.eye_free_deg, 0.0)
    excess_pitch = np.maximum(np.abs(gaze.pitch - traits.road_pitch_deg) - 10.0, 0.0)
    target = np.column_stack([
        np.sign(rel_yaw) * excess_yaw * traits.head_gain,
        np.sign(gaze.pitch - traits.road_pitch_deg) * excess_pitch * 0.5,
        np.zeros(len(gaze)),
    ])
    target[:, 2] = 0.1 * target[:, 0]
    lag = 0.14 - 0.09 * np.minimum(gaze.saccade_amplitude / 40.0, 1.0)
    onset = np.maximum.accumulate(gaze.saccade_start + lag)
    head = render_head(t, onset, target, _HEAD_OMEGA)
    dt = t[1] - t[0] if len(t) > 1 else 1.0
    sway_scale = traits.head_sway_deg * traits.load_head_sd ** load * demand
    for column, share in enumerate((1.0, 0.6, 0.5)):
        head[:, column] += share * sway_scale * ou_noise(rng, len(t), dt, 2.0, 1.0)
    head += set_head
    head += load_set * np.asarray(traits.load_head_rot_deg)
    return head


def _head_position(rng, traits, head_deg, rate_hz, load, demand, posture, load_set):
    """Head x, y, z (m): seat position, slow posture drift in the driver's two posture modes,
    sway, a lean under load (``load_set``: per frame and axis, the multiple of the driver's lean in
    effect), and the lateral shift that comes with head yaw."""
    n = len(head_deg)
    scale = traits.head_sway_m * traits.load_head_sd ** load * demand
    position = np.column_stack([ou_noise(rng, n, 1 / rate_hz, 1.5, 1.0) * scale for _ in range(3)])
    position += posture @ np.reshape(traits.posture_axes, (2, 3)) * traits.posture_sd_m
    position += load_set * np.asarray(traits.load_lean_m)
    position += np.asarray(traits.head_position_m)
    position[:, 0] += traits.head_shift_m_per_rad * np.radians(head_deg[:, 0])
    return position


def cohort_seeds(n_drivers, seed):
    """The per-driver seeds of a cohort: driver ``i`` gets a 32-bit seed drawn from child ``i`` of
    ``SeedSequence(seed)``, so it does not depend on the cohort size."""
    check_params({"n_drivers": n_drivers, "seed": seed},
                 {"n_drivers": Interval(1, None, integer=True), "seed": _CONSTRAINTS["seed"]},
                 owner="simulate_cohort")
    children = np.random.SeedSequence(seed).spawn(n_drivers)
    return [int(child.generate_state(1)[0]) for child in children]


def simulate_cohort(n_drivers, seed, **options):
    """Simulate ``n_drivers`` drivers (the source study had 34).

    Parameters
    ----------
    n_drivers : int
    seed : int
        Cohort seed; driver ``i`` is ``simulate_drive(cohort_seeds(n_drivers, seed)[i], ...)``.
    **options
        Passed to :func:`simulate_drive` (``duration_s``, ``rate_hz``, the switches).

    Returns
    -------
    list of Recording
        Each with ``meta["cohort"] = {"seed": seed, "index": i, "size": n_drivers}``.
    """
    recordings = []
    for index, driver_seed in enumerate(cohort_seeds(n_drivers, seed)):
        recording = simulate_drive(driver_seed, **options)
        recording.meta["cohort"] = {"seed": int(seed), "index": index, "size": int(n_drivers)}
        recordings.append(recording)
    return recordings
