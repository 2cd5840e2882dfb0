"""Sim-to-real: detectors trained only on simulated drives, scored on the real texting drives.

Training: ``--drivers`` simulated drivers of the Taamneh-like study (``simulate_texting_study``:
a ``normal-blocks`` and a ``texting-blocks`` drive each, the ``sparse-gaze`` tracker at 1 Hz) of
cohort ``--seed`` — a seed never used while the simulator was calibrated (2201) — with the cohort
recipe (every labelled window thinned to one per 5 s, at most 2000, hyper-parameters by grouped
CV over the simulated drivers). Semi-supervised models also get up to 600 windows of the real
drives, unlabelled (one fit for all real drivers). No real label is used.

Scoring: the normal drive (4) and texting drive (7) of every subject in ``--data`` (Taamneh et
al. 2017, doi:10.1038/sdata.2017.110), in the evaluation's representation (the running per-stream
baseline; the features with data in half of the *simulated* windows; the naive floor, trained
the same way, on its own features and standardisation: ``naive`` through the running baseline,
``naive-offline`` each driver's drives z-scored together, offline). Per real drive, the
evaluation's record: window G-mean over every window of known truth (an undecided window is no
alarm), the fraction of windows decided, false alarms per attentive hour through the decision rule
(``DecisionRule``, ``loss_evidence`` from the features). Per driver the drives are averaged;
figures are printed for the held-out half of the drivers (even positions of the sorted list), the
development half (T003, T007, ...) and all, then two-sided paired t-tests over all drivers of each
model's G-mean against the ``naive-offline`` floor trained the same way.

Run (a few minutes): ``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/sim_to_real.py``.
"""

import argparse
import json
import zlib
from pathlib import Path

import numpy as np

from distractd._json import json_ready
from distractd.models.detectors import fit_cohort, loss_evidence, model_specs, thin_windows
from distractd.models.evaluation import (
    drive_record, driver_halves, half_figures, model_drives, naive_pairs, paired_tests,
    per_driver_means, summarise_scheme,
)
from distractd.pipeline.formats import read_taamneh
from distractd.simulators import simulate_texting_study

SEED = 20261125
"""The simulated training cohort's seed (calibration used 2201)."""


