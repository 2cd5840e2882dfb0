"""The daemon's policy: windows in, published states and events out.

:meth:`Classifier.classify` scores the windows all sessions completed in one batch (one
``decision_function`` call per model), lets each session's decision rule and segmenter turn its
scores into state and event messages, and publishes them together; :meth:`Classifier.end` does the
same for streams that end (their held samples, last windows and last segments). A session that
fails at any step is dropped from the stream table (:meth:`StreamTable.fault`); the others go on.
"""

import logging
import time

import numpy as np

from ..pipeline import FEATURE_NAMES, Windows
from ..pipeline.formats import encode_event, encode_state

__all__ = ["Classifier"]

log = logging.getLogger("distractd.daemon")


class Classifier:
    """Scores, decides and publishes the windows of the daemon's sessions.

    Parameters
    ----------
    model : Model
        The loaded model (:meth:`configure` swaps in a reloaded one).
    streams : StreamTable
        Where a failing session is dropped.
    output : Output
    adaptation : Adaptation
        Each session's scorer and the collection of its windows.
    metrics : Metrics
    rates : Rates
        The published states are added to ``rates.states``.

    Attributes
    ----------
    scorer : callable
        ``scorer(session)``: the detector that scores a session (the adaptation's by default).
    """

    def __init__(self, model, streams, output, adaptation, metrics, rates):
        self.model = model
        self.streams = streams
        self.output = output
        self.adaptation = adaptation
        self.scorer = adaptation.scorer
        self.metrics = metrics
        self.rates = rates

    def configure(self, config, model):
        """Take a reloaded model."""
        self.model = model

    def classify(self, pending):
        """Score the pending windows of all sessions in one batch, decide each session's states
        and events, then publish them in one burst (libzmq's I/O thread wakes once for the burst
        rather than once per message).

        Parameters
        ----------
        pending : list of (Session, Windows, float or None)
            Sessions, their completed windows and the arrival time of the first message of the
            batch (None: windows completed by the end of a stream).
        """
        fault = self.streams.fault
        now = time.monotonic()
        for item in list(pending):
            session, windows, _ = item
            if not session.fields_checked:
                try:
                    self._check_fields(session, windows)
                except Exception as exc:
                    fault(session.stream, "scoring", exc, now, session)
                    pending.remove(item)
        pending, scores = self._scored(pending, now)
        metrics = self.metrics
        lsl = self.output.lsl
        outgoing = []
        decided = []  # (arrival, states) of the sessions whose windows were decided
        n_states = dict.fromkeys(metrics.windows, 0)
        stop = 0
        for session, windows, arrival in pending:
            start, stop = stop, stop + len(windows)
            model_id = (session.choice.detector or self.model.detector).model_id
            try:
                states, events = session.decide(windows, scores[start:stop], model_id)
            except Exception as exc:
                fault(session.stream, "publish", exc, now, session)
                continue
            self._count_undecided(session)
            if states:
                session.latest_s = now
            for message in states:
                outgoing.append(encode_state(message))
                n_states[message["state"]] += 1
                if lsl is not None:
                    lsl.publish(message)
            for message in events:
                outgoing.append(encode_event(message))
                if message["type"] == "transition":
                    metrics.transitions.inc()
                elif message["type"] == "alert":
                    metrics.alerts[message["kind"]].inc()
                else:
                    metrics.segments.inc()
            if arrival is not None:
                decided.append((arrival, len(states)))
                if session.adaptation is not None:
                    try:
                        self.adaptation.collect(session, windows)
                    except Exception as exc:
                        fault(session.stream, "adaptation", exc, now, session)
        # counted before sending, so that whoever has received a state scrapes it counted
        published_s = time.monotonic()
        for state, n in n_states.items():
            if n:
                metrics.windows[state].inc(n)
                self.rates.states += n
        for arrival, n in decided:
            for _ in range(n):
                metrics.latency.observe(published_s - arrival)
        send = self.output.send
        for frames in outgoing:
            send(frames)

    def end(self, inboxes):
        """Publish what the end of streams completes: held samples, last windows (classified in
        one batch), last segments."""
        fault = self.streams.fault
        pending = []
        now = time.monotonic()
        for inbox in inboxes:
            session = inbox.session
            try:
                held = inbox.take()
                windows = session.flush() if held is None else \
                    Windows.concat([session.process(held), session.flush()])
            except Exception as exc:
                fault(session.stream, "end", exc, now, session)
                continue
            if len(windows):
                pending.append((session, windows, None))
        if pending:
            self.classify(pending)
        for inbox in inboxes:
            if inbox.session.failed:
                continue
            try:
                segments = inbox.session.final_segments()
            except Exception as exc:
                fault(inbox.session.stream, "end", exc, now, inbox.session)
                continue
            for message in segments:
                self.output.send(encode_event(message))
                self.metrics.segments.inc()
            self.streams.count_rejections(inbox.session)

    def end_all(self, inboxes):
        """End every stream at stop, :data:`_FLUSH_CHUNK` streams at a time, until
        :data:`_FLUSH_BUDGET_S` has passed; return the number ended. The streams left are
        dropped with one warning: their held samples and last windows are not published."""
        flush_until = time.monotonic() + _FLUSH_BUDGET_S
        n_flushed = 0
        while n_flushed < len(inboxes) and time.monotonic() < flush_until:
            self.end(inboxes[n_flushed:n_flushed + _FLUSH_CHUNK])
            n_flushed = min(n_flushed + _FLUSH_CHUNK, len(inboxes))
        if n_flushed < len(inboxes):
            log.warning("stopped flushing after %g s: %d of %d streams not flushed, their last "
                        "windows are not published", _FLUSH_BUDGET_S, len(inboxes) - n_flushed,
                        len(inboxes))
        return n_flushed

    def _scored(self, pending, now):
        """The pending items that could be scored and their scores (:meth:`_scores`); when the
        batch fails, each session is scored alone and those that still fail are dropped."""
        try:
            return pending, self._scores(pending)
        except Exception:
            scored, scores = [], []
            for item in pending:
                try:
                    scores.append(self._scores([item]))
                except Exception as exc:
                    self.streams.fault(item[0].stream, "scoring", exc, now, item[0])
                    continue
                scored.append(item)
            return scored, np.concatenate(scores) if scores else np.empty(0)

    def _scores(self, pending):
        """Scores of the pending windows, in order: one batch per sub-model of the loaded model
        for the sessions it was chosen for, each adapted session's windows through the model
        adapted to it; NaN for the sessions no sub-model can score."""
        scorers = [self.scorer(session) for session, _, _ in pending]
        X = pending[0][1].X if len(pending) == 1 else \
            np.concatenate([windows.X for _, windows, _ in pending])
        if scorers[0] is not None and scorers.count(scorers[0]) == len(scorers):
            return scorers[0].window_scores(X, FEATURE_NAMES, scorers[0])  # one model: one call
        scores = np.full(len(X), np.nan)
        bounds = np.cumsum([0] + [len(windows) for _, windows, _ in pending])
        batches = {}
        for scorer, lo, hi in zip(scorers, bounds[:-1], bounds[1:]):
            if scorer is not None:
                batches.setdefault(id(scorer), (scorer, []))[1].append(np.arange(lo, hi))
        for scorer, spans in batches.values():
            rows = np.concatenate(spans)
            scores[rows] = scorer.window_scores(X[rows], FEATURE_NAMES, scorer)
        return scores

    def _count_undecided(self, session):
        """Count a session's undecided windows by reason; log each reason new to it once."""
        counts, lines = session.undecided_news()
        for code, n in counts.items():
            self.metrics.undecided[code].inc(n)
        for code, line in lines:
            level = logging.INFO if code in ("warming", "features", "quality") else logging.WARNING
            log.log(level, "%s", line)

    def _check_fields(self, session, windows):
        """Until the field check has run: choose the session's sub-model by the fields and rate
        its stream has shown; at the check, count the choice, warn and count when the stream
        lacks fields the model needs."""
        model = self.model
        session.choice = model.detector.choose(session.fields_seen, session.processor.rate_hz)
        warning = session.check_fields(windows, model.detector.model_id,
                                       model.detector.feature_names, model.columns, model.needs,
                                       session.choice)
        if session.fields_checked:
            chosen = session.choice.detector
            self.metrics.submodels["none" if chosen is None else chosen.name].inc()
            if chosen is not None:
                log.info("stream %s: scored by %s (%s sub-model, %.3g Hz)", session.stream,
                         chosen.model_id, chosen.name, session.processor.rate_hz)
        if warning is not None:
            self.metrics.field_mismatch.inc()
            log.warning("%s", warning)


_FLUSH_BUDGET_S = 1.0
"""Longest time the streams are flushed at stop, after the drain (part of the 5 s the shutdown
takes beyond ``service.drain_timeout_s`` at most; a chunk started runs to its end)."""


_FLUSH_CHUNK = 256
"""Streams flushed (and their last windows classified) in one batch at stop."""
