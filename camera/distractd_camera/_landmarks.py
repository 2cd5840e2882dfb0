"""Face and iris landmarks of one face per frame, from MediaPipe's face mesh.

MediaPipe 0.10.21's legacy ``solutions.face_mesh`` runs a face detector, the 468-point face mesh
and the iris model (``refine_landmarks=True``: 10 more points, 468-477) on the CPU, with every
model inside the wheel: nothing is downloaded. Between frames it tracks the face from the last
mesh and runs the detector again only when the track is lost, which is what makes it fast.

Landmark indices (MediaPipe's canonical mesh; "right" is the subject's right eye, on the image's
left in an unmirrored picture): the corners, lids and iris centre of each eye, and the points the
head pose is fitted to (docs/camera.md, "Head pose").
"""

import os

import numpy as np

__all__ = ["FaceMesh", "RIGHT_EYE", "LEFT_EYE", "POSE_POINTS"]

RIGHT_EYE = {"outer": 33, "inner": 133, "upper": (160, 159, 158), "lower": (144, 145, 153),
             "iris": 468}
"""The subject's right eye: corners, upper and lower lid points (paired, outer to inner), iris
centre. The lid pairs are the eye-aspect-ratio points of Soukupova & Cech (2016) plus the middle
pair."""
LEFT_EYE = {"outer": 263, "inner": 362, "upper": (387, 386, 385), "lower": (373, 374, 380),
            "iris": 473}
"""The subject's left eye, as :data:`RIGHT_EYE`."""

POSE_POINTS = (1, 152, 33, 133, 263, 362, 61, 291, 168)
"""Nose tip, chin, the eyes' outer and inner corners, the mouth corners, the nasion: rigid enough
points of the face (the jaw and lids move) that a generic face model places
(:data:`~._head.FACE_MODEL_MM`)."""


class FaceMesh:
    """MediaPipe's face mesh with iris refinement on video frames, one face.

    Parameters
    ----------
    min_detection_confidence, min_tracking_confidence : float, default=0.5
        MediaPipe's thresholds: for a new face, and for keeping the tracked one (below it the
        detector runs again on the next frame).

    Call :meth:`landmarks` on each frame in order; :meth:`close` (or ``with``) frees the graph.
    """

    def __init__(self, min_detection_confidence=0.5, min_tracking_confidence=0.5):
        os.environ.setdefault("GLOG_minloglevel", "2")  # MediaPipe's start-up chatter on stderr
        import mediapipe  # 1-2 s: only once a frame source is open, never for --help

        self._mesh = mediapipe.solutions.face_mesh.FaceMesh(
            static_image_mode=False, max_num_faces=1, refine_landmarks=True,
            min_detection_confidence=min_detection_confidence,
            min_tracking_confidence=min_tracking_confidence)

    def landmarks(self, frame_rgb):
        """``(478, 3)`` float64 landmarks of the face in an RGB ``uint8`` frame, or None when no
        face is found: x and y in pixels (x right, y down), z in pixels of depth (as x's scale;
        larger is farther from the camera, MediaPipe's relative depth)."""
        height, width = frame_rgb.shape[:2]
        result = self._mesh.process(frame_rgb)
        if not result.multi_face_landmarks:
            return None
        points = result.multi_face_landmarks[0].landmark
        xyz = np.array([(p.x, p.y, p.z) for p in points], dtype=np.float64)
        xyz *= (width, height, width)
        return xyz

    def close(self):
        self._mesh.close()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()
