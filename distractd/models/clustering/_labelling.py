"""Labelling assistance: cluster a drive's windows into two groups as preliminary labels.

The expert workflow of S0 §5.2 (Fig 5.2, first stage): unlabelled feature windows are clustered
(k-means, US-ELM, ELM-JEC or ELM-CLR with c = 2), each cluster is mapped to distracted (1) or
attentive (0), and an expert confirms or corrects the result instead of labelling from scratch.

Preparation. Windows below ``min_quality`` (valid-sample fraction) are left out (cluster -1, label
-1). Features with no finite value or no variance are dropped; a remaining NaN (e.g. PERCLOS or
blink measures before their first full window) is replaced by that feature's median. The features are
z-scored, as in the source (S0 §5.5.2).

Feature sets. ``features="all"`` (default) clusters on every window feature, as the source does.
``"no-head-position"`` leaves out the head-position means (``mean_head_x/y/z``), which follow the
driver's slow posture drift; ``"no-location"`` leaves out every location mean (head position and
rotation, gaze direction), which follow posture and tracker-calibration drift, and keeps the
dispersion, saccade, blink and PERCLOS features. See docs/labelling.md for their cohort G-means.

Mapping clusters to labels. A clustering only separates groups; which group is "distracted" must be
decided:

- ``mapping="rule"`` (default, no ground truth needed): the cluster whose windows have the lower
  mean gaze dispersion (the mean z-score of the four ``sd_gaze_*`` features) is distracted.
  Cognitive load concentrates gaze on the road centre (Victor et al. 2005; Reimer 2010), the effect the
  simulator and the source study's sound-counting task produce.
- ``mapping="labels"``: the windows already labelled 0/1 (e.g. a few minutes an expert labelled)
  choose the map with the larger G-mean on them (S0 eq 5.12); both classes must be present.

Confidence. For each window, ``d_other / (d_own + d_other)`` with ``d`` the distance to the two
cluster means in the space the method clusters in (the z-scored features for k-means, the embedding
for the ELM methods): 1 = at its own cluster's centre, 0.5 = half-way, below 0.5 = nearer the other
cluster (possible for ELM-CLR, whose clusters are graph components). Experts should check the
lowest-confidence windows first.

Interval form. Runs of equal labels become ``start,end,label`` intervals (the format of
:func:`~distractd.pipeline.read_intervals`). A window owns the time from half-way to its
predecessor's centre to half-way to its successor's centre (the first and last windows extend to the
drive's first window start and last window end), so re-labelling the samples from the intervals and
re-windowing with majority labels gives back the window labels, except for runs shorter than a
window.
"""

import csv
import math
from dataclasses import dataclass

import numpy as np
from sklearn.cluster import KMeans

from ..._errors import ConfigError, SchemaError
from ..._validation import Interval, Options, check_params
from ..detectors import g_mean
from ._elmclr import ELMCLR
from ._elmjec import ELMJEC
from ._uselm import USELM

__all__ = ["METHODS", "FEATURE_SETS", "WindowLabels", "make_clusterer", "label_windows"]

METHODS = ("kmeans", "uselm", "elm-jec", "elm-clr")
"""Clustering methods of the labelling assistant."""

