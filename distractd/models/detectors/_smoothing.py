"""Decision smoothing for continuous use: hysteresis or minimum dwell (DESIGN §4.6).

A detector scores every window (2 per second by default); publishing ``score > 0`` directly makes
the state flicker near the boundary. :class:`DecisionSmoother` turns the score sequence into a
stable 0/1 state, causally, one block of windows at a time.
"""

import numpy as np
from numba import njit

from ..._errors import ConfigError
from ..._validation import Interval, Options, check_params

__all__ = ["DecisionSmoother", "smooth_decisions"]

_CONSTRAINTS = {
    "mode": Options(("hysteresis", "dwell")),
    "on": Interval(None, None),
    "off": Interval(None, None),
    "min_dwell_s": Interval(0, None, closed="left"),
}


@njit(cache=True)
def _smooth(t_end, scores, on, off, min_dwell_s, state, out):
    """Advance ``state = [current 0/1, time the opposite raw decision began (NaN: none)]``."""
    for i in range(scores.shape[0]):
        score = scores[i]
        current = state[0]
        if not np.isnan(score):
            if min_dwell_s > 0.0:
                raw = 1.0 if score > on else 0.0
                if raw == current:
                    state[1] = np.nan
                else:
                    if np.isnan(state[1]):
                        state[1] = t_end[i]
                    if t_end[i] - state[1] >= min_dwell_s:
                        state[0] = raw
                        state[1] = np.nan
            elif current == 0.0 and score > on:
                state[0] = 1.0
            elif current == 1.0 and score < off:
                state[0] = 0.0
        out[i] = np.int8(state[0])


class DecisionSmoother:
    """Causal 0/1 state from window scores (1 = distracted).

    ``"hysteresis"``: switch to 1 when a score exceeds ``on``, back to 0 when it falls below
    ``off`` (``off <= on``). ``"dwell"``: the thresholded decision ``score > on`` must persist for
    ``min_dwell_s`` seconds of window end times before the state follows it. NaN scores (windows
    without a decision) hold the state. The state starts at 0 (attentive).

    Parameters
    ----------
    mode : {"hysteresis", "dwell"}, default="hysteresis"
    on : float, default=0.0
        Upper threshold (hysteresis) or decision threshold (dwell), in score units.
    off : float, default=0.0
        Lower threshold of the hysteresis, in score units; ignored by "dwell".
    min_dwell_s : float, default=0.0
        Persistence required by "dwell", in seconds; ignored by "hysteresis".

    Examples
    --------
    >>> s = DecisionSmoother("hysteresis", on=0.5, off=-0.5)
    >>> s.update([0.5, 1.0, 1.5, 2.0], [0.2, 0.7, 0.0, -0.6]).tolist()
    [0, 1, 1, 0]
    """

    def __init__(self, mode="hysteresis", on=0.0, off=0.0, min_dwell_s=0.0):
        check_params({"mode": mode, "on": on, "off": off, "min_dwell_s": min_dwell_s},
                     _CONSTRAINTS, owner="smoothing")
        if mode == "hysteresis" and off > on:
            raise ConfigError(f"smoothing.off must be <= smoothing.on ({on}), got {off}")
        self.mode = mode
        self.on = float(on)
        self.off = float(off) if mode == "hysteresis" else float(on)
        self.min_dwell_s = float(min_dwell_s) if mode == "dwell" else 0.0
        self.state = np.array([0.0, np.nan])

    def update(self, t_end, scores):
        """Consume a block of windows; return their smoothed states.

        Parameters
        ----------
        t_end : array-like of shape (n_windows,)
            Window end times in seconds, increasing across calls.
        scores : array-like of shape (n_windows,)
            Detector scores (positive = distracted), NaN for no decision.

        Returns
        -------
        states : ndarray of shape (n_windows,), int8
            1 distracted, 0 attentive.
        """
        t_end = np.ascontiguousarray(t_end, dtype=np.float64)
        scores = np.ascontiguousarray(scores, dtype=np.float64)
        out = np.empty(len(scores), dtype=np.int8)
        _smooth(t_end, scores, self.on, self.off, self.min_dwell_s, self.state, out)
        return out


def smooth_decisions(t_end, scores, mode="hysteresis", on=0.0, off=0.0, min_dwell_s=0.0):
    """Batch smoothing of a whole score sequence: a fresh :class:`DecisionSmoother` fed once."""
    return DecisionSmoother(mode, on, off, min_dwell_s).update(t_end, scores)
