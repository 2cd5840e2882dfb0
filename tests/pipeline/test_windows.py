import numpy as np
import pytest

from distractd.pipeline import (
    FEATURE_NAMES, FIELD_INDEX, GLANCE_FEATURES, SPATIAL_FIELDS, VEHICLE_FEATURES, PipelineConfig,
    Recording, StreamProcessor, Windows, empty_block, extract_features,
)


def test_feature_names_are_25_then_the_glance_then_the_vehicle_features_in_fixed_order():
    assert len(FEATURE_NAMES) == 49
    assert FEATURE_NAMES[0] == "mean_head_x" and FEATURE_NAMES[14] == "mean_perclos"
    assert FEATURE_NAMES[15:25] == tuple(f"sd_{name}" for name in SPATIAL_FIELDS)
    assert FEATURE_NAMES[25:30] == GLANCE_FEATURES
    assert FEATURE_NAMES[30:] == VEHICLE_FEATURES


@pytest.mark.parametrize("split", ["one", "random", "whole"])
def test_stream_equals_batch(split, make_drive):
    recording = make_drive()
    batch = extract_features(recording)
    processor = StreamProcessor()
    rng = np.random.default_rng(1)
    n = recording.n_samples
    cuts = {"one": np.arange(1, n), "random": np.sort(rng.choice(n, 200, replace=False)),
            "whole": []}[split]
    parts = [processor.update(b, lab) for b, lab in zip(np.split(recording.samples, cuts),
                                                       np.split(recording.labels, cuts))]
    stream = Windows.concat(parts + [processor.flush()])
    assert len(batch) == len(stream) > 200
    assert batch.road_ready.any() and np.isfinite(batch.X[:, 25:]).all()
    for name in Windows._COLUMNS:   # glance state and alerts included
        np.testing.assert_array_equal(getattr(stream, name), getattr(batch, name))
    np.testing.assert_array_equal(stream.X, batch.X)   # bit-identical, NaN included


def test_window_features_match_numpy_over_the_window(make_drive):
    recording = make_drive(seconds=60.0)
    windows = extract_features(recording)
    t = recording.t
    for i in (0, 17, len(windows) - 1):
        inside = (t >= windows.t_start[i]) & (t < windows.t_end[i])
        values = recording.samples[inside][:, 1:11]
        np.testing.assert_allclose(windows.X[i, :10], values.mean(axis=0), rtol=0, atol=1e-12)
        np.testing.assert_allclose(windows.X[i, 15:25], values.std(axis=0, ddof=1), rtol=1e-9)
        assert windows.t_end[i] - windows.t_start[i] == 10.0
        assert windows.quality[i] == pytest.approx(inside.sum() / 600.0, abs=0.01)


def test_windows_are_on_the_hop_grid_and_lag_behind_until_the_flush(make_drive):
    recording = make_drive(seconds=30.0)
    processor = StreamProcessor()
    streamed = processor.update(recording.samples)
    flushed = processor.flush()
    windows = Windows.concat([streamed, flushed])
    np.testing.assert_allclose(np.diff(windows.t_end), 0.5)
    assert np.all(windows.t_end % 0.5 == 0.0)
    lag_s = PipelineConfig().lag_s
    assert recording.t[-1] - lag_s - 0.5 < streamed.t_end[-1] <= recording.t[-1] - lag_s
    assert flushed.t_end.tolist() == [1029.5, 1030.0]   # the last sample is at 1029.98 s
    assert processor.flush().t_end.size == 0


def test_label_rule_majority_and_purity(make_drive):
    recording = make_drive()
    t = recording.t
    for purity in (0.5, 1.0):
        windows = extract_features(recording, PipelineConfig(label_purity=purity))
        for i in range(len(windows)):
            inside = (t >= windows.t_start[i]) & (t < windows.t_end[i])
            known = recording.labels[inside][recording.labels[inside] >= 0]
            share = known.mean() if known.size else np.nan
            if known.size and share > 0.5 and share >= purity:
                assert windows.label[i] == 1
            elif known.size and share < 0.5 and 1 - share >= purity:
                assert windows.label[i] == 0
            else:
                assert windows.label[i] == -1


def test_windows_csv_round_trip(tmp_path, make_drive):
    windows = extract_features(make_drive(seconds=20.0))
    path = tmp_path / "features.csv"
    windows.write_csv(path)
    header = path.read_text().splitlines()[0].split(",")
    assert header == ["t_start", "t_end", "quality", "label", *FEATURE_NAMES]
    data = np.genfromtxt(path, delimiter=",", skip_header=1)
    np.testing.assert_array_equal(data[:, 4:], windows.X)
    np.testing.assert_array_equal(data[:, 1], windows.t_end)