_DEFAULT_PARAMS = {
    "kmeans": {"n_init": 10},
    "uselm": {"n_components": 1, "n_hidden": 500, "lam": 1.0, "n_neighbors": 5},
    "elm-jec": {"n_components": 1, "n_hidden": 500, "lam": 1.0, "gamma": 1.0, "n_neighbors": 5},
    "elm-clr": {"n_components": 1, "n_hidden": 500, "delta": 1.0, "n_neighbors": 11},
}
_HEAD_POSITION = ("mean_head_x", "mean_head_y", "mean_head_z")
FEATURE_SETS = {
    "all": (),
    "no-head-position": _HEAD_POSITION,
    "no-location": _HEAD_POSITION + ("mean_head_yaw", "mean_head_pitch", "mean_head_roll",
                                     "mean_gaze_r_yaw", "mean_gaze_r_pitch", "mean_gaze_l_yaw",
                                     "mean_gaze_l_pitch"),
}
"""Feature sets for clustering: name -> the feature names left out (see the module notes)."""
_CLASSES = {"kmeans": KMeans, "uselm": USELM, "elm-jec": ELMJEC, "elm-clr": ELMCLR}
_GAZE_DISPERSION = ("sd_gaze_r_yaw", "sd_gaze_r_pitch", "sd_gaze_l_yaw", "sd_gaze_l_pitch")
_CONSTRAINTS = {
    "method": Options(METHODS),
    "mapping": Options(("rule", "labels")),
    "features": Options(tuple(FEATURE_SETS)),
    "min_quality": Interval(0, 1),
}
_CSV_COLUMNS = ("t_start", "t_end", "cluster", "label", "confidence")


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
        In [0, 1] (see the module notes); NaN for windows left out.
    method : str
        Clustering method used.
    mapping : str
        How clusters were mapped to labels, "rule" or "labels".
    """

    t_start: np.ndarray
    t_end: np.ndarray
    cluster: np.ndarray
    label: np.ndarray
    confidence: np.ndarray
    method: str
    mapping: str

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
        """Write ``t_start,t_end,cluster,label,confidence``, one row per window."""
        with open(path, "w", newline="") as file:
            writer = csv.writer(file)
            writer.writerow(_CSV_COLUMNS)
            for row in zip(self.t_start, self.t_end, self.cluster, self.label, self.confidence):
                start, end, cluster, label, confidence = row
                writer.writerow([repr(float(start)), repr(float(end)), int(cluster), int(label),
                                 "" if math.isnan(confidence) else f"{confidence:.4f}"])


def make_clusterer(method, n_clusters=2, random_state=None, **params):
    """The estimator of ``method`` with the labelling defaults, overridden by ``params``.

    Defaults (S0 §5.5.2): embedding dimension 1, 500 hidden neurons, 5-NN binary graph for
    US-ELM/ELM-JEC, trade-offs 1 (the centre of the source's 2**-4 .. 2**4 grid), ELM-CLR with
    δ = 1 and k = 11 (from the source's {1, 6, ..., 31}).
    """
    check_params({"method": method}, _CONSTRAINTS, owner="make_clusterer")
    return _CLASSES[method](n_clusters=n_clusters, random_state=random_state,
                            **{**_DEFAULT_PARAMS[method], **params})


def label_windows(windows, feature_names, method="elm-jec", *, mapping="rule", min_quality=0.5,
                  features="all", params=None, random_state=None):
    """Cluster the windows of a drive into two groups and map them to preliminary labels.

    Parameters
    ----------
    windows : Windows
        Feature windows of one drive (:func:`distractd.pipeline.extract_features`).
    feature_names : sequence of str
        Names of the columns of ``windows.X``.
    method : {"kmeans", "uselm", "elm-jec", "elm-clr"}, default="elm-jec"
    mapping : {"rule", "labels"}, default="rule"
        How clusters become labels (see the module notes).
    min_quality : float, default=0.5
        Windows with a smaller valid-sample fraction are left out.
    features : {"all", "no-head-position", "no-location"}, default="all"
        Feature set clustered on (:data:`FEATURE_SETS`); the rule mapping always reads the gaze
        dispersion.
    params : dict or None, default=None
        Estimator parameters overriding :func:`make_clusterer`'s defaults.
    random_state : int or None, default=None

    Returns
    -------
    WindowLabels
    """
    check_params({"method": method, "mapping": mapping, "min_quality": min_quality,
                  "features": features}, _CONSTRAINTS, owner="label_windows")
    feature_names = list(feature_names)
    if len(feature_names) != windows.X.shape[1]:
        raise SchemaError(f"feature_names has {len(feature_names)} names for "
                          f"{windows.X.shape[1]} feature columns")
    used = np.asarray(windows.quality) >= min_quality
    if used.sum() < 20:
        raise ConfigError(f"label_windows needs at least 20 windows of quality >= {min_quality}, "
                          f"got {int(used.sum())}")
    Z, names = _standardize(windows.X[used], feature_names)
    clustered = _feature_columns(names, features)
    estimator = make_clusterer(method, random_state=random_state, **(params or {}))
    clusters = estimator.fit_predict(Z[:, clustered])
    space = getattr(estimator, "embedding_", Z[:, clustered])
    confidence = _confidence(space, clusters)
    if mapping == "labels":
        distracted = _cluster_from_labels(clusters, np.asarray(windows.label)[used])
    else:
        distracted = _cluster_from_rule(Z, names, clusters)
    n = len(windows)
    cluster_all = np.full(n, -1)
    cluster_all[used] = clusters
    label_all = np.full(n, -1, dtype=np.int8)
    label_all[used] = (clusters == distracted).astype(np.int8)
    confidence_all = np.full(n, np.nan)
    confidence_all[used] = confidence
    return WindowLabels(np.asarray(windows.t_start, dtype=np.float64),
                        np.asarray(windows.t_end, dtype=np.float64), cluster_all, label_all,
                        confidence_all, method, mapping)


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
    """Indices of ``names`` in the feature set ``features`` (a key of :data:`FEATURE_SETS`)."""
    left_out = FEATURE_SETS[features]
    return [i for i, name in enumerate(names) if name not in left_out]


def _confidence(space, clusters):
    """``d_other / (d_own + d_other)`` to the two cluster means of ``space``."""
    centres = np.stack([space[clusters == k].mean(axis=0) for k in (0, 1)])
    distances = np.sqrt(((space[:, None, :] - centres[None]) ** 2).sum(axis=2))
    own = distances[np.arange(len(clusters)), clusters]
    other = distances[np.arange(len(clusters)), 1 - clusters]
    total = own + other
    return np.where(total > 0, other / np.where(total > 0, total, 1.0), 0.5)


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
