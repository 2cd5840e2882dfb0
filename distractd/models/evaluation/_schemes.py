"""Evaluation schemes: how far the test driving is from the training driving (DESIGN §5).

A deployed detector meets driving it has never seen, so every quality figure names its scheme:

- ``new-driver`` — leave one driver out (or, for large cohorts, grouped k-fold over drivers):
  trained on other drivers' labelled windows; the held-out driver's windows are available
  *unlabelled* to semi-supervised models (and, with ``normalisation="drive"`` or ``"driver"``,
  to the offline z-scores), never their labels. The figure a deployment meets.
- ``new-drive`` — per drive: trained on every other drive (the driver's own earlier drives, and
  with the ``cohort`` recipe the other drivers' drives too), tested on a drive never seen.
- ``blocked`` — the source's per-drive protocol with folds of consecutive windows and training
  windows overlapping a test window purged: unseen stretches of a seen drive.
- ``source`` — the source's stratified random folds over 95 %-overlapping windows. Near-duplicates
  of every test window are in training; it reproduces the published table and nothing more.
- ``causal`` — ``new-driver`` as the daemon meets it: a semi-supervised model at time t has seen
  only that driver's windows before t, unlabelled. Each test drive is scored in blocks of
  :data:`CAUSAL_REFIT_S`; the block from t is scored by a refit (the hyper-parameters selected
  once, on the labelled training windows alone) with up to ``n_unlabelled`` of the driver's most
  recent windows ending before t — their earlier drives' (in the order given) and this drive's
  so far — and by the labelled-only fit before there are any. Supervised models and the naive
  floor use no test window and score as in ``new-driver`` (``naive-offline``'s per-driver
  z-score stays offline: it is the upper reference, not a causal model).

``blocked`` and ``source`` run per drive, on the features with data in half of that drive's
windows, and skip drives without both classes (no-task drives) or without such a feature.

Two training recipes:

- ``per-driver`` (the source's detector): ``n_labelled`` labelled windows drawn from the training
  drives, the rest unlabelled, hyper-parameters by stratified 3-fold CV on the labelled windows;
- ``cohort`` (the deployable detector): every labelled training window, thinned to one window per
  ``stride_s`` and capped at ``n_train`` (stratified), hyper-parameters by grouped CV over the
  training drivers (or drives), so selection too is judged on unseen driving; semi-supervised models
  also get up to ``n_unlabelled`` of the test driving's windows, unlabelled
  (:func:`~distractd.models.detectors.fit_cohort`, the recipe of ``distractd train --cohort``).

Every scheme reports per test drive the window metrics (accuracy, sensitivity, specificity, G-mean
over every window of known truth, distracted where the decision rule decides the window and its
score is positive: an undecided window is no alarm) and the deployment figures
computed on the test drive in time order through the one decision rule
(:class:`~distractd.models.detectors.DecisionRule`): detection delay per distraction episode,
missed episodes, false alarms per hour of attentive driving, and the fraction of windows decided.
Drives are averaged per driver, then mean ± sd over drivers; paired tests are across drivers.

Every fold × model (cross-drive schemes) and every drive (within-drive schemes) is one task of a
:class:`~distractd._parallel.Runner` with its own seed, so a run on a Dask cluster gives the
numbers of the sequential run.
"""

import warnings
import zlib
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from ..._errors import ConfigError
from ..._parallel import Runner, recording_windows
from ..._validation import Interval, Options, check_params
from ...pipeline import FEATURE_NAMES, PipelineConfig
from ..detectors import (
    UNLABELLED, DecisionRule, binary_scores, chosen_features, decide, detection_delays,
    false_alarms_per_hour, fit_cohort, stratified_subset, thin_windows,
)
from ._protocol import evaluate_driver
from ._scheme_names import NORMALISATIONS, RECIPES, SCHEMES

__all__ = ["Drive", "scheme_drives", "featured_drives", "drives_of", "representation_drives",
           "evaluate_scheme", "scheme_folds", "normalise_drives", "supported_schemes",
           "drive_record"]


_CONSTRAINTS = {
    "scheme": Options(SCHEMES),
    "recipe": Options(RECIPES),
    "n_train": Interval(10, None, integer=True),
    "n_unlabelled": Interval(0, None, integer=True),
    "n_labelled": Interval(8, None, integer=True),
    "stride_s": Interval(0, None),
    "max_folds": Interval(2, None, integer=True),
    "n_draws": Interval(1, None, integer=True),
}


