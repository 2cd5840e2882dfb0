"""The source evaluation protocol: per-driver splits, selection, training, scoring, sweeps, tests.

ALGORITHMS §1.11 (S0 §5.4.1, §5.4.3). Per driver, 4-fold cross-validation repeated 3 times gives 12
train/test splits. In each split the z-score is fitted on the training fold, ``n_labelled`` labelled
windows are drawn from it and the rest (or ``n_unlabelled`` of the rest) is unlabelled; the splits
and the draws are made once and shared by every model. Hyper-parameters are chosen by 3×4-fold
cross-validation on the labelled windows only (unlabelled windows join every inner training fold of
a semi-supervised model), then the model is refitted and scored on the test fold.

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

import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy import stats
from sklearn import config_context
from sklearn.base import clone
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import ParameterGrid, RepeatedStratifiedKFold, train_test_split
from sklearn.preprocessing import StandardScaler
from tqdm import tqdm

from .._errors import ConfigError, SchemaError
from .._validation import Interval, Options, check_params
from ._elm import ELMClassifier
from ._lapsvm import LapSVMClassifier
from ._metrics import binary_scores, detection_delays, false_alarms_per_hour
from ._selection import lapsvm_grid_search, sselm_grid_search
from ._sselm import SSELMClassifier
from ._svm import SVMClassifier
from ._tsvm import TSVMClassifier

__all__ = [
    "ModelSpec", "Split", "make_splits", "select_params", "grid_search", "svm_grid_search",
    "evaluate_driver", "evaluate_cohort",
    "summarise", "paired_tests", "sweep", "model_specs", "MODELS", "PAIRS", "WINDOW_METRICS",
]

MODELS = ("sselm", "lapsvm", "tsvm", "elm", "svm")
"""Model ids: the semi-supervised detectors and their supervised counterparts."""

PAIRS = (("sselm", "elm"), ("lapsvm", "svm"), ("tsvm", "svm"))
"""(semi-supervised, supervised) pairs tested by right-tailed paired t-tests (S0 §5.4.5)."""

WINDOW_METRICS = ("accuracy", "sensitivity", "specificity", "g_mean")
TIMINGS = ("select_ms", "fit_ms", "predict_ms")
UNLABELLED = -1

_constraints = {
    "n_labelled": Interval(2, None, integer=True),
    "n_unlabelled": [None, Interval(0, None, integer=True)],
    "n_folds": Interval(2, None, integer=True),
    "n_repeats": Interval(1, None, integer=True),
    "n_draws": Interval(1, None, integer=True),
    "n_jobs": Interval(1, None, integer=True),
    "folds": Options(("random", "blocked")),
    "purge_s": Interval(0, None),
}


@dataclass(frozen=True)
class ModelSpec:
    """How the protocol tunes and trains one kind of model.

    Parameters
    ----------
    name : str
        Model id (``"sselm"``, ``"svm"``, ...).
    estimator : estimator
        Unfitted scikit-learn classifier; cloned for every fit. ``decision_function`` must be
        positive for class 1 (distracted).
    grid : dict of str to sequence
        Hyper-parameter grid searched by the inner cross-validation.
    semi_supervised : bool, default=False
        Fit on labelled and unlabelled rows (unlabelled ``y = -1``); else on labelled rows only.
    randomised : bool, default=False
        The estimator takes ``random_state`` and its result depends on it (ELM hidden layers):
        refitted ``n_draws`` times.
    select : callable or None, default=None
        Fast selection ``select(estimator, grid, X, y, cv, random_state) -> params`` with ``X, y``
        the labelled then unlabelled rows and ``cv`` a list of (train, test) index pairs; None uses
        :func:`grid_search`.
    """

    name: str
    estimator: object
    grid: dict
    semi_supervised: bool = False
    randomised: bool = False
    select: Callable | None = None


def model_specs(names=MODELS, grid="full"):
    """The protocol's models with their hyper-parameter grids.

    Parameters
    ----------
    names : sequence of str, default=MODELS
        Model ids among ``"sselm"``, ``"lapsvm"``, ``"tsvm"``, ``"elm"``, ``"svm"``.
    grid : {"full", "small"}, default="full"
        ``"full"``: the source grids (S0 §5.4.3) — regularisation and SVM/TSVM kernel width
        σ in {1e-6, ..., 1e6}, LapSVM σ in {1, 10, 100, 1000}; ELM/SS-ELM n_H = 1000.
        ``"small"``: a few points around the usual optimum, for tests and quick looks.

    Returns
    -------
    list of ModelSpec
    """
    if grid not in ("full", "small"):
        raise ConfigError(f"protocol.grid must be 'full' or 'small', got {grid!r}")
    unknown = [name for name in names if name not in MODELS]
    if unknown:
        raise ConfigError(f"protocol.models must be among {list(MODELS)}, got {unknown}")
    full = grid == "full"
    decades = [10.0 ** k for k in range(-6, 7)]
    reg = decades if full else [1e-2, 1.0, 1e2]
    width = decades if full else [1.0, 3.0, 10.0]
    specs = {
        "svm": lambda: ModelSpec(
            "svm", SVMClassifier(),
            {"C": decades if full else [0.1, 1.0, 10.0, 100.0], "kernel_width": width},
            select=svm_grid_search),
        "elm": lambda: ModelSpec("elm", ELMClassifier(n_hidden=1000), {"C": reg},
                                 randomised=True),
        "sselm": lambda: ModelSpec("sselm", SSELMClassifier(n_hidden=1000),
                                   {"C": reg, "lam": reg}, semi_supervised=True,
                                   randomised=True, select=sselm_grid_search),
        "lapsvm": lambda: ModelSpec(
            "lapsvm", LapSVMClassifier(),
            {"gamma_A": reg, "gamma_I": reg,
             "kernel_width": [1.0, 10.0, 100.0, 1000.0] if full else [3.0, 10.0]},
            semi_supervised=True, select=lapsvm_grid_search),
        "tsvm": lambda: ModelSpec("tsvm", TSVMClassifier(), {"C": reg, "kernel_width": width},
                                  semi_supervised=True),
    }
    return [specs[name]() for name in names]


@dataclass(frozen=True)
class Split:
    """One train/test split of one driver's windows (indices into the driver's windows).

    Attributes
    ----------
    repeat, fold : int
        Which repetition and which fold is held out.
    train : ndarray
        All windows of the training fold (the z-score is fitted on them).
    test : ndarray
        Windows of the test fold with known truth (scored).
    held_out : ndarray
        All windows of the test fold, unknown truth included (predicted out of fold).
    labelled : ndarray
        Labelled training windows, stratified draw.
    unlabelled : ndarray
        Unlabelled training windows, in random order (smaller sizes are prefixes).
    """

    repeat: int
    fold: int
    train: np.ndarray
    test: np.ndarray
    held_out: np.ndarray
    labelled: np.ndarray
    unlabelled: np.ndarray = field(repr=False)


def make_splits(y, n_labelled=60, n_unlabelled=None, n_folds=4, n_repeats=3, seed=0,
                folds="random", t=None, purge_s=0.0):
    """The shared splits of one driver: ``n_folds`` × ``n_repeats`` folds and labelled draws.

    Parameters
    ----------
    y : array-like of shape (n_windows,)
        Window truth: 1 distracted, 0 attentive, -1 unknown.
    n_labelled : int, default=60
        Labelled windows drawn (stratified, without replacement) from each training fold.
    n_unlabelled : int or None, default=None
        Unlabelled windows kept from the rest of the training fold; None keeps all of them.
    n_folds, n_repeats : int, default=4, 3
        The outer cross-validation.
    seed : int, default=0
        Seed of the folds and draws; the same seed gives the same splits, and the labelled draw
        and unlabelled order of a split do not depend on ``n_unlabelled``.
    folds : {"random", "blocked"}, default="random"
        ``"random"``: stratified random folds, the source protocol. ``"blocked"``: each fold is a
        stretch of consecutive windows; repeat r shifts the block edges by r/(n_folds·n_repeats)
        of the drive (the last block wraps round to the start).
    t : array-like of shape (n_windows,) or None, default=None
        Window end times in seconds, increasing; needed when ``purge_s > 0``.
    purge_s : float, default=0.0
        Training windows that end within ``purge_s`` of a test window's end are left out of the
        split. With the window length, no training window shares a sample with a test window;
        with random folds over overlapping windows it would leave almost nothing to train on.

    Returns
    -------
    list of Split
    """
    check_params(locals(), _constraints, owner="protocol")
    y = np.asarray(y)
    known = np.flatnonzero(y != UNLABELLED)
    counts = np.bincount(y[known], minlength=2)
    if counts.min() < n_folds:
        raise SchemaError(f"y must hold at least n_folds={n_folds} windows of each class, "
                          f"got {counts[1]} distracted and {counts[0]} attentive")
    if folds == "random":
        outer = RepeatedStratifiedKFold(n_splits=n_folds, n_repeats=n_repeats,
                                        random_state=seed).split(y, y == 1)
    else:
        outer = _blocked_folds(len(y), n_folds, n_repeats)
    if purge_s > 0:
        if t is None:
            raise ConfigError("protocol.t is needed to purge training windows, got None")
        t = np.asarray(t, dtype=np.float64)
        outer = ((_purge(train, held_out, t, purge_s), held_out) for train, held_out in outer)
    draw_seeds = np.random.SeedSequence(seed).generate_state(n_folds * n_repeats)
    splits = []
    for k, (train, held_out) in enumerate(outer):
        candidates = train[y[train] != UNLABELLED]
        if n_labelled >= len(candidates):
            raise ConfigError(f"protocol.n_labelled must be below the {len(candidates)} labelled "
                              f"windows of a training fold, got {n_labelled}")
        rng = np.random.default_rng(draw_seeds[k])
        labelled, _ = train_test_split(candidates, train_size=n_labelled, stratify=y[candidates],
                                       random_state=int(rng.integers(2**31)))
        drawn = np.bincount(y[labelled], minlength=2)
        if drawn.min() < 2:  # every inner training fold then holds both classes
            raise SchemaError(f"y must give the labelled draw at least 2 windows of each class, "
                              f"got {drawn[1]} distracted and {drawn[0]} attentive "
                              f"in repeat {k // n_folds} fold {k % n_folds} ({folds} folds; use "
                              f"longer drives or more labelled windows)")
        rest = rng.permutation(np.setdiff1d(train, labelled))
        if n_unlabelled is not None:
            if n_unlabelled > len(rest):
                raise ConfigError(f"protocol.n_unlabelled must be at most the {len(rest)} "
                                  f"windows left in a training fold, got {n_unlabelled}")
            rest = rest[:n_unlabelled]
        splits.append(Split(repeat=k // n_folds, fold=k % n_folds, train=train,
                            test=held_out[y[held_out] != UNLABELLED], held_out=held_out,
                            labelled=np.sort(labelled), unlabelled=rest))
    return splits


def select_params(spec, X_labelled, y_labelled, X_unlabelled, n_folds=4, n_repeats=3,
                  random_state=0):
    """Choose hyper-parameters by ``n_repeats`` × ``n_folds`` CV on the labelled rows only.

    Parameters
    ----------
    spec : ModelSpec
    X_labelled, y_labelled : ndarray
        Labelled rows (z-scored) and their 0/1 labels.
    X_unlabelled : ndarray
        Unlabelled rows, added to every inner training fold of a semi-supervised model.
    n_folds, n_repeats : int, default=4, 3
        The inner cross-validation (stratified).
    random_state : int, default=0
        Seed of the inner folds and of randomised estimators.

    Returns
    -------
    dict
        The chosen hyper-parameters.
    """
    n_lab = len(y_labelled)
    inner = RepeatedStratifiedKFold(n_splits=n_folds, n_repeats=n_repeats,
                                    random_state=random_state)
    folds = list(inner.split(X_labelled, y_labelled))
    if spec.semi_supervised:
        X = np.vstack([X_labelled, X_unlabelled])
        y = np.r_[y_labelled, np.full(len(X_unlabelled), UNLABELLED)]
        extra = np.arange(n_lab, len(y))
        folds = [(np.r_[train, extra], test) for train, test in folds]
    else:
        X, y = X_labelled, y_labelled
    select = grid_search if spec.select is None else spec.select
    return select(_seeded(spec, random_state), spec.grid, X, y, folds, random_state)


def grid_search(estimator, grid, X, y, cv, random_state=None):
    """The grid point of best mean G-mean over the folds (ties: first in grid order).

    Equivalent to :class:`~sklearn.model_selection.GridSearchCV` with a G-mean scorer, without its
    per-fit overhead (the protocol runs about 10⁵ small fits per driver).

    Parameters
    ----------
    estimator : estimator
        Unfitted classifier, cloned per grid point.
    grid : dict of str to sequence
    X, y : ndarray
        Rows and labels (-1 rows only ever appear in training folds).
    cv : list of (ndarray, ndarray)
        (train, test) index pairs.
    random_state : object, default=None
        Unused; part of the selection signature of :class:`ModelSpec`.

    Returns
    -------
    dict
        The chosen hyper-parameters.
    """
    candidates = list(ParameterGrid(grid))
    scores = np.zeros(len(candidates))
    for i, params in enumerate(candidates):
        model = clone(estimator).set_params(**params)
        for train, test in cv:
            scores[i] += _fast_g_mean(y[test], model.fit(X[train], y[train]).predict(X[test]))
    return candidates[int(np.argmax(scores))]


def svm_grid_search(estimator, grid, X, y, cv, random_state=None):
    """:func:`grid_search` for :class:`SVMClassifier`, one Gram matrix per kernel width.

    Parameters
    ----------
    estimator : SVMClassifier
    grid : dict
        ``{"C": [...], "kernel_width": [...]}``.
    X, y, cv, random_state :
        As for :func:`grid_search`.

    Returns
    -------
    dict
        ``{"C": ..., "kernel_width": ...}``.
    """
    candidates = list(ParameterGrid(grid))
    scores = np.zeros(len(candidates))
    # On ~45 rows SVC's argument checks cost more than libsvm's fit; the parameter and
    # finiteness checks are skipped (the inputs are built here, finite and valid).
    with config_context(assume_finite=True, skip_parameter_validation=True):
        for width in grid["kernel_width"]:
            K = rbf_kernel(X, gamma=0.5 / width ** 2)
            points = [(i, SVC(kernel="precomputed", C=params["C"]))
                      for i, params in enumerate(candidates) if params["kernel_width"] == width]
            for train, test in cv:
                K_train, K_test = K[np.ix_(train, train)], K[np.ix_(test, train)]
                for i, model in points:
                    model.fit(K_train, y[train])
                    scores[i] += _fast_g_mean(y[test], model.predict(K_test))
    return candidates[int(np.argmax(scores))]


def evaluate_driver(X, y, t, specs, *, n_labelled=60, n_unlabelled=None, n_folds=4, n_repeats=3,
                    folds="random", purge_s=0.0, n_draws=1, seed=0, make_smoother=None,
                    deployment=True, progress=False):
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
    make_smoother : callable or None, default=None
        Factory of a fresh smoother with ``update(t_end, scores) -> states``; None thresholds
        the score at 0.
    deployment : bool, default=True
        Also compute detection delays and false alarms per hour on out-of-fold scores.
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
        split) and, with ``deployment``, ``delays_s`` (per repeat, per episode; NaN = missed) and
        ``false_alarms_per_hour`` (per repeat).
    """
    check_params({"n_draws": n_draws}, _constraints, owner="protocol")
    with threadpool_limits(limits=1, user_api="blas"):
        X, y, t = _driver_arrays(X, y, t)
        splits = make_splits(y, n_labelled, n_unlabelled, n_folds, n_repeats, seed, folds, t,
                             purge_s)
        return _evaluate_driver(X, y, t, specs, splits, n_folds, n_repeats, n_draws, seed,
                                make_smoother, deployment, progress)


