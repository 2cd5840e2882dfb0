"""Model artifact: round trip, corrupt/truncated/mismatched files, feature-name check."""

import json
import re
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from distractd._errors import ModelError
from distractd.models import (
    ELMClassifier, LapSVMClassifier, SSELMClassifier, SVMClassifier, TSVMClassifier, load_model,
    save_model,
)
from distractd.models.detectors import (  # _artifact: to forge a file with a valid checksum
    DEFAULT_MODEL_PATH, LOSS_FEATURE, _artifact, fallback_extra,
)
from distractd.pipeline import FEATURE_NAMES, PipelineConfig
from distractd.pipeline.formats import FIELDS

NAMES = ["f0", "f1", "f2"]


def _data():
    rng = np.random.default_rng(0)
    X_raw = rng.normal(loc=5.0, scale=3.0, size=(80, 3))
    y = (X_raw[:, 0] > 5.0).astype(int)
    y[::2] = -1
    return X_raw, y


def _save(tmp_path, estimator, **overrides):
    X_raw, y = _data()
    mean, scale = X_raw.mean(axis=0), X_raw.std(axis=0)
    estimator.fit((X_raw - mean) / scale, y)
    kwargs = dict(normalizer_mean=mean, normalizer_scale=scale, feature_names=NAMES,
                  pipeline_config={"window_s": 10.0, "hop_s": 0.5},
                  extras={"segmenter": ({"k": 2}, {"prototypes": np.eye(2)})},
                  summary={"g_mean": 0.9}, seed=7)
    kwargs.update(overrides)
    path = tmp_path / "model.npz"
    model_id = save_model(path, estimator, **kwargs)
    return path, model_id, X_raw, mean, scale


@pytest.mark.parametrize("estimator", [
    ELMClassifier(n_hidden=30, random_state=0),
    SSELMClassifier(n_hidden=30, lam=0.1, random_state=0),
    LapSVMClassifier(gamma_A=1e-2, gamma_I=1e-2),
    LapSVMClassifier(gamma_A=1e-2, gamma_I=1e-2, solver="pcg"),
    TSVMClassifier(C=1.0, max_swaps=5),
    SVMClassifier(C=10.0),
])
def test_round_trip_predictions_equal(tmp_path, estimator):
    path, model_id, X_raw, mean, scale = _save(tmp_path, estimator)
    detector = load_model(path)
    expected = estimator.decision_function((X_raw - mean) / scale)
    np.testing.assert_array_equal(detector.decision_function(X_raw), expected)
    np.testing.assert_array_equal(detector.predict(X_raw), (expected > 0).astype(np.int8))
    assert detector.model_id == model_id and len(model_id) == 16
    assert detector.kind == type(estimator).__name__
    assert detector.feature_names == NAMES
    assert detector.pipeline_config == {"window_s": 10.0, "hop_s": 0.5}
    assert detector.summary == {"g_mean": 0.9} and detector.seed == 7
    params, arrays = detector.extras["segmenter"]
    assert params == {"k": 2}
    np.testing.assert_array_equal(arrays["prototypes"], np.eye(2))
    assert detector.estimator.get_params() == estimator.get_params()


def test_model_id_changes_with_content(tmp_path):
    _, first, *_ = _save(tmp_path, ELMClassifier(n_hidden=10, random_state=0))
    _, second, *_ = _save(tmp_path, ELMClassifier(n_hidden=10, random_state=1))
    _, again, *_ = _save(tmp_path, ELMClassifier(n_hidden=10, random_state=0))
    assert first != second and first == again


