"""Training a per-driver detector from recordings, and predicting with a saved one.

``train_detector``: windows from every recording (one pipeline configuration), ``n_labelled``
labelled windows drawn (stratified, seeded) from the windows of known truth, all other windows
unlabelled; z-score over all training windows; hyper-parameters by 3×4-fold cross-validation on the
labelled windows (:func:`~distractd.models.detectors.select_params`); one final fit; the artifact
holds the estimator, the z-score, the feature names, the pipeline configuration, a summary and the
segment prototypes of an ACA fitted on the first ``segment_frames`` windows.

Corrected labels from the labelling-assistance workflow come back as either an interval CSV
(``start,end,label``, applied to the samples before windowing) or a per-window CSV
(``t_start,t_end,...,label``, matched to the windows by ``t_end``).
"""

import csv
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from ..._errors import ConfigError, SchemaError, unreadable
from ..._json import json_ready
from ..._validation import Interval, check_params
from ...pipeline import (
    FEATURE_NAMES, VEHICLE_FEATURES, PipelineConfig, Recording, Windows, extract_features,
    labels_from_intervals, read_intervals,
)
from ..segmentation import fit_segment_prototypes
from ._artifact import save_model
from ._decision import LOSS_FEATURE
from ._prediction import predict_recording
from ._scores import binary_scores
from ._selection import UNLABELLED, select_params
from ._specs import model_specs

__all__ = ["training_windows", "train_detector", "train_model", "predict_windows", "read_labels",
           "usable_features", "chosen_features"]

_constraints = {
    "n_labelled": Interval(8, None, integer=True),
    "segment_frames": Interval(0, None, integer=True),
}
_T_END_TOLERANCE_S = 1e-6
_LOST_SHARE = 0.05
"""Share of windows losing most samples from which :func:`usable_features` also asks a feature
to have data in them."""
_LOST_MIN_FRACTION = 0.9
"""Fraction of those windows a feature must have data in (:func:`usable_features`)."""


def usable_features(windows, min_fraction=0.5, vehicle=False):
    """Names of the features that have data in at least ``min_fraction`` of the windows, and of
    the windows where the tracker lost most samples.

    A feature is NaN only where its signal is absent (no head pose, no eyelid, a sample rate too
    low for saccades) or not yet warmed up, so the features a tracker's data supports are the
    ones that are mostly finite. A sparse gaze-only tracker loses the eyes exactly when the
    driver looks down at a phone (real 1 Hz texting drives: a third of the texting seconds
    tracked); a feature that vanishes then (a gaze mean over no tracked sample) would leave those
    windows unscored and out of training, the very windows whose loss is the evidence. So where
    at least :data:`_LOST_SHARE` of the windows have under half their samples valid (in streams
    that have delivered gaze), a feature must also have data in :data:`_LOST_MIN_FRACTION` of
    those: one missing in a tenth of them or more vanishes with the loss.

    Parameters
    ----------
    windows : Windows or sequence of Windows
    min_fraction : float, default=0.5
    vehicle : bool, default=False
        Also the car's features (:data:`~distractd.pipeline.VEHICLE_FEATURES`) with data. A
        model reads the car only when its recipe asks (the vehicle sub-models, ``--vehicle``):
        simulated drives carry the car, and a model of the eyes stays one of the eyes.

    Returns
    -------
    list of str
        In :data:`~distractd.pipeline.FEATURE_NAMES` order.
    """
    finite, finite_lost = _data_fractions(windows)
    car = np.isin(FEATURE_NAMES, VEHICLE_FEATURES)
    if finite_lost is not None:   # the car's signals do not vanish with the eyes
        finite = np.where((finite_lost < _LOST_MIN_FRACTION) & ~car, 0.0, finite)
    return [name for name, fraction, its in zip(FEATURE_NAMES, finite, car)
            if fraction >= min_fraction and (vehicle or not its)]


