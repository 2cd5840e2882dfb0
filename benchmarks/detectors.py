"""Detector speed: fits, predictions, selection, one driver's protocol; vs SVC and numpy ports.

Data: 800 windows × 25 z-scored features (two Gaussian classes), 60 labelled, the rest unlabelled
(the source's sizes); the protocol runs on one simulated driver of 540 s (1062 windows). Every
timing is the median and the minimum of repeats on one BLAS thread (``threadpoolctl``); peak
memory is measured separately with ``tracemalloc``. Prints one JSON line per measurement.
Run: .venv/bin/python benchmarks/detectors.py [--quick | --protocol]

``--quick`` skips the per-driver protocol (about half a minute per model) and the LapSVM selection
unit; ``--protocol`` runs only the protocol. The small-grid selection compares the LapSVM
selection's per-ratio LU path with its Hessenberg path and with the previous LU path (one solve
with l + 1 + n_test right-hand sides per ratio, kept here as the baseline) at about an evaluation
fold's size; the LapSVM Newton fit at an evaluation's final-fit size is compared with the previous
fit (every row of the solve, kept here) in the same run.
"""

import argparse
import json
import os
import tempfile
import time
import tracemalloc

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from scipy.linalg import lapack
from scipy.special import expit
from sklearn.model_selection import RepeatedStratifiedKFold
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from distractd.models import LapSVMClassifier, SSELMClassifier, load_model, save_model
from distractd.models.detectors import (
    hidden_output, hidden_weights, knn_graph, laplacian, lapsvm_grid_search, model_specs,
    rbf_kernel, sselm_grid_search,
)
from distractd.models.detectors import _selection as selection_module
from distractd._errors import ModelError
from distractd.models.detectors._elm import _solve_output_weights, _weighted_graph_product
from distractd.models.detectors._graph import _knn, _squared_distances
from distractd.models.detectors._primal_solvers import _newton_sv_steps
from distractd.models.evaluation import evaluate_driver
from distractd.pipeline import extract_features
from distractd.simulators import simulate_cohort

DECADES = [10.0 ** k for k in range(-6, 7)]
SMALL_REG = [1e-2, 1.0, 1e2]
"""The evaluation's default (``--grid small``) regularisation values."""
PROTOCOL_MODELS = ("sselm", "elm", "svm", "lapsvm")


def _data(seed=0, n=800, d=25, n_labelled=60):
    rng = np.random.default_rng(seed)
    y_true = (rng.random(n) < 0.4).astype(int)
    X = rng.normal(size=(n, d)) + 0.6 * y_true[:, None]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    y = np.full(n, -1)
    y[:n_labelled] = y_true[:n_labelled]
    return X, y


