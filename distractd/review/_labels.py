"""The labels the review page edits: read, checked against the recording, saved atomically.

The page edits intervals ``(start_s, end_s, label)`` with label 1 (distracted) or 0 (attentive);
time outside every interval is unknown. They come from a label file — an interval CSV, or the
per-window CSV of ``distractd label`` (its ``confidence`` and ``cluster`` columns are kept for the
page) — read by :func:`~distractd.models.detectors.read_labels`, the reader of ``distractd train
--labels``; without a file, from the recording's own labels. A file matches the recording when
every interval lies within the recording's time span (one second of slack) and every per-window
row ends where a window of the recording ends.

A label file must also be the recording's by name: its sidecar ``<file>.recording.json`` names
the recording's id and span (:mod:`distractd.pipeline.formats._label_files`); a legacy file
without one must cover the recording.

Saving writes the interval CSV ``distractd train --labels`` reads: to a temporary file in the same
folder, flushed to disk, then moved over the target with :func:`os.replace`, so the target is at
every moment either the previous file or the new one; the previous :data:`GENERATIONS` files are
first kept as ``<target>.bak.1`` (the newest) to ``<target>.bak.5`` the same way, and the sidecar
is written beside it, with the stretches the expert marked reviewed (``"reviewed"``, read back
by :func:`~distractd.pipeline.formats.read_reviewed` when the file is opened again, so "next
low-confidence" keeps skipping them). A target that changed since the page loaded it (another tab
of the page or an editor saved it) is never overwritten (:class:`StaleLabels`).
"""

import csv
import hashlib
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._atomic import atomic_write
from .._errors import ConfigError, SchemaError
from ..models.clustering import WindowLabels
from ..models.detectors import read_labels
from ..pipeline import write_intervals
from ..pipeline.formats import (
    check_label_file, label_extent, read_reviewed, write_label_identity,
)

__all__ = ["LabelFile", "read_label_file", "save_path", "check_intervals", "check_reviewed",
           "save_intervals", "file_digest", "StaleLabels", "GENERATIONS"]

GENERATIONS = 5
"""Previous versions of a saved label file kept beside it."""

SPAN_SLACK_S = 1.0
"""How far, in seconds, an interval may reach beyond the recording's first and last sample."""
_T_END_TOLERANCE_S = 1e-6   # the tolerance of ``distractd train --labels`` for per-window rows


@dataclass
class LabelFile:
    """Labels read from a file and matched to a recording's windows.

    Attributes
    ----------
    intervals : list of (float, float, int)
        ``(start_s, end_s, label)``, label 1 or 0.
    kind : {"intervals", "windows"}
        The file's form.
    confidence : ndarray of shape (n_windows,) or None
        Clustering confidence per window of the recording (per-window files that have it), NaN
        where the file has none.
    cluster : ndarray of shape (n_windows,) or None
        Cluster per window (-1 where none), likewise.
    reviewed : list of [float, float]
        The stretches marked reviewed in the file's sidecar.
    """

    intervals: list
    kind: str
    confidence: np.ndarray = None
    cluster: np.ndarray = None
    reviewed: list = field(default_factory=list)


class StaleLabels(ConfigError):
    """The file a save would replace changed since the page loaded it."""


def save_path(recording_path, labels_path=None, kind=None):
    """The interval CSV the page saves to.

    The label file itself when it is an interval CSV; ``<stem>.intervals.csv`` beside a
    per-window CSV (the name ``distractd label`` gives its interval file); without a label file,
    ``<recording stem>.labels.intervals.csv`` beside the recording.

    Examples
    --------
    >>> save_path("d/drive.npz").as_posix(), save_path("d/drive.npz", "d/l.csv", "windows").name
    ('d/drive.labels.intervals.csv', 'l.intervals.csv')
    """
    if labels_path is None:
        recording_path = Path(recording_path)
        return recording_path.with_name(recording_path.stem + ".labels.intervals.csv")
    labels_path = Path(labels_path)
    if kind == "windows":
        return labels_path.with_name(labels_path.stem + ".intervals.csv")
    return labels_path


