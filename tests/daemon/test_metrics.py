"""Metric families: names, base units, buckets, pre-bound children, scrape-time stream values;
the real daemon's /metrics negotiated as Prometheus text or OpenMetrics, plain or gzip."""

import gzip
import re
import select
import socket
import subprocess
import threading
import time
import urllib.request

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families

from distractd import __version__
from distractd.daemon import DEFAULTS, LATENCY_BUCKETS_S, Metrics
from distractd.pipeline.formats import MESSAGE_REJECT_REASONS
from distractd.simulators import replay, simulate_drive


def _families(registry):
    return {f.name: f for f in text_string_to_metric_families(generate_latest(registry).decode())}


def test_every_family_is_present_before_any_traffic():
    metrics = Metrics(CollectorRegistry())
    families = _families(metrics.registry)
    for name in ("distractd_build_info", "distractd_model_info", "distractd_model_reloads",
                 "distractd_messages_received", "distractd_messages_rejected",
                 "distractd_messages_lost", "distractd_samples_received",
                 "distractd_samples_rejected", "distractd_windows_classified",
                 "distractd_state_transitions", "distractd_segments_finalised",
                 "distractd_processing_latency_seconds", "distractd_active_streams",
                 "distractd_streams_expired", "distractd_input_rate_hertz"):
        assert name in families, name
    reasons = {s.labels["reason"] for s in families["distractd_messages_rejected"].samples
               if s.name.endswith("_total")}
    assert reasons == set(MESSAGE_REJECT_REASONS)
    states = {s.labels["state"] for s in families["distractd_windows_classified"].samples
              if s.name.endswith("_total")}
    assert states == {"attentive", "distracted", "unknown"}
    build = families["distractd_build_info"].samples[0]
    assert build.labels == {"version": __version__} and build.value == 1


def test_latency_buckets_are_sub_millisecond_seconds():
    assert LATENCY_BUCKETS_S[0] == 50e-6
    assert sum(b < 1e-3 for b in LATENCY_BUCKETS_S) == 4
    metrics = Metrics(CollectorRegistry())
    metrics.latency.observe(70e-6)
    buckets = {s.labels["le"]: s.value for s in
               _families(metrics.registry)["distractd_processing_latency_seconds"].samples
               if s.name.endswith("_bucket")}
    assert buckets["5e-05"] == 0 and buckets["0.0001"] == 1 and buckets["+Inf"] == 1


def test_stream_values_are_summed_unless_per_stream():
    for per_stream in (False, True):
        metrics = Metrics(CollectorRegistry(), per_stream=per_stream)
        metrics.streams = (("a", 60.0), ("b", 59.5))
        families = _families(metrics.registry)
        assert families["distractd_input_rate_hertz"].samples[0].value == 119.5
        if per_stream:
            values = {s.labels["stream"]: s.value
                      for s in families["distractd_stream_input_rate_hertz"].samples}
            assert values == {"a": 60.0, "b": 59.5}
        else:
            assert "distractd_stream_input_rate_hertz" not in families


def test_model_info_holds_only_the_current_model():
    metrics = Metrics(CollectorRegistry())
    metrics.set_model("m1", "sselm")
    metrics.set_model("m2", "lapsvm")
    samples = _families(metrics.registry)["distractd_model_info"].samples
    assert [(s.labels, s.value) for s in samples] == [({"model_id": "m2", "kind": "lapsvm"}, 1)]


def test_every_sample_rejection_reason_is_pre_bound():
    from distractd.daemon._vehicle import VEHICLE_REJECT_REASONS
    from distractd.pipeline import SAMPLE_REJECT_REASONS

    metrics = Metrics(CollectorRegistry())
    metrics.samples_rejected["duplicate_t"].inc(3)
    samples = _families(metrics.registry)["distractd_samples_rejected"].samples
    totals = {s.labels["reason"]: s.value for s in samples if s.name.endswith("_total")}
    assert totals == {reason: 3.0 if reason == "duplicate_t" else 0.0
                      for reason in SAMPLE_REJECT_REASONS + VEHICLE_REJECT_REASONS}


def test_promtool_accepts_the_scrape(promtool):
    metrics = Metrics(CollectorRegistry(), per_stream=True)
    metrics.streams = (("a", 60.0),)
    metrics.set_model("m1", "sselm")
    result = subprocess.run([promtool, "check", "metrics"], input=generate_latest(metrics.registry),
                            capture_output=True, timeout=30)
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()


def test_help_texts_name_real_configuration_options():
    """Every ``section.option`` a HELP text names is an option of the configuration."""
    registry = CollectorRegistry()
    Metrics(registry)
    named = [(family.name, match.groups()) for family in registry.collect()
             for match in re.finditer(r"\b([a-z]+)\.([a-z_]+)\b", family.documentation)]
    assert ("distractd_streams_expired", ("sessions", "idle_timeout_s")) in named
    for family, (section, option) in named:
        assert section in DEFAULTS and option in DEFAULTS[section], (family, section, option)


def test_process_and_platform_collectors_are_registered():
    families = _families(Metrics(CollectorRegistry()).registry)
    assert {"process_resident_memory_bytes", "process_open_fds", "process_max_fds",
            "process_cpu_seconds", "python_info"} <= set(families)
    assert families["process_resident_memory_bytes"].samples[0].value > 0


