"""Cohort (driver-independent) detectors: one model from many drivers' labelled windows.

The deployable detector is not trained per driver: features standardised against each stream's
own running baseline make drivers comparable, and one model learns from every labelled window of
a cohort. :func:`fit_cohort` is the one recipe, used by ``distractd train --cohort``, by the
evaluation's cohort recipe and by :func:`adapt_detector`:

- windows with a missing feature (or a baseline still warming up) are left out;
- one window per ``stride_s`` seconds of a drive is kept (windows 0.5 s apart overlap 95 %), then
  at most ``n_train`` of them with the classes balanced: each class gets ``n_train // 2`` places
  and a class with fewer windows leaves its unused places to the other. A cohort's windows are
  about one third distracted; a detector fitted on them as they come (an SVM with one C for both
  classes) trades sensitivity for specificity, while G-mean weighs both alike (the gain is
  measured in docs/evaluation.md, "Schemes");
- the rows are z-scored (the artifact's normaliser);
- hyper-parameters by grouped cross-validation over the training drivers (3 folds; stratified
  folds when fewer than 3 groups), so that selection is judged on drivers it did not train on;
- semi-supervised models also get unlabelled rows (the new driver's windows when adapting).

:func:`adapt_rows` is the adaptation to a new driver the semi-supervised detectors exist for:
the cohort's labelled rows (kept in the artifact as ``extras["anchors"]``) plus the new driver's
*unlabelled* windows in the graph, refitted with the cohort model's hyper-parameters. It is the
one implementation behind :func:`adapt_detector` (offline, ``distractd adapt``) and the daemon's
per-stream adaptation (``[adaptation]``).
"""

import copy

import numpy as np
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from ..._errors import ConfigError
from ..._json import json_ready
from ..._parallel import recording_windows
from ..._validation import Interval, check_params
from ...pipeline import (
    FEATURE_NAMES, VEHICLE_FEATURES, PipelineConfig, extract_features, feature_min_rate_hz,
    gaze_only_features,
)
from ..segmentation import fit_segment_prototypes
from ._adaptable import adaptation_obstacle
from ._artifact import SUBMODELS, fallback_extra
from ._decision import decision_options
from ._scores import binary_scores, g_mean
from ._selection import UNLABELLED, select_params
from ._specs import model_specs
from ._sselm import SSELMClassifier
from ._training import chosen_features, usable_features

OPERATING_SCORE = decision_options()["on"]
"""The published score the decision rule's threshold sits at by default (``smoothing.on``):
where an adaptation keeps the model's operating point."""

ADAPT_TOLERANCE = 0.02
"""An adaptation whose held-back G-mean falls by more than this is worse (``distractd adapt``
then saves nothing): about the G-mean's resolution on a few hundred windows."""

HOLD_BACK_BLOCK_S = 30.0
"""``adapt`` holds back whole blocks of this many seconds of a drive's windows (a task section
of the simulator lasts 45-70 s, a texting block of Taamneh et al. 160 s)."""

__all__ = ["fit_cohort", "thin_windows", "stratified_subset", "CohortFit", "train_cohort",
           "adapt_detector", "adapt_checked", "adapt_rows", "operating_decision", "best_threshold"]

_CONSTRAINTS = {
    "n_train": Interval(10, None, integer=True),
    "stride_s": Interval(0, None),
    "n_folds": Interval(2, None, integer=True),
}


class CohortFit:
    """A fitted cohort detector and what it was fitted on.

    Attributes
    ----------
    estimator : fitted estimator
        Works on z-scored rows.
    mean, scale : ndarray of shape (n_features,)
        The z-score of the raw (baseline-standardised) feature rows.
    params : dict
        The selected hyper-parameters.
    X_labelled, y_labelled : ndarray
        The z-scored labelled rows and their labels (the anchors of an adaptation).
    groups : ndarray
        The driver of each labelled row.
    n_unlabelled : int
        Unlabelled rows in the fit (semi-supervised models).
    score_scale : float
        Standard deviation of the decision values over the labelled rows: scores are published
        in these units, so that one decision threshold means the same for every model kind
        (an SVM's margins and an SS-ELM's regression outputs differ in scale several-fold).
    """

    def __init__(self, estimator, mean, scale, params, X_labelled, y_labelled, groups,
                 n_unlabelled):
        self.estimator = estimator
        self.mean = mean
        self.scale = scale
        self.params = params
        self.X_labelled = X_labelled
        self.y_labelled = y_labelled
        self.groups = groups
        self.n_unlabelled = n_unlabelled
        spread = float(np.std(estimator.decision_function(X_labelled)))
        self.score_scale = spread if spread > 0 else 1.0

    def decision_function(self, X):
        """Scores of raw feature rows (NaN-free), in units of :attr:`score_scale`."""
        return self.estimator.decision_function((X - self.mean) / self.scale) / self.score_scale


