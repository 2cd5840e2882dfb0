"""The per-stream running baseline: causal, robust, offset- and scale-free, stream equals batch."""

import numpy as np
import pytest

from distractd import ConfigError
from distractd.pipeline import (
    FEATURE_NAMES, PipelineConfig, RunningBaseline, StreamProcessor, extract_features,
)
from distractd.pipeline._baseline import CLIP


def windows(n=1200, n_features=4, hop_s=0.5, seed=0):
    rng = np.random.default_rng(seed)
    t = 10.0 + hop_s * np.arange(n)
    X = rng.normal(size=(n, n_features)) + np.sin(t / 200.0)[:, None]
    X[rng.random(X.shape) < 0.05] = np.nan
    return t, X


def test_stream_equals_batch_over_random_splits():
    t, X = windows()
    batch = RunningBaseline(X.shape[1]).update(t, X)
    rng = np.random.default_rng(1)
    cuts = np.sort(rng.choice(np.arange(1, len(t)), 40, replace=False))
    baseline = RunningBaseline(X.shape[1])
    parts = [baseline.update(t[lo:hi], X[lo:hi]) for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(t)])]
    np.testing.assert_array_equal(np.vstack(parts), batch)


def test_causal_a_window_never_sees_the_future():
    t, X = windows()
    Z = RunningBaseline(X.shape[1]).update(t, X)
    changed = X.copy()
    changed[700:] += 50.0
    Z_changed = RunningBaseline(X.shape[1]).update(t, changed)
    np.testing.assert_array_equal(Z[:700], Z_changed[:700])
    assert not np.allclose(Z[700:710], Z_changed[700:710], equal_nan=True)


def test_each_drivers_offset_and_scale_drop_out():
    t, X = windows()
    Z = RunningBaseline(X.shape[1]).update(t, X)
    other = X * np.array([3.0, 0.01, 200.0, 1.0]) + np.array([-40.0, 7.0, 1e3, 0.0])
    Z_other = RunningBaseline(X.shape[1]).update(t, other)
    np.testing.assert_allclose(Z_other, Z, atol=1e-9)


def test_warm_up_missing_values_and_ready_flag():
    t, X = windows(n=400)
    baseline = RunningBaseline(X.shape[1], memory_s=300.0, spacing_s=5.0, warmup_s=60.0)
    Z = baseline.update(t[:100], X[:100])  # 50 s of windows: still warming
    assert np.isnan(Z).all() and not baseline.ready
    Z = baseline.update(t[100:], X[100:])
    assert baseline.ready
    assert np.array_equal(np.isnan(Z[50:]), np.isnan(X[150:]))  # NaN only where the feature is
    first_ready = t[100:][np.isfinite(Z[:, 0])][0]
    assert first_ready - t[0] == pytest.approx(60.0)


def test_standardised_values_are_robust_and_bounded():
    t = np.arange(1.0, 601.0)
    X = np.where(t % 50 == 0, 1e6, np.sin(t))[:, None]  # rare wild windows in the baseline
    Z = RunningBaseline(1, spacing_s=1.0, warmup_s=30.0).update(t, X)
    tame = Z[100:][X[100:, 0] < 1e6, 0]
    assert np.abs(tame).max() < 3.0  # the wild windows do not inflate the scale
    assert np.nanmax(np.abs(Z)) == CLIP  # and they are clipped themselves


def test_a_constant_feature_with_rare_bursts_has_a_finite_scale():
    t = np.arange(1.0, 301.0)
    lost = np.where(t % 37 == 0, 0.4, 0.0)[:, None]  # track-loss fraction: 0 most of the time
    Z = RunningBaseline(1, spacing_s=1.0, warmup_s=30.0).update(t, lost)
    assert np.isfinite(Z[60:]).all() and Z[60:].max() > 2.0


def test_reset_forgets_the_past():
    t, X = windows(n=400)
    baseline = RunningBaseline(X.shape[1])
    baseline.update(t[:300], X[:300])
    baseline.reset()
    assert np.isnan(baseline.update(t[300:], X[300:])[:100]).all() and not baseline.ready


@pytest.mark.parametrize("kwargs, message", [
    ({"memory_s": 0.0}, "baseline.memory_s"), ({"spacing_s": -1.0}, "baseline.spacing_s"),
    ({"min_entries": 1}, "baseline.min_entries"),
])
def test_bad_settings_name_the_field(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        RunningBaseline(3, **kwargs)


def test_the_pipeline_applies_the_same_baseline_in_stream_and_batch(make_drive):
    recording = make_drive(seconds=200.0)
    config = PipelineConfig(baseline=True, baseline_warmup_s=30.0)
    raw = extract_features(recording, PipelineConfig())
    expected = RunningBaseline.from_config(config, FEATURE_NAMES).update(raw.t_end, raw.X)
    windows = extract_features(recording, config)
    np.testing.assert_array_equal(windows.X, expected)
    processor = StreamProcessor(config)
    parts = [processor.update(recording.samples[lo:lo + 997], recording.labels[lo:lo + 997])
             for lo in range(0, recording.n_samples, 997)] + [processor.flush()]
    np.testing.assert_array_equal(np.vstack([w.X for w in parts]), expected)
    assert processor.baseline.ready
