"""One video frame in, one canonical distractd sample out (docs/camera.md).

Per frame: the face mesh's landmarks (:class:`~._landmarks.FaceMesh`), the head pose
(:class:`~._head.HeadPose`), each eye's aperture and gaze in the head frame
(:func:`~._eyes.eye_measures`) and the eyelid opening against the driver's open level
(:class:`~._eyelid.EyelidScale`). No face: a sample of track loss (confidence 0, the rest
missing), so the daemon counts the loss at the camera's rate instead of seeing a gap. A head
turned far from the camera hides the eye on the side turned away behind the nose: that eye's
gaze and eyelid are left missing (:data:`FAR_EYE_YAW_DEG`), and the daemon uses the other.
"""

import math

import cv2

from ._eyelid import CLOSED_RATIO, EyelidScale
from ._eyes import eye_aspect_ratio, eye_measures
from ._head import HeadPose, angles, camera_matrix
from ._landmarks import LEFT_EYE, RIGHT_EYE, FaceMesh

__all__ = ["SAMPLE_FIELDS", "MEASURE_FIELDS", "FAR_EYE_YAW_DEG", "FrontEnd"]

FAR_EYE_YAW_DEG = 30.0
"""Head yaw from the camera, degrees, beyond which the eye on the side turned away is not
measured (our choice: on the Intel sample clip, at 33 degrees the far eye's gaze read 40 degrees
off the near eye's, which agreed with the face looking into the lens)."""

SAMPLE_FIELDS = ("t", "head_x", "head_y", "head_z", "head_yaw", "head_pitch", "head_roll",
                 "gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch",
                 "eyelid_r", "eyelid_l", "confidence")
"""The canonical fields a camera sample carries (DESIGN §2; units: s, m, rad, 0..1)."""
MEASURE_FIELDS = ("t", "face", "aperture_r", "aperture_l", "ear_r", "ear_l",
                  "corner_r_x", "corner_r_y", "corner_l_x", "corner_l_y")
"""Per-frame raw measures beside the samples (``--measures``): whether a face was found, each
eye's aperture in eye widths (before the open-level scale), the image-plane eye aspect ratio
(the naive blink floor's measure) and the eyes' outer corners in pixels (the naive roll's)."""


class FrontEnd:
    """Turn the frames of one camera into canonical samples.

    Parameters
    ----------
    width, height : int
        Frame size in pixels.
    rate_hz : float
        The camera's frame rate (sizes the eyelid's open-level memory).
    fov_deg : float, default=60.0
        The camera's horizontal field of view, degrees: gives the focal length
        (:func:`~._head.camera_matrix`).
    closed_ratio : float, default=CLOSED_RATIO
        Aperture of shut eyes over the open level (:class:`~._eyelid.EyelidScale`).
    """

    def __init__(self, width, height, rate_hz, fov_deg=60.0, closed_ratio=CLOSED_RATIO):
        self.width, self.height = width, height
        self._mesh = FaceMesh()
        self._pose = HeadPose(camera_matrix(width, height, fov_deg))
        self._eyelids = (EyelidScale(rate_hz, closed_ratio=closed_ratio),
                         EyelidScale(rate_hz, closed_ratio=closed_ratio))

    def process(self, frame_bgr, t):
        """``(sample, measures)`` of one BGR frame taken at ``t`` seconds: dicts keyed by
        :data:`SAMPLE_FIELDS` and :data:`MEASURE_FIELDS` (NaN where not measured)."""
        sample = dict.fromkeys(SAMPLE_FIELDS, math.nan)
        measures = dict.fromkeys(MEASURE_FIELDS, math.nan)
        sample["t"] = measures["t"] = t
        sample["confidence"] = measures["face"] = 0.0
        landmarks = self._mesh.landmarks(cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2RGB))
        pose = None if landmarks is None else self._pose.fit(landmarks)
        if pose is None:
            return sample, measures
        rotation, position, camera_rotation = pose
        sample["head_x"], sample["head_y"], sample["head_z"] = (float(v) for v in position)
        sample["head_yaw"], sample["head_pitch"], sample["head_roll"] = angles(rotation)
        turned = math.degrees(sample["head_yaw"])   # + to the right: the right eye turns away
        hidden = "r" if turned > FAR_EYE_YAW_DEG else "l" if turned < -FAR_EYE_YAW_DEG else None
        for side, eye, scale in (("r", RIGHT_EYE, self._eyelids[0]),
                                 ("l", LEFT_EYE, self._eyelids[1])):
            aperture, yaw, pitch = eye_measures(landmarks, camera_rotation, rotation, eye)
            if side != hidden:
                sample[f"gaze_{side}_yaw"], sample[f"gaze_{side}_pitch"] = yaw, pitch
                sample[f"eyelid_{side}"] = scale.update(aperture)
            measures[f"aperture_{side}"] = aperture
            measures[f"ear_{side}"] = eye_aspect_ratio(landmarks, eye)
            corner = landmarks[eye["outer"]]
            measures[f"corner_{side}_x"], measures[f"corner_{side}_y"] = corner[0], corner[1]
        sample["confidence"] = measures["face"] = 1.0
        return sample, measures

    def close(self):
        self._mesh.close()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()
