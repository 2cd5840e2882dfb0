"""Settings of the per-stream pipeline: one frozen dataclass, every duration in seconds.

The processor's numba kernels read the settings from a flat ``float64`` parameter vector built by
:func:`_params`; the ``_P_*`` constants are its layout (private to ``distractd.pipeline``).
"""

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from .._errors import ConfigError
from .._validation import Interval, check_params
from .formats import FIELDS, RANGES

__all__ = ["PipelineConfig"]

_POSITIVE = Interval(0, None, closed="neither")
_NON_NEGATIVE = Interval(0, None)
_FRACTION = Interval(0, 1)


@dataclass(frozen=True)
class PipelineConfig:
    """Settings of validation, eye events, derived measures and windows (DESIGN §4 steps 1-4).

    Parameters
    ----------
    window_s : float, default=10.0
        Feature window length in seconds; a whole multiple of ``hop_s`` (S0 §5.3.5).
    hop_s : float, default=0.5
        Window hop in seconds (at least 1 ms). Windows end on multiples of ``hop_s`` of the
        stream's own clock.
    blink_window_s : float, default=60.0
        Span of blink frequency and mean blink duration, seconds; a whole multiple of ``hop_s``.
    perclos_window_s : float, default=180.0
        Span of PERCLOS, seconds; a whole multiple of ``hop_s`` (S0 §5.3.4).
    perclos_closure : float, default=0.75
        Eyelid closure (1 - opening) at or above which a sample counts as closed for PERCLOS.
    warmup_s : float, default=10.0
        Signal time a derived measure needs inside its window before it is reported; NaN before.
    confidence_min : float, default=0.5
        Samples with lower tracker confidence are track loss (their eye fields are ignored).
    max_gap_s : float, default=0.25
        A time step longer than this and than 2.5 measured sample periods is counted as a gap;
        eye events do not span gaps.
    max_jump_s : float, default=5.0
        A forward time step longer than this is a suspect clock jump: the sample is held until the
        next one shows which clock goes on (rejected as ``t_jump`` if the old one does).
    clock_reset_s : float, default=0.5
        Consecutive samples before the stream's latest time that increase among themselves (steps
        up to the gap limit) for this long, and at least 3 of them, are a clock reset: the
        stream's windows and measures restart from them.
    saccade_velocity_deg_s : float, default=15.0
        Gaze rotation speed above which a sample belongs to a saccade candidate, deg/s. Tuned on
        the IRF recordings at 30-120 Hz (docs/pipeline.md); the floor of the adaptive threshold.
    saccade_noise_factor : float, default=3.5
        Adaptive part of the saccade threshold: the threshold rises to the mean plus this many
        standard deviations of the stream's recent fixation speeds when that is higher than
        ``saccade_velocity_deg_s`` (a noisy tracker); 0 keeps the fixed threshold.
    saccade_min_s : float, default=0.005
        Shortest saccade, seconds (from the sample before the first fast one to the last fast one).
    saccade_max_s : float, default=0.15
        Longest saccade, seconds; longer fast runs are not saccades.
    saccade_min_amplitude_deg : float, default=0.2
        Smallest gaze displacement of a saccade from its start to its end, degrees.
    saccade_min_rate_hz : float, default=20.0
        Below this measured sample rate saccades cannot be resolved and are reported as NaN.
    blink_opening_max : float, default=0.5
        Eyelid opening (0 closed, 1 open) below which the eye counts as closing for blinks.
    blink_min_s : float, default=0.03
        Shortest blink, seconds (midpoint to midpoint of the surrounding open samples).
    blink_max_s : float, default=0.5
        Longest blink, seconds; longer closures or track losses are not blinks.
    blink_min_rate_hz : float, default=10.0
        Below this measured sample rate blinks cannot be resolved and are reported as NaN.
    use_tracker_flags : bool, default=False
        Use the tracker's ``saccade`` and ``blink`` fields instead of the pipeline's own detectors.
    label_purity : float, default=0.5
        A window takes label 1 (or 0) when more than half and at least this fraction of its
        labelled samples carry it; otherwise -1.
    """

    window_s: float = 10.0
    hop_s: float = 0.5
    blink_window_s: float = 60.0
    perclos_window_s: float = 180.0
    perclos_closure: float = 0.75
    warmup_s: float = 10.0
    confidence_min: float = 0.5
    max_gap_s: float = 0.25
    max_jump_s: float = 5.0
    clock_reset_s: float = 0.5
    saccade_velocity_deg_s: float = 15.0
    saccade_noise_factor: float = 3.5
    saccade_min_s: float = 0.005
    saccade_max_s: float = 0.15
    saccade_min_amplitude_deg: float = 0.2
    saccade_min_rate_hz: float = 20.0
    blink_opening_max: float = 0.5
    blink_min_s: float = 0.03
    blink_max_s: float = 0.5
    blink_min_rate_hz: float = 10.0
    use_tracker_flags: bool = False
    label_purity: float = 0.5

    _constraints = {
        "window_s": _POSITIVE, "hop_s": Interval(1e-3, None), "blink_window_s": _POSITIVE,
        "perclos_window_s": _POSITIVE, "perclos_closure": _FRACTION, "warmup_s": _NON_NEGATIVE,
        "confidence_min": _FRACTION, "max_gap_s": _POSITIVE, "max_jump_s": _POSITIVE,
        "clock_reset_s": _POSITIVE, "saccade_velocity_deg_s": _POSITIVE,
        "saccade_noise_factor": _NON_NEGATIVE,
        "saccade_min_s": _NON_NEGATIVE, "saccade_max_s": _POSITIVE,
        "saccade_min_amplitude_deg": _NON_NEGATIVE, "saccade_min_rate_hz": _NON_NEGATIVE,
        "blink_opening_max": _FRACTION, "blink_min_s": _NON_NEGATIVE, "blink_max_s": _POSITIVE,
        "blink_min_rate_hz": _NON_NEGATIVE, "use_tracker_flags": bool,
        "label_purity": Interval(0.5, 1),
    }

    def __post_init__(self):
        check_params(self.to_dict(), self._constraints, owner="pipeline")
        for name in ("window_s", "blink_window_s", "perclos_window_s"):
            ratio = getattr(self, name) / self.hop_s
            if abs(ratio - round(ratio)) > 1e-9 * ratio:
                raise ConfigError(f"pipeline.{name} must be a whole multiple of hop_s="
                                  f"{self.hop_s}, got {getattr(self, name)}")
        for short, long in (("saccade_min_s", "saccade_max_s"), ("blink_min_s", "blink_max_s")):
            if getattr(self, short) > getattr(self, long):
                raise ConfigError(f"pipeline.{short} must be <= {long}={getattr(self, long)}, "
                                  f"got {getattr(self, short)}")

    def to_dict(self):
        """The settings as a JSON-ready dict."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, settings):
        """Build from a dict such as :meth:`to_dict` gives; unknown keys are an error."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(settings) - known)
        if unknown:
            raise ConfigError(f"pipeline has no setting {unknown[0]!r}; known: {sorted(known)}")
        return cls(**settings)

    @property
    def lag_s(self):
        """Delay between a window's end and its emission, seconds: the longest pending event."""
        return max(self.saccade_max_s, self.blink_max_s)