def _data_fractions(windows):
    """Per feature, the fraction of the windows with data, and of the windows losing most samples
    in streams that have delivered gaze (None when those are under :data:`_LOST_SHARE`)."""
    parts = [windows] if isinstance(windows, Windows) else list(windows)
    X = np.vstack([w.X for w in parts]) if parts else np.empty((0, len(FEATURE_NAMES)))
    if len(X) == 0:
        return np.zeros(len(FEATURE_NAMES)), None
    quality = np.concatenate([w.quality for w in parts])
    lost = (quality < 0.5) & np.isfinite(X[:, FEATURE_NAMES.index(LOSS_FEATURE)])
    finite_lost = np.isfinite(X[lost]).mean(axis=0) if lost.mean() >= _LOST_SHARE else None
    return np.isfinite(X).mean(axis=0), finite_lost


def read_labels(path):
    """Read corrected labels: interval CSV or per-window CSV, told apart by the header.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    (str, object)
        ``("intervals", [(start_s, end_s, label), ...])`` or ``("windows", (t_end, label))`` with
        ``t_end`` in seconds and ``label`` int8 (1, 0, -1).
    """
    path = Path(path)
    try:  # a missing, folder or non-UTF-8 file: one clear line
        with open(path, newline="", encoding="utf-8-sig") as file:  # Excel's BOM too
            reader = csv.DictReader(file)
            header = [name.strip() for name in reader.fieldnames or []]
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise unreadable(path, exc, SchemaError) from None
    if {"start", "end", "label"} <= set(header):
        return "intervals", read_intervals(path)
    if {"t_end", "label"} <= set(header):
        t_end, labels = [], []
        for line, row in enumerate(rows, start=2):
            try:
                t_end.append(float(row["t_end"]))
                labels.append(int(row["label"]) if row["label"].strip() else UNLABELLED)
            except ValueError:
                raise SchemaError(f"{path}:{line}: t_end and label must be numbers, got "
                                  f"{row['t_end']!r}, {row['label']!r}") from None
            if labels[-1] not in (1, 0, UNLABELLED):
                raise SchemaError(f"{path}:{line}: label must be 1, 0 or -1, got {labels[-1]}")
        return "windows", (np.array(t_end), np.array(labels, dtype=np.int8))
    raise SchemaError(f"{path}: header must hold start,end,label (intervals) or t_end,label "
                      f"(windows), got {header}")


def training_windows(recordings, config=None, labels=None):
    """Feature windows of the recordings, concatenated, with corrected labels applied.

    Parameters
    ----------
    recordings : sequence of Recording
    config : PipelineConfig or None, default=None
    labels : sequence of (str or Path or None) or None, default=None
        One corrected-label file per recording (None keeps the recording's own labels).

    Returns
    -------
    Windows
    """
    config = config or PipelineConfig()
    labels = [None] * len(recordings) if labels is None else list(labels)
    if len(labels) != len(recordings):
        raise ConfigError(f"train.labels must give one file per recording ({len(recordings)}), "
                          f"got {len(labels)}")
    parts = []
    for recording, path in zip(recordings, labels):
        kind, value = read_labels(path) if path is not None else (None, None)
        if kind == "intervals":
            recording = Recording(recording.samples, labels_from_intervals(recording.t, value),
                                  recording.meta)
        windows = extract_features(recording, config)
        if kind == "windows":
            windows.label = _match_window_labels(windows.t_end, *value, path)
        parts.append(windows)
    return Windows.concat(parts)


