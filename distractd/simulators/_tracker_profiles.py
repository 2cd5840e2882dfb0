"""The tracker profiles :func:`~._tracker.apply_tracker` delivers a drive through (its module
docstring says what each does): names and settings alone, so that ``simulate --tracker``'s choices
load no kernel."""

from dataclasses import dataclass

from ..pipeline.formats import CENTER_PX, DEG_PER_PX

__all__ = ["TrackerProfile", "TRACKERS"]

_CHANNEL_WIDTH_PX, _SCREEN_HEIGHT_PX = 1024.0, 1080.0   # the reader's central channel; y 26-1080


@dataclass(frozen=True)
class TrackerProfile:
    """What a tracker delivers.

    Attributes
    ----------
    name : str
    frame_rate_hz : float or None
        The tracker's own frame rate (the drive is simulated at it and exported at the asked
        rate); None: frames at the asked rate.
    loss_rate_scale : float
        Multiplies the driver's glare/occlusion burst rate (``loss_per_min``).
    gaze_region_deg : tuple of float or None
        (yaw min, yaw max, pitch min, pitch max) of the world gaze the tracker reports; gaze
        outside it is lost. None: no bound beyond the eye's range.
    gaze_only : bool
        Deliver only ``t``, the gaze (one point, in both eyes' fields) and a 0/1 confidence,
        point-sampled at the asked rate.
    """

    name: str
    frame_rate_hz: float = None
    loss_rate_scale: float = 1.0
    gaze_region_deg: tuple = None
    gaze_only: bool = False


TRACKERS = {
    "full": TrackerProfile("full"),
    "sparse-gaze": TrackerProfile(
        "sparse-gaze", frame_rate_hz=60.0, loss_rate_scale=3.0, gaze_only=True,
        # the central screen channel in the reader's angles (read_taamneh: DEG_PER_PX about
        # CENTER_PX): mirrors and the instrument cluster are off it
        gaze_region_deg=(-_CHANNEL_WIDTH_PX / 2 * DEG_PER_PX, _CHANNEL_WIDTH_PX / 2 * DEG_PER_PX,
                         -(_SCREEN_HEIGHT_PX - CENTER_PX[1]) * DEG_PER_PX,
                         CENTER_PX[1] * DEG_PER_PX)),
}
"""The tracker profiles by name (module docstring)."""
