"""How much could the manifold term gain on simulated drives? Oracle grids and graph structure.

For each simulated driver, every grid point is scored on the test folds of the protocol's first
repeat (4 splits, 60 labelled windows, the rest of the training fold unlabelled) and its G-mean
averaged over them; the best point is then an oracle that no selection on the labelled windows can
beat:

- ``elm``: the best ELM over C (labelled windows only, plain C, as in the protocol);
- ``sselm_lam_min``: the best SS-ELM at the smallest λ (class-balanced ELM, graph switched off);
- ``sselm``: the best SS-ELM over C × λ; ``manifold_gain`` = sselm − sselm_lam_min is what the
  graph term can add at best.

It also describes the 10-NN graph of the training fold: the share of edges joining windows less than
one window length apart in time (``temporal_edges``), the share joining windows of different truth
(``cross_class_edges``), and the test G-mean of harmonic label propagation over the graph of all
windows from the 60 labels (``harmonic_g_mean``, transductive: how much the graph alone knows).

Prints one JSON line per driver and a summary line. Run:
``.venv/bin/python benchmarks/studies/semi_supervised_gain.py [--drivers 6] [--folds random|blocked]``.
"""

import argparse
import json

import numpy as np
import scipy.sparse.linalg as spla
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from distractd.models import ELMClassifier, SSELMClassifier
from distractd.models.detectors import knn_graph, laplacian
from distractd.models.evaluation import g_mean, make_splits
from distractd.pipeline import PipelineConfig, extract_features
from distractd.simulators import simulate_cohort

DECADES = [10.0 ** k for k in range(-6, 7)]


def _graph_structure(X, y, t, labelled, test, window_s):
    W = knn_graph(X).tocoo()
    known = (y[W.row] != -1) & (y[W.col] != -1)
    harmonic = _harmonic(laplacian(knn_graph(X)).tocsr(), y, labelled)
    return {"temporal_edges": float(np.mean(np.abs(t[W.row] - t[W.col]) < window_s)),
            "cross_class_edges": float(np.mean(y[W.row][known] != y[W.col][known])),
            "harmonic_g_mean": g_mean(y[test], (harmonic[test] > 0).astype(int))}


def _harmonic(L, y, labelled):
    """Harmonic label propagation: f = ±1 on labelled rows, L f = 0 on the others."""
    rest = np.setdiff1d(np.arange(len(y)), labelled)
    f = np.zeros(len(y))
    f[labelled] = np.where(y[labelled] == 1, 1.0, -1.0)
    f[rest] = spla.spsolve(L[rest][:, rest].tocsc(), -(L[rest][:, labelled] @ f[labelled]))
    return f


def _oracle(XL, yL, XU, X_test, y_test, seed):
    X = np.vstack([XL, XU])
    y = np.r_[yL, np.full(len(XU), -1)]
    elm = [g_mean(y_test, ELMClassifier(C=C, random_state=seed).fit(XL, yL).predict(X_test))
           for C in DECADES]
    sselm = np.array([[g_mean(y_test, SSELMClassifier(C=C, lam=lam, random_state=seed)
                              .fit(X, y).predict(X_test)) for lam in DECADES] for C in DECADES])
    return np.array(elm), sselm


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drivers", type=int, default=6)
    parser.add_argument("--duration", type=float, default=540.0, help="drive length, seconds")
    parser.add_argument("--folds", choices=("random", "blocked"), default="random")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    window_s = PipelineConfig().window_s
    rows = []
    with threadpool_limits(limits=1, user_api="blas"):
        for driver, recording in enumerate(simulate_cohort(args.drivers, args.seed,
                                                           duration_s=args.duration)):
            windows = extract_features(recording)
            finite = np.isfinite(windows.X).all(axis=1)
            X, y, t = windows.X[finite], windows.label[finite], windows.t_end[finite]
            splits = make_splits(y, seed=args.seed + driver, folds=args.folds, t=t,
                                 purge_s=window_s if args.folds == "blocked" else 0.0,
                                 n_repeats=1)
            elm, sselm, graph = [], [], []
            for split in splits:
                scaler = StandardScaler().fit(X[split.train])
                curve, grid = _oracle(scaler.transform(X[split.labelled]), y[split.labelled],
                                      scaler.transform(X[split.unlabelled]),
                                      scaler.transform(X[split.test]), y[split.test], args.seed)
                elm.append(curve)
                sselm.append(grid)
                rows_used = np.r_[split.train, split.test]
                position = {row: i for i, row in enumerate(rows_used)}
                graph.append(_graph_structure(
                    scaler.transform(X[rows_used]), y[rows_used], t[rows_used],
                    np.array([position[r] for r in split.labelled]),
                    np.arange(len(split.train), len(rows_used)), window_s))
            sselm = np.nanmean(sselm, axis=0)
            row = {"elm": float(np.nanmax(np.nanmean(elm, axis=0))),
                   "sselm_lam_min": float(np.nanmax(sselm[:, 0])),
                   "sselm": float(np.nanmax(sselm)),
                   **{key: float(np.nanmean([g[key] for g in graph])) for key in graph[0]}}
            row["manifold_gain"] = row["sselm"] - row["sselm_lam_min"]
            rows.append(row)
            print(json.dumps({"bench": "semi_supervised_gain", "driver": driver,
                              "folds": args.folds, "windows": int(len(y)),
                              **{k: round(v, 4) for k, v in row.items()}}), flush=True)
    print(json.dumps({"bench": "semi_supervised_gain_mean", "drivers": args.drivers,
                      "folds": args.folds,
                      **{k: round(float(np.mean([r[k] for r in rows])), 4) for k in rows[0]}}))


if __name__ == "__main__":
    main()
