"""Head pose from face landmarks: a generic face model fitted by perspective-n-point.

Frames (docs/camera.md, "Geometry"):

- camera: OpenCV's (x right in the image, y down, z from the camera into the scene);
- head and world: x to the driver's right, y up, z backwards (out of the back of the head), a
  right-handed frame. The world frame is the head's frame when the driver faces the camera, so
  head yaw and pitch are zero looking into the lens, + yaw to the driver's right, + pitch up,
  + roll with the head tilted to the driver's right. A camera on the dashboard sees the driver
  looking into it roughly when the driver looks at the road; the daemon learns each driver's road
  centre online, so that offset does not matter.

Intrinsics: unknown for a webcam; the focal length follows from an assumed horizontal field of
view (``fov_deg``, 60 degrees by default, typical of laptop and USB webcams), the principal point
is the image centre and there is no distortion.
"""

import math

import cv2
import numpy as np

__all__ = ["FACE_MODEL_MM", "camera_matrix", "HeadPose", "angles", "direction_angles"]

FACE_MODEL_MM = {
    1: (0.0, -48.0, -22.0),     # nose tip (pronasale)
    152: (0.0, -122.0, 4.0),    # chin (menton)
    33: (45.0, 0.0, 12.0),      # right eye, outer corner (exocanthion)
    133: (16.0, 0.0, 2.0),      # right eye, inner corner (endocanthion)
    263: (-45.0, 0.0, 12.0),    # left eye, outer corner
    362: (-16.0, 0.0, 2.0),     # left eye, inner corner
    61: (25.0, -76.0, 6.0),     # right mouth corner (cheilion)
    291: (-25.0, -76.0, 6.0),   # left mouth corner
    168: (0.0, 4.0, -6.0),      # nasion
}
"""A generic adult face in the head frame, millimetres, origin between the eyes' inner corners:
rounded anthropometric means (intercanthal width 32 mm, biocular width 90 mm, nose tip 48 mm
below and 22 mm in front of the eye line, mouth width 50 mm, face height nasion-chin 126 mm).
One face for every driver: its errors are part of the measured head-pose error."""

_FRONTAL = np.diag([-1.0, -1.0, 1.0])
"""Rotation from the world frame to the camera frame for a driver facing the camera: the
driver's right is the image's left, up is the image's up, backwards is away from the camera."""


def camera_matrix(width, height, fov_deg=60.0):
    """Pinhole intrinsics of a ``width`` x ``height`` image whose horizontal field of view is
    ``fov_deg``: square pixels, principal point at the centre."""
    focal = (width / 2.0) / math.tan(math.radians(fov_deg) / 2.0)
    return np.array([[focal, 0.0, width / 2.0], [0.0, focal, height / 2.0], [0.0, 0.0, 1.0]])


def angles(rotation):
    """``(yaw, pitch, roll)`` in radians of a head rotation in the world frame (columns: the
    head's right, up and backward axes): + yaw right, + pitch up, + roll tilted right."""
    yaw, pitch = direction_angles(-rotation[:, 2])
    cy, sy, cp, sp = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch)
    # the rotation with this yaw and pitch and no roll: R_y(-yaw) @ R_x(pitch)
    no_roll = np.array([[cy, -sy * sp, -sy * cp], [0.0, cp, -sp], [sy, cy * sp, cy * cp]])
    rest = no_roll.T @ rotation   # a rotation about the backward axis
    return yaw, pitch, -math.atan2(rest[1, 0], rest[0, 0])


def direction_angles(direction):
    """``(yaw, pitch)`` in radians of a direction in the world frame: + yaw right, + pitch up,
    both zero straight ahead (along -z)."""
    x, y, z = direction
    return math.atan2(x, -z), math.atan2(y, math.hypot(x, z))


class HeadPose:
    """The head's rotation and position in one frame, fitted to :data:`FACE_MODEL_MM` by
    OpenCV's SQPnP (a global solver: no initial guess, so no drift and no flips carried from
    frame to frame).

    Parameters
    ----------
    intrinsics : ndarray of shape (3, 3)
        The camera matrix (:func:`camera_matrix`).
    """

    def __init__(self, intrinsics):
        self.intrinsics = intrinsics
        self._model = np.array(list(FACE_MODEL_MM.values()))
        self._indices = list(FACE_MODEL_MM)

    def fit(self, landmarks):
        """``(rotation, position_m, camera_rotation)``, or None when no pose fits: the head's
        3x3 rotation in the world frame, the position of the model's origin in metres (world
        axes: + x right, + y up, + z away from the camera) and the head's rotation in the camera
        frame (to bring landmarks into the head frame)."""
        image = np.ascontiguousarray(landmarks[self._indices, :2])
        ok, rvec, tvec = cv2.solvePnP(self._model, image, self.intrinsics, None,
                                      flags=cv2.SOLVEPNP_SQPNP)
        if not ok or not tvec[2, 0] > 0:
            return None
        camera_rotation = cv2.Rodrigues(rvec)[0]
        return _FRONTAL.T @ camera_rotation, _FRONTAL.T @ tvec[:, 0] / 1000.0, camera_rotation
