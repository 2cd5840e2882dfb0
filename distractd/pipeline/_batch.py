"""The batch drivers: a whole recording fed to a fresh :class:`StreamProcessor`, then flushed.

The batch results are the streaming results, whatever the block sizes (DESIGN §4.4): features
(:func:`extract_features`), eye events (:func:`detect_events`) and each channel's per-sample trace
(:func:`detect_channel`; :func:`detect_glances`, :func:`detect_fatigue`).
"""

import csv
import math
from dataclasses import dataclass

import numpy as np

from ._events import EVENT_KINDS
from ._processor import StreamProcessor
from ._validate import REJECTED, SAMPLE_REJECT_REASONS, TRACK_LOSS
from .channels import CHANNELS, FatigueChannel, GlanceChannel

__all__ = ["extract_features", "Events", "detect_events", "detect_channel", "detect_glances",
           "detect_fatigue"]


def extract_features(recording, config=None):
    """Feature windows of a whole recording: a fresh :class:`StreamProcessor` fed all of it, then
    flushed (the same windows as any sequence of :meth:`~StreamProcessor.update` calls followed by
    :meth:`~StreamProcessor.flush`).

    Parameters
    ----------
    recording : Recording
    config : PipelineConfig, default=None

    Returns
    -------
    Windows
    """
    return StreamProcessor(config)._feed(recording.samples, recording.labels, with_events=False,
                                         final=True)[0]


@dataclass
class Events:
    """Per-sample eye events of a recording, and the events themselves.

    Attributes
    ----------
    t : ndarray of shape (n_samples,)
        Sample times in seconds, as received.
    saccade, blink, fixation : ndarray of shape (n_samples,)
        1 inside a detected event, 0 outside, NaN where the event cannot be resolved (sample
        rate too low) or the sample was rejected.
    track_loss : ndarray of shape (n_samples,)
        1 where the eyes were not tracked, 0 where they were, NaN for rejected samples.
    gaze_velocity_deg_s : ndarray of shape (n_samples,)
        Binocular gaze rotation speed in deg/s (NaN where undefined).
    rejected : ndarray of shape (n_samples,), dtype object
        The reason a sample was dropped (see :data:`SAMPLE_REJECT_REASONS`), or ``""``.
    events : ndarray of shape (n_events, 6)
        One row per event, columns :attr:`EVENT_COLUMNS`: kind (index into :data:`EVENT_KINDS`),
        first and last sample time (s), duration (s), amplitude (deg) and peak speed (deg/s), NaN
        where not applicable.
    """

    t: np.ndarray
    saccade: np.ndarray
    blink: np.ndarray
    fixation: np.ndarray
    track_loss: np.ndarray
    gaze_velocity_deg_s: np.ndarray
    rejected: np.ndarray
    events: np.ndarray

    COLUMNS = ("t", "saccade", "blink", "fixation", "track_loss", "gaze_velocity_deg_s",
               "rejected")
    EVENT_COLUMNS = ("kind", "t_first", "t_last", "duration", "amplitude", "peak")
    """The columns of :attr:`events`: fields of the detectors' rows (``_events.EVENT_ROW``)."""

    def write_csv(self, path):
        """Write one row per sample: :attr:`COLUMNS`, empty cells for NaN."""
        with open(path, "w", newline="") as file:
            writer = csv.writer(file)
            writer.writerow(self.COLUMNS)
            for t, s, b, f, lost, v, reason in zip(
                    self.t.tolist(), self.saccade.tolist(), self.blink.tolist(),
                    self.fixation.tolist(), self.track_loss.tolist(),
                    self.gaze_velocity_deg_s.tolist(), self.rejected):
                writer.writerow([repr(t), _flag(s), _flag(b), _flag(f), _flag(lost),
                                 "" if math.isnan(v) else f"{v:.3f}", reason])


def _flag(value):
    return "" if math.isnan(value) else str(int(value))


