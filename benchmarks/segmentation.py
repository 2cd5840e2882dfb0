"""Segmentation benchmark: ACA and HACA on 3,600 frames (n_max 40), online update with 50 prototypes.

Prints one JSON line per measurement. Targets: ≤ 2 s per ACA iteration, ≤ 200 MB peak memory,
≤ 200 µs per online update.
"""

import json
import resource
import time

import numpy as np

from distractd.models import ACA, HACA, OnlineSegmenter, SegmentPrototypes, Segmentation
from distractd.models._aca import _dp_search, _make_problem


def _sequence(n, d=25, seed=0):
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=2.0, size=(4, d))
    y = np.repeat(rng.integers(0, 4, size=n // 20 + 1), 20)[:n]
    return means[y] + rng.normal(size=(n, d))


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main():
    X = _sequence(3600)
    ACA(n_clusters=4, max_length=40).fit(X[:100])  # compile
    problem = _make_problem(X, "gaussian", None, 0.3, None, "bench")
    rng = np.random.default_rng(0)
    starts = np.concatenate([[0], np.cumsum(rng.integers(20, 41, size=200))])
    starts = np.append(starts[starts < 3600], 3600)
    seg = Segmentation(starts, rng.integers(0, 4, size=len(starts) - 1))
    diag = problem.diag()
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        seg, _ = _dp_search(problem, seg, 4, 1, 40, diag)
        times.append(time.perf_counter() - t0)
    print(json.dumps({"bench": "aca_iteration", "n_frames": 3600, "max_length": 40,
                      "s_per_iteration": min(times), "peak_rss_mb": _peak_mb()}))
    t0 = time.perf_counter()
    haca = HACA(n_clusters=(8, 4), min_length=(2, 1), max_length=(10, 8), nei=0.3,
                init="kmeans", n_init=1, max_iter=5, random_state=0).fit(X)
    print(json.dumps({"bench": "haca_fit", "n_frames": 3600, "max_length": [10, 8],
                      "s_total": time.perf_counter() - t0, "peak_rss_mb": _peak_mb(),
                      "n_segments": int(len(haca.segments_.labels))}))
    protos = SegmentPrototypes.from_segmentation(X, seg, n_clusters=4, sigma=problem.sigma,
                                                 max_length=40, max_segments=50, seed=0)
    online = OnlineSegmenter(protos)
    stream = _sequence(2000, seed=1)
    online.update(stream[:100])
    lat = []
    for x in stream[100:]:
        t0 = time.perf_counter()
        online.update(x)
        lat.append(time.perf_counter() - t0)
    lat = np.array(lat) * 1e6
    print(json.dumps({"bench": "online_update", "n_prototype_segments": protos.n_segments,
                      "prototype_frames": int(protos.X.shape[0]), "max_length": 40,
                      "us_p50": float(np.percentile(lat, 50)), "us_p99": float(np.percentile(lat, 99)),
                      "windows_per_s": float(1e6 / lat.mean())}))


if __name__ == "__main__":
    main()
