"""Detector speed: fits, predictions and the SS-ELM grid search, against SVC and a plain numpy port.

Data: 800 windows × 25 z-scored features (two Gaussian classes), 60 labelled, the rest unlabelled.
Prints one JSON line per measurement (milliseconds or microseconds, median of repeats).
Run: .venv/bin/python benchmarks/detectors.py
"""

import json
import time
import tracemalloc

import numpy as np
from scipy.special import expit
from sklearn.model_selection import RepeatedStratifiedKFold
from sklearn.svm import SVC

from distractd.models import (
    LapSVMClassifier, SSELMClassifier, knn_graph, laplacian, sselm_grid_search,
)


def _data(seed=0, n=800, d=25, n_labelled=60):
    rng = np.random.default_rng(seed)
    y_true = (rng.random(n) < 0.4).astype(int)
    X = rng.normal(size=(n, d)) + 0.6 * y_true[:, None]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    y = np.full(n, -1)
    y[:n_labelled] = y_true[:n_labelled]
    return X, y


def _median_ms(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))


def _emit(name, **values):
    print(json.dumps({"benchmark": name, **values}), flush=True)


def _numpy_sselm(X, y, C=1.0, lam=1.0, n_hidden=1000, seed=0):
    """Straightforward numpy port of the SS-ELM formula (dense Laplacian, dual branch)."""
    rng = np.random.default_rng(seed)
    W = rng.uniform(-1, 1, (X.shape[1], n_hidden))
    H = expit(X @ W)
    D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    idx = np.argsort(D2, axis=1)[:, 1:11]
    A = np.zeros_like(D2)
    rows = np.repeat(np.arange(len(X)), 10)
    t = np.sqrt(D2[rows, idx.ravel()]).mean()
    A[rows, idx.ravel()] = np.exp(-D2[rows, idx.ravel()] / (2 * t * t))
    A = np.maximum(A, A.T)
    L = np.diag(A.sum(1)) - A
    lab = y != -1
    c = np.zeros(len(y))
    for k in (0, 1):
        c[lab & (y == k)] = C * lab.sum() / (2 * (lab & (y == k)).sum())
    T = np.where(lab, np.where(y == 1, 1.0, -1.0), 0.0)
    return H.T @ np.linalg.solve(np.eye(len(X)) + (np.diag(c) + lam * L) @ H @ H.T, c * T)


def main():
    X, y = _data()
    labelled = y != -1
    sselm = SSELMClassifier(n_hidden=1000, C=1.0, lam=1.0, random_state=0)
    _emit("sselm_fit", n_windows=800, n_features=25, n_hidden=1000,
          ms=_median_ms(lambda: sselm.fit(X, y), 7))
    _emit("graph_10nn", ms=_median_ms(lambda: laplacian(knn_graph(X, 10)), 7))
    _emit("sselm_fit_numpy_port", ms=_median_ms(lambda: _numpy_sselm(X, y), 3))
    newton = LapSVMClassifier(gamma_A=1e-2, gamma_I=1e-2, kernel_width=3.0)
    pcg = LapSVMClassifier(gamma_A=1e-2, gamma_I=1e-2, kernel_width=3.0, solver="pcg")
    _emit("lapsvm_newton_fit", ms=_median_ms(lambda: newton.fit(X, y), 5),
          n_iter=newton.n_iter_)
    _emit("lapsvm_pcg_stability_fit", ms=_median_ms(lambda: pcg.fit(X, y), 5),
          n_iter=pcg.n_iter_)
    svc = SVC(C=1.0, gamma=0.5 / 9.0)
    _emit("sklearn_svc_fit_labelled", ms=_median_ms(lambda: svc.fit(X[labelled], y[labelled]),
                                                    7))
    for name, model in (("sselm", sselm), ("lapsvm", newton), ("sklearn_svc", svc)):
        one = X[:1].copy()
        thousand = X[np.arange(1000) % 800].copy()
        predict = model._decision if hasattr(model, "_decision") else model.decision_function
        per_call = [_median_ms(lambda: predict(one), 200) for _ in range(3)]
        _emit(f"{name}_predict", one_window_us=1e3 * min(per_call),
              thousand_windows_ms=_median_ms(lambda: predict(thousand), 20))
    folds = list(RepeatedStratifiedKFold(n_splits=4, n_repeats=3, random_state=0).split(
        X[labelled], y[labelled]))
    unl = np.flatnonzero(~labelled)
    folds = [(np.r_[train, unl], test) for train, test in folds]
    grid = {"C": [10.0 ** k for k in range(-6, 7)], "lam": [10.0 ** k for k in range(-6, 7)]}
    tracemalloc.start()
    start = time.perf_counter()
    best = sselm_grid_search(sselm, grid, X, y, folds)
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    _emit("sselm_grid_search_3x4fold_13x13", s=elapsed, best=best, peak_mb=peak / 2 ** 20)


if __name__ == "__main__":
    main()
