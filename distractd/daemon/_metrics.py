"""Prometheus metrics of the daemon, every family built once against an injected registry.

Label values are bounded and pre-bound at construction (rejection reasons, states, reload results),
so a scrape shows every series from the start and the hot path does no label look-ups. Per-stream
values are not labelled series by default (streams come and go; their ids are unbounded); they are
summed at scrape time by a custom collector, and exported per stream only when
``metrics.per_stream`` is enabled. prometheus-client's process (``process_*``: RSS, CPU, open
descriptors) and platform (``python_info``) collectors join the daemon's own families. The
automatic ``*_created`` series of counters and histograms are turned off (prometheus-client's
``disable_created_metrics()``, process-wide): they are one series per counter that no dashboard or
rule reads.

:class:`MetricsServer` serves the registry over HTTP from a small pool of threads of its own with
an exposition built at most once per ``metrics.cache_s`` and format, so neither a storm of scrapes
nor slow clients can stall the loop thread or ``/metrics``. The format (Prometheus text or
OpenMetrics, by ``Accept``) and gzip (by ``Accept-Encoding``) are negotiated by prometheus-client's
own exposition code.
"""

import gzip
import io
import logging
import math
import queue
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

from prometheus_client import (
    Counter, Gauge, Histogram, Info, PlatformCollector, ProcessCollector, disable_created_metrics,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import choose_encoder, gzip_accepted

from .. import __version__
from ..models.detectors import SUBMODELS, UNDECIDED_REASONS
from ..pipeline import ALERT_KINDS, FATIGUE_ALERT_KINDS, SAMPLE_REJECT_REASONS
from ..pipeline.formats import MESSAGE_REJECT_REASONS, REFUSED_MAPPINGS, STATE_NAMES
from ._gate import REFUSAL_REASONS
from ._lsl import LSL_OUTCOMES
from ._profiles import PROFILE_OUTCOMES, PROFILE_REJECT_REASONS
from ._session import STREAM_STAGES
from ._vehicle import VEHICLE_REJECT_REASONS

__all__ = ["Metrics", "MetricsServer", "LATENCY_BUCKETS_S", "FIT_BUCKETS_S", "SPREAD_BUCKETS",
           "FIT_RESULTS", "SKIP_REASONS"]

log = logging.getLogger("distractd.daemon")

LATENCY_BUCKETS_S = (50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3,
                     0.1, 0.25, 1.0)
"""Processing-latency histogram buckets in seconds, from 50 µs."""

FIT_BUCKETS_S = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
"""Adaptation-fit histogram buckets in seconds."""

SPREAD_BUCKETS = (0.5, 0.67, 0.8, 0.9, 0.95, 1.0, 1.05, 1.1, 1.25, 1.5, 2.0)
"""Buckets of a refit's score spread ratio (after over before, on the stream's kept windows)."""

FIT_RESULTS = ("done", "refused", "failed")
"""How an adaptation fit ends (``distractd_adaptation_fits_total{result}``)."""

SKIP_REASONS = ("unsupported_model", "queue_full", "stale")
"""Why an adaptation fit is not run or not used (``distractd_adaptation_skipped_total``)."""


class Metrics:
    """Every ``distractd_*`` metric family.

    Parameters
    ----------
    registry : prometheus_client.CollectorRegistry
        Where the families are registered (a fresh one per daemon and per test).
    per_stream : bool, default=False
        Also export ``distractd_stream_input_rate_hertz{stream}`` at scrape time.

    Attributes
    ----------
    streams : tuple of (str, float)
        ``(stream_id, input_rate_hz)`` of every active stream; the service replaces the whole tuple,
        the scrape thread only reads it.
    """

    def __init__(self, registry, per_stream=False):
        disable_created_metrics()
        self.registry = registry
        self.per_stream = per_stream
        self.streams = ()
        self.build_info = Info("distractd_build", "distractd build.", registry=registry)
        self.build_info.info({"version": __version__})
        self.model_info = Gauge("distractd_model_info", "The loaded model (value 1).",
                                ["model_id", "kind"], registry=registry)
        self.model_reloads = Counter("distractd_model_reloads_total",
                                     "Model and configuration reloads by result.", ["result"],
                                     registry=registry)
        self.reload_ok = self.model_reloads.labels(result="success")
        self.reload_failed = self.model_reloads.labels(result="failure")
        self.messages_received = Counter("distractd_messages_received_total",
                                         "Input messages received.", registry=registry)
        rejected = Counter("distractd_messages_rejected_total",
                           "Input messages dropped, by reason.", ["reason"], registry=registry)
        self.messages_rejected = {r: rejected.labels(reason=r) for r in MESSAGE_REJECT_REASONS}
        self.messages_lost = Counter("distractd_messages_lost_total",
                                     "Block messages missing by sequence-number gaps.",
                                     registry=registry)
        self.seq_resets = Counter("distractd_seq_resets_total",
                                  "Sequence numbers taken as a restart of their stream's count "
                                  "(backwards, or a jump beyond what the stream could have sent), "
                                  "not as lost messages.", registry=registry)
        refused = Counter("distractd_connections_refused_total",
                          "Peer connections to the bound input and output sockets refused, by "
                          "reason.", ["reason"], registry=registry)
        self.connections_refused = {r: refused.labels(reason=r) for r in REFUSAL_REASONS}
        self.connections = Gauge("distractd_connections",
                                 "Peer connections past their handshake on the bound input and "
                                 "output sockets.", registry=registry)
        closed = Counter("distractd_connections_closed_total",
                         "Established peer connections that ended, by socket: the peer closed, or "
                         "(input) ZeroMQ dropped it for a message over 4 x "
                         "input.max_message_bytes.", ["socket"], registry=registry)
        self.connections_closed = {s: closed.labels(socket=s) for s in ("input", "output")}
        self.samples_received = Counter("distractd_samples_received_total",
                                        "Samples in accepted messages.", registry=registry)
        samples_rejected = Counter("distractd_samples_rejected_total",
                                   "Samples dropped or flagged by the pipeline's validation, or "
                                   "vehicle samples dropped by the join, by reason.", ["reason"],
                                   registry=registry)
        self.samples_rejected = {r: samples_rejected.labels(reason=r)
                                 for r in SAMPLE_REJECT_REASONS + VEHICLE_REJECT_REASONS}
        self.vehicle_samples = Counter("distractd_vehicle_samples_total",
                                       "Samples in accepted vehicle messages.", registry=registry)
        windows = Counter("distractd_windows_classified_total",
                          "Windows classified, by published state.", ["state"], registry=registry)
        self.windows = {s: windows.labels(state=s) for s in STATE_NAMES.values()}
        self.transitions = Counter("distractd_state_transitions_total",
                                   "Changes of a stream's published state.", registry=registry)
        self.segments = Counter("distractd_segments_finalised_total",
                                "Segments committed by the online segmenter.", registry=registry)
        alerts = Counter("distractd_glance_alerts_total",
                         "Glance alerts raised (Euro NCAP long distraction, visual attention "
                         "time-sharing), by kind.", ["kind"], registry=registry)
        fatigue = Counter("distractd_fatigue_alerts_total",
                          "Fatigue alerts raised from the eyelid (Euro NCAP microsleep, sleep, "
                          "drowsiness), by kind.", ["kind"], registry=registry)
        unresponsive = Counter("distractd_unresponsive_alerts_total",
                               "Unresponsive driver alerts: the escalation reached its top level "
                               "(eyes closed or away 11 s in one episode).", registry=registry)
        self.alerts = {**{kind: alerts.labels(kind=kind) for kind in ALERT_KINDS},
                       **{kind: fatigue.labels(kind=kind) for kind in FATIGUE_ALERT_KINDS},
                       "unresponsive": unresponsive}
        """The counter of each alert kind an ``alert`` event can carry."""
        self.latency = Histogram("distractd_processing_latency_seconds",
                                 "Time from the arrival of the message completing a window to the "
                                 "publication of its state.", buckets=LATENCY_BUCKETS_S,
                                 registry=registry)
        self.input_wall_rate = Gauge("distractd_input_wall_rate_hertz",
                                     "Samples received per second of wall time over the last "
                                     "service.status_interval_s, summed over streams (a replay at "
                                     "10x real time reads 10x its recorded rate).",
                                     registry=registry)
        self.loop_status = Gauge("distractd_loop_status_timestamp_seconds",
                                 "Unix time of the loop's last status update (every "
                                 "service.status_interval_s): one that stops advancing means a "
                                 "stalled loop, while /metrics, served by threads of its own, "
                                 "still answers.", registry=registry)
        self.active_streams = Gauge("distractd_active_streams", "Streams with a live session.",
                                    registry=registry)
        self.streams_expired = Counter("distractd_streams_expired_total",
                                       "Sessions closed after sessions.idle_timeout_s of silence.",
                                       registry=registry)
        stream_errors = Counter("distractd_stream_errors_total",
                                "Unexpected exceptions caught in one stream's processing, by "
                                "stage; the stream's session was dropped and the others went on "
                                "(a fault of the daemon, with its traceback at debug level).",
                                ["stage"], registry=registry)
        self.stream_errors = {stage: stream_errors.labels(stage=stage) for stage in STREAM_STAGES}
        self.field_mismatch = Counter("distractd_stream_field_mismatch_total",
                                      "Sessions whose stream lacks every field some feature of the "
                                      "loaded model is computed from (checked once per session, "
                                      "at its first windows).", registry=registry)
        undecided = Counter("distractd_undecided_windows_total",
                            "Windows published unknown, by reason: no_gaze (the stream delivered "
                            "no gaze), fields (it lacks fields every sub-model needs), rate (its "
                            "rate is too low for every sub-model), warming (the stream's baseline "
                            "is warming up), features (a feature of the chosen sub-model had no "
                            "data in the window), quality (valid samples below "
                            "sessions.min_quality).", ["reason"], registry=registry)
        self.undecided = {r: undecided.labels(reason=r) for r in UNDECIDED_REASONS}
        chosen = Counter("distractd_stream_submodels_total",
                         "Sessions by the sub-model of the loaded model chosen to score them "
                         "(by the fields and rate of the stream), or none.", ["submodel"],
                         registry=registry)
        self.submodels = {name: chosen.labels(submodel=name)
                          for name in ("main", *SUBMODELS, "none")}
        lsl_streams = Counter("distractd_lsl_streams_total",
                              "LSL streams resolved by lsl.inlets, by outcome: opened, refused "
                              "(string channels, or no channel maps to a canonical field), "
                              "timed_out (no description or clock offset within lsl.timeout_s), "
                              "lost (the outlet went away unrecoverably), dropped (a chunk the "
                              "mapping cannot read).", ["outcome"], registry=registry)
        self.lsl_streams = {o: lsl_streams.labels(outcome=o) for o in LSL_OUTCOMES}
        self.pupil_reconnects = Counter("distractd_pupil_reconnects_total",
                                        "Moves of the Pupil backbone subscription to the SUB_PORT "
                                        "Pupil Remote named after the backbone went silent (a "
                                        "Pupil Capture restart).", registry=registry)
        pupil_refused = Counter("distractd_pupil_refused_total",
                                "Pupil datums of a gaze mapping distractd cannot read, by mapping: "
                                "gaze_2d (Capture's 2D gaze mapper), surface (surface-mapped gaze "
                                "without 3-D gaze beside it); the first of each is one WARNING "
                                "line.", ["mapping"], registry=registry)
        self.pupil_refused = {m: pupil_refused.labels(mapping=m) for m in REFUSED_MAPPINGS}
        self.output_dropped = Counter("distractd_output_dropped_total",
                                      "Output messages that some subscriber did not get because "
                                      "its queue held output.sndhwm messages.", registry=registry)
        fits = Counter("distractd_adaptation_fits_total",
                       "Per-stream adaptation fits ([adaptation]) by result: done (swapped in), "
                       "refused (its held-back check fell by more than adapt's tolerance: the "
                       "stream keeps its scorer) or failed (the stream keeps its scorer).",
                       ["result"], registry=registry)
        self.fits = {r: fits.labels(result=r) for r in FIT_RESULTS}
        profiles = Counter("distractd_profiles_total",
                           "Driver profiles ([profiles]) by outcome: loaded (a named stream "
                           "started from its driver's profile), new (no profile yet), saved (a "
                           "named stream's profile written at its end), unwritable (the write "
                           "failed), expired (deleted after profiles.max_age_days unused).",
                           ["outcome"], registry=registry)
        self.profiles = {o: profiles.labels(outcome=o) for o in PROFILE_OUTCOMES}
        rejected_profiles = Counter("distractd_profiles_rejected_total",
                                    "Profile files not used, by reason: unreadable, bad_header, "
                                    "bad_field, other_pipeline (the stream starts cold), "
                                    "other_model (only its adapted model is dropped).",
                                    ["reason"], registry=registry)
        self.profiles_rejected = {r: rejected_profiles.labels(reason=r)
                                  for r in PROFILE_REJECT_REASONS}
        self.fit_spread = Histogram("distractd_adaptation_score_spread_ratio",
                                    "Standard deviation of the published scores of a stream's kept "
                                    "windows under a finished fit over that under the loaded "
                                    "model (done and refused fits).",
                                    buckets=SPREAD_BUCKETS, registry=registry)
        skipped = Counter("distractd_adaptation_skipped_total",
                          "Adaptation fits not run or not used, by reason: unsupported_model (the "
                          "loaded model cannot adapt; once per stream), queue_full (a due stream "
                          "refused by a full queue of adaptation.queue_size fits; it tries again), "
                          "stale (the stream ended or the model was replaced before the fit was "
                          "swapped in).", ["reason"], registry=registry)
        self.fits_skipped = {r: skipped.labels(reason=r) for r in SKIP_REASONS}
        self.fit_seconds = Histogram("distractd_adaptation_fit_seconds",
                                     "Wall time of one adaptation fit (sent to the fit worker process, run, read back).",
                                     buckets=FIT_BUCKETS_S, registry=registry)
        self.fit_cpu = Counter("distractd_adaptation_cpu_seconds",
                               "CPU time of the adaptation fits in the fit worker process.", registry=registry)
        self.adapted_streams = Gauge("distractd_adapted_streams",
                                     "Streams scored by a model adapted to them (refreshed every "
                                     "service.status_interval_s).", registry=registry)
        registry.register(_StreamCollector(self))
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)

    def set_model(self, model_id, kind):
        self.model_info.clear()
        self.model_info.labels(model_id=model_id, kind=kind).set(1)


