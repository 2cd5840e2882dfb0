"""Parquet recordings: lossless round trip, files written by other tools, errors, CLI by extension."""

import json
import logging
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from distractd import RecordingError, SchemaError
from distractd.cli import main
from distractd.pipeline import (
    FIELD_INDEX, FIELDS, Recording, read_recording, read_recordings, write_recording,
)
from distractd.pipeline.formats import write_table
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
    ({"t": [0.0], "confidence": ["high"]},
     "column confidence must be numeric or boolean, got string"),
    ({"t": ["0.0"]}, r"column t must be numeric or boolean \(or a timestamp\), got string"),
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


def test_missing_values_are_written_as_nulls_that_aggregates_skip(tmp_path, drive):
    """Polars, DuckDB and Arrow skip nulls in a mean but propagate NaN: a missing value is
    written as null, so their means over a distractd file equal numpy's nanmean."""
    path = tmp_path / "drive.parquet"
    write_recording(drive, path)
    table = pq.read_table(path)
    checked = 0
    for name in FIELDS:
        column, values = table.column(name), drive.column(name)
        assert column.null_count == int(np.isnan(values).sum()), name
        assert not pc.any(pc.is_nan(column)).as_py(), name  # no NaN left in the file
        if np.isfinite(values).any():
            assert pc.mean(column).as_py() == pytest.approx(np.nanmean(values), rel=1e-12)
            checked += column.null_count > 0
    assert checked >= 5  # track loss left gaps in the gaze, head and pupil columns
    assert table.column("label").null_count == int((drive.labels == -1).sum()) > 0
    assert pc.mean(table.column("label")).as_py() == pytest.approx(
        drive.labels[drive.labels >= 0].mean())


def test_nan_and_null_are_read_alike(tmp_path):
    path = tmp_path / "mixed.parquet"
    pq.write_table(pa.table({"t": [0.0, 0.1, 0.2, 0.3],
                             "pupil_r": pa.array([3.1, np.nan, None, 3.4], from_pandas=False),
                             "head_x": pa.array([np.nan, np.nan, np.nan, None],
                                                from_pandas=False)}), path)
    assert pq.read_table(path).column("pupil_r").null_count == 1  # one NaN, one null on disk
    back = read_recording(path)
    np.testing.assert_array_equal(back.column("pupil_r"), [3.1, np.nan, np.nan, 3.4])
    assert np.isnan(back.column("head_x")).all()
    assert "head_x" not in back.fields_present


def test_boolean_flags_and_label_are_read_as_ones_and_zeros(tmp_path):
    path = tmp_path / "flags.parquet"
    pq.write_table(pa.table({"t": [0.0, 0.1, 0.2],
                             "blink": pa.array([True, False, None]),
                             "saccade": pa.array([False, True, True]),
                             "label": pa.array([True, None, False])}), path)
    back = read_recording(path)
    np.testing.assert_array_equal(back.column("blink"), [1.0, 0.0, np.nan])
    np.testing.assert_array_equal(back.column("saccade"), [0.0, 1.0, 1.0])
    np.testing.assert_array_equal(back.labels, [1, -1, 0])


def test_datetime_t_is_read_as_unix_epoch_seconds(tmp_path):
    """A timestamp ``t`` (any unit, with or without a time zone) becomes Unix epoch seconds; a
    duration ``t`` seconds; the 60 Hz periods survive to float64's resolution at today's epoch."""
    start = datetime(2026, 11, 25, 21, 0, 0, tzinfo=timezone.utc)
    ns = [k * 16_666_667 for k in range(5)]  # 60 Hz in nanoseconds
    expected = start.timestamp() + np.array(ns) / 1e9
    naive_us = [start.replace(tzinfo=None) + timedelta(microseconds=n // 1000) for n in ns]
    epoch_ns = int(start.timestamp()) * 10**9
    cases = {
        "utc-ns": pa.array([epoch_ns + n for n in ns], type=pa.timestamp("ns", tz="UTC")),
        "berlin-ns": pa.array([epoch_ns + n for n in ns],
                              type=pa.timestamp("ns", tz="Europe/Berlin")),
        "naive-us": pa.array(naive_us, type=pa.timestamp("us")),
        "ms": pa.array([epoch_ns // 10**6 + n // 10**6 for n in ns], type=pa.timestamp("ms")),
    }
    for name, t in cases.items():
        path = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table({"t": t, "gaze_r_yaw": [0.0, 0.1, 0.2, 0.3, 0.4]}), path)
        back = read_recording(path)
        tolerance = 1e-3 if name == "ms" else 1e-6
        np.testing.assert_allclose(back.t, expected, rtol=0, atol=tolerance, err_msg=name)
        np.testing.assert_allclose(np.diff(back.t), 1 / 60, rtol=0, atol=2 * tolerance)
    durations = tmp_path / "duration.parquet"
    pq.write_table(pa.table({"t": pa.array(ns, type=pa.duration("ns"))}), durations)
    np.testing.assert_allclose(read_recording(durations).t, np.array(ns) / 1e9, rtol=0,
                               atol=1e-15)
    empty = tmp_path / "gap.parquet"
    pq.write_table(pa.table({"t": pa.array([epoch_ns, None], type=pa.timestamp("ns"))}), empty)
    with pytest.raises(SchemaError, match="row 1: t must not be empty"):
        read_recording(empty)


def test_extra_columns_are_ignored_with_one_note(tmp_path, caplog):
    path = tmp_path / "fleet.parquet"
    pq.write_table(pa.table({"vehicle": ["car-12"] * 3, "t": [0.0, 0.1, 0.2],
                             "gaze_yaw": [0.1, 0.2, 0.3], "gaze_r_yaw": [0.01, 0.02, 0.03]}),
                   path)
    with caplog.at_level(logging.WARNING):
        back = read_recording(path)
    np.testing.assert_array_equal(back.column("gaze_r_yaw"), [0.01, 0.02, 0.03])
    assert back.fields_present == ("t", "gaze_r_yaw")
    assert [r.getMessage() for r in caplog.records] == [
        f"{path}: ignored columns that are not canonical fields: vehicle, gaze_yaw"]
    # through the command: one line on standard error, no traceback, the command succeeds
    done = subprocess.run([sys.executable, "-m", "distractd.cli", "info", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"{path}: ignored columns that are not canonical fields: vehicle, gaze_yaw"]


def test_feature_tables_write_missing_values_as_nulls(tmp_path):
    """``features --out x.parquet`` (write_table): a float column's NaN is a null, so a mean in
    Polars or DuckDB is over the windows that have the feature; integer columns are kept."""
    path = tmp_path / "windows.parquet"
    write_table(path, {"t_end": np.array([10.0, 10.5, 11.0]),
                       "label": np.array([1, -1, 0], dtype=np.int8),
                       "perclos": np.array([0.2, np.nan, 0.4])})
    table = pq.read_table(path)
    assert table.schema.field("label").type == pa.int8() and table.column("label").null_count == 0
    assert table.column("perclos").null_count == 1
    assert pc.mean(table.column("perclos")).as_py() == pytest.approx(0.3)
