"""Which recording a label file belongs to: its id and time span, in a sidecar beside the file.

A label file (an interval CSV ``start,end,label`` or a per-window CSV ``t_start,t_end,...,label``)
says nothing of the drive it labels, so another drive's file used to be taken without a word.
``distractd label`` and the review page now write ``<label file>.recording.json`` beside each
label file they write::

    {"format": "distractd-labels", "recording_id": "drive", "t_start_s": 0.0, "t_end_s": 599.98}

(the review page adds ``"reviewed": [[start_s, end_s], ...]``, the stretches an expert has
looked at, :func:`read_reviewed`) and ``train``, ``review`` and ``label`` check it against the
recording (:func:`check_label_file`):
another id, or a span more than :data:`SPAN_SLACK_S` away, is refused in one line naming both.
The sidecar keeps the CSV itself readable by every CSV tool. A legacy file without one is
accepted only when its labels cover the recording: from within :data:`COVER_SLACK_S` of its first
sample to within as much of its last (a shorter drive's labels do not).

A recording's id is its metadata's ``recording_id`` (simulated and Taamneh et al. drives have
one), else its file's stem, as :func:`~distractd.pipeline.read_recordings` gives it.

For many recordings at once (``train --cohort --labels``), :func:`labels_by_recording` matches
label files, or folders of them, to the recordings by the id in their sidecars (a legacy file by
its name, ``<recording_id>.<...>.csv``).
"""

import json
from pathlib import Path

import numpy as np

from ..._atomic import atomic_write
from ..._errors import ConfigError, SchemaError, unreadable
from ._recording import read_intervals

__all__ = [
    "LABEL_SIDECAR_SUFFIX", "recording_identity", "label_sidecar", "read_label_identity",
    "write_label_identity", "read_reviewed", "label_extent", "check_label_file", "check_overwrite",
    "labels_by_recording",
]

LABEL_SIDECAR_SUFFIX = ".recording.json"
"""Appended to a label file's name for its sidecar."""
SPAN_SLACK_S = 1.0
"""How far, seconds, a sidecar's span may lie from the recording's."""
COVER_SLACK_S = 30.0
"""How far, seconds, a legacy file's labels may stop short of the recording's ends (labelling
leaves low-quality windows out at the edges; another drive rarely ends within half a minute)."""
_FORMAT = "distractd-labels"


def recording_identity(recording, path=None):
    """``{"recording_id", "t_start_s", "t_end_s"}`` of a recording (read from ``path``).

    Examples
    --------
    >>> from distractd.pipeline import Recording, empty_block
    >>> block = empty_block(3); block[:, 0] = [2.0, 1.0, 3.5]
    >>> recording_identity(Recording(block), "d/drive.npz")
    {'recording_id': 'drive', 't_start_s': 1.0, 't_end_s': 3.5}
    """
    t = recording.t
    fallback = Path(path).stem if path is not None else ""
    return {"recording_id": str(recording.meta.get("recording_id", fallback)),
            "t_start_s": float(np.min(t)) if len(t) else 0.0,
            "t_end_s": float(np.max(t)) if len(t) else 0.0}


def label_sidecar(labels_path):
    """The sidecar of a label file: ``<labels_path>.recording.json``."""
    labels_path = Path(labels_path)
    return labels_path.with_name(labels_path.name + LABEL_SIDECAR_SUFFIX)


def write_label_identity(labels_path, identity, reviewed=None):
    """Write the sidecar of ``labels_path`` naming the recording ``identity`` (and, from the
    review page, the ``reviewed`` stretches ``[[start_s, end_s], ...]``) atomically; return its
    path. A symbolic link in the sidecar's place is replaced, never followed."""
    sidecar = label_sidecar(labels_path)
    extra = {} if reviewed is None else {"reviewed": [[float(s), float(e)] for s, e in reviewed]}
    text = json.dumps({"format": _FORMAT, **identity, **extra}) + "\n"
    atomic_write(sidecar, lambda file: file.write(text.encode("utf-8")), binary=True)
    return sidecar


def read_reviewed(labels_path):
    """The stretches ``[[start_s, end_s], ...]`` the sidecar of ``labels_path`` marks reviewed
    (empty without a sidecar or the key).

    Raises
    ------
    SchemaError
        ``reviewed`` that is not a list of ``[start_s, end_s]`` with finite start < end.
    """
    if read_label_identity(labels_path) is None:
        return []
    sidecar = label_sidecar(labels_path)
    reviewed = json.loads(sidecar.read_text(encoding="utf-8")).get("reviewed", [])
    good = isinstance(reviewed, list) and all(
        isinstance(pair, list) and len(pair) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v)
                for v in pair) and pair[0] < pair[1] for pair in reviewed)
    if not good:
        raise SchemaError(f"{sidecar}: reviewed must be [[start_s, end_s], ...] with start < end, "
                          f"got {json.dumps(reviewed)[:200]}")
    return [[float(s), float(e)] for s, e in reviewed]


def read_label_identity(labels_path):
    """The recording a label file names in its sidecar, or None for a legacy file without one.

    Raises
    ------
    SchemaError
        A sidecar that is not the JSON object :func:`write_label_identity` writes.
    """
    sidecar = label_sidecar(labels_path)
    if not sidecar.exists():
        return None
    try:
        document = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise unreadable(sidecar, exc, SchemaError) from None
    except ValueError as exc:
        raise SchemaError(f"{sidecar}: not JSON ({exc})") from None
    if not (isinstance(document, dict) and document.get("format") == _FORMAT
            and isinstance(document.get("recording_id"), str)
            and all(isinstance(document.get(k), (int, float)) and not isinstance(document[k], bool)
                    and np.isfinite(document[k]) for k in ("t_start_s", "t_end_s"))):
        raise SchemaError(f"{sidecar}: must be {{\"format\": \"{_FORMAT}\", \"recording_id\": "
                          f"str, \"t_start_s\": number, \"t_end_s\": number}}, got "
                          f"{json.dumps(document)[:200]}")
    return {key: document[key] for key in ("recording_id", "t_start_s", "t_end_s")}


