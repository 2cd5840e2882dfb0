"""Segmentation benchmark: ACA and HACA on 3,600 frames (n_max 40), online update with 50 prototypes.

Prints one JSON line per measurement. Targets: ≤ 2 s per ACA iteration, ≤ 200 MB peak memory,
≤ 200 µs per online update (wall clock, and the thread's CPU time, which excludes preemption on a
shared machine). The online segmenter is measured alone (its state stays in cache) and as the
daemon runs it, one window per stream in turn over ``N_STREAMS`` streams (each stream's state is
cold), with the bytes of numpy state each stream owns and the RSS growth per stream. Memory of
the batch fits is reported three ways: the process's peak RSS (imports included), the peak RSS
growth during the measured call (Linux: the peak is reset through ``/proc/self/clear_refs``
first), and the peak of numpy allocations traced by ``tracemalloc`` (arrays allocated inside
compiled code are not traced, hence the RSS growth).

Run: ``.venv/bin/python benchmarks/segmentation.py``
"""

import json
import resource
import time
import tracemalloc
from pathlib import Path

import numpy as np

from distractd.models import HACA, OnlineSegmenter
from distractd.models.segmentation import SegmentPrototypes, Segmentation
from distractd.models.segmentation._aca_search import _dp_search, _make_problem

N_FRAMES = 3600
MAX_LENGTH = 40
N_STREAMS = 100


