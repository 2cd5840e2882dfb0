"""Cost of the daemon's per-stream adaptation: CPU and memory of one fit, memory per stream.

Three parts, each printing JSON lines, with their baselines measured in the same run:

1. ``fit``: one adaptation fit of the shipped model (its cohort anchors plus n windows of a new
   driver, ``distractd.daemon.Fit.run``, the refit the daemon's fit worker runs, one BLAS thread) for
   several n: wall and CPU seconds (median of ``--repeats``) and the peak of memory it allocates
   (``tracemalloc``, which sees numpy's buffers). Baseline: the CPU of the stream's own per-stream
   work (pipeline, scoring, decision rule) per hour of driving, in-process on the same drive.
2. ``memory``: Python heap per session (``tracemalloc``, sessions fed a drive as the daemon feeds
   them), with ``[adaptation]`` off (the baseline), on with its ring of windows full, and on with
   a model adapted to each stream swapped in.
3. ``stall``: how long another thread (the daemon's loop) can be kept from running while a fit
   runs in a thread — parts of a fit hold the GIL (numba kernels, Python code) — as the gaps of a
   thread that sleeps 1 ms and wakes, during fits of 600 windows and, as the baseline, without.

Run: ``.venv/bin/python benchmarks/adaptation.py [--parts fit memory stall]
[--rows 150 300 600 1200]``.
Timings depend on the machine's load; report them with it.
"""

import argparse
import json
import os
import statistics
import threading
import time
import tracemalloc

import numpy as np
from threadpoolctl import threadpool_limits

from distractd.daemon import (
    DEFAULTS, Model, Session, StreamAdaptation, decision_options, default_model_path,
)
from distractd.models.detectors import thin_windows
from distractd.pipeline import FEATURE_NAMES, extract_features
from distractd.simulators import simulate_drive

HOP_SAMPLES = 30  # the daemon feeds a stream's pipeline about once per 0.5 s hop at 60 Hz


def _stream_cpu_s_per_hour(model, recording):
    """CPU seconds of one stream's per-stream work per hour of its driving (the baseline)."""
    session = Session("s", model.pipeline_config,
                      decision_options(DEFAULTS, model.detector.feature_names), None, 0.0)
    samples = recording.samples
    start = time.process_time()
    for lo in range(0, len(samples), HOP_SAMPLES):
        windows = session.process(samples[lo:lo + HOP_SAMPLES])
        if len(windows):
            session.decide(windows, model.scores(windows.X), "m")
    hours = (recording.t[-1] - recording.t[0]) / 3600
    return (time.process_time() - start) / hours


def fit_cost(model, recording, sizes, repeats):
    windows = extract_features(recording, model.pipeline_config)
    X = windows.X[:, model.columns]
    finite = np.isfinite(X).all(axis=1)
    rows = X[finite][thin_windows(windows.t_end[finite], DEFAULTS["adaptation"]["stride_s"])]
    baseline = _stream_cpu_s_per_hour(model, recording)
    anchors = len(model.detector.extras["anchors"][1]["X"])
    for n in sizes:
        if n > len(rows):
            continue
        options = {**DEFAULTS["adaptation"], "max_windows": n, "stride_s": 0.0}
        walls, cpus = [], []
        for _ in range(repeats):
            adaptation = StreamAdaptation(len(model.columns), options, collect=True)
            adaptation.add(rows[:n], np.arange(n, dtype=np.float64))
            fit = adaptation.fit("s", model.detector)
            fit.run()
            assert fit.error is None, fit.error
            walls.append(fit.wall_s)
            cpus.append(fit.cpu_s)
        fit = adaptation.fit("s", model.detector)
        tracemalloc.start()
        fit.run()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        cpu = statistics.median(cpus)
        yield {"bench": "fit", "model": model.detector.model_id, "anchors": anchors,
               "windows": n, "features": len(model.columns),
               "wall_s": round(statistics.median(walls), 3), "cpu_s": round(cpu, 3),
               "peak_mb": round(peak / 2**20, 1),
               "baseline_stream_cpu_s_per_hour": round(baseline, 2),
               "fit_vs_stream_hour": round(cpu / baseline, 3)}


