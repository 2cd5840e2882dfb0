"""Daemon load benchmark: the steady state of K streams at 60 Hz beside a lean receiver.

Three parts, each printing one JSON line per measurement (and appending it to ``--out``):

1. ``single``: one stream in-process (session + detector + smoother + segmenter, no sockets), fed a
   simulated drive in blocks of 10 samples; processing latency per completed window (ms).
2. ``load``: ``distractd run`` as a subprocess with the shipped model and, in the same run, a lean
   receiver (a plain Python process: SUB recv + msgpack decode + append to a list, nothing else),
   the ceiling. One or more sender processes publish every message to both at once from a
   pre-encoded message list (one simulated drive; the K streams share its payloads and differ by
   topic, by where in the drive they start, spread over ``--spread`` s so that their segments and
   events do not fall together, and by a send schedule staggered over one hop, so that their
   windows complete at different moments). The drive lasts ``--duration`` s (default 140) and every figure is taken over the
   last ``--window`` s of it (default 60, ending 2 s before the drive does), after the per-stream
   baselines' 60 s warm-up, so the windows are scored with ready baselines (the fraction of states
   saying ``"baseline": "ready"`` is reported). Per configuration (form x streams x
   segmentation) it reports:
   - CPU per sample over the window: the daemon's process, its loop thread (the main thread,
     read from ``/proc/<pid>/task/<tid>/stat``), every other thread by its kernel name (libzmq's
     ``ZMQbg/IO/0``; Python threads keep the process name), the lean receiver's process, and the
     daemon's ratios to the lean receiver, all per sample sent in the window; and, since a daemon
     that falls behind processes fewer than were sent, the fraction it processed (its own
     ``messages_received`` counter) and its process CPU per sample processed;
   - lag p50/p99/p99.9/max (ms) of the states of windows completed in the measured window: a
     state's arrival at this process's subscriber minus the moment the sender sent the message
     holding the sample that completed the window (two loopback hops and this subscriber
     included); the same from the message's scheduled send (adds the sender's lateness); the
     daemon's own arrival-to-publication histogram (bucket upper bounds);
   - the sender's achieved rate against its schedule over the window and its lateness, so a
     sender that cannot keep up shows; drops (messages sent minus those the daemon and the lean
     receiver counted); RSS per stream.
   With ``--scrape-storm N`` a separate process keeps N concurrent scrapes of ``/metrics`` going
   (each run is then done twice, without and with the storm). With ``--adaptation AFTER_S`` each
   run is also done with ``[adaptation]`` on, reporting the fits done and refused. With
   ``--set KEY=VALUE ...`` (repeatable: one variant each) each run is also done with those
   daemon overrides, so a setting is compared with the default in the same run.
3. ``channels``: CPU per sample of the per-stream work (session: pipeline, decision rule) with the
   shipped model's pipeline settings and with its per-stream baselines and glance channel turned
   off, in-process over the same streams (issue 13: the channels may cost <= 25 %); and with the
   vehicle channel off, and on a stream whose car's fields are blanked (issue 33: the car may cost
   <= 15 %).

The simulated drive carries the car's signals in every sample (the vehicle channel runs on them):
the load runs send them inside the eye messages. With ``--vehicle-rate HZ ...`` each run is also
done with each stream's car on its own topic (``vehicle.<stream>``, the form the daemon joins by
stream and time): the eye messages without the car's fields, and the car's samples at HZ on their
own clock (the drive's latest values at each tick, ``t`` on the eyes' time base), ``--vehicle-block``
of them per block message, sent when the last is taken, to the daemon and the lean receiver alike;
0 is the car inside the eye messages. CPU per sample stays per eye sample; the record names the rate
and gives the car's samples sent, those the daemon counted and those its join dropped, by reason.

Run: ``.venv/bin/python benchmarks/daemon_load.py [--block-streams 300 1000] [--map-streams 300]
[--segmentation on off] [--duration 140] [--window 60] [--senders 1] [--out results.jsonl]
[--quick] [--parts single load channels] [--set section.key=value ...] [--vehicle-rate 0 10 50]
[--vehicle-block 1]``.
Timings depend on the machine's load: each line carries the 1-minute load average; compare the
daemon with the lean receiver of the same line, not absolute times across runs.
"""

import argparse
import dataclasses
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgpack
import numpy as np
import zmq
from threadpoolctl import threadpool_limits

