"""One drive prepared for the review page: its signals, events, windows, detector and labels.

:func:`load_drive` runs the pipeline over the recording once (the same public functions as
``distractd events``, ``features`` and ``predict``) and keeps, in time order, what the page shows:

- per sample, in display units: gaze and head rotation (degrees), head position (cm), eyelid
  opening and pupil diameter, for the fields the recording has;
- runs of saccades, blinks and track loss (the pipeline's own event detection), glances away from
  the road by target, and the glance alerts;
- per window: quality, the recording's truth, the detector's score and state (with a model), the
  segments of the model's online segmenter prototypes, and any window feature on request;
- the labels being corrected (see :mod:`._labels`) and where they are saved. When that file
  exists already (corrections saved before), the page resumes from it rather than from the
  preliminary labels or the recording's own.

Bad input does not stop the page: a recording that cannot be read leaves only its message; a
model or label file that cannot be used is reported and left out, and the rest of the drive is
shown. Every problem is one line naming the file and what is wrong with it.

Low confidence, for the page's "next low-confidence window": the clustering confidence of the
per-window label file of ``distractd label`` (below 0.6 by default: nearer half-way between the
two clusters than to its own), or else the detector's margin ``|score - threshold|`` (below 0.5
score units by default), or else none.
"""

import dataclasses
import math
from pathlib import Path

import numpy as np

from .._errors import ConfigError, DistractdError
from .._json import json_ready
from ..pipeline import (
    FEATURE_NAMES, GLANCE_CLASSES, PipelineConfig, detect_events, detect_glances, extract_features,
    read_recording,
)
from ..pipeline.formats import recording_identity
from ..models.detectors import DecisionRule, load_model, predict_windows
from ..models.segmentation import SegmentPrototypes
from ._downsample import envelope, runs, runs_in_view
from ._labels import (
    check_intervals, check_reviewed, file_digest, read_label_file, save_intervals, save_path,
)

__all__ = ["ReviewDrive", "load_drive", "PANELS", "GLANCES_AWAY"]

PANELS = (
    ("gaze", "gaze rotation (deg)", ("gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch"),
     math.degrees(1.0)),
    ("head", "head rotation (deg)", ("head_yaw", "head_pitch", "head_roll"), math.degrees(1.0)),
    ("position", "head position (cm)", ("head_x", "head_y", "head_z"), 100.0),
    ("eyelid", "eyelid opening (0..1)", ("eyelid_r", "eyelid_l"), 1.0),
    ("pupil", "pupil diameter (mm)", ("pupil_r", "pupil_l"), 1.0),
)
"""Sample charts: id, title, canonical fields, factor to the display unit."""
GLANCES_AWAY = ("off_road", "mirror", "instrument")
"""Glance classes drawn as glances away from the road."""
LOW_CONFIDENCE = {"clustering": 0.6, "detector margin": 0.5}
"""Default "low" bound of each confidence kind (see the module notes)."""


