"""Batch work on Dask: throughput of features, cohort training and evaluation against --jobs.

A fleet of simulated drives (default 200 drives of 240 s: 100 drivers x 2 drives, cognitive
protocol; short so that the run stays short, yet long enough for the running baseline's ~80 s
warm-up to leave most windows to train on — 120 s drives leave under half, which
``train --cohort`` refuses; real drives last 20-60 min and give the workers
longer tasks) is written as Parquet to a temporary folder. Then, for the sequential baseline (no
cluster, measured in the same run) and for each --jobs > 1 (a local cluster of single-threaded
worker processes) or --scheduler (a running cluster), three workloads run on the file paths:

- ``features``: :func:`~distractd._parallel.recording_windows` (one task per file, read by the
  worker), the work of ``distractd features``;
- ``train_cohort``: ``distractd train --cohort`` (features, then one grouped-CV fit);
- ``evaluate``: the drives' features (running baseline) and the ``new-driver`` scheme (cohort
  recipe; one task per fold x model), the work of ``distractd evaluate --scheme new-driver``.

Each prints a JSON line: seconds, drives per second, drive-hours per second, the speed-up over
the sequential baseline, whether the results are identical to it (they must be), and the CPU
seconds spent (this process plus the workers' processes): on a machine shared with other work,
wall time only improves when the workers get CPU the sequential run did not. Cluster start-up (with
every process's warm-up: imports, numba's cached kernels) is reported on its own line, not in
the workloads. Run:

    .venv/bin/python benchmarks/dask_batch.py [--drives 200] [--duration 240] [--jobs 2 4]
        [--scheduler tcp://host:8786] [--models sselm svm] [--repeats 3]
"""

import argparse
import json
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from distractd._parallel import batch_runner, recording_windows
from distractd.models.detectors import model_specs, train_cohort
from distractd.models.evaluation import evaluate_scheme, scheme_drives
from distractd.pipeline import PipelineConfig, write_recording
from distractd.simulators import simulate_cohort

CONFIG = PipelineConfig.from_dict({"drive_side": "right"})  # the simulator's car


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drives", type=int, default=200)
    parser.add_argument("--drives-per-driver", type=int, default=2)
    parser.add_argument("--duration", type=float, default=240.0, help="seconds per drive")
    parser.add_argument("--jobs", type=int, nargs="*", default=[2],
                        help="local clusters of these many workers (the sequential baseline "
                             "always runs)")
    parser.add_argument("--scheduler", default=None, help="also run on this Dask scheduler")
    parser.add_argument("--models", nargs="+", default=["sselm", "svm"])
    parser.add_argument("--train", type=int, default=1000, help="cohort recipe's n_train")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs of each workload; the fastest is reported (other work on a "
                             "shared machine only ever slows a run down)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", UserWarning)  # sklearn: few windows of a class in a fold

    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        n_drivers = args.drives // args.drives_per_driver
        for recording in simulate_cohort(n_drivers, args.seed, drives=args.drives_per_driver,
                                          duration_s=args.duration):
            write_recording(recording, Path(folder) / f"{recording.meta['recording_id']}.parquet")
        paths = sorted(Path(folder).iterdir())
        hours = len(paths) * args.duration / 3600
        _emit({"stage": "simulate", "drives": len(paths), "drivers": n_drivers,
               "drive_s": args.duration, "drive_hours": round(hours, 3),
               "seconds": time.perf_counter() - start,
               "parquet_mb": sum(p.stat().st_size for p in paths) / 2**20})

        settings = [("sequential", 1, None)] + [(f"jobs={n}", n, None) for n in args.jobs
                                                if n > 1]
        if args.scheduler:
            settings.append(("scheduler", 1, args.scheduler))
        baseline = {}
        for name, jobs, scheduler in settings:
            start = time.perf_counter()
            with batch_runner(jobs, scheduler) as runner:
                if runner.client is not None:
                    runner.client.wait_for_workers(jobs if scheduler is None else 1)
                # warm-up, untimed: imports and numba's cached kernels in every process
                recording_windows(paths[:2 * runner.n_workers], CONFIG, runner)
                if runner.client is not None:
                    _emit({"stage": "cluster_start", "setting": name,
                           "workers": runner.n_workers, "warmed_up": True,
                           "seconds": time.perf_counter() - start})
                for work, run in (("features", _features), ("train_cohort", _train),
                                  ("evaluate", _evaluate)):
                    runs = []
                    for _ in range(args.repeats):
                        cpu = _cpu_seconds(runner)
                        start = time.perf_counter()
                        result = run(paths, runner, args)
                        runs.append((time.perf_counter() - start, _cpu_seconds(runner) - cpu,
                                     result))
                    seconds, cpu, result = min(runs, key=lambda r: r[0])
                    identical = all(r[2] == result for r in runs)
                    baseline.setdefault(work, (seconds, result))
                    base_seconds, base_result = baseline[work]
                    _emit({"stage": work, "setting": name, "workers": runner.n_workers,
                           "drives": len(paths), "seconds": seconds,
                           "drives_per_s": len(paths) / seconds,
                           "drive_hours_per_s": hours / seconds,
                           "speedup": base_seconds / seconds, "cpu_s": cpu,
                           "runs_s": [r[0] for r in runs],
                           "identical_to_sequential": identical and result == base_result})


def _features(paths, runner, args):
    featured = recording_windows(paths, CONFIG, runner)
    return _fingerprint([item.windows.X for item in featured])


def _train(paths, runner, args):
    estimator, parts = train_cohort(paths, "svm", n_train=args.train, config=CONFIG,
                                    seed=args.seed, segment_frames=0, runner=runner)
    return json.dumps(parts["summary"], sort_keys=True) + _fingerprint(
        [estimator.decision_function(parts["extras"]["anchors"][1]["X"])])


def _evaluate(paths, runner, args):
    drives, _ = scheme_drives(paths, CONFIG, "running", runner=runner)
    results = evaluate_scheme(drives, "new-driver", model_specs(args.models, "small"),
                              n_train=args.train, seed=args.seed, runner=runner)
    return json.dumps(results, sort_keys=True)


def _cpu_seconds(runner):
    """CPU time of this process and of every worker process so far."""
    workers = runner.client.run(time.process_time).values() if runner.client else ()
    return time.process_time() + sum(workers)


def _fingerprint(arrays):
    """Exact content of float arrays (NaN included) as text."""
    return "".join(np.ascontiguousarray(a).tobytes().hex() for a in arrays)


def _emit(line):
    def rounded(value):
        if isinstance(value, list):
            return [rounded(v) for v in value]
        return round(value, 3) if isinstance(value, float) else value

    print(json.dumps({"bench": "dask_batch", **{k: rounded(v) for k, v in line.items()}}),
          flush=True)


if __name__ == "__main__":
    main()
