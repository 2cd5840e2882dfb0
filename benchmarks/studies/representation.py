"""Per-stream representations side by side: which one keeps a long task from being absorbed.

The running baseline's 3-minute memory takes in a task that lasts longer (Taamneh's texting
blocks last about 160 s). The options, each a :class:`~distractd.pipeline.PipelineConfig` that
train, predict, evaluate and the daemon share (docs/pipeline.md, "Per-stream baselines"):

- ``running``: the baseline as it was before 2026-11-25 (every window enters the ring, every
  feature standardised);
- ``gated``: a window enters the ring only while the glance channel says it looks attentive
  (``baseline_gate``, z = 2; ``gated-z3``: z = 3);
- ``absolute-glances``: the glance features unstandardised, the others against the baseline
  (``baseline_absolute_glances``; the default since 2026-11-25);
- ``gated+absolute``: both;
- ``raw``: no per-stream baseline at all (not deployable as a cohort model: reference).

Data and schemes, all ``new-driver`` with the cohort recipe (small grids):

- **Taamneh et al. 2017** (doi:10.1038/sdata.2017.110) normal and texting drives in ``--taamneh``;
  the design is chosen on the development half (odd positions of the sorted driver list) and
  reported on the held-out half (even positions) and on all drivers;
- **simulated cohorts** (``distractd.simulators.simulate_cohort``): each driver's ``--drives``
  task drives and one no-task drive, visual-manual and cognitive; ``--sim-seed`` picks the cohort
  (31337 and 4242 were development cohorts; a held-out one is a seed never used before).

Each data set's first representation also evaluates the naive floor (``naive-offline``: per-driver
z-scores over all the driver's drives, balanced RBF SVM; :mod:`distractd.models.detectors._naive`)
on the same windows and truth; every model is paired with it over the drivers both judge.

Every (data, representation, model) prints one JSON line as soon as it is measured and appends it
to ``--out``/results.jsonl. Run (about 20 min on 2 shared cores):
``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/studies/representation.py``.
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np

from distractd.models.detectors import loss_evidence, model_specs
from distractd.models.evaluation import (
    NAIVE_FLOOR, driver_halves, evaluate_models, half_figures, model_drives, per_driver_means,
    summarise_scheme, versus_floor,
)
from distractd.pipeline import PipelineConfig
from distractd.pipeline.formats import read_taamneh
from distractd.simulators import simulate_cohort

REPRESENTATIONS = {
    "running": ("running", {"baseline_gate": False, "baseline_absolute_glances": False}),
    "gated": ("running", {"baseline_gate": True, "baseline_absolute_glances": False}),
    "gated-z3": ("running", {"baseline_gate": True, "baseline_gate_z": 3.0,
                             "baseline_absolute_glances": False}),
    "absolute-glances": ("running", {"baseline_gate": False, "baseline_absolute_glances": True}),
    "gated+absolute": ("running", {"baseline_gate": True, "baseline_absolute_glances": True}),
    "raw": ("none", {}),
}
"""Name -> (scheme_drives normalisation, PipelineConfig settings)."""


def evaluate(recordings, base, representation, models, seed):
    """Per model: the per-driver test records, the summary and the evaluated feature names, for
    one representation (models with their own representation, the naive floor, keep theirs)."""
    normalisation, settings = REPRESENTATIONS[representation]
    config = PipelineConfig.from_dict({**base.to_dict(), **settings})
    specs = model_specs(models, "small")
    drives, names, own = model_drives(recordings, specs, config, normalisation)
    results = evaluate_models(drives, own, "new-driver", specs,
                              decision={"loss_evidence": loss_evidence(names)}, seed=seed)
    return results, summarise_scheme(results), names


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--taamneh", default="../shared/data/taamneh")
    parser.add_argument("--data", nargs="+", default=["taamneh", "visual-manual", "cognitive"],
                        choices=["taamneh", "visual-manual", "cognitive"])
    parser.add_argument("--representations", nargs="+", default=list(REPRESENTATIONS),
                        choices=list(REPRESENTATIONS))
    parser.add_argument("--models", nargs="+", default=["svm", "sselm"])
    parser.add_argument("--sim-drivers", type=int, default=6)
    parser.add_argument("--sim-drives", type=int, default=2)
    parser.add_argument("--sim-seed", type=int, default=31337)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="representation-results")
    args = parser.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    def emit(line):
        print(json.dumps(line), flush=True)
        with open(out / "results.jsonl", "a") as file:
            file.write(json.dumps(line) + "\n")

    for data in args.data:
        if data == "taamneh":
            files = sorted(Path(args.taamneh).glob("T*.csv"))
            recordings = [r for path in files for r in read_taamneh(path, drives=(4, 7))]
            base = PipelineConfig()
        else:
            recordings = simulate_cohort(args.sim_drivers, args.sim_seed, drives=args.sim_drives,
                                         protocol=data)
            calm = simulate_cohort(args.sim_drivers, args.sim_seed, drives=1, protocol="none")
            for recording in calm:  # a drive of its own: its false alarms count
                recording.meta["recording_id"] += "-calm"
            recordings += calm
            base = PipelineConfig(drive_side="right")  # the simulator's car
        dev, held = driver_halves({r.meta["driver_id"] for r in recordings})
        floor = None
        for representation in args.representations:
            start = time.perf_counter()
            models = list(args.models) + ([NAIVE_FLOOR] if floor is None else [])
            results, summary, names = evaluate(recordings, base, representation, models,
                                               args.seed)
            if floor is None:  # the same windows and truth whatever the representation
                floor = per_driver_means(results[NAIVE_FLOOR], "g_mean")
            for model, per in results.items():
                g_means = per_driver_means(per, "g_mean")
                line = {"bench": "representation", "data": data,
                        "representation": NAIVE_FLOOR if model == NAIVE_FLOOR else representation,
                        "scheme": "new-driver", "model": model,
                        "features": names if model != NAIVE_FLOOR else "its own",
                        "g_mean": half_figures(g_means, dev, held),
                        "coverage": half_figures(per_driver_means(per, "coverage"), dev, held),
                        "false_alarms_per_hour": half_figures(
                            per_driver_means(per, "false_alarms_per_hour"), dev, held),
                        "missed_fraction": summary[model]["missed_fraction"],
                        "per_driver": {d: round(v, 3) for d, v in sorted(g_means.items())
                                       if np.isfinite(v)},
                        "seconds": round(time.perf_counter() - start, 1)}
                if data != "taamneh":
                    line["sim"] = {"seed": args.sim_seed, "drivers": args.sim_drivers,
                                   "drives": args.sim_drives}
                if model != NAIVE_FLOOR:
                    line["vs_floor"] = versus_floor({model: g_means, NAIVE_FLOOR: floor},
                                                    NAIVE_FLOOR, dev, held).get(model, {})
                emit(line)


if __name__ == "__main__":
    main()
