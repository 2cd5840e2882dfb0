"""Parquet recordings: lossless round trip, files written by other tools, errors, CLI by extension."""

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from distractd import RecordingError, SchemaError
from distractd.cli import main
from distractd.pipeline import (
    FIELD_INDEX, FIELDS, Recording, read_recording, read_recordings, write_recording,
)
from distractd.simulators import simulate_drive


@pytest.fixture(scope="module")
def drive():
    """A short simulated drive: every field, NaN during track loss, duplicates, labels of both
    kinds and unknown, rich metadata."""
    recording = simulate_drive(3, 60.0, protocol="cognitive", drive=1)
    recording.labels[:50] = -1
    recording.labels[1000:1600] = 1  # a minute holds no task section: mark one
    recording.meta.update(stream_id="car-12/eyes", drive_side="right", rate_hz=59.94,
                          cohort={"seed": 7, "index": 2, "size": 5})
    return recording


def test_round_trip_is_lossless(tmp_path, drive):
    path = tmp_path / "drive.parquet"
    write_recording(drive, path)
    back = read_recording(path)
    assert back.samples.dtype == np.float64 and back.labels.dtype == np.int8
    # bit for bit, NaN (track loss, absent fields) and -0.0 included
    assert back.samples.tobytes() == drive.samples.tobytes()
    np.testing.assert_array_equal(back.labels, drive.labels)
    assert set(np.unique(back.labels)) == {-1, 0, 1}
    assert back.meta == json.loads(json.dumps(drive.meta))
    assert back.meta["stream_id"] == "car-12/eyes" and back.meta["drive_side"] == "right"
    assert back.meta["rate_hz"] == 59.94 and back.meta["cohort"]["index"] == 2


def test_file_is_plain_columns_for_other_tools(tmp_path, drive):
    path = tmp_path / "drive.parquet"
    write_recording(drive, path)
    table = pq.read_table(path)
    assert table.column_names == [*FIELDS, "label"]
    assert all(table.schema.field(name).type == pa.float64() for name in FIELDS)
    assert table.schema.field("label").type == pa.int8()
    assert table.num_rows == drive.n_samples
    np.testing.assert_array_equal(table.column("gaze_r_yaw").to_numpy(),
                                  drive.column("gaze_r_yaw"))
    header = json.loads(table.schema.metadata[b"distractd"])
    assert header["format"] == "distractd-recording" and header["meta"]["drive_side"] == "right"


def test_foreign_file_is_read_like_a_csv(tmp_path):
    """A Parquet file from another tool: canonical columns in any order and numeric type, nulls
    as missing values, a nullable integer label column, no distractd header."""
    path = tmp_path / "fleet.parquet"
    table = pa.table({
        "gaze_r_yaw": pa.array([0.1, None, 0.3, 0.4], type=pa.float32()),
        "label": pa.array([1, None, 0, 0], type=pa.int64()),
        "t": pa.array([0.0, 0.5, 1.0, 1.5]),
        "confidence": pa.array([1, 1, 0, 1], type=pa.int16()),
    })
    pq.write_table(table, path)
    back = read_recording(path)
    np.testing.assert_array_equal(back.t, [0.0, 0.5, 1.0, 1.5])
    np.testing.assert_allclose(back.column("gaze_r_yaw"), [0.1, np.nan, 0.3, 0.4], rtol=1e-7)
    np.testing.assert_array_equal(back.column("confidence"), [1, 1, 0, 1])
    np.testing.assert_array_equal(back.labels, [1, -1, 0, 0])
    assert np.isnan(back.column("head_x")).all()
    assert back.meta == {"source": str(path)}


@pytest.mark.parametrize("columns, message", [
    ({"gaze_r_yaw": [0.1]}, "fields must include 't'"),
    ({"t": [0.0], "gaze_yaw": [0.1]}, "unknown field 'gaze_yaw'"),
    ({"t": [0.0], "confidence": ["high"]}, "column confidence must be numeric, got string"),
    ({"t": [0.0, 1.0], "label": [1, 2]}, r"label\[1\] must be 1, 0, -1 or null, got 2.0"),
    ({"t": [0.0, 2.0, 1.0]}, "row 2: t must not decrease, got 1.0 after 2.0"),
    ({"t": [0.0, None]}, "row 1: t must not be empty"),
])
def test_malformed_foreign_file_names_the_column_and_value(tmp_path, columns, message):
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table(columns), path)
    with pytest.raises(SchemaError, match=message):
        read_recording(path)


def test_corrupt_file_and_foreign_header_are_recording_errors(tmp_path, drive, capsys):
    corrupt = tmp_path / "corrupt.parquet"
    write_recording(drive, corrupt)
    corrupt.write_bytes(corrupt.read_bytes()[:2000])
    with pytest.raises(RecordingError, match="unreadable Parquet recording"):
        read_recording(corrupt)
    assert main(["info", str(corrupt)]) == 1  # one line, no traceback
    err = capsys.readouterr().err.strip()
    assert "unreadable Parquet recording" in err and "Traceback" not in err
    newer = tmp_path / "newer.parquet"
    table = pa.table({"t": [0.0]}).replace_schema_metadata(
        {b"distractd": json.dumps({"format": "distractd-recording", "version": 99})})
    pq.write_table(table, newer)
    with pytest.raises(RecordingError, match="header.version 99 is not supported"):
        read_recording(newer)


def test_cli_selects_parquet_by_extension(tmp_path):
    """simulate --out, convert both ways and read_recordings on a folder choose Parquet by the
    file's extension."""
    folder = tmp_path / "fleet"
    assert main(["simulate", "--seed", "4", "--duration", "30", "--cohort", "2",
                 "--out", str(folder / "drive.parquet")]) == 0
    files = sorted(folder.iterdir())
    assert [f.name for f in files] == ["drive_00.parquet", "drive_01.parquet"]
    assert pq.read_table(files[0]).num_rows > 0
    binary, again = tmp_path / "a.npz", tmp_path / "b.parquet"
    assert main(["convert", str(files[0]), str(binary)]) == 0
    assert main(["convert", str(binary), str(again)]) == 0
    original, converted = read_recording(files[0]), read_recording(again)
    assert converted.samples.tobytes() == original.samples.tobytes()
    np.testing.assert_array_equal(converted.labels, original.labels)
    assert converted.meta == original.meta
    recordings = read_recordings(folder)
    assert [r.meta["driver_id"] for r in recordings] == [original.meta["driver_id"],
                                                         read_recording(files[1]).meta["driver_id"]]


def test_write_keeps_a_recording_without_labels(tmp_path):
    block = np.full((3, len(FIELDS)), np.nan)
    block[:, FIELD_INDEX["t"]] = [0.0, 0.0, 0.1]  # a duplicate, kept as recorded
    path = tmp_path / "bare.parquet"
    write_recording(Recording(block), path)
    back = read_recording(path)
    assert back.samples.tobytes() == block.tobytes()
    np.testing.assert_array_equal(back.labels, [-1, -1, -1])
