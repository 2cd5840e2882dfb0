"""The per-sample channels: one protocol, one alert record, one face record they share.

A channel runs per accepted sample inside the processor's compiled pass, on arrays it owns (its
kernel, :mod:`._protocol`), and raises alerts as rows of :data:`~._alerts.ALERT_ROW`; what one
channel learns that another reads lives in the face record (:mod:`._face`), so no channel reads
another's state. :data:`CHANNELS` is every channel the processor runs, in order; a new channel is
its own module plus its entry here (docs/pipeline.md "Channels" lists what it provides).
"""

from ._fatigue import FATIGUE_ALERT_KINDS, FatigueAlert, FatigueChannel, FatigueTrace
from ._glance import ALERT_KINDS, GLANCE_CLASSES, Alert, GlanceChannel, GlanceTrace
from ._vehicle import VehicleChannel, VehicleTrace

__all__ = ["CHANNELS", "GlanceChannel", "FatigueChannel", "VehicleChannel", "Alert",
           "FatigueAlert", "GlanceTrace", "FatigueTrace", "VehicleTrace", "ALERT_KINDS",
           "FATIGUE_ALERT_KINDS", "GLANCE_CLASSES"]

CHANNELS = (GlanceChannel, FatigueChannel, VehicleChannel)
"""The channels of every stream, stepped in this order per sample (the glance channel first: the
fatigue channel reads the on-road head pose it learns at the same sample; the vehicle channel
reads nothing of theirs)."""
