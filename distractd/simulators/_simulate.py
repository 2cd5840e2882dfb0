"""Simulated drives: one driver per seed, many drives per driver, five protocols, ground truth.

A drive is assembled in stages, each with its own :class:`numpy.random.SeedSequence` child so that
switching one option (say ``drops``, or the protocol) leaves every other random stream unchanged:
driver traits, schedule, gaze plan, blinks, body (head, pupil, eyelid), tracker, road. The traits
always come from child 0 of ``SeedSequence(seed)``; drive 0 takes its other streams from children
1-6 of the same root (the simulator's original single drive), drive ``k >= 1`` from children 1-6 of
``SeedSequence(seed, spawn_key=(7, k))``, a branch no other stream uses.
"""

import math
from dataclasses import dataclass

import numpy as np

from .._errors import ConfigError
from .._validation import Interval, Options, check_params
from ..pipeline import FIELD_INDEX, Recording, empty_block
from ._behaviour import (
    DASHBOARD_DISPLAY, GLANCE_TARGETS, HAND_HELD_PHONE, SCATTER_DEMAND_MAX, plan_blinks, plan_gaze,
    script_gaze,
)
from ._driver import draw_driver
from ._oculomotor import ou_noise, render_eyelid, render_gaze, render_head, smooth_drift
from ._protocol import (
    PROTOCOLS, Section, cognitive_load, drive_schedule, schedule_labels, texting_schedule,
)
from ._tracker import apply_tracker, sample_sparse_gaze
from ._tracker_profiles import TRACKERS
from ._vehicle import VEHICLE_COLUMNS, draw_vehicle_traits, simulate_vehicle

__all__ = ["simulate_drive", "simulate_drive_truth", "DriveTruth", "GlanceTruth",
           "simulate_cohort", "simulate_texting_study", "cohort_seeds"]

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
_BLOCK_ROAD_SD_DEG = (0.0, 0.0)  # block protocols: no slow bends/hills (real lag-1 gaze, L)
_TASK_FREE = ("none", "normal-blocks")
_BLOCK_PROTOCOLS = ("texting-blocks", "normal-blocks")   # Taamneh's block timing
_PHONE = {"visual-manual": DASHBOARD_DISPLAY, "texting-blocks": HAND_HELD_PHONE}
_VISUAL_LOAD = 0.5          # load of the visual-manual task, times the counting task's (A)
_DRIVE_BRANCH = 7           # spawn_key (7, k): the streams of drive k >= 1
_VEHICLE_BRANCH = 8         # spawn_key (8,): the driver's way with the car; (8, k): drive k's road
_DEFAULT_OPTIONS = {"noise": True, "track_loss": True, "drops": True, "duplicates": True,
                    "jitter": True}
_CONSTRAINTS = {
    "seed": Interval(0, None, integer=True),
    "drive": Interval(0, None, integer=True),
    "protocol": Options(PROTOCOLS),
    "duration_s": [None, Interval(0, None, closed="neither")],
    "rate_hz": Interval(1.0, 2000.0),
    "tracker": Options(tuple(TRACKERS)),
    "noise": bool, "track_loss": bool, "drops": bool, "duplicates": bool, "jitter": bool,
}


@dataclass
class GlanceTruth:
    """Every glance away from the road in a drive, in recording time (s).

    A glance runs from the start of the saccade that leaves the road (or the previous glance
    target) to the start of the saccade that leaves the target, as ISO 15007 counts transition
    time into the glance; a glance still running at the end of the drive is cut there.
    ``target`` names the glance target: "mirror_rear", "mirror_right", "mirror_left",
    "instrument" or "display".
    """

    start_s: np.ndarray
    end_s: np.ndarray
    target: np.ndarray

    @property
    def duration_s(self):
        """Glance durations (s)."""
        return self.end_s - self.start_s

    def __len__(self):
        return len(self.start_s)


