"""Labelling assistance: preliminary labels, confidence, CSV and interval forms, CLI round trip."""

import numpy as np
import pytest
from sklearn.cluster import KMeans

from distractd._errors import ConfigError, SchemaError
from distractd.cli import main
from distractd.models.clustering import FEATURE_SETS, label_windows
from distractd.models.clustering._labelling import _standardize
from distractd.models.detectors import read_labels
from distractd.models.evaluation import clustering_accuracy, clustering_g_mean, g_mean
from distractd.pipeline import (
    FEATURE_NAMES, Recording, extract_features, labels_from_intervals, read_intervals,
    write_intervals, write_recording,
)
from distractd.simulators import simulate_drive


@pytest.fixture(scope="module")
def drive():
    return simulate_drive(3)


@pytest.fixture(scope="module")
def windows(drive):
    return extract_features(drive)


@pytest.mark.parametrize("method", ["kmeans", "uselm", "elm-jec", "elm-clr"])
def test_every_method_labels_every_good_window(windows, method):
    subset = _every(windows, 4)
    result = label_windows(subset, FEATURE_NAMES, method, random_state=0)
    used = subset.quality >= 0.5
    assert len(result) == len(subset)
    np.testing.assert_array_equal(result.label >= 0, used)
    assert set(result.cluster[used].tolist()) == {0, 1}
    confidence = result.confidence[used]
    assert np.all((confidence >= 0) & (confidence <= 1))
    assert np.all(np.isnan(result.confidence[~used]))


def test_rule_and_label_mappings(windows):
    subset = _every(windows, 3)
    by_rule = label_windows(subset, FEATURE_NAMES, "kmeans", random_state=0)
    by_labels = label_windows(subset, FEATURE_NAMES, "kmeans", mapping="labels", random_state=0)
    np.testing.assert_array_equal(by_rule.cluster, by_labels.cluster)
    known = (subset.label >= 0) & (by_labels.label >= 0)
    y, c = subset.label[known], by_labels.cluster[known]
    # The label mapping attains the clustering G-mean (the best of the two maps).
    assert g_mean(y, by_labels.label[known]) == pytest.approx(clustering_g_mean(y, c))
    assert g_mean(y, by_rule.label[known]) <= g_mean(y, by_labels.label[known]) + 1e-12


def test_feature_sets_cluster_on_their_columns_only(windows):
    # "no-location" equals clustering the z-scored windows without the location means; the rule
    # map still reads the gaze dispersion.
    subset = _every(windows, 3)
    result = label_windows(subset, FEATURE_NAMES, "kmeans", features="no-location", random_state=0)
    used = subset.quality >= 0.5
    Z, names = _standardize(subset.X[used], FEATURE_NAMES)
    kept = [i for i, name in enumerate(names) if name not in FEATURE_SETS["no-location"]]
    assert len(kept) == len(FEATURE_NAMES) - 10 and not any(names[i].startswith(("mean_head", "mean_gaze"))
                                       for i in kept)
    clusters = KMeans(2, n_init=10, random_state=0).fit_predict(Z[:, kept])
    assert abs(clustering_accuracy(clusters, result.cluster[used]) - 1.0) < 1e-12
    everything = label_windows(subset, FEATURE_NAMES, "kmeans", random_state=0)
    assert clustering_accuracy(everything.cluster[used], result.cluster[used]) < 1.0
    with pytest.raises(ConfigError, match="label_windows.features must be one of"):
        label_windows(subset, FEATURE_NAMES, "kmeans", features="gaze")


def test_k_means_cluster_confidence_is_half_way_on_the_boundary(windows):
    result = label_windows(_every(windows, 3), FEATURE_NAMES, "kmeans", random_state=0)
    used = result.label >= 0
    assert np.all(result.confidence[used] >= 0.5 - 1e-12)  # k-means: nearest centre is its own


def test_intervals_reproduce_window_labels_through_the_samples(drive, windows, tmp_path):
    # Window labels -> intervals -> sample labels -> windows again (majority rule).
    result = label_windows(windows, FEATURE_NAMES, "kmeans", random_state=0)
    result.label = np.where(result.label >= 0, windows.label, -1).astype(np.int8)
    write_intervals(result.intervals(), tmp_path / "edited.csv")
    intervals = read_intervals(tmp_path / "edited.csv")
    relabelled = Recording(drive.samples, labels_from_intervals(drive.t, intervals), drive.meta)
    again = extract_features(relabelled)
    both = (result.label >= 0) & (again.label >= 0)
    assert both.mean() > 0.95
    np.testing.assert_array_equal(again.label[both], result.label[both])


def test_window_csv_round_trip(windows, tmp_path):
    result = label_windows(_every(windows, 5), FEATURE_NAMES, "kmeans", random_state=0)
    result.write_csv(tmp_path / "w.csv")
    kind, (t_end, label) = read_labels(tmp_path / "w.csv")  # what `distractd train --labels` reads
    assert kind == "windows"
    np.testing.assert_array_equal(t_end, result.t_end)
    np.testing.assert_array_equal(label, result.label)


def test_bad_inputs_name_the_problem(windows, tmp_path):
    with pytest.raises(ConfigError, match="label_windows.method must be one of"):
        label_windows(windows, FEATURE_NAMES, "dbscan")
    unlabelled = _every(windows, 5)
    unlabelled.label[:] = 0
    with pytest.raises(ConfigError, match="needs windows labelled both 1 and 0"):
        label_windows(unlabelled, FEATURE_NAMES, "kmeans", mapping="labels")
    (tmp_path / "bad.csv").write_text("t_start,t_end,label\n0.0,10.0,7\n")
    with pytest.raises(SchemaError, match=r"bad.csv:2: label must be 1, 0 or -1, got 7"):
        read_labels(tmp_path / "bad.csv")


def test_cli_label_then_edit_then_read_back(drive, tmp_path, capsys):
    recording = tmp_path / "drive.csv"
    write_recording(drive, recording)
    out = tmp_path / "labels.csv"
    assert main(["label", str(recording), "--method", "kmeans", "--out", str(out)]) == 0
    assert "clustered with kmeans" in capsys.readouterr().out
    intervals = read_intervals(tmp_path / "labels.intervals.csv")
    assert intervals and all(start < end for start, end, _ in intervals)
    # The expert flips the first interval and saves; the edit reads back.
    edited = [(s, e, 1 - label if i == 0 else label) for i, (s, e, label) in enumerate(intervals)]
    write_intervals(edited, tmp_path / "edited.csv")
    assert read_intervals(tmp_path / "edited.csv") == edited
    _, (t_end, label) = read_labels(out)
    assert len(t_end) == len(extract_features(drive)) and set(label.tolist()) <= {-1, 0, 1}


def _every(windows, step):
    return windows[::step]
