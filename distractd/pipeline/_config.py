"""Settings of the per-stream pipeline: one frozen dataclass, every duration in seconds.

The processor's numba kernels read the settings by name from one parameter record
(:data:`PARAMS`) built by :func:`_params` (private to ``distractd.pipeline``).
"""

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from .._errors import ConfigError
from .._validation import Interval, Options, check_params
from .formats import FIELD_INDEX, FIELDS, RANGES, SPATIAL_FIELDS

__all__ = ["PipelineConfig"]

_MAX_SPAN_S = 3600.0
"""Longest duration any setting may give, seconds: an hour, the bound of the ring spans too."""
_SPAN = Interval(0, _MAX_SPAN_S, closed="right")
_SPAN_OR_ZERO = Interval(0, _MAX_SPAN_S)
_DEGREES = Interval(0, 180)
_SPEED_DEG_S = Interval(0, 10_000)
_POSITIVE_SPEED_DEG_S = Interval(0, 10_000, closed="right")
_RATE_HZ = Interval(0, 1000)
_FACTOR = Interval(0, 1000)
_POSITIVE_FACTOR = Interval(0, 1000, closed="right")
_FRACTION = Interval(0, 1)
_ANGLE = Interval(-90, 90)
_MAX_HOPS = 7200             # hops a window, blink or PERCLOS span may hold (1 h at 0.5 s)
_MAX_BASELINE_ENTRIES = 720  # windows the baseline ring may hold (1 h at 5 s spacing)

# Positions of the sample fields the kernels read, from the schema by name.
_TIME = FIELD_INDEX["t"]
_GAZE_YAW = (FIELD_INDEX["gaze_r_yaw"], FIELD_INDEX["gaze_l_yaw"])   # per eye: right, left
_GAZE_PITCH = (FIELD_INDEX["gaze_r_pitch"], FIELD_INDEX["gaze_l_pitch"])
_GAZE = (_GAZE_YAW[0], _GAZE_PITCH[0], _GAZE_YAW[1], _GAZE_PITCH[1])
_EYELID = (FIELD_INDEX["eyelid_r"], FIELD_INDEX["eyelid_l"])
_PUPIL = (FIELD_INDEX["pupil_r"], FIELD_INDEX["pupil_l"])
_CONFIDENCE = FIELD_INDEX["confidence"]
_SACCADE_FLAG = FIELD_INDEX["saccade"]
_BLINK_FLAG = FIELD_INDEX["blink"]
_HEAD_YAW = FIELD_INDEX["head_yaw"]
_HEAD_PITCH = FIELD_INDEX["head_pitch"]
_SPATIAL = tuple(FIELD_INDEX[name] for name in SPATIAL_FIELDS)