@dataclass
class DriveTruth:
    """What really happened in a simulated drive (angles in degrees, times in seconds).

    ``t`` is the nominal frame grid; ``rows`` maps each delivered sample to its frame. ``gaze`` and
    ``blinks`` are the event plans (:class:`GazePlan`, :class:`BlinkPlan`); ``load`` the cognitive
    load per frame; ``gaze_yaw``/``gaze_pitch`` the true gaze in the world, ``head`` (n, 3) the true
    head yaw/pitch/roll, ``closure`` the true eyelid closure, per frame; ``gaze_offset`` (n, 2) the
    tracker's gaze offset (yaw, pitch) per frame; ``section_gains`` the load level of each task
    section; ``road_centre`` (n, 2) the true road-ahead gaze direction (yaw, pitch) per frame,
    around which road fixations scatter (bends, hills, the driver's road pitch and, under load,
    gaze further ahead; without the tracker offset); ``protocol`` and ``drive`` as simulated.
    :meth:`glances` lists the glances away from the road.
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
    road_centre: np.ndarray
    protocol: str
    drive: int

    def glances(self):
        """Every glance away from the road (mirrors, instrument, display).

        Returns
        -------
        GlanceTruth
            Start and end times (s, recording time) and target name of each glance, in order.
        """
        plan = self.gaze
        off = np.flatnonzero(plan.target != 0)
        t_end = self.sections[-1].end_s
        start = np.minimum(plan.saccade_start[off], t_end)
        end = np.minimum(plan.start[off] + plan.duration[off], t_end)
        keep = end > start
        names = np.asarray(GLANCE_TARGETS)[plan.target[off]]
        return GlanceTruth(start_s=start[keep], end_s=end[keep], target=names[keep])


def simulate_drive(seed, duration_s=None, rate_hz=60.0, *, drive=0, protocol="cognitive",
                   tracker="full", noise=True, track_loss=True, drops=True, duplicates=True,
                   jitter=True):
    """Simulate one drive of one driver.

    Parameters
    ----------
    seed : int
        Non-negative seed; it fixes the driver (traits) and, with ``drive``, the drive.
    duration_s : float or None, default=None
        Drive length in seconds; None follows the protocol (nine task sections, about 24-29 min).
    rate_hz : float, default=60.0
        Nominal rate of the delivered samples in Hz (with ``tracker="sparse-gaze"``, the export
        rate: at most the tracker's 60 Hz; Taamneh's is 1).
    drive : int, default=0
        Which drive of the driver: every drive has the same traits and its own schedule, gaze
        plan, blinks, body noise, road and tracker noise. Drive 0 is the simulator's original
        drive for ``seed``.
    protocol : {"cognitive", "visual-manual", "none", "texting-blocks", "normal-blocks"}, \
