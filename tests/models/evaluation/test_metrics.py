import itertools
import math

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, recall_score

from distractd._errors import SchemaError
from distractd.models.evaluation import (
    accuracy, binary_scores, clustering_accuracy, clustering_accuracy_many_to_one,
    clustering_g_mean, detection_delays, false_alarms_per_hour, g_mean, sensitivity, specificity,
)


@pytest.mark.parametrize("seed", range(5))
def test_window_metrics_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    y_true = (rng.random(300) < 0.3).astype(int)
    y_pred = np.where(rng.random(300) < 0.8, y_true, 1 - y_true)
    sens = recall_score(y_true, y_pred, pos_label=1)
    spec = recall_score(y_true, y_pred, pos_label=0)
    assert accuracy(y_true, y_pred) == pytest.approx(accuracy_score(y_true, y_pred), abs=1e-15)
    assert sensitivity(y_true, y_pred) == pytest.approx(sens, abs=1e-15)
    assert specificity(y_true, y_pred) == pytest.approx(spec, abs=1e-15)
    assert g_mean(y_true, y_pred) == pytest.approx(math.sqrt(sens * spec), abs=1e-15)
    assert binary_scores(y_true, y_pred) == pytest.approx(
        {"accuracy": accuracy_score(y_true, y_pred), "sensitivity": sens, "specificity": spec,
         "g_mean": math.sqrt(sens * spec)})


def test_window_metrics_hand_counts():
    # TP=3, FN=1, TN=4, FP=2
    y_true = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    y_pred = [1, 1, 1, 0, 0, 0, 0, 0, 1, 1]
    assert accuracy(y_true, y_pred) == 0.7
    assert sensitivity(y_true, y_pred) == 0.75
    assert specificity(y_true, y_pred) == 4 / 6
    assert g_mean(y_true, y_pred) == pytest.approx(math.sqrt(0.75 * 4 / 6))


def test_undefined_ratios_are_nan():
    assert math.isnan(sensitivity([0, 0], [0, 1]))
    assert specificity([0, 0], [0, 1]) == 0.5
    assert math.isnan(g_mean([0, 0], [0, 1]))
    assert math.isnan(specificity([1, 1], [1, 1]))


def test_window_metrics_reject_bad_labels_naming_them():
    with pytest.raises(SchemaError, match=r"y_pred\[1\] must be 1 or 0, got -1"):
        accuracy([1, 0], [1, -1])
    with pytest.raises(SchemaError, match="y_pred must have the shape"):
        g_mean([1, 0, 1], [1, 0])


def _brute_force_clustering_accuracy(y, c):
    classes, clusters = np.unique(y), np.unique(c)
    best = 0
    for image in itertools.permutations(classes, min(len(classes), len(clusters))):
        mapping = dict(zip(clusters, image))
        best = max(best, sum(mapping.get(ci, None) == yi for yi, ci in zip(y, c)))
    return best / len(y)


@pytest.mark.parametrize("seed", range(6))
def test_clustering_accuracy_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, 60)
    c = np.where(rng.random(60) < 0.7, (y + seed) % 3, rng.integers(0, 3 + seed % 2, 60)) * 7
    assert clustering_accuracy(y, c) == pytest.approx(_brute_force_clustering_accuracy(y, c))


def test_clustering_accuracy_is_label_permutation_invariant():
    y = np.array([0, 0, 0, 1, 1, 2, 2, 2])
    c = np.array([5, 5, 9, 9, 9, 1, 1, 5])
    assert clustering_accuracy(y, c) == 6 / 8
    assert clustering_accuracy(y, (c + 3) % 11) == 6 / 8


