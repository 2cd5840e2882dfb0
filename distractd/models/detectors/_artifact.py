"""The model artifact: one versioned ``.npz`` file that holds everything prediction needs (DESIGN §5).

Layout: a zip archive written by :func:`numpy.savez` with

- ``header`` — UTF-8 JSON as a uint8 array: format name and version, model kind and
  hyper-parameters, feature names, pipeline configuration, JSON part of each extra, training
  summary, seed, the name/dtype/shape of every array, and ``model_id``;
- ``model/<name>`` — the estimator's arrays (:meth:`_to_arrays`);
- ``normalizer/mean``, ``normalizer/scale`` — the z-score applied to raw features;
- ``extras/<key>/<name>`` — the arrays of each extra (e.g. segmentation prototypes; a cohort
  model's sub-models for trackers that give less, :data:`SUBMODELS`, each an estimator on a
  subset of the features, :func:`fallback_extra`).

Sub-models: the model itself needs every field its features are computed from; ``gaze_only``
needs gaze and confidence at a rate that resolves saccades and blinks (a 30-250 Hz gaze tracker,
Pupil Core); ``sparse_gaze`` needs only gaze and confidence, at any rate (a 1 Hz tracker);
``eyes_vehicle``, ``sparse_gaze_vehicle`` need the same and the car's signals, ``vehicle`` the
car's signals alone (:data:`SUBMODELS` gives the order they are tried in). Per
stream, :meth:`Detector.choose` takes the most complete one whose features the stream can give,
judged by the fields it carries (:func:`~distractd.pipeline.feature_fields`) and its measured
rate (:func:`~distractd.pipeline.feature_min_rate_hz`); the choice is published as the state's
model id (``<model_id>/<sub-model>``).

``checksum`` is a SHA-256 over the header (all but ``checksum`` and ``model_id``) and every
array's name and bytes; ``model_id``, the model's name, is its first 16 hex digits, so the id
identifies the content: any change of a weight, a setting or the summary gives another id (and the
same training on another CPU may too: BLAS kernels change fitted arrays in their last bits). Load
recomputes both and refuses a file whose content does not match them (corrupt, edited, or saved
before the id hashed the weights). Neither is an authenticity check: anyone can recompute them, so
a model file is trusted like code (its permissions decide who may write it; docs/detectors.md).

Load validates as strictly as save: every array finite and of bounded magnitude
(:data:`MAX_VALUE`, scales at least :data:`MIN_SCALE`), of 64-bit floats but for the
:data:`INTEGER_ARRAYS` (a weight cast to int8 is all zeros), every normaliser scale positive, the
shapes of each part consistent (the estimator's arrays, ``ARRAY_SHAPES`` of its kind, with the
feature names, the normaliser and the hyper-parameters), the hyper-parameters those of the kind
and within its constraints, the score scale and offset within the same bounds, and the pipeline
settings a valid :class:`~distractd.pipeline.PipelineConfig`; the same for each sub-model. It is
loaded with ``allow_pickle=False``; nothing is ever unpickled.
"""

import copy
import hashlib
import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np

from ..._errors import ConfigError, ModelError, unreadable
from ..._validation import check_params
from ...pipeline import PipelineConfig, feature_fields, feature_min_rate_hz
from ...pipeline.formats import FIELDS
from ._scorers import CONSTRAINTS, PARAMETERS, SCORERS, scorer

__all__ = ["Detector", "save_model", "load_model", "fallback_extra", "SUBMODELS", "Choice",
           "DEFAULT_MODEL_PATH"]

FORMAT = "distractd-model"
VERSION = 1

DEFAULT_MODEL_PATH = Path(__file__).resolve().parents[2] / "data" / "default_model.npz"
"""The model shipped in the package (``make default-model``): the daemon's and ``predict``'s
default."""

