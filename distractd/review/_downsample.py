"""What a chart of ``n_px`` pixels needs of a long signal: min/max per pixel, runs merged per pixel.

A 1 h drive at 60 Hz has 216,000 samples per channel, two orders of magnitude more than a chart
has pixels. Per pixel-wide time bucket the envelope (minimum and maximum) draws the same picture as
every sample, so the page receives at most two points per pixel and channel; a view holding fewer
samples than that gets them all (full detail when zoomed in). Event runs (saccades, blinks, track
loss, glances) closer than a pixel to their neighbour merge, so a zoomed-out drive stays a few
thousand rectangles. Everything is vectorised over the view.
"""

import numpy as np

__all__ = ["envelope", "runs", "runs_in_view"]


def envelope(t, columns, t0, t1, n_px):
    """Samples of ``columns`` within ``[t0, t1]``: all of them, or per bucket their min and max.

    Parameters
    ----------
    t : ndarray of shape (n_samples,)
        Sample times in seconds, non-decreasing.
    columns : ndarray of shape (n_samples, n_channels)
        Values; NaN is missing.
    t0, t1 : float
        The view, seconds.
    n_px : int
        Width of the chart in pixels, i.e. the number of buckets.

    Returns
    -------
    x : ndarray of shape (n_points,)
        Times, seconds: the samples' own, or each bucket's start and middle (the minimum is drawn
        at the first, the maximum at the second).
    values : ndarray of shape (n_points, n_channels)
        NaN where a bucket has no sample or only missing values.
    full : bool
        True when every sample of the view is returned.

    Examples
    --------
    >>> t = np.arange(10.0)
    >>> x, v, full = envelope(t, t[:, None] ** 2, 0.0, 9.0, 2)
    >>> full, x.tolist(), v[:, 0].tolist()
    (False, [0.0, 2.25, 4.5, 6.75], [0.0, 16.0, 25.0, 81.0])
    """
    lo, hi = np.searchsorted(t, t0, side="left"), np.searchsorted(t, t1, side="right")
    if hi - lo <= 2 * n_px:
        return t[lo:hi], columns[lo:hi], True
    width = (t1 - t0) / n_px
    edges = np.searchsorted(t[lo:hi], t0 + width * np.arange(n_px + 1), side="left")
    edges[-1] = hi - lo
    counts = np.diff(edges)
    filled = counts > 0
    starts = edges[:-1][filled]
    block = columns[lo:hi]
    with np.errstate(invalid="ignore"):
        low = np.fmin.reduceat(block, starts, axis=0)
        high = np.fmax.reduceat(block, starts, axis=0)
    values = np.full((n_px, 2, columns.shape[1]), np.nan)
    values[filled, 0], values[filled, 1] = low, high
    bucket = t0 + width * np.arange(n_px)
    x = np.stack([bucket, bucket + 0.5 * width], axis=1)
    return x.ravel(), values.reshape(2 * n_px, columns.shape[1]), False


def runs(t, mask, period_s):
    """``(start_s, end_s)`` of the runs of True in ``mask`` over the sorted times ``t``.

    A run ends one sample period after its last sample, so a single flagged sample has a width.

    Examples
    --------
    >>> runs(np.arange(6.0), np.array([0, 1, 1, 0, 0, 1], bool), 1.0).tolist()
    [[1.0, 3.0], [5.0, 6.0]]
    """
    edges = np.flatnonzero(np.diff(np.r_[0, np.asarray(mask, np.int8), 0]))
    first, last = edges[::2], edges[1::2] - 1
    return np.stack([t[first], t[last] + period_s], axis=1) if first.size else np.empty((0, 2))


def runs_in_view(spans, t0, t1, n_px):
    """The runs of ``spans`` that meet ``[t0, t1]``, neighbours closer than a pixel merged.

    Parameters
    ----------
    spans : ndarray of shape (n_runs, 2)
        ``(start_s, end_s)`` rows in time order, not overlapping.
    t0, t1 : float
        The view, seconds.
    n_px : int
        Chart width in pixels.

    Returns
    -------
    ndarray of shape (n_kept, 2)

    Examples
    --------
    >>> spans = np.array([[0.0, 1.0], [1.5, 2.0], [5.0, 6.0]])
    >>> runs_in_view(spans, 0.0, 10.0, 10).tolist()
    [[0.0, 2.0], [5.0, 6.0]]
    """
    meet = spans[(spans[:, 1] >= t0) & (spans[:, 0] <= t1)]
    if len(meet) < 2:
        return meet
    new = np.r_[True, meet[1:, 0] - meet[:-1, 1] >= (t1 - t0) / n_px]
    first = np.flatnonzero(new)
    return np.stack([meet[first, 0], np.maximum.reduceat(meet[:, 1], first)], axis=1)
