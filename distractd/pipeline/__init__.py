"""Per-stream signal processing: validation, events, windows and features, over the canonical
sample of :mod:`distractd.pipeline.formats` (re-exported here)."""

from ._config import PipelineConfig
from ._events import EVENT_KINDS
from ._processor import Events, StreamProcessor, detect_events, extract_features
from ._validate import REJECT_REASONS
from ._windows import FEATURE_NAMES, MEASURES, Windows
from .formats import *  # noqa: F403 (the canonical sample's forms belong to the pipeline's surface)
from .formats import __all__ as _formats_all

__all__ = [
    "PipelineConfig", "StreamProcessor", "Windows", "extract_features", "FEATURE_NAMES", "MEASURES",
    "REJECT_REASONS", "Events", "detect_events", "EVENT_KINDS", *_formats_all,
]