MAX_VALUE = 1e9
"""Largest magnitude of any number in a model (arrays, score scale and offset). The shipped
models' largest is about 18 (cohort anchor rows); a forged 1e308 overflows the scores to inf or
NaN, so every window was unknown, counted under the wrong reason."""
MIN_SCALE = 1e-9
"""Smallest normaliser or score scale: a scale of 5e-324 divides every feature or score to inf."""
INTEGER_ARRAYS = ("classes", "y", "starts", "clusters", "cluster_labels")
"""Arrays (by the last part of their names) that hold integers; every other is float64."""
SUBMODELS = ("eyes_vehicle", "gaze_only", "sparse_gaze_vehicle", "sparse_gaze", "vehicle")
"""The ``extras`` keys of sub-models, from the most complete to the least: after the model itself,
:meth:`Detector.choose` tries them in this order: the gaze-only features at their rates with the
car's (``VEHICLE_FEATURES``), the gaze-only features, the gaze features any rate gives with the
car's, those alone, the car's alone (a stream of the car without eyes)."""

_GAZE = np.array([name.startswith("gaze_") for name in FIELDS])

_EXTRA_SHAPES = {"segmenter": {"X": ("n_frames", "n_features")},
                 "anchors": {"X": ("n_anchors", "n_features"), "y": ("n_anchors",)}}
"""The shapes of the extras' arrays in the model's own feature space, checked at load when they
are there: the segmentation prototypes' frames (z-scored features) and the cohort's anchor rows
(:func:`train_cohort`) and their labels."""


class Choice:
    """Which sub-model scores a stream, or why none can.

    Attributes
    ----------
    detector : Detector or None
        The sub-model (the model itself, or one of :attr:`Detector.fallbacks`); None when the
        stream can give no sub-model's features.
    reason : str or None
        Why no sub-model can (one phrase, e.g. ``"no gaze delivered"``); None when one can.
    code : str or None
        The reason's bounded code: ``"no_gaze"``, ``"fields"`` or ``"rate"``.
    """

    def __init__(self, detector, reason=None, code=None):
        self.detector = detector
        self.reason = reason
        self.code = code


