"""Agreement of eye events with human coders: event F1, per-sample Cohen's kappa, RTO and RTD.

Events are time spans ``(start_s, end_s)``. Two classifications are compared as Hooge et al. (2018,
doi:10.3758/s13428-017-0955-x) do: events are matched one to one by time overlap (each event of
the reference, in time order, takes the still unmatched test event that overlaps it most; spans
that only touch do not overlap), matched
pairs are hits, and event F1 is ``2 hits / (n_reference + n_test)``. The relative timing offset
(RTO) is the mean, and the relative timing deviation (RTD) the standard deviation, of the onset
(and offset) differences ``test - reference`` of the matched pairs. Pure numpy.
"""

import math

import numpy as np

__all__ = [
    "match_events", "event_agreement", "cohen_kappa", "spans_from_flags", "AgreementPool",
]


def _as_spans(spans, name):
    spans = np.asarray(spans, dtype=float).reshape(-1, 2)
    if not np.all(spans[:, 1] >= spans[:, 0]):
        bad = int(np.flatnonzero(~(spans[:, 1] >= spans[:, 0]))[0])
        raise ValueError(f"{name}[{bad}] must have end >= start, got {spans[bad].tolist()}")
    return spans[np.argsort(spans[:, 0], kind="stable")]


def match_events(reference, test):
    """Match events one to one by time overlap (a positive one: touching spans do not match).

    Parameters
    ----------
    reference, test : array-like of shape (n, 2)
        Event spans ``(start_s, end_s)``, in any order.

    Returns
    -------
    pairs : ndarray of shape (n_hits, 2), dtype int
        Indices ``(reference, test)`` of each matched pair into the spans sorted by start (a
        stable sort: already sorted spans keep their indices).
    """
    reference = _as_spans(reference, "reference")
    test = _as_spans(test, "test")
    used = np.zeros(len(test), dtype=bool)
    pairs = []
    ends = np.maximum.accumulate(test[:, 1]) if len(test) else test[:, 1]
    for i, (start, end) in enumerate(reference):
        lo = np.searchsorted(ends, start, side="left")     # first test event that may reach start
        hi = np.searchsorted(test[:, 0], end, side="right")
        if hi <= lo:
            continue
        candidates = np.arange(lo, hi)
        overlap = np.minimum(test[lo:hi, 1], end) - np.maximum(test[lo:hi, 0], start)
        keep = ~used[lo:hi] & (overlap > 0.0)
        if keep.any():
            j = candidates[keep][np.argmax(overlap[keep])]
            used[j] = True
            pairs.append((i, j))
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)


def event_agreement(reference, test):
    """Event F1, hits and timing of ``test`` events against ``reference`` events.

    Parameters
    ----------
    reference, test : array-like of shape (n, 2)
        Event spans ``(start_s, end_s)``.

    Returns
    -------
    dict
        ``f1`` (NaN when both are empty), ``hits``, ``n_reference``, ``n_test``, and ``rto_onset_s``,
        ``rtd_onset_s``, ``rto_offset_s``, ``rtd_offset_s`` (NaN without hits).
    """
    pool = AgreementPool()
    pool.add(reference, [], test, [])
    scores = pool.result()
    del scores["kappa"]
    return scores


def cohen_kappa(a, b):
    """Cohen's kappa of two boolean label sequences (NaN when chance agreement is total)."""
    a = np.asarray(a, dtype=bool)
    b = np.asarray(b, dtype=bool)
    if a.shape != b.shape:
        raise ValueError(f"label sequences must have the same shape, got {a.shape} and {b.shape}")
    if a.size == 0:
        return math.nan
    observed = np.mean(a == b)
    pa, pb = a.mean(), b.mean()
    expected = pa * pb + (1.0 - pa) * (1.0 - pb)
    return float((observed - expected) / (1.0 - expected)) if expected < 1.0 else math.nan


def spans_from_flags(t, flags, period_s):
    """Event spans of the runs of ``flags`` at sample times ``t``, each sample covering its period.

    Parameters
    ----------
    t : array-like of shape (n,)
        Sample times, seconds (increasing).
    flags : array-like of shape (n,)
        True inside an event (NaN counts as False).
    period_s : float
        Sample period, seconds: a run spans from half a period before its first sample to half a
        period after its last.

    Returns
    -------
    ndarray of shape (n_runs, 2)
    """
    t = np.asarray(t, dtype=float)
    inside = np.nan_to_num(np.asarray(flags, dtype=float)) > 0.5
    edges = np.diff(np.r_[0, inside.astype(np.int8), 0])
    first, last = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
    return np.column_stack([t[first] - 0.5 * period_s, t[last] + 0.5 * period_s])


class AgreementPool:
    """Event and per-sample agreement pooled over recordings (hits and counts summed, timing
    differences and labels concatenated), so that long recordings weigh more than short ones."""

    def __init__(self):
        self._counts = np.zeros(3, dtype=np.int64)   # hits, n_reference, n_test
        self._onset, self._offset, self._reference, self._test = [], [], [], []

    def add(self, reference, reference_flags, test, test_flags):
        """Add one recording: each classification's event spans and per-sample labels."""
        reference = _as_spans(reference, "reference")
        test = _as_spans(test, "test")
        pairs = match_events(reference, test)
        self._counts += (len(pairs), len(reference), len(test))
        self._onset.append(test[pairs[:, 1], 0] - reference[pairs[:, 0], 0])
        self._offset.append(test[pairs[:, 1], 1] - reference[pairs[:, 0], 1])
        self._reference.append(np.asarray(reference_flags, dtype=bool))
        self._test.append(np.asarray(test_flags, dtype=bool))

    def result(self):
        """``f1``, ``hits``, ``n_reference``, ``n_test``, ``kappa``, RTO and RTD (seconds)."""
        hits, n_reference, n_test = (int(v) for v in self._counts)
        onset = np.concatenate(self._onset) if self._onset else np.empty(0)
        offset = np.concatenate(self._offset) if self._offset else np.empty(0)
        total = n_reference + n_test
        nan = math.nan
        return {
            "f1": 2.0 * hits / total if total else nan, "hits": hits,
            "n_reference": n_reference, "n_test": n_test,
            "kappa": cohen_kappa(np.concatenate(self._reference), np.concatenate(self._test))
            if self._reference else nan,
            "rto_onset_s": float(onset.mean()) if hits else nan,
            "rtd_onset_s": float(onset.std()) if hits else nan,
            "rto_offset_s": float(offset.mean()) if hits else nan,
            "rtd_offset_s": float(offset.std()) if hits else nan,
        }
