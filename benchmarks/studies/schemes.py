"""Detection on driving never seen: every scheme, model and normalisation on a simulated cohort.

For each protocol (the source's cognitive task, the visual-manual texting-like task), a cohort of
``--drivers`` drivers × ``--drives`` drives (each driver also drives one no-task drive, whose false
alarms count in the deployment figures) is evaluated under the schemes of
``distractd.models.evaluation`` with the cohort recipe, once per feature normalisation. Driver
seeds are drawn from ``--seed`` (never the development seeds 0-200 used in tests).

Prints one JSON line per (protocol, normalisation, scheme, model) as soon as it is measured and
appends it to ``--out``/results.jsonl, so a stopped run keeps what it finished; the full tables go
to ``--out``/<protocol>_<normalisation>/table.txt. Run:
``.venv/bin/python benchmarks/studies/schemes.py --drivers 12 --drives 3``.
"""

import argparse
import json
import time
from pathlib import Path

from distractd.models.evaluation import EvaluationOptions, run_evaluation
from distractd.pipeline import PipelineConfig
from distractd.simulators import simulate_cohort


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drivers", type=int, default=12)
    parser.add_argument("--drives", type=int, default=3)
    parser.add_argument("--protocols", nargs="+", default=["visual-manual", "cognitive"])
    parser.add_argument("--normalisations", nargs="+", default=["running", "drive", "none"])
    parser.add_argument("--schemes", nargs="+", default=["new-driver", "new-drive"])
    parser.add_argument("--models", nargs="+", default=["svm", "elm", "sselm", "lapsvm"])
    parser.add_argument("--recipe", default="cohort")
    parser.add_argument("--duration", type=float, default=None)
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--out", default="schemes-results")
    args = parser.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    config = PipelineConfig(drive_side="right")  # the simulator's car
    for protocol in args.protocols:
        task = simulate_cohort(args.drivers, args.seed, drives=args.drives, protocol=protocol,
                               duration_s=args.duration)
        calm = simulate_cohort(args.drivers, args.seed, drives=1, protocol="none",
                               duration_s=args.duration)
        for recording in calm:  # a drive of its own, after the task drives
            recording.meta["recording_id"] += "-calm"
        for normalisation in args.normalisations:
            start = time.perf_counter()
            document, _ = run_evaluation(
                task + calm, out / f"{protocol}_{normalisation}", EvaluationOptions(
                    schemes=args.schemes, models=args.models, recipe=args.recipe,
                    normalisation=normalisation, config=config, seed=args.seed),
                progress=False)
            seconds = time.perf_counter() - start
            for scheme, result in document["schemes"].items():
                for model, figures in result["models"].items():
                    line = {"bench": "scheme", "protocol": protocol,
                            "normalisation": normalisation, "scheme": scheme, "model": model,
                            "drivers": args.drivers, "drives": args.drives,
                            **{key: figures[key] for key in (
                                "g_mean", "accuracy", "sensitivity", "specificity",
                                "detection_delay_s", "missed_fraction",
                                "false_alarms_per_hour", "coverage")},
                            "seconds": round(seconds, 1)}
                    print(json.dumps(line), flush=True)
                    with open(out / "results.jsonl", "a") as file:
                        file.write(json.dumps(line) + "\n")
                for test in result["tests"]:
                    print(json.dumps({"bench": "paired_test", "protocol": protocol,
                                      "normalisation": normalisation, "scheme": scheme, **test}),
                          flush=True)


if __name__ == "__main__":
    main()
