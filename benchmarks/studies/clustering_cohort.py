"""Labelling on simulated drivers never used in development: clusters, expert corrections, trust.

For each driver of a simulated cohort (``cohort_seeds(--drivers, --cohort-seed)``; the default seed
90210 was never used in development, which used 31415) and each protocol (cognitive,
visual-manual), drives 0 and 1 are simulated (full protocol, about 25 min) and windowed with the
shipped default model's pipeline settings, baseline off (raw windows). Every third window of drive
0 (1.5 s apart, about the source's 1,053 windows per subject) is clustered; c = 2.

1. **Clustering G-mean** (best map, S0 eq 5.12) of every method on today's inputs (whole drive
   z-scored, all features: ``representation="drive", features="all"``) and on the drift-free
   representation (running baseline, label-free feature selection: ``"baseline", "auto"``).
2. **Labelling** (``label_windows``, drift-free, auto features), without a prior (gaze-dispersion
   rule) and with the shipped default model's prior (``model_prior``): the fraction of windows of
   known truth the expert must correct (label wrong or left out), the labels' G-mean, mean
   confidence against the fraction right (calibration), its expected calibration error over 10
   bins, Cohen's kappa with the prior and whether the warning fired.
3. **A detector trained on the uncorrected labels** (the README's research loop: ``train_detector``
   SS-ELM, 60 labelled windows, small grid) on drive 0 with the preliminary labels, window G-mean
   on drive 1 (a new drive of the same driver) against the truth; beside it the same detector
   trained on drive 0's true labels.

Prints one JSON line per (driver, protocol) as it goes, then one summary line per protocol.
Run: ``OMP_NUM_THREADS=1 .venv/bin/python benchmarks/studies/clustering_cohort.py [--drivers 4]``
"""

import argparse
import json
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from distractd.models import load_model
from distractd.models.clustering import METHODS, label_windows, model_prior
from distractd.models.detectors import train_detector
from distractd.models.evaluation import clustering_g_mean, g_mean
from distractd.pipeline import FEATURE_NAMES, PipelineConfig, extract_features
from distractd.simulators import cohort_seeds, simulate_drive

PROTOCOLS = ("cognitive", "visual-manual")
INPUTS = {"today": ("drive", "all"), "drift-free": ("baseline", "auto")}
DEFAULT_MODEL = "distractd/data/default_model.npz"


def calibration_error(confidence, correct, bins=10):
    """Expected calibration error: mean |confidence - fraction right| over equal-count bins."""
    order = np.argsort(confidence)
    parts = np.array_split(order, bins)
    return float(sum(len(p) * abs(confidence[p].mean() - correct[p].mean()) for p in parts if
                     len(p)) / len(confidence))


def labelling_scores(labels, truth):
    known = truth >= 0
    kept = known & (labels.label >= 0)
    correct = (labels.label[kept] == truth[kept]).astype(float)
    return {"expert_corrects": float(1 - correct.sum() / known.sum()),
            "g_mean": g_mean(truth[kept], labels.label[kept]),
            "mean_confidence": float(labels.confidence[kept].mean()),
            "fraction_right": float(correct.mean()),
            "ece": calibration_error(labels.confidence[kept], correct),
            "kappa_prior": labels.trust["kappa_prior"], "warned": labels.warning is not None}


def detector_g_mean(windows, labels, test, seed):
    """G-mean on ``test`` of an SS-ELM trained on ``windows`` carrying ``labels``."""
    train = windows[np.arange(len(windows))]
    train.label = labels.astype(np.int8)
    estimator, parts = train_detector(train, "sselm", n_labelled=60, grid="small", seed=seed,
                                      segment_frames=0)
    columns = [FEATURE_NAMES.index(name) for name in parts["feature_names"]]
    X = test.X[:, columns]
    ok = np.isfinite(X).all(axis=1) & (test.label >= 0)
    Z = (X[ok] - parts["normalizer_mean"]) / parts["normalizer_scale"]
    return g_mean(test.label[ok], (estimator.decision_function(Z) > 0).astype(int))


