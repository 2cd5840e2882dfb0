"""The source evaluation protocol: every model on one driver's splits, over a cohort, and sweeps.

ALGORITHMS §1.11 (S0 §5.4.1, §5.4.3). Per driver, 4-fold cross-validation repeated 3 times gives 12
train/test splits. In each split the z-score is fitted on the training fold, ``n_labelled`` labelled
windows are drawn from it and the rest (or ``n_unlabelled`` of the rest) is unlabelled; the splits
and the draws are made once and shared by every model. Hyper-parameters are chosen by 3×4-fold
cross-validation on the labelled windows only (unlabelled windows join every inner training fold of
a semi-supervised model), then the model is refitted and scored on the test fold. The splits are
:func:`~._splits.make_splits`, the selection :func:`~distractd.models.detectors.select_params`,
the cohort statistics :mod:`._stats`.

Choices the source leaves open, made here (see ``docs/evaluation.md``):

- folds are stratified on the distracted class; windows of unknown truth (-1) are spread over the
  folds, never labelled or scored, but are unlabelled training data and are predicted out of fold;
- the labelled draw is stratified, so the inner 4-fold selection always sees both classes;
- selection maximises the mean inner G-mean (the primary metric), ties going to the first grid point;
- randomised models (the ELM family) are refitted with ``n_draws`` hidden layers and their metrics
  averaged over the draws (S0: 5);
- detection delay and false alarms per hour are computed, per repeat, on the out-of-fold decision
  scores of the whole drive in time order, smoothed as the daemon would.
"""

import time

import numpy as np
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from ..._errors import ConfigError, SchemaError
from ..._json import json_ready
from ..._parallel import Runner
from ..._validation import Interval, check_params
from ..detectors import (
    UNKNOWN, UNLABELLED, binary_scores, decide, detection_delays, false_alarms_per_hour,
    select_params,
)
from ._splits import make_splits
from ._stats import WINDOW_METRICS, summarise

__all__ = ["evaluate_driver", "evaluate_cohort", "sweep"]

_constraints = {
    "n_draws": Interval(1, None, integer=True),
}


def evaluate_driver(X, y, t, specs, *, n_labelled=60, n_unlabelled=None, n_folds=4, n_repeats=3,
                    folds="random", purge_s=0.0, n_draws=1, seed=0, quality=None, alerts=(),
                    decision=None, deployment=True, progress=False):
    """Run the protocol for one driver and every model on the same splits.

    Parameters
    ----------
    X : array-like of shape (n_windows, n_features)
        Raw window features; windows with a non-finite feature are left out.
    y : array-like of shape (n_windows,)
        Window truth: 1 distracted, 0 attentive, -1 unknown.
    t : array-like of shape (n_windows,)
        Window end times in seconds, increasing.
    specs : sequence of ModelSpec
    n_labelled, n_unlabelled, n_folds, n_repeats, folds, purge_s :
        See :func:`make_splits`.
    n_draws : int, default=1
        Refits of randomised models per split (different hidden layers), metrics averaged.
    seed : int, default=0
        Seed of the splits, inner folds and hidden layers.
    quality : array-like of shape (n_windows,) or None, default=None
        Valid-sample fraction of each window (None: all 1).
    alerts : sequence of (float, str), default=()
        ``(time_s, kind)`` of the drive's glance alerts.
    decision : dict or None, default=None
        Keyword arguments of :class:`~distractd.models.detectors.DecisionRule`, the daemon's
        decision rule (None: its defaults).
    deployment : bool, default=True
        Also compute detection delays, false alarms per hour and the fraction of windows decided
        on out-of-fold scores, through the decision rule.
    progress : bool, default=False
        Show a tqdm bar on standard error.

    Notes
    -----
    BLAS runs single-threaded inside: the protocol's matrices are small, and BLAS threads only
    contend (about 10x slower on a loaded 2-core machine).

    Returns
    -------
    dict
        Per model name: ``splits`` (one dict of window metrics, timings in ms and ``params`` per
        split) and, with ``deployment``, ``delays_s`` (per repeat, per episode; NaN = missed),
        ``false_alarms_per_hour`` and ``coverage`` (per repeat).
    """
    check_params({"n_draws": n_draws}, _constraints, owner="protocol")
    with threadpool_limits(limits=1, user_api="blas"):
        X, y, t, quality = _driver_arrays(X, y, t, quality)
        splits = make_splits(y, n_labelled, n_unlabelled, n_folds, n_repeats, seed, folds, t,
                             purge_s)
        return _evaluate_driver(X, y, t, quality, list(alerts), specs,
                                splits, n_folds, n_repeats, n_draws, seed, dict(decision or {}),
                                deployment, progress)