def thin_windows(t_end, stride_s):
    """A mask keeping one window per ``stride_s`` seconds of ``t_end`` (all for 0)."""
    t_end = np.asarray(t_end, dtype=np.float64)
    if stride_s <= 0 or len(t_end) == 0:
        return np.ones(len(t_end), dtype=bool)
    slot = np.floor((t_end - t_end[0]) / stride_s)
    return np.r_[True, slot[1:] != slot[:-1]]


def stratified_subset(rows, y, n, rng):
    """Up to ``n`` of ``rows`` (sorted), drawn without replacement, class proportions kept."""
    if n >= len(rows):
        return np.sort(rows)
    picked = []
    for cls in (0, 1):
        members = rows[y == cls]
        k = max(2, int(round(n * len(members) / len(rows))))
        picked.append(rng.choice(members, min(k, len(members)), replace=False))
    return np.sort(np.concatenate(picked))


def _balanced_subset(rows, y, n, rng):
    """Up to ``n`` of ``rows`` (sorted), drawn without replacement, ``n // 2`` of each class; a
    class with fewer rows is taken whole and the other fills the remaining places."""
    if n >= len(rows):
        return np.sort(rows)
    members = [rows[y == cls] for cls in (0, 1)]
    small = int(len(members[1]) < len(members[0]))
    sizes = [0, 0]
    sizes[small] = min(len(members[small]), n // 2)
    sizes[1 - small] = n - sizes[small]
    picked = [rng.choice(m, k, replace=False) for m, k in zip(members, sizes)]
    return np.sort(np.concatenate(picked))


def fit_cohort(spec, X, y, groups, *, X_unlabelled=None, n_train=2000, n_folds=3,
               params=None, seed=0):
    """Fit one driver-independent detector on a cohort's labelled windows.

    Parameters
    ----------
    spec : ModelSpec
        The model (:func:`~distractd.models.detectors.model_specs`).
    X : ndarray of shape (n_windows, n_features)
        Feature rows of the cohort's (already thinned) windows; rows with a NaN are left out.
    y : ndarray of shape (n_windows,)
        Window truth: 1, 0, or -1 unknown (left out).
    groups : ndarray of shape (n_windows,)
        The driver of each row (grouped selection).
    X_unlabelled : ndarray or None, default=None
        Unlabelled rows for a semi-supervised model (NaN rows left out).
    n_train : int, default=2000
        Most labelled rows, the classes balanced (module docstring).
    n_folds : int, default=3
        Folds of the grouped selection.
    params : dict or None, default=None
        Hyper-parameters to use instead of selecting them.
    seed : int, default=0
        Seed of the subset, the selection folds and randomised estimators.

    Returns
    -------
    CohortFit
    """
    check_params({"n_train": n_train, "n_folds": n_folds}, _CONSTRAINTS, owner="cohort")
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    groups = np.asarray(groups)
    rng = np.random.default_rng(seed)
    usable = np.flatnonzero(np.isfinite(X).all(axis=1) & (y != UNLABELLED))
    counts = np.bincount(y[usable].astype(np.int64), minlength=2)
    if counts.min() < 8:
        raise ConfigError(f"cohort training needs at least 8 usable windows of each class, got "
                          f"{counts[1]} distracted and {counts[0]} attentive (windows with a "
                          f"missing feature or a warming baseline are left out)")
    rows = _balanced_subset(usable, y[usable], n_train, rng)
    mean = X[rows].mean(axis=0)
    scale = X[rows].std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    XL, yL, gL = (X[rows] - mean) / scale, y[rows].astype(np.int8), groups[rows]
    XU = np.empty((0, X.shape[1]))
    if spec.semi_supervised and X_unlabelled is not None and len(X_unlabelled):
        XU = np.asarray(X_unlabelled, dtype=np.float64)
        XU = (XU[np.isfinite(XU).all(axis=1)] - mean) / scale
    with threadpool_limits(limits=1, user_api="blas"):  # small matrices: threads only contend
        if params is None:
            grouped = len(np.unique(gL)) >= n_folds
            params = select_params(spec, XL, yL, XU, n_folds=n_folds, n_repeats=1,
                                   random_state=int(rng.integers(2**31)),
                                   groups=gL if grouped else None)
        estimator = clone(spec.estimator).set_params(**params)  # the spec stays unfitted
        if spec.randomised:
            estimator.set_params(random_state=int(rng.integers(2**31)))
        if spec.semi_supervised:
            estimator.fit(np.vstack([XL, XU]), np.r_[yL, np.full(len(XU), UNLABELLED)])
        else:
            estimator.fit(XL, yL)
    return CohortFit(estimator, mean, scale, dict(params), XL, yL, gL, len(XU))


def train_cohort(recordings, model="svm", *, features=None, grid="small", n_train=2000,
                 stride_s=5.0, config=None, seed=0, segment_frames=400, runner=None,
                 sparse_model=None, protocols=None, operating_point=None, vehicle=False,
                 progress=False):
    """Train one driver-independent detector on many drivers' labelled recordings.

    Parameters
    ----------
    recordings : sequence of Recording, str or Path
        Labelled drives, or paths of them as :func:`~distractd.pipeline.read_recordings` takes
        them (read where they live when ``runner`` is a cluster); ``meta["driver_id"]`` groups
        them by driver (each recording its own driver when absent).
    model : str, default="svm"
        Model id (:func:`~distractd.models.detectors.model_specs`).
    features : sequence of str or None, default=None
        Feature names; None keeps those with data in at least half of the windows
        (:func:`~distractd.models.detectors.usable_features`).
    grid : {"full", "small"}, default="small"
    n_train : int, default=2000
        Most labelled training windows.
    stride_s : float, default=5.0
        One window per ``stride_s`` seconds of each drive is used.
    config : PipelineConfig or None, default=None
        Window settings; the per-stream baseline is switched on.
    seed : int, default=0
    segment_frames : int, default=400
        Windows of the first recording (after its baseline warm-up) segmented by ACA for the
        online segmenter's prototypes (``extras["segmenter"]``); 0 stores no segmenter.
    runner : Runner or None, default=None
        Where the recordings' features are computed (:func:`~distractd._parallel.batch_runner`;
        None: here). The model does not depend on it.
    sparse_model : Detector or None, default=None
        A model whose features a sparse gaze-only tracker gives (e.g. one trained on real 1 Hz
        drives): it becomes the ``sparse_gaze`` sub-model instead of one fitted on
        ``recordings``, and its own ``sparse_gaze_vehicle`` and ``vehicle`` sub-models, if it
        has them, become this model's; their id, seed and training data are recorded in the
        sub-models' summaries.
    protocols : sequence of str or None, default=None
        Keep only the recordings of these protocols (``meta["protocol"]``, e.g. ``normal`` and
        ``texting`` of Taamneh et al.); None keeps all.
    operating_point : float or None, default=None
        A published score (the decision rule's threshold: 1.0 by default) to place at the
        decision value that a new driver meets best (:func:`operating_decision`: the best
        G-mean of the training windows scored out of fold, each driver by a model fitted
        without them, averaged over the task protocols), in every sub-model fitted here
        (``summary["score_offset"]``, :attr:`Detector.score_offset`); None publishes decision
        values over the spread alone, which puts the default rule's threshold one spread
        above the boundary: too high for classes that overlap (a cognitive task, a 1 Hz
        gaze-only tracker).
    vehicle : bool, default=False
        Also fit the sub-models that read the car (:data:`~distractd.pipeline.VEHICLE_FEATURES`
        with data in half of the windows): ``eyes_vehicle`` (the gaze-only features and the
        car's), ``sparse_gaze_vehicle`` (the gaze features any rate gives and the car's) and
        ``vehicle`` (the car's alone), each fitted like the others; the model itself keeps to
        its ``features``.
    progress : bool, default=False
        Show a progress bar of the recordings' features on standard error (tqdm).

    Returns
    -------
    estimator : fitted estimator
    parts : dict
        Keyword arguments of :func:`~distractd.models.save_model` besides the estimator; the
        cohort's labelled rows are kept as ``extras["anchors"]`` for :func:`adapt_detector`.
        When some of the features need more than gaze (head pose, eyelids, pupils), a second
        model of the same kind, fitted the same way on the gaze-only ones
        (:func:`~distractd.pipeline.gaze_only_features`), is kept as ``extras["gaze_only"]``:
        it scores the windows of a gaze-only tracker (:attr:`Detector.fallback`). When some of
        those need a sample rate (saccades, blinks: :func:`~distractd.pipeline.
        feature_min_rate_hz`), a third, on the gaze-only features any rate gives, is kept as
        ``extras["sparse_gaze"]`` (or ``sparse_model``'s): it scores a 1 Hz gaze-only tracker.
        With ``vehicle``, the car's sub-models beside them (a set equal to a larger one's is
        not fitted twice: with the gaze features needing no rate, ``sparse_gaze_vehicle``
        serves for ``eyes_vehicle``).
    """
    check_params({"n_train": n_train, "stride_s": stride_s}, _CONSTRAINTS, owner="cohort")
    (spec,) = model_specs([model], grid)
    config = PipelineConfig.from_dict({**(config or PipelineConfig()).to_dict(),
                                       "baseline": True})
    imported = {} if sparse_model is None else _imported_submodels(sparse_model, config)
    featured = recording_windows(recordings, config, runner, progress=progress)
    if protocols is not None:
        featured = [item for item in featured if item.meta.get("protocol") in protocols]
        if not featured:
            raise ConfigError(f"cohort: no recording of the protocols {list(protocols)}")
    metas = [item.meta for item in featured]
    windows = [item.windows for item in featured]
    names = chosen_features(windows, features)
    car = [name for name in usable_features(windows, vehicle=True)
           if vehicle and name in VEHICLE_FEATURES and name not in names]
    columns = [FEATURE_NAMES.index(name) for name in names]
    with_car = columns + [FEATURE_NAMES.index(name) for name in car]
    kept = [thin_windows(w.t_end, stride_s) for w in windows]
    drivers = [str(meta.get("driver_id", meta.get("recording_id", i)))
               for i, meta in enumerate(metas)]
    X_all = np.vstack([w.X[k][:, with_car] for w, k in zip(windows, kept)])
    X = X_all[:, :len(names)]
    y = np.concatenate([w.label[k] for w, k in zip(windows, kept)])
    groups = np.concatenate([np.full(k.sum(), d) for d, k in zip(drivers, kept)])
    fit = fit_cohort(spec, X, y, groups, n_train=n_train, seed=seed)
    known = np.isfinite(X).all(axis=1) & (y != UNLABELLED)
    scores = fit.decision_function(X[known])
    summary = {
        "model": model, "kind": "cohort", "params": json_ready(fit.params), "grid": grid,
        "drivers": sorted(set(drivers)), "n_recordings": len(metas), "protocols": protocols,
        "recordings": [str(meta.get("recording_id", "")) for meta in metas],
        "n_windows": int(sum(len(w) for w in windows)), "n_labelled": int(len(fit.y_labelled)),
        "stride_s": stride_s, "score_scale": fit.score_scale,
        "known_truth": {"distracted": int((y[known] == 1).sum()),
                        "attentive": int((y[known] == 0).sum())},
        "resubstitution": binary_scores(y[known], (scores > 0).astype(np.int8)),
    }
    kinds = np.concatenate([np.full(k.sum(), str(meta.get("protocol", "")))
                            for meta, k in zip(metas, kept)])
    if operating_point is not None:
        summary.update(operating_decision(spec, X, y, groups, kinds, fit, operating_point,
                                          n_train=n_train, seed=seed))
    extras = {"anchors": ({"groups": fit.groups.tolist()},
                          {"X": fit.X_labelled, "y": fit.y_labelled.astype(np.int8)})}
    gaze_names = gaze_only_features(names, config.use_tracker_flags)
    sparse_names = [name for name, rate in zip(gaze_names, feature_min_rate_hz(gaze_names, config))
                    if rate == 0]
    all_names = names + car
    slots = _submodel_sets(names, gaze_names, sparse_names, car)
    for key, subset in slots:
        if key in imported:
            continue
        keep = [all_names.index(name) for name in subset]
        part = fit_cohort(spec, X_all[:, keep], y, groups, n_train=n_train, seed=seed)
        part_summary = {"params": json_ready(part.params), "score_scale": part.score_scale,
                        "n_labelled": int(len(part.y_labelled))}
        if operating_point is not None:
            part_summary.update(operating_decision(spec, X_all[:, keep], y, groups, kinds, part,
                                                   operating_point, n_train=n_train, seed=seed))
        extras[key] = fallback_extra(
            part.estimator, normalizer_mean=part.mean, normalizer_scale=part.scale,
            feature_names=subset, summary=part_summary)
    extras.update({key: part for key, part in imported.items()   # the car's always: a sparse
                   if key != "sparse_gaze" or key in dict(slots)})   # one where one would be
    if segment_frames:
        first = windows[0].X[:, columns]
        ready = np.isfinite(first).all(axis=1)
        frames = (first[ready][:segment_frames] - fit.mean) / fit.scale
        prototypes = fit_segment_prototypes(frames, windows[0].label[ready][:segment_frames],
                                            hop_s=config.hop_s, random_state=seed)
        extras["segmenter"] = prototypes.to_artifact()
    return fit.estimator, {"normalizer_mean": fit.mean, "normalizer_scale": fit.scale,
                           "feature_names": names, "pipeline_config": config.to_dict(),
                           "extras": extras, "summary": summary, "seed": seed}


def operating_decision(spec, X, y, groups, kinds, fit, operating_point, *, n_train=2000,
                       n_folds=3, seed=0):
    """Where a cohort model's decision threshold holds on drivers it never saw.

    Each training driver's windows are scored by a model of ``fit``'s hyper-parameters fitted
    without them (``n_folds`` folds grouped by driver), so the scores are those a new driver
    gets; the threshold (in spreads of each fold's scores) is the one with the best G-mean on
    them, averaged over the task kinds (``kinds``: each row's protocol; each kind's
    distracted windows against every attentive window), so a task whose windows are harder
    to tell from attentive driving (a cognitive task beside a visual-manual one) is not
    outvoted by an easier one.

    Returns
    -------
    dict
        ``score_offset`` (decision value placed at ``operating_point``) and ``operating_point``
        (what was chosen on, the out-of-fold G-mean per kind at the threshold).
    """
    usable = np.isfinite(X).all(axis=1) & (y != UNLABELLED)
    drivers = np.unique(groups[usable])
    scores = np.full(len(y), np.nan)
    if len(drivers) >= 2:
        rng = np.random.default_rng(seed)
        fold_of = dict(zip(rng.permutation(drivers), np.arange(len(drivers)) % n_folds))
        folds = np.array([fold_of.get(g, -1) for g in groups])
        for k in range(min(n_folds, len(drivers))):
            test = usable & (folds == k)
            train = usable & (folds != k)
            if np.bincount(y[train].astype(np.int64), minlength=2).min() < 8 or not test.any():
                continue
            part = fit_cohort(spec, X[train], y[train], groups[train], n_train=n_train,
                              params=fit.params, seed=seed)
            scores[test] = part.decision_function(X[test])
    scored = np.isfinite(scores)
    if not (scored & (y == 1)).any() or not (scored & (y == 0)).any():
        scored = usable   # too few drivers to hold one out: the training windows themselves
        scores[usable] = fit.decision_function(X[usable])
    threshold, per_kind = best_threshold(scores[scored], y[scored], kinds[scored])
    decision = threshold * fit.score_scale
    return {"score_offset": decision - operating_point * fit.score_scale,
            "operating_point": {"score": operating_point, "decision": decision,
                                "chosen_on": "training drivers scored out of fold, best mean "
                                             "G-mean over the task kinds",
                                "g_mean": per_kind}}


def best_threshold(scores, y, kinds=None):
    """The score threshold (among the scores' percentiles) with the best G-mean on ``y``,
    averaged over the task ``kinds`` (each kind's distracted rows against every attentive row;
    None: one kind), and that G-mean per kind."""
    kinds = np.zeros(len(y), dtype=object) if kinds is None else np.asarray(kinds)
    candidates = np.unique(np.percentile(scores, np.linspace(1, 99, 197)))
    positive = scores[None, :] > candidates[:, None]
    specificity = 1.0 - positive[:, y == 0].mean(axis=1)
    tasks = [kind for kind in dict.fromkeys(kinds[y == 1])]
    g = np.array([np.sqrt(positive[:, (y == 1) & (kinds == kind)].mean(axis=1) * specificity)
                  for kind in tasks])
    best = int(np.argmax(g.mean(axis=0)))
    return float(candidates[best]), {str(kind): round(float(g[i, best]), 4)
                                     for i, kind in enumerate(tasks)}


def _submodel_sets(names, gaze_names, sparse_names, car):
    """``(key, features)`` of each sub-model to fit, in :data:`SUBMODELS` order. The eyes'
    chain: ``gaze_only``, then ``sparse_gaze``, each left out when empty or equal to the larger
    set before it (that one needs no more). With the car's features ``car``: the same sets with
    them (``eyes_vehicle`` left out when the gaze features need no rate: ``sparse_gaze_vehicle``
    is the same set) and ``vehicle``, the car's alone."""
    sets = {}
    larger = names
    for key, subset in (("gaze_only", gaze_names), ("sparse_gaze", sparse_names)):
        if subset and subset != larger:
            sets[key] = subset
            larger = subset
    if car:
        if gaze_names and gaze_names != sparse_names:
            sets["eyes_vehicle"] = gaze_names + car
        if sparse_names:
            sets["sparse_gaze_vehicle"] = sparse_names + car
        sets["vehicle"] = car
    return [(key, sets[key]) for key in SUBMODELS if key in sets]


def _imported_submodels(detector, config):
    """The ``sparse_gaze`` extra made of another artifact's model, which must need nothing but
    gaze at any rate and share this model's pipeline settings, and its ``sparse_gaze_vehicle``
    and ``vehicle`` sub-models (gaze at any rate and the car; the car) as this model's."""
    theirs = PipelineConfig.from_dict(detector.pipeline_config).to_dict()   # defaults for keys
    differ = sorted(key for key, value in config.to_dict().items()       # an older model lacks
                    if theirs[key] != value)
    if differ:
        raise ConfigError(f"sparse model {detector.model_id}: pipeline settings {differ} differ "
                          f"from this model's")
    imported = {}
    for key, part in [("sparse_gaze", detector)] + [(d.name, d) for d in detector.fallbacks
                                                    if d.name in ("sparse_gaze_vehicle",
                                                                  "vehicle")]:
        names = [name for name in part.feature_names if name not in VEHICLE_FEATURES]
        needs = gaze_only_features(names, config.use_tracker_flags)
        rated = feature_min_rate_hz(names, config)
        beyond = [name for name, rate in zip(names, rated) if name not in needs or rate > 0]
        if beyond or (key == "sparse_gaze" and len(names) < len(part.feature_names)):
            raise ConfigError(f"sparse model {detector.model_id}: features "
                              f"{beyond or part.feature_names} need more than gaze at any rate")
        summary = {**part.summary, "source_model_id": detector.model_id, "seed": detector.seed}
        imported[key] = fallback_extra(part.estimator, normalizer_mean=part._mean,
                                       normalizer_scale=part._scale,
                                       feature_names=part.feature_names, summary=summary)
    return imported


def adapt_detector(detector, recordings, *, n_unlabelled=1000, seed=0, hold_back=0.25):
    """Adapt a semi-supervised cohort detector to a new driver's unlabelled drives, judged on
    windows the refit never saw.

    A share ``hold_back`` of the cohort's labelled rows (``extras["anchors"]``, drawn per
    class) and of the new driver's windows (every fourth half-minute of each drive) is held back;
    the rest refits the model (:func:`adapt_rows`: the labelled rows and up to
    ``n_unlabelled`` of the driver's windows, unlabelled; the held-back windows are those of
    every ``round(1 / hold_back)``-th :data:`HOLD_BACK_BLOCK_S`). No label of the new driver is used
    in the refit. The window G-mean at the model's decision threshold (the published score
    :data:`OPERATING_SCORE`), before and after, is measured on the held-back windows of the
    driver when their labels hold both classes (a labelled check drive), else on the held-back
    cohort rows.

    Parameters
    ----------
    detector : Detector
        A cohort model (:func:`train_cohort`) of a semi-supervised kind (SS-ELM or LapSVM).
    recordings : sequence of Recording
        The new driver's drives (labels, if any, only judge the result).
    n_unlabelled : int, default=1000
    seed : int, default=0
    hold_back : float, default=0.25
        Share of the rows held back for the check.

    Returns
    -------
    estimator : fitted estimator
    parts : dict
        Keyword arguments of :func:`~distractd.models.save_model` besides the estimator;
        ``parts["summary"]["adapted"]["check"]`` holds the check: ``on`` (``"driver"`` or
        ``"cohort"``), ``windows``, ``before`` and ``after`` (G-means), ``worse`` (after more
        than :data:`ADAPT_TOLERANCE` below before).
    """
    check_params({"hold_back": hold_back}, {"hold_back": Interval(0, 1, closed="neither")},
                 owner="adapt")
    config = PipelineConfig.from_dict(detector.pipeline_config)
    columns = detector.feature_columns(FEATURE_NAMES)
    used, held, held_y = [], [], []
    for recording in recordings:
        windows = extract_features(recording, config)
        every = int(round(1 / hold_back))
        block = np.floor((windows.t_end - windows.t_end[:1]) / HOLD_BACK_BLOCK_S)
        back = block.astype(np.int64) % every == every - 1
        used.append(windows.X[~back][:, columns])
        held.append(windows.X[back][:, columns])
        held_y.append(windows.label[back])
    adapted, check = adapt_checked(detector, np.vstack(used), X_held=np.vstack(held),
                                   y_held=np.concatenate(held_y), n_unlabelled=n_unlabelled,
                                   seed=seed, hold_back=hold_back)
    summary = {**adapted.summary, "adapted": {
        **adapted.summary["adapted"], "check": check,
        "recordings": [str(r.meta.get("recording_id", "")) for r in recordings]}}
    return adapted.estimator, {"normalizer_mean": detector._mean,
                               "normalizer_scale": detector._scale,
                               "feature_names": detector.feature_names,
                               "pipeline_config": detector.pipeline_config,
                               "extras": detector.extras, "summary": summary, "seed": seed}


def adapt_checked(detector, X, *, X_held=None, y_held=None, n_unlabelled=1000, seed=0,
                  hold_back=0.25):
    """:func:`adapt_rows` judged on rows the refit never saw: the guard of ``distractd adapt``
    and of the daemon's refits.

    A share ``hold_back`` of the cohort's labelled rows (``extras["anchors"]``, drawn per class
    with ``seed``) is left out of the refit. The window G-mean at the model's decision threshold
    (the published score :data:`OPERATING_SCORE`), before and after, is measured on the driver's
    held-back rows ``X_held`` when their labels ``y_held`` hold both classes (a labelled check
    drive; before = the model as it is), else on the held-back cohort rows (the daemon's streams
    are unlabelled). There the model as it is learned those rows, so "before" is its refit on the
    same anchors without the driver's rows: judged against the model itself, in-sample, every
    refit of the shipped model fell by 0.05 whatever the driver (0.659 -> 0.610, seeds 201-202)
    and was refused.

    Parameters
    ----------
    detector : Detector
        A semi-supervised cohort model.
    X : ndarray of shape (n_windows, n_features)
        The driver's raw feature rows the refit uses, unlabelled (:func:`adapt_rows`).
    X_held, y_held : ndarray or None
        The driver's held-back raw rows and their labels (-1 unknown), if any.
    n_unlabelled, seed : int
    hold_back : float, default=0.25

    Returns
    -------
    adapted : Detector
        When the check passed, the refit on every anchor (what is served: the checked refit,
        a quarter of the anchors short, lowered the shipped model's G-mean on new simulated
        drivers by 0.02 on cognitive drives, while the refit on every anchor left it within
        0.001); when it failed, the checked refit.
    check : dict
        ``on`` (``"driver"`` or ``"cohort"``), ``windows``, ``before`` and ``after`` (G-means),
        ``worse`` (after more than :data:`ADAPT_TOLERANCE` below before).
    """
    _, arrays = detector.extras["anchors"]
    rng = np.random.default_rng(seed)
    y_anchor = np.asarray(arrays["y"])
    anchor_back = np.zeros(len(y_anchor), dtype=bool)
    for cls in (0, 1):
        members = np.flatnonzero(y_anchor == cls)
        anchor_back[rng.choice(members, int(len(members) * hold_back), replace=False)] = True
    adapted = adapt_rows(detector, X, n_unlabelled=n_unlabelled, seed=seed,
                         anchors=np.flatnonzero(~anchor_back))
    judged = np.zeros(0, dtype=bool)
    if X_held is not None and len(X_held):
        judged = np.isfinite(X_held).all(axis=1) & (y_held >= 0)
    if judged.any() and len(np.unique(y_held[judged])) == 2:
        on, Z, y, plain = "driver", detector.normalize(X_held[judged]), y_held[judged], detector
    else:   # the loaded model learned these rows: its own refit without them is the "before"
        on, Z, y = "cohort", arrays["X"][anchor_back], y_anchor[anchor_back]
        plain = _refitted(detector, np.empty((0, len(detector.feature_names))),
                          np.flatnonzero(~anchor_back))
    before, after = (g_mean(y, (published_scores(d, Z) > OPERATING_SCORE).astype(np.int8))
                     for d in (plain, adapted))
    worse = bool(after < before - ADAPT_TOLERANCE)
    if not worse:   # judged, it is served refitted on every anchor
        adapted = adapt_rows(detector, X, n_unlabelled=n_unlabelled, seed=seed)
    return adapted, {"on": on, "windows": int(len(y)), "before": before, "after": after,
                     "worse": worse}


def published_scores(detector, Z):
    """A model's published scores (decision less offset, over the spread) of z-scored rows."""
    return (detector.scorer._decision(Z) - detector.score_offset) / detector.score_scale


def adapt_rows(detector, X, *, n_unlabelled=1000, seed=0, anchors=None):
    """The adaptation's one implementation: refit a cohort detector with a driver's window rows.

    The cohort's labelled rows (``extras["anchors"]``) and up to ``n_unlabelled`` of the rows of
    ``X``, unlabelled, refit the model with its own hyper-parameters (its random hidden layer
    included): the graph of SS-ELM or LapSVM then follows the new driver's data. Used by
    :func:`adapt_detector` (offline) and by the daemon (per stream, in a background thread).

    Parameters
    ----------
    detector : Detector
        A cohort model of a semi-supervised kind (see :func:`adaptation_obstacle`).
    X : ndarray of shape (n_windows, n_features)
        Raw (baseline-standardised, not z-scored) feature rows of the new driver's windows, in
        ``detector.feature_names`` order; rows with a NaN are left out.
    n_unlabelled : int, default=1000
        Most rows used (drawn at random when there are more).
    seed : int, default=0
        Seed of that draw.
    anchors : ndarray of int or None, default=None
        The cohort rows of ``extras["anchors"]`` the refit uses (None: all).

    Returns
    -------
    Detector
        The same model (id, normaliser, fallback, extras) with the refitted estimator and its
        operating point carried over: the refit's scores are re-placed so that the threshold
        (the published score :data:`OPERATING_SCORE`) cuts the cohort rows at the same share
        as before (a refit moves and stretches the decision values; kept as they were, the
        threshold fell elsewhere and adaptation lost sensitivity).
        ``summary["adapted"]`` = ``{"from": model id, "n_unlabelled": rows used}``.
        An SS-ELM shares the cohort model's hidden-layer arrays, so it holds only its own output
        weights (``n_hidden`` floats).

    Raises
    ------
    ConfigError
        When the model cannot be adapted or no row has every feature.
    """
    obstacle = adaptation_obstacle(detector)
    if obstacle is not None:
        raise ConfigError(f"adapt: {obstacle}")
    X = np.asarray(X, dtype=np.float64)
    X = X[np.isfinite(X).all(axis=1)]
    if len(X) == 0:
        raise ConfigError(f"adapt: no window has every feature of model {detector.model_id} "
                          f"({', '.join(detector.feature_names)})")
    rng = np.random.default_rng(seed)
    return _refitted(detector, detector.normalize(X[rng.permutation(len(X))[:n_unlabelled]]),
                     anchors)


def _refitted(detector, unlabelled, anchors):
    """:func:`adapt_rows`'s refit on z-scored unlabelled rows (maybe none) and the anchors."""
    _, arrays = detector.extras["anchors"]
    X_anchor, y_anchor = arrays["X"], arrays["y"]
    if anchors is not None:
        X_anchor, y_anchor = X_anchor[anchors], y_anchor[anchors]
    estimator = clone(detector.estimator)
    with threadpool_limits(limits=1, user_api="blas"):
        estimator.fit(np.vstack([X_anchor, unlabelled]),
                      np.r_[y_anchor, np.full(len(unlabelled), UNLABELLED)])
    if isinstance(estimator, SSELMClassifier):
        estimator._share_hidden_layer(detector.estimator)
    share = float(np.mean(published_scores(detector, X_anchor) <= OPERATING_SCORE))
    decision = estimator.decision_function(X_anchor)
    spread = float(np.std(decision))
    scale = spread if spread > 0 else detector.score_scale
    offset = float(np.quantile(decision, share)) - OPERATING_SCORE * scale
    adapted = copy.copy(detector)
    adapted.estimator = estimator
    adapted.score_scale, adapted.score_offset = scale, offset
    adapted.summary = {**detector.summary, "score_scale": scale, "score_offset": offset,
                       "adapted": {"from": detector.model_id,
                                   "n_unlabelled": int(len(unlabelled))}}
    return adapted
