"""The long-running service: sockets, sessions, publishing, metrics, configuration, lifecycle."""

from ..models.detectors import decision_options
from ._adaptation import Adaptation, Adapter, Fit, StreamAdaptation
from ._classifier import Classifier
from ._config import DEFAULTS, load_config, parse_override
from ._inputs import Inputs
from ._metrics import LATENCY_BUCKETS_S, Metrics
from ._model import Model, default_model_path
from ._output import Output
from ._profiles import ProfileStore, Profiles, profile_dir
from ._reload import Reloader
from ._service import Service, run
from ._session import Session, StreamSegmenter
from ._sockets import PupilLink, pupil_sub_endpoint
from ._status import Rates, Status
from ._streams import StreamTable
from ._systemd import Notifier

__all__ = [
    "DEFAULTS", "load_config", "parse_override", "decision_options", "Metrics", "LATENCY_BUCKETS_S",
    "pupil_sub_endpoint", "PupilLink", "Service", "Model", "Session", "StreamSegmenter", "run",
    "default_model_path", "Notifier", "StreamAdaptation", "Adapter", "Fit", "Adaptation",
    "StreamTable", "Inputs", "Classifier", "Output", "Reloader", "Rates", "Status",
    "ProfileStore", "Profiles", "profile_dir",
]
