"""The daemon's loop: one thread owns every socket, polls input, classifies, publishes.

Per iteration: wait on the input sockets (at most ``service.poll_interval_s``), drain up to
``service.max_batch_messages`` messages, decode each (:mod:`distractd.pipeline.formats`) into its
stream's inbox, feed each inbox whose samples can complete a window to its session as one block,
classify the windows completed by *all* sessions in one batched ``decision_function`` call, publish
their state and event messages together, then do the periodic work (republish latest states,
expire idle sessions, systemd STATUS and WATCHDOG, metric snapshots); after an iteration that read
input, rest until ``service.coalesce_s`` has passed since the wake-up, so that the next one reads
the messages of the interval at once. Signals only set flags: SIGHUP reloads
configuration and model between iterations, SIGTERM/SIGINT drain the input queue (for at most
``service.drain_timeout_s``), flush every stream and stop. An unexpected exception in one
stream's processing is caught at its stage, counted, and ends that stream's session only; the
process ends for faults of its own.

:class:`Service` holds the loop, the drains of its inputs and classify-and-publish. Its other
rooms are parts it takes as bases, working on its state in the same thread: the stream table,
inboxes, new, expired and ended streams (:mod:`._streams`), the reload (:mod:`._reload`) and the
adaptation glue (:mod:`._adaptation`). The model is loaded in :mod:`._model`; sockets, sessions,
metrics and configuration have their own modules.
"""

import logging
import os
import signal
import sys
import time

import numpy as np
import zmq
from prometheus_client import CollectorRegistry
from threadpoolctl import threadpool_limits

from .._errors import ConfigError
from ..pipeline import FEATURE_NAMES
from ..pipeline.formats import (
    Limits, PupilAdapter, Rejected, UnsupportedGaze, decode_message, encode_event, encode_state,
)
from ._adaptation import Adapter, Adapting
from ._config import load_config
from ._lsl import LslBridge, LslStates
from ._metrics import Metrics, MetricsServer
from ._model import Model
from ._reload import Reloading
from ._sockets import Sockets
from ._streams import StreamTable
from ._systemd import Notifier

__all__ = ["Service", "run"]

log = logging.getLogger("distractd.daemon")

_NOBLOCK = int(zmq.NOBLOCK)
_SNDMORE_NOBLOCK = int(zmq.SNDMORE | zmq.NOBLOCK)
"""zmq's flags as plain ints: combining and passing its enum members costs microseconds per call
in the loop."""


class _RateLimitedLog:
    """At most one log line per reason per interval, reporting how many were suppressed: lines
    ``<prefix> <message>`` and ``<prefix> <n> more <reason> <noun>`` at ``level``."""

    def __init__(self, interval_s, prefix="rejected", noun="messages", level=logging.WARNING):
        self.interval_s = interval_s
        self.prefix = prefix
        self.noun = noun
        self.level = level
        self.last_s = {}
        self.suppressed = {}

    def warning(self, reason, message, now_s):
        if now_s - self.last_s.get(reason, -np.inf) < self.interval_s:
            self.suppressed[reason] = self.suppressed.get(reason, 0) + 1
            return
        more = self.suppressed.pop(reason, 0)
        log.log(self.level, "%s %s%s", self.prefix, message,
                f" ({more} more {reason} since the last line)" if more else "")
        self.last_s[reason] = now_s

    def flush(self, now_s, force=False):
        """Log the counts suppressed for reasons whose interval has passed (all when forced)."""
        for reason in list(self.suppressed):
            if force or now_s - self.last_s[reason] >= self.interval_s:
                log.log(self.level, "%s %d more %s %s", self.prefix, self.suppressed.pop(reason),
                        reason, self.noun)
                self.last_s[reason] = now_s


