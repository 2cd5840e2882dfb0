"""Labelling assistance: preliminary labels of a drive's windows for an expert to correct.

The expert workflow of S0 §5.2 (Fig 5.2, first stage): a drive's windows are clustered (k-means,
US-ELM, ELM-JEC or ELM-CLR with c = 2), each cluster is mapped to distracted (1) or attentive (0),
and an expert confirms or corrects the result instead of labelling from scratch. docs/labelling.md
gives the measured quality of every step.

Representation (``representation``). ``"baseline"`` (default): every window judged against the
driver's own running baseline, warm-up filled backwards
(:func:`~distractd.models.segmentation.drift_free_windows`), so the clusters cannot follow the slow
posture drift; ``"drive"``: the source's z-score of the whole drive (the previous default). Windows
below ``min_quality`` (valid-sample fraction) are left out (cluster -1, label -1). A remaining NaN
becomes the feature's median, then the features are z-scored (S0 §5.5.2).

Feature sets (``features``). ``"auto"`` (default): chosen without labels by
:func:`~distractd.models.segmentation.drift_features` (features that still correlate with
themselves 120 s later follow drift, not a task). ``"all"``, ``"no-head-position"``,
``"no-location"``: fixed sets (:data:`FEATURE_SETS`, the names left out).

The prior (``prior``). A cohort model's probability that each window is distracted
(:func:`model_prior`): the clusters then become labels through a two-component mixture along the
clustering's discriminant (:func:`_posterior`) whose per-window mixing weight is the prior, so a
window the clustering leaves ambiguous takes the model's view and a clear cluster overrides a weak
model. Without a prior the labels are the mapped clusters (the mixture, with one proportion
fitted to the drive, only gives the confidence its margin).

Mapping clusters to labels (``mapping``; default ``"prior"`` with a prior, else ``"rule"``):

- ``"prior"``: the cluster with the higher mean prior probability is distracted;
- ``"rule"``: the cluster whose windows have the lower mean gaze dispersion (the mean z-score of
  the four ``sd_gaze_*`` features) is distracted (cognitive load concentrates gaze on the road
  centre, Victor et al. 2005; visual-manual tasks do the opposite, so use a prior there);
- ``"labels"``: the windows already labelled 0/1 choose the map with the larger G-mean on them.

Confidence. The probability that the window's label is right, from a logistic map fitted once on
labelled development drives (never the drive being labelled): with a prior, of the kappa between
clustering and prior, whether the window's label agrees with the prior and how sure the prior is;
without, of the mixture's margin (on those drives the rule mapping was right on a third of the
windows, so the confidence is low). Its mean estimates the fraction of windows the expert will
find right (docs/labelling.md measures how close). Review the lowest-confidence windows first.

Trust (:attr:`WindowLabels.trust`). With a prior: Cohen's kappa between the clustering's labels and
the prior's own (probability > 0.5); below :data:`MIN_KAPPA` the two independent views of the drive
do not agree beyond chance and :attr:`WindowLabels.warning` says so. Without a prior nothing
label-free can tell a task from another slow state, and the warning says the labels are unchecked.

Interval form. Runs of equal labels become ``start,end,label`` intervals (the format of
:func:`~distractd.pipeline.read_intervals`). A window owns the time from half-way to its
predecessor's centre to half-way to its successor's centre (the first and last windows extend to the
drive's first window start and last window end), so re-labelling the samples from the intervals and
re-windowing with majority labels gives back the window labels, except for runs shorter than a
window.
"""

import csv
import math
from dataclasses import dataclass, field

import numpy as np
from sklearn.cluster import KMeans
from sklearn.linear_model import LogisticRegression

from ..._errors import ConfigError, SchemaError
from ..._validation import Interval, Options, check_params
from ...pipeline import VEHICLE_FEATURES, PipelineConfig
from ..detectors import g_mean
from ..segmentation import drift_features, drift_free_windows
from ._elmclr import ELMCLR
from ._elmjec import ELMJEC
from ._uselm import USELM

