"""The remote eye/head tracker between the driver and the samples: each imperfection switchable.

- ``noise``: a per-driver gaze offset (accuracy, Blignaut et al. 2012) that creeps slowly during
  the drive (calibration drift, smooth, time constant 5 min), plus white noise of the driver's RMS
  sample-to-sample level, growing with head yaw; small head, pupil, eyelid noise; random confidence
  scatter.
- ``track_loss``: gaze and pupil lost when the eye leaves the tracker's gaze range (faceLAB 5: eye
  yaw +-45 deg, pitch +-22 deg) or the lid covers the pupil (blinks), and glare/occlusion bursts
  (Poisson onsets, log-normal lengths) that lose gaze, pupil and eyelid while the head stays
  tracked.
- ``drops``: frames lost in transport (Bernoulli, 0.1-1 % per driver).
- ``duplicates``: frames delivered twice, with the same timestamp.
- ``jitter``: Gaussian timestamp error of 0.5-2 ms, clipped to 0.4 frame so order is kept.

No source gives faceLAB's noise, drop, duplicate or jitter figures; the values are chosen (see
``docs/simulator.md``).

Two tracker profiles (:data:`TRACKERS`) deliver the result: ``full`` every field at the asked rate;
``sparse-gaze`` what the real texting drives of Taamneh et al. 2017 hold
(doi:10.1038/sdata.2017.110): a 60 Hz faceLAB whose gaze footprint on the simulator screen was exported at 1 Hz. Gaze counts
as lost when it leaves the screen (the footprint is undefined there: a look down at a phone is
lost), glare/occlusion bursts are more frequent, and the export point-samples one frame per
output period (isolated one-second losses dominate the real drives' loss runs, as a blink caught
at the sampling instant makes them; an average over the second would hide those) with the one
gaze point in both eyes' fields, confidence 1 (valid) or 0 (lost), and every other field missing.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..pipeline import FIELD_INDEX, empty_block
from ._oculomotor import smooth_drift
from ._tracker_profiles import TRACKERS

__all__ = ["apply_tracker", "sample_sparse_gaze", "EYE_YAW_RANGE_DEG", "EYE_PITCH_RANGE_DEG",
           "PUPIL_COVERED_CLOSURE"]

EYE_YAW_RANGE_DEG, EYE_PITCH_RANGE_DEG = 45.0, 22.0
PUPIL_COVERED_CLOSURE = 0.6
"""Eyelid closure above which the lid covers the pupil: gaze and pupil are lost (blinks)."""
_GAZE = [FIELD_INDEX[f] for f in ("gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch")]
_YAWS = [FIELD_INDEX["gaze_r_yaw"], FIELD_INDEX["gaze_l_yaw"]]
_PITCHES = [FIELD_INDEX["gaze_r_pitch"], FIELD_INDEX["gaze_l_pitch"]]
_HEAD_ROT = [FIELD_INDEX[f] for f in ("head_yaw", "head_pitch", "head_roll")]
_HEAD_POS = [FIELD_INDEX[f] for f in ("head_x", "head_y", "head_z")]
_PUPIL = [FIELD_INDEX["pupil_r"], FIELD_INDEX["pupil_l"]]
_EYELID = [FIELD_INDEX["eyelid_r"], FIELD_INDEX["eyelid_l"]]
_CONF = FIELD_INDEX["confidence"]
_CALIBRATION_TAU_S = 300.0


def apply_tracker(rng, traits, block, eye_yaw_deg, eye_pitch_deg, closure, rate_hz, *,
                  noise=True, track_loss=True, drops=True, duplicates=True, jitter=True,
                  profile=TRACKERS["full"]):
    """Turn the driver's true signals into what the tracker delivers.

    Parameters
    ----------
    rng : numpy.random.Generator
    traits : DriverTraits
    block : ndarray of shape (n_frames, N_FIELDS)
        True signals on the nominal frame grid; modified in place.
    eye_yaw_deg, eye_pitch_deg : ndarray of shape (n_frames,)
        Eye-in-head angles (deg), for the gaze range.
    closure : ndarray of shape (n_frames,)
        True eyelid closure (0 open, 1 closed), for blink track loss.
    rate_hz : float
        Nominal frame rate.
    noise, track_loss, drops, duplicates, jitter : bool
        Which imperfections to apply.
    profile : TrackerProfile, default=TRACKERS["full"]
        Its burst rate and gaze region apply with ``track_loss``; its output format is
        :func:`sample_sparse_gaze`'s to apply.

    Returns
    -------
    samples : ndarray
        The delivered block.
    rows : ndarray of int
        For each delivered sample, its frame in ``block``.
    offset : ndarray of shape (n_frames, 2)
        The gaze offset (yaw, pitch; deg) added to both eyes per frame; zeros without ``noise``.
    """
    n = len(block)
    world_yaw_deg = np.degrees(block[:, _YAWS].mean(axis=1))
    world_pitch_deg = np.degrees(block[:, _PITCHES].mean(axis=1))
    eccentricity = np.abs(eye_yaw_deg) / EYE_YAW_RANGE_DEG
    block[:, _CONF] = 1.0 - 0.3 * np.minimum(eccentricity, 1.0) ** 2
    offset = np.zeros((n, 2))
    if noise:
        head_yaw_deg = np.degrees(np.abs(block[:, FIELD_INDEX["head_yaw"]]))
        scale = np.radians(traits.noise_deg / math.sqrt(2)) * (1 + head_yaw_deg / 45.0)
        block[:, _GAZE] += rng.standard_normal((n, 4)) * scale[:, None]
        for column, constant in enumerate((traits.offset_yaw_deg, traits.offset_pitch_deg)):
            offset[:, column] = constant + smooth_drift(
                rng, n, 1 / rate_hz, _CALIBRATION_TAU_S, traits.calibration_drift_deg)
        block[:, _YAWS] += np.radians(offset[:, :1])
        block[:, _PITCHES] += np.radians(offset[:, 1:])
        block[:, _HEAD_ROT] += rng.standard_normal((n, 3)) * math.radians(0.15)
        block[:, _HEAD_POS] += rng.standard_normal((n, 3)) * 0.0005
        block[:, _PUPIL] += rng.standard_normal((n, 2)) * 0.05
        block[:, _EYELID] = np.clip(block[:, _EYELID] + rng.standard_normal((n, 2)) * 0.02, 0, 1.3)
        block[:, _CONF] -= 0.1 * rng.random(n)
    if track_loss:
        out_of_range = (eccentricity > 1) | (np.abs(eye_pitch_deg) > EYE_PITCH_RANGE_DEG)
        if profile.gaze_region_deg is not None:
            yaw_min, yaw_max, pitch_min, pitch_max = profile.gaze_region_deg
            out_of_range |= ((world_yaw_deg < yaw_min) | (world_yaw_deg > yaw_max)
                             | (world_pitch_deg < pitch_min) | (world_pitch_deg > pitch_max))
        covered = closure > PUPIL_COVERED_CLOSURE
        burst = _bursts(rng, traits, n, rate_hz, profile.loss_rate_scale)
        lost = out_of_range | covered | burst
        block[np.ix_(lost, _GAZE + _PUPIL)] = np.nan
        block[np.ix_(burst, _EYELID)] = np.nan
        block[covered, _CONF] = np.minimum(block[covered, _CONF], 0.3)
        block[out_of_range | burst, _CONF] = 0.1 * rng.random(int((out_of_range | burst).sum()))
    t = block[:, 0]
    if jitter:
        bound = 0.4 / rate_hz
        t += np.clip(rng.normal(0.0, traits.jitter_s, n), -bound, bound)
    rows = np.arange(n)
    if drops:
        rows = rows[rng.random(n) >= traits.drop_fraction]
    if duplicates:
        rows = np.repeat(rows, 1 + (rng.random(len(rows)) < traits.duplicate_fraction))
    return block[rows], rows, offset


def sample_sparse_gaze(samples, rows, n_frames, frame_rate_hz, rate_hz):
    """The gaze-only export of a tracker's samples: one frame per output period.

    Parameters
    ----------
    samples : ndarray of shape (n_samples, N_FIELDS)
        The delivered samples (:func:`apply_tracker`).
    rows : ndarray of int
        For each delivered sample, its frame.
    n_frames : int
        Frames on the nominal grid, ``j / frame_rate_hz`` s.
    frame_rate_hz, rate_hz : float
        The tracker's frame rate and the export's rate (at most the frame rate).

    Returns
    -------
    block : ndarray of shape (n_out, N_FIELDS)
        At ``k / rate_hz`` s: the gaze of the frame nearest that time (the mean of both eyes, in
        both eyes' fields), confidence 1 when it holds gaze and 0 when it is lost or was not
        delivered; every other field NaN.
    frames : ndarray of int
        The frame each output row was taken from.
    """
    frames = np.round(np.arange(int(n_frames * rate_hz / frame_rate_hz))
                      * (frame_rate_hz / rate_hz)).astype(np.int64)
    frames = frames[frames < n_frames]
    delivered = np.full(n_frames, -1, dtype=np.int64)
    delivered[rows[::-1]] = np.arange(len(rows))[::-1]   # a duplicated frame: its first copy
    at = delivered[frames]
    yaw = np.full(len(frames), np.nan)
    pitch = np.full(len(frames), np.nan)
    yaw[at >= 0] = samples[at[at >= 0]][:, _YAWS].mean(axis=1)
    pitch[at >= 0] = samples[at[at >= 0]][:, _PITCHES].mean(axis=1)
    valid = np.isfinite(yaw) & np.isfinite(pitch)
    block = empty_block(len(frames))
    block[:, 0] = frames / frame_rate_hz
    block[:, _YAWS] = np.where(valid, yaw, np.nan)[:, None]
    block[:, _PITCHES] = np.where(valid, pitch, np.nan)[:, None]
    block[:, _CONF] = valid
    return block, frames


def _bursts(rng, traits, n, rate_hz, rate_scale=1.0):
    """Frames inside glare/occlusion bursts: Poisson onsets (the driver's rate times
    ``rate_scale``), log-normal lengths (sigma 0.8)."""
    duration_s = n / rate_hz
    count = rng.poisson(rate_scale * traits.loss_per_min / 60.0 * duration_s)
    onsets = rng.uniform(0.0, duration_s, count)
    lengths = traits.loss_median_s * np.exp(0.8 * rng.standard_normal(count))
    lost = np.zeros(n + 1, dtype=np.int64)
    np.add.at(lost, np.minimum((onsets * rate_hz).astype(np.int64), n), 1)
    np.add.at(lost, np.minimum(((onsets + lengths) * rate_hz).astype(np.int64) + 1, n), -1)
    return np.cumsum(lost)[:n] > 0
