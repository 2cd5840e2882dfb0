"""A webcam or a video file as a distractd tracker (docs/camera.md).

MediaPipe's face mesh with iris refinement gives face and iris landmarks per frame; from them
come the canonical sample's head position and orientation, each eye's gaze and eyelid opening,
and the confidence (0 when no face is found). The samples go to a CSV recording or to a running
daemon over the wire protocol. This package runs in its own environment (``make camera-env``):
its landmark library pins numpy below 2, which the daemon's own install must not be made to take.
"""

from ._frontend import MEASURE_FIELDS, SAMPLE_FIELDS, FrontEnd
from ._sources import SourceError, VideoSource

__all__ = ["FrontEnd", "MEASURE_FIELDS", "SAMPLE_FIELDS", "SourceError", "VideoSource"]