class Detector:
    """A loaded model: the stored z-score followed by the estimator.

    Attributes
    ----------
    kind : str
        Estimator class name.
    model_id : str
        Content hash of the artifact: the first 16 hex digits of its checksum.
    feature_names : list of str
    pipeline_config : dict
        Window and feature settings the model was trained with.
    extras : dict of str to (dict, dict of str to ndarray)
    summary : dict
        Training summary and scores.
    seed : int or None
    scorer : ELMScorer or KernelScorer or estimator
        What scores normalised features (its ``_decision``): the saved model's light form
        (:mod:`._scorers`, numpy and numba only), or an adapted refit's estimator.
    estimator : estimator
        The fitted scikit-learn estimator, working on normalised features: rebuilt from the saved
        arrays at first use (refits and offline tools need it; scoring does not). Setting it
        (an adapted refit) makes it the :attr:`scorer` too.
    score_scale : float
        Published scores (:meth:`window_scores`) are decision values over this (the
        training score spread over the labelled rows, ``summary["score_scale"]``).
    score_offset : float
        Subtracted from decision values before the scaling (``summary["score_offset"]``, 0 by
        default): a model trained with an operating point puts the decision rule's threshold
        where its training windows had the best G-mean (:func:`train_cohort`).
    fallback : Detector or None
        The model's gaze-only fallback (``extras["gaze_only"]``), which scores the windows whose
        features this model lacks but whose gaze features are there (a gaze-only tracker).
    fallbacks : list of Detector
        Every sub-model of :data:`SUBMODELS` the artifact holds, in that order; each has
        ``name`` (its key) and ``model_id`` ``<model_id>/<key>``.
    name : str
        ``"main"`` for the model itself, the key of a sub-model.
    """

    def __init__(self, scorer, saved, mean, scale, header, extras):
        self.scorer = scorer
        self._saved = saved  # (params, arrays) the estimator is rebuilt from
        self._estimator = None
        self.kind = header["kind"]
        self.model_id = header["model_id"]
        self.feature_names = list(header["feature_names"])
        self.pipeline_config = header["pipeline_config"]
        self.summary = header["summary"]
        self.seed = header["seed"]
        self.score_scale = float(self.summary.get("score_scale", 1.0))
        self.score_offset = float(self.summary.get("score_offset", 0.0))
        self.extras = extras
        self._mean = mean
        self._scale = scale
        self._columns = {}
        self.name = header.get("name", "main")
        self.fallbacks = [_fallback_detector(header, key, *extras[key]) for key in SUBMODELS
                          if key in extras]
        self.fallback = next((d for d in self.fallbacks if d.name == "gaze_only"), None)

    def decision_function(self, X_raw):
        """Scores of raw feature rows; positive means distracted.

        Parameters
        ----------
        X_raw : ndarray of shape (n_windows, n_features)
            Un-normalised features in :attr:`feature_names` order (float64).

        Returns
        -------
        scores : ndarray of shape (n_windows,)
        """
        return self.scorer._decision(self.normalize(X_raw))

    @property
    def estimator(self):
        if self._estimator is None:
            self._estimator = _estimator_class(self.kind)._from_arrays(*self._saved)
        return self._estimator

    @estimator.setter
    def estimator(self, estimator):
        self._estimator = self.scorer = estimator

    def normalize(self, X_raw):
        """Apply the stored z-score to raw feature rows, shape (n_windows, n_features)."""
        X_raw = np.asarray(X_raw, dtype=np.float64)
        if X_raw.ndim != 2 or X_raw.shape[1] != len(self._mean):
            raise ModelError(f"model {self.model_id}: X_raw must have shape (n, "
                             f"{len(self._mean)}), got {X_raw.shape}")
        Z = np.subtract(X_raw, self._mean)
        Z /= self._scale
        return Z

    def predict(self, X_raw):
        """1 (distracted) where the score is positive, else 0 (attentive), as int8."""
        return (self.decision_function(X_raw) > 0).astype(np.int8)

    def feature_columns(self, feature_names):
        """Where the model's features are among ``feature_names`` (a window's columns).

        Raises
        ------
        ModelError
            When the windows lack a feature the model was trained on.
        """
        names = list(feature_names)
        missing = [n for n in self.feature_names if n not in names]
        if missing:
            raise ModelError(f"model {self.model_id} needs feature(s) {missing} that the "
                             f"windows do not have")
        return np.array([names.index(n) for n in self.feature_names], dtype=np.intp)

    @property
    def submodels(self):
        """The model itself, then its :attr:`fallbacks`: the most complete first."""
        return [self, *self.fallbacks]

    def choose(self, fields_seen, rate_hz):
        """The most complete sub-model whose features a stream can give.

        Parameters
        ----------
        fields_seen : ndarray of bool, shape (len(FIELDS),)
            The canonical fields the stream has carried (finite anywhere).
        rate_hz : float
            The stream's measured sample rate in Hz (NaN: not known yet, taken as enough).

        Returns
        -------
        Choice
        """
        config = PipelineConfig.from_dict(self.pipeline_config)
        fields_seen = np.asarray(fields_seen, dtype=bool)
        for detector in self.submodels:
            names = detector.feature_names
            needs = feature_fields(names, config.use_tracker_flags)
            lacking = [n for n, fields in zip(names, needs) if len(fields)
                       and not fields_seen[fields].any()]
            slow = [n for n, rate in zip(names, feature_min_rate_hz(names, config))
                    if rate_hz < rate]
            if not lacking and not slow:
                return Choice(detector)
        if not fields_seen[_GAZE].any():
            return Choice(None, "no gaze delivered", "no_gaze")
        if lacking:
            fields = sorted({FIELDS[i] for n, f in zip(names, needs) if n in lacking for i in f})
            return Choice(None, f"features {', '.join(lacking)} need one of the fields "
                                f"{', '.join(fields)}, which the stream does not carry", "fields")
        least = float(feature_min_rate_hz(slow, config).min())
        return Choice(None, f"features {', '.join(slow)} need a rate >= {least:g} Hz, the "
                            f"stream runs at {rate_hz:.3g} Hz", "rate")

    def window_scores(self, X_windows, feature_names, submodel=None):
        """Published scores of full window feature rows (columns named by ``feature_names``):
        decision values less :attr:`score_offset` over :attr:`score_scale`, so one decision
        threshold means the same for every model kind. With ``submodel`` (a :attr:`submodels`
        entry, :meth:`choose`), it alone scores the rows that have all of its features. Without,
        a row missing a feature of this model's is scored by the first of the :attr:`fallbacks`
        it has every feature of. NaN otherwise."""
        X = np.asarray(X_windows, dtype=np.float64)
        scores = np.full(len(X), np.nan)
        names = tuple(feature_names)
        for detector in self.submodels if submodel is None else [submodel]:
            if names not in detector._columns:   # the daemon asks once per batch: look up once
                detector._columns[names] = detector.feature_columns(names)
            Z = X[:, detector._columns[names]]
            todo = np.isnan(scores) & np.isfinite(Z).all(axis=1)
            if todo.any():
                scores[todo] = ((detector.decision_function(Z[todo]) - detector.score_offset)
                                / detector.score_scale)
        return scores

    def arrays_beside(self, base):
        """This model's estimator as ``(params, arrays)``, leaving out the arrays equal to
        ``base``'s saved ones: what an adaptation of ``base`` changed (an adapted SS-ELM: its
        output weights), as a driver profile keeps it."""
        params, arrays = self._estimator._to_arrays() if self._estimator is not None \
            else self._saved
        theirs = base._saved[1]
        return params, {name: np.asarray(value) for name, value in arrays.items()
                        if name not in theirs or not np.array_equal(value, theirs[name])}

    def with_arrays(self, params, arrays, score_scale, score_offset):
        """A copy of this model scoring with other estimator ``arrays`` (this model's where left
        out) and operating point: :meth:`arrays_beside` read back, with numpy only.

        Raises
        ------
        ValueError
            When ``params`` name other hyper-parameters, or an array is not one of the kind's,
            has another shape than this model's layout allows, or holds a non-finite value.
        """
        own_params, own_arrays = self._saved
        if not isinstance(params, dict) or set(params) != set(own_params):
            raise ValueError(f"params must name {sorted(own_params)}")
        layout = SCORERS[self.kind].ARRAY_SHAPES
        merged = {**own_arrays, **arrays}
        sizes = {}
        for name, value in merged.items():
            if name not in layout:
                raise ValueError(f"{name} is not an array of a {self.kind}")
            value = merged[name] = np.asarray(value)
            dims = layout[name]
            if value.ndim != len(dims) or not np.isfinite(value).all():
                raise ValueError(f"{name} must be {len(dims)}-D and finite")
            for got, dim, mine in zip(value.shape, dims, own_arrays[name].shape):
                free = dim == "n_points"   # a kernel expansion's points are the fit's own
                if (not free and got != mine) or sizes.setdefault(dim, got) != got:
                    raise ValueError(f"{name} must have shape {own_arrays[name].shape} "
                                     f"({', '.join(map(str, dims))}), got {value.shape}")
        other = copy.copy(self)
        other._saved = (params, merged)
        other._estimator = None
        other.scorer = scorer(self.kind, params, merged)
        if hasattr(self.scorer, "negated_layer") and not {"hidden_weights", "hidden_bias"} & \
                set(arrays):   # one hidden layer in memory (and cache) for all the adapted ones
            other.scorer.negated_layer = self.scorer.negated_layer
        other.score_scale, other.score_offset = float(score_scale), float(score_offset)
        return other