default="cognitive"
        "cognitive": task sections are the source's sound-counting task (cognitive load).
        "visual-manual": task sections are a texting-like task: runs of 3-10 glances to a phone
        low and left of the road (per-driver log-normal dwell, mean about 1.3 s, 10-15 % over
        2 s) with 0.5-1.5 s on the road between, blinks inhibited, half the counting task's
        cognitive load. "none": no task; one normal-driving section, labels all 0.
        "texting-blocks": Taamneh et al. 2017's texting drive, about 80 s off, 160 s on, 240 s
        off, 160 s on, 120 s off (about 13 min; block lengths jittered per drive), the task
        texting on a hand-held phone: long looks down (per-driver dwell, median about 1.9 s,
        up to 20 s) in episodes of 4-15 looks with 0.4-2.4 s on the road between, the
        visual-manual task's load and blink inhibition. "normal-blocks": the same drive length
        without a task (Taamneh's normal drive). The protocol changes behaviour only: the random
        streams are those of ``(seed, drive)`` either way.
    tracker : {"full", "sparse-gaze"}, default="full"
        "full": every field at ``rate_hz``. "sparse-gaze": a 60 Hz faceLAB whose gaze footprint
        on the simulator screen is exported at ``rate_hz`` (Taamneh's data at 1 Hz): gaze lost
        off the screen and in more frequent bursts, one frame point-sampled per period, only
        gaze and a 0/1 confidence (:data:`~distractd.simulators._tracker.TRACKERS`).
    noise, track_loss, drops, duplicates, jitter : bool, default=True
        Tracker imperfections; see :func:`~distractd.simulators._tracker.apply_tracker`.

    Returns
    -------
    Recording
        Samples as delivered by the tracker; labels 1 inside task sections, 0 elsewhere (recovery
        gaps included); ``meta`` holds the seed, ``driver_id``, ``drive``, ``protocol``,
        ``recording_id``, rate, tracker options, driver traits and schedule.

    Examples
    --------
    >>> recording = simulate_drive(7, duration_s=60.0, rate_hz=30.0, drive=2)
    >>> recording.meta["recording_id"], recording.samples.shape[1]
    ('sim-7-d2-cognitive', 27)
    """
    return simulate_drive_truth(
        seed, duration_s, rate_hz, drive=drive, protocol=protocol, tracker=tracker, noise=noise,
        track_loss=track_loss, drops=drops, duplicates=duplicates, jitter=jitter)[0]


def _drive_streams(seed, drive):
    """The seven SeedSequence children of one drive: traits (always the driver's) then schedule,
    gaze, blinks, body, tracker, road."""
    driver = np.random.SeedSequence(seed).spawn(7)
    if drive == 0:
        return driver
    return driver[:1] + np.random.SeedSequence(seed, spawn_key=(_DRIVE_BRANCH, drive)).spawn(7)[1:]


def simulate_drive_truth(seed, duration_s=None, rate_hz=60.0, *, drive=0, protocol="cognitive",
                         tracker="full", script=(), **options):
    """:func:`simulate_drive` plus the ground truth behind it.

    ``script`` (a sequence of :class:`~distractd.simulators._behaviour.ScriptedGlance`) replaces
    the drive's gaze around those glances (:func:`~distractd.simulators._behaviour.script_gaze`;
    the conformance scenarios); every other random stream is unchanged.

    Returns
    -------
    recording : Recording
    truth : DriveTruth
        The events and true signals, for calibration and for evaluating event and glance
        detectors (:meth:`DriveTruth.glances`); its frames are the tracker's (60 Hz with
        ``tracker="sparse-gaze"``).
    """
    unknown = set(options) - set(_DEFAULT_OPTIONS)
    if unknown:
        raise TypeError(f"simulate_drive got unknown options {sorted(unknown)}")
    options = {**_DEFAULT_OPTIONS, **options}
    check_params({"seed": seed, "drive": drive, "protocol": protocol, "duration_s": duration_s,
                  "rate_hz": rate_hz, "tracker": tracker, **options}, _CONSTRAINTS,
                 owner="simulate_drive")
    profile = TRACKERS[tracker]
    frame_hz = profile.frame_rate_hz or rate_hz
    if rate_hz > frame_hz:
        raise ConfigError(f"simulate_drive.rate_hz must be at most the {tracker} tracker's "
                          f"{frame_hz:g} Hz, got {rate_hz!r}")
    streams = _drive_streams(seed, drive)
    rng_schedule, rng_gaze, rng_blinks, rng_body, rng_tracker, rng_road = (
        np.random.default_rng(s) for s in streams[1:])
    traits = draw_driver(streams[0])
    sections = (texting_schedule(rng_schedule, duration_s) if protocol in _BLOCK_PROTOCOLS
                else drive_schedule(rng_schedule, duration_s))
    if protocol in _TASK_FREE:
        sections = (Section("normal", 0.0, sections[-1].end_s),)
    task_starts = np.array([s.start_s for s in sections if s.kind == "task"])
    gains = np.exp(_SECTION_GAIN_SIGMA * rng_schedule.standard_normal(len(task_starts)))
    # each task section's load posture (head lean, head set) varies around the driver's own
    section_sets = rng_schedule.standard_normal((len(task_starts), 6)) * _SECTION_SET_SD
    t_end = sections[-1].end_s
    n = int(math.floor(t_end * frame_hz))
    t = np.arange(n) / frame_hz

    grid_t = np.arange(int(math.ceil(t_end / _GRID_DT_S)) + 1) * _GRID_DT_S
    load_grid = (cognitive_load(grid_t, sections, gains=gains) if protocol == "cognitive" else
                 _VISUAL_LOAD * cognitive_load(grid_t, sections, gains=gains, sound_modulation=0.0)
                 if protocol in _PHONE else np.zeros(len(grid_t)))
    visual_grid = (schedule_labels(grid_t, sections).astype(np.float64)
                   if protocol in _PHONE else np.zeros(len(grid_t)))
    demand_grid = np.exp(ou_noise(rng_road, len(grid_t), _GRID_DT_S, _DEMAND_TAU_S, _DEMAND_SD)
                         - _DEMAND_SD ** 2 / 2)   # mean 1
    road_sd_deg = _BLOCK_ROAD_SD_DEG if protocol in _BLOCK_PROTOCOLS else _ROAD_SD_DEG
    road_grid = np.column_stack([smooth_drift(rng_road, len(grid_t), _GRID_DT_S, _ROAD_TAU_S, sd)
                                 for sd in road_sd_deg])
    gaze = plan_gaze(rng_gaze, traits, t_end, load_grid, visual_grid, road_grid, demand_grid,
                     grid_dt_s=_GRID_DT_S, phone=_PHONE.get(protocol, DASHBOARD_DISPLAY),
                     natural=protocol == "none")
    if script:
        gaze = script_gaze(gaze, script, traits)
    blinks = plan_blinks(rng_blinks, traits, t_end, load_grid, visual_grid, gaze,
                         grid_dt_s=_GRID_DT_S)
    load = np.interp(t, grid_t, load_grid)
    demand = np.interp(t, grid_t, demand_grid)
    if protocol == "none":   # naturalistic: the body sways as the road fixations scatter
        demand = np.minimum(demand, SCATTER_DEMAND_MAX)

    gaze_yaw, gaze_pitch, in_saccade = render_gaze(gaze, n, frame_hz)
    fixation = np.maximum(np.searchsorted(gaze.start, t, side="right") - 1, 0)
    posture = np.column_stack([smooth_drift(rng_body, n, 1 / frame_hz, _POSTURE_TAU_S, 1.0)
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
        rng_body, traits, head, frame_hz, load, demand, posture, load_set[:, :3])
    half_vergence = np.degrees(np.arctan(_IPD_M / 2 / gaze.distance_m[fixation]))
    for eye, sign in (("r", -1.0), ("l", 1.0)):
        block[:, FIELD_INDEX[f"gaze_{eye}_yaw"]] = np.radians(gaze_yaw + sign * half_vergence)
        block[:, FIELD_INDEX[f"gaze_{eye}_pitch"]] = np.radians(gaze_pitch)
    opening = (1 - closure) * (1 + 0.012 * np.clip(eye_pitch, -30.0, 10.0))
    opening *= 1 + ou_noise(rng_body, n, 1 / frame_hz, 5.0, 0.03)
    pupil = traits.pupil_mm + ou_noise(rng_body, n, 1 / frame_hz, 8.0, 0.15)
    pupil += traits.load_pupil_mm * load
    pupil += smooth_drift(rng_body, n, 1 / frame_hz, _LIGHT_TAU_S, traits.pupil_light_sd_mm)
    for eye, sign in (("r", 0.5), ("l", -0.5)):
        block[:, FIELD_INDEX[f"eyelid_{eye}"]] = np.clip(opening * (1 + sign * 0.02), 0.0, 1.3)
        block[:, FIELD_INDEX[f"pupil_{eye}"]] = np.clip(pupil + sign * traits.anisocoria_mm,
                                                        1.5, 9.0)
    block[:, FIELD_INDEX["saccade"]] = in_saccade
    block[:, FIELD_INDEX["blink"]] = closure >= 0.5
    vehicle = simulate_vehicle(
        np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_VEHICLE_BRANCH, drive))),
        draw_vehicle_traits(np.random.default_rng(
            np.random.SeedSequence(seed, spawn_key=(_VEHICLE_BRANCH,)))),
        t, gaze.target[fixation] == 0, load, np.interp(t, grid_t, visual_grid))
    block[:, VEHICLE_COLUMNS] = vehicle   # the car's bus: no tracker noise or loss

    switches = {k: options[k] for k in ("noise", "track_loss", "drops", "duplicates", "jitter")}
    samples, rows, offset = apply_tracker(rng_tracker, traits, block.copy(), eye_yaw, eye_pitch,
                                          closure, frame_hz, profile=profile, **switches)
    if profile.gaze_only:
        samples, rows = sample_sparse_gaze(samples, rows, n, frame_hz, rate_hz)
        samples[:, VEHICLE_COLUMNS] = vehicle[rows]
    meta = {
        "source": "simulator", "simulator_version": SIMULATOR_VERSION, "seed": int(seed),
        "driver_id": f"sim-{seed}", "drive": int(drive), "protocol": protocol,
        "recording_id": f"sim-{seed}-d{drive}-{protocol}", "rate_hz": float(rate_hz),
        "tracker": tracker, "frame_rate_hz": float(frame_hz),
        "internal_rate_hz": float(frame_hz * max(1, math.ceil(500 / frame_hz))),
        "duration_s": float(t_end), "options": options, "traits": traits.summary(),
        "schedule": [[s.kind, round(s.start_s, 6), round(s.end_s, 6)] for s in sections],
    }
    recording = Recording(samples, schedule_labels(t[rows], sections), meta)
    road_centre = np.column_stack([
        np.interp(t, grid_t, road_grid[:, 0]),
        traits.road_pitch_deg + np.interp(t, grid_t, road_grid[:, 1])
        + traits.load_gaze_pitch_deg * load])
    truth = DriveTruth(traits=traits, sections=sections, t=t, rows=rows, gaze=gaze, blinks=blinks,
                       load=load, gaze_yaw=gaze_yaw, gaze_pitch=gaze_pitch, head=head,
                       closure=closure, gaze_offset=offset, section_gains=gains,
                       road_centre=road_centre, protocol=protocol, drive=int(drive))
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
    if gaze.head_share is not None:   # scripted glances: the head makes its share of the turn
        scripted = ~np.isnan(gaze.head_share)
        target[scripted, 0] = gaze.head_share[scripted] * rel_yaw[scripted]
        target[scripted, 1] = gaze.head_share[scripted] * (gaze.pitch[scripted]
                                                           - traits.road_pitch_deg)
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


def simulate_cohort(n_drivers, seed, *, drives=1, protocol="cognitive", **options):
    """Simulate ``drives`` drives of each of ``n_drivers`` drivers (the source study had 34 drivers,
    one drive each).

    Parameters
    ----------
    n_drivers : int
        Number of drivers.
    seed : int
        Cohort seed; driver ``i`` has seed ``cohort_seeds(n_drivers, seed)[i]``.
    drives : int, default=1
        Drives per driver: drives ``0 .. drives - 1`` of :func:`simulate_drive`.
    protocol : str or sequence of str, default="cognitive"
        The protocol of every drive (see :func:`simulate_drive`); with a sequence, every drive is
        simulated under each protocol in turn (same random streams, so paired by ``drive``).
    **options
        Passed to :func:`simulate_drive` (``duration_s``, ``rate_hz``, ``tracker``, the tracker
        switches).

    Returns
    -------
    list of Recording
        Driver by driver, drive by drive, protocol by protocol. Each ``meta`` holds
        ``driver_id`` (``sim-<driver seed>``, the same for all drives of a driver), ``drive``,
        ``protocol``, a unique ``recording_id`` (``sim-<driver seed>-d<drive>-<protocol>``) and
        ``cohort = {"seed": seed, "index": i, "size": n_drivers}``.
    """
    protocols = (protocol,) if isinstance(protocol, str) else tuple(protocol)
    check_params({"drives": drives}, {"drives": Interval(1, None, integer=True)},
                 owner="simulate_cohort")
    for name in protocols:
        check_params({"protocol": name}, {"protocol": _CONSTRAINTS["protocol"]},
                     owner="simulate_cohort")
    recordings = []
    for index, driver_seed in enumerate(cohort_seeds(n_drivers, seed)):
        for drive in range(drives):
            for name in protocols:
                recording = simulate_drive(driver_seed, drive=drive, protocol=name, **options)
                recording.meta["cohort"] = {"seed": int(seed), "index": index,
                                            "size": int(n_drivers)}
                recordings.append(recording)
    return recordings


def simulate_texting_study(n_drivers, seed, *, tracker="sparse-gaze", rate_hz=1.0, **options):
    """A cohort of Taamneh et al. 2017's texting study: per driver a drive without a task (drive 0,
    ``normal-blocks``, like their drive 4) and a texting drive (drive 1, ``texting-blocks``,
    like their drive 7), by default as their 1 Hz gaze-only export.

    Parameters
    ----------
    n_drivers : int
    seed : int
        Cohort seed (:func:`cohort_seeds`).
    tracker : str, default="sparse-gaze"
    rate_hz : float, default=1.0
    **options
        Passed to :func:`simulate_drive` (``duration_s``, the tracker switches).

    Returns
    -------
    list of Recording
        Driver by driver, the normal drive then the texting drive; ``meta["cohort"]`` as in
        :func:`simulate_cohort`.
    """
    recordings = []
    for index, driver_seed in enumerate(cohort_seeds(n_drivers, seed)):
        for drive, protocol in enumerate(("normal-blocks", "texting-blocks")):
            recording = simulate_drive(driver_seed, drive=drive, protocol=protocol,
                                       tracker=tracker, rate_hz=rate_hz, **options)
            recording.meta["cohort"] = {"seed": int(seed), "index": index,
                                        "size": int(n_drivers)}
            recordings.append(recording)
    return recordings
