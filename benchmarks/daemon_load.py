"""Daemon load benchmark: K streams at 60 Hz, map and block form, lag, drops, CPU and RSS.

Three parts, each printing one JSON line per measurement:

1. ``single``: one stream in-process (session + detector + smoother + segmenter, no sockets), fed a
   simulated drive in blocks of 10 samples; processing latency per completed window (ms).
2. ``load``: ``distractd run`` as a subprocess with the shipped model, ``distractd replay
   --streams K`` as the sender (copies of one simulated drive, hop phases staggered), and this
   process subscribing to the states. Lag = time a state is received minus the scheduled send time
   of the message holding the sample that completed its window (includes the sender's own lateness,
   two loopback hops and this subscriber, so it over-estimates the daemon's own lag); the
   daemon's own arrival-to-publication histogram is reported too (as bucket upper bounds).
   Drops = messages sent minus messages the daemon counted, and states expected minus received.
   CPU = daemon CPU seconds per wall second; RSS per stream = (RSS under load - idle RSS) / K. With
   ``--scrape-storm N`` a separate process keeps N concurrent scrapes of ``/metrics`` going for
   the whole run (each run is then done twice, without and with the storm). With
   ``--adaptation AFTER_S`` each run is also done with ``[adaptation]`` on (``after_s`` = AFTER_S;
   the drive must outlast the baselines' 60 s warm-up plus AFTER_S), reporting the fits done and
   refused by the full queue.
3. ``channels``: CPU per sample of the per-stream work (session: pipeline, decision rule) with the
   shipped model's pipeline settings and with its per-stream baselines and glance channel turned
   off, in-process over the same streams (issue 13: the channels may cost <= 25 %).

Run: ``.venv/bin/python benchmarks/daemon_load.py [--streams 100 300 1000] [--forms block map]
[--duration 25] [--no-segmentation] [--scrape-storm 200] [--adaptation 20]
[--parts single load channels]``.
Timings depend on the machine's load; report them with it.
"""

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import zmq
from threadpoolctl import threadpool_limits

from distractd.daemon import Model, Session, decision_options, default_model_path, load_config
from distractd.pipeline import PipelineConfig, write_recording
from distractd.pipeline.formats import decode_output
from distractd.simulators import NotifyReceiver, free_port, simulate_drive

BLOCK_SAMPLES = 10

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
            session.publish(windows, scores, model.detector.model_id)
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
    """Upper bucket bounds (ms) holding the quantiles of a scraped histogram."""
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        lines = response.read().decode().splitlines()
    buckets = [(float(line.split('le="')[1].split('"')[0]), float(line.split()[-1]))
               for line in lines if line.startswith(name + "_bucket")]
    total = buckets[-1][1]
    out = {}
    for q in quantiles:
        bound = next(le for le, count in buckets if count >= q * total)
        out[f"p{str(q * 100).rstrip('0').rstrip('.').replace('.', '')}"] = bound * 1e3
    return out


def channels(recording, n_streams=50):
    """CPU seconds per sample of the sessions' work with baselines and glances on and off (one
    BLAS thread, as in the daemon)."""
    model = Model(default_model_path())
    decision = decision_options(load_config(), model.detector.feature_names)
    samples = recording.samples
    out = {"bench": "channels", "streams": n_streams, "samples": n_streams * len(samples)}
    for name, changes in (("on", {}), ("off", {"baseline": False, "glances": False}),
                          ("baseline_only", {"glances": False}),
                          ("glances_only", {"baseline": False})):
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
                    session.publish(windows, scores[offset:offset + len(windows)], "m")
                    offset += len(windows)
        blas.restore_original_limits()
        out[f"cpu_us_per_sample_{name}"] = round(1e6 * (time.process_time() - start)
                                                 / out["samples"], 3)
    out["growth_on_vs_off"] = round(out["cpu_us_per_sample_on"]
                                    / out["cpu_us_per_sample_off"] - 1, 3)
    return out


