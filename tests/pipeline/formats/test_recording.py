import numpy as np
import pytest

from distractd import RecordingError, SchemaError
from distractd.cli import main
from distractd.pipeline import (
    FIELD_INDEX, Recording, block_from_maps, describe, label_intervals, labels_from_intervals,
    read_intervals, read_recording, write_intervals, write_recording,
)


@pytest.fixture
def recording():
    rng = np.random.default_rng(0)
    n = 500
    t = np.arange(n) / 60.0 + rng.normal(0, 1e-3, n)
    t[100] = t[99]  # a duplicate
    maps = [{"t": float(ti), "gaze_r_yaw": float(v), "confidence": 0.95} for ti, v in
            zip(t, rng.normal(0, 0.05, n))]
    block = block_from_maps(maps)
    block[10:20, FIELD_INDEX["gaze_r_yaw"]] = np.nan
    labels = np.r_[np.full(200, 0), np.full(100, 1), np.full(200, -1)]
    return Recording(block, labels, {"driver_id": "d7", "rate_hz": 60.0, "source": "test"})


@pytest.mark.parametrize("suffix", [".bin", ".npz", ".drec"])
def test_binary_round_trip_is_exact(tmp_path, recording, suffix):
    path = tmp_path / f"drive{suffix}"
    write_recording(recording, path)
    assert path.exists()
    back = read_recording(path)
    np.testing.assert_array_equal(back.samples, recording.samples)  # NaN compare equal here
    np.testing.assert_array_equal(back.labels, recording.labels)
    assert back.meta == recording.meta


def test_csv_round_trip_keeps_values_labels_and_nan(tmp_path, recording):
    path = tmp_path / "drive.csv"
    write_recording(recording, path)
    header = path.read_text().splitlines()[0]
    assert header == "t,gaze_r_yaw,confidence,label"
    back = read_recording(path)
    np.testing.assert_array_equal(back.samples, recording.samples)
    np.testing.assert_array_equal(back.labels, recording.labels)


def test_cli_convert_both_directions_is_lossless_for_binary(tmp_path, recording):
    binary, text, again = tmp_path / "a.bin", tmp_path / "a.csv", tmp_path / "b.bin"
    write_recording(recording, binary)
    assert main(["convert", str(binary), str(text)]) == 0
    assert main(["convert", str(text), str(again)]) == 0
    np.testing.assert_array_equal(read_recording(again).samples, recording.samples)


@pytest.mark.parametrize("content, message", [
    ("gaze_r_yaw,label\n0.1,1\n", "header must name a 't' column"),
    ("t,gaze_r_yaw\n0.0,0.1\n0.1,abc\n", r":3: gaze_r_yaw must be a number, got 'abc'"),
    ("t,gaze_r_yaw\n0.0,0.1\n0.2,0.1\n0.1,0.1\n", r":4: t must not decrease, got 0.1 after 0.2"),
    ("t,label\n0.0,2\n", r":2: label must be 1, 0 or empty, got '2'"),
    ("t,gaze_r_yaw\n0.0\n", r":2: expected 2 cells, got 1"),
    ("t,gaze_r_yaw\n,0.1\n", r":2: t must not be empty"),
    ("", "empty file"),
])
def test_malformed_csv_names_line_field_and_value(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(SchemaError, match=message):
        read_recording(path)


def test_corrupt_and_foreign_binary_files_raise_recording_error(tmp_path, recording):
    path = tmp_path / "drive.bin"
    write_recording(recording, path)
    truncated = tmp_path / "truncated.bin"
    truncated.write_bytes(path.read_bytes()[:200])
    with pytest.raises(RecordingError, match="unreadable recording"):
        read_recording(truncated)
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, x=np.zeros(3))
    with pytest.raises(RecordingError, match="not a distractd recording"):
        read_recording(foreign)


def test_label_intervals_round_trip(tmp_path, recording):
    intervals = label_intervals(recording.t, recording.labels)
    assert [label for *_, label in intervals] == [0, 1]
    assert intervals[0][1] == intervals[1][0] == recording.t[200]
    np.testing.assert_array_equal(labels_from_intervals(recording.t, intervals), recording.labels)
    path = tmp_path / "intervals.csv"
    write_intervals(intervals, path)
    assert read_intervals(path) == intervals


def test_describe_finds_imperfections(recording):
    summary = describe(recording)
    assert summary["samples"] == 500
    assert summary["rate_hz"] == pytest.approx(60, rel=0.01)
    assert summary["imperfections"]["duplicates"] == 1
    assert summary["imperfections"]["jitter_ms"] == pytest.approx(1.41, rel=0.25)
    assert summary["imperfections"]["track_loss_fraction"] == pytest.approx(10 / 500)
    assert summary["labels"] == {"distracted": 100, "attentive": 200, "unknown": 200}
    assert summary["fields_present"] == ["t", "gaze_r_yaw", "confidence"]


def test_info_cli_prints_json(tmp_path, recording, capsys):
    import json
    path = tmp_path / "drive.bin"
    write_recording(recording, path)
    assert main(["info", "--json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["samples"] == 500
    assert main(["info", str(tmp_path / "missing.bin")]) == 1
    assert "missing.bin: cannot be read: no such file" in capsys.readouterr().err
