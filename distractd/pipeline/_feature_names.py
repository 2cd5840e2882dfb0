"""The names of the window features, apart from the kernels that compute them.

Naming a feature needs no numba: ``distractd features --help`` and anything else that only lists
or counts the features imports this module, not :mod:`distractd.pipeline._windows`.
"""

from .formats import SPATIAL_FIELDS

__all__ = ["FEATURE_NAMES", "GLANCE_FEATURES", "MEASURES", "VEHICLE_FEATURES", "NAIVE_VEHICLE_FEATURES"]

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

VEHICLE_FEATURES = (
    "mean_lane_offset", "sd_lane_offset", "lane_offset_speed_m_s", "lane_tlc_min_s",
    "mean_steering", "sd_steering", "steering_speed_rad_s", "steering_reversals_small_per_min",
    "steering_reversals_large_per_min", "steering_entropy", "steering_hf_ratio",
    "mean_speed", "sd_speed", "speed_change_m_s2",
    "pedal_change_per_s", "mean_accelerator", "sd_accelerator", "mean_brake", "sd_brake",
)
"""The window's vehicle features (units in the names where not the field's own):

- ``mean_lane_offset`` (m) and ``sd_lane_offset`` (SDLP, m, ddof=1);
- ``lane_offset_speed_m_s``: mean absolute lateral speed in the lane, m/s;
- ``lane_tlc_min_s``: shortest time to line crossing in the window, s, capped at
  ``tlc_cap_s`` (the cap when the car never heads for an edge);
- ``mean_steering``, ``sd_steering`` (rad), ``steering_speed_rad_s`` (mean absolute steering speed, rad/s);
- ``steering_reversals_small_per_min``, ``steering_reversals_large_per_min``: reversals of the
  filtered steering angle by at least the small and the large gap, per minute of steering data;
- ``steering_entropy``: Nakayama et al.'s entropy (0-1, base 9) of the window's prediction errors;
- ``steering_hf_ratio``: ``mean((Δθ)²) / (2 var θ)``;
- ``mean_speed``, ``sd_speed`` (m/s), ``speed_change_m_s2`` (mean absolute speed change per s);
- ``pedal_change_per_s``: mean absolute change of accelerator plus brake per second;
- ``mean_accelerator``, ``sd_accelerator``, ``mean_brake``, ``sd_brake`` (0-1).

NaN where the window has no data for the measure (no lane offset, no steering, ...) or with the
vehicle channel off (docs/pipeline.md "Vehicle signals"; the measures and their sources:
:mod:`distractd.pipeline._vehicle_measures`)."""

NAIVE_VEHICLE_FEATURES = tuple(f"{stat}_{field}" for field in (
    "lane_offset", "steering", "speed", "accelerator", "brake") for stat in ("mean", "sd"))
"""The naive floor's vehicle features: its own recipe (the mean and SD of each field) applied to
the vehicle's signals, so that the floor rises with the signals a stream has."""

FEATURE_NAMES = (tuple(f"mean_{m}" for m in MEASURES) + tuple(f"sd_{m}" for m in SPATIAL_FIELDS)
                 + GLANCE_FEATURES + VEHICLE_FEATURES)
"""The 49 window features: the 25 of S0 §5.3.5 (the mean of the 15 measures, then the standard
deviation, ddof=1, of the 10 spatial ones), the 5 glance features of :data:`GLANCE_FEATURES`
(DESIGN §4.5), then the 19 vehicle features of :data:`VEHICLE_FEATURES` (issue 33). A model
reads its own features by name (``Detector.feature_columns``), so a model trained on the first 30
reads the same columns."""