def _estimator_class(kind):
    """The estimator class of a saved ``kind``."""
    # imported at first use: the estimators load scikit-learn and scipy, which loading and
    # scoring a model never need (DESIGN §1)
    from ._elm import ELMClassifier
    from ._lapsvm import LapSVMClassifier
    from ._sselm import SSELMClassifier
    from ._svm import SVMClassifier
    from ._tsvm import TSVMClassifier
    kinds = (ELMClassifier, SSELMClassifier, LapSVMClassifier, TSVMClassifier, SVMClassifier)
    return {cls.__name__: cls for cls in kinds}[kind]


def fallback_extra(estimator, *, normalizer_mean, normalizer_scale, feature_names, summary):
    """An ``extras[key]`` entry (``key`` of :data:`SUBMODELS`) of :func:`save_model` for a
    sub-model estimator fitted on normalised features (see :attr:`Detector.fallbacks`)."""
    params, arrays = estimator._to_arrays()
    json_part = {"kind": type(estimator).__name__, "params": params,
                 "feature_names": [str(name) for name in feature_names], "summary": summary}
    arrays = {f"model/{name}": value for name, value in arrays.items()}
    arrays["mean"] = np.asarray(normalizer_mean, dtype=np.float64)
    arrays["scale"] = np.asarray(normalizer_scale, dtype=np.float64)
    return json_part, arrays