@dataclass(frozen=True)
class PipelineConfig:
    """Settings of validation, eye events, measures, windows, glances and fatigue (DESIGN §4).

    The spans that size a stream's rings, and so its memory and the time a reload takes, have
    upper bounds (issue 23; docs/pipeline.md, "Bounds of the settings"), and a model's settings
    are checked against them at load: a 1e7 s PERCLOS span held a ring of 2e7 hops per stream.

    Parameters
    ----------
    window_s : float, default=10.0
        Feature window length in seconds, at most 600; a whole multiple of ``hop_s`` of at most
        7,200 hops (S0 §5.3.5).
    hop_s : float, default=0.5
        Window hop in seconds (at least 1 ms). Windows end on multiples of ``hop_s`` of the
        stream's own clock.
    blink_window_s : float, default=60.0
        Span of blink frequency and mean blink duration, seconds, at most 3,600; a whole multiple
        of ``hop_s`` of at most 7,200 hops.
    perclos_window_s : float, default=180.0
        Span of PERCLOS, seconds, at most 3,600; a whole multiple of ``hop_s`` of at most 7,200
        hops (S0 §5.3.4).
    perclos_closure : float, default=0.75
        Eyelid closure (1 - opening) at or above which a sample counts as closed for PERCLOS.
    warmup_s : float, default=10.0
        Signal time a derived measure needs inside its window before it is reported; NaN before.
    confidence_min : float, default=0.5
        Samples with lower tracker confidence are track loss (their eye fields are ignored).
    max_gap_s : float, default=0.25
        A time step longer than this and than 2.5 measured sample periods is counted as a gap;
        eye events do not span gaps.
    max_jump_s : float, default=5.0
        A forward time step longer than this is a suspect clock jump: the sample is held until the
        next one shows which clock goes on (rejected as ``t_jump`` if the old one does).
    clock_reset_s : float, default=0.5
        Consecutive samples before the stream's latest time that increase among themselves (steps
        up to the gap limit) for this long, and at least 3 of them, are a clock reset: the
        stream's windows and measures restart from them.
    saccade_velocity_deg_s : float, default=5.0
        Gaze rotation speed (relative to the smooth gaze velocity) above which a sample belongs to
        a saccade candidate, deg/s; the floor of the adaptive threshold. The event defaults were
        chosen on four human-coded sets together and each set's figures are scored with the
        choice of the other three, at 30-120 Hz (docs/pipeline.md, "Eye events against human
        coders").
    saccade_noise_factor : float, default=4.0
        Adaptive part of the saccade threshold: the threshold rises to this many times the stream's
        noise scale (its running median speed over 1.1774, after Engbert & Kliegl 2003) when that
        is higher than ``saccade_velocity_deg_s`` (a noisy tracker); 0 keeps the fixed threshold.
    saccade_min_s : float, default=0.005
        Shortest saccade, seconds (from the sample before the first fast one to the last fast one).
    saccade_max_s : float, default=0.15
        Longest saccade, seconds; longer fast runs are not saccades.
    saccade_min_amplitude_deg : float, default=0.1
        Smallest gaze displacement of a saccade from its start to its end, degrees.
    saccade_noise_amplitude_factor : float, default=6.0
        Adaptive part of the smallest saccade: the amplitude must also reach this many times the
        mean sample-to-sample gaze step of the stream's recent fixation samples (the tracker's
        noise, in degrees per sample: the same at any rate); 0 keeps the fixed minimum.
    saccade_min_rate_hz : float, default=20.0
        Below this measured sample rate saccades cannot be resolved and are reported as NaN.
    blink_opening_max : float, default=0.5
        Eyelid opening (0 closed, 1 open) below which the eye counts as closing for blinks.
    blink_min_s : float, default=0.03
        Shortest blink, seconds (midpoint to midpoint of the surrounding open samples).
    blink_max_s : float, default=0.5
        Longest blink, seconds; longer closures or track losses are not blinks.
    blink_min_rate_hz : float, default=10.0
        Below this measured sample rate blinks cannot be resolved and are reported as NaN.
    fixation_min_s : float, default=0.06
        Shortest fixation, seconds (its samples' periods): a run of tracked samples in no saccade
        and no blink (Olsen 2012, Tobii I-VT filter: 60 ms).
    fixation_merge_gap_s : float, default=0.075
        A fixation runs on across track loss or eyelid closure of at most this long, seconds, when
        the gaze comes back within ``fixation_merge_deg`` of where it left (Olsen 2012: 75 ms).
    fixation_merge_deg : float, default=0.5
        Largest gaze shift across such a gap, degrees, for the fixation to run on (Olsen 2012).
    pursuit_tau_s : float, default=0.1
        Time constant of the smooth gaze velocity, seconds: the exponential mean of the gaze
        velocity (a vector) over the samples in no saccade candidate. Saccades are found on the
        speed relative to it (a catch-up saccade during smooth pursuit stands out, the pursuit
        does not), and while it is faster than ``pursuit_velocity_deg_s`` and than the noise it
        would show on a still gaze the gaze is in smooth pursuit: neither fixation nor saccade.
        0 turns both off.
    pursuit_velocity_deg_s : float, default=3.0
        Smallest smooth gaze velocity of a pursuit, deg/s (fixational drift is slower).
    use_tracker_flags : bool, default=False
        Use the tracker's ``saccade`` and ``blink`` fields instead of the pipeline's own detectors.
    label_purity : float, default=0.5
        A window takes label 1 (or 0) when more than half and at least this fraction of its
        labelled samples carry it; otherwise -1.
    glances : bool, default=True
        Run the glance channel (DESIGN §4.5; docs/pipeline.md "Glances"): per-sample glance
        classes, ISO 15007 glances, the AttenD buffer, Euro NCAP alerts and the ``glance_*``
        window features (NaN when off).
    drive_side : {"left", "right"}, default="left"
        The side of the car the driver sits on: the ``glance_*_mirror_yaw_deg`` settings describe
        a left-hand-drive car, and a right-hand-drive car (the simulator's) mirrors their yaws.
    baseline : bool, default=False
        Standardise every window's features against the stream's own running baseline
        (:class:`~distractd.pipeline.RunningBaseline`: robust location and scale over the last
        ``baseline_memory_s``), so that ``Windows.X`` holds standardised features, NaN until the
        baseline is ready. Cohort (driver-independent) models are trained with it on.
    baseline_memory_s : float, default=180.0
        How far back the baseline looks, seconds of window end time, at most 3,600. Three
        minutes follow the driver's slow changes (traffic, posture) that would otherwise mask a
        task's effect; five minutes cost 0.06-0.07 cognitive G-mean (docs/pipeline.md,
        "Per-stream baselines").
    baseline_spacing_s : float, default=5.0
        One window in ``baseline_spacing_s`` seconds enters the baseline; the ring holds
        ``baseline_memory_s / baseline_spacing_s`` windows, at most 720.
    baseline_warmup_s : float, default=60.0
        Window end time after the baseline's first entry before features are given, seconds.
    baseline_gate : bool, default=False
        Admit a window to the baseline only while it looks attentive (no more track loss, time
        off the road or longest glance away, and no less percent road centre, than
        ``baseline_gate_z`` robust standard deviations beyond the baseline), so that a task
        longer than the memory is not absorbed (docs/pipeline.md, "Per-stream baselines").
    baseline_gate_z : float, default=2.0
        The gate's threshold, robust standard deviations.
    baseline_gate_max_s : float, default=300.0
        A run of gated-out windows enters the baseline all the same once it has lasted this
        long, seconds: a lasting change that is no distraction is still learnt.
    baseline_absolute_glances : bool, default=True
        Give the glance features unstandardised (they are relative to the learned road centre, or
        fractions) while the other features are standardised: a long task (texting, 160 s) is
        then not absorbed by the baseline; +0.08 G-mean on real texting drives, +0.01 simulated
        visual-manual, cognitive unchanged (docs/results/representation.md).
    glance_road_yaw_deg, glance_road_pitch_deg : float, default=15.0, 8.0
        Half-width and half-height, degrees, of the forward roadway region around the learned
        road centre (an ellipse): gaze inside it is on the road (the field relevant for driving
        of AttenD; the road scene ahead of ISO 15007), and its share of tracked samples is the
        ``glance_prc`` feature.
    glance_road_warmup_s : float, default=60.0
        Tracked gaze time the road-centre estimate needs before glance classes, the buffer and
        alerts are reported, seconds (openpilot's driver-pose calibration is ready after 60 s).
    glance_road_forget_s : float, default=300.0
        Time constant of the exponential forgetting of the road-centre estimate, seconds.
    glance_interior_mirror_yaw_deg, glance_interior_mirror_pitch_deg : float, default=20.0, 8.0
        Centre of the rear-view (interior) mirror region relative to the road centre, degrees
        (+ right, + up; left-hand-drive car: up and to the right).
    glance_left_mirror_yaw_deg, glance_left_mirror_pitch_deg : float, default=-45.0, -8.0
        Centre of the left wing-mirror region relative to the road centre, degrees.
    glance_right_mirror_yaw_deg, glance_right_mirror_pitch_deg : float, default=60.0, -8.0
        Centre of the right wing-mirror region relative to the road centre, degrees.
    glance_mirror_radius_deg : float, default=10.0
        Radius of each mirror region, degrees.
    glance_instrument_yaw_deg, glance_instrument_pitch_deg : float, default=0.0, -18.0
        Centre of the instrument-cluster region relative to the road centre, degrees.
    glance_instrument_radius_deg : float, default=8.0
        Radius of the instrument-cluster region, degrees.
    glance_min_dip_s : float, default=0.15
        A run of samples that would end a glance (back on road, or track loss) or start one
        (off road) must last this long, seconds; shorter runs (blinks, overshoots) are bridged.
    glance_lost_carry_s : float, default=0.5
        The longest track loss inside a glance away bridged as a blink, seconds: the glance
        goes on but does not grow during it, and a loss between the road and an away sample is
        its transition (the glance starts at the last road sample). A longer loss after eyes
        seen away, with the head not turned back, is the eyes out of the tracker's range (a
        dashboard tracker loses them when the driver looks down at a phone): it carries the
        glance until they are seen again. 0 ends a glance like any other return after
        ``glance_min_dip_s``. Rules and measurements: docs/pipeline.md ("Glances") and
        docs/results/glance-channel.md.
    glance_head_yaw_deg, glance_head_pitch_deg : float, default=6.0, 4.0
        Half-axes, degrees, of the head-pose ellipse around the driver's recent on-road head
        pose (the head's yaw and pitch while the gaze is on the road, over the last
        ``glance_head_memory_s``): a sample whose eyes are lost while the head has turned
        outside it counts as ``off_road`` (the eyes went with the head: a phone in the lap, a
        look over the shoulder), as driver monitors fall back on head pose when the eyes cannot
        be seen. 0 switches the fallback off; a tracker without head pose never uses it.
    glance_head_memory_s : float, default=2.0
        Time constant, seconds of on-road gaze, of the on-road head pose: short, so that it
        follows a driver's slow posture changes and head sway and the fallback judges the head
        turn that came with the loss of the eyes.
    glance_buffer_s : float, default=2.0
        Capacity of the AttenD attention buffer, seconds (Kircher & Ahlström 2009).
    glance_buffer_delay_s : float, default=0.1
        Delay after returning to the road before the buffer refills (at 1 s/s), seconds.
    glance_free_s : float, default=1.0
        Time of a mirror or instrument glance that does not drain the buffer, seconds.
    glance_long_s : float, default=3.0
        Euro NCAP long distraction: one glance away at least this long raises an alert, seconds.
    glance_sharing_s : float, default=10.0
        Euro NCAP visual attention time-sharing: glance-away time within
        ``glance_sharing_window_s`` that raises an alert, seconds.
    glance_sharing_window_s : float, default=30.0
        Span of the time-sharing rule, seconds.
    glance_sharing_reset_s : float, default=2.0
        Continuous time back on the road that resets the time-sharing count, seconds.
    fatigue : bool, default=True
        Run the fatigue channel (docs/pipeline.md "Fatigue"): eye closures from the eyelid,
        PERCLOS, mean blink duration, and the Euro NCAP microsleep, sleep and drowsiness alerts.
        A tracker without eyelid signal has no fatigue state (unavailable, never guessed).
    fatigue_closed_fraction : float, default=0.2
        The eye is closed at or below this share of the driver's open-eye aperture: at least
        80 % closed, the P80 of PERCLOS (Wierwille 1994).
    fatigue_open_fraction : float, default=0.5
        A closure ends when the aperture is back at this share of the open aperture (hysteresis;
        the pipeline's blink threshold, ``blink_opening_max``). Our choice.
    fatigue_open_memory_s : float, default=60.0
        Time constant of the driver's open-eye aperture, seconds of visible open eyes (learned
        over the first ``warmup_s`` of visible eyelid, then followed). Our choice.
    fatigue_microsleep_s : float, default=1.0
        A closure facing forward this long raises ``microsleep``, seconds: Euro NCAP's microsleep
        is an eye closure of 1-3 s (issue 27); the VSS 2012 study counts the first 1-s microsleep.
    fatigue_sleep_s : float, default=3.0
        A closure facing forward this long raises ``sleep``, seconds: Euro NCAP's sleep is an eye
        closure over 3 s (issue 27).
    fatigue_hidden_s : float, default=0.5
        The eyes hidden from the tracker (eyelid NaN, or low confidence with the lid open), or
        samples missing (a gap), for at most this long inside a closure do not end it, seconds (as
        ``glance_lost_carry_s``); longer, and the closure is dropped. Our choice.
    fatigue_perclos_window_s : float, default=60.0
        Span of the fatigue channel's PERCLOS and mean blink duration, seconds, at most 3,600
        (PERCLOS per minute, Wierwille 1994); kept in bins of 0.5 s.
    fatigue_perclos_drowsy : float, default=0.10
        PERCLOS at or above which (with ``fatigue_blink_drowsy_s``) the driver is drowsy: the
        10 % threshold proposed by the VSS 2012 study (6.1 % alert, 10.5 % at the first
        microsleep; SIMULATOR_EVIDENCE §3).
    fatigue_perclos_recovered : float, default=0.06
        PERCLOS below which a drowsy driver has recovered and the drowsiness alert is re-armed:
        the same study's alert level (6.1 %).
    fatigue_blink_drowsy_s : float, default=0.25
        Mean blink duration at or above which (with ``fatigue_perclos_drowsy``) the driver is
        drowsy, seconds: blinks lengthen with drowsiness (Caffier et al. 2003); the level is our
        choice, above the simulated alert drivers' (docs/pipeline.md "Fatigue").
    fatigue_head_yaw_deg, fatigue_head_pitch_deg : float, default=23.0, 18.0
        Half-axes, degrees, of the head-pose ellipse around the driver's recent on-road head pose
        (the glance channel's) within which the head faces forward, as microsleep and sleep ask:
        openpilot's distracted-pose thresholds (0.402 and 0.313 rad).
    vehicle : bool, default=True
        Run the vehicle channel (docs/pipeline.md "Vehicle signals"): lane keeping, steering,
        speed and pedal measures from the car's signals, the window's ``VEHICLE_FEATURES`` (NaN
        when off, and in windows without vehicle samples). A stream without vehicle fields costs
        it a few NaN checks per sample.
    """

    window_s: float = 10.0
    hop_s: float = 0.5
    blink_window_s: float = 60.0
    perclos_window_s: float = 180.0
    perclos_closure: float = 0.75
    warmup_s: float = 10.0
    confidence_min: float = 0.5
    max_gap_s: float = 0.25
    max_jump_s: float = 5.0
    clock_reset_s: float = 0.5
    saccade_velocity_deg_s: float = 5.0
    saccade_noise_factor: float = 4.0
    saccade_min_s: float = 0.005
    saccade_max_s: float = 0.15
    saccade_min_amplitude_deg: float = 0.1
    saccade_noise_amplitude_factor: float = 6.0
    saccade_min_rate_hz: float = 20.0
    blink_opening_max: float = 0.5
    blink_min_s: float = 0.03
    blink_max_s: float = 0.5
    blink_min_rate_hz: float = 10.0
    fixation_min_s: float = 0.06
    fixation_merge_gap_s: float = 0.075
    fixation_merge_deg: float = 0.5
    pursuit_tau_s: float = 0.1
    pursuit_velocity_deg_s: float = 3.0
    use_tracker_flags: bool = False
    label_purity: float = 0.5
    glances: bool = True
    drive_side: str = "left"
    baseline: bool = False
    baseline_memory_s: float = 180.0
    baseline_spacing_s: float = 5.0
    baseline_warmup_s: float = 60.0
    baseline_gate: bool = False
    baseline_gate_z: float = 2.0
    baseline_gate_max_s: float = 300.0
    baseline_absolute_glances: bool = True
    glance_road_yaw_deg: float = 15.0
    glance_road_pitch_deg: float = 8.0
    glance_road_warmup_s: float = 60.0
    glance_road_forget_s: float = 300.0
    glance_interior_mirror_yaw_deg: float = 20.0
    glance_interior_mirror_pitch_deg: float = 8.0
    glance_left_mirror_yaw_deg: float = -45.0
    glance_left_mirror_pitch_deg: float = -8.0
    glance_right_mirror_yaw_deg: float = 60.0
    glance_right_mirror_pitch_deg: float = -8.0
    glance_mirror_radius_deg: float = 10.0
    glance_instrument_yaw_deg: float = 0.0
    glance_instrument_pitch_deg: float = -18.0
    glance_instrument_radius_deg: float = 8.0
    glance_min_dip_s: float = 0.15
    glance_lost_carry_s: float = 0.5
    glance_head_yaw_deg: float = 6.0
    glance_head_pitch_deg: float = 4.0
    glance_head_memory_s: float = 2.0
    glance_buffer_s: float = 2.0
    glance_buffer_delay_s: float = 0.1
    glance_free_s: float = 1.0
    glance_long_s: float = 3.0
    glance_sharing_s: float = 10.0
    glance_sharing_window_s: float = 30.0
    glance_sharing_reset_s: float = 2.0
    fatigue: bool = True
    fatigue_closed_fraction: float = 0.2
    fatigue_open_fraction: float = 0.5
    fatigue_open_memory_s: float = 60.0
    fatigue_microsleep_s: float = 1.0
    fatigue_sleep_s: float = 3.0
    fatigue_hidden_s: float = 0.5
    fatigue_perclos_window_s: float = 60.0
    fatigue_perclos_drowsy: float = 0.10
    fatigue_perclos_recovered: float = 0.06
    fatigue_blink_drowsy_s: float = 0.25
    fatigue_head_yaw_deg: float = 23.0
    fatigue_head_pitch_deg: float = 18.0
    vehicle: bool = True

    _constraints = {
        "window_s": Interval(0, 600, closed="right"), "hop_s": Interval(1e-3, 600),
        "blink_window_s": _SPAN,
        "perclos_window_s": _SPAN, "perclos_closure": _FRACTION,
        "warmup_s": _SPAN_OR_ZERO,
        "confidence_min": _FRACTION, "max_gap_s": _SPAN, "max_jump_s": _SPAN,
        "clock_reset_s": _SPAN, "saccade_velocity_deg_s": _POSITIVE_SPEED_DEG_S,
        "saccade_noise_factor": _FACTOR,
        "saccade_min_s": _SPAN_OR_ZERO, "saccade_max_s": _SPAN,
        "saccade_min_amplitude_deg": _DEGREES, "saccade_min_rate_hz": _RATE_HZ,
        "saccade_noise_amplitude_factor": _FACTOR,
        "blink_opening_max": _FRACTION, "blink_min_s": _SPAN_OR_ZERO, "blink_max_s": _SPAN,
        "blink_min_rate_hz": _RATE_HZ, "fixation_min_s": _SPAN_OR_ZERO,
        "fixation_merge_gap_s": _SPAN_OR_ZERO, "fixation_merge_deg": _DEGREES,
        "pursuit_tau_s": _SPAN_OR_ZERO, "pursuit_velocity_deg_s": _SPEED_DEG_S,
        "use_tracker_flags": bool,
        "label_purity": Interval(0.5, 1),
        "glances": bool, "drive_side": Options(("left", "right")), "baseline": bool,
        "baseline_memory_s": _SPAN,
        "baseline_spacing_s": _SPAN,
        "baseline_warmup_s": _SPAN_OR_ZERO, "baseline_gate": bool,
        "baseline_gate_z": _POSITIVE_FACTOR, "baseline_gate_max_s": _SPAN_OR_ZERO,
        "baseline_absolute_glances": bool, "glance_road_yaw_deg": Interval(0, 45, closed="right"),
        "glance_road_pitch_deg": Interval(0, 45, closed="right"),
        "glance_road_warmup_s": _SPAN_OR_ZERO, "glance_road_forget_s": _SPAN,
        "glance_interior_mirror_yaw_deg": _ANGLE, "glance_interior_mirror_pitch_deg": _ANGLE,
        "glance_left_mirror_yaw_deg": _ANGLE, "glance_left_mirror_pitch_deg": _ANGLE,
        "glance_right_mirror_yaw_deg": _ANGLE, "glance_right_mirror_pitch_deg": _ANGLE,
        "glance_mirror_radius_deg": _DEGREES, "glance_instrument_yaw_deg": _ANGLE,
        "glance_instrument_pitch_deg": _ANGLE, "glance_instrument_radius_deg": _DEGREES,
        "glance_min_dip_s": _SPAN_OR_ZERO, "glance_lost_carry_s": _SPAN_OR_ZERO,
        "glance_head_yaw_deg": Interval(0, 45, closed="both"),
        "glance_head_pitch_deg": Interval(0, 45, closed="both"),
        "glance_head_memory_s": _SPAN, "glance_buffer_s": _SPAN,
        "glance_buffer_delay_s": _SPAN_OR_ZERO, "glance_free_s": _SPAN_OR_ZERO,
        "glance_long_s": _SPAN, "glance_sharing_s": _SPAN,
        "glance_sharing_window_s": _SPAN, "glance_sharing_reset_s": _SPAN_OR_ZERO,
        "fatigue": bool, "fatigue_closed_fraction": _FRACTION, "fatigue_open_fraction": _FRACTION,
        "fatigue_open_memory_s": _SPAN, "fatigue_microsleep_s": _SPAN,
        "fatigue_sleep_s": _SPAN, "fatigue_hidden_s": _SPAN_OR_ZERO,
        "fatigue_perclos_window_s": _SPAN,
        "fatigue_perclos_drowsy": _FRACTION, "fatigue_perclos_recovered": _FRACTION,
        "fatigue_blink_drowsy_s": _SPAN_OR_ZERO,
        "fatigue_head_yaw_deg": Interval(0, 90, closed="right"),
        "fatigue_head_pitch_deg": Interval(0, 90, closed="right"),
        "vehicle": bool,
    }

    def __post_init__(self):
        check_params(self.to_dict(), self._constraints, owner="pipeline")
        for name in ("window_s", "blink_window_s", "perclos_window_s"):
            ratio = getattr(self, name) / self.hop_s
            if abs(ratio - round(ratio)) > 1e-9 * ratio:
                raise ConfigError(f"pipeline.{name} must be a whole multiple of hop_s="
                                  f"{self.hop_s}, got {getattr(self, name)}")
            if round(ratio) > _MAX_HOPS:
                raise ConfigError(f"pipeline.{name} must span at most {_MAX_HOPS} hops of "
                                  f"hop_s={self.hop_s}, got {getattr(self, name)}")
        if round(self.baseline_memory_s / self.baseline_spacing_s) > _MAX_BASELINE_ENTRIES:
            raise ConfigError(f"pipeline.baseline_spacing_s must hold at most "
                              f"{_MAX_BASELINE_ENTRIES} windows in baseline_memory_s="
                              f"{self.baseline_memory_s}, got {self.baseline_spacing_s}")
        for short, long in (("saccade_min_s", "saccade_max_s"), ("blink_min_s", "blink_max_s"),
                            ("glance_sharing_s", "glance_sharing_window_s"),
                            ("fatigue_closed_fraction", "fatigue_open_fraction"),
                            ("fatigue_microsleep_s", "fatigue_sleep_s"),
                            ("fatigue_perclos_recovered", "fatigue_perclos_drowsy")):
            if getattr(self, short) > getattr(self, long):
                raise ConfigError(f"pipeline.{short} must be <= {long}={getattr(self, long)}, "
                                  f"got {getattr(self, short)}")

    def to_dict(self):
        """The settings as a JSON-ready dict."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, settings):
        """Build from a dict such as :meth:`to_dict` gives; unknown keys are an error."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(settings) - known)
        if unknown:
            raise ConfigError(f"pipeline has no setting {unknown[0]!r}; known: {sorted(known)}")
        return cls(**settings)

    @property
    def lag_s(self):
        """Delay between a window's end and its emission, seconds: the longest pending event."""
        return max(self.saccade_max_s, self.blink_max_s)


