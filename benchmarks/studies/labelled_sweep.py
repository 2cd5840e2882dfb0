"""The source's claim on real drives: SS-ELM and LapSVM against the naive floor trained on the
same labelled windows, from 10 to 1,000 of them.

Data: the normal and texting drives of Taamneh et al. 2017 (doi:10.1038/sdata.2017.110),
``../shared/data/taamneh``, 1 Hz gaze. Scheme: new driver — the labelled windows are drawn from
the development half of the drivers (odd positions of the sorted list), each held-out driver is
scored by models that never saw them; SS-ELM and LapSVM also get up to ``--unlabelled`` of that
driver's windows, unlabelled (the transduction they exist for), with hyper-parameters selected
once per size on the labelled windows (grouped 3-fold CV). Every model of one size is trained on
the **same** labelled windows (one balanced draw per size), each in its own representation: the
project's (running baseline, the shipped pipeline settings, features with data in half the
windows) and the naive floor's (``naive``: running baseline; ``naive-offline``: per-driver
z-score over both drives, future included). Window G-mean per held-out driver over both drives
(distracted = scored and positive), mean over the held-out drivers with gaze and a texting
drive, and the paired difference to each floor.

Run: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/studies/labelled_sweep.py --out
labelled-sweep.jsonl``; one JSON line per size.
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np

from distractd.models.detectors import fit_cohort, g_mean, model_specs, thin_windows
from distractd.models.detectors._cohort import _balanced_subset
from distractd.models.evaluation import model_drives
from distractd.models.evaluation._halves import driver_halves
from distractd.pipeline import PipelineConfig

ROOT = Path(__file__).resolve().parents[2]
FLOORS = ("naive", "naive-offline")
LEARNERS = ("sselm", "lapsvm")


def rows_of(drives, keep):
    """Thinned training rows of ``drives``: X, y, driver."""
    parts = [(d.X[k], d.label[k], np.full(k.sum(), d.driver_id)) for d, k in zip(drives, keep)]
    return (np.vstack([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]))


def driver_g_mean(drives, scores):
    """Window G-mean over a driver's drives: distracted where scored and positive."""
    y = np.concatenate([d.label for d in drives])
    s = np.concatenate(scores)
    known = y >= 0
    return g_mean(y[known], (np.isfinite(s[known]) & (s[known] > 0)).astype(np.int8))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "taamneh"))
    parser.add_argument("--sizes", nargs="+", type=int, default=[16, 30, 100, 300, 1000],
                        help="labelled windows per size (at least 16: the cohort recipe needs "
                             "8 of each class)")
    parser.add_argument("--unlabelled", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="labelled-sweep.jsonl")
    args = parser.parse_args()

    start = time.perf_counter()
    config = PipelineConfig.from_dict(
        json.loads((ROOT / "config" / "shipped-pipeline.json").read_text()))
    specs = model_specs([*LEARNERS, *FLOORS], "small")
    files = sorted(Path(args.data).glob("T*.csv"))
    drives, names, own = model_drives(files, specs, config, protocols=("normal", "texting"))
    development, held_out = driver_halves(sorted({d.driver_id for d in drives}))
    train = [i for i, d in enumerate(drives) if d.driver_id in development]
    keep = [thin_windows(drives[i].t_end, 5.0) for i in train]
    representations = {"project": [drives[i] for i in train],
                       **{name: [own[name][0][i] for i in train] for name in FLOORS}}
    rows = {key: rows_of(parts, keep) for key, parts in representations.items()}
    X, y, groups = rows["project"]
    usable = np.flatnonzero(np.isfinite(X).all(axis=1) & (y >= 0))
    tested = sorted({d.driver_id for d in drives if d.driver_id in held_out
                     and (d.label == 1).any() and np.isfinite(d.X).all(axis=1).any()})
    for size in args.sizes:
        rng = np.random.default_rng([args.seed, size])
        picked = _balanced_subset(usable, y[usable], size, rng)
        per_model = {name: {} for name in (*LEARNERS, *FLOORS)}
        for spec in specs:
            key = spec.name if spec.name in FLOORS else "project"
            Xs, ys, gs = (part[picked] for part in rows[key])
            fit = fit_cohort(spec, Xs, ys, gs, n_train=len(picked), seed=args.seed)
            for driver in tested:
                index = [i for i, d in enumerate(drives) if d.driver_id == driver]
                test = [own[spec.name][0][i] if key != "project" else drives[i] for i in index]
                model = fit
                if spec.semi_supervised:
                    pool = np.vstack([d.X for d in test])
                    pool = pool[np.isfinite(pool).all(axis=1)]
                    pool = pool[rng.permutation(len(pool))[:args.unlabelled]]
                    model = fit_cohort(spec, Xs, ys, gs, X_unlabelled=pool,
                                       n_train=len(picked), params=fit.params, seed=args.seed)
                scores = []
                for d in test:
                    s = np.full(len(d.X), np.nan)
                    ok = np.isfinite(d.X).all(axis=1)
                    if ok.any():
                        s[ok] = model.decision_function(d.X[ok])
                    scores.append(s)
                per_model[spec.name][driver] = driver_g_mean(test, scores)
        line = {"labelled": int(len(picked)), "scheme": "new-driver (development half labelled, "
                "held-out half scored)", "drivers": len(tested), "features": names,
                "g_mean": {m: round(float(np.mean(list(v.values()))), 3)
                           for m, v in per_model.items()}}
        for floor in FLOORS:
            for learner in LEARNERS:
                diff = np.array([per_model[learner][d] - per_model[floor][d] for d in tested])
                line.setdefault("versus", {})[f"{learner}-{floor}"] = {
                    "mean_difference": round(float(diff.mean()), 3),
                    "wins": int((diff > 0).sum()), "losses": int((diff < 0).sum())}
        line["per_driver"] = per_model
        line["seconds"] = round(time.perf_counter() - start, 1)
        print(json.dumps({k: v for k, v in line.items() if k != "per_driver"}), flush=True)
        with open(args.out, "a") as out:
            out.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
