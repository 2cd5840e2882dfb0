"""Where channels meet: the sample as every channel sees it, and the face record they share.

:data:`SAMPLE` is what the processor knows of an accepted sample beyond its fields (its step,
whether the eyes are tracked, a blink that ended at it); :data:`FACE` is what one channel learns
and another reads: the head's recent on-road pose (the glance channel learns it; the fatigue
channel reads it to tell a closure facing forward) and the eyelid (the fatigue channel publishes its
open level and closure; the glance channel reads it to tell eyes closed from a glance away).
"""

import numpy as np
from numba import njit

from .._config import _EYELID, _GAZE_PITCH, _GAZE_YAW, _HEAD_PITCH, _HEAD_YAW, _record

__all__ = ["SAMPLE", "FACE", "new_face", "cyclopean", "aperture", "facing_forward",
           "closed_forward"]

SAMPLE = _record(
    "t",          # sample time, s
    "dt",         # step from the previous accepted sample (0 for the first), s
    "gap",        # 1 when that step is a gap
    "lost",       # 1 when the eyes are untracked (validation's track loss)
    "has_gaze",   # 1 when the sample had a gaze value before validation
    "blink_s",    # duration of a blink the blink detector accepted at this sample (else NaN), s
)

FACE = _record(
    "head_yaw",      # recent on-road head pose (yaw, pitch), rad: the head while the gaze is on
    "head_pitch",    # the road (learned by the glance channel)
    "head_seen_s",   # on-road time with a head pose seen, s
    "eyes_seen_s",   # visible eyelid time the open level was learned from, s
    "eyes_level",    # open-eye aperture
    "eyes_closed",   # 1 inside a closure
)


def new_face():
    """A face record with nothing learned: no head pose, the eyelid's open level at the schema's
    open baseline (1.0)."""
    face = np.zeros(1, FACE)
    face["eyes_level"] = 1.0
    return face


@njit(cache=True, inline="always")
def cyclopean(x):
    """Mean yaw and pitch of the eyes with a gaze value in sample ``x``; NaN when neither has."""
    yaw = 0.0
    pitch = 0.0
    n = 0
    for eye in range(2):
        if not (np.isnan(x[_GAZE_YAW[eye]]) or np.isnan(x[_GAZE_PITCH[eye]])):
            yaw += x[_GAZE_YAW[eye]]
            pitch += x[_GAZE_PITCH[eye]]
            n += 1
    if n == 0:
        return np.nan, np.nan
    return yaw / n, pitch / n


@njit(cache=True, inline="always")
def aperture(x):
    """Mean eyelid aperture of the eyes with a value in sample ``x``; NaN when neither has."""
    total = 0.0
    n = 0
    for j in _EYELID:
        if not np.isnan(x[j]):
            total += x[j]
            n += 1
    return total / n if n > 0 else np.nan


@njit(cache=True, inline="always")
def facing_forward(x, params, face):
    """The head lies within the ``fatigue_head_*`` ellipse around the recent on-road head pose;
    True without a head pose or an on-road pose to compare with."""
    yaw = x[_HEAD_YAW]
    pitch = x[_HEAD_PITCH]
    if face.head_seen_s <= 0.0 or yaw != yaw or pitch != pitch:
        return True
    dyaw = (yaw - face.head_yaw) / params.fatigue_head_yaw
    dpitch = (pitch - face.head_pitch) / params.fatigue_head_pitch
    return dyaw * dyaw + dpitch * dpitch <= 1.0


@njit(cache=True, inline="always")
def closed_forward(x, lost, params, face):
    """The eyelids of sample ``x`` are closed with the head facing forward, as the fatigue
    channel reads a closure (its open level learned; at or below ``fatigue_closed_fraction`` of
    it, or, eyes untracked (``lost``), below ``fatigue_open_fraction`` inside a closure; the
    forward head ellipse). False with the fatigue channel off."""
    if params.fatigue != 1.0 or face.eyes_seen_s < params.warmup_s:
        return False
    lids = aperture(x)
    if lids != lids:
        return False
    level = face.eyes_level
    if lids > params.fatigue_closed_fraction * level and not (
            lost and face.eyes_closed == 1.0 and lids < params.fatigue_open_fraction * level):
        return False
    return facing_forward(x, params, face)