# Layout of the kernels' parameter vector.
_P_HOP_S = 0
_P_WINDOW_HOPS = 1
_P_BLINK_HOPS = 2
_P_PERCLOS_HOPS = 3
_P_PERCLOS_OPENING_MAX = 4
_P_WARMUP_S = 5
_P_CONFIDENCE_MIN = 6
_P_MAX_GAP_S = 7
_P_SACCADE_VELOCITY = 8     # rad/s
_P_SACCADE_MIN_S = 9
_P_SACCADE_MAX_S = 10
_P_SACCADE_MIN_AMPLITUDE = 11  # rad
_P_SACCADE_MIN_RATE_HZ = 12
_P_BLINK_OPENING_MAX = 13
_P_BLINK_MIN_S = 14
_P_BLINK_MAX_S = 15
_P_BLINK_MIN_RATE_HZ = 16
_P_USE_FLAGS = 17
_P_LABEL_PURITY = 18
_P_WINDOW_S = 19
_P_LAG_S = 20
_P_RING_HOPS = 21
_P_MEASURE_HOPS = 22
_P_MAX_JUMP_S = 23
_P_CLOCK_RESET_S = 24
_P_SACCADE_NOISE_FACTOR = 25
_P_LOW = 26                 # N_FIELDS lower range bounds, then N_FIELDS upper bounds
_P_HIGH = _P_LOW + len(FIELDS)
_P_SIZE = _P_HIGH + len(FIELDS)


def _params(config):
    """The flat parameter vector of ``config`` for the kernels."""
    p = np.zeros(_P_SIZE)
    window_hops = round(config.window_s / config.hop_s)
    lag_hops = math.ceil(config.lag_s / config.hop_s)
    p[_P_HOP_S] = config.hop_s
    p[_P_WINDOW_HOPS] = window_hops
    p[_P_BLINK_HOPS] = round(config.blink_window_s / config.hop_s)
    p[_P_PERCLOS_HOPS] = round(config.perclos_window_s / config.hop_s)
    p[_P_PERCLOS_OPENING_MAX] = 1.0 - config.perclos_closure
    p[_P_WARMUP_S] = config.warmup_s
    p[_P_CONFIDENCE_MIN] = config.confidence_min
    p[_P_MAX_GAP_S] = config.max_gap_s
    p[_P_SACCADE_VELOCITY] = math.radians(config.saccade_velocity_deg_s)
    p[_P_SACCADE_MIN_S] = config.saccade_min_s
    p[_P_SACCADE_MAX_S] = config.saccade_max_s
    p[_P_SACCADE_MIN_AMPLITUDE] = math.radians(config.saccade_min_amplitude_deg)
    p[_P_SACCADE_MIN_RATE_HZ] = config.saccade_min_rate_hz
    p[_P_BLINK_OPENING_MAX] = config.blink_opening_max
    p[_P_BLINK_MIN_S] = config.blink_min_s
    p[_P_BLINK_MAX_S] = config.blink_max_s
    p[_P_BLINK_MIN_RATE_HZ] = config.blink_min_rate_hz
    p[_P_USE_FLAGS] = float(config.use_tracker_flags)
    p[_P_LABEL_PURITY] = config.label_purity
    p[_P_WINDOW_S] = config.window_s
    p[_P_LAG_S] = config.lag_s
    p[_P_RING_HOPS] = window_hops + lag_hops + 2
    p[_P_MEASURE_HOPS] = max(p[_P_BLINK_HOPS], p[_P_PERCLOS_HOPS])
    p[_P_MAX_JUMP_S] = config.max_jump_s
    p[_P_CLOCK_RESET_S] = config.clock_reset_s
    p[_P_SACCADE_NOISE_FACTOR] = config.saccade_noise_factor
    p[_P_LOW:_P_HIGH] = [RANGES[name][0] for name in FIELDS]
    p[_P_HIGH:_P_SIZE] = [RANGES[name][1] for name in FIELDS]
    return p