def run_driver(seed, protocol, detector, config, methods):
    windows = extract_features(simulate_drive(seed, protocol=protocol), config)
    test = extract_features(simulate_drive(seed, drive=1, protocol=protocol), config)
    thin = np.arange(0, len(windows), 3)
    w = windows[thin]
    known = w.label >= 0
    row = {"seed": seed, "protocol": protocol, "n_windows": len(w),
           "distracted_fraction": round(float(np.mean(w.label[known] == 1)), 3)}
    prior = model_prior(detector, w, FEATURE_NAMES)
    row["prior_g_mean"] = g_mean(w.label[known], (prior[known] > 0.5).astype(int))
    for name, (representation, features) in INPUTS.items():
        for method in methods:
            t0 = time.perf_counter()
            result = label_windows(w, FEATURE_NAMES, method, representation=representation,
                                   features=features, random_state=0)
            used = known & (result.cluster >= 0)
            row[f"{name}/{method}"] = {
                "cluster_g_mean": clustering_g_mean(w.label[used], result.cluster[used]),
                "fit_s": round(time.perf_counter() - t0, 2)}
            if name == "today":
                continue
            row[f"{name}/{method}"]["no_prior"] = labelling_scores(result, w.label)
            with_prior = label_windows(w, FEATURE_NAMES, method, prior=prior, random_state=0)
            row[f"{name}/{method}"]["prior"] = labelling_scores(with_prior, w.label)
            if method == "kmeans":
                # every window of drive 0 carries the label of the nearest labelled (thinned) one
                spread = np.repeat(with_prior.label, 3)[:len(windows)]
                row["detector_on_prior_kmeans_labels"] = detector_g_mean(windows, spread, test, 0)
    row["detector_on_truth"] = detector_g_mean(windows, windows.label, test, 0)
    return row


def summary(rows, methods):
    out = {}
    for name in INPUTS:
        for method in methods:
            cells = [r[f"{name}/{method}"] for r in rows]
            entry = {"cluster_g_mean": _mean_sd([c["cluster_g_mean"] for c in cells])}
            for mode in ("no_prior", "prior"):
                if mode in cells[0]:
                    entry[mode] = {key: _mean_sd([c[mode][key] for c in cells]) for key in
                                   ("expert_corrects", "g_mean", "mean_confidence",
                                    "fraction_right", "ece")}
                    entry[mode]["warned"] = int(sum(c[mode]["warned"] for c in cells))
            out[f"{name}/{method}"] = entry
    for key in ("prior_g_mean", "detector_on_prior_kmeans_labels", "detector_on_truth"):
        out[key] = _mean_sd([r[key] for r in rows])
    return out


def _mean_sd(values):
    values = np.asarray(values, dtype=float)
    return [round(float(np.nanmean(values)), 3), round(float(np.nanstd(values)), 3)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drivers", type=int, default=4)
    parser.add_argument("--cohort-seed", type=int, default=90210)
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--model", default=DEFAULT_MODEL, help="cohort model giving the prior")
    args = parser.parse_args()
    detector = load_model(args.model)
    config = PipelineConfig.from_dict({**detector.pipeline_config, "baseline": False})
    rows = {protocol: [] for protocol in PROTOCOLS}
    warnings.simplefilter("ignore", ConvergenceWarning)
    for seed in cohort_seeds(args.drivers, args.cohort_seed):
        for protocol in PROTOCOLS:
            row = run_driver(seed, protocol, detector, config, args.methods)
            rows[protocol].append(row)
            print(json.dumps(row), flush=True)
    for protocol in PROTOCOLS:
        print(json.dumps({"summary": protocol, "drivers": args.drivers,
                          "cohort_seed": args.cohort_seed, **summary(rows[protocol],
                                                                     args.methods)}),
              flush=True)


if __name__ == "__main__":
    main()
