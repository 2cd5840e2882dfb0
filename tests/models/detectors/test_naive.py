"""The naive floor's recipe: its features follow the fields a stream has, missing values become
the centre, and its SVM is scikit-learn's balanced RBF SVM with ``gamma="scale"``."""

import numpy as np
import pytest
from sklearn.svm import SVC

from distractd import ConfigError
from distractd.models.detectors import (
    LOSS_FEATURE, NAIVE_MODELS, SVMClassifier, load_model, model_specs, naive_feature_names,
    save_model,
)
from distractd.pipeline import PipelineConfig, extract_features
from distractd.pipeline.formats import read_taamneh
from distractd.simulators import simulate_drive


def test_features_are_the_loss_and_each_spatial_fields_mean_and_sd_the_stream_has(shared_data):
    simulated = extract_features(simulate_drive(3, 120.0), PipelineConfig())
    names = naive_feature_names(simulated)
    assert names[0] == LOSS_FEATURE
    assert {"mean_head_yaw", "sd_head_yaw", "mean_gaze_r_pitch", "sd_gaze_l_yaw"} <= set(names)
    assert len(names) == 21  # 10 spatial fields, each with data: mean and SD
    path = shared_data / "taamneh" / "T011.csv"
    if not path.is_file():
        pytest.skip(f"{path} absent")
    (texting,) = read_taamneh(path, drives=(7,))
    names = naive_feature_names(extract_features(texting, PipelineConfig()))
    # a 1 Hz gaze-only tracker: its valid-gaze fraction and gaze means and SDs, no head pose
    assert names == [LOSS_FEATURE] + [f"{stat}_gaze_{eye}_{axis}" for eye in ("r", "l")
                                      for axis in ("yaw", "pitch") for stat in ("mean", "sd")]


def test_a_missing_value_is_the_centre_unless_the_window_has_no_value_at_all():
    (spec,) = model_specs(["naive"])
    X = np.array([[1.0, np.nan, -2.0], [np.nan, np.nan, np.nan], [0.5, 3.0, np.nan]])
    imputed = spec.representation.impute(X)
    np.testing.assert_array_equal(imputed[[0, 2]], [[1.0, 0.0, -2.0], [0.5, 3.0, 0.0]])
    assert np.isnan(imputed[1]).all()  # a warming baseline: undecided, not the centre
    assert np.isnan(X[0, 1])  # the input is left alone


def test_the_naive_svm_is_sklearns_balanced_rbf_svm_with_gamma_scale(tmp_path):
    rng = np.random.default_rng(5)
    X = np.vstack([rng.normal(0.0, 1.0, (300, 4)), rng.normal(0.8, 1.5, (60, 4))])
    y = np.r_[np.zeros(300), np.ones(60)].astype(np.int8)
    spec = model_specs(["naive-offline"], "full")[0]  # the same at either grid: no search
    params = spec.select(spec.make_estimator(0), spec.grid, X, y, cv=[])
    ours = spec.make_estimator(0).set_params(**params).fit(X, y)
    reference = SVC(C=1.0, gamma="scale", class_weight="balanced").fit(X, y)
    X_new = rng.normal(0.4, 1.2, (50, 4))
    np.testing.assert_allclose(ours.decision_function(X_new),
                               reference.decision_function(X_new), rtol=1e-6, atol=1e-8)
    # balanced: the minority class is found more often than without weights (0.80 vs 0.60)
    unweighted = SVMClassifier(kernel_width=params["kernel_width"]).fit(X, y)
    assert ours.predict(X[y == 1]).mean() > unweighted.predict(X[y == 1]).mean()
    # an artifact keeps the class weighting with the other parameters
    save_model(tmp_path / "naive.npz", ours, normalizer_mean=np.zeros(4),
               normalizer_scale=np.ones(4), feature_names=["a", "b", "c", "d"],
               pipeline_config={})
    loaded = load_model(tmp_path / "naive.npz")
    assert loaded.estimator.get_params()["class_weight"] == "balanced"
    np.testing.assert_allclose(loaded.estimator.decision_function(X_new),
                               ours.decision_function(X_new), rtol=1e-12)


def test_naive_kinds_are_known_by_name_and_others_are_refused():
    specs = model_specs(list(NAIVE_MODELS) + ["svm"])
    assert [s.representation.normalisation for s in specs[:2]] == ["running", "driver"]
    assert specs[2].representation is None
    with pytest.raises(ConfigError, match="naive-offline.*got \\['naive-online'\\]"):
        model_specs(["naive-online"])