__all__ = ["METHODS", "FEATURE_SETS", "REPRESENTATIONS", "MIN_KAPPA", "WindowLabels",
           "make_clusterer", "label_windows", "model_prior"]

METHODS = ("kmeans", "uselm", "elm-jec", "elm-clr")
"""Clustering methods of the labelling assistant."""

REPRESENTATIONS = ("baseline", "drive")
"""Window representations clustered on (see the module notes)."""

MIN_KAPPA = 0.5
"""Least Cohen's kappa between the clustering and the prior for labels not to be flagged
(development drives: visual-manual 0.64-0.84, cognitive -0.03-0.36; docs/labelling.md)."""

# Logistic maps to the probability that a window's label is right, fitted on development drives
# (cohort seed 31415, 6 drivers x cognitive and visual-manual, k-means and ELM-JEC; checked on
# other seeds in docs/labelling.md). With a prior: intercept, kappa, agrees with the prior,
# agrees x prior strength |2p - 1|, disagrees x prior strength. Without: intercept, |logit| of the
# mixture posterior.
_CALIBRATION_PRIOR = (-0.3784, 1.6696, -0.6985, 2.5518, -1.8675)
_CALIBRATION_NONE = (-0.8714, 0.0301)

_DEFAULT_PARAMS = {
    "kmeans": {"n_init": 10},
    "uselm": {"n_components": 1, "n_hidden": 500, "lam": 1.0, "n_neighbors": 5},
    "elm-jec": {"n_components": 1, "n_hidden": 500, "lam": 1.0, "gamma": 1.0, "n_neighbors": 5},
    "elm-clr": {"n_components": 1, "n_hidden": 500, "delta": 1.0, "n_neighbors": 11},
}
_HEAD_POSITION = ("mean_head_x", "mean_head_y", "mean_head_z")
FEATURE_SETS = {
    "auto": None,
    "all": (),
    "no-head-position": _HEAD_POSITION,
    "no-location": _HEAD_POSITION + ("mean_head_yaw", "mean_head_pitch", "mean_head_roll",
                                     "mean_gaze_r_yaw", "mean_gaze_r_pitch", "mean_gaze_l_yaw",
                                     "mean_gaze_l_pitch"),
}
"""Feature sets for clustering: name -> the feature names left out (``"auto"``: chosen per drive
without labels, see the module notes)."""
_CLASSES = {"kmeans": KMeans, "uselm": USELM, "elm-jec": ELMJEC, "elm-clr": ELMCLR}
_GAZE_DISPERSION = ("sd_gaze_r_yaw", "sd_gaze_r_pitch", "sd_gaze_l_yaw", "sd_gaze_l_pitch")
_CONSTRAINTS = {
    "method": Options(METHODS),
    "mapping": Options(("prior", "rule", "labels")),
    "features": Options(tuple(FEATURE_SETS)),
    "representation": Options(REPRESENTATIONS),
    "min_quality": Interval(0, 1),
}
_CSV_COLUMNS = ("t_start", "t_end", "cluster", "label", "confidence", "prior")


