import numpy as np
import pytest

from distractd._errors import ConfigError, SchemaError
from distractd.models import load_model
from distractd.models.detectors import (
    DecisionRule, chosen_features, predict_windows, read_labels, train_detector, train_model,
    training_windows, usable_features,
)
from distractd.pipeline import (
    FEATURE_NAMES, VEHICLE_FEATURES, PipelineConfig, extract_features, label_intervals,
    write_intervals,
)
from distractd.simulators import simulate_drive

EYE_FEATURES = [name for name in FEATURE_NAMES if name not in VEHICLE_FEATURES]


@pytest.fixture(scope="module")
def drive():
    return simulate_drive(11, duration_s=300.0)


@pytest.fixture(scope="module")
def windows(drive):
    return training_windows([drive])


def test_trained_artifact_reproduces_the_estimator(drive, windows, tmp_path):
    estimator, parts = train_detector(windows, "elm", n_labelled=40, grid="small", seed=3,
                                      segment_frames=120)
    path = tmp_path / "elm.npz"
    model_id = train_model(path, windows, "elm", n_labelled=40, grid="small", seed=3,
                           segment_frames=120)
    detector = load_model(path)
    assert detector.model_id == model_id and detector.kind == "ELMClassifier"
    assert detector.feature_names == EYE_FEATURES   # the simulated car is read only when asked
    assert PipelineConfig.from_dict(detector.pipeline_config) == PipelineConfig()
    summary = detector.summary
    assert summary["n_labelled"] == 40 and summary["params"] == parts["summary"]["params"]
    assert summary["known_truth"]["distracted"] == int((windows.label == 1).sum())
    assert "segmenter" in detector.extras
    X = windows.X[:, :len(EYE_FEATURES)]
    finite = np.isfinite(X).all(axis=1)
    Z = (X[finite] - parts["normalizer_mean"]) / parts["normalizer_scale"]
    np.testing.assert_allclose(detector.decision_function(X[finite]),
                               estimator.decision_function(Z), rtol=1e-12, atol=1e-12)
    _, scores, states = predict_windows(
        detector, drive, DecisionRule(min_quality=0.0, mode="hysteresis", on=0.0, off=0.0))
    np.testing.assert_allclose(scores[finite] * detector.score_scale,
                               estimator.decision_function(Z), atol=1e-12)
    assert detector.score_scale == pytest.approx(np.std(estimator.decision_function(
        (X[finite] - parts["normalizer_mean"]) / parts["normalizer_scale"])), rel=0.5)
    np.testing.assert_array_equal(states[finite], (scores[finite] > 0).astype(np.int8))


def test_corrected_interval_labels_replace_the_recordings(drive, tmp_path):
    flipped = [(start, end, 1 - label)
               for start, end, label in label_intervals(drive.t, drive.labels)]
    path = tmp_path / "corrected.csv"
    write_intervals(flipped, path)
    assert read_labels(path)[0] == "intervals"
    original = extract_features(drive)
    corrected = training_windows([drive], labels=[path])
    known = original.label != -1
    np.testing.assert_array_equal(corrected.label[known], 1 - original.label[known])


def test_corrected_per_window_labels_match_by_window_end(drive, tmp_path):
    original = extract_features(drive)
    path = tmp_path / "windows.csv"
    rows = ["t_start,t_end,cluster,label,confidence"]
    for i in range(0, len(original), 2):  # every other window, labels flipped
        rows.append(f"{float(original.t_start[i])!r},{float(original.t_end[i])!r},0,"
                    f"{1 - original.label[i] if original.label[i] != -1 else ''},0.9")
    path.write_text("\n".join(rows) + "\n")
    kind, (t_end, labels) = read_labels(path)
    assert kind == "windows" and len(t_end) == (len(original) + 1) // 2
    corrected = training_windows([drive], labels=[path])
    expected = np.full(len(original), -1, dtype=np.int8)
    expected[::2] = np.where(original.label[::2] == -1, -1, 1 - original.label[::2])
    np.testing.assert_array_equal(corrected.label, expected)


def test_label_files_and_sizes_are_checked(drive, windows, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(SchemaError, match="header must hold start,end,label"):
        read_labels(bad)
    with pytest.raises(ConfigError, match="one file per recording"):
        training_windows([drive], labels=[bad, bad])
    with pytest.raises(ConfigError, match="train.n_labelled must be below"):
        train_detector(windows, "elm", n_labelled=len(windows), grid="small")


def test_chosen_features_follow_the_data_and_name_what_is_wrong(windows):
    assert chosen_features(windows) == usable_features(windows) == EYE_FEATURES
    assert usable_features(windows, vehicle=True) == list(FEATURE_NAMES)   # the simulated car
    assert chosen_features(windows, ["mean_gaze_r_yaw"]) == ["mean_gaze_r_yaw"]
    with pytest.raises(ConfigError, match=r"features \['mean_nothing'\] are not window features"):
        chosen_features(windows, ["mean_nothing"])
    gaze_only = windows[:]
    gaze_only.X = windows.X.copy()
    gaze_only.X[:, FEATURE_NAMES.index("mean_head_x")] = np.nan
    assert "mean_head_x" not in chosen_features(gaze_only)
    with pytest.raises(ConfigError, match=r"\['mean_head_x'\] have no data in most windows"):
        chosen_features(gaze_only, ["mean_head_x"])
