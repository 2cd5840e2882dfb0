"""Segmentation quality on simulated drives: today's inputs against the drift-free representation,
and the online segmenter's commits, lag and state against its prototype budget.

For each driver of a simulated cohort (``cohort_seeds(--drivers, --cohort-seed)``; the default seed
90210 was never used in development, which used 31415) and each protocol (cognitive,
visual-manual): a full-protocol drive (about 25 min), 2 Hz windows.

- batch ACA and HACA with the driving defaults and k = 2 (``segment_drive``) on today's inputs
  (raw features z-scored over the drive) and on the drift-free representation (running baseline,
  label-free feature selection: ``t_end=..., features="auto"``), and on the latter joined by the
  shipped default model's view (``prior=model_prior(...)``): frame accuracy after the best
  one-to-one (Hungarian) map (the metric of S2 Tables 4.4.7-4.4.8) and after mapping every
  cluster to its majority class, and boundary F1 within ±2 s against the true task-section
  boundaries; a predicted boundary is a change of cluster between consecutive windows, placed
  half-way between their centres;
- online (``--online``): the pipeline's causal per-stream baseline (``PipelineConfig(baseline=True)``),
  the windows after its warm-up; prototypes fitted on the first half of the drive
  (``fit_segment_prototypes``, z-score of that half, clusters labelled by that half's truth), the
  second half streamed window by window through ``OnlineSegmenter``, for each prototype budget
  (longest segment, segments kept) and commit lag: frame accuracy of the stored cluster labels,
  agreement with the batch programme, forced commits (of all commits) and forced frames, the
  commit lag of every frame (median, p95, max) and the stream's state in bytes.

Prints JSON lines as it goes. Run:
``OMP_NUM_THREADS=1 .venv/bin/python benchmarks/studies/segmentation_quality.py [--drivers 2] [--online]``
"""

import argparse
import json
import time

import numpy as np
from scipy.optimize import linear_sum_assignment

from distractd.models import ACA, OnlineSegmenter, load_model
from distractd.models.clustering import model_prior
from distractd.models.evaluation import clustering_accuracy, clustering_accuracy_many_to_one
from distractd.models.segmentation import fit_segment_prototypes, segment_drive, standardize_windows
from distractd.pipeline import FEATURE_NAMES, PipelineConfig, extract_features
from distractd.simulators import cohort_seeds, simulate_drive

TOLERANCE_S = 2.0
COHORT_SEED = 90210
PROTOCOLS = ("cognitive", "visual-manual")
INPUTS = {"today": {}, "drift-free": {"features": "auto"}, "drift-free+prior": {"features": "auto"}}
DEFAULT_MODEL = "distractd/data/default_model.npz"
# online prototype budgets: (longest segment s, segments kept, commit lag in windows)
BUDGETS = [(20.0, 50, 40), (20.0, 16, 40), (10.0, 32, 40), (10.0, 16, 40), (10.0, 8, 40),
           (10.0, 16, 20), (5.0, 16, 40)]


def _drive(seed, protocol="cognitive", config=None):
    recording = simulate_drive(seed, protocol=protocol)
    windows = extract_features(recording, config)
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
    known = y >= 0
    return {"acc_hungarian": clustering_accuracy(y[known], frame_clusters[known]),
            "acc_many_to_one": clustering_accuracy_many_to_one(y[known], frame_clusters[known]),
            "boundary_f1": boundary_f1(_boundaries(centres, frame_clusters), truth),
            "n_segments": int(np.count_nonzero(np.diff(frame_clusters)) + 1)}


def evaluate_batch(windows, centres, truth, method, inputs, seed, prior):
    t0 = time.perf_counter()
    t_end = None if inputs == "today" else windows.t_end
    est = segment_drive(windows.X, method=method, n_clusters=2, random_state=seed, t_end=t_end,
                        prior=prior if inputs.endswith("prior") else None, **INPUTS[inputs])
    scores = _scores(windows.label, est.labels_, centres, truth)
    scores["fit_s"] = time.perf_counter() - t0
    return scores