@dataclass
class WindowLabels:
    """Preliminary labels of a drive's windows.

    Attributes
    ----------
    t_start, t_end : ndarray of shape (n_windows,)
        Window bounds in seconds.
    cluster : ndarray of shape (n_windows,), dtype int
        Cluster 0 or 1; -1 for windows left out (low quality).
    label : ndarray of shape (n_windows,), dtype int8
        1 distracted, 0 attentive, -1 left out.
    confidence : ndarray of shape (n_windows,)
        Probability that the window's label is right (see the module notes); NaN for windows
        left out.
    method : str
        Clustering method used.
    mapping : str
        How clusters were mapped to labels, "prior", "rule" or "labels".
    prior : ndarray of shape (n_windows,) or None
        The prior's probability of distraction per window (NaN where it had none).
    trust : dict
        ``expected_accuracy`` (mean confidence), ``kappa_prior`` (Cohen's kappa between the
        clustering's labels and the prior's; None without a prior), ``agreement_prior`` (fraction
        of windows on which they agree), ``representation`` (``"drive"`` also when a drive was
        shorter than the running baseline's warm-up) and ``features`` (names clustered on).
    warning : str or None
        Why the labels should not be trusted, or None.
    """

    t_start: np.ndarray
    t_end: np.ndarray
    cluster: np.ndarray
    label: np.ndarray
    confidence: np.ndarray
    method: str
    mapping: str
    prior: np.ndarray = None
    trust: dict = field(default_factory=dict)
    warning: str = None

    def __len__(self):
        return len(self.t_end)

    def intervals(self):
        """Runs of equal labels as ``(start_s, end_s, label)`` tuples (windows left out skipped)."""
        centre = 0.5 * (self.t_start + self.t_end)
        edges = np.concatenate([self.t_start[:1], 0.5 * (centre[1:] + centre[:-1]),
                                self.t_end[-1:]])
        result = []
        for i, label in enumerate(self.label.tolist()):
            if label < 0:
                continue
            if result and result[-1][2] == label and self.label[i - 1] == label:
                result[-1][1] = edges[i + 1]
            else:
                result.append([edges[i], edges[i + 1], label])
        return [(float(start), float(end), int(label)) for start, end, label in result]

    def write_csv(self, path):
        """Write ``t_start,t_end,cluster,label,confidence,prior``, one row per window
        (``confidence`` and ``prior`` empty where undefined)."""
        prior = np.full(len(self), np.nan) if self.prior is None else self.prior
        with open(path, "w", newline="") as file:
            writer = csv.writer(file)
            writer.writerow(_CSV_COLUMNS)
            for row in zip(self.t_start, self.t_end, self.cluster, self.label, self.confidence,
                           prior):
                start, end, cluster, label, confidence, p = row
                writer.writerow([repr(float(start)), repr(float(end)), int(cluster), int(label),
                                 _number(confidence), _number(p)])


def _number(value):
    return "" if math.isnan(value) else f"{value:.4f}"


def make_clusterer(method, n_clusters=2, random_state=None, **params):
    """The estimator of ``method`` with the labelling defaults, overridden by ``params``.

    Defaults (S0 §5.5.2): embedding dimension 1, 500 hidden neurons, 5-NN binary graph for
    US-ELM/ELM-JEC, trade-offs 1 (the centre of the source's 2**-4 .. 2**4 grid), ELM-CLR with
    δ = 1 and k = 11 (from the source's {1, 6, ..., 31}).
    """
    check_params({"method": method}, _CONSTRAINTS, owner="make_clusterer")
    return _CLASSES[method](n_clusters=n_clusters, random_state=random_state,
                            **{**_DEFAULT_PARAMS[method], **params})


def model_prior(detector, windows, feature_names):
    """A model's probability that each window is distracted, for :func:`label_windows`.

    The windows must be raw (made without the per-stream baseline). A model trained with the
    baseline (a cohort model, such as the shipped default) sees them through
    :func:`~distractd.models.segmentation.drift_free_windows` with its own baseline settings. Its
    published scores become probabilities by a logistic fit on the labelled rows it was trained on
    (``extras["anchors"]``; a model without them: the logistic of twice the score, the decision
    rule's unit spread).

    Parameters
    ----------
    detector : Detector
    windows : Windows
    feature_names : sequence of str
        Names of the columns of ``windows.X``.

    Returns
    -------
    ndarray of shape (n_windows,)
        In [0, 1]; NaN where a feature the model needs is missing.
    """
    config = PipelineConfig.from_dict(detector.pipeline_config)
    X = windows.X
    if config.baseline:
        X = drift_free_windows(windows.t_end, X, config.baseline_memory_s,
                               config.baseline_spacing_s, config.baseline_warmup_s)
    scores = detector.window_scores(X, feature_names)
    slope, intercept = 2.0, 0.0
    if "anchors" in detector.extras:
        arrays = detector.extras["anchors"][1]
        anchor_scores = detector.estimator._decision(arrays["X"]) / detector.score_scale
        fit = LogisticRegression(C=1e6).fit(anchor_scores[:, None], arrays["y"])
        slope, intercept = float(fit.coef_[0, 0]), float(fit.intercept_[0])
    return 1.0 / (1.0 + np.exp(-(slope * scores + intercept)))


