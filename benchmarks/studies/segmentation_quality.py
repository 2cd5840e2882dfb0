"""Segmentation quality on simulated drives: ACA vs HACA, and the online segmenter's commit lag.

For each driver of a simulated cohort (``simulate_cohort``-style seeds, full protocol drives of
20-30 min, 2 Hz windows from ``extract_features``):

- batch ACA and HACA with the driving defaults (``segment_drive``) on the whole drive: frame
  accuracy after mapping every cluster to its majority class (many-to-one) and after the best
  one-to-one (Hungarian) map (the metric of S2 Tables 4.4.7-4.4.8), and boundary F1 within ±2 s
  against the true task-section boundaries; a predicted boundary is a change of cluster between
  consecutive segments, placed half-way between the centres of the two windows around it;
- online: prototypes fitted on the first half of the drive (``fit_segment_prototypes``, z-score of
  that half), the second half streamed window by window through ``OnlineSegmenter``: frame
  accuracy of the stored cluster labels (no mapping fitted on the test half), agreement with the
  batch programme, forced commits, and the commit lag of every frame (median, p95, max).

``--grid`` instead runs the one-parameter-at-a-time tuning grid around the defaults on the first
``--n-grid`` drivers (ACA only, one restart, at most 10 iterations, to stay cheap). Prints JSON lines.

Run: ``.venv/bin/python benchmarks/studies/segmentation_quality.py [--drivers 10] [--grid]``
"""

import argparse
import json
import time

import numpy as np
from scipy.optimize import linear_sum_assignment

from distractd.models import ACA, OnlineSegmenter
from distractd.models.evaluation import clustering_accuracy, clustering_accuracy_many_to_one
from distractd.models.segmentation import fit_segment_prototypes, segment_drive, standardize_windows
from distractd.pipeline import extract_features
from distractd.simulators import cohort_seeds, simulate_drive

TOLERANCE_S = 2.0
COHORT_SEED = 2024


def _drive(seed):
    recording = simulate_drive(seed)
    windows = extract_features(recording)
    t = recording.samples[:, 0]
    flips = np.flatnonzero(np.diff(recording.labels.astype(np.int64)) != 0)
    truth = (t[flips] + t[flips + 1]) / 2
    centres = (windows.t_start + windows.t_end) / 2
    return windows, centres, truth


def _boundaries(centres, frame_clusters):
    change = np.flatnonzero(np.diff(frame_clusters) != 0)
    return (centres[change] + centres[change + 1]) / 2


def boundary_f1(predicted, truth, tolerance_s=TOLERANCE_S):
    """F1 of a one-to-one matching of boundaries within ``tolerance_s`` (maximum matching)."""
    if len(predicted) == 0 or len(truth) == 0:
        return 0.0
    distance = np.abs(predicted[:, None] - truth[None, :])
    rows, cols = linear_sum_assignment(np.where(distance <= tolerance_s, 0.0, 1.0))
    hits = int(np.sum(distance[rows, cols] <= tolerance_s))
    precision, recall = hits / len(predicted), hits / len(truth)
    return 0.0 if hits == 0 else 2 * precision * recall / (precision + recall)


def _scores(y, frame_clusters, centres, truth):
    return {"acc_many_to_one": clustering_accuracy_many_to_one(y, frame_clusters),
            "acc_hungarian": clustering_accuracy(y, frame_clusters),
            "boundary_f1": boundary_f1(_boundaries(centres, frame_clusters), truth),
            "n_segments": int(np.count_nonzero(np.diff(frame_clusters)) + 1)}


def evaluate_batch(windows, centres, truth, method, seed):
    t0 = time.perf_counter()
    est = segment_drive(windows.X, method=method, random_state=seed)
    scores = _scores(windows.label, est.labels_, centres, truth)
    scores["n_segments_raw"] = len(est.segments_.labels)
    scores["fit_s"] = time.perf_counter() - t0
    return scores