def train_detector(windows, model="sselm", *, n_labelled=60, grid="full", seed=0,
                   config=None, segment_frames=400, features=None):
    """Fit one detector on training windows the way the protocol does.

    Parameters
    ----------
    windows : Windows
        Training windows (:func:`training_windows`); windows with a non-finite feature are left
        out.
    model : str, default="sselm"
        Model id (see :func:`~distractd.models.detectors.model_specs`).
    n_labelled : int, default=60
        Labelled windows, drawn stratified from the windows of known truth.
    grid : {"full", "small"}, default="full"
    seed : int, default=0
        Seed of the draw, the inner folds and the hidden layer.
    config : PipelineConfig or None, default=None
        The configuration the windows were made with (stored in the artifact).
    segment_frames : int, default=400
        Windows (from the start) segmented by ACA with the driving defaults
        (:func:`~distractd.models.segmentation.fit_segment_prototypes`) for the online segmenter's prototypes;
        clusters take the majority label of their *labelled* windows. 0 stores no segmenter.
    features : sequence of str or None, default=None
        Feature names; None keeps the features with data in at least half of the windows
        (:func:`usable_features`), so a tracker without head pose or eyelid trains on what it has.

    Returns
    -------
    estimator : fitted estimator
        Works on z-scored features.
    parts : dict
        Keyword arguments of :func:`~distractd.models.save_model` besides the estimator.
    """
    check_params({"n_labelled": n_labelled, "segment_frames": segment_frames}, _constraints,
                 owner="train")
    config = config or PipelineConfig()
    (spec,) = model_specs([model], grid)
    names = chosen_features(windows, features)
    X_all = windows.X[:, [FEATURE_NAMES.index(name) for name in names]]
    finite = np.isfinite(X_all).all(axis=1)
    X, y = X_all[finite], windows.label[finite]
    known = np.flatnonzero(y != UNLABELLED)
    counts = np.bincount(y[known], minlength=2)
    if counts.min() < 4:
        raise ConfigError(_too_few_labels(windows.label, X_all, names, counts))
    if n_labelled >= len(known):
        raise ConfigError(f"train.n_labelled must be below the {len(known)} windows of known "
                          f"truth, got {n_labelled}")
    labelled, _ = train_test_split(known, train_size=n_labelled, stratify=y[known],
                                   random_state=seed)
    unlabelled = np.setdiff1d(np.arange(len(y)), labelled)
    scaler = StandardScaler().fit(X)
    Z = scaler.transform(X)
    with threadpool_limits(limits=1, user_api="blas"):  # small matrices: threads only contend
        params = select_params(spec, Z[labelled], y[labelled], Z[unlabelled],
                               random_state=seed)
    estimator = spec.estimator.set_params(**params)
    if spec.randomised:
        estimator.set_params(random_state=seed)
    if spec.semi_supervised:
        estimator.fit(np.vstack([Z[labelled], Z[unlabelled]]),
                      np.r_[y[labelled], np.full(len(unlabelled), UNLABELLED)])
    else:
        estimator.fit(Z[labelled], y[labelled])
    scores = estimator.decision_function(Z[known])
    spread = float(np.std(estimator.decision_function(Z[labelled])))
    summary = {
        "model": model, "params": json_ready(params), "grid": grid,
        "n_windows": int(len(y)), "n_labelled": int(n_labelled),
        "n_unlabelled": int(len(unlabelled)) if spec.semi_supervised else 0,
        "known_truth": {"distracted": int(counts[1]), "attentive": int(counts[0])},
        "left_out_non_finite": int((~finite).sum()),
        "resubstitution": binary_scores(y[known], (scores > 0).astype(np.int8)),
        "score_scale": spread if spread > 0 else 1.0,
    }
    extras = {}
    if segment_frames:
        frame_labels = _labelled_only(y, labelled)[:segment_frames]
        prototypes = fit_segment_prototypes(Z[:segment_frames], frame_labels,
                                            hop_s=config.hop_s, random_state=seed)
        extras["segmenter"] = prototypes.to_artifact()
    return estimator, {"normalizer_mean": scaler.mean_, "normalizer_scale": scaler.scale_,
                       "feature_names": names, "pipeline_config": config.to_dict(),
                       "extras": extras, "summary": summary, "seed": seed}