def label_windows(windows, feature_names, method="elm-jec", *, representation="baseline",
                  prior=None, mapping=None, min_quality=0.5, features="auto", params=None,
                  baseline=None, random_state=None):
    """Cluster the windows of a drive into two groups and turn them into preliminary labels.

    Parameters
    ----------
    windows : Windows
        Raw feature windows of one drive (:func:`distractd.pipeline.extract_features` without the
        per-stream baseline).
    feature_names : sequence of str
        Names of the columns of ``windows.X``; the car's (``VEHICLE_FEATURES``) are left out:
        labelling clusters the eyes.
    method : {"kmeans", "uselm", "elm-jec", "elm-clr"}, default="elm-jec"
    representation : {"baseline", "drive"}, default="baseline"
        Drift-free running baseline, or the whole drive z-scored (see the module notes).
    prior : ndarray of shape (n_windows,) or None, default=None
        Probability that each window is distracted (:func:`model_prior`; NaN: no view).
    mapping : {"prior", "rule", "labels"} or None, default=None
        How clusters become labels; None: ``"prior"`` with a prior, else ``"rule"``.
    min_quality : float, default=0.5
        Windows with a smaller valid-sample fraction are left out.
    features : {"auto", "all", "no-head-position", "no-location"}, default="auto"
        Feature set clustered on (:data:`FEATURE_SETS`); the rule mapping always reads the gaze
        dispersion.
    params : dict or None, default=None
        Estimator parameters overriding :func:`make_clusterer`'s defaults.
    baseline : dict or None, default=None
        ``memory_s``, ``spacing_s``, ``warmup_s`` of the running baseline (the pipeline's
        defaults when None).
    random_state : int or None, default=None

    Returns
    -------
    WindowLabels
    """
    mapping = mapping or ("prior" if prior is not None else "rule")
    check_params({"method": method, "mapping": mapping, "min_quality": min_quality,
                  "features": features, "representation": representation}, _CONSTRAINTS,
                 owner="label_windows")
    feature_names = list(feature_names)
    if len(feature_names) != windows.X.shape[1]:
        raise SchemaError(f"feature_names has {len(feature_names)} names for "
                          f"{windows.X.shape[1]} feature columns")
    if mapping == "prior" and prior is None:
        raise ConfigError("label_windows: mapping='prior' needs a prior (a model's scores)")
    n = len(windows)
    if prior is not None:
        prior = np.asarray(prior, dtype=np.float64)
        if prior.shape != (n,):
            raise SchemaError(f"label_windows: prior must have one value per window ({n}), got "
                              f"shape {prior.shape}")
    used = np.asarray(windows.quality) >= min_quality
    if used.sum() < 20:
        raise ConfigError(f"label_windows needs at least 20 windows of quality >= {min_quality}, "
                          f"got {int(used.sum())}")
    X = windows.X
    if representation == "baseline":
        X = drift_free_windows(windows.t_end, X, **(baseline or {}))
        if not np.isfinite(X[used]).any():  # shorter than the baseline's warm-up
            X, representation = windows.X, "drive"
    eyes = [i for i, name in enumerate(feature_names) if name not in VEHICLE_FEATURES]
    Z, names = _standardize(X[used][:, eyes], [feature_names[i] for i in eyes])   # the eyes'
    if features == "auto":
        hop_s = float(np.median(np.diff(windows.t_end))) if n > 1 else 0.5
        clustered = list(np.flatnonzero(drift_features(X[used], hop_s=hop_s)[
            [feature_names.index(name) for name in names]])) or list(range(len(names)))
    else:
        clustered = _feature_columns(names, features)
    estimator = make_clusterer(method, random_state=random_state, **(params or {}))
    space = Z[:, clustered]
    clusters = estimator.fit_predict(space)
    space = getattr(estimator, "embedding_", space)
    prior_used = None if prior is None else np.where(np.isnan(prior[used]), 0.5, prior[used])
    if mapping == "labels":
        distracted = _cluster_from_labels(clusters, np.asarray(windows.label)[used])
    elif mapping == "prior":
        distracted = int(prior_used[clusters == 1].mean() > prior_used[clusters == 0].mean())
    else:
        distracted = _cluster_from_rule(Z, names, clusters)
    cluster_label = (clusters == distracted).astype(np.int8)
    posterior = _posterior(_discriminant(space, cluster_label), cluster_label, prior_used)
    label = cluster_label if prior is None else (posterior > 0.5).astype(np.int8)
    trust = {"kappa_prior": None, "agreement_prior": None, "representation": representation,
             "features": [names[i] for i in clustered]}
    if prior is None:
        odds = np.clip(posterior, 1e-9, 1.0 - 1e-9)
        margin = np.abs(np.log(odds / (1.0 - odds)))
        confidence = _logistic(_CALIBRATION_NONE, np.clip(margin, 0.0, 10.0))
        warning = ("no prior given: nothing label-free checks that the clusters are the task; "
                   "give a cohort model to check them")
    else:
        prior_label = (prior_used > 0.5).astype(np.int8)
        trust["kappa_prior"] = _kappa(cluster_label, prior_label)
        trust["agreement_prior"] = float(np.mean(cluster_label == prior_label))
        agree = (label == prior_label).astype(np.float64)
        strength = np.abs(2.0 * prior_used - 1.0)
        confidence = _logistic(_CALIBRATION_PRIOR, np.full(len(label), trust["kappa_prior"]),
                               agree, agree * strength, (1.0 - agree) * strength)
        warning = None
        if not trust["kappa_prior"] >= MIN_KAPPA:
            warning = (f"labels may be no better than chance: the clustering does not confirm "
                       f"the model (they agree on {trust['agreement_prior']:.0%} of windows, "
                       f"kappa {trust['kappa_prior']:.2f} < {MIN_KAPPA}), so the labels rest on "
                       f"the model alone; check every window")
    trust["expected_accuracy"] = float(confidence.mean())
    return WindowLabels(np.asarray(windows.t_start, dtype=np.float64),
                        np.asarray(windows.t_end, dtype=np.float64), _spread(clusters, used, -1),
                        _spread(label, used, -1).astype(np.int8),
                        _spread(confidence, used, math.nan), method, mapping,
                        None if prior is None else prior.copy(), trust, warning)