def _fallback_detector(header, key, json_part, arrays):
    """The sub-model :class:`Detector` of an artifact's ``extras[key]``."""
    try:
        kind = json_part["kind"]
        model_arrays = {name[len("model/"):]: value for name, value in arrays.items()
                        if name.startswith("model/")}
        scores = scorer(kind, json_part["params"], model_arrays)
        inner = {"kind": kind, "model_id": f"{header['model_id']}/{key}", "name": key,
                 "feature_names": json_part["feature_names"],
                 "pipeline_config": header["pipeline_config"], "summary": json_part["summary"],
                 "seed": header["seed"]}
        return Detector(scores, (json_part["params"], model_arrays), arrays["mean"],
                        arrays["scale"], inner, {})
    except (KeyError, TypeError, ValueError) as error:
        raise ModelError(f"model {header.get('model_id')}: its {key} sub-model cannot be "
                         f"rebuilt: {type(error).__name__}: {error}") from error


def _checksum(header, arrays):
    """SHA-256 (hex) over the header (without ``model_id`` and ``checksum``) and every array's name
    and bytes: any change of content, or corruption, changes it. Its first 16 hex digits are the
    model id (:func:`_seal`)."""
    stable = {key: value for key, value in header.items() if key not in ("model_id", "checksum")}
    digest = hashlib.sha256(json.dumps(stable, sort_keys=True).encode())
    for name in sorted(arrays):
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(arrays[name]).tobytes())
    return digest.hexdigest()


def _seal(header, arrays):
    """Set the header's ``checksum`` and ``model_id`` (its first 16 hex digits) for ``arrays``."""
    header["checksum"] = _checksum(header, arrays)
    header["model_id"] = header["checksum"][:16]


def _plain_array(name, value):
    array = np.asarray(value)
    if array.dtype.hasobject:
        raise ModelError(f"artifact array {name} must have a plain dtype, got {array.dtype}")
    return array