def chosen_features(windows, features=None):
    """The feature names to train on: ``features`` checked against the data, or by default those
    with data in at least half of the windows (:func:`usable_features`).

    Parameters
    ----------
    windows : Windows or sequence of Windows
    features : sequence of str or None, default=None

    Returns
    -------
    list of str

    Raises
    ------
    ConfigError
        An unknown feature name, a feature the recordings have no data for (they lack the fields
        it needs), or no feature with data at all.
    """
    if features is None:
        names = usable_features(windows)
        if not names:
            raise ConfigError("no feature has data in half of the windows: features need head "
                              "pose (head_*) or gaze (gaze_*) fields, tracked (are the "
                              "recordings empty, all track loss, or without these fields?)")
        return names
    unknown = [name for name in features if name not in FEATURE_NAMES]
    if unknown:
        raise ConfigError(f"features {unknown} are not window features; known: "
                          f"{list(FEATURE_NAMES)}")
    finite = dict(zip(FEATURE_NAMES, _data_fractions(windows)[0]))
    absent = [name for name in features if finite[name] < 0.5]
    if absent:
        raise ConfigError(f"features {absent} have no data in most windows: the "
                          f"recordings lack the fields they need")
    return list(features)


def train_model(path, windows, model="sselm", **options):
    """:func:`train_detector`, then :func:`~distractd.models.save_model` to ``path``.

    Returns
    -------
    model_id : str
    """
    estimator, parts = train_detector(windows, model, **options)
    return save_model(path, estimator, **parts)


def predict_windows(detector, recording, rule):
    """Windows, scores and states of a recording under a loaded detector.

    Parameters
    ----------
    detector : Detector
        From :func:`~distractd.models.load_model`; its pipeline configuration makes the windows.
    recording : Recording
    rule : DecisionRule
        A fresh decision rule (the daemon's, :func:`~distractd.models.detectors.decision_options`).

    Returns
    -------
    windows : Windows
    scores : ndarray of shape (n_windows,)
        NaN where a feature of the sub-model chosen for the recording is missing
        (:func:`~distractd.models.detectors.predict_recording`, which this returns part of).
    states : ndarray of shape (n_windows,), int8
        1 distracted, 0 attentive, -1 no decision (the daemon's ``unknown``).
    """
    prediction = predict_recording(detector, recording, rule)
    return prediction.windows, prediction.scores, prediction.states


def _match_window_labels(t_end, label_t_end, labels, path):
    """Labels of the windows ending at ``t_end``, taken from a per-window label file."""
    order = np.argsort(label_t_end)
    at = np.clip(np.searchsorted(label_t_end[order], t_end), 1, len(order) - 1)
    before, after = order[at - 1], order[at]
    nearest = np.where(np.abs(label_t_end[before] - t_end) <= np.abs(label_t_end[after] - t_end),
                       before, after)
    matched = np.abs(label_t_end[nearest] - t_end) <= _T_END_TOLERANCE_S
    if not matched.any():
        raise SchemaError(f"{path}: no t_end matches a window of the recording (first window ends "
                          f"at {float(t_end[0])!r} s, first row at {float(label_t_end[0])!r} s)")
    return np.where(matched, labels[nearest], UNLABELLED).astype(np.int8)


def _too_few_labels(labels, X, names, counts):
    """Why fewer than 4 windows of a class can be trained on: labels the recordings lack, or
    features missing where the labels are (naming the features most often missing)."""
    message = (f"training needs at least 4 distracted and 4 attentive windows with every feature, "
               f"got {counts[1]} distracted and {counts[0]} attentive")
    labelled = labels != UNLABELLED
    if np.bincount(labels[labelled], minlength=2).min() < 4:
        return (message + f"; the recordings label {int((labels == 1).sum())} distracted and "
                f"{int((labels == 0).sum())} attentive windows of {len(labels)}: give corrected "
                f"labels (distractd train --labels, e.g. from distractd label)")
    missing = np.isnan(X[labelled]).mean(axis=0)
    worst = [f"{names[j]} ({100 * missing[j]:.0f} %)" for j in np.argsort(-missing)[:3]
             if missing[j] > 0]
    return (message + f"; the labelled windows lack features: {', '.join(worst)} missing; "
            f"choose others with --features, or check the recordings' fields")


def _labelled_only(y, labelled):
    """Window labels with every window outside the labelled draw set to unknown."""
    out = np.full(len(y), UNLABELLED, dtype=np.int8)
    out[labelled] = y[labelled]
    return out