def test_clustering_g_mean_two_clusters_tries_both_assignments():
    rng = np.random.default_rng(3)
    y = (rng.random(200) < 0.35).astype(int)
    c = np.where(rng.random(200) < 0.75, 1 - y, y)  # clusters mostly flipped
    direct, flipped = g_mean(y, c), g_mean(y, 1 - c)
    assert clustering_g_mean(y, c) == pytest.approx(max(direct, flipped))
    assert clustering_g_mean(y, c) == pytest.approx(flipped)
    assert clustering_g_mean(y, c + 40) == pytest.approx(flipped)


def test_clustering_g_mean_many_clusters_and_degenerate():
    y = np.array([1, 1, 1, 0, 0, 0, 0, 0])
    c = np.array([0, 0, 1, 1, 2, 2, 2, 2])
    # best map: clusters 0, 1 -> distracted; 2 -> attentive: sens 1, spec 4/5
    assert clustering_g_mean(y, c) == pytest.approx(math.sqrt(4 / 5))
    assert clustering_g_mean(y, np.zeros(8, int)) == 0.0
    with pytest.raises(SchemaError, match="at most 16 clusters, got 17"):
        clustering_g_mean(np.r_[np.ones(9), np.zeros(8)].astype(int), np.arange(17))


def test_detection_delays_per_episode():
    t = 0.5 * np.arange(1, 21)
    y_true = np.array([0, 0, 1, 1, 1, 1, 0, 0, -1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 1])
    y_state = np.array([0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    delays = detection_delays(t, y_true, y_state)
    # episodes start at t=1.5 (detected at 2.5), 5.0 (at once), 7.5 (missed), 10.0 (missed)
    np.testing.assert_array_equal(delays, [1.0, 0.0, np.nan, np.nan])
    assert detection_delays(t, np.zeros(20, int), y_state).shape == (0,)


def test_false_alarms_per_hour_counts_onsets_in_attentive_truth():
    hop = 0.5
    t = hop * np.arange(1, 13)
    y_true = np.array([0, 0, 0, 0, 0, 1, 1, 1, 0, 0, -1, 0])
    y_state = np.array([1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 1])
    # onsets at windows 0 (initial state attentive), 3 (alarms), 6 (true), 10 (unknown truth)
    attentive_hours = 8 * hop / 3600
    assert false_alarms_per_hour(t, y_true, y_state) == pytest.approx(2 / attentive_hours)
    assert false_alarms_per_hour(t, y_true, np.zeros(12, int)) == 0.0
    assert math.isnan(false_alarms_per_hour(t, np.ones(12, int), y_state))


def test_deployment_metrics_reject_bad_input():
    with pytest.raises(SchemaError, match=r"t must not decrease, got t\[2\] = 0.5 after 1.0"):
        detection_delays([0.5, 1.0, 0.5], [1, 1, 1], [0, 1, 1])
    with pytest.raises(SchemaError, match=r"y_true\[0\] must be 1, 0 or -1, got 2"):
        false_alarms_per_hour([0.5, 1.0], [2, 1], [0, 1])
    with pytest.raises(SchemaError, match="t must have the shape"):
        detection_delays([0.5], [1, 1], [0, 1])


def test_clustering_accuracy_many_to_one_hand_count_and_brute_force():
    y = np.array([0, 0, 0, 1, 1, 2, 2, 2])
    c = np.array([5, 5, 9, 9, 9, 1, 1, 5])
    # majorities: 5 -> 0 (2 of 3), 9 -> 1 (2 of 3), 1 -> 2 (2 of 2)
    assert clustering_accuracy_many_to_one(y, c) == 6 / 8
    rng = np.random.default_rng(4)
    y = (rng.random(80) < 0.4).astype(int)
    c = np.where(rng.random(80) < 0.7, 2 * y + rng.integers(0, 2, 80), rng.integers(0, 4, 80))
    brute = max(np.mean(np.asarray(image)[c] == y)
                for image in itertools.product((0, 1), repeat=4))
    assert clustering_accuracy_many_to_one(y, c) == pytest.approx(brute)
    assert clustering_accuracy_many_to_one(y, c) >= clustering_accuracy(y, c)