class ReviewDrive:
    """A drive ready for the page; build it with :func:`load_drive`.

    Attributes
    ----------
    path : Path
        The recording.
    errors : list of str
        Problems with the input, one line each (also printed on the console).
    save_to : Path or None
        Where saved labels go (None: saving is off, e.g. the label file did not match).
    identity : dict or None
        The recording's id and span, written beside saved labels.
    loaded_digest : str or None
        Digest of :attr:`save_to` as loaded or last saved (None: no file yet), the file
        :attr:`labels` are; the page sends it back with a save, which is refused when the file
        changed since (another tab of the page, or an editor, saved it).
    """

    def __init__(self, path, errors):
        self.path = Path(path)
        self.errors = errors
        self.save_to = None
        self.identity = None
        self.loaded_digest = None
        self.t = np.empty(0)
        self.panels = []
        self.columns = np.empty((0, 0))
        self.spans = {}
        self.alerts = []
        self.windows = None
        self.scores = self.states = self.confidence = self.cluster = None
        self.confidence_kind = None
        self.threshold = None
        self.model = None
        self.segments = []
        self.truth = []
        self.labels = []
        self.labels_source = None
        self.reviewed = []
        self.features_baseline = False

    @property
    def t_span(self):
        """First and last sample time, seconds."""
        return (float(self.t[0]), float(self.t[-1])) if len(self.t) else (0.0, 0.0)

    def summary(self):
        """Everything the page needs once: the drive, its windows, truth, labels and problems."""
        if self.windows is None:
            return {"name": self.path.name, "errors": self.errors}
        w = self.windows
        return {
            "name": self.path.name, "path": str(self.path), "errors": self.errors,
            "t0": self.t_span[0], "t1": self.t_span[1], "n_samples": int(len(self.t)),
            "panels": self.panels,
            "model": self.model, "threshold": self.threshold,
            "windows": {"t_start": json_ready(w.t_start, 4), "t_end": json_ready(w.t_end, 4),
                        "quality": json_ready(w.quality, 3), "score": json_ready(self.scores, 4),
                        "state": json_ready(self.states),
                        "confidence": json_ready(self.confidence, 4),
                        "cluster": json_ready(self.cluster)},
            "confidence_kind": self.confidence_kind,
            "low_confidence": LOW_CONFIDENCE.get(self.confidence_kind),
            "features_baseline": self.features_baseline,
            "features": [name for name, any_finite in
                         zip(FEATURE_NAMES, np.isfinite(w.X).any(axis=0)) if any_finite],
            "alerts": self.alerts, "segments": self.segments,
            "truth": self.truth, "labels": self.labels, "labels_source": self.labels_source,
            "reviewed": self.reviewed,
            "save_to": str(self.save_to) if self.save_to else None,
            "digest": self.loaded_digest,
            "glances_away": list(GLANCES_AWAY),
        }

    def view(self, t0, t1, n_px):
        """The samples and runs of ``[t0, t1]`` for a chart ``n_px`` pixels wide."""
        x, values, full = envelope(self.t, self.columns, t0, t1, n_px)
        series = {}
        column = 0
        for panel in self.panels:
            for name in panel["fields"]:
                series[name] = json_ready(values[:, column], 4)
                column += 1
        return {"t0": t0, "t1": t1, "full": full, "x": json_ready(x, 4), "series": series,
                "runs": {name: json_ready(runs_in_view(spans, t0, t1, n_px), 4)
                         for name, spans in self.spans.items()}}

    def feature(self, name):
        """One window feature's values, in window order."""
        if name not in FEATURE_NAMES:
            raise KeyError(name)
        return json_ready(self.windows.X[:, FEATURE_NAMES.index(name)], 5)

    def save(self, rows, reviewed, digest):
        """Check the page's intervals and reviewed stretches and write them to :attr:`save_to`
        (the stretches to its sidecar) over the file of ``digest``, the :attr:`loaded_digest`
        the page loaded or last saved; return a short report with the new digest.

        Raises
        ------
        StaleLabels
            The file changed since that page had it: nothing is written.
        """
        if self.save_to is None:
            raise ConfigError("labels: saving is off: " + "; ".join(self.errors))
        intervals = check_intervals(rows, self.t_span)
        reviewed = check_reviewed([] if reviewed is None else reviewed, self.t_span)
        backup, self.loaded_digest = save_intervals(intervals, self.save_to, digest,
                                                    self.identity, reviewed)
        self.labels = [list(row) for row in intervals]
        self.reviewed = reviewed
        return {"path": str(self.save_to), "backup": str(backup) if backup else None,
                "intervals": len(intervals), "reviewed": len(reviewed),
                "digest": self.loaded_digest}


def load_drive(path, labels=None, model=None, config=None, decision=None):
    """Read and prepare a drive for the page.

    Parameters
    ----------
    path : str or Path
        The recording (binary or CSV).
    labels : str or Path or None, default=None
        Labels to correct: an interval CSV or a per-window CSV (``distractd label``); None starts
        from the recording's own labels.
    model : str or Path or None, default=None
        A model artifact: adds the detector's score and state (through the daemon's decision rule)
        and, when it holds segment prototypes, the online segmenter's segments.
    config : PipelineConfig or None, default=None
        Pipeline settings; None takes the model's, else the defaults.
    decision : dict or None, default=None
        Keyword arguments of :class:`~distractd.models.detectors.DecisionRule`.

    Returns
    -------
    ReviewDrive
    """
    errors = []
    drive = ReviewDrive(path, errors)
    recording = (_attempt(errors, read_recording, path)
                 if _existing(errors, path, "recording") else None)
    if recording is None:
        return drive
    detector = (_attempt(errors, load_model, model)
                if model is not None and _existing(errors, model, "model") else None)
    if config is None:
        config = (PipelineConfig.from_dict(detector.pipeline_config) if detector is not None
                  else PipelineConfig())
    order = np.argsort(recording.t, kind="stable")
    t = recording.t[order]
    drive.t = t
    period = float(np.median(np.diff(t))) if len(t) > 1 else 0.0
    _add_samples(drive, recording, order)
    _add_events(drive, recording, config, order, period)
    if detector is not None:
        rule = DecisionRule(**(decision or {}))
        predicted = _attempt(errors, predict_windows, detector, recording, rule)
        if predicted is not None:
            drive.windows, drive.scores, drive.states = predicted
            drive.features_baseline = bool(detector.pipeline_config.get("baseline"))
            drive.threshold = rule.smoother.on
            drive.model = {"id": detector.model_id, "kind": detector.kind, "path": str(model)}
            drive.segments = _attempt(errors, _segments, detector, drive.windows) or []
    if drive.windows is None:
        drive.windows = extract_features(recording, config)
        drive.features_baseline = bool(config.baseline)
    if len(drive.windows) == 0:
        errors.append(f"{path}: no complete window (the recording spans "
                      f"{recording.duration_s:.1f} s, a window {config.window_s:g} s): no "
                      f"features, scores or per-window labels")
    drive.truth = [list(row) for row in recording.label_intervals()]
    drive.labels, drive.labels_source = drive.truth, "the recording's own labels"
    drive.identity = recording_identity(recording, path)
    _add_labels(drive, labels)
    if drive.confidence is not None:
        drive.confidence_kind = "clustering"
    elif drive.scores is not None:
        drive.confidence = np.abs(drive.scores - drive.threshold)
        drive.confidence_kind = "detector margin"
    return drive


