"""Per-stream signal processing: validation, events, glances, windows, features, baselines, over
the canonical sample of :mod:`distractd.pipeline.formats` (re-exported here)."""

from ._baseline import RunningBaseline
from ._config import PipelineConfig
from ._events import EVENT_KINDS
from ._glances import (
    ALERT_KINDS, GLANCE_CLASSES, GLANCE_FEATURES, Alert, GlanceChannel, GlanceTrace,
)
from ._processor import Events, StreamProcessor, detect_events, detect_glances, extract_features
from ._validate import REJECT_REASONS, T_MAX_S
from ._windows import (
    FEATURE_NAMES, MEASURES, Windows, feature_fields, feature_min_rate_hz, gaze_only_features,
)
from .formats import *  # noqa: F403 (the canonical sample's forms belong to the pipeline's surface)
from .formats import __all__ as _formats_all

__all__ = [
    "PipelineConfig", "StreamProcessor", "Windows", "extract_features", "FEATURE_NAMES", "MEASURES",
    "feature_fields", "feature_min_rate_hz", "gaze_only_features",
    "REJECT_REASONS", "T_MAX_S", "Events", "detect_events", "EVENT_KINDS", "GLANCE_CLASSES", "GLANCE_FEATURES",
    "ALERT_KINDS", "Alert", "GlanceChannel", "GlanceTrace", "detect_glances", "RunningBaseline",
    *_formats_all,
]