def _evaluate_driver(X, y, t, quality, alerts, specs, splits, n_folds, n_repeats, n_draws, seed,
                     decision, deployment, progress):
    results = {spec.name: {"splits": []} for spec in specs}
    scores = {spec.name: np.full((n_repeats, len(y)), np.nan) for spec in specs}
    bar = tqdm(total=len(splits) * len(specs), disable=not progress, leave=False,
               desc="splits x models")
    for k, split in enumerate(splits):
        scaler = StandardScaler().fit(X[split.train])
        XL, XU = (_zscore(scaler, X[rows]) for rows in (split.labelled, split.unlabelled))
        X_held = _zscore(scaler, X[split.held_out])
        test_rows = np.isin(split.held_out, split.test)
        for spec in specs:
            record, held_scores = _run_split(spec, XL, y[split.labelled], XU, X_held,
                                             y[split.test], test_rows, n_folds, n_repeats,
                                             n_draws, seed + k)
            results[spec.name]["splits"].append(record)
            scores[spec.name][split.repeat, split.held_out] = held_scores
            bar.update()
    bar.close()
    if deployment:
        for spec in specs:
            delays, alarms, coverage = [], [], []
            for repeat_scores in scores[spec.name]:
                states = decide(t, repeat_scores, quality, alerts, **decision)
                delays.append(detection_delays(t, y, states).tolist())
                alarms.append(false_alarms_per_hour(t, y, states))
                coverage.append(float(np.mean(states != UNKNOWN)))
            results[spec.name].update(delays_s=delays, false_alarms_per_hour=alarms,
                                      coverage=coverage)
    return results


def evaluate_cohort(drivers, specs, *, seed=0, runner=None, progress=False, **options):
    """Run :func:`evaluate_driver` for every driver (driver ``i`` gets seed ``seed + 1000 i``).

    Parameters
    ----------
    drivers : sequence of (X, y, t) or (X, y, t, quality)
        Each driver's raw features, window truth, window end times and, optionally, window
        quality.
    specs : sequence of ModelSpec
    seed : int, default=0
    runner : Runner or None, default=None
        Where the drivers are evaluated, one task each with one BLAS thread
        (:func:`~distractd._parallel.batch_runner`; None: here, one after another). The results
        do not depend on it: every driver's splits and hidden layers come from its own seed.
    progress : bool, default=False
        Show a tqdm bar over drivers on standard error.
    **options
        Passed to :func:`evaluate_driver`.

    Returns
    -------
    list of dict
        One :func:`evaluate_driver` result per driver, in order.
    """
    tasks = [((X, y, t, quality[0] if quality else None), seed + 1000 * i)
             for i, (X, y, t, *quality) in enumerate(drivers)]
    return (runner or Runner()).map(_driver_task, tasks, specs, options, progress=progress,
                                    desc="drivers")


def _driver_task(task, specs, options):
    """The task of :func:`evaluate_cohort`: one driver's :func:`evaluate_driver`."""
    (X, y, t, quality), seed = task
    return evaluate_driver(X, y, t, specs, **{**options, "seed": seed, "quality": quality,
                                              "progress": False})


