"""The naive eye-event floor: a plain velocity threshold (I-VT) on point-to-point gaze speed.

Each tracked sample's speed is the cyclopean gaze rotation from the previous sample over the time
between them (no filtering, no minimum durations, no noise model). Samples above the threshold are
saccade, the other tracked samples fixation, and every run of track loss a blink: the floor a
detector must beat on any human-coded set.
"""

import numpy as np

from ...pipeline import FIELD_INDEX
from ._event_agreement import spans_from_flags

__all__ = ["naive_ivt", "NAIVE_IVT_DEG_S"]

NAIVE_IVT_DEG_S = 30.0
"""The naive I-VT threshold, deg/s (the common default of velocity-threshold classifiers)."""


def naive_ivt(recording, threshold_deg_s=NAIVE_IVT_DEG_S):
    """Per-sample saccade, fixation and blink flags and spans of the naive I-VT.

    Parameters
    ----------
    recording : Recording
        Evenly sampled gaze (the period is the median sample spacing).
    threshold_deg_s : float, default=NAIVE_IVT_DEG_S

    Returns
    -------
    flags : dict
        Event kind -> ndarray of shape (n_samples,), dtype bool.
    spans : dict
        Event kind -> ndarray of shape (n, 2) of ``(start_s, end_s)``, each sample covering its
        period.
    """
    samples = recording.samples
    t = samples[:, FIELD_INDEX["t"]]
    yaw = _mean_eyes(samples, "yaw")
    pitch = _mean_eyes(samples, "pitch")
    lost = np.isnan(yaw) | np.isnan(pitch) | (samples[:, FIELD_INDEX["confidence"]] <= 0.0)
    dyaw = np.diff(yaw) * np.cos(0.5 * (pitch[1:] + pitch[:-1]))
    speed = np.degrees(np.hypot(dyaw, np.diff(pitch)) / np.diff(t))
    fast = np.r_[False, np.nan_to_num(speed, nan=0.0) > threshold_deg_s] & ~lost
    flags = {"saccade": fast, "fixation": ~fast & ~lost, "blink": lost}
    period = float(np.median(np.diff(t)))
    return flags, {kind: spans_from_flags(t, flag, period) for kind, flag in flags.items()}


def _mean_eyes(samples, axis):
    both = samples[:, [FIELD_INDEX[f"gaze_r_{axis}"], FIELD_INDEX[f"gaze_l_{axis}"]]]
    valid = np.isfinite(both)
    with np.errstate(invalid="ignore"):
        return np.where(valid.any(axis=1), np.nansum(both, axis=1) / valid.sum(axis=1), np.nan)