def save_model(path, estimator, *, normalizer_mean, normalizer_scale, feature_names,
               pipeline_config, extras=None, summary=None, seed=None):
    """Write a fitted binary detector and everything prediction needs to one file.

    Parameters
    ----------
    path : str or Path
        Destination; written atomically (temporary file, then rename).
    estimator : ELMClassifier, SSELMClassifier, LapSVMClassifier, TSVMClassifier or SVMClassifier
        Fitted on normalised features with classes 0 (attentive) and 1 (distracted).
    normalizer_mean, normalizer_scale : array-like of shape (n_features,)
        z-score parameters (feature units); ``scale`` must be positive.
    feature_names : sequence of str
    pipeline_config : dict
        JSON-serialisable window/feature settings.
    extras : dict of str to (dict, dict of str to ndarray), optional
        Further named parts, e.g. ``{"segmenter": (params, {"prototypes": array})}``.
    summary : dict, optional
        JSON-serialisable training summary and scores.
    seed : int or None
        Seed the model was trained with.

    Returns
    -------
    model_id : str
    """
    kind = type(estimator).__name__
    if kind not in SCORERS:
        raise ModelError(f"save_model: estimator kind must be one of {sorted(SCORERS)}, got "
                         f"{kind}")
    params, model_arrays = estimator._to_arrays()
    if [int(c) for c in estimator.classes_] != [0, 1]:
        raise ModelError(f"save_model: estimator classes_ must be [0, 1], got "
                         f"{estimator.classes_.tolist()}")
    mean = np.asarray(normalizer_mean, dtype=np.float64)
    scale = np.asarray(normalizer_scale, dtype=np.float64)
    feature_names = [str(name) for name in feature_names]
    n_features = estimator.n_features_in_
    for name, value in (("normalizer_mean", mean), ("normalizer_scale", scale)):
        if value.shape != (n_features,) or not np.all(np.isfinite(value)):
            raise ModelError(f"save_model.{name} must be {n_features} finite values, got shape "
                             f"{value.shape}")
    if np.any(scale <= 0):
        raise ModelError(f"save_model.normalizer_scale must be positive, got {scale.min()}")
    if len(feature_names) != n_features:
        raise ModelError(f"save_model.feature_names must hold {n_features} names, got "
                         f"{len(feature_names)}")
    arrays = {f"model/{k}": _plain_array(k, v) for k, v in model_arrays.items()}
    arrays["normalizer/mean"] = mean
    arrays["normalizer/scale"] = scale
    extra_json = {}
    for key, (json_part, array_part) in (extras or {}).items():
        extra_json[key] = {"json": json_part, "arrays": sorted(array_part)}
        for name, value in array_part.items():
            arrays[f"extras/{key}/{name}"] = _plain_array(f"extras/{key}/{name}", value)
    header = {
        "format": FORMAT, "version": VERSION, "kind": kind, "params": params,
        "feature_names": feature_names, "pipeline_config": pipeline_config,
        "extras": extra_json, "summary": summary or {}, "seed": seed,
        "arrays": {name: [a.dtype.str, list(a.shape)] for name, a in arrays.items()},
    }
    try:
        _seal(header, arrays)
        header_bytes = json.dumps(header, sort_keys=True).encode()
    except TypeError as error:
        raise ModelError(f"save_model: header must be JSON-serialisable: {error}") from error
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as handle:
        np.savez(handle, header=np.frombuffer(header_bytes, dtype=np.uint8), **arrays)
    os.replace(tmp, path)
    return header["model_id"]


def _check_values(path, contents):
    """Refuse at load what would fail or silently mislead later: a non-finite number in any
    array (a NaN weight sends every window to the fallback) or a scale that is not positive (an
    all-zero normaliser scale divides by zero minutes into a stream). The checksum cannot catch
    either: anyone can recompute it."""
    for name, value in contents.items():
        if value.dtype.kind in "fc" and not np.isfinite(value).all():
            raise ModelError(f"model file {path}: array {name} holds non-finite values")
        integer = name.rsplit("/", 1)[-1] in INTEGER_ARRAYS
        if integer and value.dtype.kind not in "iu" or not integer and value.dtype != np.float64:
            raise ModelError(f"model file {path}: array {name} must hold "
                             f"{'integers' if integer else '64-bit floats'}, got {value.dtype}")
        if name.endswith("scale") and value.size and not (value >= MIN_SCALE).all():
            raise ModelError(f"model file {path}: array {name} must be at least {MIN_SCALE:g}, "
                             f"got {float(value.min())!r}")
        if value.size and not (np.abs(value) <= MAX_VALUE).all():
            raise ModelError(f"model file {path}: array {name} must lie within +-{MAX_VALUE:g}, "
                             f"got {float(value.flat[np.argmax(np.abs(value))])!r}")