def read_label_file(path, t_span, windows, identity):
    """Read a label file and check it against the recording.

    Parameters
    ----------
    path : str or Path
    t_span : (float, float)
        The recording's first and last sample time, seconds.
    windows : Windows
        The recording's windows (per-window rows are matched to their ends).
    identity : dict
        The recording's :func:`~distractd.pipeline.formats.recording_identity`: the file's
        sidecar must name it, or a legacy file cover it.

    Returns
    -------
    LabelFile

    Raises
    ------
    SchemaError
        The file is malformed, or does not match the recording (naming the first row that does
        not).
    """
    kind, value = read_labels(path)
    check_label_file(path, identity, label_extent(kind, value))
    reviewed = read_reviewed(path)
    _check_span([(s, e, None) for s, e in reviewed], t_span, f"{path} reviewed")
    if kind == "intervals":
        _check_span(value, t_span, path)
        return LabelFile([(s, e, int(label)) for s, e, label in value], kind, reviewed=reviewed)
    t_end, labels = value
    rows = _window_rows(path, t_end, windows.t_end)
    n = len(windows)
    label = np.full(n, -1, dtype=np.int8)
    label[rows] = labels
    extra = _extra_columns(path)
    confidence = cluster = None
    if "confidence" in extra:
        confidence = np.full(n, np.nan)
        confidence[rows] = extra["confidence"]
    if "cluster" in extra:
        cluster = np.full(n, -1)
        cluster[rows] = np.nan_to_num(extra["cluster"], nan=-1).astype(int)
    intervals = WindowLabels(windows.t_start, windows.t_end, np.full(n, -1), label,
                             np.full(n, np.nan), "file", "file").intervals()
    return LabelFile(intervals, kind, confidence, cluster, reviewed)


def check_intervals(rows, t_span):
    """Edited intervals from the page as sorted ``(start_s, end_s, label)`` tuples.

    Parameters
    ----------
    rows : list
        ``[start_s, end_s, label]`` items, label 1 or 0, not overlapping.
    t_span : (float, float)
        The recording's first and last sample time, seconds.

    Raises
    ------
    ConfigError
        Naming the first bad row and its value.

    Examples
    --------
    >>> check_intervals([[5, 8, 0], [1, 2.5, 1]], (0.0, 10.0))
    [(1.0, 2.5, 1), (5.0, 8.0, 0)]
    """
    if not isinstance(rows, list):
        raise ConfigError(f"labels.intervals must be a list of [start, end, label], got "
                          f"{type(rows).__name__}")
    intervals = []
    for i, row in enumerate(rows):
        if not (isinstance(row, list) and len(row) == 3
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in row)):
            raise ConfigError(f"labels.intervals[{i}] must be [start_s, end_s, label], got {row!r}")
        start, end, label = float(row[0]), float(row[1]), row[2]
        if not (math.isfinite(start) and math.isfinite(end) and start < end):
            raise ConfigError(f"labels.intervals[{i}] needs finite start < end, got {row!r}")
        if label not in (0, 1):
            raise ConfigError(f"labels.intervals[{i}] label must be 1 or 0, got {label!r}")
        intervals.append((start, end, int(label)))
    intervals.sort()
    for (_, end, _), (start, _, _) in zip(intervals, intervals[1:]):
        if start < end:
            raise ConfigError(f"labels.intervals overlap: one ends at {end!r} s after the next "
                              f"starts at {start!r} s")
    _check_span(intervals, t_span, "labels.intervals", hint="")
    return intervals