CAUSAL_REFIT_S = 120.0
"""Seconds of a test drive scored by one refit of the ``causal`` scheme."""


@dataclass
class Drive:
    """One drive's windows, ready for evaluation.

    Attributes
    ----------
    driver_id, recording_id, protocol : str
    t_end : ndarray of shape (n_windows,)
        Window end times, s.
    label : ndarray of shape (n_windows,), int8
        Window truth: 1, 0, or -1 unknown.
    quality : ndarray of shape (n_windows,)
        Valid-sample fraction of each window.
    X : ndarray of shape (n_windows, n_features)
        Features in the evaluated representation; NaN where missing or not ready.
    alerts : list of (float, str)
        ``(time_s, kind)`` of the glance channel's alerts.
    """

    driver_id: str
    recording_id: str
    protocol: str
    t_end: np.ndarray
    label: np.ndarray
    quality: np.ndarray
    X: np.ndarray
    alerts: list = field(default_factory=list)


def scheme_drives(recordings, config=None, normalisation="running", features=None,
                  progress=False, runner=None, protocols=None):
    """The drives of ``recordings`` in one representation, and the feature names used.

    Parameters
    ----------
    recordings : sequence of Recording, str or Path
        Labelled drives, or paths of them as :func:`~distractd.pipeline.read_recordings` takes
        them (read where they live when ``runner`` is a cluster); ``meta`` gives ``driver_id``
        (else ``recording_id``, else ``rec<i>``: each recording its own driver),
        ``recording_id`` and ``protocol``.
    config : PipelineConfig or None, default=None
        Window settings; ``baseline`` is set from ``normalisation``.
    normalisation : {"running", "drive", "driver", "none"}, default="running"
        ``"running"``: the pipeline's per-stream baseline (causal; what the daemon does);
        ``"drive"``: each drive z-scored with its own mean and sd (offline upper bound);
        ``"driver"``: each driver's drives z-scored with the mean and sd over all of them
        (offline, the naive floor's);
        ``"none"``: raw features.
    features : sequence of str or None, default=None
        Feature names; None keeps the features with data in at least half of the windows
        (:func:`~distractd.models.detectors.usable_features`).
    progress : bool, default=False
    runner : Runner or None, default=None
        Where the features are computed, one task per file (None: here).
    protocols : sequence of str or None, default=None
        Keep only the drives whose ``meta["protocol"]`` is one of these (None: every drive).

    Returns
    -------
    drives : list of Drive
    feature_names : list of str
    """
    featured = featured_drives(recordings, config, normalisation, progress, runner, protocols)
    return representation_drives(featured, normalisation, features)


def representation_drives(featured, normalisation="running", features=None):
    """:func:`scheme_drives` from :func:`featured_drives` output made with ``normalisation``:
    the chosen features (:func:`~distractd.models.detectors.chosen_features`), z-scored offline
    for ``"drive"`` and ``"driver"``."""
    names = chosen_features([item.windows for item in featured], features)
    return normalise_drives(drives_of(featured, names), normalisation), names


def featured_drives(recordings, config=None, normalisation="running", progress=False,
                    runner=None, protocols=None):
    """The windows of every drive of ``recordings`` (all features), the per-stream baseline on
    for ``normalisation="running"`` and off otherwise (see :func:`scheme_drives`)."""
    if normalisation not in NORMALISATIONS:
        raise ConfigError(f"evaluate.normalisation must be one of {list(NORMALISATIONS)}, "
                          f"got {normalisation!r}")
    config = PipelineConfig.from_dict({**(config or PipelineConfig()).to_dict(),
                                       "baseline": normalisation == "running"})
    featured = recording_windows(recordings, config, runner, progress)
    if protocols is not None:
        featured = [item for item in featured if item.meta.get("protocol") in protocols]
        if not featured:
            raise ConfigError(f"evaluate.only: no drive of protocol(s) {list(protocols)}")
    return featured


def drives_of(featured, names):
    """:class:`Drive` of each of :func:`featured_drives`' items with the features ``names``."""
    columns = [FEATURE_NAMES.index(name) for name in names]
    drives = []
    for i, (_, meta, _, w) in enumerate(featured):
        recording_id = str(meta.get("recording_id", meta.get("driver_id", f"rec{i}")))
        drives.append(Drive(str(meta.get("driver_id", recording_id)), recording_id,
                            str(meta.get("protocol", "")), w.t_end, w.label, w.quality,
                            w.X[:, columns], w.alert_list()))
    return drives