def test_slowloris_clients_do_not_block_scrapes_and_are_closed(start_daemon):
    """Issue 23 item 8: clients trickling a request a byte at a time (each byte well within the
    per-read timeout) must not keep ``/metrics`` from answering, and the server closes them once
    their request head is overdue."""
    daemon = start_daemon()
    slow = [socket.create_connection(("127.0.0.1", daemon.metrics_port), timeout=10)
            for _ in range(6)]  # more than the server's 4 workers
    closed_by_server = set()
    stop = threading.Event()

    def trickle():
        partial = b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 60
        for i in range(len(partial)):
            for n, sock in enumerate(slow):
                if n in closed_by_server:
                    continue
                if select.select([sock], [], [], 0)[0]:
                    try:
                        data = sock.recv(4096)
                    except ConnectionError:
                        data = b""
                    if not data:
                        closed_by_server.add(n)
                        continue
                try:
                    sock.sendall(partial[i:i + 1])
                except ConnectionError:
                    closed_by_server.add(n)
            if stop.is_set() and len(closed_by_server) == len(slow):
                return
            time.sleep(0.5)

    trickler = threading.Thread(target=trickle)
    trickler.start()
    try:
        for _ in range(4):
            url = f"http://127.0.0.1:{daemon.metrics_port}/metrics"
            with urllib.request.urlopen(url, timeout=10) as response:
                assert response.status == 200
                assert b"distractd_build_info" in response.read()
    finally:
        stop.set()
        trickler.join()
        for sock in slow:
            sock.close()
    assert closed_by_server == set(range(len(slow)))


def test_no_created_series():
    """Issue 24: 22 of 66 stored series were prometheus-client's automatic ``*_created``."""
    metrics = Metrics(CollectorRegistry())
    metrics.messages_received.inc()
    metrics.latency.observe(1e-3)
    names = [s.name for f in _families(metrics.registry).values() for s in f.samples]
    assert "distractd_messages_received_total" in names
    assert not [name for name in names if name.endswith("_created")]


def _get(port, headers):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers, response.read()


def test_scrape_negotiates_openmetrics_and_gzip(start_daemon):
    """Issue 24: the real daemon answers Prometheus text by default, OpenMetrics when asked, each
    gzip-compressed when ``Accept-Encoding`` allows, and both parse to the same families."""
    daemon = start_daemon()
    openmetrics = "application/openmetrics-text; version=1.0.0,text/plain;version=0.0.4;q=0.5"
    parsed = {}
    for accept in (None, openmetrics):
        for encoding in (None, "gzip, deflate"):
            headers = {k: v for k, v in (("Accept", accept), ("Accept-Encoding", encoding)) if v}
            answer, body = _get(daemon.metrics_port, headers)
            assert answer["Content-Encoding"] == ("gzip" if encoding else None)
            text = (gzip.decompress(body) if encoding else body).decode("utf-8")
            if accept:
                assert answer["Content-Type"].startswith("application/openmetrics-text;")
                assert text.endswith("# EOF\n")
                families = {f.name: f for f in openmetrics_families(text)}
            else:
                assert answer["Content-Type"].startswith("text/plain; version=0.0.4")
                assert "# EOF" not in text
                families = {f.name: f for f in text_string_to_metric_families(text)}
            assert not [s.name for f in families.values() for s in f.samples
                        if s.name.endswith("_created")]
            parsed[accept, encoding] = families
    samples = {key: {s.name: s for f in families.values() for s in f.samples}
               for key, families in parsed.items()}
    for key, families in parsed.items():
        assert samples[key]["distractd_build_info"].labels == {"version": __version__}
        assert families["distractd_windows_classified"].type == "counter"
        assert families["distractd_processing_latency_seconds"].type == "histogram"
        # the same series whatever the format and encoding
        assert set(samples[key]) == set(samples[None, None])
    assert parsed[openmetrics, None]["distractd_build"].type == "info"  # OpenMetrics' own type
    assert daemon.stop() == 0


def test_wall_rate_counts_arrivals_and_stream_rate_sample_time(start_daemon):
    """Issue 24: a 60 Hz drive replayed at 20x real time reads about 60 Hz in stream time
    (``distractd_input_rate_hertz``) and many times that in wall time
    (``distractd_input_wall_rate_hertz``), which was missing."""
    daemon = start_daemon()
    drive = simulate_drive(3, duration_s=90.0)
    sender = threading.Thread(target=replay, args=([drive], daemon.input),
                              kwargs={"speed": 20.0, "block_samples": 30})
    sender.start()
    stream_rates, wall_rates = [], []
    while sender.is_alive():
        families = {f.name: f for f in text_string_to_metric_families(daemon.scrape())}
        stream_rates.append(families["distractd_input_rate_hertz"].samples[0].value)
        wall_rates.append(families["distractd_input_wall_rate_hertz"].samples[0].value)
        time.sleep(0.3)
    sender.join()
    assert max(stream_rates) == pytest.approx(60.0, rel=0.05)
    assert max(wall_rates) > 2 * max(stream_rates)
    assert daemon.stop() == 0