def check_reviewed(rows, t_span):
    """Reviewed stretches from the page as sorted, merged ``[start_s, end_s]`` pairs.

    Raises
    ------
    ConfigError
        Naming the first bad row and its value.

    Examples
    --------
    >>> check_reviewed([[5, 8], [1, 2.5], [7, 9]], (0.0, 10.0))
    [[1.0, 2.5], [5.0, 9.0]]
    """
    if not isinstance(rows, list):
        raise ConfigError(f"labels.reviewed must be a list of [start, end], got "
                          f"{type(rows).__name__}")
    pairs = []
    for i, row in enumerate(rows):
        if not (isinstance(row, list) and len(row) == 2
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in row)
                and all(math.isfinite(v) for v in row) and row[0] < row[1]):
            raise ConfigError(f"labels.reviewed[{i}] must be [start_s, end_s] with finite "
                              f"start < end, got {row!r}")
        pairs.append([float(row[0]), float(row[1])])
    _check_span([(s, e, None) for s, e in pairs], t_span, "labels.reviewed", hint="")
    merged = []
    for start, end in sorted(pairs):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def save_intervals(intervals, path, loaded_digest, identity, reviewed=None):
    """Write ``intervals`` to ``path`` atomically, keeping :data:`GENERATIONS` previous files.

    Parameters
    ----------
    intervals : list of (float, float, int)
    path : str or Path
    loaded_digest : str or None
        :func:`file_digest` of ``path`` when the page's labels were loaded or last saved (None:
        there was no file).
    identity : dict
        The recording's identity, written to the sidecar.
    reviewed : list of [float, float] or None, default=None
        The stretches marked reviewed, written to the sidecar too.

    Returns
    -------
    backup : Path or None
        The newest kept generation, when there was a previous file.
    digest : str
        :func:`file_digest` of the file written.

    Raises
    ------
    StaleLabels
        ``path`` changed since it was loaded: nothing is written.
    """
    path = Path(path)
    if file_digest(path) != loaded_digest:
        raise StaleLabels(f"labels: {path} changed since this page loaded it (another page or "
                          f"an editor saved it): not saved over; reload the page to start from "
                          f"it")
    backup = None
    if path.exists():
        for generation in range(GENERATIONS - 1, 0, -1):
            older = _generation(path, generation)
            if older.exists():
                os.replace(older, _generation(path, generation + 1))
        backup = _generation(path, 1)
        atomic_write(backup, lambda file: file.write(path.read_bytes()), binary=True)
    atomic_write(path, lambda file: write_intervals(intervals, file), binary=False)
    write_label_identity(path, identity, reviewed)
    return backup, file_digest(path)


def file_digest(path):
    """SHA-256 of a file's bytes, None when there is no file."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def _generation(path, n):
    """The ``n``-th newest kept version of ``path``: ``<path>.bak.<n>``."""
    return path.with_name(f"{path.name}.bak.{n}")


def _check_span(intervals, t_span, source, hint=": are these the labels of another drive?"):
    first, last = t_span
    for i, (start, end, _) in enumerate(intervals):
        if start < first - SPAN_SLACK_S or end > last + SPAN_SLACK_S:
            raise SchemaError(f"{source}: interval {i + 1} ({start!r}-{end!r} s) lies outside "
                              f"the recording ({first:.3f}-{last:.3f} s){hint}")


def _window_rows(path, t_end, window_t_end):
    """The window of the recording each per-window row belongs to (by its end time)."""
    if len(window_t_end) < 2:
        raise SchemaError(f"{path}: the recording has {len(window_t_end)} window(s), the file "
                          f"{len(t_end)} window rows")
    at = np.clip(np.searchsorted(window_t_end, t_end), 1, len(window_t_end) - 1)
    at = np.where(np.abs(window_t_end[at - 1] - t_end) <= np.abs(window_t_end[at] - t_end),
                  at - 1, at)
    off = np.abs(window_t_end[at] - t_end) > _T_END_TOLERANCE_S
    if off.any():
        row = int(np.argmax(off))
        raise SchemaError(f"{path}:{row + 2}: t_end {float(t_end[row])!r} s is no window end of "
                          f"the recording (windows end at {float(window_t_end[0])!r} .. "
                          f"{float(window_t_end[-1])!r} s every "
                          f"{float(np.median(np.diff(window_t_end))):.3g} s): are these the "
                          f"labels of another drive?")
    return at


def _extra_columns(path):
    """The ``confidence`` and ``cluster`` columns of a per-window CSV, where it has them."""
    with open(path, newline="", encoding="utf-8-sig") as file:
        reader = csv.DictReader(file)
        names = [name for name in ("confidence", "cluster") if name in (reader.fieldnames or ())]
        values = {name: [] for name in names}
        for line, row in enumerate(reader, start=2):
            for name in names:
                text = row[name].strip()
                try:
                    values[name].append(float(text) if text else math.nan)
                except ValueError:
                    raise SchemaError(f"{path}:{line}: {name} must be a number, got "
                                      f"{text!r}") from None
    return {name: np.array(column) for name, column in values.items()}