def _evaluate_driver(X, y, t, specs, splits, n_folds, n_repeats, n_draws, seed, make_smoother,
                     deployment, progress):
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
            delays, alarms = [], []
            for repeat_scores in scores[spec.name]:
                states = _states(t, repeat_scores, make_smoother)
                delays.append(detection_delays(t, y, states).tolist())
                alarms.append(false_alarms_per_hour(t, y, states))
            results[spec.name].update(delays_s=delays, false_alarms_per_hour=alarms)
    return results


def evaluate_cohort(drivers, specs, *, seed=0, n_jobs=1, progress=False, **options):
    """Run :func:`evaluate_driver` for every driver (driver ``i`` gets seed ``seed + 1000 i``).

    Parameters
    ----------
    drivers : sequence of (X, y, t)
        Each driver's raw features, window truth and window end times.
    specs : sequence of ModelSpec
    seed : int, default=0
    n_jobs : int, default=1
        Drivers evaluated at once, each in its own process with one BLAS thread. The results do
        not depend on it: every driver's splits and hidden layers come from its own seed.
    progress : bool, default=False
        Show a tqdm bar over drivers on standard error.
    **options
        Passed to :func:`evaluate_driver`; ``make_smoother`` must be picklable when ``n_jobs > 1``
        (a class or a ``functools.partial``, not a lambda).

    Returns
    -------
    list of dict
        One :func:`evaluate_driver` result per driver, in order.
    """
    check_params({"n_jobs": n_jobs}, _constraints, owner="protocol")
    bar = tqdm(total=len(drivers), disable=not progress, desc="drivers")
    tasks = [((X, y, t, specs), {**options, "seed": seed + 1000 * i, "progress": False})
             for i, (X, y, t) in enumerate(drivers)]
    if n_jobs == 1 or len(drivers) < 2:
        results = []
        for args, kwargs in tasks:
            results.append(evaluate_driver(*args, **kwargs))
            bar.update()
    else:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(min(n_jobs, len(drivers)), mp_context=context) as pool:
            futures = [pool.submit(evaluate_driver, *args, **kwargs) for args, kwargs in tasks]
            for future in as_completed(futures):
                bar.update()
            results = [future.result() for future in futures]
    bar.close()
    return results


