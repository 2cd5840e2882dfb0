"""Recordings: samples with their original timing, per-sample labels and metadata, on disk.

Three file forms, chosen by the file's extension wherever a recording is read or written:

- **binary** (any extension but ``.csv`` and ``.parquet``): a numpy ``.npz`` archive holding ``samples`` (the
  block, float64, every sample as recorded, duplicates and jitter included), ``labels`` (int8 per
  sample: 1 distracted, 0 attentive, -1 unknown), ``fields`` (the column names) and ``header`` (UTF-8
  JSON: format name and version, metadata). It is lossless and read with ``allow_pickle=False``.
  It is written uncompressed: tracker noise leaves deflate little to take (a simulated 60 Hz
  drive shrinks by about 17 %) for 50 times the writing time; a compressed ``.npz`` reads alike.
- **CSV**: a header row of canonical field names (any subset, any order, ``t`` required) and an
  optional ``label`` column (``1``, ``0`` or empty for unknown); empty cells are missing values.
  Metadata does not survive CSV.
- **Parquet** (``.parquet``): one row per sample, one column per field, the labels and the binary
  form's header in the schema metadata; lossless, and readable by the tools fleet data lives in
  (:mod:`._parquet`). A Parquet file from another tool is read like a CSV.

Labels convert to and from intervals ``(start_s, end_s, label)``, half-open ``[start, end)``.
"""

import csv
import json
import math
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..._errors import RecordingError, SchemaError, unreadable
from ._parquet import read_columns, write_columns
from ._schema import FIELD_INDEX, FIELDS, N_FIELDS, block_from_columns

__all__ = [
    "Recording", "read_recording", "write_recording", "read_csv", "write_csv",
    "label_intervals", "labels_from_intervals", "read_intervals", "write_intervals", "describe",
]

FORMAT_NAME = "distractd-recording"
FORMAT_VERSION = 1
UNKNOWN = -1


@dataclass
class Recording:
    """A recorded (or simulated) drive of one stream.

    Parameters
    ----------
    samples : ndarray of shape (n_samples, N_FIELDS)
        The canonical block, rows in arrival order (timestamps are not required to be sorted:
        a recording keeps what the tracker delivered).
    labels : ndarray of shape (n_samples,), dtype int8, default=all -1
        1 distracted, 0 attentive, -1 unknown.
    meta : dict
        JSON-serialisable metadata: ``driver_id``, ``rate_hz`` (nominal), ``source``, ``seed``, ...
    """

    samples: np.ndarray
    labels: np.ndarray = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        self.samples = np.ascontiguousarray(self.samples, dtype=np.float64)
        if self.samples.ndim != 2 or self.samples.shape[1] != N_FIELDS:
            raise SchemaError(f"samples must have shape (n_samples, {N_FIELDS}), "
                              f"got {self.samples.shape}")
        if self.labels is None:
            self.labels = np.full(len(self.samples), UNKNOWN, dtype=np.int8)
        self.labels = np.asarray(self.labels, dtype=np.int8)
        if self.labels.shape != (len(self.samples),):
            raise SchemaError(f"labels must have shape ({len(self.samples)},), "
                              f"got {self.labels.shape}")
        bad = ~np.isin(self.labels, (UNKNOWN, 0, 1))
        if bad.any():
            row = int(np.argmax(bad))
            raise SchemaError(f"labels[{row}] must be 1, 0 or -1, got {self.labels[row]}")

    @property
    def t(self):
        """Timestamps in seconds."""
        return self.samples[:, 0]

    def column(self, name):
        """The values of one canonical field."""
        return self.samples[:, FIELD_INDEX[name]]

    @property
    def n_samples(self):
        return len(self.samples)

    @property
    def duration_s(self):
        """Last minus first timestamp, in seconds."""
        return float(self.t[-1] - self.t[0]) if self.n_samples > 1 else 0.0

    @property
    def fields_present(self):
        """Names of the fields with at least one finite value."""
        finite = np.isfinite(self.samples).any(axis=0)
        return tuple(name for name, ok in zip(FIELDS, finite) if ok)

    def label_intervals(self):
        """The labels as half-open intervals; see :func:`label_intervals`."""
        return label_intervals(self.t, self.labels)


