"""A saved model as deployed, scored on labelled drives through the ``predict`` path.

No retraining: each drive goes through :func:`~distractd.models.detectors.predict_recording` with
the decision rule the caller passes (the daemon's: :func:`~distractd.models.detectors.decision_options` of
its defaults) and the sub-model chosen by the drive's fields and rate, as ``distractd predict``
and the daemon do. Per
driver it reports the fraction of windows holding gaze (a valid sample in the window) that got a
decision, the window G-mean over the decided labelled windows, and false alarms per attentive
hour; beside it, the naive floor of the same windows: the state is distracted when the window's
valid-gaze fraction is below ``naive_loss_threshold`` (texting shows up above all as lost gaze,
Taamneh et al. 2017, doi:10.1038/sdata.2017.110).
"""

import numpy as np

from ...pipeline import PipelineConfig, Recording, read_recordings
from ..detectors import (
    DecisionRule, false_alarms_per_hour, g_mean, load_model, loss_evidence, predict_recording,
)

__all__ = ["score_shipped"]

SECONDS_PER_HOUR = 3600.0


def score_shipped(paths, model, decision, *, protocols=("normal", "texting"),
                  naive_loss_threshold=0.5):
    """Score a saved model, as deployed, on every driver's drives.

    Parameters
    ----------
    paths : sequence of str, Path or Recording
        Labelled recordings (read or as files) or Taamneh et al. subject files (one driver
        each, ``meta driver_id``), or folders of them.
    model : str or Path
        The artifact (e.g. ``distractd/data/default_model.npz``).
    decision : dict
        Keyword arguments of :class:`~distractd.models.detectors.DecisionRule` (the daemon's:
        ``decision_options(DEFAULTS)``); ``loss_evidence`` follows the model's features, as in
        ``predict``.
    protocols : sequence of str or None, default=("normal", "texting")
        The drives kept (``meta["protocol"]``); None keeps all.
    naive_loss_threshold : float, default=0.5
        The naive floor's valid-gaze fraction below which a window is distracted.

    Returns
    -------
    list of dict
        One per driver, in name order: ``driver``, ``submodels`` (the sub-model id per drive),
        ``windows``, ``gaze_windows``, ``decided_fraction`` (of the gaze windows),
        ``g_mean``, ``false_alarms_per_hour``, ``attentive_hours``, ``undecided`` (counts by
        reason code), and the naive floor's ``naive_g_mean`` and
        ``naive_false_alarms_per_hour``.
    """
    detector = load_model(model)
    grace_s = PipelineConfig.from_dict(detector.pipeline_config).window_s / 2
    drives = {}
    for path in paths:
        for recording in [path] if isinstance(path, Recording) else read_recordings(path):
            if protocols is None or recording.meta.get("protocol") in protocols:
                drives.setdefault(str(recording.meta["driver_id"]), []).append(recording)
    rows = []
    for driver in sorted(drives):
        parts = []
        for recording in drives[driver]:
            rule = DecisionRule(**{**decision,
                                   "loss_evidence": loss_evidence(detector.feature_names)})
            prediction = predict_recording(detector, recording, rule)
            naive = (prediction.windows.quality < naive_loss_threshold).astype(np.int8)
            parts.append((recording, prediction, naive))
        rows.append(_driver_row(driver, parts, grace_s))
    return rows


def _driver_row(driver, parts, grace_s):
    """The figures of one driver's drives ``(recording, prediction, naive states)``."""
    y = np.concatenate([p.windows.label for _, p, _ in parts])
    states = np.concatenate([p.states for _, p, _ in parts])
    naive = np.concatenate([n for _, _, n in parts])
    gaze = np.concatenate([p.windows.quality > 0 for _, p, _ in parts])
    decided = states >= 0
    labelled = y >= 0
    hours, alarms, naive_alarms = 0.0, 0.0, 0.0
    for _, p, n in parts:
        w = p.windows
        hop_s = float(np.median(np.diff(w.t_end))) if len(w) > 1 else 0.0
        drive_hours = float((w.label == 0).sum()) * hop_s / SECONDS_PER_HOUR
        if drive_hours > 0:
            alarms += false_alarms_per_hour(w.t_end, w.label, p.states, grace_s) * drive_hours
            naive_alarms += false_alarms_per_hour(w.t_end, w.label, n, grace_s) * drive_hours
            hours += drive_hours
    undecided = {}
    for _, p, _ in parts:
        for code, n in p.undecided().items():
            undecided[code] = undecided.get(code, 0) + n
    return {
        "driver": driver,
        "submodels": {str(r.meta.get("recording_id")): p.model_id for r, p, _ in parts},
        "windows": int(len(y)), "gaze_windows": int(gaze.sum()),
        "decided_fraction": float(decided[gaze].mean()) if gaze.any() else float("nan"),
        "g_mean": g_mean(y[labelled & decided], states[labelled & decided]),
        "false_alarms_per_hour": alarms / hours if hours else float("nan"),
        "attentive_hours": hours, "undecided": undecided,
        "naive_g_mean": g_mean(y[labelled], naive[labelled]),
        "naive_false_alarms_per_hour": naive_alarms / hours if hours else float("nan"),
    }