def normalise_drives(drives, normalisation):
    """Apply an offline z-score (``"drive"``, ``"driver"``) or leave the features as they are.

    ``"running"`` (the per-stream baseline) and ``"none"`` are the pipeline's to apply when it
    makes the windows; ``"drive"`` standardises each drive's features with its own mean and sd,
    ``"driver"`` each driver's drives with the mean and sd over all of them — upper bounds no
    causal detector can reach (they see the whole drive, or every drive, future included). A
    feature constant over the pooled windows is only centred; one without data stays missing.
    """
    if normalisation not in NORMALISATIONS:
        raise ConfigError(f"evaluate.normalisation must be one of {list(NORMALISATIONS)}, "
                          f"got {normalisation!r}")
    if normalisation not in ("drive", "driver"):
        return list(drives)
    key = "recording_id" if normalisation == "drive" else "driver_id"
    pools = {}
    for drive in drives:
        pools.setdefault(getattr(drive, key), []).append(drive.X)
    moments = {}
    for owner, parts in pools.items():
        X = np.vstack(parts)
        with warnings.catch_warnings():  # a feature without data in a pool stays NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            mean, sd = np.nanmean(X, axis=0), np.nanstd(X, axis=0)
        moments[owner] = mean, np.where(sd > 0, sd, 1.0)
    out = []
    for drive in drives:
        mean, sd = moments[getattr(drive, key)]
        out.append(Drive(drive.driver_id, drive.recording_id, drive.protocol, drive.t_end,
                         drive.label, drive.quality, (drive.X - mean) / sd, drive.alerts))
    return out


def supported_schemes(drives):
    """The schemes the drives support: ``new-driver`` (2 or more drivers), ``new-drive`` (a
    driver with 2 or more drives that each hold a distracted window), then ``source``."""
    schemes = ["new-driver"] if len({d.driver_id for d in drives}) >= 2 else []
    tasked = [d.driver_id for d in drives if (d.label == 1).any()]
    if any(tasked.count(driver) >= 2 for driver in set(tasked)):
        schemes.append("new-drive")
    return schemes + ["source"]


def scheme_folds(drives, scheme, max_folds=12):
    """The (train drive indices, test drive indices) pairs of a cross-drive scheme.

    ``new-driver``: each driver's drives are a test set (drivers grouped into ``max_folds`` folds
    when there are more). ``new-drive``: fold k tests the k-th drive of every driver that has at
    least two, and trains on all other drives — so every test drive is unseen while its driver's
    other drives are not.
    """
    drivers = sorted({d.driver_id for d in drives})
    if scheme in ("new-driver", "causal"):
        if len(drivers) < 2:
            raise ConfigError(f"the {scheme} scheme needs at least 2 drivers, got {len(drivers)}")
        groups = np.array([drivers.index(d.driver_id) for d in drives])
        n_folds = min(max_folds, len(drivers))
        fold_of = np.arange(len(drivers)) % n_folds
        return [(np.flatnonzero(fold_of[groups] != k), np.flatnonzero(fold_of[groups] == k))
                for k in range(n_folds)]
    if scheme == "new-drive":
        owner = np.array([d.driver_id for d in drives])
        rank = np.array([np.sum(owner[:i] == owner[i]) for i in range(len(drives))])
        several = np.array([np.sum(owner == o) >= 2 for o in owner])
        folds = []
        for k in range(int(rank[several].max()) + 1 if several.any() else 0):
            test = np.flatnonzero(several & (rank == k))
            folds.append((np.setdiff1d(np.arange(len(drives)), test), test))
        if not folds:
            raise ConfigError("the new-drive scheme needs a driver with 2 or more drives")
        return folds
    raise ConfigError(f"scheme_folds: {scheme!r} is not a cross-drive scheme")