def read_recording(path, backwards_ok=False):
    """Read a recording: ``.csv`` as CSV, ``.parquet`` as Parquet, anything else as binary.

    A file without a distractd header (CSV, Parquet of another tool) whose timestamp decreases is
    refused, naming the row, unless ``backwards_ok``: ``distractd info`` reads it so, to count
    backwards steps among the tracker's imperfections (:func:`describe`)."""
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            return read_csv(path, backwards_ok)
        if suffix == ".parquet":
            return _read_parquet(path, backwards_ok)
        return _read_binary(path)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise unreadable(path, exc, RecordingError) from None


def _read_binary(path):
    with open(path, "rb") as file:
        if not file.read(4).startswith(b"PK"):  # else numpy tries a pickle, hints allow_pickle
            raise RecordingError(f"{path}: not a distractd recording (the binary form is an .npz "
                                 f"archive)")
        file.seek(0)
        try:
            with np.load(file, allow_pickle=False) as archive:
                missing = {"samples", "labels", "fields", "header"} - set(archive.files)
                if missing:
                    raise RecordingError(f"{path}: not a distractd recording (missing "
                                         f"{sorted(missing)})")
                header = json.loads(archive["header"].tobytes().decode("utf-8"))
                fields, samples, labels = archive["fields"], archive["samples"], archive["labels"]
        except (ValueError, EOFError, zipfile.BadZipFile) as exc:
            if isinstance(exc, RecordingError):
                raise
            raise RecordingError(f"{path}: unreadable recording ({exc})") from exc
    return _with_header(path, header, [str(f) for f in fields], samples, labels)


def _read_parquet(path, backwards_ok=False):
    fields, data, labels, header = read_columns(path)
    if header is not None:
        return _with_header(path, header, fields, data, labels)
    try:  # written by another tool: checked like a CSV
        block = block_from_columns(fields, data)
    except SchemaError as exc:
        raise SchemaError(f"{path}: {exc}") from None
    problem = _time_problem(block[:, 0], backwards_ok)
    if problem:
        raise SchemaError(f"{path}: row {problem[0]}: {problem[1]}")
    return Recording(block, labels, {"source": str(path)})


def _with_header(path, header, fields, samples, labels):
    """The recording of a file with a distractd header, after checking its format and version."""
    if not isinstance(header, dict):
        raise RecordingError(f"{path}: header must be a JSON object, got {type(header).__name__}")
    if header.get("format") != FORMAT_NAME:
        raise RecordingError(f"{path}: header.format must be {FORMAT_NAME!r}, "
                             f"got {header.get('format')!r}")
    if header.get("version") != FORMAT_VERSION:
        raise RecordingError(f"{path}: header.version {header.get('version')!r} is not supported "
                             f"(this distractd reads version {FORMAT_VERSION})")
    try:
        block = block_from_columns(fields, samples)
    except SchemaError as exc:
        raise RecordingError(f"{path}: {exc}") from exc
    return Recording(block, labels, header.get("meta", {}))


