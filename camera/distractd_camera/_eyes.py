"""Each eye's aperture and gaze from the face mesh, measured in the head's own frame.

The landmarks are rotated into the head frame (the head pose's rotation; MediaPipe's depth makes
them 3-D, in pixels), so that turning or tilting the head does not change what is measured:

- **aperture**: the mean vertical gap of three pairs of lid points over the eye's width (corner
  to corner). About 0.25-0.35 open; the face mesh rarely brings it to zero when the lids shut.
- **eye-in-head rotation** from the iris centre's offset from the middle of the eye corners, in
  eye widths: an eyeball of radius :data:`EYEBALL_RADIUS_MM` behind an eye
  :data:`EYE_WIDTH_MM` wide turns by ``asin(offset * EYE_WIDTH_MM / EYEBALL_RADIUS_MM)``.
  The iris sits at the corners' height give or take a driver's anatomy: a constant offset, which
  the daemon's per-driver road centre absorbs.
- **gaze**: the eye-in-head direction turned by the head's rotation, so in the world frame, as
  the canonical sample wants it.

:func:`eye_aspect_ratio` is the naive floor's measure: Soukupova & Cech's (2016) eye aspect
ratio in the image plane.
"""

import math

import numpy as np

from ._head import direction_angles

__all__ = ["EYE_WIDTH_MM", "EYEBALL_RADIUS_MM", "eye_measures", "eye_aspect_ratio"]

EYE_WIDTH_MM = 30.0
"""Adult palpebral fissure length, corner to corner, millimetres (about 28-31 mm)."""
EYEBALL_RADIUS_MM = 12.0
"""Adult eyeball radius, millimetres (axial length about 24 mm)."""


def eye_measures(landmarks, camera_rotation, head_rotation, eye):
    """``(aperture, gaze_yaw, gaze_pitch)`` of one eye (:data:`~._landmarks.RIGHT_EYE` or
    ``LEFT_EYE``): the aperture in eye widths, the gaze in radians in the world frame."""
    head = landmarks @ camera_rotation   # rows: R^T p, camera-frame points in the head frame
    outer, inner, iris = head[eye["outer"]], head[eye["inner"]], head[eye["iris"]]
    width = float(np.linalg.norm(outer - inner))
    if not width > 0:
        return math.nan, math.nan, math.nan
    gap = head[list(eye["upper"]), 1] - head[list(eye["lower"]), 1]
    aperture = float(gap.mean()) / width
    offset = (iris[:2] - (outer[:2] + inner[:2]) / 2.0) / width * (EYE_WIDTH_MM / EYEBALL_RADIUS_MM)
    yaw_in_head, pitch_in_head = np.arcsin(np.clip(offset, -1.0, 1.0))
    direction = np.array([math.sin(yaw_in_head) * math.cos(pitch_in_head),
                          math.sin(pitch_in_head),
                          -math.cos(yaw_in_head) * math.cos(pitch_in_head)])
    gaze_yaw, gaze_pitch = direction_angles(head_rotation @ direction)
    return aperture, gaze_yaw, gaze_pitch


def eye_aspect_ratio(landmarks, eye):
    """Soukupova & Cech's eye aspect ratio of one eye in the image plane: the two outer lid
    gaps' mean over the corner distance (the naive floor's blink measure)."""
    xy = landmarks[:, :2]
    upper, lower = eye["upper"], eye["lower"]
    gaps = (np.linalg.norm(xy[upper[0]] - xy[lower[0]])
            + np.linalg.norm(xy[upper[2]] - xy[lower[2]]))
    return float(gaps / (2.0 * np.linalg.norm(xy[eye["outer"]] - xy[eye["inner"]])))