def _check_part(path, part, arrays, prefix, normalizer):
    """Refuse a model part whose pieces disagree: the model itself (``prefix`` "") or a sub-model
    of :data:`SUBMODELS` (``prefix`` ``extras/<key>/``). ``part`` holds its ``kind``, ``params``,
    ``feature_names`` and ``summary``; ``arrays`` the artifact's arrays; ``normalizer`` the names
    of its mean and scale. Checked: the kind, the feature names, the hyper-parameters against the
    kind's constraints and names (:mod:`._scorers`), the published score's scale (finite,
    positive) and offset (finite), the shape of every array (its kind's ``ARRAY_SHAPES``: a size
    named there is the same wherever it appears, ``n_features`` the number of feature names, and
    a hyper-parameter of the same name, like the ELM's ``n_hidden``, fixes it too) and the
    classes, 0 and 1."""
    where = f"model file {path}: {prefix}"
    kind = part.get("kind")
    if kind not in SCORERS:
        raise ModelError(f"{where}kind must be one of {sorted(SCORERS)}, got {kind!r}")
    names, params, summary = part.get("feature_names"), part.get("params"), part.get("summary")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise ModelError(f"{where}feature_names must be a non-empty list of names, got "
                         f"{str(names)[:80]}")
    if not isinstance(params, dict):
        raise ModelError(f"{where}params must be a map, got {type(params).__name__}")
    if not isinstance(summary, dict):
        raise ModelError(f"{where}summary must be a map, got {type(summary).__name__}")
    check_params(params, CONSTRAINTS[kind], owner=f"{where}{kind}", error=ModelError)
    unknown = sorted(set(params) - set(PARAMETERS[kind]))
    if unknown:
        raise ModelError(f"{where}{kind} has no hyper-parameter {unknown[0]!r:.80}")
    for key, default, low in (("score_scale", 1.0, MIN_SCALE), ("score_offset", 0.0,
                                                                   -MAX_VALUE)):
        value = summary.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not low <= value <= MAX_VALUE:
            raise ModelError(f"{where}summary.{key} must be a number in [{low:g}, "
                             f"{MAX_VALUE:g}], got {value!r:.80}")
    sizes = {"n_features": len(names)}
    sizes.update((key, value) for key, value in params.items()
                 if type(value) is int and key.startswith("n_"))
    shapes = {f"{prefix}model/{name}": dims
              for name, dims in SCORERS[kind].ARRAY_SHAPES.items()}
    shapes.update(dict.fromkeys(normalizer, ("n_features",)))
    _check_shapes(path, arrays, shapes, sizes)
    classes = arrays[f"{prefix}model/classes"]
    if classes.tolist() != [0, 1]:
        raise ModelError(f"model file {path}: array {prefix}model/classes must be [0, 1], got "
                         f"{classes.tolist()}")


def _check_shapes(path, arrays, shapes, sizes):
    """Refuse an array of ``shapes`` (name to dimensions: a number, or a named size) that is
    missing, not of real numbers, or of another shape; a named size is the same wherever it
    appears (``sizes`` holds those known beforehand; the others are set by their first array)."""
    sizes = dict(sizes)
    for name, dims in shapes.items():
        if name not in arrays:
            raise ModelError(f"model file {path}: array {name} is missing")
        value = arrays[name]
        if value.dtype.kind not in "iuf":
            raise ModelError(f"model file {path}: array {name} must hold real numbers, got "
                             f"dtype {value.dtype}")
        if value.ndim == len(dims):
            for dim, size in zip(dims, value.shape):
                if isinstance(dim, str):
                    sizes.setdefault(dim, size)
        expected = tuple(sizes.get(dim) if isinstance(dim, str) else dim for dim in dims)
        if value.shape != expected:
            shown = ", ".join(f"{dim}={sizes[dim]}" if isinstance(dim, str) and dim in sizes
                              else str(dim) for dim in dims)
            raise ModelError(f"model file {path}: array {name} must have shape ({shown}), got "
                             f"{value.shape}")


