"""One input stream's state inside the daemon: pipeline, smoother, online segmenter, bookkeeping.

A :class:`Session` is created on a stream's first accepted message. :meth:`Session.accept` checks
each message's sequence number against the stream's history (gaps are counted as lost messages);
time order is the pipeline's: it drops and counts samples that go backwards and recovers from
tracker clock resets, so no message is rejected for its timestamps;
:meth:`Session.process` feeds the accepted samples of a batch, as one block, to the stream's
:class:`~distractd.pipeline.StreamProcessor`, returning the windows they complete. The
service classifies the windows of all sessions in one batch, then :meth:`Session.decide` turns each
session's scores into state and event messages through its decision rule and segmenter.

Field check: until its first windows are complete, a session notes which canonical fields its
samples carry; :meth:`Session.check_fields` then compares them, once, with the fields the loaded
model's features are computed from (:func:`feature_fields`), so a stream that can never get a
decision (a gaze-only tracker under a model with head-pose features) is reported instead of being
``unknown`` without a word. The service also sets :attr:`Session.choice`, the sub-model that
scores the stream (:meth:`~distractd.models.detectors.Detector.choose`).

Undecided windows: :meth:`Session.decide` gives every ``unknown`` window its reason
(:func:`~distractd.models.detectors.undecided_reasons`); :meth:`Session.undecided_news` hands the
service the counts since its last call and one line for each reason the first time it occurs in
the session (``stream car1: no window decided yet: baseline warming (12 of 60 s)``).

Published state (docs/daemon.md, "Output"): besides the decision, every state carries the eyelid
channel's ``fatigue`` (or why it is unavailable: ``off``, ``no_eyelid`` — no eyelid field in the
samples seen by the field check — or ``not_visible``), the ``calibration`` of the stream's
baseline and road centre, and the decision rule's ``escalation``
(:meth:`~distractd.models.detectors.DecisionRule.escalate`), whose climb to the top level is one
``unresponsive`` alert event.
"""


import numpy as np

from .._errors import ModelError
from ..models.detectors import UNDECIDED_REASONS, UNKNOWN, DecisionRule, undecided_reasons
from ..models.segmentation import OnlineSegmenter
from ..pipeline import T_MAX_S, FatigueAlert, StreamProcessor, feature_fields
from ..pipeline.formats import (
    FIELDS, N_FIELDS, STATE_NAMES, alert_event, glance_state, segment_event, state_message,
    transition_event,
)

__all__ = ["Session", "StreamSegmenter", "StreamFault", "MAX_MESSAGE_RATE_HZ", "STREAM_STAGES"]

STREAM_STAGES = ("decode", "ingest", "pipeline", "scoring", "segmentation", "publish",
                 "adaptation", "end")
"""Where the service catches an unexpected exception of one stream
(``distractd_stream_errors_total{stage}``): decoding a message, adding it to its stream's inbox,
the pipeline, scoring its windows, the online segmenter, the decision rule and its messages, the
adaptation's window collection, and the end of the stream (flush at expiry or stop)."""


class StreamFault(Exception):
    """An unexpected exception inside a session's :meth:`Session.decide` or
    :meth:`Session.final_segments`, raised again with the stage it came from (its ``__cause__``)."""

    def __init__(self, stage):
        super().__init__(stage)
        self.stage = stage

_SIGNALS = np.array([name not in ("t", "confidence") for name in FIELDS])
"""The fields that are a signal (time and confidence alone are not data)."""

_GAZE = np.array([name.startswith("gaze_") for name in FIELDS])

_EYELID = np.array([name.startswith("eyelid_") for name in FIELDS])

_NO_ALERTS = ((),)

MAX_MESSAGE_RATE_HZ = 10000
"""The most messages per second a stream is taken to send. A ``seq`` that goes back, or jumps
forward by more than this rate could have sent since the stream's previous message (plus
:data:`_SEQ_SLACK`), is a sender restart or a forged number: counted as a reset, not as lost
messages."""

