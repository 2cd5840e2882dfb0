"""The names of the window features, apart from the kernels that compute them.

Naming a feature needs no numba: ``distractd features --help`` and anything else that only lists
or counts the features imports this module, not :mod:`distractd.pipeline._windows`.
"""

from .formats import SPATIAL_FIELDS

__all__ = ["FEATURE_NAMES", "GLANCE_FEATURES", "MEASURES"]

MEASURES = SPATIAL_FIELDS + (
    "saccade", "blink", "blink_frequency_hz", "blink_duration_s", "perclos",
)
"""The 15 per-sample measures of Table 5.1 (S0 §5.3.4), in feature order."""

GLANCE_FEATURES = (
    "glance_prc", "glance_off_road_fraction", "glance_longest_away_s", "glance_rate_per_min",
    "glance_track_loss_fraction",
)
"""The window's glance features, appended to the 25 of S0 §5.3.5:

- ``glance_prc``: percent road as a fraction (0..1): tracked samples on the road (inside the
  forward roadway ellipse) over tracked samples, after Victor et al. 2005's percent road centre
  (whose 8° circle is narrower); NaN when no sample was tracked;
- ``glance_off_road_fraction``: time classified off road, mirror or instrument over the window's
  observed time (lost samples count in the denominator only);
- ``glance_longest_away_s``: longest glance away seen in the window, seconds (a glance that began
  before the window counts from its start; 0 when none);
- ``glance_rate_per_min``: glances away counted in the window (when they reach
  ``glance_min_dip_s``) per minute of window length (``window_s``);
- ``glance_track_loss_fraction``: lost samples over accepted samples.

All are NaN for a window with no sample after the stream's first gaze value (a tracker with no
gaze field at all); they need no head pose and no eyelid signal."""

FEATURE_NAMES = (tuple(f"mean_{m}" for m in MEASURES) + tuple(f"sd_{m}" for m in SPATIAL_FIELDS)
                 + GLANCE_FEATURES)
"""The 30 window features: the 25 of S0 §5.3.5 (the mean of the 15 measures, then the standard
deviation, ddof=1, of the 10 spatial ones), then the 5 glance features of
:data:`GLANCE_FEATURES` (DESIGN §4.5)."""
