"""The one exception family of distractd."""

__all__ = ["DistractdError", "SchemaError", "RecordingError", "ConfigError", "ModelError",
           "unreadable"]


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


def unreadable(path, error, kind=DistractdError):
    """A ``kind`` error naming ``path`` and, in words, why it cannot be read.

    ``error`` is the ``OSError`` (missing, a folder, no permission) or ``UnicodeDecodeError`` (not
    UTF-8 text) the attempt raised; its reason is kept, never a traceback or a library's hint.

    >>> str(unreadable("drive.csv", UnicodeDecodeError("utf-8", b"t\\xff", 1, 2, "bad")))
    'drive.csv: cannot be read: not UTF-8 text (byte 0xff at offset 1)'
    >>> str(unreadable("drive.csv", FileNotFoundError(2, "No such file or directory")))
    'drive.csv: cannot be read: no such file or directory'
    """
    if isinstance(error, UnicodeDecodeError):
        reason = f"not UTF-8 text (byte 0x{error.object[error.start]:02x} at offset {error.start})"
    elif isinstance(error, IsADirectoryError):
        reason = "it is a folder, not a file"
    elif isinstance(error, OSError) and error.strerror:
        reason = error.strerror[0].lower() + error.strerror[1:]
    else:
        reason = str(error)
    return kind(f"{path}: cannot be read: {reason}")