def _spread(values, used, fill):
    """``values`` of the used windows placed among all windows, ``fill`` elsewhere."""
    out = np.full(len(used), fill, dtype=np.float64 if isinstance(fill, float) else np.int64)
    out[used] = values
    return out


def _standardize(X, names):
    """z-scored features without the all-NaN or constant columns; NaN replaced by the median."""
    finite = np.isfinite(X)
    keep = finite.any(axis=0)
    X, finite = X[:, keep], finite[:, keep]
    names = [name for name, k in zip(names, keep) if k]
    medians = np.nanmedian(X, axis=0)
    X = np.where(finite, X, medians)
    scale = X.std(axis=0)
    varied = scale > 0
    Z = (X[:, varied] - X[:, varied].mean(axis=0)) / scale[varied]
    return Z, [name for name, v in zip(names, varied) if v]


def _feature_columns(names, features):
    """Indices of ``names`` in the fixed feature set ``features`` (a key of :data:`FEATURE_SETS`)."""
    left_out = FEATURE_SETS[features]
    return [i for i, name in enumerate(names) if name not in left_out]


def _discriminant(space, label):
    """Projection of ``space`` on the direction that best separates the two labelled groups
    (Fisher's, within-group covariance with a small ridge); the 1-D embedding as it is."""
    if space.shape[1] == 1:
        d = space[:, 0]
    else:
        means = [space[label == k].mean(axis=0) for k in (0, 1)]
        centred = np.vstack([space[label == k] - means[k] for k in (0, 1)])
        within = centred.T @ centred / len(space)
        within += 1e-3 * np.trace(within) / len(within) * np.eye(len(within))
        d = space @ np.linalg.solve(within, means[1] - means[0])
    sign = 1.0 if d[label == 1].mean() >= d[label == 0].mean() else -1.0
    return sign * (d - d.mean()) / (d.std() or 1.0)


