"""The event floors a detector must beat on any human-coded set: a plain velocity threshold (I-VT)
and the Tobii I-VT filter with its published defaults (Olsen 2012).

- :func:`naive_ivt`: each tracked sample's speed is the cyclopean gaze rotation from the previous
  sample over the time between them (no filtering, no noise model). Runs of samples above the
  threshold are saccades, runs of the other tracked samples fixations when they last at least
  ``fixation_min_s``, and runs of track loss blinks (the *track-loss rule*) when they last at least
  ``blink_min_s`` (the pipeline's defaults: one home for them, :class:`PipelineConfig`).
- :func:`olsen_ivt`: Olsen (2012), "The Tobii I-VT Fixation Filter: algorithm description" (Tobii
  Technology), with its defaults: track loss of at most 75 ms filled in linearly, the speed over a
  20 ms window centred on the sample (at least the neighbours on either side), 30 deg/s, adjacent
  fixations merged when at most 75 ms and 0.5 deg apart, fixations shorter than 60 ms discarded.
  It detects no blinks: its blinks are the track-loss rule's.

Both are offline (they see the whole recording) and give per-sample flags and spans, each sample
covering its period.
"""

import numpy as np

from ...pipeline import FIELD_INDEX, PipelineConfig
from ._event_agreement import spans_from_flags

__all__ = ["naive_ivt", "olsen_ivt", "NAIVE_IVT_DEG_S", "OLSEN_IVT"]

NAIVE_IVT_DEG_S = 30.0
"""The naive I-VT threshold, deg/s (the common default of velocity-threshold classifiers)."""

OLSEN_IVT = {"threshold_deg_s": 30.0, "window_s": 0.020, "gap_fill_s": 0.075,
             "merge_s": 0.075, "merge_deg": 0.5, "fixation_min_s": 0.060}
"""The Tobii I-VT filter's defaults (Olsen 2012)."""


def naive_ivt(recording, threshold_deg_s=NAIVE_IVT_DEG_S):
    """Per-sample saccade, fixation and blink flags and spans of the plain I-VT.

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
        Event kind -> ndarray of shape (n, 2) of ``(start_s, end_s)``.
    """
    t, yaw, pitch, lost = _gaze(recording)
    period = float(np.median(np.diff(t)))
    speed = np.r_[np.nan, _angle(yaw[:-1], pitch[:-1], yaw[1:], pitch[1:]) / np.diff(t)]
    fast = (np.nan_to_num(speed, nan=0.0) > threshold_deg_s) & ~lost
    defaults = PipelineConfig()
    flags = {"saccade": fast,
             "fixation": _long_runs(~fast & ~lost, defaults.fixation_min_s, period),
             "blink": _long_runs(lost, defaults.blink_min_s, period)}
    return flags, {kind: spans_from_flags(t, flag, period) for kind, flag in flags.items()}


def olsen_ivt(recording, settings=None):
    """Per-sample saccade, fixation and blink flags and spans of the Tobii I-VT filter.

    Parameters
    ----------
    recording : Recording
        Evenly sampled gaze.
    settings : dict, default=None
        Entries overriding :data:`OLSEN_IVT`.

    Returns
    -------
    flags, spans : dict
        As :func:`naive_ivt`.
    """
    s = {**OLSEN_IVT, **(settings or {})}
    t, yaw, pitch, lost = _gaze(recording)
    period = float(np.median(np.diff(t)))
    yaw, pitch = _fill_gaps(t, yaw, pitch, s["gap_fill_s"])
    half = max(1, int(round(0.5 * s["window_s"] / period)))
    speed = np.full(len(t), np.nan)
    speed[half:-half] = (_angle(yaw[:-2 * half], pitch[:-2 * half], yaw[2 * half:], pitch[2 * half:])
                         / (t[2 * half:] - t[:-2 * half]))
    known = np.isfinite(speed)
    fast = known & (speed > s["threshold_deg_s"])
    still = known & ~fast
    still, fast = _merge_fixations(t, yaw, pitch, still, fast, s["merge_s"], s["merge_deg"],
                                   period)
    flags = {"saccade": fast, "fixation": _long_runs(still, s["fixation_min_s"], period),
             "blink": naive_ivt(recording)[0]["blink"]}
    return flags, {kind: spans_from_flags(t, flag, period) for kind, flag in flags.items()}