def evaluate_scheme(drives, scheme, specs, *, recipe="cohort", n_train=2000, n_unlabelled=600,
                    n_labelled=60, stride_s=5.0, max_folds=12, n_draws=1, window_s=10.0,
                    decision=None, seed=0, progress=False, traces=False, runner=None):
    """Evaluate models under one scheme.

    Parameters
    ----------
    drives : sequence of Drive
    scheme : {"new-driver", "causal", "new-drive", "blocked", "source"}
    specs : sequence of ModelSpec
        The models (:func:`~distractd.models.detectors.model_specs`).
    recipe : {"cohort", "per-driver"}, default="cohort"
        How a cross-drive scheme trains (module docstring); ``blocked`` and ``source`` always
        use the per-driver protocol within each drive. With ``per-driver``, ``new-drive`` trains
        on the test driver's other drives only.
    n_train : int, default=2000
        Most labelled training windows of the cohort recipe.
    n_unlabelled : int, default=600
        Most unlabelled windows (the test driving's, cohort recipe; the training drives' rest,
        per-driver recipe) given to semi-supervised models.
    n_labelled : int, default=60
        Labelled windows of the per-driver recipe and of the ``blocked``/``source`` protocol.
    stride_s : float, default=5.0
        The cohort recipe keeps one training window per ``stride_s`` seconds of a drive (windows
        0.5 s apart overlap 95 %: neighbours add little but time).
    max_folds : int, default=12
        Most outer folds of ``new-driver`` (drivers are grouped beyond it).
    n_draws : int, default=1
        Fits of randomised models (ELM hidden layers) per fold, scores averaged.
    window_s : float, default=10.0
        Window length, s: ``blocked`` purges training windows ending this close to a test window.
    decision : dict or None, default=None
        Keyword arguments of :class:`~distractd.models.detectors.DecisionRule` for the deployment
        figures (None: its defaults).
    seed : int, default=0
        Fold ``k`` of model ``m`` draws from ``[seed, k, crc32(m)]``; the within-drive
        schemes give the ``i``-th drive with both classes ``seed + 1000 i``. A model's figures
        depend neither on the other models evaluated nor on where the tasks ran.
    progress : bool, default=False
        A tqdm bar over folds × models (or drives) on standard error.
    traces : bool, default=False
        Keep each cross-drive test record's ``trace`` (``t_end``, ``scores``, ``states``,
        ``label`` arrays, ``alerts``) for timeline plots.
    runner : Runner or None, default=None
        Where the tasks run (:func:`~distractd._parallel.batch_runner`; None: here, one after
        another); the results do not depend on it.

    Returns
    -------
    dict
        Per model name, per driver id: a list of per-test-drive records with ``recording_id``,
        ``protocol``, the window metrics, ``coverage`` (fraction of windows decided),
        ``delays_s`` (per episode, NaN = missed) and ``false_alarms_per_hour``.
    """
    check_params({"scheme": scheme, "recipe": recipe, "n_train": n_train,
                  "n_unlabelled": n_unlabelled, "n_labelled": n_labelled, "stride_s": stride_s,
                  "max_folds": max_folds, "n_draws": n_draws}, _CONSTRAINTS, owner="evaluate")
    decision = dict(decision or {})
    runner = runner or Runner()
    if scheme in ("blocked", "source"):
        return _within_drives(drives, scheme, specs, n_labelled, n_draws, window_s, decision,
                              seed, progress, runner)
    folds = scheme_folds(drives, scheme, max_folds)
    if recipe == "per-driver" and scheme == "new-drive":  # the driver's own other drives only
        folds = [(train[[drives[i].driver_id == drives[j].driver_id for i in train]],
                  np.array([j])) for train, test in folds for j in test]
    tasks = [(k, train, test, spec) for k, (train, test) in enumerate(folds) for spec in specs]
    options = {"recipe": recipe, "scheme": scheme, "n_train": n_train,
               "n_unlabelled": n_unlabelled, "n_labelled": n_labelled, "stride_s": stride_s,
               "n_draws": n_draws, "decision": decision, "window_s": window_s,
               "traces": traces, "seed": seed}
    outcomes = runner.map(_fold_task, tasks, runner.share(list(drives)), options,
                          progress=progress, desc=f"{scheme} folds x models")
    results = {spec.name: {} for spec in specs}
    for (_, _, test, spec), records in zip(tasks, outcomes):
        for i, record in zip(test, records):
            results[spec.name].setdefault(drives[i].driver_id, []).append(record)
    return results