def evaluate_online(windows, centres, truth, seed, budget, hop_s=0.5):
    max_seconds, max_segments, lag = budget
    ready = np.isfinite(windows.X).all(axis=1)
    X, y, centres = windows.X[ready], windows.label[ready], centres[ready]
    half = len(X) // 2
    Z_train, mean, scale = standardize_windows(X[:half])
    protos = fit_segment_prototypes(Z_train, y[:half], max_seconds=max_seconds,
                                    max_segments=max_segments, random_state=seed)
    Z_test = standardize_windows(X[half:], mean, scale)[0]
    online = OnlineSegmenter(protos, max_lag=lag)
    t0 = time.process_time()
    rows = np.concatenate([online.update(z)[0] for z in Z_test] + [online.flush()])
    cpu_us = (time.process_time() - t0) / len(Z_test) * 1e6
    lengths = rows["end"] - rows["start"]
    frame_label = np.repeat(rows["label"], lengths)
    frame_cluster = np.repeat(rows["cluster"], lengths)
    lag_frames = (np.repeat(rows["committed_at"], lengths) - np.arange(len(Z_test)))[:-lag]
    batch = protos.segment(Z_test)
    y_test = y[half:]
    known = y_test >= 0
    owned = sum(v.nbytes for v in vars(online).values() if isinstance(v, np.ndarray))
    n_commits = len(np.unique(rows["committed_at"]))
    return {"budget": {"max_seconds": max_seconds, "max_segments": max_segments,
                       "max_lag": lag, "horizon": online.horizon},
            "prototype_frames": int(protos.X.shape[0]), "state_bytes": int(owned),
            "acc_stored_labels": float(np.mean(frame_label[known] == y_test[known])),
            "acc_many_to_one": clustering_accuracy_many_to_one(y_test[known],
                                                               frame_cluster[known]),
            "boundary_f1": boundary_f1(_boundaries(centres[half:], frame_label), truth),
            "agreement_with_batch": float(np.mean(
                frame_cluster == np.repeat(batch["cluster"], batch["end"] - batch["start"]))),
            "commits": n_commits, "forced_commits": online.forced_commits,
            "forced_commit_fraction": online.forced_commits / max(n_commits, 1),
            "forced_frame_fraction": online.forced_frames / len(Z_test), "pruned": online.pruned,
            "lag_s": [float(np.median(lag_frames)) * hop_s,
                      float(np.percentile(lag_frames, 95)) * hop_s, float(lag_frames.max()) * hop_s],
            "cpu_us_per_update": cpu_us}


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
    return {key: round(float(np.mean([r[key] for r in results])), 4) for key in results[0]
            if not isinstance(results[0][key], (list, dict))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drivers", type=int, default=2)
    parser.add_argument("--cohort-seed", type=int, default=COHORT_SEED)
    parser.add_argument("--online", action="store_true", help="the online budget table instead")
    parser.add_argument("--grid", action="store_true", help="the ACA tuning grid (cognitive)")
    parser.add_argument("--n-grid", type=int, default=3)
    args = parser.parse_args()
    seeds = cohort_seeds(args.drivers, args.cohort_seed)
    detector = load_model(DEFAULT_MODEL)
    config = PipelineConfig.from_dict({**detector.pipeline_config, "baseline": False})
    if args.grid:
        run_grid([_drive(s) for s in seeds[:args.n_grid]])
        return
    summary = {}
    for protocol in PROTOCOLS:
        for i, seed in enumerate(seeds):
            if args.online:
                windows, centres, truth = _drive(seed, protocol, PipelineConfig(baseline=True))
                for budget in BUDGETS:
                    row = evaluate_online(windows, centres, truth, i, budget)
                    summary.setdefault((protocol, budget), []).append(row)
                    print(json.dumps({"protocol": protocol, "seed": seed, **row}), flush=True)
                continue
            windows, centres, truth = _drive(seed, protocol, config)
            prior = model_prior(detector, windows, FEATURE_NAMES)
            row = {"protocol": protocol, "seed": seed, "n_windows": len(windows),
                   "majority_rate": float(max(np.mean(windows.label == 1),
                                              np.mean(windows.label == 0)))}
            for inputs in INPUTS:
                for method in ("aca", "haca"):
                    row[f"{inputs}/{method}"] = evaluate_batch(windows, centres, truth, method,
                                                               inputs, i, prior)
                    summary.setdefault((protocol, inputs, method), []).append(
                        row[f"{inputs}/{method}"])
            print(json.dumps(row), flush=True)
    for key, rows in summary.items():
        print(json.dumps({"summary": [str(k) for k in key], "drivers": args.drivers,
                          "cohort_seed": args.cohort_seed, **_mean(rows)}), flush=True)


if __name__ == "__main__":
    main()
