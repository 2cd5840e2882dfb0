"""Hostile files given to the commands (issue 37, items 6 and 8): each is one line and the right
exit status, never a traceback; what should be refused is refused, naming the line and value;
what a user's tools write (Excel's "CSV UTF-8", a Taamneh et al. subject file) is read."""

import json
from pathlib import Path

import numpy as np
import pytest

from distractd.cli import main
from distractd.pipeline import read_recording

_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
_HEADER = "name,family,start_s,end_s,expected,limit_s\n"


def _refuse(constant):
    raise AssertionError(f"{constant} is not JSON")


def _one_line_error(capsys, command):
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err[-2000:]
    assert err.startswith(f"distractd {command}: error: ")
    return err.strip()


@pytest.mark.parametrize("row, message", [
    ("a" * 200_000 + ",lizard,10,20,long_distraction,5",
     "cannot be read: field larger than field limit (131072)"),
    (b"\xff,lizard,10,20,long_distraction,5", "cannot be read: not UTF-8 text (byte 0xff"),
    ("a,lizard,10,20,long_distraction,-5", "line 2: limit_s must be > 0 and <= 1e+12 s, "
                                           "got '-5'"),
    ("a,lizard,10,20,long_distraction,1e308", "line 2: limit_s must be > 0 and <= 1e+12 s, "
                                              "got '1e308'"),
    ("a,lizard,1e308,1e308,long_distraction,5", "line 2: start_s must be within +-1e+12 s, "
                                                "got '1e308'"),
    ("a,lizard,\u0661\u0660,20,long_distraction,5",
     "line 2: start_s must be a number, got '\u0661\u0660' (ASCII digits only)"),
])
def test_bad_annotations_are_refused_in_one_line(tmp_path, capsys, row, message):
    path = tmp_path / "annotations.csv"
    path.write_bytes(_HEADER.encode() + (row if isinstance(row, bytes) else row.encode()) + b"\n")
    assert main(["conformance", "--recording", tmp_path / "none.npz", "--annotations", path,
                 "--out", tmp_path]) == 2
    line = _one_line_error(capsys, "conformance")
    assert line.startswith(f"distractd conformance: error: {path}") and message in line, line


def test_annotations_from_excel_are_read(tmp_path, capsys):
    """Excel's "CSV UTF-8" starts with a byte-order mark: it was refused as missing the column
    'name'. Read, the command goes on to the recording (missing here: exit 1, not 2)."""
    path = tmp_path / "annotations.csv"
    path.write_text(_HEADER + "a,lizard,10,20.5,long_distraction,5\n", encoding="utf-8-sig")
    assert main(["conformance", "--recording", tmp_path / "none.npz", "--annotations", path,
                 "--out", tmp_path]) == 1
    assert _one_line_error(capsys, "conformance") == (f"distractd conformance: error: "
                                                      f"{tmp_path / 'none.npz'}: no such file "
                                                      f"or folder")


def test_a_recording_csv_from_excel_is_read_and_other_digits_are_refused(tmp_path, capsys):
    path = tmp_path / "excel.csv"
    path.write_text("t,head_yaw\n0,0.1\n0.1,0.2\n", encoding="utf-8-sig")
    assert read_recording(path).t.tolist() == [0.0, 0.1]
    assert main(["info", path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["samples"] == 2
    path.write_text("t,head_yaw\n0,0.1\n\u0661,0.2\n", encoding="utf-8")
    assert main(["info", path]) == 1
    assert _one_line_error(capsys, "info").endswith(
        f"{path}:3: t must be a number, got '\u0661' (ASCII digits only)")


def test_info_on_timestamps_near_the_largest_float(tmp_path, capsys):
    parquet = pytest.importorskip("pyarrow.parquet")
    pyarrow = pytest.importorskip("pyarrow")
    for name, t, duration in (("same", np.full(100, 1e308), 0.0),
                              ("spread", np.array([-1e308, 1e308, 1.7e308]), None)):
        path = tmp_path / f"{name}.parquet"
        parquet.write_table(pyarrow.table({"t": t, "head_yaw": np.zeros(len(t))}), path)
        assert main(["info", path, "--json"]) == 0
        captured = capsys.readouterr()
        summary = json.loads(captured.out, parse_constant=_refuse)    # no Infinity or NaN
        assert summary["samples"] == len(t) and summary["duration_s"] == duration
        assert captured.err == ""                   # no numpy overflow warning either
    assert summary["imperfections"]["jitter_ms"] is None
    assert main(["info", tmp_path / "same.parquet"]) == 0
    assert "duplicates" in capsys.readouterr().out


def test_info_reads_the_taamneh_subject_files_that_predict_reads(capsys):
    subject = _DATA / "taamneh" / "T003.csv"      # a development-half driver
    if not subject.is_file():
        pytest.skip(f"{subject} is not there (see data/README.md)")
    assert main(["info", subject, "--json"]) == 0
    summaries = json.loads(capsys.readouterr().out)
    assert [s["meta"]["recording_id"] for s in summaries] == [
        f"T003-d{drive}" for drive in (2, 3, 4, 5, 6, 7, 8)]
    assert all(s["samples"] > 100 and s["rate_hz"] == pytest.approx(1.0) for s in summaries)