def _fold_task(task, drives, options):
    """One model on one fold: fit on the training drives, the records of the test drives."""
    k, train, test, spec = task
    rng = np.random.default_rng([options["seed"], k, zlib.crc32(spec.name.encode())])
    with threadpool_limits(limits=1, user_api="blas"):  # small matrices: threads only contend
        scores = _fit_and_score(spec, [drives[i] for i in train], [drives[i] for i in test],
                                options["recipe"], options["scheme"], options["n_train"],
                                options["n_unlabelled"], options["n_labelled"],
                                options["stride_s"], options["n_draws"], rng)
    return [drive_record(drives[i], drive_scores, options["decision"], options["window_s"],
                         options["traces"]) for i, drive_scores in zip(test, scores)]


def _fit_and_score(spec, train, test, recipe, scheme, n_train, n_unlabelled, n_labelled,
                   stride_s, n_draws, rng):
    """Fit ``spec`` on the training drives as the recipe says; scores of each test drive."""
    cohort = recipe == "cohort"
    kept = [thin_windows(d.t_end, stride_s if cohort else 0.0) for d in train]
    X = np.vstack([d.X[k] for d, k in zip(train, kept)])
    y = np.concatenate([d.label[k] for d, k in zip(train, kept)])
    group_key = "recording_id" if scheme == "new-drive" else "driver_id"
    groups = np.concatenate([np.full(k.sum(), getattr(d, group_key)) for d, k in zip(train, kept)])
    X_test = [d.X for d in test]
    if cohort and scheme == "causal" and spec.semi_supervised:
        return _causal_scores(spec, X, y, groups, test, n_train, n_unlabelled, stride_s, rng)
    if cohort:
        pool = np.vstack(X_test)
        pool = pool[np.isfinite(pool).all(axis=1)]
        unlabelled = pool[rng.permutation(len(pool))[:n_unlabelled]]
        n_fits = n_draws if spec.randomised else 1
        fits = [fit_cohort(spec, X, y, groups, X_unlabelled=unlabelled, n_train=n_train,
                           seed=int(rng.integers(2**31))) for _ in range(n_fits)]
    else:
        fits = [_fit_per_driver(spec, X, y, n_labelled, n_unlabelled, rng)]
    scores = []
    for x in X_test:
        finite = np.isfinite(x).all(axis=1)
        out = np.full(len(x), np.nan)
        if finite.any():
            out[finite] = np.mean([fit.decision_function(x[finite]) for fit in fits], axis=0)
        scores.append(out)
    return scores


def _causal_scores(spec, X, y, groups, test, n_train, n_unlabelled, stride_s, rng):
    """Scores of each test drive by refits that have seen only the driver's earlier windows."""
    seed = int(rng.integers(2**31))
    base = fit_cohort(spec, X, y, groups, n_train=n_train, seed=seed)
    history = {}
    scores = []
    for drive in test:
        past = history.setdefault(drive.driver_id, [])
        finite = np.isfinite(drive.X).all(axis=1)
        kept = thin_windows(drive.t_end, stride_s) & finite
        out = np.full(len(drive.X), np.nan)
        if finite.any():
            starts = np.arange(drive.t_end[0], drive.t_end[-1] + CAUSAL_REFIT_S, CAUSAL_REFIT_S)
            for start in starts:
                block = finite & (drive.t_end >= start) & (drive.t_end < start + CAUSAL_REFIT_S)
                if not block.any():
                    continue
                seen = np.vstack(past + [drive.X[kept & (drive.t_end < start)]])[-n_unlabelled:]
                fit = base if len(seen) == 0 or n_unlabelled == 0 else fit_cohort(
                    spec, X, y, groups, X_unlabelled=seen, n_train=n_train, params=base.params,
                    seed=seed)
                out[block] = fit.decision_function(drive.X[block])
        past.append(drive.X[kept])
        scores.append(out)
    return scores


def _fit_per_driver(spec, X, y, n_labelled, n_unlabelled, rng):
    """The source's detector: ``n_labelled`` labelled windows, the rest unlabelled."""
    usable = np.isfinite(X).all(axis=1)
    known = np.flatnonzero(usable & (y != UNLABELLED))
    labelled = stratified_subset(known, y[known], n_labelled, rng)
    rest = np.setdiff1d(np.flatnonzero(usable), labelled)
    return fit_cohort(spec, X[labelled], y[labelled], np.zeros(len(labelled)),
                      X_unlabelled=X[rng.permutation(rest)[:n_unlabelled]],
                      n_train=len(labelled), seed=int(rng.integers(2**31)))