def _fed_sessions(model, recording, n_sessions, options):
    """Sessions fed the drive as the daemon feeds them, adapted as the daemon adapts them (the
    fits run here, one after the other)."""
    sessions = []
    samples = recording.samples
    for k in range(n_sessions):
        session = Session(f"s{k}", model.pipeline_config,
                          decision_options(DEFAULTS, model.detector.feature_names), None, 0.0)
        if options is not None:
            session.adaptation = StreamAdaptation(len(model.columns), options, collect=True)
        for lo in range(0, len(samples), HOP_SAMPLES):
            windows = session.process(samples[lo:lo + HOP_SAMPLES])
            if not len(windows):
                continue
            adaptation = session.adaptation
            scorer = model.detector if adaptation is None or adaptation.detector is None \
                else adaptation.detector
            session.decide(windows, scorer.window_scores(windows.X, FEATURE_NAMES), "m")
            if adaptation is not None and adaptation.add(windows.X[:, model.columns],
                                                         windows.t_end):
                fit = adaptation.fit(session.stream, model.detector)
                adaptation.submitted()
                fit.run()
                adaptation.detector, adaptation.pending = fit.result, False
        sessions.append(session)
    return sessions


def memory(model, recording, n_sessions):
    options = DEFAULTS["adaptation"]
    ring = {**options, "stride_s": 0.0, "after_s": 1e9}       # collects, never fits
    adapted = {**options, "stride_s": 0.0, "after_s": 60.0}   # fits once, then keeps collecting
    out = {"bench": "memory", "sessions": n_sessions,
           "drive_s": round(float(recording.t[-1] - recording.t[0]), 1),
           "max_windows": options["max_windows"], "features": len(model.columns)}
    for name, choice in (("off", None), ("ring_full", ring), ("adapted", adapted)):
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        sessions = _fed_sessions(model, recording, n_sessions, choice)
        used = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        if choice is not None:
            held = [s.adaptation for s in sessions]
            out[f"rows_{name}"] = int(np.median([min(a.n_rows, len(a.rows)) for a in held]))
            out[f"adapted_{name}"] = sum(a.detector is not None for a in held)
        out[f"heap_kb_per_session_{name}"] = round(used / 1024 / n_sessions, 1)
        del sessions
    for name in ("ring_full", "adapted"):
        out[f"added_kb_per_session_{name}"] = round(out[f"heap_kb_per_session_{name}"]
                                                    - out["heap_kb_per_session_off"], 1)
    return out


def _gaps_ms(until):
    """Wall gaps (ms) between the wake-ups of this thread sleeping 1 ms until ``until()``."""
    gaps = []
    last = time.perf_counter()
    while not until():
        time.sleep(0.001)
        now = time.perf_counter()
        gaps.append((now - last) * 1e3)
        last = now
    return np.array(gaps)


def stall(model, recording, n_fits):
    windows = extract_features(recording, model.pipeline_config)
    X = windows.X[:, model.columns]
    finite = np.isfinite(X).all(axis=1)
    rows = X[finite][thin_windows(windows.t_end[finite], DEFAULTS["adaptation"]["stride_s"])]
    adaptation = StreamAdaptation(len(model.columns), DEFAULTS["adaptation"], collect=True)
    adaptation.add(rows, np.arange(len(rows), dtype=np.float64))

    def fits():
        for _ in range(n_fits):
            adaptation.fit("s", model.detector).run()

    worker = threading.Thread(target=fits)
    start = time.perf_counter()
    worker.start()
    during = _gaps_ms(lambda: not worker.is_alive())
    elapsed = time.perf_counter() - start
    deadline = time.perf_counter() + elapsed
    baseline = _gaps_ms(lambda: time.perf_counter() >= deadline)
    out = {"bench": "stall", "fits": n_fits, "windows": min(len(rows), len(adaptation.rows)),
           "wall_s": round(elapsed, 2)}
    for name, gaps in (("baseline", baseline), ("during_fits", during)):
        p50, p99 = np.percentile(gaps, [50, 99])
        out[f"gap_ms_{name}"] = {"p50": round(float(p50), 2), "p99": round(float(p99), 2),
                                 "max": round(float(gaps.max()), 2)}
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", choices=("fit", "memory", "stall"),
                        default=["fit", "memory", "stall"])
    parser.add_argument("--rows", type=int, nargs="+", default=[150, 300, 600, 1200])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=20)
    args = parser.parse_args()
    print(json.dumps({"bench": "machine", "cpus": os.cpu_count(),
                      "loadavg_1min": os.getloadavg()[0]}), flush=True)
    model = Model(default_model_path())
    with threadpool_limits(limits=1):  # as in the daemon
        if "fit" in args.parts:
            for result in fit_cost(model, simulate_drive(21, protocol="visual-manual"),
                                   args.rows, args.repeats):
                print(json.dumps(result), flush=True)
        if "memory" in args.parts:
            print(json.dumps(memory(model, simulate_drive(21, duration_s=420.0),
                                    args.sessions)), flush=True)
        if "stall" in args.parts:
            print(json.dumps(stall(model, simulate_drive(21, protocol="visual-manual"),
                                   args.repeats)), flush=True)


if __name__ == "__main__":
    main()