def _record(*fields):
    """An aligned record dtype of float64 fields, each a name or ``(name, shape)``: the layout of
    one kernel state or parameter record, read by name (``state.period``) in numba and numpy."""
    layout = [(field, np.float64) if isinstance(field, str) else (field[0], np.float64, field[1])
              for field in fields]
    return np.dtype(layout, align=True)


PARAMS = _record(
    "hop_s", "window_hops", "blink_hops", "perclos_hops",
    "perclos_opening_max",        # 1 - perclos_closure
    "warmup_s", "confidence_min", "max_gap_s",
    "saccade_velocity",           # rad/s
    "saccade_min_s", "saccade_max_s",
    "saccade_min_amplitude",      # rad
    "saccade_min_rate_hz", "blink_opening_max", "blink_min_s", "blink_max_s",
    "blink_min_rate_hz",
    "use_flags",                  # use_tracker_flags (1) or not (0)
    "label_purity", "window_s", "lag_s",
    "ring_hops",                  # rows of the hop ring: a window, the lag and 2 spare
    "measure_hops",               # rows of the measure ring: the longer measure span
    "max_jump_s", "clock_reset_s", "saccade_noise_factor", "saccade_noise_amplitude",
    "fixation_min_s", "fixation_merge_s",
    "fixation_merge_angle",       # rad
    "pursuit_tau_s",
    "pursuit_velocity",           # rad/s
    "glances",                    # glance channel on (1) or off (0); angles below in radians
    "glance_road_yaw", "glance_road_pitch",   # half-axes of the road ellipse
    "glance_warmup_s", "glance_forget_s",
    ("glance_regions", (4, 3)),   # interior, left, right mirror, instrument: yaw, pitch, radius
    "glance_min_dip_s", "glance_lost_carry_s",
    "glance_head_yaw", "glance_head_pitch",   # half-axes of the head-pose ellipse (0: no fallback)
    "glance_head_memory_s",       # time constant of the on-road head pose
    "glance_buffer_s", "glance_buffer_delay_s", "glance_free_s", "glance_long_s",
    "glance_sharing_s", "glance_sharing_window_s", "glance_sharing_reset_s",
    "glance_window_min",          # window_s / 60: converts glance counts per window to per minute
    "fatigue",                    # fatigue channel on (1) or off (0); angles below in radians
    "fatigue_closed_fraction", "fatigue_open_fraction", "fatigue_open_memory_s",
    "fatigue_microsleep_s", "fatigue_sleep_s", "fatigue_hidden_s",
    "fatigue_perclos_drowsy", "fatigue_perclos_recovered", "fatigue_blink_drowsy_s",
    "fatigue_head_yaw", "fatigue_head_pitch",   # half-axes of the facing-forward ellipse
    "vehicle",                    # vehicle channel on (1) or off (0)
    ("low", (len(FIELDS),)),      # range bounds of each field
    ("high", (len(FIELDS),)),
)
"""The kernels' parameter record (private to ``distractd.pipeline``)."""


