import numpy as np
import pytest

from distractd.pipeline import (
    FIELD_INDEX, N_FIELDS, SAMPLE_REJECT_REASONS, Recording, StreamProcessor, Windows, empty_block,
    extract_features,
)

GAZE = ["gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch"]


def stream(seconds=40.0, rate_hz=60.0, seed=0, fields=None):
    rng = np.random.default_rng(seed)
    n = int(seconds * rate_hz)
    block = empty_block(n)
    block[:, 0] = np.arange(n) / rate_hz
    names = fields or ["head_x", "head_yaw", *GAZE, "eyelid_r", "confidence"]
    for name in names:
        block[:, FIELD_INDEX[name]] = rng.uniform(0.1, 0.2, n)
    if "confidence" in names:
        block[:, FIELD_INDEX["confidence"]] = 0.9
    if "eyelid_r" in names:
        block[:, FIELD_INDEX["eyelid_r"]] = 1.0
    return block


def run(block, config=None):
    processor = StreamProcessor(config)
    windows = Windows.concat([processor.update(block), processor.flush()])
    return processor, windows


def test_clean_stream_rejects_nothing_and_measures_its_rate():
    processor, windows = run(stream())
    assert processor.rejected == dict.fromkeys(SAMPLE_REJECT_REASONS, 0)
    assert processor.rate_hz == pytest.approx(60.0, rel=1e-9)
    assert processor.n_samples == 2400
    np.testing.assert_allclose(windows.quality, 1.0, rtol=1e-9)


@pytest.mark.parametrize("rate_hz", [30.0, 120.0, 1000.0])
def test_other_rates_are_measured_not_assumed(rate_hz):
    processor, windows = run(stream(seconds=25.0, rate_hz=rate_hz))
    assert processor.rate_hz == pytest.approx(rate_hz, rel=1e-6)
    assert np.all(windows.quality > 0.999)
    assert len(windows) == 31   # ends 10.0 ... 25.0: the last sample is one period before 25 s
    assert not np.isnan(windows.X[:, FEATURE := 10]).any()   # mean_saccade resolvable


def test_nan_burst_is_track_loss_and_good_data_around_it_is_kept():
    block = stream()
    clean = extract_features(Recording(block.copy()))
    block[1200:1320, 1:] = np.nan          # 2 s with only timestamps
    processor, windows = run(block)
    assert processor.rejected["nonfinite_t"] == 0
    np.testing.assert_array_equal(windows.t_end, clean.t_end)
    touched = (windows.t_end > 20.0) & (windows.t_start < 22.0)
    np.testing.assert_array_equal(windows.X[~touched, :10], clean.X[~touched, :10])
    assert windows.quality[touched].min() == pytest.approx(0.8, abs=0.01)


def test_all_nan_stretch_and_bad_timestamps_are_dropped_and_counted():
    block = stream()
    block[600:660, :] = np.nan             # 1 s of all-NaN rows, t included
    block[900, 0] = np.inf
    block[1000:1003, 0] = block[999, 0]    # three duplicates
    block[1500, 0] = block[1400, 0]        # time runs backwards once
    processor, windows = run(block)
    rejected = processor.rejected
    assert rejected["nonfinite_t"] == 61
    assert rejected["duplicate_t"] == 3
    assert rejected["backwards_t"] == 1
    assert rejected["gap"] == 1            # the 1 s hole
    assert processor.rate_hz == pytest.approx(60.0, rel=1e-3)
    hole = (windows.t_start < 11.0) & (windows.t_end > 10.0)
    assert windows.quality[hole].min() == pytest.approx(0.9, abs=0.01)
    assert np.isfinite(windows.X[:, [0, 3, 6, 7, 8, 9]]).all()   # the fields present


def test_dropped_samples_lower_quality_not_rate():
    block = stream(seconds=30.0)
    rng = np.random.default_rng(3)
    keep = rng.random(len(block)) > 0.2
    processor, windows = run(block[keep])
    assert processor.rate_hz == pytest.approx(60.0, rel=0.02)
    assert windows.quality.mean() == pytest.approx(0.8, abs=0.03)
    assert processor.rejected["gap"] == 0


def test_long_gap_skips_empty_windows_and_counts_once():
    block = stream(seconds=60.0)
    block[1200:, 0] += 3600.0              # an hour without samples
    processor, windows = run(block)
    assert processor.rejected["gap"] == 1
    assert (windows.t_end[:-1] < 3600.0).sum() + (windows.t_end >= 3600.0).sum() == len(windows)
    assert len(windows) == 40 + 80         # ends 10 ... 29.5, then 3620.5 ... 3660
    assert windows.quality.min() > 0.0


def test_absurd_values_blank_only_their_field():
    block = stream()
    block[100, FIELD_INDEX["head_x"]] = 1e9
    block[101, FIELD_INDEX["gaze_r_yaw"]] = -np.inf
    block[102, FIELD_INDEX["confidence"]] = 7.0
    block[103, FIELD_INDEX["eyelid_r"]] = -3.0
    processor, windows = run(block)
    assert processor.rejected["out_of_range"] == 3
    assert processor.rejected["nonfinite_value"] == 1
    assert np.abs(windows.X[:, :10][np.isfinite(windows.X[:, :10])]).max() < 1.0


def test_low_confidence_is_track_loss_counted():
    block = stream()
    block[300:330, FIELD_INDEX["confidence"]] = 0.1
    processor, windows = run(block)
    assert processor.rejected["low_confidence"] == 30
    assert windows.quality[0] == pytest.approx(570 / 600)


def test_only_gaze_fields():
    processor, windows = run(stream(fields=GAZE))
    names = windows.X
    assert np.isnan(names[:, 0]).all() and np.isnan(names[:, 14]).all()   # head_x, perclos
    assert np.isfinite(names[:, 6:11]).all()                              # gaze, saccade
    assert processor.rejected == dict.fromkeys(SAMPLE_REJECT_REASONS, 0)


def test_garbage_never_raises():
    rng = np.random.default_rng(7)
    processor = StreamProcessor()
    parts = []
    for _ in range(50):
        block = rng.choice([np.nan, np.inf, -np.inf, 1e300, -1.0, 0.5, 3.0], size=(40, N_FIELDS))
        block[:, 0] = np.where(rng.random(40) < 0.8, np.cumsum(rng.uniform(0, 0.05, 40)), block[:, 0])
        parts.append(processor.update(block))
    windows = Windows.concat(parts)
    assert sum(processor.rejected.values()) > 0
    assert np.all((windows.quality >= 0) & (windows.quality <= 1))


def test_one_hertz_export_keeps_statistics_and_marks_events_unavailable():
    block = stream(seconds=120.0, rate_hz=1.0)
    block[:, 0] += np.random.default_rng(2).uniform(-0.02, 0.02, len(block))
    block[::7, FIELD_INDEX["confidence"]] = 0.0          # track losses: not resolvable as blinks
    processor, windows = run(block)
    assert processor.rate_hz == pytest.approx(1.0, rel=0.05)
    assert processor.rejected["gap"] == 0
    assert np.isfinite(windows.X[:, [0, 3, 6, 7, 8, 9]]).all()
    assert np.isnan(windows.X[:, 10:14]).all()           # saccade, blink, frequency, duration
    assert np.isfinite(windows.X[5:, 14]).all()          # PERCLOS is a time fraction: available
    assert windows.quality.mean() == pytest.approx(6 / 7, abs=0.08)
