"""Texting on real 1 Hz gaze-only drives (../shared/data/taamneh): the eyes lost while texting are
evidence — the features stay defined, a model trained on other drivers decides those windows and
scores them above the normal drive's."""

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from distractd.models.detectors import (
    LOSS_FEATURE, DecisionRule, load_model, loss_evidence, model_specs, predict_windows,
    save_model, train_cohort, usable_features,
)
from distractd.models.evaluation import evaluate_scheme, scheme_drives
from distractd.pipeline import PipelineConfig, extract_features
from distractd.pipeline.formats import read_taamneh

TRAIN = ("T011", "T019", "T034", "T039", "T043", "T062")
"""Development-half drivers whose trackers delivered gaze on both drives."""
NEW_DRIVER = "T073"
"""A development-half driver the test's models do not train on."""


@pytest.fixture(scope="module")
def drives(shared_data):
    """Normal (4) and texting (7) drives per driver id."""
    folder = shared_data / "taamneh"
    paths = [folder / f"{driver}.csv" for driver in TRAIN + (NEW_DRIVER,)]
    absent = [str(path) for path in paths if not path.is_file()]
    if absent:
        pytest.skip(f"{absent} absent")
    return {path.stem: read_taamneh(path, drives=(4, 7)) for path in paths}


def test_features_that_vanish_when_the_eyes_are_lost_are_not_chosen(drives):
    windows = [extract_features(r, PipelineConfig(baseline=True))
               for driver in TRAIN for r in drives[driver]]
    X = np.vstack([w.X for w in windows])
    names = usable_features(windows)
    # gaze means have data in most windows overall, but not where most samples were lost
    assert np.isfinite(X[:, 6]).mean() > 0.5  # mean_gaze_r_yaw
    assert "mean_gaze_r_yaw" not in names and "sd_gaze_r_yaw" not in names
    assert LOSS_FEATURE in names and "glance_off_road_fraction" in names
    assert loss_evidence(names)


def test_low_quality_windows_are_decided_only_by_a_model_that_scores_the_loss():
    t = np.arange(1.0, 9.0)
    scores = np.array([2.0] * 8)
    quality = np.array([1.0, 0.1, 0.0, 0.2, 0.9, 0.1, np.nan, 0.3])
    assert (DecisionRule(mode="hysteresis", on=0.5, off=0.5).update(t, scores, quality)
            [[1, 2, 3, 5, 6, 7]] == -1).all()
    states = DecisionRule(mode="hysteresis", on=0.5, off=0.5, loss_evidence=True).update(
        t, scores, quality)
    assert (states == 1).all()
    scores[3] = np.nan  # no score (a feature without data): no decision either way
    assert DecisionRule(loss_evidence=True).update(t, scores, quality)[3] == -1


def test_a_new_drivers_texting_is_decided_and_scores_above_the_normal_drive(drives, tmp_path):
    cohort = [r for driver in TRAIN for r in drives[driver]]
    estimator, parts = train_cohort(cohort, "svm", segment_frames=0, seed=3)
    save_model(tmp_path / "texting.npz", estimator, **parts)
    detector = load_model(tmp_path / "texting.npz")
    assert loss_evidence(detector.feature_names)
    normal, texting = drives[NEW_DRIVER]
    rule = {"loss_evidence": loss_evidence(detector.feature_names)}
    w_text, s_text, states = predict_windows(detector, texting, DecisionRule(**rule))
    w_norm, s_norm, _ = predict_windows(detector, normal, DecisionRule(**rule))
    lost = (w_text.label == 1) & (w_text.quality < 0.5)
    assert lost.sum() > 50  # texting loses the eyes in many windows
    assert np.mean(states[lost] != -1) > 0.95  # decided, not unknown
    _, _, silent = predict_windows(detector, texting, DecisionRule())  # the old gate
    assert np.all(silent[lost] == -1)
    texting_scores = s_text[(w_text.label == 1) & np.isfinite(s_text)]
    normal_scores = s_norm[np.isfinite(s_norm)]
    auc = mannwhitneyu(texting_scores, normal_scores).statistic / (
        len(texting_scores) * len(normal_scores))
    assert auc > 0.8
    assert np.mean(texting_scores > 0) > 0.6 and np.mean(normal_scores > 0) < 0.3


def test_new_driver_figures_count_undecided_windows_as_no_alarm(drives):
    recordings = [r for driver in ("T011", "T034", "T039", NEW_DRIVER) for r in drives[driver]]
    shown, names = scheme_drives(recordings, PipelineConfig(), "running")
    specs = model_specs(["svm"], "small")
    texting = next(d for d in shown if d.driver_id == NEW_DRIVER and d.protocol == "texting")
    records = {}
    for evidence in (False, loss_evidence(names)):
        results = evaluate_scheme(shown, "new-driver", specs,
                                  decision={"loss_evidence": evidence})
        records[evidence] = next(r for r in results["svm"][NEW_DRIVER]
                                 if r["recording_id"] == texting.recording_id)
    # with the quality gate, every texting window below min_quality 0.5 is undecided: a miss
    below = np.mean(texting.quality[texting.label == 1] < 0.5)
    assert below > 0.3
    assert records[False]["sensitivity"] <= 1 - below
    assert records[True]["coverage"] > records[False]["coverage"] + 0.15
    assert records[True]["g_mean"] > records[False]["g_mean"] + 0.15