def _params(config):
    """The kernels' parameters of ``config``: a one-record array of :data:`PARAMS`."""
    params = np.zeros(1, PARAMS)
    p = params[0]
    window_hops = round(config.window_s / config.hop_s)
    lag_hops = math.ceil(config.lag_s / config.hop_s)
    p["hop_s"] = config.hop_s
    p["window_hops"] = window_hops
    p["blink_hops"] = round(config.blink_window_s / config.hop_s)
    p["perclos_hops"] = round(config.perclos_window_s / config.hop_s)
    p["perclos_opening_max"] = 1.0 - config.perclos_closure
    p["warmup_s"] = config.warmup_s
    p["confidence_min"] = config.confidence_min
    p["max_gap_s"] = config.max_gap_s
    p["saccade_velocity"] = math.radians(config.saccade_velocity_deg_s)
    p["saccade_min_s"] = config.saccade_min_s
    p["saccade_max_s"] = config.saccade_max_s
    p["saccade_min_amplitude"] = math.radians(config.saccade_min_amplitude_deg)
    p["saccade_min_rate_hz"] = config.saccade_min_rate_hz
    p["blink_opening_max"] = config.blink_opening_max
    p["blink_min_s"] = config.blink_min_s
    p["blink_max_s"] = config.blink_max_s
    p["blink_min_rate_hz"] = config.blink_min_rate_hz
    p["use_flags"] = float(config.use_tracker_flags)
    p["label_purity"] = config.label_purity
    p["window_s"] = config.window_s
    p["lag_s"] = config.lag_s
    p["ring_hops"] = window_hops + lag_hops + 2
    p["measure_hops"] = max(p["blink_hops"], p["perclos_hops"])
    p["max_jump_s"] = config.max_jump_s
    p["clock_reset_s"] = config.clock_reset_s
    p["saccade_noise_factor"] = config.saccade_noise_factor
    p["saccade_noise_amplitude"] = config.saccade_noise_amplitude_factor
    p["fixation_min_s"] = config.fixation_min_s
    p["fixation_merge_s"] = config.fixation_merge_gap_s
    p["fixation_merge_angle"] = math.radians(config.fixation_merge_deg)
    p["pursuit_tau_s"] = config.pursuit_tau_s
    p["pursuit_velocity"] = math.radians(config.pursuit_velocity_deg_s)
    p["glances"] = float(config.glances)
    p["glance_road_yaw"] = math.radians(config.glance_road_yaw_deg)
    p["glance_road_pitch"] = math.radians(config.glance_road_pitch_deg)
    p["glance_warmup_s"] = config.glance_road_warmup_s
    p["glance_forget_s"] = config.glance_road_forget_s
    regions = (("interior_mirror", "mirror"), ("left_mirror", "mirror"),
               ("right_mirror", "mirror"), ("instrument", "instrument"))
    mirrored = -1.0 if config.drive_side == "right" else 1.0
    for r, (name, radius) in enumerate(regions):
        side = mirrored if radius == "mirror" else 1.0
        p["glance_regions"][r] = (
            side * math.radians(getattr(config, f"glance_{name}_yaw_deg")),
            math.radians(getattr(config, f"glance_{name}_pitch_deg")),
            math.radians(getattr(config, f"glance_{radius}_radius_deg")))
    p["glance_min_dip_s"] = config.glance_min_dip_s
    p["glance_lost_carry_s"] = config.glance_lost_carry_s
    p["glance_head_yaw"] = math.radians(config.glance_head_yaw_deg)
    p["glance_head_pitch"] = math.radians(config.glance_head_pitch_deg)
    p["glance_head_memory_s"] = config.glance_head_memory_s
    p["glance_buffer_s"] = config.glance_buffer_s
    p["glance_buffer_delay_s"] = config.glance_buffer_delay_s
    p["glance_free_s"] = config.glance_free_s
    p["glance_long_s"] = config.glance_long_s
    p["glance_sharing_s"] = config.glance_sharing_s
    p["glance_sharing_window_s"] = config.glance_sharing_window_s
    p["glance_sharing_reset_s"] = config.glance_sharing_reset_s
    p["glance_window_min"] = config.window_s / 60.0
    p["fatigue"] = float(config.fatigue)
    for name in ("fatigue_closed_fraction", "fatigue_open_fraction", "fatigue_open_memory_s",
                 "fatigue_microsleep_s", "fatigue_sleep_s", "fatigue_hidden_s",
                 "fatigue_perclos_drowsy", "fatigue_perclos_recovered", "fatigue_blink_drowsy_s"):
        p[name] = getattr(config, name)
    p["fatigue_head_yaw"] = math.radians(config.fatigue_head_yaw_deg)
    p["fatigue_head_pitch"] = math.radians(config.fatigue_head_pitch_deg)
    p["vehicle"] = float(config.vehicle)
    p["low"] = [RANGES[name][0] for name in FIELDS]
    p["high"] = [RANGES[name][1] for name in FIELDS]
    return params