def test_model_id_identifies_the_weights(tmp_path):
    """Issue 23, item 5: the id is the content's hash (the checksum's first 16 hex digits), so
    the last bit of one weight changes it; it used to hash the header alone."""
    estimator = ELMClassifier(n_hidden=10, random_state=0)
    path, first, _, mean, scale = _save(tmp_path, estimator)
    header = json.loads(np.load(path)["header"].tobytes())
    assert first == header["model_id"] == header["checksum"][:16]
    estimator.beta_[3, 0] = np.nextafter(estimator.beta_[3, 0], np.inf)
    again = save_model(path, estimator, normalizer_mean=mean, normalizer_scale=scale,
                       feature_names=NAMES, pipeline_config={"window_s": 10.0, "hop_s": 0.5},
                       extras={"segmenter": ({"k": 2}, {"prototypes": np.eye(2)})},
                       summary={"g_mean": 0.9}, seed=7)
    assert again != first and load_model(path).model_id == again


def test_a_model_whose_id_is_not_its_content_is_refused(tmp_path):
    """A file whose checksum matches but whose model_id does not (saved before ids hashed the
    weights, or edited) is refused in one line: the id a daemon reports is always the content's."""
    path = _forged(tmp_path / "stale.npz", edit=lambda header, _: None, model_id="0123456789abcdef")
    actual = _artifact._checksum(json.loads(np.load(path)["header"].tobytes()),
                                 {n: a for n, a in np.load(path).items() if n != "header"})[:16]
    message = (f"model_id '0123456789abcdef' is not its content's {actual} (saved before model "
               f"ids hashed the weights, or edited): train the model again")
    with pytest.raises(ModelError, match=re.escape(f"model file {path}: {message}")):
        load_model(path)
    _assert_check_refuses(path, message)


def test_truncated_file(tmp_path):
    path, *_ = _save(tmp_path, ELMClassifier(n_hidden=10, random_state=0))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelError, match="cannot be read"):
        load_model(path)


def test_missing_file(tmp_path):
    with pytest.raises(ModelError, match="cannot be read"):
        load_model(tmp_path / "absent.npz")