def _time_ms(fn, repeats):
    """(median, minimum) wall time of ``fn()`` in milliseconds, after one warm-up call."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times)), 1e3 * float(np.min(times))


def _peak_mb(fn):
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2 ** 20


def _emit(name, **values):
    print(json.dumps({"benchmark": name, **values}), flush=True)


def _emit_timed(name, fn, repeats, memory=False, **extra):
    median, minimum = _time_ms(fn, repeats)
    if memory:
        extra["peak_mb"] = round(_peak_mb(fn), 2)
    _emit(name, ms_median=round(median, 3), ms_min=round(minimum, 3), **extra)


def _numpy_sselm(X, y, C=1.0, lam=1.0, n_hidden=1000, seed=0):
    """Straightforward numpy port of the SS-ELM formula (dense graph and Laplacian, dual)."""
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


def _numpy_lapsvm_newton(K, L, y, gamma_A, gamma_I, max_iter=200):
    """Straightforward numpy port of the reference Newton: the full bordered system every step."""
    n = len(y)
    labelled = y != 0
    alpha, b, f = np.zeros(n), 0.0, np.zeros(n)
    base = gamma_A * np.eye(n) + gamma_I * (L @ K)
    sv_prev = np.zeros(n, dtype=bool)
    for _ in range(max_iter):
        sv = labelled & (y * (f + b) < 1.0)
        if np.array_equal(sv, sv_prev):
            break
        A = np.zeros((n + 1, n + 1))
        A[0, 1:] = 1.0
        A[1:, 0] = sv
        A[1:, 1:] = base + sv[:, None] * K
        solution = np.linalg.solve(A, np.r_[0.0, np.where(sv, y, 0.0)])
        b, alpha = solution[0], solution[1:]
        f = K @ alpha
        sv_prev = sv
    return alpha, b


def _fits(X, y):
    labelled = y != -1
    sselm = SSELMClassifier(n_hidden=1000, C=1.0, lam=1.0, random_state=0)
    _emit_timed("sselm_fit", lambda: sselm.fit(X, y), 9, memory=True, n_windows=len(X),
                n_features=X.shape[1], n_hidden=1000, n_neighbors=10)
    W, b = hidden_weights(X.shape[1], 1000, 0)
    _emit_timed("sselm_stage_hidden_layer", lambda: hidden_output(X, W, b), 15)
    _emit_timed("sselm_stage_graph_10nn_laplacian", lambda: laplacian(knn_graph(X, 10)), 15)
    _emit_timed("graph_stage_gram_distances", lambda: _squared_distances(X), 15)
    D2, sq = _squared_distances(X)
    _emit_timed("graph_stage_knn_screened_exact", lambda: _knn(X, D2, sq, 10, 0), 15)
    H, L = hidden_output(X, W, b), laplacian(knn_graph(X, 10))
    c = np.where(labelled, 1.0, 0.0)
    T = np.where(labelled, np.where(y == 1, 1.0, -1.0), 0.0)[:, None]
    _emit_timed("sselm_stage_solve_dual_mixed_precision",
                lambda: _solve_output_weights(H, T, c, L, 1.0), 9)
    H32 = H.astype(np.float32)
    _emit_timed("sselm_stage_gram_HHt_float32", lambda: H32 @ H32.T, 9)
    _emit_timed("sselm_stage_gram_HHt_float64", lambda: H @ H.T, 9)
    _emit_timed("sselm_fit_numpy_port", lambda: _numpy_sselm(X, y), 3, memory=True)

    common = dict(gamma_A=1e-2, gamma_I=1e-2, kernel_width=3.0)
    newton = LapSVMClassifier(**common)
    pcg = LapSVMClassifier(solver="pcg", **common)
    _emit_timed("lapsvm_newton_fit", lambda: newton.fit(X, y), 9, memory=True,
                n_iter=newton.fit(X, y).n_iter_)
    _emit_timed("lapsvm_pcg_stability_fit", lambda: pcg.fit(X, y), 9, memory=True,
                n_iter=pcg.fit(X, y).n_iter_)
    K = rbf_kernel(X, X, 3.0)
    signed = np.where(labelled, np.where(y == 1, 1.0, -1.0), 0.0)
    _emit_timed("lapsvm_stage_kernel", lambda: rbf_kernel(X, X, 3.0), 15)
    _emit_timed("lapsvm_stage_kernel_from_shared_distances",
                lambda: np.exp(D2 * (-0.5 / 9.0)), 15)
    _emit_timed("lapsvm_newton_solver_given_K_L", lambda: newton._solve(K, L, signed), 9)
    _emit_timed("lapsvm_pcg_solver_given_K_L", lambda: pcg._solve(K, L, signed), 15)
    _emit_timed("lapsvm_newton_solver_numpy_port",
                lambda: _numpy_lapsvm_newton(K, L, signed, 1e-2, 1e-2), 3)
    svc = SVC(C=1.0, gamma=0.5 / 9.0)
    _emit_timed("sklearn_svc_fit_labelled", lambda: svc.fit(X[labelled], y[labelled]), 15,
                n_labelled=int(labelled.sum()))
    return {"sselm": sselm.fit(X, y), "lapsvm": newton.fit(X, y), "svc": svc}


def _predictions(models, X):
    one = X[:1].copy()
    thousand = X[np.arange(1000) % len(X)].copy()
    for name, model in models.items():
        predict = model._decision if hasattr(model, "_decision") else model.decision_function
        one_us = min(_time_ms(lambda: predict(one), 2000)[1] for _ in range(3)) * 1e3
        median, minimum = _time_ms(lambda: predict(thousand), 30)
        _emit(f"{name}_predict", one_window_us_min=round(one_us, 2),
              thousand_windows_ms_median=round(median, 3),
              thousand_windows_ms_min=round(minimum, 3))
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "sselm.npz")
        save_model(path, models["sselm"], normalizer_mean=np.zeros(X.shape[1]),
                   normalizer_scale=np.ones(X.shape[1]),
                   feature_names=[f"f{i}" for i in range(X.shape[1])], pipeline_config={})
        detector = load_model(path)
    one_us = min(_time_ms(lambda: detector.decision_function(one), 2000)[1] for _ in range(3))
    _emit("detector_sselm_predict_raw_row", one_window_us_min=round(1e3 * one_us, 2))


def _inner_folds(X, y):
    labelled = y != -1
    folds = RepeatedStratifiedKFold(n_splits=4, n_repeats=3, random_state=0).split(
        X[labelled], y[labelled])
    unlabelled = np.flatnonzero(~labelled)
    return [(np.r_[train, unlabelled], test) for train, test in folds]


def _selection(X, y, quick):
    folds = _inner_folds(X, y)
    grid = {"C": DECADES, "lam": DECADES}
    model = SSELMClassifier(n_hidden=1000, random_state=0)
    start = time.perf_counter()
    best = sselm_grid_search(model, grid, X, y, folds)
    _emit("sselm_grid_search_3x4fold_13x13", s=round(time.perf_counter() - start, 3), best=best,
          peak_mb=round(_peak_mb(lambda: sselm_grid_search(model, grid, X, y, folds[:1])), 1))
    if quick:
        return
    one = {"gamma_A": DECADES, "gamma_I": DECADES, "kernel_width": [10.0]}
    start = time.perf_counter()
    lapsvm_grid_search(LapSVMClassifier(), one, X, y, folds[:1])
    elapsed = time.perf_counter() - start
    _emit("lapsvm_grid_search_13x13_one_fold_one_width", s=round(elapsed, 3),
          extrapolated_full_selection_13x13x4_widths_12_folds_s=round(elapsed * 4 * len(folds), 1))


def _previous_lu_ratio_products(LK, K, K_test, lab, ratios):
    """The LU path before 2026-11-26: per ratio, every row of ``A⁻ᵀ[K_lᵀ, 1, K_testᵀ]``."""
    n, n_l = len(LK), len(lab)
    rhs = np.empty((n, n_l + 1 + len(K_test)), order="F")
    rhs[:, :n_l] = K[lab].T
    rhs[:, n_l] = 1.0
    rhs[:, n_l + 1:] = K_test.T
    for mu in ratios:
        shifted = LK.copy()
        shifted[np.diag_indices(n)] += mu
        lu, piv, info = lapack.dgetrf(shifted.T, overwrite_a=True)
        if info > 0:
            raise ModelError(f"μI + LK is singular (μ = {mu})")
        solved = lapack.dgetrs(lu, piv, rhs)[0][lab]
        test_mu = solved[:, n_l + 1:].T
        yield solved[:, :n_l].T, solved[:, n_l], lambda sv_rows, z, test_mu=test_mu: (
            test_mu[:, sv_rows] @ z)


def _previous_newton_graph(K, L, y, gamma_A, gamma_I, max_iter=200):
    """The LapSVM Newton fit with a graph term before 2026-11-26 (every row of the solve)."""
    n = len(y)
    lab = np.flatnonzero(y != 0)
    L = sp.csr_matrix(L)
    B = _weighted_graph_product(np.zeros(n), float(gamma_I), L.indptr, L.indices, L.data, K)
    B[np.diag_indices(n)] += gamma_A
    lu, piv, _ = lapack.dgetrf(B.T, overwrite_a=True)
    rhs = np.empty((n, len(lab) + 1), order="F")
    rhs[:, :-1] = K[lab].T
    rhs[:, -1] = 1.0
    solved = lapack.dgetrs(lu, piv, rhs, overwrite_b=True)[0][lab]
    z, sv_rows, b, n_iter = _newton_sv_steps(solved[:, :-1].T, solved[:, -1], y[lab],
                                             np.ones(len(lab)), True, max_iter)
    E_z = np.zeros(n)
    E_z[lab[sv_rows]] = z
    return lapack.dgetrs(lu, piv, E_z, trans=1, overwrite_b=True)[0], b


def _small_grid_selection():
    """LapSVM selection on the evaluation's small grid at about an evaluation fold's size.

    One inner fold of 1,600 windows (1,100 labelled): 3 × 3 (γ_A, γ_I), 2 kernel widths. The
    per-ratio LU path against the Hessenberg path (still used from 7 distinct ratios up) and the
    previous LU path in the same run, wall and process CPU seconds (on a shared machine the
    CPU seconds are the comparable figure); the chosen parameters must agree.
    """
    X, y = _data(seed=1, n=1600, n_labelled=1100)
    folds = _inner_folds(X, y)[:1]
    grid = {"gamma_A": SMALL_REG, "gamma_I": SMALL_REG, "kernel_width": [3.0, 10.0]}
    lu_ratios_max = selection_module._LU_RATIOS_MAX
    lu_products = selection_module._lu_ratio_products
    timings, cpu, chosen = {}, {}, {}
    for path, limit, products in (("hessenberg_baseline", 0, lu_products),
                                  ("previous_lu_baseline", lu_ratios_max,
                                   _previous_lu_ratio_products),
                                  ("lu_per_ratio", lu_ratios_max, lu_products)):
        selection_module._LU_RATIOS_MAX = limit
        selection_module._lu_ratio_products = products
        start, start_cpu = time.perf_counter(), time.process_time()
        chosen[path] = lapsvm_grid_search(LapSVMClassifier(), grid, X, y, folds)
        timings[path] = time.perf_counter() - start
        cpu[path] = time.process_time() - start_cpu
    selection_module._LU_RATIOS_MAX = lu_ratios_max
    selection_module._lu_ratio_products = lu_products
    _emit("lapsvm_grid_search_small_3x3x2_one_fold_1600", n_labelled=1100,
          s=round(timings["lu_per_ratio"], 2),
          baseline_hessenberg_s=round(timings["hessenberg_baseline"], 2),
          baseline_previous_lu_s=round(timings["previous_lu_baseline"], 2),
          speedup=round(timings["hessenberg_baseline"] / timings["lu_per_ratio"], 2),
          speedup_vs_previous_lu=round(timings["previous_lu_baseline"] / timings["lu_per_ratio"],
                                       2),
          cpu_s=round(cpu["lu_per_ratio"], 2),
          baseline_hessenberg_cpu_s=round(cpu["hessenberg_baseline"], 2),
          baseline_previous_lu_cpu_s=round(cpu["previous_lu_baseline"], 2),
          same_choice=len({str(c) for c in chosen.values()}) == 1)
    model = SSELMClassifier(n_hidden=1000, random_state=0)
    start = time.perf_counter()
    best = sselm_grid_search(model, {"C": SMALL_REG, "lam": SMALL_REG}, X, y, folds)
    _emit("sselm_grid_search_small_3x3_one_fold_1600", n_labelled=1100,
          s=round(time.perf_counter() - start, 2), best=best)
    _final_fit_size_newton()


def _final_fit_size_newton():
    """The LapSVM Newton solver at an evaluation's final-fit size (2,600 windows, 2,000
    labelled) given K and L, against the previous fit in the same run; α must agree."""
    X, y = _data(seed=2, n=2600, n_labelled=2000)
    signed = np.where(y == -1, 0.0, np.where(y == 1, 1.0, -1.0))
    K, L = rbf_kernel(X, X, 3.0), laplacian(knn_graph(X, 10))
    newton = LapSVMClassifier(gamma_A=1e-2, gamma_I=1.0, kernel_width=3.0)
    alpha = newton._solve(K, L, signed)[0]
    previous = _previous_newton_graph(K, L, signed, 1e-2, 1.0)[0]
    median, minimum = _time_ms(lambda: newton._solve(K, L, signed), 3)
    base_median, base_minimum = _time_ms(lambda: _previous_newton_graph(K, L, signed, 1e-2, 1.0),
                                         3)
    _emit("lapsvm_newton_solver_2600_2000_labelled", ms_median=round(median, 1),
          ms_min=round(minimum, 1), baseline_previous_ms_median=round(base_median, 1),
          baseline_previous_ms_min=round(base_minimum, 1),
          speedup_min=round(base_minimum / minimum, 2),
          alpha_max_difference_relative=float(np.abs(alpha - previous).max()
                                              / np.abs(previous).max()))


def _protocol():
    """The full protocol for one simulated driver of 540 s, each model alone (full grids).

    ``evaluate_driver`` as the evaluation runs it: 12 outer splits, each a 3 × 4-fold selection
    over the full grid, the final fit (5 hidden layers for the ELM family) and the deployment
    metrics. Prints one line per model, then the total.
    """
    windows = extract_features(simulate_cohort(1, 0, duration_s=540.0)[0])
    total = 0.0
    for spec in model_specs(PROTOCOL_MODELS):
        start = time.perf_counter()
        result = evaluate_driver(windows.X, windows.label, windows.t_end, [spec], n_draws=5)
        elapsed = time.perf_counter() - start
        total += elapsed
        splits = result[spec.name]["splits"]
        _emit(f"protocol_one_driver_{spec.name}", s=round(elapsed, 2),
              n_windows=len(windows.X), splits=len(splits),
              select_s=round(sum(s["select_ms"] for s in splits) / 1e3, 2),
              mean_test_g_mean=round(float(np.mean([s["g_mean"] for s in splits])), 4))
    _emit("protocol_one_driver_total", s=round(total, 2), models=list(PROTOCOL_MODELS))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the slow protocol parts")
    parser.add_argument("--protocol", action="store_true",
                        help="run only the one-driver protocol")
    args = parser.parse_args(argv)
    X, y = _data()
    _emit("environment", load_average_1min=round(os.getloadavg()[0], 2), cpus=os.cpu_count(),
          blas_threads=1)
    with threadpool_limits(limits=1):
        if not args.protocol:
            models = _fits(X, y)
            _predictions(models, X)
            _selection(X, y, args.quick)
            _small_grid_selection()
        if not args.quick:
            _protocol()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
