"""A cohort model's sub-models: which features each gets, and the one a sparse tracker is scored by."""

import numpy as np
import pytest

from distractd._errors import ConfigError
from distractd.daemon import default_model_path
from distractd.models import load_model, save_model
from distractd.models.detectors import DecisionRule, predict_recording, train_cohort
from distractd.pipeline import (
    FIELDS, VEHICLE_FEATURES, VEHICLE_FIELDS, PipelineConfig, Recording, feature_min_rate_hz,
    gaze_only_features,
)
from distractd.simulators import simulate_drive

CONFIG = PipelineConfig(drive_side="right")


@pytest.fixture(scope="module")
def drives():
    """Two simulated drivers' texting-like drives, 5 minutes each at 60 Hz."""
    return [simulate_drive(seed, duration_s=300.0, protocol="visual-manual") for seed in (3, 4)]


@pytest.fixture(scope="module")
def cohort(drives, tmp_path_factory):
    estimator, parts = train_cohort(drives, "svm", n_train=300, config=CONFIG, seed=1,
                                    segment_frames=0)
    path = tmp_path_factory.mktemp("cohort") / "svm.npz"
    save_model(path, estimator, **parts)
    return load_model(path)


def tracker(recording, every, gaze_only):
    """The recording as a tracker exporting one sample in ``every``, with gaze only or every
    field."""
    samples = recording.samples[::every].copy()
    if gaze_only:
        samples[:, [i for i, field in enumerate(FIELDS)
                    if field not in ("t", "confidence") and not field.startswith("gaze_")]] = np.nan
    return Recording(samples, recording.labels[::every])


def test_sub_models_hold_the_features_fewer_fields_and_lower_rates_give(cohort):
    main, gaze_only, sparse = cohort.submodels
    assert (gaze_only.name, sparse.name) == ("gaze_only", "sparse_gaze")
    assert gaze_only.feature_names == gaze_only_features(main.feature_names)
    rates = dict(zip(gaze_only.feature_names,
                     feature_min_rate_hz(gaze_only.feature_names, CONFIG)))
    assert rates["mean_saccade"] == 20.0 and rates["mean_blink"] == 10.0
    assert sparse.feature_names == [name for name, rate in rates.items() if rate == 0]
    assert "glance_track_loss_fraction" in sparse.feature_names
    assert not {"mean_saccade", "mean_blink", "mean_blink_frequency_hz"} & set(
        sparse.feature_names)
    assert sparse.summary["n_labelled"] >= main.summary["n_labelled"] > 50 and sparse.score_scale > 0


@pytest.mark.parametrize("every, expected", [(1, "main"), (2, "main"), (6, "sparse_gaze"),
                                             (60, "sparse_gaze")])
def test_a_stream_is_scored_by_the_sub_model_its_rate_allows(cohort, drives, every, expected):
    """Every field at 60 and 30 Hz: the model itself; gaze only at 10 Hz (no saccades) and at
    1 Hz: the sparse one, which decides most windows after the baseline's warm-up."""
    recording = tracker(drives[0], every, gaze_only=every >= 6)
    prediction = predict_recording(cohort, recording, DecisionRule())
    assert prediction.choice.detector.name == expected
    assert prediction.rate_hz == pytest.approx(60.0 / every, rel=0.01)
    ready = prediction.windows.t_end > 75.0
    assert (prediction.states[ready] >= 0).mean() > 0.9


def test_an_imported_sparse_model_must_need_only_gaze_and_share_the_settings(cohort, drives):
    with pytest.raises(ConfigError, match=r"sparse model .*: features \['mean_head_x', "):
        train_cohort(drives, "svm", n_train=300, config=CONFIG, seed=1, segment_frames=0,
                     sparse_model=cohort)
    real = load_model(default_model_path().with_name("real_gaze_model.npz"))
    relative = PipelineConfig.from_dict({**real.pipeline_config,
                                         "baseline_absolute_glances": False})
    with pytest.raises(ConfigError, match=r"pipeline settings \['baseline_absolute_glances'\] "
                                          r"differ from this model's"):
        train_cohort(drives, "svm", n_train=300, config=relative, seed=1, segment_frames=0,
                     sparse_model=real)


@pytest.fixture(scope="module")
def cohort_with_car(drives, tmp_path_factory):
    estimator, parts = train_cohort(drives, "svm", n_train=300, config=CONFIG, seed=1,
                                    segment_frames=0, vehicle=True)
    path = tmp_path_factory.mktemp("cohort") / "svm-car.npz"
    save_model(path, estimator, **parts)
    return load_model(path)


def without(recording, every, fields):
    """The recording one sample in ``every``, the canonical fields ``fields`` blanked."""
    samples = recording.samples[::every].copy()
    samples[:, [i for i, field in enumerate(FIELDS) if field in fields]] = np.nan
    return Recording(samples, recording.labels[::every])


EYES_BEYOND_GAZE = [f for f in FIELDS if f.startswith(("head_", "eyelid_", "pupil_"))]


def test_the_car_gives_its_own_sub_models_tried_after_the_model_from_most_to_least_complete(
        cohort_with_car, drives):
    main, *subs = cohort_with_car.submodels
    assert [d.name for d in subs] == ["eyes_vehicle", "gaze_only", "sparse_gaze_vehicle",
                                      "sparse_gaze", "vehicle"]
    named = {d.name: d.feature_names for d in subs}
    car = named["vehicle"]
    assert set(car) <= set(VEHICLE_FEATURES) and "sd_lane_offset" in car and not (
        set(car) & set(main.feature_names))   # the model itself keeps to the eyes
    assert named["eyes_vehicle"] == named["gaze_only"] + car
    assert named["sparse_gaze_vehicle"] == named["sparse_gaze"] + car
    rule = {"loss_evidence": True}   # the main model scores track loss: as the daemon's rule
    cases = [(without(drives[0], 1, ()), "main"),
             (without(drives[0], 1, EYES_BEYOND_GAZE), "eyes_vehicle"),
             (without(drives[0], 1, EYES_BEYOND_GAZE + list(VEHICLE_FIELDS)), "gaze_only"),
             (without(drives[0], 60, EYES_BEYOND_GAZE), "sparse_gaze_vehicle"),
             (without(drives[0], 6, [f for f in FIELDS if f not in VEHICLE_FIELDS
                                     and f != "t"]), "vehicle")]
    for recording, expected in cases:
        prediction = predict_recording(cohort_with_car, recording, DecisionRule(**rule))
        assert prediction.choice.detector.name == expected
        ready = prediction.windows.t_end > 75.0
        assert (prediction.states[ready] >= 0).mean() > 0.9, expected
    nothing = without(drives[0], 6, [f for f in FIELDS if f != "t"])
    assert predict_recording(cohort_with_car, nothing, DecisionRule()).choice.code == "no_gaze"
