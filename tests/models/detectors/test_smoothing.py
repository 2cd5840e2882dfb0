"""Decision smoothing: hand-computed sequences, stream ≡ batch over random splits, bad parameters."""

import numpy as np
import pytest

from distractd._errors import ConfigError
from distractd.models import DecisionSmoother
from distractd.models.detectors import smooth_decisions


def test_hysteresis_by_hand():
    scores = [0.4, 0.6, 0.1, -0.2, -0.6, 0.4, np.nan, 0.55]
    states = smooth_decisions(np.arange(8) * 0.5, scores, "hysteresis", on=0.5, off=-0.5)
    assert states.tolist() == [0, 1, 1, 1, 0, 0, 0, 1]
    assert states.dtype == np.int8


def test_dwell_by_hand():
    t = np.arange(10) * 0.5
    scores = [1, -1, 1, 1, 1, 1, -1, -1, -1, -1.0]
    states = smooth_decisions(t, scores, "dwell", on=0.0, min_dwell_s=1.0)
    # 1 from t=1.0 persists until t=2.0 (1.0 s); 0 from t=3.0 persists until t=4.0.
    assert states.tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 0, 0]


def test_zero_dwell_is_the_plain_threshold():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=200)
    t = np.arange(200) * 0.5
    np.testing.assert_array_equal(smooth_decisions(t, scores, "dwell", on=0.2),
                                  (scores > 0.2).astype(np.int8))
    np.testing.assert_array_equal(smooth_decisions(t, scores, "hysteresis", on=0.2, off=0.2),
                                  (scores > 0.2).astype(np.int8))


@pytest.mark.parametrize("params", [
    dict(mode="hysteresis", on=0.3, off=-0.3),
    dict(mode="dwell", on=0.0, min_dwell_s=1.5),
])
def test_stream_equals_batch(params):
    rng = np.random.default_rng(1)
    scores = np.cumsum(rng.normal(scale=0.3, size=500))
    scores[rng.random(500) < 0.05] = np.nan
    t = np.arange(500) * 0.5
    batch = smooth_decisions(t, scores, **params)
    smoother = DecisionSmoother(**params)
    cuts = np.sort(rng.choice(np.arange(1, 500), size=30, replace=False))
    streamed = np.concatenate([smoother.update(t[a:b], scores[a:b])
                               for a, b in zip(np.r_[0, cuts], np.r_[cuts, 500])])
    np.testing.assert_array_equal(streamed, batch)
    assert np.count_nonzero(np.diff(batch)) < np.count_nonzero(np.diff(scores[~np.isnan(scores)] > 0))


@pytest.mark.parametrize("params, field", [
    (dict(mode="median"), "smoothing.mode"),
    (dict(mode="hysteresis", on=0.0, off=0.5), "smoothing.off"),
    (dict(mode="dwell", min_dwell_s=-1.0), "smoothing.min_dwell_s"),
    (dict(on=float("nan")), "smoothing.on"),
])
def test_bad_parameters(params, field):
    with pytest.raises(ConfigError, match=field):
        DecisionSmoother(**params)
