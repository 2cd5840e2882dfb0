"""Simulator throughput: samples per second and real-time factor for a 1 h drive at 60 Hz.

Target: >= 1,000x real time on one core (a 1 h drive in under 3.6 s). The first call compiles (or
loads cached) numba kernels and is reported separately. ``simulate_command`` times ``distractd
simulate`` writing a binary recording, end to end, beside the same drive simulated and written in
process. Prints one JSON line per measurement.

    .venv/bin/python benchmarks/simulate.py [--repeats 5]
"""

import argparse
import json
import os
import resource
import tempfile
import statistics
import subprocess
import sys
import time

from distractd.pipeline import write_recording
from distractd.simulators import simulate_drive


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--duration", type=float, default=3600.0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    simulate_drive(0, duration_s=60.0)
    print(json.dumps({"name": "warmup_60s_drive", "seconds": time.perf_counter() - start}))
    for rate_hz in (60.0, 250.0):
        times, n_samples = [], 0
        for seed in range(args.repeats):
            start = time.perf_counter()
            recording = simulate_drive(seed, duration_s=args.duration, rate_hz=rate_hz)
            times.append(time.perf_counter() - start)
            n_samples = recording.n_samples
        best, median = min(times), statistics.median(times)
        print(json.dumps({
            "name": "simulate_drive", "duration_s": args.duration, "rate_hz": rate_hz,
            "samples": n_samples, "seconds_median": median, "seconds_best": best,
            "samples_per_s": n_samples / median, "realtime_factor": args.duration / median,
            "target_realtime_factor": 1000.0 if rate_hz == 60.0 else None,
            "pass": args.duration / median >= 1000.0 if rate_hz == 60.0 else None,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }), flush=True)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "drive.npz")
        start = time.perf_counter()
        write_recording(recording, path)
        print(json.dumps({"name": "write_recording_binary", "samples": recording.n_samples,
                          "seconds": time.perf_counter() - start,
                          "bytes": os.path.getsize(path)}), flush=True)
        # the command end to end (interpreter, imports, simulation, writing) against the same
        # drive in process, simulated and written, measured here: the gap is the command's cost
        times, inside = [], []
        for seed in range(args.repeats):
            start = time.perf_counter()
            write_recording(simulate_drive(seed, duration_s=args.duration), path)
            inside.append(time.perf_counter() - start)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "distractd.cli", "simulate", "--seed", str(seed),
                            "--duration", str(args.duration), "--out", path, "-q"], check=True,
                           cwd=folder)  # not a checkout's folder: python -m looks there first
            times.append(time.perf_counter() - start)
        print(json.dumps({
            "name": "simulate_command", "duration_s": args.duration, "rate_hz": 60.0,
            "seconds_median": statistics.median(times),
            "realtime_factor": args.duration / statistics.median(times),
            "in_process_seconds_median": statistics.median(inside),
            "in_process_realtime_factor": args.duration / statistics.median(inside)}), flush=True)


if __name__ == "__main__":
    main()