def drive_record(drive, scores, decision, window_s, traces):
    """Window metrics and deployment figures of one test drive's scores.

    The window metrics count every window of known truth: one is distracted when the decision
    rule decides it (:meth:`~distractd.models.detectors.DecisionRule.usable`) and its score is
    positive, so a window left undecided (baseline warming up, a missing feature, too little
    valid data for the model) counts as no alarm — a miss when the driver was distracted. They
    are NaN (nothing judged) when the drive has no decided window of known truth; ``coverage``
    says how many were decided.
    """
    known = drive.label != UNLABELLED
    decided = DecisionRule(**decision).usable(scores, drive.quality)
    record = {"recording_id": drive.recording_id, "protocol": drive.protocol}
    alarm = (decided & (scores > 0)).astype(np.int8)
    if (known & decided).any() and len(np.unique(drive.label[known])) == 2:
        record.update(binary_scores(drive.label[known], alarm[known]))
    else:  # a drive without both classes (a no-task drive): specificity only
        record.update(accuracy=np.nan, sensitivity=np.nan, g_mean=np.nan,
                      specificity=float(np.mean(alarm[known] == 0)) if (known & decided).any()
                      else np.nan)
    states = decide(drive.t_end, scores, drive.quality, drive.alerts, **decision)
    record["coverage"] = float(np.mean(states != -1)) if len(states) else np.nan
    record["delays_s"] = detection_delays(drive.t_end, drive.label, states).tolist()
    record["false_alarms_per_hour"] = false_alarms_per_hour(drive.t_end, drive.label, states,
                                                            grace_s=window_s / 2)
    if traces:
        record["trace"] = {"t_end": drive.t_end, "scores": scores, "states": states,
                           "label": drive.label, "alerts": drive.alerts}
    return record


def _within_drives(drives, scheme, specs, n_labelled, n_draws, window_s, decision, seed,
                   progress, runner):
    """``source`` and ``blocked``: the source's per-drive protocol, drive by drive."""
    # a drive without a task (or too short) cannot be split into folds holding both classes
    drives = [d for d in drives if np.bincount(d.label[d.label >= 0], minlength=2).min() >= 8]
    if not drives:
        raise ConfigError(f"the {scheme} scheme needs drives with windows of both classes")
    options = {"folds": "random" if scheme == "source" else "blocked", "specs": specs,
               "n_labelled": n_labelled, "n_draws": n_draws, "window_s": window_s,
               "decision": decision}
    outcomes = runner.map(_drive_task, [(seed + 1000 * i, d) for i, d in enumerate(drives)],
                          options, progress=progress, desc=f"{scheme} drives")
    results = {spec.name: {} for spec in specs}
    for drive, records in zip(drives, outcomes):
        for spec, record in zip(specs, records):
            results[spec.name].setdefault(drive.driver_id, []).append(record)
    return results


def _drive_task(task, options):
    """The source's protocol on one drive: a record per model ([] when no feature has data)."""
    seed, drive = task
    present = np.isfinite(drive.X).mean(axis=0) >= 0.5  # features this drive has data for
    if not present.any():
        return []  # nothing to learn from: every feature is missing in most windows
    folds = options["folds"]
    out = evaluate_driver(drive.X[:, present], drive.label, drive.t_end, options["specs"],
                          n_labelled=options["n_labelled"], folds=folds,
                          purge_s=options["window_s"] if folds == "blocked" else 0.0,
                          n_draws=options["n_draws"], seed=seed, quality=drive.quality,
                          alerts=drive.alerts, decision=options["decision"])
    records = []
    for spec in options["specs"]:
        splits = out[spec.name]["splits"]
        record = {"recording_id": drive.recording_id, "protocol": drive.protocol}
        for key in ("accuracy", "sensitivity", "specificity", "g_mean"):
            record[key] = float(np.nanmean([s[key] for s in splits]))
        record["coverage"] = float(np.nanmean(out[spec.name]["coverage"]))
        record["delays_s"] = [d for repeat in out[spec.name]["delays_s"] for d in repeat]
        record["false_alarms_per_hour"] = float(
            np.nanmean(out[spec.name]["false_alarms_per_hour"]))
        records.append(record)
    return records
