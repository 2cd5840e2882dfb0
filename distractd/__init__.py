"""distractd: real-time driver-distraction detection from eye- and head-tracker streams."""

from ._errors import ConfigError, DistractdError, ModelError, RecordingError, SchemaError

__version__ = "0.1.0"

__all__ = ["DistractdError", "SchemaError", "RecordingError", "ConfigError", "ModelError",
           "__version__"]