def _add_labels(drive, labels):
    """The labels to correct and where they are saved: ``labels`` (or the recording's own), or
    the corrections saved before to where they would be saved, when that file exists."""
    errors = drive.errors
    found = None
    if labels is not None:
        found = (_attempt(errors, read_label_file, labels, drive.t_span, drive.windows,
                          drive.identity) if _existing(errors, labels, "labels") else None)
        if found is None:
            errors.append(f"labels {labels} not used: the labels row shows the recording's own "
                          f"labels, and saving is off so that the file is not overwritten")
            return
        drive.labels, drive.labels_source = [list(row) for row in found.intervals], str(labels)
        drive.confidence, drive.cluster = found.confidence, found.cluster
        drive.reviewed = found.reviewed
    save_to = save_path(drive.path, labels, found.kind if found else None)
    if save_to.exists() and save_to != (Path(labels) if labels is not None else None):
        saved = _attempt(errors, read_label_file, save_to, drive.t_span, drive.windows,
                         drive.identity)
        if saved is None:
            errors.append(f"corrected labels {save_to} not used and saving is off so that the "
                          f"file is not overwritten")
            return
        drive.labels = [list(row) for row in saved.intervals]
        drive.labels_source = f"{save_to} (the corrections saved before)"
        drive.reviewed = saved.reviewed
    drive.save_to = save_to
    drive.loaded_digest = file_digest(save_to)


def _attempt(errors, function, *args):
    """``function(*args)``, or None with the problem added to ``errors`` as one line."""
    try:
        return function(*args)
    except DistractdError as exc:
        errors.append(str(exc))
    except OSError as exc:
        errors.append(f"{exc.filename or args[0]}: {exc.strerror or exc}")
    return None


def _existing(errors, path, what):
    """Whether ``path`` is a file; if not, the problem is added to ``errors``."""
    if Path(path).is_file():
        return True
    errors.append(f"{what} {path}: {'not a file' if Path(path).exists() else 'no such file'}")
    return False


def _add_samples(drive, recording, order):
    """The sample charts of the fields the recording has, in display units."""
    present = set(recording.fields_present)
    columns = []
    for panel, title, fields, factor in PANELS:
        shown = [name for name in fields if name in present]
        if shown:
            drive.panels.append({"id": panel, "title": title, "fields": shown})
            columns += [recording.column(name)[order] * factor for name in shown]
    drive.columns = (np.column_stack(columns) if columns else np.empty((len(order), 0)))


def _add_events(drive, recording, config, order, period):
    """Runs of eye events, track loss and glances away; the glance alerts."""
    config = dataclasses.replace(config, baseline=False)  # per-sample outputs do not use it
    events = detect_events(recording, config)
    for name in ("saccade", "blink", "track_loss"):
        drive.spans[name] = runs(drive.t, getattr(events, name)[order] == 1.0, period)
    trace = detect_glances(recording, config)
    glance = trace.glance[order]
    for name in GLANCES_AWAY:
        drive.spans[name] = runs(drive.t, glance == GLANCE_CLASSES.index(name), period)
    drive.alerts = [[round(alert.t, 4), alert.kind] for alert in trace.alerts]


def _segments(detector, windows):
    """``[start_s, end_s, cluster, label]`` of the model's online-segmenter prototypes over the
    drive's windows (as ``distractd segment --model``); empty when the model has none."""
    if "segmenter" not in detector.extras or len(windows) == 0:
        return []
    Z = detector.normalize(windows.X[:, detector.feature_columns(FEATURE_NAMES)])
    rows = SegmentPrototypes.from_artifact(*detector.extras["segmenter"]).segment(
        np.where(np.isnan(Z), 0.0, Z))
    hop_s = float(np.median(np.diff(windows.t_end))) if len(windows) > 1 else 0.0
    t = np.append(windows.t_end, windows.t_end[-1] + hop_s)
    return [[round(float(t[row["start"]]), 4), round(float(t[row["end"]]), 4),
             int(row["cluster"]), int(row["label"])] for row in rows]