class Service(StreamTable, Reloading, Adapting):
    """The running daemon.

    Parameters
    ----------
    config : dict
        A validated configuration (:func:`~distractd.daemon.load_config`).
    config_path : str, optional
        The TOML file re-read on SIGHUP (with the same ``overrides``).
    overrides : sequence of str
        ``section.key=value`` overrides re-applied on reload.
    registry : CollectorRegistry, optional
        Metrics registry (a fresh one by default).
    notifier : Notifier, optional
        systemd notification (from the environment by default).
    """

    def __init__(self, config, config_path=None, overrides=(), registry=None, notifier=None):
        self.config = config
        self.config_path = config_path
        self.overrides = tuple(overrides)
        self.metrics = Metrics(registry or CollectorRegistry(),
                               per_stream=config["metrics"]["per_stream"])
        self.notifier = notifier or Notifier()
        self.model = Model(config["model"]["path"], config["model"]["max_bytes"],
                           config["adaptation"]["enabled"])
        self.metrics.set_model(self.model.detector.model_id, self.model.detector.kind)
        self.inboxes = {}
        self._ended_since_trim = 0  # sessions expired since the heap was last trimmed
        self.pupil = None
        self.lsl_states = None
        self.gaze_frames = {}  # stream id -> "head" for eye-in-head sources (Pupil, LSL)
        self.adapter = Adapter(config["adaptation"]["queue_size"])
        self._apply(config)
        self._check_adaptation()
        self._stop = False
        self._reload = False
        self._loading = None
        self.http_server = None

    def _apply(self, config):
        self.config = config
        self.limits = Limits(config["input"]["topic"], config["input"]["max_message_bytes"],
                             config["input"]["max_block_samples"])
        self.lsl_limits = Limits("samples.", config["input"]["max_message_bytes"],
                                 config["input"]["max_block_samples"])
        self.rejection_log = _RateLimitedLog(config["service"]["rejection_log_interval_s"])
        self.fault_log = _RateLimitedLog(config["service"]["rejection_log_interval_s"],
                                         "stream error:", "errors", logging.ERROR)
        logging.getLogger("distractd").setLevel(config["service"]["log_level"].upper())

    # -- lifecycle -------------------------------------------------------------------------

    def request_stop(self, *_):
        """Ask the loop to drain and stop (signal-safe)."""
        self._stop = True

    def request_reload(self, *_):
        """Ask the loop to reload configuration and model (signal-safe)."""
        self._reload = True

    def run(self, install_signals=True):
        """Run until asked to stop; return the exit status (0 after a clean drain)."""
        if install_signals:
            signal.signal(signal.SIGTERM, self.request_stop)
            signal.signal(signal.SIGINT, self.request_stop)
            signal.signal(signal.SIGHUP, self.request_reload)
        metrics = self.config["metrics"]
        if metrics["enabled"]:
            try:
                self.http_server = MetricsServer(self.metrics.registry, metrics["address"],
                                                 metrics["port"], metrics["cache_s"]).start()
            except OSError as exc:
                raise ConfigError(f"metrics.address:metrics.port {metrics['address']}:"
                                  f"{metrics['port']} cannot be bound: {exc.strerror}") from None
            log.info("metrics on http://%s:%d/metrics", metrics["address"], self.http_server.port)
        context = zmq.Context()
        blas = threadpool_limits(limits=1)  # one loop thread; BLAS threads only contend
        try:
            with Sockets(context, self.config, self.metrics) as sockets:
                if sockets[2] is not None:
                    self.pupil = PupilAdapter(self.config["pupil"]["reorder_s"])
                    self.gaze_frames[self.config["pupil"]["stream"]] = PupilAdapter.GAZE_FRAME
                if self.config["lsl"]["outlets"]:
                    self.lsl_states = LslStates(self.model.pipeline_config.hop_s)
                bridge = None
                if sockets[3] is not None:
                    bridge = LslBridge(context, self.config["lsl"],
                                       self.config["input"]["max_block_samples"],
                                       self.gaze_frames, self.metrics.lsl_streams)
                    if self.lsl_states is not None:  # states of LSL streams: stamped in its clock
                        self.lsl_states.lsl_clock = bridge.opened
                    bridge.start()
                try:
                    self._loop(*sockets)
                finally:
                    if bridge is not None:
                        bridge.stop()
        finally:
            self.adapter.close()
            blas.restore_original_limits()
            context.term()
            if self.http_server is not None:
                self.http_server.close()
        return 0

    # -- the loop ------------------------------------------------------------------------

    def _loop(self, sub, pub, pupil, lsl):
        poller = zmq.Poller()
        poller.register(sub, zmq.POLLIN)
        if pupil is not None:
            poller.register(pupil.sub, zmq.POLLIN)
        if lsl is not None:
            poller.register(lsl, zmq.POLLIN)
        service = self.config["service"]
        timeout_ms = service["poll_interval_s"] * 1e3
        coalesce_s = service["coalesce_s"]
        now = time.monotonic()
        next_status = next_republish = now
        watchdog_every = (self.notifier.watchdog_s or 0) / 3
        next_watchdog = now
        counts = _RateCounter(now)
        drain_until = None
        self.notifier.ready(self._status_text(counts, now))
        log.info("ready: model %s (%s), output %s", self.model.detector.model_id,
                 self.model.detector.kind, self.config["output"]["bind"])
        while True:
            stopping = self._stop
            if stopping and drain_until is None:
                drain_until = time.monotonic() + service["drain_timeout_s"]
                self.notifier.stopping(f"draining input for at most "
                                       f"{service['drain_timeout_s']:g} s")
            ready = dict(poller.poll(0 if stopping else timeout_ms))
            now = woke = time.monotonic()
            touched = []
            n_read = 0
            if sub in ready or stopping:
                n_read += self._drain(sub, self._decode_native, touched,
                                      service["max_batch_messages"], counts)
            if pupil is not None:
                n_read += self._follow_pupil(pupil, poller, ready, stopping, touched, counts)
            if lsl is not None and (lsl in ready or stopping):
                n_read += self._drain(lsl, self._decode_lsl, touched,
                                      service["max_batch_messages"], counts)
            pending = self._ingest(touched, now) if touched else []
            if pending:
                self._classify_and_publish(pending, pub, counts)
            self._finish_fits()
            now = time.monotonic()
            if stopping and (n_read == 0 or now >= drain_until):
                break
            if now >= next_republish:
                _discard_subscriptions(pub)
                self._republish(pub, now)
                self._expire(now, pub, counts)
                next_republish = now + self.config["output"]["republish_s"]
            if watchdog_every and now >= next_watchdog:
                self.notifier.watchdog()
                next_watchdog = now + watchdog_every
            if now >= next_status:
                self._report_status(counts, now)
                next_status = now + service["status_interval_s"]
            if self._reload and not stopping and self._loading is None:
                self._reload = False
                self._loading = self.start_reload()
            if self._loading is not None and not self._loading.is_alive():
                self.finish_reload(self._loading)
                self._loading = None
            if n_read and not stopping and n_read < service["max_batch_messages"]:
                _coalesce(woke + coalesce_s)
        if n_read:
            log.warning("input still arriving after service.drain_timeout_s=%g s: stopped "
                        "reading it", service["drain_timeout_s"])
        self.rejection_log.flush(now, force=True)
        self.fault_log.flush(now, force=True)
        n_flushed = self._flush_all(pub, counts)
        status = f"stopping: {n_flushed} streams flushed"
        self.notifier.status(status)
        log.info(status)

    def _drain(self, sock, decode, touched, budget, counts):
        """Read up to ``budget`` messages into their streams' inboxes; return the number read.

        ``decode(frames)`` gives ``(stream, block, seq)``, or None for a message without samples,
        and raises :class:`Rejected`. Inboxes receiving their first message of this batch are
        appended to ``touched``.
        """
        inboxes = self.inboxes
        n = n_samples = n_lost = 0
        while n < budget:
            try:
                frames = sock.recv_multipart(_NOBLOCK)
            except zmq.Again:
                break
            n += 1
            now = time.monotonic()
            try:
                decoded = decode(frames)
            except Rejected as exc:
                self._reject(exc, now)
                continue
            except Exception as exc:  # a decoder fault: this message is lost, nothing else
                self._stream_fault(None, "decode", exc, now)
                continue
            if decoded is None:
                continue
            stream, block, seq = decoded
            try:
                inbox = inboxes.get(stream) or self._new_session(stream, now)
                if inbox is None:
                    continue
                lost = inbox.session.accept(seq, now)
                if lost is None:
                    self.metrics.seq_resets.inc()
                else:
                    n_lost += lost
                n_samples += len(block)
                if inbox.add(block, now):
                    touched.append(inbox)
            except Exception as exc:
                self._stream_fault(stream, "ingest", exc, now)
        self._count_received(n, n_samples, n_lost, counts)
        return n

    def _decode_native(self, frames):
        return decode_message(frames, self.limits)

    def _decode_lsl(self, frames):
        return decode_message(frames, self.lsl_limits)

    def _decode_pupil(self, frames):
        try:
            block = self.pupil.update(frames)
        except UnsupportedGaze as exc:  # counted; said once per mapping
            self.metrics.pupil_refused[exc.mapping].inc()
            if exc.first:
                log.warning("%s (counted in distractd_pupil_refused_total)", exc)
            return None
        return (self.config["pupil"]["stream"], block, None) if len(block) else None

    def _follow_pupil(self, link, poller, ready, stopping, touched, counts):
        """Drain the Pupil backbone; after ``pupil.silence_s`` of silence (or when the daemon
        stops) feed the gaze samples the adapter still holds for reordering, and follow Pupil
        Remote to a new backbone port; return the messages read."""
        n = 0
        if link.sub in ready or stopping:
            n = self._drain(link.sub, self._decode_pupil, touched,
                            self.config["service"]["max_batch_messages"], counts)
        now = time.monotonic()
        if n:
            link.heard(now)
        elif self.pupil.n_held and (stopping or now - link.heard_s >= link.silence_s):
            block = self.pupil.flush()
            inbox = self.inboxes.get(self.config["pupil"]["stream"]) \
                or self._new_session(self.config["pupil"]["stream"], now)
            if inbox is not None:
                inbox.session.accept(None, now)
                self._count_received(0, len(block), 0, counts)
                if inbox.add(block, now):
                    touched.append(inbox)
        replaced = None if stopping else link.check(now)
        if replaced is not None:
            poller.unregister(replaced)
            poller.register(link.sub, zmq.POLLIN)
            self.metrics.pupil_reconnects.inc()
        return n

    def _count_received(self, n_messages, n_samples, n_lost, counts):
        metrics = self.metrics
        if n_messages:
            metrics.messages_received.inc(n_messages)
        if n_samples:
            metrics.samples_received.inc(n_samples)
            counts.samples += n_samples
        if n_lost:
            metrics.messages_lost.inc(n_lost)

    def _reject(self, exc, now):
        self.metrics.messages_rejected[exc.reason].inc()
        self.rejection_log.warning(exc.reason, str(exc), now)

    def _ingest(self, touched, now):
        """Feed each touched inbox that is due to its session; return the windows completed.

        Returns
        -------
        list of (Session, Windows, float)
            Sessions with completed windows and the arrival time of their first message of this
            batch.
        """
        pending = []
        for inbox in touched:
            arrival = inbox.arrival_s
            inbox.arrival_s = None
            session = inbox.session
            if session.failed or not inbox.due(now):
                continue
            stage = "ingest"
            try:
                block = inbox.take()
                stage = "pipeline"
                windows = session.process(block)
            except Exception as exc:
                self._stream_fault(session.stream, stage, exc, now, session)
                continue
            if len(windows):
                pending.append((session, windows, arrival))
        return pending

    def _send(self, pub, frames):
        """Publish ``[topic, payload]`` to every subscriber; one whose queue holds
        ``output.sndhwm`` messages misses this one, counted (``xpub_nodrop`` reports the full
        queue at the topic frame, then the message goes out lossy to the others). Two plain
        ``send`` calls with int flags: ``send_multipart`` with zmq's flag enums costs twice as
        much per message."""
        topic, payload = frames
        try:
            pub.send(topic, _SNDMORE_NOBLOCK)
        except zmq.Again:
            self.metrics.output_dropped.inc()
            pub.xpub_nodrop = False
            pub.send(topic, _SNDMORE_NOBLOCK)
            pub.send(payload, _NOBLOCK)
            pub.xpub_nodrop = True
            return
        pub.send(payload, _NOBLOCK)

    def _classify_and_publish(self, pending, pub, counts):
        """Score the pending windows of all sessions in one batch, decide each session's states
        and events, then publish them in one burst (libzmq's I/O thread wakes once for the burst
        rather than once per message); a session that fails at any step is dropped
        (:meth:`_stream_fault`)."""
        now = time.monotonic()
        for item in list(pending):
            session, windows, _ = item
            if not session.fields_checked:
                try:
                    self._check_fields(session, windows)
                except Exception as exc:
                    self._stream_fault(session.stream, "scoring", exc, now, session)
                    pending.remove(item)
        pending, scores = self._scored(pending, now)
        metrics = self.metrics
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
                self._stream_fault(session.stream, "publish", exc, now, session)
                continue
            self._count_undecided(session)
            if states:
                session.latest_s = now
            for message in states:
                outgoing.append(encode_state(message))
                n_states[message["state"]] += 1
                if self.lsl_states is not None:
                    self.lsl_states.publish(message)
            for message in events:
                outgoing.append(encode_event(message))
                if message["type"] == "transition":
                    metrics.transitions.inc()
                elif message["type"] == "alert":
                    metrics.alerts[message["kind"]].inc()
                else:
                    metrics.segments.inc()
            if arrival is not None:  # None: windows completed by the end of a stream
                decided.append((arrival, len(states)))
                if session.adaptation is not None:
                    try:
                        self._collect(session, windows)
                    except Exception as exc:
                        self._stream_fault(session.stream, "adaptation", exc, now, session)
        for frames in outgoing:
            self._send(pub, frames)
        published_s = time.monotonic()
        for state, n in n_states.items():
            if n:
                metrics.windows[state].inc(n)
                counts.states += n
        for arrival, n in decided:
            for _ in range(n):
                metrics.latency.observe(published_s - arrival)

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
                    self._stream_fault(item[0].stream, "scoring", exc, now, item[0])
                    continue
                scored.append(item)
            return scored, np.concatenate(scores) if scores else np.empty(0)

    def _scores(self, pending):
        """Scores of the pending windows, in order: one batch per sub-model of the loaded model
        for the sessions it was chosen for, each adapted session's windows through the model
        adapted to it; NaN for the sessions no sub-model can score."""
        scorers = [self._scorer(session) for session, _, _ in pending]
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

    def _report_status(self, counts, now):
        """The periodic snapshot: metric gauges, systemd STATUS, rate-limited log lines; the
        rates restart."""
        for inbox in self.inboxes.values():
            self._count_sample_rejections(inbox.session)
        self.metrics.streams = tuple((stream, inbox.session.processor.rate_hz)
                                     for stream, inbox in self.inboxes.items())
        self.metrics.active_streams.set(len(self.inboxes))
        self.metrics.input_wall_rate.set(counts.samples / max(now - counts.since_s, 1e-9))
        self.metrics.loop_status.set_to_current_time()
        self.metrics.adapted_streams.set(sum(
            inbox.session.adaptation is not None
            and inbox.session.adaptation.detector is not None
            for inbox in self.inboxes.values()))
        self.notifier.status(self._status_text(counts, now))
        self.rejection_log.flush(now)
        self.fault_log.flush(now)
        counts.restart(now)

    def _status_text(self, counts, now):
        elapsed = max(now - counts.since_s, 1e-9)
        return (f"{len(self.inboxes)} streams, {counts.samples / elapsed:.0f} samples/s in, "
                f"{counts.states / elapsed:.1f} states/s out, model {self.model.detector.model_id}")