def write_recording(recording, path):
    """Write a recording: ``.csv`` paths as CSV, ``.parquet`` as Parquet, anything else binary."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        write_csv(recording, path)
        return
    document = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "meta": recording.meta}
    if suffix == ".parquet":
        write_columns(path, FIELDS, recording.samples, recording.labels, document)
        return
    header = json.dumps(document).encode("utf-8")
    with open(path, "wb") as file:  # a file object stops numpy appending ".npz"
        np.savez(file, samples=recording.samples, labels=recording.labels,
                 fields=np.array(FIELDS), header=np.frombuffer(header, dtype=np.uint8))


def read_csv(path, backwards_ok=False):
    """Read a CSV recording, naming the line, column and cell of the first malformed value (a
    decreasing timestamp too, unless ``backwards_ok``: see :func:`read_recording`)."""
    path = Path(path)
    with open(path, newline="", encoding="utf-8-sig") as file:  # Excel's BOM
        reader = csv.reader(file)
        try:
            header = [name.strip() for name in next(reader)]
        except StopIteration:
            raise SchemaError(f"{path}: empty file, expected a header row") from None
        fields = [name for name in header if name != "label"]
        if "t" not in fields:
            raise SchemaError(f"{path}: header must name a 't' column, got {header}")
        label_at = header.index("label") if "label" in header else None
        value_at = [i for i, name in enumerate(header) if name != "label"]
        rows, labels = [], []
        for line, cells in enumerate(reader, start=2):
            if not cells:
                continue
            if len(cells) != len(header):
                raise SchemaError(f"{path}:{line}: expected {len(header)} cells, got {len(cells)}")
            rows.append([_cell(path, line, header[i], cells[i]) for i in value_at])
            labels.append(UNKNOWN if label_at is None else _label(path, line, cells[label_at]))
    data = np.array(rows, dtype=np.float64).reshape(len(rows), len(fields))
    try:
        block = block_from_columns(fields, data)
    except SchemaError as exc:
        raise SchemaError(f"{path}: {exc}") from None
    problem = _time_problem(block[:, 0], backwards_ok)
    if problem:
        raise SchemaError(f"{path}:{problem[0] + 2}: {problem[1]}")
    return Recording(block, np.array(labels, dtype=np.int8), {"source": str(path)})


def _time_problem(t, backwards_ok=False):
    """``(row, complaint)`` of the first empty or (unless ``backwards_ok``) decreasing timestamp
    of a file without a distractd header (CSV, Parquet from another tool), or None."""
    if np.isnan(t).any():
        return int(np.argmax(np.isnan(t))), "t must not be empty"
    if backwards_ok:
        return None
    backwards = np.flatnonzero(np.diff(t) < 0)
    if backwards.size:
        row = int(backwards[0]) + 1
        return row, f"t must not decrease, got {float(t[row])!r} after {float(t[row - 1])!r}"
    return None


def write_csv(recording, path):
    """Write the present fields and, when any sample is labelled, a ``label`` column."""
    present = [FIELD_INDEX[name] for name in recording.fields_present] or [0]
    with_labels = bool((recording.labels != UNKNOWN).any())
    with open(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow([FIELDS[i] for i in present] + (["label"] if with_labels else []))
        for values, label in zip(recording.samples[:, present].tolist(), recording.labels.tolist()):
            row = ["" if math.isnan(v) else repr(v) for v in values]
            if with_labels:
                row.append("" if label == UNKNOWN else str(label))
            writer.writerow(row)


def _cell(path, line, name, text):
    """A CSV cell as a number: ASCII only (``float`` also reads other scripts' digits), NaN
    when empty."""
    text = text.strip()
    if not text:
        return math.nan
    try:
        if text.isascii():
            return float(text)
    except ValueError:
        pass
    raise SchemaError(f"{path}:{line}: {name} must be a number, got {text[:40]!r}"
                      + ("" if text.isascii() else " (ASCII digits only)"))


def _label(path, line, text):
    text = text.strip()
    if text in ("", "-1"):
        return UNKNOWN
    if text in ("0", "1"):
        return int(text)
    raise SchemaError(f"{path}:{line}: label must be 1, 0 or empty, got {text!r}")


def label_intervals(t, labels):
    """Runs of equal known labels as ``[(start_s, end_s, label), ...]``, half-open.

    A run ends where the next run (of any label, unknown included) starts; the last run ends one
    median sample period after the last sample, so :func:`labels_from_intervals` gives the labels back.
    """
    t = np.asarray(t, dtype=np.float64)
    labels = np.asarray(labels)
    if len(t) == 0:
        return []
    starts = np.flatnonzero(np.r_[True, labels[1:] != labels[:-1]])
    period = float(np.median(np.diff(t))) if len(t) > 1 else 0.0
    ends = np.r_[t[starts[1:]], t[-1] + period]
    return [(float(t[s]), float(e), int(labels[s]))
            for s, e in zip(starts, ends) if labels[s] != UNKNOWN]


def labels_from_intervals(t, intervals):
    """Per-sample labels (int8, -1 outside every interval) from half-open intervals."""
    t = np.asarray(t, dtype=np.float64)
    labels = np.full(len(t), UNKNOWN, dtype=np.int8)
    for start, end, label in intervals:
        if label not in (0, 1):
            raise SchemaError(f"interval ({start}, {end}) label must be 1 or 0, got {label!r}")
        labels[(t >= start) & (t < end)] = label
    return labels


def read_intervals(path):
    """Read ``start,end,label`` rows (header required) into a list of intervals."""
    path = Path(path)
    try:  # a missing, folder or non-UTF-8 file: one clear line
        with open(path, newline="", encoding="utf-8-sig") as file:  # Excel's BOM
            reader = csv.DictReader(file)
            fieldnames, rows = reader.fieldnames, list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise unreadable(path, exc, SchemaError) from None
    if fieldnames is None or not {"start", "end", "label"} <= set(fieldnames):
        raise SchemaError(f"{path}: header must be start,end,label, got {fieldnames}")
    intervals = []
    for line, row in enumerate(rows, start=2):
        start, end = (_cell(path, line, name, row[name]) for name in ("start", "end"))
        label = _label(path, line, row["label"])
        if math.isnan(start) or math.isnan(end) or not end > start:
            raise SchemaError(f"{path}:{line}: need start < end, got {row['start']!r}, "
                              f"{row['end']!r}")
        if label != UNKNOWN:
            intervals.append((start, end, label))
    return intervals


def write_intervals(intervals, file):
    """Write intervals as ``start,end,label`` CSV to a path or text stream."""
    if isinstance(file, (str, Path)):
        with open(file, "w", newline="") as handle:
            write_intervals(intervals, handle)
        return
    writer = csv.writer(file)
    writer.writerow(["start", "end", "label"])
    for start, end, label in intervals:
        writer.writerow([repr(float(start)), repr(float(end)), int(label)])


def describe(recording, confidence_threshold=0.5, gap_factor=1.5):
    """A JSON-ready summary of a recording and the tracker imperfections found in it.

    The rate is measured (1 / median sample period). Imperfections: ``duplicates`` (zero period),
    ``backwards`` (negative period), ``gaps`` (periods over ``gap_factor`` median periods, i.e. dropped
    samples, with ``dropped_estimate`` the number of samples they would have held), ``jitter_ms``
    (standard deviation of the periods that are not gaps), ``track_loss_fraction`` (confidence below
    ``confidence_threshold`` or missing gaze) and each field's missing fraction. A duration or
    jitter beyond a float (timestamps near +-1e308) is None.
    """
    t = recording.t
    with np.errstate(over="ignore", invalid="ignore"):  # timestamps near 1e308 overflow to inf
        periods = np.diff(t)
    median = float(np.median(periods[periods > 0])) if (periods > 0).any() else math.nan
    gaps = (periods > gap_factor * median if math.isfinite(median)
            else np.zeros(len(periods), bool))
    regular = periods[(periods > 0) & ~gaps]
    with np.errstate(over="ignore", invalid="ignore"):
        jitter_ms = float(np.std(regular) * 1e3) if regular.size else math.nan
        duration_s = recording.duration_s
        n_label_intervals = len(recording.label_intervals())
    confidence = recording.column("confidence")
    gaze = recording.samples[:, FIELD_INDEX["gaze_r_yaw"]:FIELD_INDEX["gaze_l_pitch"] + 1]
    lost = (confidence < confidence_threshold) | np.isnan(gaze).all(axis=1)
    counts = {name: int((recording.labels == value).sum())
              for name, value in (("distracted", 1), ("attentive", 0), ("unknown", UNKNOWN))}
    present = recording.fields_present
    return {
        "samples": recording.n_samples,
        "duration_s": duration_s if math.isfinite(duration_s) else None,
        "rate_hz": 1.0 / median if math.isfinite(median) else None,
        "fields_present": list(present),
        "fields_missing": [name for name in FIELDS if name not in present],
        "labels": counts,
        "label_intervals": n_label_intervals,
        "imperfections": {
            "duplicates": int((periods == 0).sum()),
            "backwards": int((periods < 0).sum()),
            "gaps": int(gaps.sum()),
            "dropped_estimate": int(np.round(periods[gaps] / median - 1).sum()) if gaps.any() else 0,
            "jitter_ms": jitter_ms if math.isfinite(jitter_ms) else None,
            "track_loss_fraction": float(lost.mean()) if len(t) else 0.0,
            "missing_fraction": {name: float(np.isnan(recording.column(name)).mean())
                                 for name in present},
        },
        "meta": recording.meta,
    }