def summarise(cohort):
    """Per-driver means over splits, then mean and sd over drivers, for every model.

    Parameters
    ----------
    cohort : list of dict
        :func:`evaluate_cohort` output.

    Returns
    -------
    dict
        Per model: ``per_driver`` (metric -> list over drivers) and, per metric, ``{"mean", "sd"}``
        over drivers (sd with ddof=1, NaN for one driver). Deployment metrics: ``detection_delay_s``
        (per driver, the mean delay of detected episodes), ``missed_fraction`` (missed episodes)
        and ``false_alarms_per_hour``, each averaged over repeats first.
    """
    summary = {}
    for name in cohort[0]:
        per_driver = {key: [] for key in WINDOW_METRICS + TIMINGS}
        for driver in cohort:
            splits = driver[name]["splits"]
            for key in WINDOW_METRICS + TIMINGS:
                per_driver[key].append(float(np.nanmean([s[key] for s in splits])))
            if "delays_s" in driver[name]:
                delays = np.concatenate([np.asarray(d, float) for d in driver[name]["delays_s"]])
                missed = np.isnan(delays)
                per_driver.setdefault("detection_delay_s", []).append(
                    float(np.mean(delays[~missed])) if (~missed).any() else float("nan"))
                per_driver.setdefault("missed_fraction", []).append(
                    float(missed.mean()) if delays.size else float("nan"))
                per_driver.setdefault("false_alarms_per_hour", []).append(
                    float(np.nanmean(driver[name]["false_alarms_per_hour"])))
        summary[name] = {key: _mean_sd(values) for key, values in per_driver.items()}
        summary[name]["per_driver"] = per_driver
    return summary