def evaluate_online(windows, centres, truth, seed, hop_s=0.5):
    half = len(windows) // 2
    Z_train, mean, scale = standardize_windows(windows.X[:half])
    protos = fit_segment_prototypes(Z_train, windows.label[:half], random_state=seed)
    Z_test = standardize_windows(windows.X[half:], mean, scale)[0]
    online = OnlineSegmenter(protos)
    rows = np.concatenate([online.update(z)[0] for z in Z_test] + [online.flush()])
    lengths = rows["end"] - rows["start"]
    frame_label = np.repeat(rows["label"], lengths)
    frame_cluster = np.repeat(rows["cluster"], lengths)
    lag = np.repeat(rows["committed_at"], lengths) - np.arange(len(Z_test))
    lag = lag[:rows["start"][-1]]  # the last segment is committed by the flush
    batch = protos.segment(Z_test)
    y = windows.label[half:]
    return {"acc_stored_labels": float(np.mean(frame_label == y)),
            "acc_many_to_one": clustering_accuracy_many_to_one(y, frame_cluster),
            "boundary_f1": boundary_f1(_boundaries(centres[half:], frame_cluster), truth),
            "agreement_with_batch": float(np.mean(
                frame_cluster == np.repeat(batch["cluster"], batch["end"] - batch["start"]))),
            "forced_commits": online.forced_commits, "n_segments": len(rows),
            "lag_windows": [float(np.median(lag)), float(np.percentile(lag, 95)), int(lag.max())],
            "lag_s": [float(np.median(lag)) * hop_s, float(np.percentile(lag, 95)) * hop_s,
                      float(lag.max()) * hop_s],
            "prototype_segments": protos.n_segments,
            "cluster_labels": protos.cluster_labels.tolist()}


GRID = {"nei": [0.05, 0.1, 0.3, 0.6], "max_seconds": [10.0, 20.0, 40.0],
        "n_clusters": [2, 4, 8], "min_seconds": [None, 5.0]}
BASE = {"nei": 0.3, "max_seconds": 20.0, "n_clusters": 4, "min_seconds": None}


def run_grid(drives, hop_s=0.5):
    configs = [BASE] + [{**BASE, name: value} for name, values in GRID.items()
                        for value in values if value != BASE[name]]
    for config in configs:
        results = []
        for i, (windows, centres, truth) in enumerate(drives):
            Z = standardize_windows(windows.X)[0]
            max_len = int(round(config["max_seconds"] / hop_s))
            min_s = config["min_seconds"]
            min_len = 2 if min_s is None else int(round(min_s / hop_s))
            t0 = time.perf_counter()
            aca = ACA(n_clusters=config["n_clusters"], min_length=min_len, max_length=max_len,
                      enforce_min_length=config["min_seconds"] is not None, nei=config["nei"],
                      init="kmeans", n_init=1, max_iter=10, random_state=i).fit(Z)
            results.append({**_scores(windows.label, aca.labels_, centres, truth),
                            "fit_s": time.perf_counter() - t0})
        print(json.dumps({"grid": config, **_mean(results)}), flush=True)


def _mean(results):
    return {key: float(np.mean([r[key] for r in results])) for key in results[0]
            if not isinstance(results[0][key], list)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drivers", type=int, default=10)
    parser.add_argument("--grid", action="store_true")
    parser.add_argument("--n-grid", type=int, default=3)
    args = parser.parse_args()
    seeds = cohort_seeds(args.drivers, COHORT_SEED)
    if args.grid:
        run_grid([_drive(s) for s in seeds[:args.n_grid]])
        return
    summary = {"aca": [], "haca": [], "online": []}
    for i, seed in enumerate(seeds):
        windows, centres, truth = _drive(seed)
        row = {"driver": i, "seed": int(seed), "n_windows": len(windows),
               "distracted_fraction": float(np.mean(windows.label == 1))}
        for method in ("aca", "haca"):
            row[method] = evaluate_batch(windows, centres, truth, method, i)
            summary[method].append(row[method])
        row["online"] = evaluate_online(windows, centres, truth, i)
        summary["online"].append(row["online"])
        print(json.dumps(row), flush=True)
    lags = np.array([r["lag_windows"] for r in summary["online"]])
    print(json.dumps({"summary": {method: _mean(rows) for method, rows in summary.items()},
                      "online_lag_windows_median_of_medians": float(np.median(lags[:, 0])),
                      "online_lag_windows_max": int(lags[:, 2].max())}))


if __name__ == "__main__":
    main()
