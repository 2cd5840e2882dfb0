"""Labelling assistance: preliminary labels, drift-free inputs, prior, confidence and trust, CSV and
interval forms, CLI round trip."""

import numpy as np
import pytest
from sklearn.cluster import KMeans

from distractd._errors import ConfigError, SchemaError
from distractd.cli import main
from distractd.models.clustering import FEATURE_SETS, label_windows
from distractd.models.segmentation import (
    DRIFT_LAG_S, DRIFT_MAX_AUTOCORRELATION, drift_features, drift_free_windows,
)
from distractd.models.clustering._labelling import _standardize
from distractd.models.detectors import read_labels
from distractd.models.evaluation import clustering_accuracy, clustering_g_mean, g_mean
from distractd.pipeline import (
    FEATURE_NAMES, VEHICLE_FEATURES, Recording, RunningBaseline, extract_features,
    labels_from_intervals, read_intervals, write_intervals, write_recording,
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
    # Without a prior the labels are the clusters, mapped by the better of the two maps.
    assert g_mean(y, by_labels.label[known]) == pytest.approx(clustering_g_mean(y, c))
    assert g_mean(y, by_rule.label[known]) <= g_mean(y, by_labels.label[known]) + 1e-12
    assert by_rule.warning.startswith("no prior given")


def test_feature_sets_cluster_on_their_columns_only(windows):
    # "no-location" equals clustering the z-scored windows without the location means; the rule
    # map still reads the gaze dispersion.
    subset = _every(windows, 3)
    result = label_windows(subset, FEATURE_NAMES, "kmeans", representation="drive",
                           features="no-location", random_state=0)
    used = subset.quality >= 0.5
    eyes = FEATURE_NAMES[:-len(VEHICLE_FEATURES)]   # labelling clusters the eyes, not the car
    Z, names = _standardize(subset.X[used][:, :len(eyes)], eyes)
    kept = [i for i, name in enumerate(names) if name not in FEATURE_SETS["no-location"]]
    assert len(kept) == len(eyes) - 10 and not any(names[i].startswith(("mean_head", "mean_gaze"))
                                       for i in kept)
    clusters = KMeans(2, n_init=10, random_state=0).fit_predict(Z[:, kept])
    assert abs(clustering_accuracy(clusters, result.cluster[used]) - 1.0) < 1e-12
    everything = label_windows(subset, FEATURE_NAMES, "kmeans", representation="drive",
                               features="all", random_state=0)
    assert clustering_accuracy(everything.cluster[used], result.cluster[used]) < 1.0
    with pytest.raises(ConfigError, match="label_windows.features must be one of"):
        label_windows(subset, FEATURE_NAMES, "kmeans", features="gaze")


def test_drift_free_inputs_and_label_free_features(windows):
    # The running baseline (warm-up filled backwards) gives every window a value, and the
    # selection leaves out what still correlates with itself two minutes later.
    Z = drift_free_windows(windows.t_end, windows.X)
    has_data = np.isfinite(windows.X)
    np.testing.assert_array_equal(np.isfinite(Z), has_data)
    forward = RunningBaseline(windows.X.shape[1]).update(windows.t_end, windows.X)
    ready = np.isfinite(forward)
    np.testing.assert_array_equal(Z[ready], forward[ready])
    keep = drift_features(Z)
    lag = int(DRIFT_LAG_S / 0.5)
    for j in np.flatnonzero(has_data.mean(axis=0) >= 0.5):
        column = np.where(np.isfinite(Z[:, j]), Z[:, j], np.nanmedian(Z[:, j]))
        if column.std() > 0:
            r = np.corrcoef(column[:-lag], column[lag:])[0, 1]
            assert keep[j] == (r < DRIFT_MAX_AUTOCORRELATION), FEATURE_NAMES[j]
    # a slow ramp (drift) is left out, a fast square wave (a task) kept
    t = np.arange(3000) * 0.5
    probe = np.column_stack([t / t[-1], np.sign(np.sin(2 * np.pi * t / 150.0 + 0.3))])
    assert drift_features(probe).tolist() == [False, True]
    result = label_windows(_every(windows, 3), FEATURE_NAMES, "kmeans", random_state=0)
    assert set(result.trust["features"]) == {FEATURE_NAMES[j] for j in np.flatnonzero(
        drift_features(drift_free_windows(windows.t_end[::3], windows.X[::3]), hop_s=1.5))
        if FEATURE_NAMES[j] not in VEHICLE_FEATURES}


@pytest.fixture(scope="module")
def visual_windows():
    return extract_features(simulate_drive(3, protocol="visual-manual"))[::3]


def test_prior_orients_and_checks_the_labels(windows, visual_windows):
    subset = visual_windows
    known = subset.label >= 0
    # a visual-manual task k-means finds, and a prior that knows the truth: kappa high, no
    # warning, confident and right labels
    truthful = np.where(subset.label == 1, 0.9, 0.1)
    good = label_windows(subset, FEATURE_NAMES, "kmeans", prior=truthful, random_state=0)
    assert good.mapping == "prior" and good.warning is None
    assert good.trust["kappa_prior"] >= 0.5
    kept = known & (good.label >= 0)
    assert g_mean(subset.label[kept], good.label[kept]) >= 0.8
    assert good.trust["expected_accuracy"] >= 0.75
    # the same prior on a cognitive drive, where the clusters are not the task: warned
    cognitive = _every(windows, 3)
    missed = label_windows(cognitive, FEATURE_NAMES, "kmeans", random_state=0,
                           prior=np.where(cognitive.label == 1, 0.9, 0.1))
    assert missed.trust["kappa_prior"] < 0.5 and "no better than chance" in missed.warning
    assert missed.trust["expected_accuracy"] < good.trust["expected_accuracy"]
    # confidence ranks windows: those that agree with a sure prior rank above those that do not
    agree = good.label[kept] == subset.label[kept]
    assert good.confidence[kept][agree].mean() > good.confidence[kept][~agree].mean()
    with pytest.raises(SchemaError, match="prior must have one value per window"):
        label_windows(subset, FEATURE_NAMES, "kmeans", prior=truthful[:-1])
    with pytest.raises(ConfigError, match="mapping='prior' needs a prior"):
        label_windows(subset, FEATURE_NAMES, "kmeans", mapping="prior")


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
    header = (tmp_path / "w.csv").read_text().splitlines()[0]
    assert header == "t_start,t_end,cluster,label,confidence,prior"
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
