"""The source evaluation protocol on a simulated cohort (default: 34 drivers, full grids).

Its figures belong to the ``source`` scheme (random folds over 95 %-overlapping windows): they
reproduce the published table and say nothing about new drives or drivers
(``benchmarks/studies/schemes.py`` measures those).

Prints JSON lines, then the Table 5.2-style table and the paired tests:

- ``{"bench": "one_driver_protocol", "seconds": ..., "per_model_s": {...}}`` — the full protocol
  (12 splits, selection, draws) for driver 0 alone, the "≤ 60 s per driver" target;
- ``{"bench": "cohort", "model": ..., "g_mean": ..., "source_g_mean": ...}`` per model, beside the
  source's Table 5.2 value;
- ``{"bench": "paired_test", ...}`` per (semi-supervised, supervised) pair and per sweep size.

Writes ``results.json``, ``table.txt`` and the sweep PNGs to ``--out``. Timings on a shared machine
are noisy. Run: ``.venv/bin/python benchmarks/studies/evaluate_cohort.py [--drivers 34] [--grid full]``.
"""

import argparse
import json
import time

from distractd._parallel import batch_runner
from distractd.models.detectors import MODELS, model_specs
from distractd.models.evaluation import EvaluationOptions, evaluate_driver, run_evaluation
from distractd.pipeline import extract_features
from distractd.simulators import simulate_cohort

SOURCE_G_MEAN = {"sselm": 0.959, "lapsvm": 0.956, "tsvm": 0.938, "elm": 0.940, "svm": 0.926}
"""Table 5.2 of S0 (34 on-road drivers), mean G-mean."""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drivers", type=int, default=34)
    parser.add_argument("--models", nargs="+", default=[m for m in MODELS if m != "tsvm"])
    parser.add_argument("--grid", choices=("full", "small"), default="full")
    parser.add_argument("--draws", type=int, default=5)
    parser.add_argument("--duration", type=float, default=None,
                        help="drive length in seconds (default: the simulated protocol)")
    parser.add_argument("--unlabelled-sizes", type=int, nargs="*", default=[0, 120, 240, 360, 480])
    parser.add_argument("--labelled-sizes", type=int, nargs="*", default=[16, 32, 48, 64, 80])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1,
                        help="Dask workers of a local cluster (drives evaluated in parallel)")
    parser.add_argument("--scheduler", default=None, help="a Dask scheduler's address instead")
    parser.add_argument("--out", default="evaluation-results")
    args = parser.parse_args()

    recordings = simulate_cohort(args.drivers, args.seed, duration_s=args.duration)
    windows = extract_features(recordings[0])
    per_model = {}
    for spec in model_specs(args.models, args.grid):
        start = time.perf_counter()
        evaluate_driver(windows.X, windows.label, windows.t_end, [spec], n_draws=args.draws,
                        seed=args.seed)
        per_model[spec.name] = round(time.perf_counter() - start, 2)
    print(json.dumps({"bench": "one_driver_protocol", "grid": args.grid, "draws": args.draws,
                      "windows": len(windows), "seconds": round(sum(per_model.values()), 2),
                      "per_model_s": per_model}), flush=True)

    start = time.perf_counter()
    with batch_runner(args.jobs, args.scheduler) as runner:
        document, text = run_evaluation(recordings, args.out, EvaluationOptions(
            schemes=("source",), normalisation="none", recipe="per-driver", models=args.models,
            grid=args.grid, n_draws=args.draws, seed=args.seed,
            unlabelled_sizes=args.unlabelled_sizes, labelled_sizes=args.labelled_sizes),
            runner=runner, progress=False)
    elapsed = time.perf_counter() - start
    source = document["schemes"]["source"]
    for name in args.models:
        values = source["models"][name]
        print(json.dumps({
            "bench": "cohort", "scheme": "source", "model": name, "drivers": args.drivers,
            **{key: values[key] for key in ("accuracy", "sensitivity", "specificity", "g_mean",
                                            "detection_delay_s", "missed_fraction",
                                            "false_alarms_per_hour", "coverage")},
            "source_g_mean": SOURCE_G_MEAN[name]}))
    for test in source["tests"]:
        print(json.dumps({"bench": "paired_test", **test}))
    print(json.dumps({"bench": "cohort_total", "seconds": round(elapsed, 1), "jobs": args.jobs}))
    print(text)


if __name__ == "__main__":
    main()