def paired_tests(summary, pairs, metric="g_mean"):
    """Right-tailed paired t-tests over drivers: is ``better`` above ``worse`` on ``metric``?

    Parameters
    ----------
    summary : dict
        :func:`summarise` output.
    pairs : sequence of (str, str)
        (better, worse) model names; pairs with a model missing from ``summary`` are skipped.
    metric : str, default="g_mean"

    Returns
    -------
    list of dict
        ``better``, ``worse``, ``metric``, ``mean_difference``, ``t``, ``df``, ``p``.
    """
    tests = []
    for better, worse in pairs:
        if better not in summary or worse not in summary:
            continue
        a = np.asarray(summary[better]["per_driver"][metric])
        b = np.asarray(summary[worse]["per_driver"][metric])
        result = stats.ttest_rel(a, b, alternative="greater")
        tests.append({"better": better, "worse": worse, "metric": metric,
                      "mean_difference": float(np.mean(a - b)), "t": float(result.statistic),
                      "df": len(a) - 1, "p": float(result.pvalue)})
    return tests


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
        estimator = _seeded(spec, seed + draw).set_params(**params)
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
                  predict_ms=float(np.mean(predict_ms)), params=_jsonable(params))
    return record, held


def _fast_g_mean(y_true, y_pred):
    """G-mean of validated 0/1 arrays; NaN (an absent class) scores 0."""
    positive = y_true == 1
    sens = np.mean(y_pred[positive] == 1) if positive.any() else 0.0
    spec = np.mean(y_pred[~positive] == 0) if (~positive).any() else 0.0
    return float(np.sqrt(sens * spec))