from distractd.daemon import Model, Session, decision_options, default_model_path, load_config
from distractd.daemon._vehicle import VEHICLE_REJECT_REASONS
from distractd.pipeline import PipelineConfig
from distractd.pipeline.formats import (
    FIELD_INDEX, FIELDS, VEHICLE_FIELDS, decode_output, encode_block, encode_map,
)
from distractd.simulators import NotifyReceiver, free_port, simulate_drive

BLOCK_SAMPLES = 10
CAR_FIELDS = ("t", *VEHICLE_FIELDS)
"""The columns of a car's own messages: its clock and its signals."""

SCRAPER = """
import sys, threading, urllib.request
url, n = sys.argv[1], int(sys.argv[2])
def scrape():
    while True:
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                response.read()
        except OSError:
            pass
for _ in range(n):
    threading.Thread(target=scrape, daemon=True).start()
threading.Event().wait()
"""
"""N threads scraping a URL in a loop until killed."""


def _percentiles(values_s, scale=1e3):
    values = np.asarray(values_s) * scale
    if not values.size:
        return {"p50": None, "p99": None, "p999": None, "max": None}
    p50, p99, p999 = np.percentile(values, [50, 99, 99.9])
    return {"p50": round(float(p50), 3), "p99": round(float(p99), 3),
            "p999": round(float(p999), 3), "max": round(float(values.max()), 3)}


def single_stream(recording, segmentation):
    """Per-window processing latency of one stream, in-process."""
    model = Model(default_model_path())
    config = load_config()
    session = Session("one", model.pipeline_config,
                      decision_options(config, model.detector.feature_names),
                      model.segmenter(segmentation), 0.0)
    latencies = []
    samples = recording.samples
    for lo in range(0, len(samples), BLOCK_SAMPLES):
        start = time.perf_counter()
        block = samples[lo:lo + BLOCK_SAMPLES]
        session.accept(None, 0.0)
        windows = session.process(block)
        if len(windows):
            scores = np.full(len(windows), np.nan)
            finite = np.isfinite(windows.X).all(axis=1)
            if finite.any():
                scores[finite] = model.detector.decision_function(windows.X[finite])
            session.decide(windows, scores, model.detector.model_id)
            latencies.append((time.perf_counter() - start) / len(windows))
    return {"bench": "single", "segmentation": segmentation, "windows": len(latencies),
            "latency_ms": _percentiles(latencies)}