def _sequence(n, d=25, seed=0):
    """Four-state piecewise-constant sequence with unit noise, 20-frame blocks."""
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=2.0, size=(4, d))
    y = np.repeat(rng.integers(0, 4, size=n // 20 + 1), 20)[:n]
    return means[y] + rng.normal(size=(n, d))


def _state_bytes(segmenter):
    """Bytes of the numpy arrays a segmenter owns (the shared prototypes excluded)."""
    return sum(v.nbytes for k, v in vars(segmenter).items() if isinstance(v, np.ndarray))


def _percentiles_us(seconds):
    us = 1e6 * np.asarray(seconds)
    return {"us_p50": float(np.percentile(us, 50)), "us_p90": float(np.percentile(us, 90)),
            "us_p99": float(np.percentile(us, 99)), "us_max": float(us.max())}


def _process_peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _rss_mb(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _measure(fn):
    """(result, seconds, peak RSS growth in MB, tracemalloc peak in MB) of one call."""
    try:
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    except OSError:
        pass
    base = _rss_mb("VmRSS")
    tracemalloc.start()
    t0 = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - t0
    traced = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return result, seconds, _rss_mb("VmHWM") - base, traced


def _initial_segmentation(rng):
    starts = np.concatenate([[0], np.cumsum(rng.integers(20, MAX_LENGTH + 1, size=200))])
    starts = np.append(starts[starts < N_FRAMES], N_FRAMES)
    return Segmentation(starts, rng.integers(0, 4, size=len(starts) - 1))


def bench_aca(X):
    problem = _make_problem(X, "gaussian", None, 0.3, None, "bench")
    small = _make_problem(X[:100], "gaussian", None, 0.3, None, "bench")
    _dp_search(small, Segmentation(np.array([0, 50, 100]), np.array([0, 1])), 2, 1, MAX_LENGTH,
               small.diag())  # compile
    seg = _initial_segmentation(np.random.default_rng(0))
    diag = problem.diag()
    runs = []
    for _ in range(3):
        (seg, _), seconds, rss, traced = _measure(
            lambda s=seg: _dp_search(problem, s, 4, 1, MAX_LENGTH, diag))
        runs.append((seconds, rss, traced))
    seconds, rss, traced = np.array(runs).T
    print(json.dumps({"bench": "aca_iteration", "n_frames": N_FRAMES, "max_length": MAX_LENGTH,
                      "n_features": X.shape[1], "s_per_iteration_min": float(seconds.min()),
                      "s_per_iteration_median": float(np.median(seconds)),
                      "peak_rss_growth_mb": float(rss.max()),
                      "tracemalloc_peak_mb": float(traced.max()),
                      "process_peak_rss_mb": _process_peak_mb(),
                      "baseline_author_cpp_s": 4.5, "baseline_author_cpp_peak_mb": 458}))
    return problem, seg


def bench_haca(X):
    haca = HACA(n_clusters=(8, 4), min_length=(2, 1), max_length=(10, 4), nei=0.3, init="kmeans",
                n_init=1, max_iter=5, random_state=0)
    haca, seconds, rss, traced = _measure(lambda: haca.fit(X))
    print(json.dumps({"bench": "haca_fit", "n_frames": N_FRAMES, "max_length": [10, 4],
                      "n_init": 1, "max_iter": 5, "s_total": seconds,
                      "n_segments": [int(len(lv.labels)) for lv in haca.levels_],
                      "peak_rss_growth_mb": rss, "tracemalloc_peak_mb": traced,
                      "process_peak_rss_mb": _process_peak_mb()}))


def bench_online(problem, seg):
    protos = SegmentPrototypes.from_segmentation(problem.X, seg, n_clusters=4,
                                                 sigma=problem.sigma, max_length=MAX_LENGTH,
                                                 max_segments=50, seed=0)
    stream = _sequence(4000, seed=1)
    for max_lag, name in ((None, "max_length"), (len(stream), "exact")):
        online = OnlineSegmenter(protos, max_lag=max_lag)
        online.update(stream[:100])
        wall = np.empty(len(stream) - 100)
        cpu = np.empty_like(wall)
        for u, x in enumerate(stream[100:]):
            c0 = time.thread_time()
            t0 = time.perf_counter()
            online.update(x)
            wall[u] = time.perf_counter() - t0
            cpu[u] = time.thread_time() - c0
        cpu_us = 1e6 * cpu
        print(json.dumps({"bench": "online_update", "max_lag": name,
                          "n_prototype_segments": protos.n_segments,
                          "prototype_frames": int(protos.X.shape[0]), "max_length": MAX_LENGTH,
                          "n_updates": len(wall), **_percentiles_us(wall),
                          "cpu_us_p50": float(np.percentile(cpu_us, 50)),
                          "cpu_us_p99": float(np.percentile(cpu_us, 99)),
                          "windows_per_s": float(1 / wall.mean()),
                          "forced_commits": online.forced_commits,
                          "state_bytes_per_stream": _state_bytes(online)}))
    return protos


def bench_online_streams(protos):
    """One window per stream in turn, as the daemon does: each update finds its state cold."""
    streams = [_sequence(300, seed=10 + i) for i in range(N_STREAMS)]
    wall = np.empty((250, N_STREAMS))
    OnlineSegmenter(protos).update(streams[0][:50])  # compile before the RSS baseline
    base = _rss_mb("VmRSS")
    segmenters = [OnlineSegmenter(protos) for _ in range(N_STREAMS)]
    for online, X in zip(segmenters, streams):
        online.update(X[:50])
    c0 = time.process_time()
    t0 = time.perf_counter()
    for u in range(50, 300):
        for i, (online, X) in enumerate(zip(segmenters, streams)):
            t1 = time.perf_counter()
            online.update(X[u])
            wall[u - 50, i] = time.perf_counter() - t1
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - c0
    rss_kb = (_rss_mb("VmRSS") - base) * 1024 / N_STREAMS
    wall = wall.ravel()
    print(json.dumps({"bench": "online_update_streams", "n_streams": N_STREAMS,
                      "n_prototype_segments": protos.n_segments,
                      "prototype_frames": int(protos.X.shape[0]), "max_length": MAX_LENGTH,
                      "n_updates": len(wall), **_percentiles_us(wall),
                      "cpu_us_mean": 1e6 * cpu / len(wall),
                      "windows_per_s": len(wall) / seconds,
                      "state_bytes_per_stream": _state_bytes(segmenters[0]),
                      "rss_kb_per_stream": rss_kb}))


def main():
    X = _sequence(N_FRAMES)
    problem, seg = bench_aca(X)
    bench_haca(X)
    bench_online_streams(bench_online(problem, seg))


if __name__ == "__main__":
    main()