def _gaze(recording):
    samples = recording.samples
    t = samples[:, FIELD_INDEX["t"]]
    yaw = _mean_eyes(samples, "yaw")
    pitch = _mean_eyes(samples, "pitch")
    lost = np.isnan(yaw) | np.isnan(pitch) | (samples[:, FIELD_INDEX["confidence"]] <= 0.0)
    yaw, pitch = np.where(lost, np.nan, yaw), np.where(lost, np.nan, pitch)
    return t, yaw, pitch, lost


def _angle(yaw0, pitch0, yaw1, pitch1):
    """Gaze rotation between two directions (radians in), degrees (small-angle form)."""
    dyaw = (yaw1 - yaw0) * np.cos(0.5 * (pitch0 + pitch1))
    return np.degrees(np.hypot(dyaw, pitch1 - pitch0))


def _runs(inside):
    """First and one-past-last index of each run of True."""
    edges = np.diff(np.r_[0, inside.astype(np.int8), 0])
    return np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)


def _long_runs(inside, min_s, period):
    """``inside`` without its runs shorter than ``min_s`` (each sample covering one period)."""
    first, end = _runs(inside)
    keep = np.zeros(len(inside), dtype=bool)
    for a, b in zip(first, end):
        if (b - a) * period >= min_s - 1e-9:
            keep[a:b] = True
    return keep


def _fill_gaps(t, yaw, pitch, max_s):
    """Linear interpolation over runs of missing gaze of at most ``max_s`` between tracked
    samples (Olsen's gap fill-in)."""
    yaw, pitch = yaw.copy(), pitch.copy()
    first, end = _runs(np.isnan(yaw))
    for a, b in zip(first, end):
        if a == 0 or b == len(t) or t[b] - t[a - 1] > max_s + (t[a] - t[a - 1]):
            continue
        w = (t[a:b] - t[a - 1]) / (t[b] - t[a - 1])
        yaw[a:b] = yaw[a - 1] + w * (yaw[b] - yaw[a - 1])
        pitch[a:b] = pitch[a - 1] + w * (pitch[b] - pitch[a - 1])
    return yaw, pitch


def _merge_fixations(t, yaw, pitch, still, fast, max_s, max_deg, period):
    """Join consecutive fixation runs at most ``max_s`` apart whose mean gazes are at most
    ``max_deg`` apart: the samples between them (a noise spike, lost samples) become fixation.
    Returns the new fixation and saccade flags."""
    still, fast = still.copy(), fast.copy()
    first, end = _runs(still)
    for k in range(len(first) - 1):
        a, b = end[k], first[k + 1]   # the samples between run k and run k + 1
        if (t[b] - t[a - 1]) - period > max_s:
            continue
        before = slice(first[k], end[k])
        after = slice(first[k + 1], end[k + 1])
        shift = _angle(np.nanmean(yaw[before]), np.nanmean(pitch[before]),
                       np.nanmean(yaw[after]), np.nanmean(pitch[after]))
        if shift <= max_deg:
            still[a:b] = True
            fast[a:b] = False
            first[k + 1] = first[k]
    return still, fast


def _mean_eyes(samples, axis):
    both = samples[:, [FIELD_INDEX[f"gaze_r_{axis}"], FIELD_INDEX[f"gaze_l_{axis}"]]]
    valid = np.isfinite(both)
    with np.errstate(invalid="ignore"):
        return np.where(valid.any(axis=1), np.nansum(both, axis=1) / valid.sum(axis=1), np.nan)