def _proc_cpu_s(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _proc_rss_bytes(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def _scrape(port, name):
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return None


def _histogram_quantiles(port, name, quantiles=(0.5, 0.99, 0.999)):
    """Upper bucket bounds (ms) holding the quantiles of a scraped histogram (strict JSON: None
    for the +Inf bucket)."""
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        lines = response.read().decode().splitlines()
    buckets = [(float(line.split('le="')[1].split('"')[0]), float(line.split()[-1]))
               for line in lines if line.startswith(name + "_bucket")]
    total = buckets[-1][1]
    out = {}
    for q in quantiles:
        bound = next(le for le, count in buckets if count >= q * total)
        out[f"p{str(q * 100).rstrip('0').rstrip('.').replace('.', '')}"] = (
            bound * 1e3 if math.isfinite(bound) else None)  # None: beyond the largest bucket
    return out


def channels(recording, n_streams=50):
    """CPU seconds per sample of the sessions' work with baselines and glances on and off (one
    BLAS thread, as in the daemon)."""
    model = Model(default_model_path())
    decision = decision_options(load_config(), model.detector.feature_names)
    eyes_only = recording.samples.copy()
    eyes_only[:, [FIELD_INDEX[name] for name in VEHICLE_FIELDS]] = np.nan
    out = {"bench": "channels", "streams": n_streams,
           "samples": n_streams * len(recording.samples)}
    for name, changes, samples in (
            ("on", {}, recording.samples),
            ("off", {"baseline": False, "glances": False}, recording.samples),
            ("baseline_only", {"glances": False}, recording.samples),
            ("glances_only", {"baseline": False}, recording.samples),
            ("vehicle_off", {"vehicle": False}, recording.samples),
            ("eyes_only", {}, eyes_only)):
        config = dataclasses.replace(model.pipeline_config, **changes)
        sessions = [Session(f"s{k}", config, decision, None, 0.0) for k in range(n_streams)]
        start = time.process_time()
        blas = threadpool_limits(limits=1)
        for lo in range(0, len(samples), BLOCK_SAMPLES * 3):  # one pipeline call per 0.5 s
            block = samples[lo:lo + BLOCK_SAMPLES * 3]
            pending = [(session, session.process(block)) for session in sessions]
            pending = [(session, windows) for session, windows in pending if len(windows)]
            if pending:  # the daemon classifies the windows of all streams in one call
                scores = model.scores(np.concatenate([windows.X for _, windows in pending]))
                offset = 0
                for session, windows in pending:
                    session.decide(windows, scores[offset:offset + len(windows)], "m")
                    offset += len(windows)
        blas.restore_original_limits()
        out[f"cpu_us_per_sample_{name}"] = round(1e6 * (time.process_time() - start)
                                                 / out["samples"], 3)
    out["growth_on_vs_off"] = round(out["cpu_us_per_sample_on"]
                                    / out["cpu_us_per_sample_off"] - 1, 3)
    out["car_vs_eyes_only"] = round(out["cpu_us_per_sample_on"]
                                    / out["cpu_us_per_sample_eyes_only"] - 1, 3)
    return out


SENDER = """
import json, sys, time
import msgpack, numpy as np, zmq
spec = json.loads(sys.argv[1])
with open(spec["payloads"], "rb") as f:
    payloads, due = msgpack.unpackb(f.read())
due = np.asarray(due)
streams = range(spec["first"], spec["last"])
offsets = np.asarray([spec["stagger_s"] * k / spec["n_streams"] for k in streams])
shifts = np.asarray(spec["shifts"])                # each stream's first message in the drive
origin = due[shifts] - offsets                     # each stream's clock: its first message at 0
n, n_car = spec["n_messages"], spec["vehicle_n_messages"]
topics = [b"vehicle.s-%d" % k for k in streams] + [b"samples.s-%d" % k for k in streams]

def entries(first, n):   # payload, stream and send time of each stream's n messages, stream-major
    payload_of = (np.asarray(first)[:, None] + np.arange(n)).ravel()
    return (payload_of, np.repeat(np.arange(len(shifts)), n),
            (due[payload_of].reshape(len(shifts), n) - origin[:, None]).ravel())

# The car's messages first (a car sample due with an eye message goes before it), then the eyes'.
car = entries(spec["vehicle_shifts"], n_car)
eyes = entries(shifts, n)
payload_of = np.concatenate([car[0], eyes[0]])
topic_of = np.concatenate([car[1], eyes[1] + len(shifts)])
when = np.concatenate([car[2], eyes[2]])
order = np.argsort(when, kind="stable")
when = when[order]
context = zmq.Context()
sock = context.socket(zmq.XPUB)
sock.xpub_verbose = True     # one subscription message per subscriber, not per topic
sock.sndhwm = 0
for endpoint in spec["endpoints"]:
    sock.connect(endpoint)
for _ in spec["endpoints"]:
    sock.recv()
start = spec["start_monotonic_s"]
sent_at = np.empty(len(order))
i = 0
while i < len(order):
    delay = start + when[i] - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    now = time.monotonic()
    j = max(int(np.searchsorted(when, now - start, side="right")), i + 1)
    for entry in order[i:j].tolist():   # everything due by now, in schedule order
        sock.send_multipart((topics[topic_of[entry]], payloads[payload_of[entry]]))
    sent_at[i:j] = time.monotonic()
    i = j
late = sent_at - (start + when)
is_car = (topic_of < len(shifts))[order]
per_sample = np.asarray(spec["samples_per_message"])[payload_of[order]]
eye_samples, car_samples = np.where(is_car, 0, per_sample), np.where(is_car, per_sample, 0)
w0, w1 = spec["window_monotonic_s"]
in_window = (sent_at >= w0) & (sent_at < w1)
due_in_window = (start + when >= w0) & (start + when < w1)
print(json.dumps({"messages": int(len(order)), "samples": int(eye_samples.sum()),
                  "vehicle_samples": int(car_samples.sum()),
                  "window_messages_sent": int(in_window.sum()),
                  "window_samples_sent": int(eye_samples[in_window].sum()),
                  "window_vehicle_samples_sent": int(car_samples[in_window].sum()),
                  "window_samples_due": int(eye_samples[due_in_window].sum()),
                  "late_ms_p50": float(np.percentile(late, 50) * 1e3),
                  "late_ms_p99": float(np.percentile(late, 99) * 1e3),
                  "late_ms_max": float(late.max() * 1e3)}))
sent_by_entry = np.empty(len(order))
sent_by_entry[order] = sent_at
np.save(spec["sent_path"], sent_by_entry[len(car[0]):])  # the eye messages'

sock.close(linger=5000)
context.term()
"""
"""One sender process: publishes streams [first, last) of the pre-encoded message list on its
schedule (every stream shares the payloads: stream k sends ``n_messages`` of them from its own
start in the drive, and ``vehicle_n_messages`` of the car's from ``vehicle_shifts[k]``, its send
times shifted by its stagger), to the daemon and the lean receiver at once; prints what it sent and
how late, and saves each eye message's send time (stream-major) for the lag."""

LEAN = """
import signal, sys
import msgpack, numpy as np, zmq
context = zmq.Context()
sub = context.socket(zmq.SUB)
sub.rcvhwm = 0
for topic in sys.argv[2:]:
    sub.subscribe(topic.encode())
sub.bind(sys.argv[1])
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
received = []
n_received = 0
try:
    while True:
        topic, payload = sub.recv_multipart()
        message = msgpack.unpackb(payload)
        if "data" in message:
            message["data"] = np.frombuffer(message["data"], dtype=message["dtype"])
        received.append(message)
        if len(received) == 10000:   # bounded memory: a long map-form run holds millions
            n_received += len(received)
            received.clear()
finally:
    print(n_received + len(received), flush=True)
"""
"""The lean receiver, the ceiling: SUB recv (of the topics given after the endpoint) + msgpack
decode (+ the block's bytes as an array) + append to a list (emptied every 10,000 messages),
nothing else; prints the messages received when terminated."""



def _thread_cpu_s(pid):
    """CPU seconds of each thread of ``pid``, keyed by tid: ``(name, seconds)``; the main thread
    (tid = pid, the daemon's loop) is named ``loop``, the others by their kernel name (libzmq
    names its threads ``ZMQbg/IO/0`` and ``ZMQbg/Reaper``; Python threads keep the process name)."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            text = (task / "stat").read_text()
        except OSError:  # the thread ended between the listing and the read
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text.rsplit(")", 1)[1].split()
        seconds = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        out[int(task.name)] = ("loop" if int(task.name) == pid else name, seconds)
    return out


def _thread_split(before, after):
    """CPU seconds spent between two :func:`_thread_cpu_s` readings, summed by thread name."""
    split = {}
    for tid, (name, seconds) in after.items():
        split[name] = split.get(name, 0.0) + seconds - before.get(tid, (name, 0.0))[1]
    return split


def _payloads(samples, form, per_message, t0, fields=FIELDS):
    """Messages of ``samples`` (columns ``fields``, ``t`` first) as (payloads, due_s from ``t0``,
    samples per message): one pre-encoded payload list that every stream shares (streams differ by
    topic and by their send schedule)."""
    t = samples[:, 0]
    ends = np.arange(per_message, len(t) + per_message, per_message).clip(max=len(t))
    starts = np.concatenate([[0], ends[:-1]])
    if form == "map":
        payloads = [encode_map("s", {name: value for name, value in zip(fields, row.tolist())
                                     if not math.isnan(value)})[1]
                    for row in samples]
    else:
        payloads = [encode_block("s", samples[lo:hi], seq, fields)[1]
                    for seq, (lo, hi) in enumerate(zip(starts, ends))]
    return payloads, (t[ends - 1] - t0).tolist(), (ends - starts).tolist()


def _car(recording, rate_hz):
    """The car's own samples at ``rate_hz`` (columns :data:`CAR_FIELDS`): a tick every
    1/``rate_hz`` s from the drive's start, each with the drive's latest values at or before it."""
    t = recording.t
    ticks = t[0] + np.arange(int((t[-1] - t[0]) * rate_hz) + 1) / rate_hz
    latest = np.searchsorted(t, ticks, side="right") - 1
    columns = [FIELD_INDEX[name] for name in VEHICLE_FIELDS]
    return np.column_stack([ticks, recording.samples[latest][:, columns]])


def _daemon_command(input_ep, output_ep, metrics_port, segmentation, adaptation_after_s,
                    overrides=()):
    command = [sys.executable, "-m", "distractd.cli", "run",
               "--set", f'input.bind=["{input_ep}"]', "--set", f"output.bind={output_ep}",
               "--set", f"metrics.port={metrics_port}", "--set", "service.log_level=warning",
               "--set", "output.republish_s=3600",
               "--set", f"sessions.segmentation={'true' if segmentation else 'false'}"]
    if adaptation_after_s is not None:
        command += ["--set", "adaptation.enabled=true",
                    "--set", f"adaptation.after_s={adaptation_after_s}"]
    for override in overrides:
        command += ["--set", override]
    return command


def load(recording, tmp, n_streams, form, segmentation, duration_s, window_s, block_samples=30,
         senders=1, scrape_storm=0, adaptation_after_s=None, overrides=(), vehicle_rate_hz=0.0,
         vehicle_block=1):
    """One steady-state load run of the daemon and the lean receiver side by side; returns the
    JSON-ready result. Each stream sends ``duration_s`` of ``recording`` from its own start, spread
    evenly over the rest of it, with its car on its own topic at ``vehicle_rate_hz`` (0: inside
    the eye messages); the figures are taken over the last ``window_s`` of the drive (less 2 s)."""
    input_ep = f"tcp://127.0.0.1:{free_port()}"
    lean_ep = f"tcp://127.0.0.1:{free_port()}"
    output_ep = f"tcp://127.0.0.1:{free_port()}"
    metrics_port = free_port()
    config = PipelineConfig()
    t = recording.t
    per_message = 1 if form == "map" else block_samples
    eyes = recording.samples
    if vehicle_rate_hz:
        eyes = eyes.copy()
        eyes[:, [FIELD_INDEX[name] for name in VEHICLE_FIELDS]] = np.nan
    payloads, due, samples_per_message = _payloads(eyes, form, per_message, t[0])
    n_messages = int(np.searchsorted(due, duration_s, side="left"))
    shifts = np.arange(n_streams) * (len(due) - n_messages) // n_streams
    car_shifts, n_car = [0] * n_streams, 0
    if vehicle_rate_hz:  # the car's messages follow the eyes' in the payload list
        car = _car(recording, vehicle_rate_hz)
        car_payloads, car_due, car_per_message = _payloads(car, "block", vehicle_block, t[0],
                                                           CAR_FIELDS)
        car_shifts = len(payloads) + np.searchsorted(  # from the stream's first eye sample
            car[::vehicle_block, 0], t[shifts * per_message], side="left")
        n_car = min(int(duration_s * vehicle_rate_hz) // vehicle_block,
                    len(payloads) + len(car_payloads) - int(car_shifts.max()))
        car_shifts = car_shifts.tolist()
        payloads, due = payloads + car_payloads, due + car_due
        samples_per_message = samples_per_message + car_per_message
    payload_path = Path(tmp) / f"{form}-{per_message}-car{vehicle_rate_hz:g}.msgpack"
    payload_path.write_bytes(msgpack.packb([payloads, due]))
    stagger_s = 0.5
    lean_topics = ["samples.", "vehicle."] if vehicle_rate_hz else ["samples."]
    lean = subprocess.Popen([sys.executable, "-c", LEAN, lean_ep, *lean_topics],
                            stdout=subprocess.PIPE, text=True)
    with NotifyReceiver() as notify:
        daemon = subprocess.Popen(_daemon_command(input_ep, output_ep, metrics_port, segmentation,
                                                  adaptation_after_s, overrides),
                                  env={**os.environ, "NOTIFY_SOCKET": notify.path})
        shards = []
        try:
            assert notify.wait_for("READY=1", 300), "daemon not ready"
            idle_rss = _proc_rss_bytes(daemon.pid)
            context = zmq.Context()
            sub = context.socket(zmq.SUB)
            sub.linger = 0
            sub.rcvhwm = 0
            sub.subscribe(b"state.")
            sub.connect(output_ep)
            time.sleep(0.5)
            scraper = subprocess.Popen(
                [sys.executable, "-c", SCRAPER, f"http://127.0.0.1:{metrics_port}/metrics",
                 str(scrape_storm)]) if scrape_storm else None
            start = time.monotonic() + 5.0  # the senders load their messages and connect first
            w0, w1 = start + duration_s - 2.0 - window_s, start + duration_s - 2.0
            bounds = np.linspace(0, n_streams, senders + 1).round().astype(int)
            for first, last in zip(bounds[:-1], bounds[1:]):
                spec = {"payloads": str(payload_path), "first": int(first), "last": int(last),
                        "n_streams": n_streams, "stagger_s": stagger_s, "n_messages": n_messages,
                        "shifts": shifts[first:last].tolist(),
                        "vehicle_shifts": car_shifts[first:last], "vehicle_n_messages": n_car,
                        "endpoints": [input_ep, lean_ep], "start_monotonic_s": start,
                        "samples_per_message": samples_per_message,
                        "window_monotonic_s": [w0, w1],
                        "sent_path": str(Path(tmp) / f"sent-{first}.npy")}
                shards.append(subprocess.Popen([sys.executable, "-c", SENDER, json.dumps(spec)],
                                               stdout=subprocess.PIPE, text=True))
            received_t, received_stream, received_at, ready = [], [], [], []
            marks = {}
            quiet_since = None
            while True:  # receive until the senders are done and the daemon has gone quiet
                now = time.monotonic()
                for name, at in (("w0", w0), ("w1", w1)):
                    if name not in marks and now >= at:  # CPU readings at the window's ends
                        marks[name] = (_thread_cpu_s(daemon.pid), _proc_cpu_s(lean.pid), now,
                                       _scrape(metrics_port, "distractd_messages_received_total"))
                timeout_ms = 100 if len(marks) == 2 else max(1, min(100, 1e3 * (
                    (w0 if "w0" not in marks else w1) - now)))
                if sub.poll(timeout_ms):
                    quiet_since = None
                    while True:
                        try:
                            frames = sub.recv_multipart(zmq.NOBLOCK)
                        except zmq.Again:
                            break
                        received_at.append(time.monotonic())
                        _, stream, message = decode_output(frames)
                        received_stream.append(int(stream.rsplit("-", 1)[1]))
                        received_t.append(message["t"])
                        ready.append(message.get("baseline") == "ready")
                elif all(shard.poll() is not None for shard in shards) and len(marks) == 2:
                    quiet_since = quiet_since or time.monotonic()
                    if time.monotonic() - quiet_since > 1.0:
                        break
            if scraper is not None:
                scraper.kill()
                scraper.wait()
            sent = [json.loads(shard.stdout.read()) for shard in shards]
            rss = _proc_rss_bytes(daemon.pid)
            received_msgs = _scrape(metrics_port, "distractd_messages_received_total")
            daemon_latency = _histogram_quantiles(metrics_port,
                                                  "distractd_processing_latency_seconds")
            car_counted = _scrape(metrics_port, "distractd_vehicle_samples_total")
            car_rejected = {reason: _scrape(metrics_port,
                                            f'distractd_samples_rejected_total{{reason="{reason}"}}')
                            for reason in VEHICLE_REJECT_REASONS}
            fits = {name: _scrape(metrics_port, metric) for name, metric in (
                ("done", 'distractd_adaptation_fits_total{result="done"}'),
                ("refused", 'distractd_adaptation_fits_total{result="refused"}'),
                ("queue_full", 'distractd_adaptation_skipped_total{reason="queue_full"}'),
                ("cpu_s", "distractd_adaptation_cpu_seconds_total"))}
            sub.close()
            context.term()
        finally:
            for shard in shards:
                if shard.poll() is None:
                    shard.kill()
                    shard.wait()
            daemon.terminate()
            daemon.wait(30)
            lean.terminate()
            lean_received = lean.stdout.read().strip()
            lean.wait(30)
    window_samples = sum(s["window_samples_sent"] for s in sent)
    window_due = sum(s["window_samples_due"] for s in sent)
    messages_sent = sum(s["messages"] for s in sent)
    (threads0, lean0, at0, counted0), (threads1, lean1, at1, counted1) = marks["w0"], marks["w1"]
    counted_samples = (counted1 - counted0) * window_samples / max(sum(
        s["window_messages_sent"] for s in sent), 1)  # the daemon counts messages, not samples
    split = _thread_split(threads0, threads1)
    daemon_cpu_s = sum(split.values())
    lean_cpu_s = lean1 - lean0
    # lag: state received minus the send of the message holding the sample completing its window
    sent_at = np.concatenate([np.load(Path(tmp) / f"sent-{first}.npy")
                              for first in bounds[:-1]]).reshape(n_streams, n_messages)
    stream = np.asarray(received_stream, dtype=int)
    completing = np.searchsorted(t, np.asarray(received_t) + config.lag_s - 1e-9, side="left")
    message = np.clip(completing // per_message - shifts[stream], 0, n_messages - 1)  # the stream's
    due = np.asarray(due)
    scheduled = (start + due[shifts[stream] + message] - due[shifts[stream]]
                 + stagger_s * stream / n_streams)
    in_window = (scheduled >= w0) & (scheduled < w1)
    lag = (np.asarray(received_at) - sent_at[stream, message])[in_window]
    lag_from_schedule = (np.asarray(received_at) - scheduled)[in_window]
    per_sample = 1e6 / max(window_samples, 1)
    daemon_us = daemon_cpu_s * per_sample
    lean_us = lean_cpu_s * per_sample
    loop_us = split.get("loop", 0.0) * per_sample
    return {"bench": "load", "form": form, "samples_per_message": per_message,
            "streams": n_streams, "segmentation": segmentation,
            "scrape_storm": scrape_storm, "adaptation_after_s": adaptation_after_s,
            "overrides": list(overrides),
            "vehicle_rate_hz": vehicle_rate_hz,
            "vehicle": {"samples_per_message": vehicle_block if vehicle_rate_hz else None,
                        "samples_sent": sum(s["vehicle_samples"] for s in sent),
                        "window_samples_sent": sum(s["window_vehicle_samples_sent"] for s in sent),
                        "samples_counted": car_counted, "rejected": car_rejected},
            "adaptation_fits": fits,
            "duration_s": round(duration_s, 1),
            "spread_s": round(float(due[shifts[-1]]), 1),
            "window_s": [round(w0 - start, 1), round(w1 - start, 1)],
            "window_wall_s": round(at1 - at0, 2),
            "loadavg_1min": round(os.getloadavg()[0], 2),
            "senders": senders,
            "send_rate_samples_per_s": round(window_samples / (at1 - at0)),
            "schedule_rate_samples_per_s": round(window_due / window_s),
            "send_rate_vs_schedule": round(window_samples / max(window_due, 1), 4),
            "sender_late_ms": {k: round(max(s[f"late_ms_{k}"] for s in sent), 2)
                               for k in ("p50", "p99", "max")},
            "messages_sent": messages_sent,
            "messages_dropped": int(messages_sent - (received_msgs or 0)),
            "lean_messages_dropped": messages_sent - int(lean_received or 0),
            "window_states": int(in_window.sum()),
            "window_states_expected": int(round(n_streams * window_s / config.hop_s)),
            "window_baseline_ready": round(float(np.asarray(ready)[in_window].mean()), 4)
                if in_window.any() else None,
            "lag_ms": _percentiles(lag), "lag_from_schedule_ms": _percentiles(lag_from_schedule),
            "daemon_latency_ms_upper_bucket": daemon_latency,
            "cpu_us_per_sample": {"daemon_process": round(daemon_us, 3),
                                  "daemon_loop_thread": round(loop_us, 3),
                                  "lean_process": round(lean_us, 3)},
            "daemon_threads_us_per_sample": {name: round(seconds * per_sample, 3)
                                             for name, seconds in sorted(split.items())},
            "daemon_processed_vs_sent": round(counted_samples / max(window_samples, 1), 4),
            "daemon_process_us_per_processed_sample": round(
                1e6 * daemon_cpu_s / counted_samples, 3) if counted_samples else None,
            "ratio_to_lean": {"daemon_process": round(daemon_us / lean_us, 2) if lean_us else None,
                              "daemon_loop_thread": round(loop_us / lean_us, 2)
                                  if lean_us else None},
            "daemon_cpu_per_wall_s": round(daemon_cpu_s / (at1 - at0), 3),
            "rss_mb": round(rss / 2**20, 1),
            "rss_kb_per_stream": round((rss - idle_rss) / 1024 / n_streams, 1)}


def _emit(result, out):
    line = json.dumps(result)
    print(line, flush=True)
    if out is not None:
        with open(out, "a") as f:
            f.write(line + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--block-streams", type=int, nargs="*", default=[300, 1000],
                        metavar="K", help="stream counts of the block form (none: skip it)")
    parser.add_argument("--map-streams", type=int, nargs="*", default=[300], metavar="K",
                        help="stream counts of the map form (none: skip it)")
    parser.add_argument("--block-samples", type=int, default=30, help="samples per block message")
    parser.add_argument("--segmentation", nargs="+", choices=("on", "off"), default=["off", "on"])
    parser.add_argument("--duration", type=float, default=140.0, help="seconds per load run")
    parser.add_argument("--window", type=float, default=60.0,
                        help="seconds measured, ending 2 s before the drive does")
    parser.add_argument("--spread", type=float, default=60.0,
                        help="seconds of drive over which the streams' starts are spread, so "
                             "their segments and events do not fall at the same moments")
    parser.add_argument("--senders", type=int, default=1, help="sender processes")
    parser.add_argument("--out", type=Path, default=None,
                        help="also append each JSON line to this file as it is measured")
    parser.add_argument("--quick", action="store_true",
                        help="a small set: 50 block streams, segmentation off, 30 s drive, 10 s "
                             "window (before the baselines are ready: not the steady state)")
    parser.add_argument("--scrape-storm", type=int, default=0, metavar="N",
                        help="also run each load with N concurrent scrapers")
    parser.add_argument("--adaptation", type=float, default=None, metavar="AFTER_S",
                        help="also run each load with [adaptation] on after AFTER_S of driving")
    parser.add_argument("--set", action="append", nargs="+", default=[], metavar="KEY=VALUE",
                        dest="overrides",
                        help="daemon configuration overrides (section.key=value) of one more "
                             "variant of every load run; repeat for more variants, each run "
                             "beside the default configuration (e.g. --set service.coalesce_s=0)")
    parser.add_argument("--vehicle-rate", type=float, nargs="+", default=[0.0], metavar="HZ",
                        help="each load run with each stream's car on its own topic "
                             "(vehicle.<stream>) at each of these rates, in turn (0: the car "
                             "inside the eye messages)")
    parser.add_argument("--vehicle-block", type=int, default=1, metavar="N",
                        help="the car's samples per vehicle message")
    parser.add_argument("--parts", nargs="+", choices=("single", "load", "channels"),
                        default=["single", "load", "channels"])
    args = parser.parse_args()
    if args.quick:
        args.block_streams, args.map_streams, args.segmentation = [50], [], ["off"]
        args.duration, args.window = 30.0, 10.0
    if not 0 < args.window <= args.duration - 12:
        parser.error(f"--window {args.window:g} must be in (0, duration - 12] = "
                     f"(0, {args.duration - 12:g}]: windows start 10 s into the drive")
    if args.senders < 1 or args.block_samples < 1:
        parser.error(f"--senders {args.senders} and --block-samples {args.block_samples} must "
                     "be at least 1")
    if args.spread < 0:
        parser.error(f"--spread {args.spread:g} must be at least 0")
    if min(args.vehicle_rate) < 0 or args.vehicle_block < 1:
        parser.error(f"--vehicle-rate {min(args.vehicle_rate):g} must be at least 0 and "
                     f"--vehicle-block {args.vehicle_block} at least 1")
    _emit({"bench": "machine", "cpus": os.cpu_count(), "loadavg": os.getloadavg(),
           "argv": sys.argv[1:]}, args.out)
    if "single" in args.parts:
        _emit(single_stream(simulate_drive(3, duration_s=300.0), True), args.out)
    if "channels" in args.parts:
        _emit(channels(simulate_drive(3, duration_s=180.0)), args.out)
    if "load" not in args.parts:
        return
    recording = simulate_drive(3, duration_s=args.duration + args.spread)
    storms = (0, args.scrape_storm) if args.scrape_storm else (0,)
    variants = [(), *map(tuple, args.overrides)]
    runs = [("block", k) for k in args.block_streams] + [("map", k) for k in args.map_streams]
    with tempfile.TemporaryDirectory() as tmp:
        for form, n_streams in runs:
            for segmentation in args.segmentation:
                for storm in storms:
                    for after_s in (None, args.adaptation) if args.adaptation else (None,):
                        for overrides in variants:
                            for rate in args.vehicle_rate:
                                _emit(load(recording, tmp, n_streams, form, segmentation == "on",
                                           args.duration, args.window, args.block_samples,
                                           args.senders, storm, after_s, overrides, rate,
                                           args.vehicle_block), args.out)


if __name__ == "__main__":
    main()
