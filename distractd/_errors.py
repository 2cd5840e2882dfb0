"""The one exception family of distractd."""

__all__ = ["DistractdError", "SchemaError", "RecordingError", "ConfigError", "ModelError"]


class DistractdError(Exception):
    """Base class: every error distractd raises on purpose derives from it.

    The CLI prints its message as one line and exits with status 1.
    """


class SchemaError(DistractdError, ValueError):
    """A sample, block or CSV row does not match the canonical schema."""


class RecordingError(DistractdError, ValueError):
    """A recording file is malformed, truncated or of an unknown version."""


class ConfigError(DistractdError, ValueError):
    """A configuration value is missing, of the wrong type or out of range."""


class ModelError(DistractdError, ValueError):
    """A model artifact is corrupt, truncated or does not match what is asked of it."""