def _coalesce(until_s):
    """Rest until ``until_s`` (monotonic s) after a wake-up that read input, so that the next
    wake-up finds the messages of the whole interval queued: one poll, one drain ending in
    ``zmq.Again`` and one classification call for all of them instead of one per message or two
    (``service.coalesce_s``; a quiet input is still read at once, and a drain that filled
    ``service.max_batch_messages`` does not rest, see :meth:`Service._loop`)."""
    rest_s = until_s - time.monotonic()
    if rest_s > 0:
        time.sleep(rest_s)


def _discard_subscriptions(pub):
    """Read the subscription messages the output XPUB socket queues (nothing uses them)."""
    while True:
        try:
            pub.recv(zmq.NOBLOCK)
        except zmq.Again:
            return


class _RateCounter:
    def __init__(self, now_s):
        self.restart(now_s)

    def restart(self, now_s):
        self.since_s = now_s
        self.samples = 0
        self.states = 0


def run(config_path=None, overrides=()):
    """Load the configuration and run the daemon until SIGTERM; then end the process with its
    exit status.

    After a clean stop every socket, connection and thread of the daemon is closed, and the
    process ends at once (``os._exit``, logs flushed): the interpreter's finalisation, freeing
    the compiled kernels' and the sessions' objects one by one, took 2-6 s of the shutdown on a
    loaded 2-vCPU machine (with 300 streams), beyond what ``service.drain_timeout_s`` + 5 s allows.
    """
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = load_config(config_path, overrides)
    status = Service(config, config_path, overrides).run()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