def detect_events(recording, config=None):
    """Per-sample saccades, blinks and fixations of a whole recording, by the streaming detectors.

    A sample is flagged when its time lies within an event's first and last sample times (on the
    same clock: after a clock reset, times start again).

    Parameters
    ----------
    recording : Recording
    config : PipelineConfig, default=None

    Returns
    -------
    Events
    """
    _, events, rows, _, _ = StreamProcessor(config)._feed(
        recording.samples, recording.labels, with_events=True, final=True)
    t = recording.t
    accepted = rows["status"] < REJECTED
    epochs = rows["epoch"]
    flags = {}
    for kind, column in ((0, "saccade"), (1, "blink"), (2, "saccade")):
        flag = np.where(rows[column] == -2.0, np.nan, 0.0)
        flag[~accepted] = np.nan
        for epoch in np.unique(epochs[accepted]):   # times increase strictly within a clock
            kept = np.flatnonzero(accepted & (epochs == epoch))
            spans = events[(events["kind"] == kind) & (events["epoch"] == epoch)]
            inside = np.zeros(len(kept) + 1, dtype=np.int64)
            np.add.at(inside, np.searchsorted(t[kept], spans["t_first"], side="left"), 1)
            np.add.at(inside, np.searchsorted(t[kept], spans["t_last"], side="right"), -1)
            flag[kept[np.cumsum(inside[:-1]) > 0]] = 1.0
        flags[EVENT_KINDS[kind]] = flag
    lost = np.where(rows["status"] == TRACK_LOSS, 1.0, 0.0)
    lost[~accepted] = np.nan
    reasons = np.array([""] + list(SAMPLE_REJECT_REASONS), dtype=object)
    code = np.where(accepted, 0, rows["status"].astype(np.int64) - REJECTED + 1)
    return Events(t.copy(), flags["saccade"], flags["blink"], flags["fixation"], lost,
                  np.degrees(rows["velocity"]), reasons[code],
                  np.column_stack([events[name] for name in Events.EVENT_COLUMNS]))


def detect_channel(channel, recording, config=None):
    """Per-sample trace of one channel over a whole recording, by the streaming processor: the
    channel's batch twin (``channel.trace`` of its outputs and alerts).

    Parameters
    ----------
    channel : channel class
        One of :data:`~distractd.pipeline.channels.CHANNELS` (or a channel tried beside them: it
        is run after them).
    recording : Recording
    config : PipelineConfig, default=None
    """
    channels = CHANNELS
    if channel not in channels:
        channels = channels + (channel,)
    processor = StreamProcessor(config, channels)
    _, _, rows, traces, alerts = processor._feed(recording.samples, recording.labels,
                                                 with_events=True, final=True)
    outputs = traces[channels.index(channel)]
    ours = [alert for alert in alerts if channel.ALERT and isinstance(alert, channel.ALERT)]
    return channel.trace(np.asarray(recording.t, dtype=float).copy(), rows["status"] >= REJECTED,
                         outputs, ours)


def detect_glances(recording, config=None):
    """Per-sample glance channel of a whole recording (DESIGN §4.5), by the streaming processor.

    Parameters
    ----------
    recording : Recording
    config : PipelineConfig, default=None

    Returns
    -------
    GlanceTrace
        Class, glance away so far, AttenD buffer and road centre per sample (rejected samples:
        class -1, NaN), and every alert raised.
    """
    return detect_channel(GlanceChannel, recording, config)


def detect_fatigue(recording, config=None):
    """Per-sample fatigue channel of a whole recording (docs/pipeline.md "Fatigue"), by the
    streaming processor.

    Parameters
    ----------
    recording : Recording
    config : PipelineConfig, default=None

    Returns
    -------
    FatigueTrace
        Availability, current closure, PERCLOS, mean blink duration and the drowsy latch per
        sample (rejected samples: unavailable, NaN), and every fatigue alert raised.
    """
    return detect_channel(FatigueChannel, recording, config)
