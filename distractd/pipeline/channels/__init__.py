"""The per-sample channels: one protocol, one alert record, one face record they share.

A channel runs per accepted sample inside the processor's compiled pass, on arrays it owns (its
kernel, :mod:`._protocol`), and raises alerts as rows of :data:`~._alerts.ALERT_ROW`; what one
channel learns that another reads lives in the face record (:mod:`._face`), so no channel reads
another's state. :data:`CHANNELS` is every channel the processor runs, in order; a new channel is
its own module plus its entry here (docs/pipeline.md "Channels" lists what it provides).
"""

from ._fatigue import FATIGUE_ALERT_KINDS, FatigueAlert, FatigueChannel, FatigueTrace
from ._glance import ALERT_KINDS, GLANCE_CLASSES, Alert, GlanceChannel, GlanceTrace

__all__ = ["CHANNELS", "GlanceChannel", "FatigueChannel", "Alert", "FatigueAlert", "GlanceTrace",
           "FatigueTrace", "ALERT_KINDS", "FATIGUE_ALERT_KINDS", "GLANCE_CLASSES"]

CHANNELS = (GlanceChannel, FatigueChannel)
"""The channels of every stream, stepped in this order per sample (the glance channel first: the
fatigue channel reads the on-road head pose it learns at the same sample)."""
