import csv
import json

import numpy as np
import pytest

from distractd.cli import main
from distractd.pipeline import (
    FEATURE_NAMES, FIELD_INDEX, N_FIELDS, PipelineConfig, Recording, StreamProcessor, empty_block,
    extract_features, write_recording,
)


@pytest.fixture
def recording():
    n = 60 * 30
    block = empty_block(n)
    block[:, 0] = np.arange(n) / 60.0
    for name in ("head_x", "gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch"):
        block[:, FIELD_INDEX[name]] = 0.05
    block[600:606, FIELD_INDEX["gaze_r_yaw"]] = 0.15   # a 6 deg excursion: two saccades
    block[600:606, FIELD_INDEX["gaze_l_yaw"]] = 0.15
    block[900:910, 7:11] = np.nan                      # a 0.17 s track loss: a blink
    block[50, 0] = block[49, 0]                        # a duplicate
    return Recording(block, np.r_[np.zeros(900), np.ones(900)].astype(np.int8))


def test_cli_events_one_row_per_sample(tmp_path, recording):
    write_recording(recording, tmp_path / "drive.bin")
    assert main(["events", str(tmp_path / "drive.bin"), "--out", str(tmp_path / "e.csv")]) == 0
    with open(tmp_path / "e.csv") as file:
        rows = list(csv.DictReader(file))
    assert len(rows) == recording.n_samples
    assert list(rows[0])[:3] == ["t", "saccade", "blink"]
    assert sum(row["saccade"] == "1" for row in rows) == 2
    assert sum(row["blink"] == "1" for row in rows) == 10
    assert rows[50]["rejected"] == "duplicate_t" and rows[50]["saccade"] == ""


def test_cli_features_one_row_per_window(tmp_path, recording):
    write_recording(recording, tmp_path / "drive.csv")
    (tmp_path / "cfg.json").write_text(json.dumps({"hop_s": 1.0}))
    out = tmp_path / "f.csv"
    assert main(["features", str(tmp_path / "drive.csv"), "--out", str(out),
                 "--config", str(tmp_path / "cfg.json")]) == 0
    with open(out) as file:
        rows = list(csv.DictReader(file))
    windows = extract_features(recording, PipelineConfig(hop_s=1.0))
    assert len(rows) == len(windows) == 21   # ends 10 ... 30 s: the last one by the flush
    assert list(rows[0]) == ["t_start", "t_end", "quality", "label", *FEATURE_NAMES]
    assert [int(row["label"]) for row in rows] == windows.label.tolist()


def test_cli_bad_config_is_one_line_error(tmp_path, recording, capsys):
    write_recording(recording, tmp_path / "drive.bin")
    (tmp_path / "cfg.json").write_text(json.dumps({"hop_s": 0.0}))
    assert main(["features", str(tmp_path / "drive.bin"), "--out", str(tmp_path / "f.csv"),
                 "--config", str(tmp_path / "cfg.json")]) == 1
    assert "pipeline.hop_s must be in" in capsys.readouterr().err


def test_interleaved_streams_keep_their_own_state(recording):
    processors = [StreamProcessor() for _ in range(3)]
    outputs = [[] for _ in range(3)]
    for start in range(0, recording.n_samples, 30):
        for k, processor in enumerate(processors):
            block = recording.samples[start:start + 30].copy()
            block[:, FIELD_INDEX["head_x"]] += 0.1 * k
            outputs[k].append(processor.update(block).X[:, 0])
    means = [np.concatenate(out) for out in outputs]
    np.testing.assert_allclose(means[2] - means[0], 0.2)
    assert processors[0].n_samples == recording.n_samples
    assert processors[1].rejected["duplicate_t"] == 1


def test_blocks_of_every_memory_layout_give_the_same_windows(recording):
    """The compiled pass takes one array type (one compile serves every input): a block that is
    read-only, unaligned (a wire buffer at an odd offset) or Fortran-ordered is brought to it."""
    samples = recording.samples
    raw = bytearray(samples.nbytes + 1)
    unaligned = np.frombuffer(raw, np.float64, samples.size, offset=1).reshape(samples.shape)
    unaligned[:] = samples
    assert not unaligned.flags.aligned
    read_only = samples.copy()
    read_only.flags.writeable = False
    layouts = (samples, read_only, unaligned, np.asfortranarray(samples))
    windows = []
    for block in layouts:
        processor = StreamProcessor()
        windows.append([processor.update(block[i:i + 30]) for i in range(0, len(block), 30)]
                       + [processor.flush()])
    for other in windows[1:]:
        for got, want in zip(other, windows[0]):
            np.testing.assert_array_equal(got.X, want.X)
            np.testing.assert_array_equal(got.t_end, want.t_end)
    assert sum(len(w) for w in windows[0]) == 41   # (30 s - 10 s) / 0.5 s + 1


def test_wrong_shape_is_a_schema_error():
    from distractd import SchemaError
    with pytest.raises(SchemaError, match=rf"block must have shape \(n_samples, {N_FIELDS}\)"):
        StreamProcessor().update(np.zeros((4, 5)))