def label_extent(kind, value):
    """First and last time, seconds, that labels read by
    :func:`~distractd.models.detectors.read_labels` reach (None when they hold no row)."""
    if kind == "intervals":
        return (min(s for s, _, _ in value), max(e for _, e, _ in value)) if value else None
    t_end = np.asarray(value[0])
    return (float(t_end.min()), float(t_end.max())) if len(t_end) else None


def check_label_file(labels_path, identity, extent):
    """Refuse the labels of another recording.

    Parameters
    ----------
    labels_path : str or Path
    identity : dict
        The recording's :func:`recording_identity`.
    extent : (float, float) or None
        :func:`label_extent` of the file's labels.

    Returns
    -------
    str
        ``"sidecar"`` (the file names the recording) or ``"legacy"`` (no sidecar; it covers the
        recording).

    Raises
    ------
    SchemaError
        One line naming both recordings, or the span a legacy file lacks.
    """
    mine = _described(identity)
    if check_overwrite(labels_path, identity):
        return "sidecar"
    first, last = extent if extent is not None else (np.inf, -np.inf)
    if first > identity["t_start_s"] + COVER_SLACK_S or last < identity["t_end_s"] - COVER_SLACK_S:
        reach = "no labels" if extent is None else f"labels over {first:.1f}-{last:.1f} s"
        raise SchemaError(f"{labels_path}: {reach} do not cover {mine}, and the file names no "
                          f"recording ({label_sidecar(labels_path).name} is missing): are these "
                          f"the labels of another drive?")
    return "legacy"


def check_overwrite(labels_path, identity):
    """Refuse a label file whose sidecar names another recording (e.g. before writing over it);
    return whether it has a sidecar.

    Raises
    ------
    SchemaError
        One line naming both recordings.
    """
    theirs = read_label_identity(labels_path)
    if theirs is not None and (theirs["recording_id"] != identity["recording_id"] or any(
            abs(theirs[k] - identity[k]) > SPAN_SLACK_S for k in ("t_start_s", "t_end_s"))):
        raise SchemaError(f"{labels_path}: labels of {_described(theirs)}, not of "
                          f"{_described(identity)}: give this recording's labels")
    return theirs is not None


def labels_by_recording(paths, identities):
    """The interval labels of each recording, from label files and folders of them.

    Parameters
    ----------
    paths : sequence of str or Path
        Label files, or folders whose ``.csv`` files are all label files.
    identities : sequence of dict
        :func:`recording_identity` of each recording; ids must be unique.

    Returns
    -------
    dict
        ``recording_id -> (path, [(start_s, end_s, label), ...])`` for the recordings with a
        file. Where a recording has several (``distractd label``'s per-window CSV beside its
        interval CSV), the interval CSV is taken: the one the review page corrects.

    Raises
    ------
    ConfigError
        Repeated recording ids, a file matching none of the recordings, or several interval
        CSVs, or only a per-window CSV, for one recording (one line naming them).
    SchemaError
        A file of another recording's span, or a legacy file that does not cover its recording.
    """
    by_id = {identity["recording_id"]: identity for identity in identities}
    if len(by_id) < len(identities):
        ids = [identity["recording_id"] for identity in identities]
        raise ConfigError(f"labels: the inputs repeat recording ids "
                          f"{sorted({i for i in ids if ids.count(i) > 1})}, so label files "
                          f"cannot be matched to them")
    files = []
    for path in map(Path, paths):
        if not path.exists():
            raise ConfigError(f"labels {path}: no such file or folder")
        files += (sorted(f for f in path.iterdir() if f.suffix.lower() == ".csv" and f.is_file())
                  if path.is_dir() else [path])
    candidates = {}
    for file in files:
        named = read_label_identity(file)
        if named is not None:
            recording_id = named["recording_id"]
        else:  # a legacy file: by its name, the longest id it starts with
            recording_id = max((r for r in by_id if file.name.startswith(r + ".")), key=len,
                               default=None)
        if recording_id not in by_id:
            raise ConfigError(f"labels {file}: " + (
                f"labels of recording {recording_id!r}" if named else "its name starts with no "
                f"recording id and it has no {LABEL_SIDECAR_SUFFIX} sidecar") + f", none of the "
                f"{len(by_id)} input recordings")
        candidates.setdefault(recording_id, []).append(file)
    found = {}
    for recording_id, files in candidates.items():
        intervals = [file for file in files if _is_interval_csv(file)]
        if len(intervals) != 1:
            raise ConfigError(f"labels for recording {recording_id!r}: one interval CSV "
                              f"(start,end,label) expected, got {len(intervals)} among "
                              f"{[str(f) for f in files]}")
        value = read_intervals(intervals[0])
        check_label_file(intervals[0], by_id[recording_id], label_extent("intervals", value))
        found[recording_id] = (intervals[0], value)
    return found


def _is_interval_csv(path):
    """Whether a CSV's header holds start, end and label."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as file:
            header = {name.strip() for name in file.readline().split(",")}
    except (OSError, UnicodeDecodeError) as exc:
        raise unreadable(path, exc, SchemaError) from None
    return {"start", "end", "label"} <= header


def _described(identity):
    return (f"recording {identity['recording_id']!r} ({identity['t_start_s']:.1f}-"
            f"{identity['t_end_s']:.1f} s)")
