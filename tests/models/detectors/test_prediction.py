"""Why windows go undecided: the reason codes, the one-line summary, a real drive without gaze."""

import numpy as np

from distractd.daemon import DEFAULTS, decision_options, default_model_path
from distractd.models import load_model
from distractd.models.detectors import (
    UNDECIDED_REASONS, DecisionRule, predict_recording, undecided_reasons, undecided_summary,
)
from distractd.pipeline import FIELD_INDEX, VEHICLE_FIELDS, Recording, read_recordings


def test_each_undecided_window_gets_its_reason():
    states = np.array([-1, -1, -1, 1, -1, 0])
    scores = np.array([np.nan, np.nan, 0.4, 2.0, np.nan, -1.0])
    ready = np.array([False, True, True, True, True, True])
    codes = undecided_reasons(states, scores, ready)
    assert codes.tolist() == ["warming", "features", "quality", None, "features", None]
    assert undecided_summary(codes) == (
        f"4 of 6 windows undecided: 1 {UNDECIDED_REASONS['warming']}; 2 a feature had no data in the window "
        "(no valid gaze in it); 1 window quality below min_quality")
    # a stream no sub-model can score: every undecided window has the stream's reason
    codes = undecided_reasons(states, scores, ready, "rate")
    assert codes.tolist() == ["rate"] * 3 + [None, "rate", None]
    assert undecided_summary(codes, "features mean_saccade need a rate >= 20 Hz, the stream "
                                    "runs at 1 Hz") == (
        "4 of 6 windows undecided: 4 features mean_saccade need a rate >= 20 Hz, the stream runs "
        "at 1 Hz")
    assert undecided_summary(undecided_reasons(np.zeros(3), np.zeros(3), np.ones(3, bool))) \
        is None
    assert set(UNDECIDED_REASONS) == {"no_gaze", "fields", "rate", "warming", "features",
                                      "quality"}


def test_real_drive_without_gaze_is_scored_by_the_car_or_undecided_for_want_of_gaze(shared_data):
    """Subject T007 (development half) of Taamneh et al. 2017 (doi:10.1038/sdata.2017.110): the tracker never had
    the eyes in the normal drive (every gaze cell 0,0 or NA); the car's signals are there."""
    (normal,) = read_recordings(shared_data / "taamneh" / "T007.csv", (4,))
    detector = load_model(default_model_path())
    rule = decision_options(DEFAULTS, detector.feature_names)
    by_car = predict_recording(detector, normal, DecisionRule(**rule))
    assert by_car.model_id == f"{detector.model_id}/vehicle"
    ready = by_car.windows.t_end > by_car.windows.t_end[0] + 60.0   # the baseline's warm-up
    assert (by_car.states[ready] >= 0).all()
    samples = normal.samples.copy()
    samples[:, [FIELD_INDEX[name] for name in VEHICLE_FIELDS]] = np.nan
    prediction = predict_recording(detector, Recording(samples, normal.labels, normal.meta),
                                   DecisionRule(**rule))
    assert prediction.choice.detector is None and prediction.model_id is None
    assert prediction.choice.reason == "no gaze delivered"
    n = len(prediction.windows)
    assert n > 1000 and (prediction.states == -1).all()
    assert prediction.undecided() == {"no_gaze": n}
    assert prediction.summary_line() == f"{n} of {n} windows undecided: {n} no gaze delivered"