def _posterior(d, label, prior, n_iter=100):
    """P(distracted) of each window from a two-Gaussian mixture on the discriminant ``d``.

    Initialised from the cluster labels; the mixing weight of each window is its prior
    probability (clipped to [0.02, 0.98]) when given, else one proportion fitted by EM.
    """
    r = label.astype(np.float64)
    weight = None if prior is None else np.clip(prior, 0.02, 0.98)
    for _ in range(n_iter):
        mass = np.array([(1 - r).sum(), r.sum()])
        if mass.min() < 2:
            break
        mu = np.array([((1 - r) * d).sum(), (r * d).sum()]) / mass
        var = np.array([((1 - r) * (d - mu[0]) ** 2).sum(),
                        (r * (d - mu[1]) ** 2).sum()]) / mass + 1e-6
        pi = weight if weight is not None else np.clip(mass[1] / mass.sum(), 0.02, 0.98)
        log_ratio = (-0.5 * ((d - mu[1]) ** 2 / var[1] - (d - mu[0]) ** 2 / var[0])
                     - 0.5 * np.log(var[1] / var[0]) + np.log(pi / (1 - pi)))
        updated = 1.0 / (1.0 + np.exp(-np.clip(log_ratio, -50, 50)))
        if np.max(np.abs(updated - r)) < 1e-6:
            r = updated
            break
        r = updated
    return r


def _logistic(coefficients, *columns):
    """sigmoid(c0 + c1 x1 + ...) of the ``columns``."""
    z = coefficients[0] + sum(c * x for c, x in zip(coefficients[1:], columns))
    return 1.0 / (1.0 + np.exp(-z))


def _kappa(a, b):
    """Cohen's kappa of two 0/1 labellings (0 when either is constant)."""
    observed = np.mean(a == b)
    pa, pb = a.mean(), b.mean()
    expected = pa * pb + (1 - pa) * (1 - pb)
    return float((observed - expected) / (1 - expected)) if expected < 1 else 0.0


def _cluster_from_rule(Z, names, clusters):
    """The cluster with the lower mean gaze dispersion (z-scored ``sd_gaze_*``)."""
    columns = [names.index(name) for name in _GAZE_DISPERSION if name in names]
    if not columns:
        raise SchemaError(f"mapping='rule' needs at least one of {', '.join(_GAZE_DISPERSION)} "
                          f"with finite, varying values")
    dispersion = Z[:, columns].mean(axis=1)
    means = [dispersion[clusters == k].mean() for k in (0, 1)]
    return int(np.argmin(means))


def _cluster_from_labels(clusters, labels):
    """The cluster mapped to distracted by the larger G-mean on the labelled windows."""
    known = labels >= 0
    y = labels[known]
    if not (np.any(y == 1) and np.any(y == 0)):
        raise ConfigError("mapping='labels' needs windows labelled both 1 and 0, got "
                          f"{int((y == 1).sum())} distracted and {int((y == 0).sum())} attentive")
    c = clusters[known]
    return 1 if g_mean(y, c) >= g_mean(y, 1 - c) else 0
