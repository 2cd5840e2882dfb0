"""The eyelid opening relative to the driver's open eye, from the face mesh's aperture.

Two steps, both per eye and causal:

1. **The driver's open level**: the 75th percentile of the eye's aperture over the last
   ``memory_s`` seconds of tracked frames. Eyes are open most of the time (blinks and looks down
   are a few percent of it), so a high quantile follows the open eye, also as the camera's
   distance or the driver changes, and is not pulled down by closures.
2. **The closed level**: the face mesh keeps a lid gap on shut eyes. An aperture at
   :data:`CLOSED_RATIO` of the open level or below reads 0 (closed), the open level reads 1,
   linearly between (above 1: wider than usual, up to 1.5, the canonical range).

The daemon's fatigue channel learns its own open level from these values as it does for every
tracker (docs/pipeline.md, "Fatigue"); this scale only makes 0 mean shut.
"""

import math

import numpy as np

__all__ = ["CLOSED_RATIO", "EyelidScale"]

CLOSED_RATIO = 0.2
"""Aperture of shut eyes as a fraction of the open level, for MediaPipe's face mesh (chosen on
the development half of the labelled clips: docs/results/camera.md)."""
OPEN_QUANTILE = 75.0
"""Percentile of the recent apertures taken as the open level."""


class EyelidScale:
    """Turn one eye's apertures into openings relative to the driver's open eye.

    Parameters
    ----------
    rate_hz : float
        Frame rate, to size the memory.
    memory_s : float, default=30.0
        Span of the recent apertures the open level is taken from, seconds.
    closed_ratio : float, default=CLOSED_RATIO
        Aperture of shut eyes over the open level.
    """

    def __init__(self, rate_hz, memory_s=30.0, closed_ratio=CLOSED_RATIO):
        self.rate_hz = rate_hz
        self.memory_s = memory_s
        self.closed_ratio = closed_ratio
        self._ring = np.full(max(1, int(round(rate_hz * memory_s))), np.nan)
        self._next = 0

    def update(self, aperture):
        """The opening for this frame's ``aperture`` (NaN for NaN: the eye not measured)."""
        if not math.isfinite(aperture):
            return math.nan
        self._ring[self._next % len(self._ring)] = aperture
        self._next += 1
        level = float(np.percentile(self._ring[:self._next], OPEN_QUANTILE))
        if not level > 0:
            return math.nan
        opening = (aperture / level - self.closed_ratio) / (1.0 - self.closed_ratio)
        return min(max(opening, 0.0), 1.5)
