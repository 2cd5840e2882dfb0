"""Per-driver clustering G-mean on a simulated 34-driver cohort, beside S0 Tables 5.3/5.4.

Each driver: ``simulate_drive(seed)``, features, every third window (1.5 s spacing, about the
source's 1,053 windows per subject), windows of known label and quality >= 0.5, z-scored; c = 2,
n_O = 1, n_H = 500. Clustering G-mean with the best map (S0 eq 5.12), mean over ``--runs`` seeds,
then mean and sd over drivers. The rule mapping's G-mean (no ground truth) is reported too.

Hyper-parameters: the labelling defaults (``make_clusterer``), or with ``--lodo`` chosen per driver by
leave-one-driver-out over a small grid (the best mean G-mean on the other drivers), as in S0 §5.5.2.
Prints one JSON line per driver, then one per method.
"""

import argparse
import itertools
import json
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from distractd.models import clustering_g_mean, g_mean, make_clusterer
from distractd.models._labelling import _cluster_from_rule, _standardize
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


def _scores(method, params, Z, names, y, runs):
    best, rule = [], []
    for seed in range(runs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            c = make_clusterer(method, random_state=seed, **params).fit_predict(Z)
        best.append(clustering_g_mean(y, c))
        rule.append(g_mean(y, (c == _cluster_from_rule(Z, names, c)).astype(int)))
    return float(np.mean(best)), float(np.mean(rule))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drivers", type=int, default=34)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--lodo", action="store_true", help="leave-one-driver-out grid selection")
    args = parser.parse_args()
    methods = list(PUBLISHED)
    # table[method][grid index] -> list over drivers of (best-map G-mean, rule G-mean)
    table = {m: [[] for _ in (GRID[m] if args.lodo else [{}])] for m in methods}
    for driver in range(args.drivers):
        Z, names, y = _driver_data(driver)
        line = {"driver": driver, "n_windows": len(y), "distracted_fraction": round(y.mean(), 3)}
        for method in methods:
            for i, params in enumerate(GRID[method] if args.lodo else [{}]):
                table[method][i].append(_scores(method, params, Z, names, y, args.runs))
            line[method] = round(table[method][0][-1][0], 3)
        print(json.dumps(line), flush=True)
    for method in methods:
        scores = np.array(table[method])  # (grid, drivers, 2)
        if args.lodo:
            total = scores[:, :, 0].sum(axis=1)
            chosen = [int(np.argmax(total - scores[:, d, 0])) for d in range(args.drivers)]
            per_driver = scores[chosen, np.arange(args.drivers)]
        else:
            per_driver = scores[0]
        print(json.dumps({"method": method, "drivers": args.drivers, "runs": args.runs,
                          "lodo": args.lodo,
                          "g_mean_mean": round(float(per_driver[:, 0].mean()), 4),
                          "g_mean_sd": round(float(per_driver[:, 0].std(ddof=1)), 4),
                          "rule_g_mean_mean": round(float(per_driver[:, 1].mean()), 4),
                          "published": PUBLISHED[method]}), flush=True)


if __name__ == "__main__":
    main()
