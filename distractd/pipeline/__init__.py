"""Per-stream signal processing: validation, events, glances, fatigue, windows, features,
baselines, over the canonical sample of :mod:`distractd.pipeline.formats` (re-exported here).

Names are imported from their module when first used (:mod:`distractd._lazy`): reading a
recording or a wire message does not load numba and the kernels behind the features."""

from .._lazy import lazy_exports
from .formats import __all__ as _formats_all

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "._baseline": ("RunningBaseline",),
    "._config": ("PipelineConfig",),
    "._events": ("EVENT_KINDS",),
    "._feature_names": (
        "FEATURE_NAMES", "GLANCE_FEATURES", "MEASURES", "NAIVE_VEHICLE_FEATURES", "VEHICLE_FEATURES",
    ),
    ".channels": (
        "ALERT_KINDS", "CHANNELS", "FATIGUE_ALERT_KINDS", "GLANCE_CLASSES", "Alert", "FatigueAlert",
        "FatigueChannel", "FatigueTrace", "GlanceChannel", "GlanceTrace", "VehicleChannel",
        "VehicleTrace",
    ),
    "._processor": ("StreamProcessor",),
    "._batch": (
        "Events", "detect_channel", "detect_events", "detect_fatigue", "detect_glances",
        "extract_features",
    ),
    "._require": ("require_windows",),
    "._validate": ("SAMPLE_REJECT_REASONS", "T_MAX_S"),
    "._vehicle_measures": ("VehicleSettings",),
    "._windows": (
        "Windows", "feature_fields", "feature_min_rate_hz", "gaze_only_features",
    ),
    ".formats": tuple(_formats_all),  # the canonical sample's forms: the pipeline's surface
})