_SEQ_SLACK = 1024


class Session:
    """The per-stream state of the daemon.

    Parameters
    ----------
    stream : str
        The stream id (the topic after ``samples.``).
    pipeline_config : PipelineConfig
        Window settings of the loaded model.
    decision : dict
        Keyword arguments of :class:`~distractd.models.detectors.DecisionRule` (``min_quality``
        and the smoothing).
    segmenter : StreamSegmenter or None
        This stream's online segmenter, or None when segmentation is off.
    now_s : float
        Monotonic time of creation, in seconds.
    """

    def __init__(self, stream, pipeline_config, decision, segmenter, now_s):
        self.stream = stream
        self.processor = StreamProcessor(pipeline_config)
        self.decision = DecisionRule(**decision)
        self.segmenter = segmenter
        self.last_seen_s = now_s
        self.failed = False  # an unexpected exception ended the session (set by the service)
        self.next_seq = None
        self.gaze_frame = None  # "head": eye-in-head gaze without head pose (set by the service)
        self.adaptation = None  # StreamAdaptation with [adaptation] on (set by the service)
        self.driver = None  # the driver the stream named (StreamTable.name_driver)
        self.state = "unknown"
        self.latest = None
        self.latest_s = None  # monotonic time (s) ``latest`` was published (set by the service)
        self.segment = None
        self.rejected_seen = {}
        self.fields_seen = np.zeros(N_FIELDS, dtype=bool)
        self.fields_checked = False
        self.has_eyelid = False  # the stream's samples carried an eyelid value
        self.clock_resets = 0  # the pipeline's clock_reset count at the previous call
        self.choice = None  # Choice of sub-model (set by the service)
        self.first_t_s = None  # start of the stream's first window, s of its clock
        self.decided_any = False
        self._undecided = dict.fromkeys(UNDECIDED_REASONS, 0)
        self._undecided_lines = []
        self._reasons_said = set()

    def accept(self, seq, now_s):
        """Note one decoded message of the stream; return the number of messages lost before it,
        or None when ``seq`` restarts the count (see :data:`MAX_MESSAGE_RATE_HZ`)."""
        n_lost = 0
        if seq is not None:
            expected = self.next_seq
            if expected is not None and seq != expected:
                n_lost = seq - expected
                if not 0 < n_lost <= _SEQ_SLACK + MAX_MESSAGE_RATE_HZ * (now_s - self.last_seen_s):
                    n_lost = None
            self.next_seq = seq + 1
        self.last_seen_s = now_s
        return n_lost

    def process(self, block):
        """Run the pipeline on accepted samples; return the windows they complete.

        Until the field check has run, also notes which fields the samples carry (finite anywhere),
        counting only samples whose time the pipeline takes (finite, ``|t|`` within
        :data:`~distractd.pipeline.T_MAX_S`): a dropped sample must not change the stream's
        sub-model.
        """
        if not self.fields_checked:
            t = block[:, 0]
            timed = block[np.isfinite(t) & (np.abs(t) <= T_MAX_S)]
            self.fields_seen |= np.isfinite(timed).any(axis=0)
        windows = self.processor.update(block)
        if self.segmenter is not None:
            resets = self.processor.rejected["clock_reset"]
            if resets != self.clock_resets:
                self.clock_resets = resets
                self.segmenter.clock_reset = True
        return windows

    def check_fields(self, windows, model_id, features, columns, needs, choice=None):
        """Once per session, at its first complete windows: what the stream lacks for the model.

        A feature is reported when the stream's samples so far (about its first ``window_s``
        seconds) never carried any of the fields it is computed from *and* it is not finite in
        any of these windows. The fields decide, so a measure still warming up (PERCLOS, blink
        frequency) from fields the stream has is not reported. The check waits while the samples
        carry no signal at all (only time), then runs once: :attr:`fields_checked` is set.

        Parameters
        ----------
        windows : Windows
            The session's first complete windows (full feature rows).
        model_id : str
        features : sequence of str
            The model's feature names.
        columns : sequence of int
            Their columns in ``windows.X``.
        needs : list of ndarray of int
            Their fields, from :func:`~distractd.pipeline.feature_fields`.
        choice : Choice or None, default=None
            The sub-model chosen for the stream: the line then says which scores it instead, or
            why none can.

        Returns
        -------
        str or None
            The warning line naming the stream, the missing fields and the features; None when the
            stream has everything (or the check is still waiting).
        """
        seen = self.fields_seen
        if not seen[_SIGNALS].any():
            return None
        self.fields_checked = True
        lacking = [(feature, fields) for feature, column, fields in zip(features, columns, needs)
                   if len(fields) and not seen[fields].any()
                   and not np.isfinite(windows.X[:, column]).any()]
        if not lacking:
            return None
        missing = sorted(set().union(*(fields.tolist() for _, fields in lacking)))
        if choice is not None and choice.detector is not None:
            outcome = (f"its windows are scored by the model's {choice.detector.name} sub-model "
                       f"({choice.detector.model_id})")
        else:
            alerts = (" but glance alerts" if self.processor.config.glances and seen[_GAZE].any()
                      else "")
            why = "" if choice is None else f": {choice.reason}"
            outcome = f"its windows get no decision{alerts}{why}"
        return (f"stream {self.stream}: lacks {', '.join(FIELDS[i] for i in missing)} that model "
                f"{model_id} needs (features {', '.join(feature for feature, _ in lacking)}); "
                f"{outcome}")

    def recheck_fields(self):
        """Run the field check again at the next windows (the model changed under the session),
        on the fields seen so far and those the samples until then carry."""
        self.fields_checked = False

    def flush(self):
        """End of the stream: the windows the data so far can complete (the batch driver's end)."""
        return self.processor.flush()

    def final_segments(self):
        """End of the stream: ``segment`` events committing the segmenter's pending frames."""
        if self.segmenter is None:
            return []
        try:
            segments = self.segmenter.flush()
        except Exception as exc:
            raise StreamFault("segmentation") from exc
        return [segment_event(self.stream, segment) for segment in segments]

    def new_rejections(self):
        """Sample rejections by reason since the previous call (from the pipeline's counters)."""
        delta = {}
        for reason, count in self.processor.rejected.items():
            seen = self.rejected_seen.get(reason, 0)
            if count != seen:
                delta[reason] = count - seen
                self.rejected_seen[reason] = count
        return delta

    def decide(self, windows, scores, model_id):
        """Decide the windows' states (decision rule, segmenter); return their state and event
        messages, in time order, for the service to send.

        Parameters
        ----------
        windows : Windows
        scores : ndarray of shape (len(windows),)
            Decision values (positive = distracted); NaN where the features were not finite.
        model_id : str

        Returns
        -------
        states : list of dict
            One state message per window (DESIGN §3).
        events : list of dict
            ``alert``, ``transition`` and ``segment`` events.
        """
        alerts = [alert for group in windows.alerts for alert in group]
        raised = [(alert.t, alert.kind) for alert in alerts]
        decision = self.decision
        decided = decision.update(windows.t_end, scores, windows.quality, raised)
        events = [_alert_event(self.stream, alert) for alert in alerts]
        config = self.processor.config
        levels, unresponsive = decision.escalate(
            windows.t_end, decided, windows.on_road, windows.off_road_s, windows.eyes_closed_s,
            windows.drowsy, [[(alert.t, alert.kind) for alert in group]
                             for group in windows.alerts] if raised else _NO_ALERTS * len(windows),
            windows.input_age_s)
        events += [alert_event(self.stream, "unresponsive", t, since=since, cause=cause)
                   for t, since, cause in unresponsive]
        baseline = self.processor.baseline
        adapted = None if self.adaptation is None else self.adaptation.adapted or False
        ready = np.isfinite(windows.X).any(axis=1) if baseline is not None else None
        if self.first_t_s is None and len(windows):
            self.first_t_s = float(windows.t_start[0])
        if (decided == UNKNOWN).any():
            self._note_undecided(windows, undecided_reasons(
                decided, scores, np.ones(len(windows), dtype=bool) if ready is None else ready,
                None if self.choice is None else self.choice.code))
        else:
            self.decided_any = True
        segments = []
        if self.segmenter is not None:
            usable = decision.usable(scores, windows.quality)
            if usable.any():
                try:
                    segments = self.segmenter.update(windows.X[usable], windows.t_end[usable])
                except Exception as exc:
                    raise StreamFault("segmentation") from exc
        glances = self.processor.glances
        road = (glances.road_ready, glances.road_progress)
        baseline_progress = 1.0 if baseline is None else baseline.progress
        if not self.has_eyelid:
            self.has_eyelid = bool(self.fields_seen[_EYELID].any())
        unavailable = "off" if not config.fatigue else None if self.has_eyelid else "no_eyelid"
        states = []
        for i in range(len(windows)):
            t_end = float(windows.t_end[i])
            state = STATE_NAMES[int(decided[i])]
            if state != self.state:
                events.append(transition_event(self.stream, t_end, self.state, state,
                                               float(scores[i]), model_id))
                self.state = state
            glance = glance_state(windows.on_road[i], windows.off_road_s[i],
                                  windows.buffer_s[i], windows.road_ready[i]) \
                if config.glances else None
            if unavailable is None:
                fatigue = (windows.eyes_closed_s[i], windows.perclos[i],
                           windows.blink_duration_s[i], windows.drowsy[i]) \
                    if windows.fatigue_available[i] else "not_visible"
            else:
                fatigue = unavailable
            baseline_ready = True if ready is None else bool(ready[i])
            states.append(state_message(
                self.stream, (float(windows.t_start[i]), t_end), state, float(scores[i]),
                model_id, float(windows.quality[i]),
                self.segmenter.current if self.segmenter else None, glance,
                None if baseline is None else baseline_ready,
                self.gaze_frame, adapted, fatigue,
                (baseline_ready, 1.0 if baseline_ready else baseline_progress,
                 bool(windows.road_ready[i]), 1.0 if windows.road_ready[i] else road[1]),
                levels[i]))
        events += [segment_event(self.stream, segment) for segment in segments]
        if states:
            self.latest = states[-1]
        return states, events

    def _note_undecided(self, windows, codes):
        """Count the undecided windows by reason; a line for each reason new to the session."""
        for i, code in enumerate(codes):
            if code is None:
                self.decided_any = True
                continue
            self._undecided[code] += 1
            if code in self._reasons_said:
                continue
            self._reasons_said.add(code)
            if code == "warming":
                phrase = (f"baseline warming ({float(windows.t_end[i]) - self.first_t_s:.0f} of "
                          f"{self.processor.config.baseline_warmup_s:g} s)")
            elif self.choice is not None and self.choice.code == code:
                phrase = self.choice.reason
            else:
                phrase = UNDECIDED_REASONS[code]
            status = "windows undecided" if self.decided_any else "no window decided yet"
            self._undecided_lines.append((code, f"stream {self.stream}: {status}: {phrase}"))

    def undecided_news(self):
        """The undecided windows since the previous call: counts by reason code, and the
        ``(code, line)`` of each reason the session had not had before."""
        counts = {code: n for code, n in self._undecided.items() if n}
        lines = self._undecided_lines
        self._undecided = dict.fromkeys(UNDECIDED_REASONS, 0)
        self._undecided_lines = []
        return counts, lines