def load_model(path):
    """Read an artifact written by :func:`save_model`.

    Parameters
    ----------
    path : str or Path
        The artifact, or ``"default"``: the shipped model (:data:`DEFAULT_MODEL_PATH`), the name
        every command accepts for it.

    Returns
    -------
    Detector

    Raises
    ------
    ModelError
        If the file is missing, truncated or corrupt, of another format or version, its
        content does not match its ``checksum`` and ``model_id``, it holds a value save would
        refuse (non-finite, a scale not positive, shapes that disagree, a hyper-parameter out of
        its bounds: :func:`_check_part`), or its pipeline settings are not a valid
        :class:`~distractd.pipeline.PipelineConfig` (out of bounds: a span that would stall a
        reload and fill the memory).
    """
    if str(path) == "default":
        path = DEFAULT_MODEL_PATH
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise unreadable(f"model file {path}", error, ModelError) from None
    if not data.startswith(b"PK"):  # else numpy tries a pickle and hints at allow_pickle
        raise ModelError(f"model file {path} is not a distractd model (an .npz archive)")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            contents = {name: archive[name] for name in archive.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as error:
        raise ModelError(f"model file {path} cannot be read: {error}") from error
    try:
        header = json.loads(contents.pop("header").tobytes().decode())
    except (KeyError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelError(f"model file {path}: header is missing or corrupt: {error}") from error
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ModelError(f"model file {path}: format must be {FORMAT!r}, got "
                         f"{header.get('format') if isinstance(header, dict) else header!r}")
    if header.get("version") != VERSION:
        raise ModelError(f"model file {path}: version must be {VERSION}, got "
                         f"{header.get('version')!r}")
    listed = header.get("arrays", {})
    if not isinstance(listed, dict) or sorted(listed) != sorted(contents):
        raise ModelError(f"model file {path}: arrays {sorted(contents)} do not match the "
                         f"header's {sorted(listed)}")
    for name, array in contents.items():  # the header, and so the id, covers dtypes and shapes
        if listed[name] != [array.dtype.str, list(array.shape)]:
            raise ModelError(f"model file {path}: array {name} is {array.dtype.str} "
                             f"{list(array.shape)}, the header says {listed[name]}")
    checksum = _checksum(header, contents)
    if checksum != header.get("checksum"):
        raise ModelError(f"model file {path}: content does not match its checksum (corrupt or "
                         f"edited)")
    if header.get("model_id") != checksum[:16]:
        raise ModelError(f"model file {path}: model_id {header.get('model_id')!r:.40} is not its "
                         f"content's {checksum[:16]} (saved before model ids hashed the weights, "
                         f"or edited): train the model again")
    _check_values(path, contents)
    _check_part(path, header, contents, "", ("normalizer/mean", "normalizer/scale"))
    extras = header.get("extras")
    for key in SUBMODELS:
        part = extras.get(key) if isinstance(extras, dict) else None
        if isinstance(part, dict) and isinstance(part.get("json"), dict):
            prefix = f"extras/{key}/"
            _check_part(path, part["json"], contents, prefix, (f"{prefix}mean", f"{prefix}scale"))
    for key, shapes in _EXTRA_SHAPES.items():  # those there (their owners check the rest)
        _check_shapes(path, contents, {f"extras/{key}/{name}": dims
                                       for name, dims in shapes.items()
                                       if f"extras/{key}/{name}" in contents},
                      {"n_features": len(header["feature_names"])})
    try:
        PipelineConfig.from_dict(header.get("pipeline_config"))
    except (ConfigError, TypeError) as error:
        raise ModelError(f"model file {path}: {error}") from None
    model_arrays = {name[len("model/"):]: value for name, value in contents.items()
                    if name.startswith("model/")}
    try:
        scores = scorer(header["kind"], header["params"], model_arrays)
    except (KeyError, TypeError, ValueError) as error:
        raise ModelError(f"model file {path}: {header['kind']} cannot be rebuilt: {error}") \
            from error
    try:
        extras = {key: (part["json"], {name: contents[f"extras/{key}/{name}"]
                                       for name in part["arrays"]})
                  for key, part in header["extras"].items()}
    except (KeyError, TypeError, AttributeError) as error:
        raise ModelError(f"model file {path}: extras are missing or malformed: "
                         f"{type(error).__name__}: {error}") from error
    return Detector(scores, (header["params"], model_arrays), contents["normalizer/mean"],
                    contents["normalizer/scale"], header, extras)
