"""Prometheus metrics of the daemon, every family built once against an injected registry.

Label values are bounded and pre-bound at construction (rejection reasons, states, reload results),
so a scrape shows every series from the start and the hot path does no label look-ups. Per-stream
values are not labelled series by default (streams come and go; their ids are unbounded); they are
summed at scrape time by a custom collector, and exported per stream only when
``metrics.per_stream`` is enabled.
"""

import math

from prometheus_client import Counter, Gauge, Histogram, Info
from prometheus_client.core import GaugeMetricFamily

from .. import __version__
from ..pipeline import ALERT_KINDS, REJECT_REASONS
from ..pipeline.formats import REJECTION_REASONS, STATES
from ._gate import REFUSAL_REASONS

__all__ = ["Metrics", "LATENCY_BUCKETS_S"]

LATENCY_BUCKETS_S = (50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3,
                     0.1, 0.25, 1.0)
"""Processing-latency histogram buckets in seconds, from 50 µs."""



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
        self.messages_rejected = {r: rejected.labels(reason=r) for r in REJECTION_REASONS}
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
                                   "Samples dropped or flagged by the pipeline's validation, by "
                                   "reason.", ["reason"], registry=registry)
        self.samples_rejected = {r: samples_rejected.labels(reason=r) for r in REJECT_REASONS}
        windows = Counter("distractd_windows_classified_total",
                          "Windows classified, by published state.", ["state"], registry=registry)
        self.windows = {s: windows.labels(state=s) for s in STATES}
        self.transitions = Counter("distractd_state_transitions_total",
                                   "Changes of a stream's published state.", registry=registry)
        self.segments = Counter("distractd_segments_finalised_total",
                                "Segments committed by the online segmenter.", registry=registry)
        alerts = Counter("distractd_glance_alerts_total",
                         "Glance alerts raised (Euro NCAP long distraction, visual attention "
                         "time-sharing), by kind.", ["kind"], registry=registry)
        self.alerts = {kind: alerts.labels(kind=kind) for kind in ALERT_KINDS}
        self.latency = Histogram("distractd_processing_latency_seconds",
                                 "Time from the arrival of the message completing a window to the "
                                 "publication of its state.", buckets=LATENCY_BUCKETS_S,
                                 registry=registry)
        self.active_streams = Gauge("distractd_active_streams", "Streams with a live session.",
                                    registry=registry)
        self.streams_expired = Counter("distractd_streams_expired_total",
                                       "Sessions closed after input.idle_timeout_s of silence.",
                                       registry=registry)
        self.field_mismatch = Counter("distractd_stream_field_mismatch_total",
                                      "Sessions whose stream lacks every field some feature of the "
                                      "loaded model is computed from (checked once per session, "
                                      "at its first windows).", registry=registry)
        registry.register(_StreamCollector(self))

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
                                  "Measured input sample rate summed over active streams.")
        total.add_metric([], sum(rate for _, rate in streams if math.isfinite(rate)))
        yield total
        if self.metrics.per_stream:
            each = GaugeMetricFamily("distractd_stream_input_rate_hertz",
                                     "Measured input sample rate of each active stream.",
                                     labels=["stream"])
            for stream, rate in streams:
                each.add_metric([stream], rate)
            yield each
