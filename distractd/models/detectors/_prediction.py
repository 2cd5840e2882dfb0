"""A recording through a saved model as the daemon runs a stream: the batch driver of ``predict``.

The recording's windows come from the model's pipeline (one :class:`~distractd.pipeline.
StreamProcessor` fed the whole recording, then flushed); the sub-model that scores them is the
most complete one whose features the recording can give — by the fields it carries and its
measured rate (:meth:`~distractd.models.detectors.Detector.choose`), the same choice the daemon
makes per stream; every window without a decision gets its reason
(:func:`~distractd.models.detectors.undecided_reasons`).
"""

import numpy as np

from ...pipeline import FEATURE_NAMES, PipelineConfig, StreamProcessor, Windows
from ._decision import undecided_reasons, undecided_summary

__all__ = ["Prediction", "predict_recording"]


class Prediction:
    """What a model made of one recording.

    Attributes
    ----------
    windows : Windows
    scores : ndarray of shape (n_windows,)
        NaN where the chosen sub-model had a feature missing, or none was chosen.
    states : ndarray of shape (n_windows,), int8
        1 distracted, 0 attentive, -1 no decision (the daemon's ``unknown``).
    choice : Choice
        The sub-model that scored the recording, or why none could.
    rate_hz : float
        The recording's measured sample rate.
    reasons : ndarray of object, shape (n_windows,)
        The :data:`~distractd.models.detectors.UNDECIDED_REASONS` code of each undecided window,
        None for the decided ones.
    """

    def __init__(self, windows, scores, states, choice, rate_hz, reasons):
        self.windows = windows
        self.scores = scores
        self.states = states
        self.choice = choice
        self.rate_hz = rate_hz
        self.reasons = reasons

    @property
    def model_id(self):
        """The id of the sub-model that scored the windows (None when none could)."""
        return None if self.choice.detector is None else self.choice.detector.model_id

    def undecided(self):
        """Counts of the undecided windows by reason code."""
        codes = [code for code in self.reasons if code is not None]
        return {code: codes.count(code) for code in dict.fromkeys(codes)}

    def summary_line(self):
        """One line saying why windows got no decision (None when all were decided)."""
        return undecided_summary(self.reasons, self.choice.reason)


def predict_recording(detector, recording, rule):
    """Windows, sub-model choice, scores, states and undecided reasons of a recording.

    Parameters
    ----------
    detector : Detector
        From :func:`~distractd.models.load_model`; its pipeline configuration makes the windows.
    recording : Recording
    rule : DecisionRule
        A fresh decision rule (the daemon's, :func:`~distractd.models.detectors.decision_options`).

    Returns
    -------
    Prediction
    """
    config = PipelineConfig.from_dict(detector.pipeline_config)
    processor = StreamProcessor(config)
    windows = Windows.concat([processor.update(recording.samples, recording.labels),
                              processor.flush()])
    choice = detector.choose(np.isfinite(recording.samples).any(axis=0), processor.rate_hz)
    if choice.detector is None:
        scores = np.full(len(windows), np.nan)
    else:
        scores = detector.window_scores(windows.X, FEATURE_NAMES, choice.detector)
    states = rule.update(windows.t_end, scores, windows.quality, windows.alert_list())
    ready = np.isfinite(windows.X).any(axis=1) if config.baseline else np.ones(len(windows), bool)
    return Prediction(windows, scores, states, choice, processor.rate_hz,
                      undecided_reasons(states, scores, ready, choice.code))