def _rewrite(path, edit_header=None, edit_arrays=None):
    with np.load(path, allow_pickle=False) as archive:
        contents = {name: archive[name] for name in archive.files}
    if edit_header is not None:
        header = json.loads(contents["header"].tobytes())
        edit_header(header)
        contents["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    if edit_arrays is not None:
        edit_arrays(contents)
    with open(path, "wb") as handle:
        np.savez(handle, **contents)


def test_corrupt_header(tmp_path):
    path, *_ = _save(tmp_path, ELMClassifier(n_hidden=10, random_state=0))
    _rewrite(path, edit_arrays=lambda c: c.update(header=np.frombuffer(b"{not json", np.uint8)))
    with pytest.raises(ModelError, match="header is missing or corrupt"):
        load_model(path)


def test_wrong_version_and_format(tmp_path):
    path, *_ = _save(tmp_path, ELMClassifier(n_hidden=10, random_state=0))
    _rewrite(path, edit_header=lambda h: h.update(version=99))
    with pytest.raises(ModelError, match="version must be 1, got 99"):
        load_model(path)
    _rewrite(path, edit_header=lambda h: h.update(format="other"))
    with pytest.raises(ModelError, match="format must be 'distractd-model'"):
        load_model(path)


def test_edited_array_fails_the_content_check(tmp_path):
    path, *_ = _save(tmp_path, ELMClassifier(n_hidden=10, random_state=0))
    _rewrite(path, edit_arrays=lambda c: c["model/beta"].__setitem__((0, 0), 1.0))
    with pytest.raises(ModelError, match="does not match its checksum"):
        load_model(path)


def test_not_a_zip(tmp_path):
    path = tmp_path / "model.npz"
    path.write_bytes(b"garbage" * 10)
    with pytest.raises(ModelError):
        load_model(path)
    assert not zipfile.is_zipfile(path)


def test_feature_name_and_shape_checks(tmp_path):
    path, *_ = _save(tmp_path, ELMClassifier(n_hidden=10, random_state=0))
    detector = load_model(path)
    assert detector.feature_columns(NAMES).tolist() == [0, 1, 2]
    assert detector.feature_columns(["x", "f2", "f1", "f0"]).tolist() == [3, 2, 1]
    with pytest.raises(ModelError, match=r"needs feature\(s\) \['f2'\]"):
        detector.feature_columns(["f0", "f1", "g"])
    windows = np.array([[9.0, 0.1, 0.2, 0.3], [9.0, np.nan, 0.2, 0.3]])
    scores = detector.window_scores(windows, ["x", "f2", "f1", "f0"])
    assert scores[0] == detector.decision_function(windows[:1, [3, 2, 1]])[0]
    assert np.isnan(scores[1])  # a missing feature of the model's: no decision
    with pytest.raises(ModelError, match=r"shape \(n, 3\)"):
        detector.decision_function(np.zeros((2, 4)))


def test_gaze_only_fallback_scores_the_rows_the_model_cannot(tmp_path):
    X_raw, y = _data()
    mean, scale = X_raw[:, :1].mean(axis=0), X_raw[:, :1].std(axis=0)
    fallback = SVMClassifier(C=1.0).fit((X_raw[:, :1] - mean) / scale, y)
    extra = fallback_extra(fallback, normalizer_mean=mean, normalizer_scale=scale,
                           feature_names=["f0"], summary={"score_scale": 2.0})
    path, model_id, *_ = _save(tmp_path, ELMClassifier(n_hidden=10, random_state=0),
                               extras={"gaze_only": extra})
    detector = load_model(path)
    assert detector.fallback.feature_names == ["f0"]
    assert detector.fallback.model_id == f"{model_id}/gaze_only"
    windows = np.array([[0.1, 0.2, 7.0], [np.nan, np.nan, 7.0], [0.1, 0.2, np.nan]])
    scores = detector.window_scores(windows, ["f1", "f2", "f0"])
    assert scores[0] == detector.decision_function(windows[:1, [2, 0, 1]])[0]
    expected = fallback.decision_function((np.array([[7.0]]) - mean) / scale)[0] / 2.0
    assert scores[1] == pytest.approx(expected, rel=1e-12)   # the fallback's, in its own scale
    assert np.isnan(scores[2])                                # neither has its features
    # a broken fallback is a clear model error at load
    json_part, arrays = extra
    broken = ({**json_part, "kind": "NoSuchClassifier"}, arrays)
    path, *_ = _save(tmp_path, ELMClassifier(n_hidden=10, random_state=0),
                     extras={"gaze_only": broken})
    with pytest.raises(ModelError, match="extras/gaze_only/kind must be one of"):
        load_model(path)


@pytest.mark.parametrize("overrides, message", [
    ({"normalizer_scale": [1.0, 0.0, 1.0]}, "normalizer_scale must be positive"),
    ({"feature_names": ["a"]}, "feature_names must hold 3"),
    ({"summary": {"bad": object()}}, "JSON-serialisable"),
])
def test_save_rejects_bad_inputs(tmp_path, overrides, message):
    with pytest.raises(ModelError, match=message):
        _save(tmp_path, ELMClassifier(n_hidden=10, random_state=0), **overrides)


def test_normalize_applies_the_stored_z_score(tmp_path):
    path, _, X_raw, mean, scale = _save(tmp_path, ELMClassifier(n_hidden=10, random_state=0))
    detector = load_model(path)
    np.testing.assert_array_equal(detector.normalize(X_raw), (X_raw - mean) / scale)
    with pytest.raises(ModelError, match=r"X_raw must have shape \(n, 3\), got \(4, 2\)"):
        detector.normalize(np.zeros((4, 2)))


@pytest.mark.parametrize("estimator", [
    ELMClassifier(n_hidden=300, random_state=0),
    SSELMClassifier(n_hidden=300, lam=0.1, random_state=0),
    LapSVMClassifier(gamma_A=1e-2, gamma_I=1e-2),
    SVMClassifier(C=10.0),
])
def test_one_row_at_a_time_equals_the_batch(tmp_path, estimator):
    # the daemon scores one window per stream per step; BLAS may sum a single row (gemv) in
    # another order than a batch (gemm), so equality is to rounding: 1e-13 of the largest score
    path, _, X_raw, _, _ = _save(tmp_path, estimator)
    detector = load_model(path)
    rows = np.random.default_rng(1).normal(loc=5.0, scale=4.0, size=(200, 3))
    batch = detector.decision_function(rows)
    stream = np.concatenate([detector.decision_function(row[None, :]) for row in rows])
    np.testing.assert_allclose(stream, batch, rtol=0, atol=1e-13 * np.abs(batch).max())
    assert np.array_equal(detector.decision_function(rows), batch)  # deterministic


def _fields(*names):
    """The ``fields_seen`` of a stream carrying these canonical fields (and time, confidence)."""
    return np.isin(FIELDS, ("t", "confidence") + names)


HEAD = ("head_x", "head_y", "head_z", "head_yaw", "head_pitch", "head_roll")
GAZE = ("gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch")


def _submodel_artifact(tmp_path, main, gaze_only=None, sparse_gaze=None, summary=None):
    """A model on the features ``main`` with the sub-models given (feature lists), each an SVM
    fitted on random rows; the pipeline's default settings."""
    rng = np.random.default_rng(1)
    extras = {}
    for key, names in (("gaze_only", gaze_only), ("sparse_gaze", sparse_gaze)):
        if names is not None:
            X = rng.normal(size=(40, len(names)))
            part = SVMClassifier(C=1.0).fit(X, (X[:, 0] > 0).astype(int))
            extras[key] = fallback_extra(part, normalizer_mean=np.zeros(len(names)),
                                         normalizer_scale=np.ones(len(names)),
                                         feature_names=names, summary=summary or {})
    X = rng.normal(size=(40, len(main)))
    estimator = SVMClassifier(C=1.0).fit(X, (X[:, 0] > 0).astype(int))
    path = tmp_path / "submodels.npz"
    save_model(path, estimator, normalizer_mean=np.zeros(len(main)),
               normalizer_scale=np.ones(len(main)), feature_names=main,
               pipeline_config=PipelineConfig().to_dict(), extras=extras, seed=0)
    return load_model(path)


def test_choice_of_sub_model_by_fields_and_rate(tmp_path):
    detector = _submodel_artifact(
        tmp_path, ["mean_head_yaw", "mean_saccade", "mean_blink", LOSS_FEATURE],
        gaze_only=["mean_saccade", "mean_blink", LOSS_FEATURE],
        sparse_gaze=["mean_gaze_r_yaw", LOSS_FEATURE])
    main, gaze_only, sparse = detector.submodels
    assert [d.name for d in detector.submodels] == ["main", "gaze_only", "sparse_gaze"]
    assert sparse.model_id == f"{detector.model_id}/sparse_gaze"
    cases = [((HEAD + GAZE), 60.0, main),         # everything
             ((HEAD + GAZE), np.nan, main),       # rate not measured yet: taken as enough
             (GAZE, 250.0, gaze_only),            # Pupil Core: no head pose
             (GAZE, 15.0, sparse),                # blinks (>= 10 Hz) but no saccades (>= 20 Hz)
             (HEAD + GAZE, 1.0, sparse),          # head pose, but 1 Hz: no eye events
             (GAZE, 1.0, sparse)]                 # Taamneh et al.: 1 Hz gaze only
    for fields, rate_hz, expected in cases:
        choice = detector.choose(_fields(*fields), rate_hz)
        assert choice.detector is expected and choice.reason is None, (fields, rate_hz)
    none = detector.choose(_fields(*HEAD), 60.0)
    assert (none.detector, none.code, none.reason) == (None, "no_gaze", "no gaze delivered")
    # scores come from the chosen sub-model alone
    X = np.zeros((2, len(FEATURE_NAMES)))
    X[:, FEATURE_NAMES.index("mean_gaze_r_yaw")] = [0.5, np.nan]
    scores = detector.window_scores(X, FEATURE_NAMES, sparse)
    assert scores[0] == sparse.decision_function(np.array([[0.5, 0.0]]))[0]
    assert np.isnan(scores[1])
    assert np.isfinite(detector.window_scores(X, FEATURE_NAMES, main)).all()


def test_choice_says_why_no_sub_model_fits(tmp_path):
    detector = _submodel_artifact(tmp_path, ["mean_saccade", "sd_gaze_r_yaw"])
    choice = detector.choose(_fields(*GAZE), 1.0)
    assert (choice.detector, choice.code) == (None, "rate")
    assert choice.reason == "features mean_saccade need a rate >= 20 Hz, the stream runs at 1 Hz"
    head = _submodel_artifact(tmp_path, ["mean_head_yaw", "mean_gaze_r_yaw"])
    choice = head.choose(_fields(*GAZE), 60.0)
    assert (choice.detector, choice.code) == (None, "fields")
    assert choice.reason == ("features mean_head_yaw need one of the fields head_yaw, which "
                             "the stream does not carry")


def test_score_offset_moves_the_published_scores(tmp_path):
    offset = _submodel_artifact(tmp_path, ["mean_gaze_r_yaw"],
                                summary={"score_offset": 0.25, "score_scale": 2.0},
                                sparse_gaze=["glance_prc"])
    sparse = offset.fallbacks[0]
    assert (sparse.score_offset, sparse.score_scale) == (0.25, 2.0)
    X = np.full((1, len(FEATURE_NAMES)), 0.3)
    raw = sparse.decision_function(np.array([[0.3]]))[0]
    assert offset.window_scores(X, FEATURE_NAMES, sparse)[0] == pytest.approx((raw - 0.25) / 2.0)


def _forged(path, array=None, value=None, pipeline=None, edit=None, model_id=None, relist=True):
    """The shipped model with one array set to ``value``, the ``pipeline`` settings changed
    and/or ``edit(header, arrays)`` applied (the header's list of array dtypes and shapes
    updated unless not ``relist``), its checksum and id recomputed (or the id set to
    ``model_id``): a file that passes every integrity check (issue 23, items 3 to 5)."""
    with np.load(DEFAULT_MODEL_PATH, allow_pickle=False) as archive:
        contents = {name: archive[name] for name in archive.files}
    header = json.loads(contents.pop("header").tobytes())
    if array is not None:
        contents[array] = np.full_like(contents[array], value)
    header["pipeline_config"].update(pipeline or {})
    if edit is not None:
        edit(header, contents)
    if relist:
        header["arrays"] = {name: [a.dtype.str, list(a.shape)] for name, a in contents.items()}
    _artifact._seal(header, contents)
    if model_id is not None:
        header["model_id"] = model_id
    with open(path, "wb") as file:
        np.savez(file, header=np.frombuffer(json.dumps(header).encode(), np.uint8), **contents)
    return path


@pytest.mark.parametrize("array, value, message", [
    ("normalizer/scale", 0.0, "array normalizer/scale must be at least 1e-09, got 0.0"),
    ("normalizer/mean", np.inf, "array normalizer/mean holds non-finite values"),
    ("model/beta", np.nan, "array model/beta holds non-finite values"),
    ("extras/sparse_gaze/scale", -1.0, "array extras/sparse_gaze/scale must be at least 1e-09"),
])
def test_a_forged_model_with_a_valid_checksum_is_refused_at_load(tmp_path, array, value,
                                                                 message):
    path = _forged(tmp_path / "forged.npz", array, value)
    with pytest.raises(ModelError, match=re.escape(message)):
        load_model(path)
    _assert_check_refuses(path, message)


def _assert_check_refuses(path, message):
    """``distractd run --check`` with the model ``path`` exits 1 with the one line ``message``."""
    check = subprocess.run([sys.executable, "-m", "distractd.cli", "run", "--check", "--set",
                            f"model.path={path}"], capture_output=True, text=True, timeout=300)
    assert check.returncode == 1
    assert message in check.stderr and "Traceback" not in check.stderr
    assert len(check.stderr.strip().splitlines()) == 1


def _resized(name, shape):
    """An edit of :func:`_forged`: the array ``name`` of another ``shape`` (its leading part)."""
    def edit(_, arrays):
        arrays[name] = np.resize(arrays[name], shape)
    return edit


def _filled(name, value):
    """An edit of :func:`_forged`: the array ``name`` filled with ``value``."""
    def edit(_, arrays):
        arrays[name] = np.full_like(arrays[name], value)
    return edit


def _set(*keys, value):
    """An edit of :func:`_forged`: the header entry at ``keys`` set to ``value``."""
    def edit(header, _):
        entry = header
        for key in keys[:-1]:
            entry = entry[key]
        entry[keys[-1]] = value
    return edit


def test_an_array_reshaped_behind_its_header_is_refused(tmp_path):
    """The same bytes in another shape hash alike: the header lists each array's dtype and shape,
    and load checks them, so the checksum and the id cover the shapes too."""
    path = _forged(tmp_path / "reshaped.npz", relist=False, edit=lambda _, arrays: arrays.update(
        {"model/beta": arrays["model/beta"].reshape(1, 1000)}))
    with pytest.raises(ModelError, match=re.escape(
            f"model file {path}: array model/beta is <f8 [1, 1000], the header says "
            f"['<f8', [1000, 1]]")):
        load_model(path)


@pytest.mark.parametrize("edit, message", [
    (_resized("normalizer/mean", (29,)),
     "array normalizer/mean must have shape (n_features=30), got (29,)"),
    (_set("params", "C", value=-1.0), "SSELMClassifier.C must be in (0, inf), got -1.0"),
    (_set("summary", "score_scale", value=0.0),
     "summary.score_scale must be a number in [1e-09, 1e+09], got 0.0"),
])
def test_run_check_refuses_a_model_whose_parts_disagree(tmp_path, edit, message):
    _assert_check_refuses(_forged(tmp_path / "forged.npz", edit=edit), message)


@pytest.mark.parametrize("edit, message", [
    (_resized("normalizer/mean", (29,)),
     "array normalizer/mean must have shape (n_features=30), got (29,)"),
    (_resized("model/hidden_weights", (29, 1000)),
     "array model/hidden_weights must have shape (n_features=30, n_hidden=1000), got (29, 1000)"),
    (_resized("model/beta", (999, 1)),
     "array model/beta must have shape (n_hidden=1000, 1), got (999, 1)"),
    (_resized("model/beta", (1000, 2)),
     "array model/beta must have shape (n_hidden=1000, 1), got (1000, 2)"),
    (_resized("extras/sparse_gaze/model/hidden_weights", (3, 1000)),
     "array extras/sparse_gaze/model/hidden_weights must have shape (n_features=4, "
     "n_hidden=1000), got (3, 1000)"),
    (_set("params", "n_hidden", value=999),
     "array model/hidden_weights must have shape (n_features=30, n_hidden=999), got (30, 1000)"),
    (_set("feature_names", value=["mean_gaze_r_yaw"] * 29),
     "array model/hidden_weights must have shape (n_features=29, n_hidden=1000), got (30, 1000)"),
    (_set("params", "C", value=-1.0), "SSELMClassifier.C must be in (0, inf), got -1.0"),
    (_set("summary", "score_scale", value=0.0),
     "summary.score_scale must be a number in [1e-09, 1e+09], got 0.0"),
    (_set("extras", "sparse_gaze", "json", "summary", "score_offset", value=float("nan")),
     "extras/sparse_gaze/summary.score_offset must be a number in [-1e+09, 1e+09], got nan"),
    # finite extremes and a cast (issue 37, item 2): every window was unknown (counted under
    # "features") or attentive
    (_filled("normalizer/scale", 5e-324),
     "array normalizer/scale must be at least 1e-09, got 5e-324"),
    (_filled("normalizer/mean", 1e308), "array normalizer/mean must lie within +-1e+09, got 1e+308"),
    (_filled("model/hidden_weights", 1e308),
     "array model/hidden_weights must lie within +-1e+09, got 1e+308"),
    (_set("summary", "score_scale", value=5e-324),
     "summary.score_scale must be a number in [1e-09, 1e+09], got 5e-324"),
    (_set("summary", "score_offset", value=1.7e308),
     "summary.score_offset must be a number in [-1e+09, 1e+09], got 1.7e+308"),
    (lambda _, arrays: arrays.update({"model/beta": arrays["model/beta"].astype(np.int8)}),
     "array model/beta must hold 64-bit floats, got int8"),
    (_resized("extras/anchors/X", (2000, 29)),
     "array extras/anchors/X must have shape (n_anchors=2000, n_features=30), got (2000, 29)"),
    (_resized("extras/anchors/y", (1999,)),
     "array extras/anchors/y must have shape (n_anchors=2000), got (1999,)"),
    (_resized("extras/segmenter/X", (303, 29)),
     "array extras/segmenter/X must have shape (n_frames=303, n_features=30), got (303, 29)"),
    (lambda _, arrays: arrays.update({"model/classes": np.array([1, 2])}),
     "array model/classes must be [0, 1], got [1, 2]"),
    (lambda _, arrays: arrays.update({"model/beta": arrays["model/beta"].astype(complex)}),
     "array model/beta must hold 64-bit floats, got complex128"),
])
def test_a_forged_model_whose_parts_disagree_is_refused_at_load(tmp_path, edit, message):
    """Issue 23, item 3: shapes, hyper-parameters and score scales are checked at load as save
    checks them; each of these files used to load, then fail or mislead when scoring."""
    path = _forged(tmp_path / "forged.npz", edit=edit)
    with pytest.raises(ModelError, match=re.escape(f"model file {path}: ")) as refused:
        load_model(path)
    assert message in str(refused.value)


@pytest.mark.parametrize("setting, value, message", [
    ("max_length", 10**7,
     "SegmentPrototypes.max_length must be an integer in [1, 256], got 10000000"),
    ("commit_lag", 10**12,
     "SegmentPrototypes.commit_lag must be an integer in [0, 1024], got 1000000000000"),
])
def test_run_check_refuses_forged_segmenter_bounds(tmp_path, setting, value, message):
    """Issue 37, item 2: ``max_length = 10**7`` took the daemon to 12 GB and stalled it at the
    first stream; ``commit_lag = 10**12`` was a traceback at ``run --check`` and at start."""
    path = _forged(tmp_path / "forged.npz",
                   edit=_set("extras", "segmenter", "json", setting, value=value))
    _assert_check_refuses(path, message)


def test_a_forged_model_with_an_unbounded_pipeline_setting_is_refused_at_load(tmp_path):
    """``perclos_window_s = 1e7`` (a whole multiple of the 0.5 s hop) would make every stream
    hold a ring of 2e7 hops and stall the daemon's reload for seconds (issue 23, item 4)."""
    path = _forged(tmp_path / "forged.npz", pipeline={"perclos_window_s": 1e7})
    message = "pipeline.perclos_window_s must be in (0, 3600], got 10000000.0"
    with pytest.raises(ModelError, match=re.escape(f"model file {path}: {message}")):
        load_model(path)
    check = subprocess.run([sys.executable, "-m", "distractd.cli", "run", "--check", "--set",
                            f"model.path={path}"], capture_output=True, text=True, timeout=300)
    assert check.returncode == 1
    assert message in check.stderr and "Traceback" not in check.stderr
    assert len(check.stderr.strip().splitlines()) == 1
