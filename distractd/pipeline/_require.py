"""The check every command and wing that reads a recording's windows makes first."""

from .._errors import RecordingError

__all__ = ["require_windows"]


def require_windows(name, recording, windows, window_s):
    """Raise :class:`~distractd.RecordingError` naming ``name`` when ``recording`` gave no
    complete window: a header-only result would otherwise pass silently.

    Parameters
    ----------
    name : str
        The recording's file (or other name) for the message.
    recording : Recording
    windows : Windows
        The windows extracted from ``recording``.
    window_s : float
        The pipeline's window length, for the message.
    """
    if len(windows) == 0:
        raise RecordingError(f"{name}: no complete window: the recording spans "
                             f"{recording.duration_s:.1f} s, a window {window_s:g} s")
