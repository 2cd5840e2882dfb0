"""Deployment metrics: how a detector's published states meet the truth over a drive.

Deployment metrics judge the *smoothed state sequence* a detector publishes over a drive, one entry
per window (times ``t`` in seconds, normally the window ends):

- an **episode** is a maximal run of consecutive windows whose truth is 1; a window of truth 0 or
  -1 (unknown) ends it. Its onset is the time of its first window. The **detection delay** is the
  time from the onset to the first window of the episode whose state is 1 (0 when the state is
  already distracted at the onset), NaN when the state never turns distracted within the episode.
- a **false alarm** is a transition of the state from attentive to distracted (the state before the
  first window counts as attentive) at a window whose truth is 0. **False alarms per hour** divide
  their number by the attentive time: the number of truth-0 windows times the hop (the median
  positive spacing of ``t``). Windows of unknown truth count neither alarms nor time.

>>> detection_delays([0.5, 1.0, 1.5, 2.0, 2.5], [0, 1, 1, 1, 0], [0, 0, 0, 1, 1]).tolist()
[1.0]

They live beside the decision rule (not in the evaluation wing) because the demo and ``predict``
report them too, and those must not load scikit-learn or scipy for two numpy functions.
"""

import numpy as np

from ..._errors import SchemaError
from ._scores import binary_scores, paired_labels

__all__ = ["detection_delays", "false_alarms_per_hour", "agreement_summary"]

SECONDS_PER_HOUR = 3600.0


def detection_delays(t, y_true, y_state):
    """Seconds from each distraction onset to the first distracted state in that episode.

    Parameters
    ----------
    t : array-like of shape (n_windows,)
        Window times in seconds (normally the window ends), increasing.
    y_true : array-like of shape (n_windows,)
        Truth: 1 distracted, 0 attentive, -1 unknown. Episodes are maximal runs of 1.
    y_state : array-like of shape (n_windows,)
        Published state: 1 distracted, 0 attentive, -1 no decision.

    Returns
    -------
    ndarray of shape (n_episodes,)
        Delay in seconds per episode in time order, NaN for a missed episode.
    """
    t, y_true, y_state = _deployment(t, y_true, y_state)
    inside = y_true == 1
    edges = np.diff(np.r_[0, inside.astype(np.int8), 0])
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    delays = np.full(len(starts), np.nan)
    for k, (start, stop) in enumerate(zip(starts, stops)):
        hits = np.flatnonzero(y_state[start:stop] == 1)
        if hits.size:
            delays[k] = t[start + hits[0]] - t[start]
    return delays


def false_alarms_per_hour(t, y_true, y_state, grace_s=0.0):
    """Transitions into the distracted state while the truth is attentive, per attentive hour.

    Parameters
    ----------
    t : array-like of shape (n_windows,)
        Window times in seconds, increasing; their median positive spacing is the hop.
    y_true : array-like of shape (n_windows,)
        Truth: 1 distracted, 0 attentive, -1 unknown.
    y_state : array-like of shape (n_windows,)
        Published state: 1 distracted, 0 attentive, -1 no decision.
    grace_s : float, default=0.0
        Transitions less than ``grace_s`` seconds before a distraction episode's first window are
        not false: a window's truth is its majority label, so it turns distracted only half a
        window after a task starts, while a glance alert can fire from the task's first seconds
        (the evaluation passes half the window length).

    Returns
    -------
    float
        False alarms per hour of attentive time; NaN when there is no attentive window.
    """
    t, y_true, y_state = _deployment(t, y_true, y_state)
    spacing = np.diff(t)
    spacing = spacing[spacing > 0]
    attentive = y_true == 0
    if not attentive.any() or spacing.size == 0:
        return float("nan")
    onsets = (y_state == 1) & (np.r_[0, y_state[:-1]] != 1)  # from attentive or unknown
    starts = t[np.flatnonzero(np.diff(np.r_[0, (y_true == 1).astype(np.int8)]) == 1)]
    if grace_s > 0 and len(starts):
        at = np.searchsorted(starts, t, side="left")  # the next episode start at or after t
        next_start = np.r_[starts, np.inf][at]
        onsets &= next_start - t >= grace_s
    hours = attentive.sum() * float(np.median(spacing)) / SECONDS_PER_HOUR
    return float((onsets & attentive).sum() / hours)


def _deployment(t, y_true, y_state):
    t = np.asarray(t, dtype=np.float64).ravel()
    y_true, y_state = paired_labels(y_true, y_state, "y_true", "y_state")
    if t.shape != y_true.shape:
        raise SchemaError(f"t must have the shape of y_true {y_true.shape}, got {t.shape}")
    for name, values in (("y_true", y_true), ("y_state", y_state)):
        bad = ~np.isin(values, (-1, 0, 1))
        if bad.any():
            row = int(np.argmax(bad))
            raise SchemaError(f"{name}[{row}] must be 1, 0 or -1, got {values[row].item()!r}")
    if np.any(np.diff(t) < 0):
        row = int(np.argmax(np.diff(t) < 0)) + 1
        raise SchemaError(f"t must not decrease, got t[{row}] = {t[row].item()!r} after "
                          f"{t[row - 1].item()!r}")
    return t, y_true.astype(np.int8), y_state.astype(np.int8)


def agreement_summary(t, y_true, y_state, grace_s=0.0):
    """How published states meet the truth over one drive, as ``distractd predict`` reports it.

    Parameters
    ----------
    t, y_true, y_state, grace_s
        As for :func:`false_alarms_per_hour`.

    Returns
    -------
    dict
        ``windows`` with known truth, ``decided`` among them; the window metrics of
        :func:`~distractd.models.detectors.binary_scores` over those decided (``accuracy`` is the
        agreement; NaN where undefined); ``delays_s`` per distraction episode (NaN: missed) and
        ``false_alarms_per_hour``.
    """
    t, y_true, y_state = _deployment(t, y_true, y_state)
    scored = (y_true >= 0) & (y_state >= 0)
    return {"windows": int((y_true >= 0).sum()), "decided": int(scored.sum()),
            **binary_scores(y_true[scored], y_state[scored]),
            "delays_s": detection_delays(t, y_true, y_state).tolist(),
            "false_alarms_per_hour": false_alarms_per_hour(t, y_true, y_state, grace_s)}