def sweep(drivers, specs, parameter, sizes, *, seed=0, progress=False, **options):
    """Mean and sd over drivers of the test G-mean as one split size varies.

    Parameters
    ----------
    drivers : sequence of (X, y, t)
    specs : sequence of ModelSpec
    parameter : {"n_unlabelled", "n_labelled"}
        The size that varies; the other is taken from ``options`` (S0: l = 60 for the unlabelled
        sweep over {0, 120, 240, 360, 480}, u = 45 for the labelled sweep over 16–80).
    sizes : sequence of int
    seed : int, default=0
    progress : bool, default=False
    **options
        Passed to :func:`evaluate_cohort` (deployment metrics are not computed). Over unlabelled
        sizes, supervised models are evaluated once: they see the same labelled draw and
        z-score at every size.

    Returns
    -------
    dict
        ``parameter``, ``sizes`` and per model ``{"mean": [...], "sd": [...], "per_driver":
        [[...] per size]}`` of the G-mean.
    """
    if parameter not in ("n_unlabelled", "n_labelled"):
        raise ConfigError(f"sweep.parameter must be 'n_unlabelled' or 'n_labelled', "
                          f"got {parameter!r}")
    curves = {spec.name: {"mean": [], "sd": [], "per_driver": []} for spec in specs}
    constant = {}  # supervised models over unlabelled sizes: the same draw and z-score each time
    for size in tqdm(sizes, disable=not progress, desc=parameter):
        run = [spec for spec in specs if spec.name not in constant]
        summary = summarise(evaluate_cohort(drivers, run, seed=seed, deployment=False,
                                            **{**options, parameter: int(size)})) if run else {}
        if parameter == "n_unlabelled":
            constant.update({spec.name: summary[spec.name] for spec in run
                             if not spec.semi_supervised})
        summary = {**constant, **summary}
        for spec in specs:
            values = summary[spec.name]
            curves[spec.name]["mean"].append(values["g_mean"]["mean"])
            curves[spec.name]["sd"].append(values["g_mean"]["sd"])
            curves[spec.name]["per_driver"].append(values["per_driver"]["g_mean"])
    return {"parameter": parameter, "sizes": [int(s) for s in sizes], "models": curves}


def _run_split(spec, XL, yL, XU, X_held, y_test, test_rows, n_folds, n_repeats, n_draws, seed):
    """Select, fit (``n_draws`` times if randomised) and score one model on one split."""
    start = time.perf_counter()
    params = select_params(spec, XL, yL, XU, n_folds, n_repeats, random_state=seed)
    select_ms = 1e3 * (time.perf_counter() - start)
    if spec.semi_supervised:
        X_fit, y_fit = np.vstack([XL, XU]), np.r_[yL, np.full(len(XU), UNLABELLED)]
    else:
        X_fit, y_fit = XL, yL
    draws = n_draws if spec.randomised else 1
    fit_ms, predict_ms, metrics, held = [], [], [], np.zeros(len(X_held))
    for draw in range(draws):
        estimator = spec.make_estimator(seed + draw).set_params(**params)
        start = time.perf_counter()
        estimator.fit(X_fit, y_fit)
        fit_ms.append(1e3 * (time.perf_counter() - start))
        start = time.perf_counter()
        scores = estimator.decision_function(X_held)
        predict_ms.append(1e3 * (time.perf_counter() - start))
        metrics.append(binary_scores(y_test, (scores[test_rows] > 0).astype(np.int8)))
        held += scores / draws
    record = {key: float(np.mean([m[key] for m in metrics])) for key in WINDOW_METRICS}
    record.update(select_ms=select_ms, fit_ms=float(np.mean(fit_ms)),
                  predict_ms=float(np.mean(predict_ms)), params=json_ready(params))
    return record, held


def _zscore(scaler, X):
    return scaler.transform(X) if len(X) else X.copy()


def _driver_arrays(X, y, t, quality):
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y).astype(np.int8)
    t = np.asarray(t, dtype=np.float64)
    quality = np.ones(len(y)) if quality is None else np.asarray(quality, dtype=np.float64)
    if X.ndim != 2 or len(X) != len(y) or len(t) != len(y) or len(quality) != len(y):
        raise SchemaError(f"X, y, t and quality must describe the same windows, got shapes "
                          f"{X.shape}, {y.shape}, {t.shape} and {quality.shape}")
    if X.shape[1] == 0:
        raise SchemaError("X has no feature column")
    finite = np.isfinite(X).all(axis=1)
    if not finite.any():
        column = int(np.argmax(~np.isfinite(X).any(axis=0)))
        raise SchemaError(f"X has no window with every feature finite (feature column {column} "
                          f"is never finite)")
    return X[finite], y[finite], t[finite], quality[finite]