class _StreamCollector:
    """Scrape-time values computed from :attr:`Metrics.streams`."""

    def __init__(self, metrics):
        self.metrics = metrics

    def describe(self):
        return []

    def collect(self):
        streams = self.metrics.streams
        total = GaugeMetricFamily("distractd_input_rate_hertz",
                                  "Input sample rate summed over active streams, measured in the "
                                  "streams' own time (samples per second of sample timestamps; "
                                  "distractd_input_wall_rate_hertz is per second of wall time).")
        total.add_metric([], sum(rate for _, rate in streams if math.isfinite(rate)))
        yield total
        if self.metrics.per_stream:
            each = GaugeMetricFamily("distractd_stream_input_rate_hertz",
                                     "Input sample rate of each active stream, in its own time.",
                                     labels=["stream"])
            for stream, rate in streams:
                each.add_metric([stream], rate)
            yield each


class MetricsServer:
    """``GET /metrics`` served by a small pool of threads of its own from a cached exposition.

    prometheus-client's ``start_http_server`` builds the exposition in a new thread per scrape, so
    concurrent scrapes hold the GIL in parallel and stall the loop thread (200 concurrent scrapes
    raised ingest latency from a p99 of 2.5 ms to about 1 s). Here one thread accepts connections
    (listen backlog :data:`BACKLOG`) and hands them to :data:`WORKERS` threads. A worker gives its
    client :data:`CLIENT_TIMEOUT_S` in all to send its request head, not per byte, so a slowloris
    client that trickles a byte at a time holds one worker for at most that long and the other
    workers go on answering. Answers take turns: each rests :data:`PAUSE_S` in its turn (a
    thread always ready to run would make the loop wait for the GIL at every turn), and the
    exposition is rebuilt only when the last one is ``cache_s`` old, so the loop loses at most one
    build per ``cache_s`` and format and a bounded share of the GIL to scrapes, however many
    arrive. The format follows the request's ``Accept`` (OpenMetrics for
    ``application/openmetrics-text``, else Prometheus text) and the body is gzip-compressed when
    ``Accept-Encoding`` names gzip, both decided by prometheus-client's ``choose_encoder`` and
    ``gzip_accepted``; each variant is cached on its own. A
    scraper that goes away or times out is no error; anything else a scrape raises is logged as one
    line.

    Parameters
    ----------
    registry : CollectorRegistry
    address : str
        IPv4 or IPv6 address to bind (``metrics.address``).
    port : int
        TCP port (``metrics.port``; 0 picks a free one).
    cache_s : float
        Longest age of a served exposition, in seconds (``metrics.cache_s``; 0 builds one per
        scrape).

    Attributes
    ----------
    port : int
        The bound port.
    """

    BACKLOG = 1024
    WORKERS = 4
    CLIENT_TIMEOUT_S = 2.0
    MAX_HEAD_BYTES = 8192
    PAUSE_S = 0.01

    def __init__(self, registry, address, port, cache_s):
        self.registry = registry
        self.cache_s = cache_s
        self._cache = {}  # (content type, gzip) -> (monotonic s built, body)
        self._turn = threading.Lock()
        server_class = _HTTPServer6 if ":" in address else _HTTPServer
        self._http = server_class((address, port), _handler(self))
        self.port = self._http.server_address[1]
        self._threads = [threading.Thread(target=self._http.serve_forever,
                                          name="distractd-metrics", daemon=True)]
        self._threads += [threading.Thread(target=self._http.work, name=f"distractd-metrics-{i}",
                                           daemon=True) for i in range(self.WORKERS)]

    def start(self):
        for thread in self._threads:
            thread.start()
        return self

    def close(self):
        """Stop serving and close the listening socket (a worker ends after its client)."""
        if self._threads[0].is_alive():
            self._http.shutdown()
            for _ in range(self.WORKERS):
                self._http.pending.put(None)
        self._http.server_close()

    def exposition(self, accept, accept_encoding):
        """The registry's exposition negotiated by the request's ``Accept`` and
        ``Accept-Encoding`` headers (None when absent), at most ``cache_s`` old, in this worker's
        turn: ``(body, content_type, gzipped)``."""
        encoder, content_type = choose_encoder(accept)
        compress = gzip_accepted(accept_encoding)
        with self._turn:
            now = time.monotonic()
            built_s, body = self._cache.get((content_type, compress), (-math.inf, b""))
            if now - built_s >= self.cache_s:
                body = encoder(self.registry)
                if compress:
                    body = gzip.compress(body)
                self._cache[content_type, compress] = now, body
            time.sleep(self.PAUSE_S)
            return body, content_type, compress