def load(recording, path, n_streams, form, segmentation, scrape_storm=0, adaptation_after_s=None):
    """One load run; returns the JSON-ready result."""
    input_ep = f"tcp://127.0.0.1:{free_port()}"
    output_ep = f"tcp://127.0.0.1:{free_port()}"
    metrics_port = free_port()
    command = [sys.executable, "-m", "distractd.cli", "run",
               "--set", f'input.bind=["{input_ep}"]', "--set", f"output.bind={output_ep}",
               "--set", f"metrics.port={metrics_port}", "--set", "service.log_level=warning",
               "--set", "output.republish_s=3600",
               "--set", f"sessions.segmentation={'true' if segmentation else 'false'}"]
    if adaptation_after_s is not None:
        command += ["--set", "adaptation.enabled=true",
                    "--set", f"adaptation.after_s={adaptation_after_s}"]
    config = PipelineConfig()
    t = recording.t
    per_message = 1 if form == "map" else BLOCK_SAMPLES
    stagger_s = 0.5
    with NotifyReceiver() as notify:
        daemon = subprocess.Popen(command, env={**os.environ, "NOTIFY_SOCKET": notify.path})
        try:
            assert notify.wait_for("READY=1", 180), "daemon not ready"
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
            cpu0 = _proc_cpu_s(daemon.pid)
            sender = subprocess.Popen(
                [sys.executable, "-m", "distractd.cli", "replay", str(path), "--endpoint",
                 input_ep, "--streams", str(n_streams), "--form", form, "--stream-id", "s",
                 "--block-samples", str(BLOCK_SAMPLES), "--json"], stdout=subprocess.PIPE,
                text=True)
            received_t, received_stream, received_at = [], [], []
            quiet_since = None
            while True:  # receive until the sender is done and the daemon has gone quiet
                if sub.poll(100):
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
                elif sender.poll() is not None:
                    quiet_since = quiet_since or time.monotonic()
                    if time.monotonic() - quiet_since > 1.0:
                        break
            wall0 = time.monotonic() - 1.0
            if scraper is not None:
                scraper.kill()
                scraper.wait()
            summary = json.loads(sender.stdout.read())
            cpu_s = _proc_cpu_s(daemon.pid) - cpu0
            wall_s = summary["elapsed_s"] + (time.monotonic() - wall0)
            rss = _proc_rss_bytes(daemon.pid)
            received_msgs = _scrape(metrics_port, "distractd_messages_received_total")
            daemon_latency = _histogram_quantiles(metrics_port,
                                                  "distractd_processing_latency_seconds")
            fits = {name: _scrape(metrics_port, metric) for name, metric in (
                ("done", 'distractd_adaptation_fits_total{result="done"}'),
                ("queue_full", 'distractd_adaptation_skipped_total{reason="queue_full"}'),
                ("cpu_s", "distractd_adaptation_cpu_seconds_total"))}
            sub.close()
            context.term()
        finally:
            daemon.terminate()
            daemon.wait(30)
    # lag: state received minus the scheduled send of the message completing its window
    stream = np.asarray(received_stream)
    offset = stagger_s * stream / n_streams
    t_end = np.asarray(received_t) - offset
    completing = np.searchsorted(t, t_end + config.lag_s - 1e-9, side="left")
    message_end = np.minimum((completing // per_message + 1) * per_message, len(t)) - 1
    due = summary["start_monotonic_s"] + (t[message_end] - t[0]) + offset
    lag = np.asarray(received_at) - due
    expected_states = n_streams * int((t[-1] - t[0] - config.window_s - config.lag_s)
                                      / config.hop_s)
    return {"bench": "load", "form": form, "streams": n_streams, "segmentation": segmentation,
            "scrape_storm": scrape_storm, "adaptation_after_s": adaptation_after_s,
            "adaptation_fits": fits if adaptation_after_s is not None else None,
            "duration_s": round(float(t[-1] - t[0]), 1),
            "samples_per_s": round(summary["samples"] / summary["elapsed_s"]),
            "messages_sent": summary["messages"], "messages_dropped":
                int(summary["messages"] - (received_msgs or 0)),
            "states_received": len(lag), "states_expected_about": expected_states,
            "sender_behind_max_s": round(summary["behind_s"], 3),
            "lag_ms": _percentiles(lag), "daemon_latency_ms_upper_bucket": daemon_latency,
            "daemon_cpu_per_wall_s": round(cpu_s / wall_s, 3),
            "cpu_us_per_sample": round(1e6 * cpu_s / max(summary["samples"], 1), 2),
            "rss_mb": round(rss / 2**20, 1),
            "rss_kb_per_stream": round((rss - idle_rss) / 1024 / n_streams, 1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--forms", nargs="+", choices=("block", "map"), default=["block", "map"])
    parser.add_argument("--duration", type=float, default=25.0, help="seconds per load run")
    parser.add_argument("--no-segmentation", action="store_true")
    parser.add_argument("--scrape-storm", type=int, default=0, metavar="N",
                        help="also run each load with N concurrent scrapers")
    parser.add_argument("--adaptation", type=float, default=None, metavar="AFTER_S",
                        help="also run each load with [adaptation] on after AFTER_S of driving")
    parser.add_argument("--parts", nargs="+", choices=("single", "load", "channels"),
                        default=["single", "load", "channels"])
    args = parser.parse_args()
    segmentation = not args.no_segmentation
    print(json.dumps({"bench": "machine", "cpus": os.cpu_count(),
                      "loadavg_1min": os.getloadavg()[0]}), flush=True)
    if "single" in args.parts:
        print(json.dumps(single_stream(simulate_drive(3, duration_s=300.0), segmentation)),
              flush=True)
    if "channels" in args.parts:
        print(json.dumps(channels(simulate_drive(3, duration_s=180.0))), flush=True)
    if "load" not in args.parts:
        return
    recording = simulate_drive(3, duration_s=args.duration)
    storms = (0, args.scrape_storm) if args.scrape_storm else (0,)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "drive.npz"
        write_recording(recording, path)
        for form in args.forms:
            for n_streams in args.streams:
                for storm in storms:
                    for after_s in (None, args.adaptation) if args.adaptation else (None,):
                        print(json.dumps(load(recording, path, n_streams, form, segmentation,
                                              storm, after_s)), flush=True)


if __name__ == "__main__":
    main()
