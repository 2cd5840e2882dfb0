"""The long-running service: sockets, sessions, publishing, metrics, configuration, lifecycle."""

from ._config import DEFAULTS, load_config, parse_override
from ._demo import NotifyReceiver, demo, free_port
from ._metrics import LATENCY_BUCKETS_S, Metrics
from ._pupil import PupilAdapter, gaze_angles, pupil_sub_endpoint
from ._service import Model, Service, default_model_path, run
from ._session import Session, StreamSegmenter
from ._systemd import Notifier
from ._wire import (
    REJECTION_REASONS, VERSION, Limits, Rejected, decode_output, decode_samples, encode_block,
    encode_event, encode_map, encode_state,
)

__all__ = [
    "DEFAULTS", "load_config", "parse_override", "demo", "free_port",
    "NotifyReceiver",
    "Metrics", "LATENCY_BUCKETS_S", "PupilAdapter",
    "gaze_angles", "pupil_sub_endpoint", "Service", "Model", "Session", "StreamSegmenter", "run",
    "default_model_path",
    "Notifier", "VERSION", "REJECTION_REASONS", "Rejected", "Limits", "decode_samples",
    "decode_output", "encode_map", "encode_block", "encode_state", "encode_event",
]