class _HTTPServer(HTTPServer):
    """Accepts in ``serve_forever`` and queues each connection for a worker running :meth:`work`.

    The queue holds one connection per worker; when it is full, accepting waits and further clients
    wait in the listen backlog, so a flood of connections does not hold descriptors.
    """

    request_queue_size = MetricsServer.BACKLOG
    allow_reuse_address = True

    def __init__(self, address, handler):
        super().__init__(address, handler)
        self.pending = queue.Queue(MetricsServer.WORKERS)

    def process_request(self, request, client_address):
        self.pending.put((request, client_address))

    def work(self):
        """Answer queued connections until :meth:`MetricsServer.close` queues ``None``."""
        while (item := self.pending.get()) is not None:
            request, client_address = item
            try:
                self.finish_request(request, client_address)
            except Exception:
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)

    def handle_error(self, request, client_address):
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError)):
            log.warning("metrics: a scrape from %s failed: %s: %s", client_address[0],
                        type(error).__name__, error)


class _HTTPServer6(_HTTPServer):
    address_family = socket.AF_INET6


def _read_head(connection, timeout_s, limit):
    """The request head, read within ``timeout_s`` in all (a socket timeout applies per read).

    Reading stops at the blank line ending the head, at ``limit`` bytes or when the client closes;
    the handler parses what came. Raises TimeoutError when the head is not complete in time.
    """
    deadline = time.monotonic() + timeout_s
    head = b""
    while b"\r\n\r\n" not in head and b"\n\n" not in head and len(head) < limit:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"request head incomplete after {timeout_s} s")
        connection.settimeout(remaining)
        chunk = connection.recv(limit - len(head))
        if not chunk:
            break
        head += chunk
    connection.settimeout(timeout_s)
    return head


def _handler(server):
    class Handler(BaseHTTPRequestHandler):
        timeout = MetricsServer.CLIENT_TIMEOUT_S

        def setup(self):
            """Read the whole request head under one deadline, then parse it from memory."""
            super().setup()
            self.rfile.close()
            self.rfile = io.BytesIO(_read_head(self.connection, self.timeout,
                                               MetricsServer.MAX_HEAD_BYTES))

        def do_GET(self):  # noqa: N802 (the http.server protocol)
            if self.path.split("?", 1)[0] not in ("/metrics", "/"):
                self.send_error(404, "only /metrics is served")
                return
            body, content_type, gzipped = server.exposition(self.headers.get("Accept"),
                                                            self.headers.get("Accept-Encoding"))
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            if gzipped:
                self.send_header("Content-Encoding", "gzip")
            self.send_header("Vary", "Accept, Accept-Encoding")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_):
            """Scrapes are not logged (the journal would fill with them)."""

    return Handler
