"""Clustering fit times on 1,000 windows of a simulated drive (targets: ELM-JEC <= 1 s, ELM-CLR <= 5 s).

Prints one JSON line per method: ms per fit (median and max of ``--repeats``), iterations, peak
traced Python memory (MB). k-means (10 restarts) is the baseline. n_H = 500, n_O = 1 (S0 §5.5.2).
"""

import argparse
import json
import time
import tracemalloc

import numpy as np

from distractd.models.clustering import make_clusterer
from distractd.models.clustering._labelling import _standardize
from distractd.pipeline import FEATURE_NAMES, extract_features
from distractd.simulators import simulate_drive


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    windows = extract_features(simulate_drive(0))
    rows = np.linspace(0, len(windows) - 1, args.windows).astype(int)
    Z, _ = _standardize(windows.X[rows], FEATURE_NAMES)
    for method in ("kmeans", "uselm", "elm-jec", "elm-clr"):
        make_clusterer(method, random_state=0).fit(Z)  # warm-up
        times = []
        for seed in range(args.repeats):
            start = time.perf_counter()
            model = make_clusterer(method, random_state=seed).fit(Z)
            times.append(1000 * (time.perf_counter() - start))
        tracemalloc.start()
        make_clusterer(method, random_state=0).fit(Z)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        print(json.dumps({"method": method, "n_windows": len(Z), "ms_per_fit_median":
                          round(float(np.median(times)), 1), "ms_per_fit_max": round(max(times), 1),
                          "n_iter": int(getattr(model, "n_iter_", 0)),
                          "peak_memory_mb": round(peak, 1)}), flush=True)


if __name__ == "__main__":
    main()