def _seeded(spec, random_state):
    estimator = clone(spec.estimator)
    if spec.randomised:
        estimator.set_params(random_state=random_state)
    return estimator


def _zscore(scaler, X):
    return scaler.transform(X) if len(X) else X.copy()


def _states(t, scores, make_smoother):
    if make_smoother is None:
        return (scores > 0).astype(np.int8)
    return np.asarray(make_smoother().update(t, scores), dtype=np.int8)


def _blocked_folds(n, n_folds, n_repeats):
    """(train, held_out) index pairs of consecutive-window folds, block edges shifted per repeat."""
    everything = np.arange(n)
    for repeat in range(n_repeats):
        shifted = np.roll(everything, -round(repeat * n / (n_folds * n_repeats)))
        for block in np.array_split(shifted, n_folds):
            held_out = np.sort(block)
            yield np.setdiff1d(everything, held_out), held_out


def _purge(train, held_out, t, purge_s):
    """``train`` without the windows ending within ``purge_s`` of a held-out window's end."""
    held_t = t[held_out]
    after = np.minimum(np.searchsorted(held_t, t[train]), len(held_t) - 1)
    before = np.maximum(after - 1, 0)
    nearest = np.minimum(np.abs(t[train] - held_t[after]), np.abs(t[train] - held_t[before]))
    return train[nearest >= purge_s]


def _driver_arrays(X, y, t):
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y).astype(np.int8)
    t = np.asarray(t, dtype=np.float64)
    if X.ndim != 2 or len(X) != len(y) or len(t) != len(y):
        raise SchemaError(f"X, y and t must describe the same windows, got shapes {X.shape}, "
                          f"{y.shape} and {t.shape}")
    finite = np.isfinite(X).all(axis=1)
    if not finite.any():
        column = int(np.argmax(~np.isfinite(X).any(axis=0)))
        raise SchemaError(f"X has no window with every feature finite (feature column {column} "
                          f"is never finite)")
    return X[finite], y[finite], t[finite]


def _mean_sd(values):
    values = np.asarray(values, dtype=np.float64)
    sd = float(np.nanstd(values, ddof=1)) if np.isfinite(values).sum() > 1 else float("nan")
    return {"mean": float(np.nanmean(values)) if np.isfinite(values).any() else float("nan"),
            "sd": sd}


def _jsonable(params):
    return {key: value.item() if isinstance(value, np.generic) else value
            for key, value in params.items()}
