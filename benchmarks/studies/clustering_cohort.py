"""Per-driver clustering G-mean on a simulated 34-driver cohort, beside S0 Tables 5.3/5.4.

Each driver: ``simulate_drive(seed)``, features, every third window (1.5 s spacing, about the
source's 1,053 windows per subject), windows of known label and quality >= 0.5, z-scored; c = 2,
n_O = 1, n_H = 500. Clustering G-mean with the best map (S0 eq 5.12), mean over ``--runs`` seeds,
then mean and sd over drivers. The rule mapping's G-mean (no ground truth) is reported too.

Hyper-parameters: the labelling defaults (``make_clusterer``), or with ``--lodo`` chosen per driver by
leave-one-driver-out over a small grid (the best mean G-mean on the other drivers), as in S0 §5.5.2.
``--features`` names one or more feature sets (``FEATURE_SETS`` of the labelling module; default
``all``), each scored on the same drives.

What drives the clusters: per driver, the absolute correlation of every z-scored feature with the
cluster indicator (first seed) and with the true label; the summary line lists the five features
with the largest mean over drivers.
Prints one JSON line per driver, then one per (feature set, method).
"""

import argparse
import itertools
import json
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from distractd.models.clustering import make_clusterer
from distractd.models.clustering._labelling import (
    FEATURE_SETS, _cluster_from_rule, _feature_columns, _standardize,
)
from distractd.models.evaluation import clustering_g_mean, g_mean
from distractd.pipeline import FEATURE_NAMES, extract_features
from distractd.simulators import simulate_drive

PUBLISHED = {"kmeans": 0.5732, "uselm": 0.6581, "elm-jec": 0.6994, "elm-clr": 0.6801}
GRID = {
    "kmeans": [{}],
    "uselm": [{"lam": lam} for lam in (2.0**-4, 1.0, 2.0**4)],
    "elm-jec": [{"lam": lam, "gamma": gamma} for lam, gamma in
                itertools.product((2.0**-2, 1.0, 2.0**2), (2.0**-2, 1.0, 2.0**2))],
    "elm-clr": [{"delta": delta, "n_neighbors": k} for delta, k in
                itertools.product((1e-2, 1.0, 1e2), (6, 16, 31))],
}


def _driver_data(seed):
    windows = extract_features(simulate_drive(seed))
    rows = np.arange(0, len(windows), 3)
    rows = rows[(windows.label[rows] >= 0) & (windows.quality[rows] >= 0.5)]
    Z, names = _standardize(windows.X[rows], FEATURE_NAMES)
    return Z, names, windows.label[rows].astype(int)


def _abs_correlation(Z, v):
    """|Pearson correlation| of every column of ``Z`` (z-scored) with ``v``; 0 for a constant v."""
    centred = v - v.mean()
    norm = np.sqrt((centred**2).sum() * len(v))
    return np.abs(Z.T @ centred) / norm if norm > 0 else np.zeros(Z.shape[1])


def _scores(method, params, Z, names, y, runs, columns):
    """Mean best-map and rule-map G-mean over ``runs`` seeds, and the first seed's correlations."""
    best, rule = [], []
    for seed in range(runs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            c = make_clusterer(method, random_state=seed, **params).fit_predict(Z[:, columns])
        best.append(clustering_g_mean(y, c))
        rule.append(g_mean(y, (c == _cluster_from_rule(Z, names, c)).astype(int)))
        if seed == 0:
            correlation = _abs_correlation(Z, c.astype(float))
    return float(np.mean(best)), float(np.mean(rule)), correlation


def _top(names, correlations, n=5):
    mean = np.mean(correlations, axis=0)
    return {names[i]: round(float(mean[i]), 3) for i in np.argsort(mean)[::-1][:n]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drivers", type=int, default=34)
    parser.add_argument("--first-driver", type=int, default=0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--methods", nargs="+", choices=list(PUBLISHED), default=list(PUBLISHED))
    parser.add_argument("--features", nargs="+", choices=list(FEATURE_SETS), default=["all"])
    parser.add_argument("--lodo", action="store_true", help="leave-one-driver-out grid selection")
    args = parser.parse_args()
    drivers = range(args.first_driver, args.first_driver + args.drivers)
    cases = [(features, method) for features in args.features for method in args.methods]
    # table[case][grid index] -> list over drivers of (best-map G-mean, rule G-mean)
    table = {case: [[] for _ in (GRID[case[1]] if args.lodo else [{}])] for case in cases}
    correlations = {case: [] for case in cases}
    label_correlations = []
    for driver in drivers:
        Z, names, y = _driver_data(driver)
        if names != list(FEATURE_NAMES):
            raise SystemExit(f"driver {driver}: constant or missing features, got {names}")
        label_correlations.append(_abs_correlation(Z, y.astype(float)))
        line = {"driver": driver, "n_windows": len(y), "distracted_fraction": round(y.mean(), 3)}
        for features, method in cases:
            columns = _feature_columns(names, features)
            for i, params in enumerate(GRID[method] if args.lodo else [{}]):
                best, rule, correlation = _scores(method, params, Z, names, y, args.runs, columns)
                table[features, method][i].append((best, rule))
                if i == 0:
                    correlations[features, method].append(correlation)
            key = method if len(args.features) == 1 else f"{features}/{method}"
            line[key] = round(table[features, method][0][-1][0], 3)
        print(json.dumps(line), flush=True)
    print(json.dumps({"label_correlation_top5": _top(FEATURE_NAMES, label_correlations)}),
          flush=True)
    for features, method in cases:
        scores = np.array(table[features, method])  # (grid, drivers, 2)
        if args.lodo:
            total = scores[:, :, 0].sum(axis=1)
            chosen = [int(np.argmax(total - scores[:, d, 0])) for d in range(len(drivers))]
            per_driver = scores[chosen, np.arange(len(drivers))]
        else:
            per_driver = scores[0]
        print(json.dumps({"method": method, "features": features, "drivers": len(drivers),
                          "runs": args.runs, "lodo": args.lodo,
                          "g_mean_mean": round(float(per_driver[:, 0].mean()), 4),
                          "g_mean_sd": round(float(per_driver[:, 0].std(ddof=1)), 4),
                          "rule_g_mean_mean": round(float(per_driver[:, 1].mean()), 4),
                          "published": PUBLISHED[method],
                          "cluster_correlation_top5": _top(FEATURE_NAMES,
                                                           correlations[features, method])}),
              flush=True)


if __name__ == "__main__":
    main()