def _alert_event(stream, alert):
    """The event of a glance or fatigue alert the pipeline raised."""
    if isinstance(alert, FatigueAlert):
        return alert_event(stream, alert.kind, alert.t, closures=alert.closures,
                           closed_s=alert.closed_s, perclos=alert.perclos)
    return alert_event(stream, alert.kind, alert.t, alert.glances, alert.away_s)


class StreamSegmenter:
    """One stream's online segmentation, in seconds and published segment dicts.

    Wraps an :class:`~distractd.models.OnlineSegmenter`: z-scores the raw window features as the
    model does (missing measures become 0, the training mean), numbers the segments, and
    translates frame indices to window end times.

    Parameters
    ----------
    prototypes : SegmentPrototypes
    normalize : callable
        The model's z-score of raw feature rows (:meth:`Detector.normalize`).

    Attributes
    ----------
    current : dict or None
        The segment holding the newest window: ``{"id", "start", "label", "cluster", "final"}``.
    """

    def __init__(self, prototypes, normalize):
        self.online = OnlineSegmenter(prototypes)
        self.normalize = normalize
        self.n_committed = 0
        self.current = None
        self.clock_reset = False
        self._t_end = np.zeros(self.online.max_lag + 4 * prototypes.max_length + 16)

    def update(self, X_raw, t_end):
        """Consume windows' raw features and end times (s); return the segments they finalise.

        The windows go to the segmenter ``max_length`` at a time, so the end-time ring (max_lag +
        4 max_length windows) still holds every window a commit can reach, however long the batch.
        A window ending before its predecessor, or the first windows after the pipeline restarted
        the stream (:attr:`clock_reset`, set by the session), end the sequence: the pending frames
        are committed and segmentation starts again, so no segment spans a tracker clock reset
        (its end could precede its start).
        """
        ring = len(self._t_end)
        step = self.online.prototypes.max_length
        Z = self.normalize(X_raw)
        Z = np.where(np.isnan(Z), 0.0, Z)
        finals = []
        previous = self._t_end[(self.online.n_frames - 1) % ring] if self.online.n_frames \
            else -np.inf
        back = np.flatnonzero(np.diff(t_end, prepend=previous) < 0)
        if self.clock_reset:   # the pipeline restarted the stream since the last windows
            self.clock_reset = False
            back = np.union1d(back, [0])
        edges = [0, *back[back > 0], len(t_end)]
        for lo, hi in zip(edges[:-1], edges[1:]):
            if lo in back:   # the stream's clock went back (a tracker restart): a new sequence
                finals += self.flush()
                self.online = OnlineSegmenter(self.online.prototypes)
            for start in range(lo, hi, step):
                part = t_end[start:min(start + step, hi)]
                self._t_end[(self.online.n_frames + np.arange(len(part))) % ring] = part
                finals += self._published(*self.online.update(Z[start:start + len(part)]))
        return finals

    def flush(self):
        """End of the stream: commit the pending frames; return the segments finalised."""
        try:
            committed = self.online.flush()
        except ModelError:  # the pending frames are shorter than a segment: nothing to commit
            return []
        return self._published(committed, None)

    def _published(self, committed, provisional):
        ring = len(self._t_end)
        finals = []
        for row in committed:
            finals.append({"id": self.n_committed, "start": float(self._t_end[row["start"] % ring]),
                           "end": float(self._t_end[(row["end"] - 1) % ring]),
                           "label": STATE_NAMES[int(row["label"])], "cluster": int(row["cluster"]),
                           "final": True})
            self.n_committed += 1
        if provisional is not None:
            self.current = {"id": self.n_committed,
                            "start": float(self._t_end[provisional["start"] % ring]),
                            "label": STATE_NAMES[int(provisional["label"])],
                            "cluster": int(provisional["cluster"]), "final": False}
        elif finals:
            self.current = {key: finals[-1][key]
                            for key in ("id", "start", "label", "cluster", "final")}
        return finals