def run_sim_to_real(emit, *, data="../shared/data/taamneh", n_drivers=12, seed=SEED,
                    models=("svm", "elm", "sselm", "naive", "naive-offline"), grid="small", n_train=2000,
                    n_unlabelled=600, subset=None, subjects=None):
    """Train each model on simulated drives only and score it on the real drives.

    Parameters
    ----------
    emit : callable
        Called with one JSON-ready dict per model as soon as it is measured (``bench``
        "sim_to_real"), then one per paired test against the naive floor ("sim_to_real_test").
    data : str or Path
        Folder of Taamneh et al. subject files (``T*.csv``).
    n_drivers : int, default=12
        Simulated training drivers (two drives each).
    seed : int, default=SEED
        Seed of the simulated cohort and of the fits.
    models : sequence of str, default=("svm", "elm", "sselm", "naive", "naive-offline")
        Model ids (:func:`~distractd.models.detectors.model_specs`); the naive floor's variants
        bring their own features and standardisation
        (:func:`~distractd.models.evaluation.model_drives`), trained the same way.
    grid : {"small", "full"}, default="small"
    n_train, n_unlabelled : int
        Most labelled (simulated) and unlabelled (real) windows of a fit.
    subset : int or None, default=None
        Score only the first ``subset`` subject files (a quick run).
    subjects : sequence of str, optional
        Score only these subjects' files (``T011``...); the development and held-out halves are
        still those of every subject file in ``data``.

    Returns
    -------
    dict
        Per model, per real driver id: the records of its drives, as
        :func:`~distractd.models.evaluation.evaluate_scheme` returns them.
    """
    every = sorted(Path(data).glob("T*.csv"))
    files = [path for path in every if not subjects or path.stem in subjects][:subset]
    if not files:
        raise SystemExit(f"--data {data}: no T*.csv subject files"
                         + (f" of {sorted(subjects)}" if subjects else ""))
    real = [r for path in files for r in read_taamneh(path, drives=(4, 7))]
    simulated = simulate_texting_study(n_drivers, seed)
    specs = model_specs(models, grid)
    train_drives, train_names, train_own = model_drives(simulated, specs)
    test_drives, _, test_own = model_drives(real, specs, features=train_names)
    development, held_out = driver_halves([path.stem for path in every])
    results = {}
    for spec in specs:
        train, names = train_own.get(spec.name, (train_drives, train_names))
        test, test_names = test_own.get(spec.name, (test_drives, train_names))
        if test_names != names:
            raise RuntimeError(f"sim-to-real: {spec.name} has features {names} on the simulated "
                               f"drives and {test_names} on the real ones")
        decision = {"loss_evidence": loss_evidence(names)}
        kept = [thin_windows(d.t_end, 5.0) for d in train]
        X = np.vstack([d.X[k] for d, k in zip(train, kept)])
        y = np.concatenate([d.label[k] for d, k in zip(train, kept)])
        groups = np.concatenate([np.full(k.sum(), d.driver_id) for d, k in zip(train, kept)])
        pool = np.vstack([d.X for d in test])
        pool = pool[np.isfinite(pool).all(axis=1)]
        rng = np.random.default_rng([seed, zlib.crc32(spec.name.encode())])
        fit = fit_cohort(spec, X, y, groups, n_train=n_train, seed=int(rng.integers(2**31)),
                         X_unlabelled=pool[rng.permutation(len(pool))[:n_unlabelled]])
        per = results[spec.name] = {}
        for drive in test:
            scores = np.full(len(drive.X), np.nan)
            finite = np.isfinite(drive.X).all(axis=1)
            if finite.any():
                scores[finite] = fit.decision_function(drive.X[finite])
            per.setdefault(drive.driver_id, []).append(
                drive_record(drive, scores, decision, 10.0, False))
        emit({"bench": "sim_to_real", "model": spec.name,
              "scheme": f"sim-to-real (trained on {n_drivers} simulated drivers, seed {seed}; "
                        f"scored on {len(per)} real drivers)",
              "features": names, "decision": decision, "params": json_ready(fit.params),
              **{name: half_figures(per_driver_means(per, metric), development, held_out)
                 for name, metric in (("g_mean", "g_mean"), ("coverage", "coverage"),
                                      ("false_alarms_per_hour", "false_alarms_per_hour"))},
              "summary": {key: value for key, value in
                          summarise_scheme({spec.name: per})[spec.name].items()
                          if key not in ("per_driver", "drivers")},
              "per_driver": {driver: round(value, 3) for driver, value in
                             sorted(per_driver_means(per, "g_mean").items()) if np.isfinite(value)}})
    for test in paired_tests(summarise_scheme(results), naive_pairs(list(results)),
                             alternative="two-sided"):
        emit({"bench": "sim_to_real_test", "drivers": "all", **test})
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data/taamneh")
    parser.add_argument("--drivers", type=int, default=12)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--models", nargs="+",
                        default=["svm", "elm", "sselm", "naive", "naive-offline"])
    parser.add_argument("--subset", type=int, default=None, help="first N subject files only")
    parser.add_argument("--subjects", nargs="*", default=None,
                        help="these subjects' files only (e.g. T011); halves of all files")
    parser.add_argument("--out", default="sim-to-real-results")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    def emit(line):
        print(json.dumps(line), flush=True)
        with open(out / "results.jsonl", "a") as file:
            file.write(json.dumps(line) + "\n")

    run_sim_to_real(emit, data=args.data, n_drivers=args.drivers, seed=args.seed,
                    models=args.models, subset=args.subset, subjects=args.subjects)


if __name__ == "__main__":
    main()
