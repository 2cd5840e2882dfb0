"""The review page's HTTP API, against a real ``distractd review`` subprocess on 127.0.0.1."""

import json
import stat
import subprocess
import sys

import numpy as np
import pytest

from distractd.models.detectors import read_labels
from distractd.pipeline import (
    PipelineConfig, detect_events, extract_features, labels_from_intervals, read_intervals,
    read_recording, write_intervals,
)
from distractd.review import file_digest


@pytest.fixture(scope="module")
def preliminary(review_drive, run_distractd, tmp_path_factory):
    """The per-window CSV and the interval CSV of ``distractd label`` for the drive."""
    folder = tmp_path_factory.mktemp("preliminary")
    run_distractd("label", review_drive, "--method", "kmeans", "--drive-side", "right",
              "--out", folder / "labels.csv")
    return folder / "labels.csv", folder / "labels.intervals.csv"


@pytest.fixture(scope="module")
def labelled_server(review_process, review_drive, preliminary):
    server = review_process(review_drive, "--labels", preliminary[0], "--drive-side", "right")
    yield server
    server.stop()


def test_the_drive_its_windows_and_the_preliminary_labels(labelled_server, review_drive,
                                                          preliminary):
    status, drive = labelled_server.get("/api/drive")
    assert status == 200 and drive["errors"] == []
    recording = read_recording(review_drive)
    windows = extract_features(recording, PipelineConfig(drive_side="right"))
    assert drive["t0"] == pytest.approx(recording.t.min()) and drive["t1"] == pytest.approx(
        recording.t.max())
    assert drive["n_samples"] == recording.n_samples
    np.testing.assert_allclose(drive["windows"]["t_end"], windows.t_end, atol=1e-4)
    assert [panel["id"] for panel in drive["panels"]] == ["gaze", "head", "position", "eyelid",
                                                          "pupil"]
    # the truth row is the recording's labels; the labels row the preliminary labels of the
    # per-window CSV, the very intervals 'distractd label' wrote beside it
    np.testing.assert_allclose(drive["truth"], recording.label_intervals(), atol=1e-4)
    np.testing.assert_allclose(drive["labels"], read_intervals(preliminary[1]), atol=1e-9)
    assert drive["save_to"] == str(preliminary[1])
    # clustering confidence and clusters ride along for "next low-confidence window"
    table = np.genfromtxt(preliminary[0], delimiter=",", names=True)
    assert drive["confidence_kind"] == "clustering"
    confidence = np.array([np.nan if c is None else c for c in drive["windows"]["confidence"]])
    np.testing.assert_allclose(confidence, table["confidence"], atol=1e-4)
    np.testing.assert_array_equal(drive["windows"]["cluster"], table["cluster"])
    assert drive["windows"]["score"] is None and drive["model"] is None


def test_a_view_is_the_min_max_envelope_and_all_samples_once_zoomed(labelled_server,
                                                                    review_drive):
    recording = read_recording(review_drive)
    order = np.argsort(recording.t, kind="stable")
    t, yaw = recording.t[order], np.degrees(recording.column("gaze_r_yaw")[order])
    t0, t1 = float(t[0]), float(t[-1])
    status, view = labelled_server.get(f"/api/view?t0={t0}&t1={t1}&px=300")
    assert status == 200 and not view["full"]
    assert len(view["x"]) == 600                       # two points per pixel, not 36,000
    values = np.array([np.nan if v is None else v for v in view["series"]["gaze_r_yaw"]])
    width = (t1 - t0) / 300
    for bucket in (0, 137, 299):                        # each bucket: the min, then the max
        inside = yaw[(t >= t0 + bucket * width) & (t < t0 + (bucket + 1) * width)]
        if bucket == 299:
            inside = yaw[t >= t0 + bucket * width]
        assert values[2 * bucket] == pytest.approx(np.nanmin(inside), abs=1e-4)
        assert values[2 * bucket + 1] == pytest.approx(np.nanmax(inside), abs=1e-4)
    # zoomed to 5 s: every sample, as recorded
    status, view = labelled_server.get(f"/api/view?t0={t0 + 100}&t1={t0 + 105}&px=300")
    inside = (t >= t0 + 100) & (t <= t0 + 105)
    assert view["full"] and len(view["x"]) == inside.sum()
    np.testing.assert_allclose(view["x"], t[inside], atol=1e-4)
    got = np.array([np.nan if v is None else v for v in view["series"]["gaze_r_yaw"]])
    np.testing.assert_allclose(got, yaw[inside], atol=1e-4)
    # the blinks of the view are the pipeline's own, one run per blink at this zoom
    events = detect_events(recording, PipelineConfig(drive_side="right"))
    flagged = (events.blink[order] == 1) & inside
    starts = np.flatnonzero(flagged & ~np.r_[False, flagged[:-1]])
    assert [run[0] for run in view["runs"]["blink"] if run[1] >= t0 + 100] == pytest.approx(
        t[starts].tolist(), abs=1e-4)


def test_bad_view_and_feature_requests_get_one_line(labelled_server):
    for query in ("t0=5&t1=1&px=100", "t0=0&t1=nan&px=100", "t0=0&t1=10&px=0", "t1=10"):
        status, body = labelled_server.get(f"/api/view?{query}")
        assert status == 400 and "view needs" in body["error"]
    status, body = labelled_server.get("/api/feature?name=mean_nothing")
    assert status == 400 and body["error"] == "feature 'mean_nothing' is not a window feature"
    status, body = labelled_server.get("/api/feature?name=sd_gaze_r_yaw")
    assert status == 200 and len(body["values"]) > 1000


def test_save_writes_what_train_reads_and_keeps_the_previous_file(labelled_server, review_drive,
                                                                   preliminary):
    interval_csv = preliminary[1]
    before = interval_csv.read_bytes()
    interval_csv.chmod(0o640)
    edited = [[0.0, 100.25, 0], [100.25, 160.5, 1], [300.0, 420.0, 1]]
    status, report = labelled_server.post("/api/labels", {"intervals": edited})
    assert status == 200, report
    assert report == {"path": str(interval_csv), "backup": str(interval_csv) + ".bak.1",
                      "intervals": 3, "reviewed": 0, "digest": file_digest(interval_csv)}
    assert read_labels(interval_csv) == ("intervals", [tuple(row) for row in edited])
    assert (interval_csv.parent / (interval_csv.name + ".bak.1")).read_bytes() == before
    assert not list(interval_csv.parent.glob(".*.tmp"))     # the temporary files are gone
    assert stat.S_IMODE(interval_csv.stat().st_mode) == 0o640   # the file keeps its permissions
    # rejected edits name the row and leave the file as it was
    saved = interval_csv.read_bytes()
    for body, message in (
            ({"intervals": [[0, 10, 1], [5, 20, 0]]}, "overlap"),
            ({"intervals": [[0, 10, 2]]}, "labels.intervals[0] label must be 1 or 0, got 2"),
            ({"intervals": [[10, 5, 1]]}, "labels.intervals[0] needs finite start < end"),
            ({"intervals": [[0, 9000, 1]]}, "lies outside the recording"),
            ({"intervals": "all"}, "labels.intervals must be a list"),
            ({"intervals": [], "reviewed": [[5, 2]]},
             "labels.reviewed[0] must be [start_s, end_s] with finite start < end, got [5, 2]"),
            ({"intervals": [], "reviewed": [[0, 9000]]}, "labels.reviewed: interval 1"),
            ({"intervals": [], "reviewed": {"a": 1}}, "labels.reviewed must be a list"),
            ({"labels": []}, "the body must be"),
            ({"intervals": [], "digest": 5}, "the body must be"),
            (json.dumps({"intervals": []}).encode(), "the body must be"),    # no digest
            (b"{not json", "the body is not JSON"),
            (b"[" * 100_000 + b"]" * 100_000, "the body nests JSON too deeply")):
        status, answer = labelled_server.post("/api/labels", body)
        assert status == 400 and message in answer["error"], answer
    assert interval_csv.read_bytes() == saved


def test_a_label_file_of_another_drive_is_named_and_never_overwritten(review_server,
                                                                      review_drive, tmp_path):
    other = tmp_path / "other.intervals.csv"
    write_intervals([(0.0, 300.0, 0), (300.0, 1500.0, 1)], other)   # a 25-minute drive's
    content = other.read_bytes()
    server = review_server(review_drive, "--labels", other)
    status, drive = server.get("/api/drive")
    assert status == 200
    assert drive["errors"][0].startswith(f"{other}: interval 2 (300.0-1500.0 s) lies outside "
                                         f"the recording (")
    assert "saving is off" in drive["errors"][1]
    # the drive is still shown, with its own labels, and saving is refused
    recording = read_recording(review_drive)
    np.testing.assert_allclose(drive["labels"], recording.label_intervals(), atol=1e-4)
    assert drive["save_to"] is None and len(drive["windows"]["t_end"]) > 1000
    status, answer = server.post("/api/labels", {"intervals": [[0.0, 10.0, 1]]})
    assert status == 409 and answer["error"].startswith("saving is off")
    assert other.read_bytes() == content
    stderr = server.stop()
    assert f"distractd review: error: {other}: interval 2" in stderr
    assert "Traceback" not in stderr


def test_window_rows_that_end_nowhere_in_the_recording_are_named(review_server, review_drive,
                                                                 preliminary, tmp_path):
    shifted = tmp_path / "shifted.csv"
    lines = preliminary[0].read_text().splitlines()
    header = lines[0].split(",")
    at = header.index("t_end")
    rows = [line.split(",") for line in lines[1:]]
    rows[3][at] = repr(float(rows[3][at]) + 0.25)
    shifted.write_text("\n".join([lines[0]] + [",".join(row) for row in rows]) + "\n")
    server = review_server(review_drive, "--labels", shifted, "--drive-side", "right")
    _, drive = server.get("/api/drive")
    assert drive["errors"][0].startswith(f"{shifted}:5: t_end {float(rows[3][at])!r} s is no "
                                         f"window end of the recording")
    assert drive["save_to"] is None


def test_an_unreadable_recording_exits_1_and_other_files_are_one_line_on_the_page(
        review_server, review_drive, tmp_path):
    """Issue 37, item 8: ``review`` of a recording it cannot read served an empty page for
    ever; it exits 1 with one line. A model or label file it cannot use is one line on the page
    and the console, and the drive is shown."""
    for recording, problem in ((tmp_path / "nowhere.npz", "no such file"),
                               (tmp_path, "not a file")):
        result = subprocess.run([sys.executable, "-m", "distractd.cli", "review", recording,
                                 "--port", "0"], capture_output=True, text=True, timeout=600)
        assert result.returncode == 1 and result.stdout == ""
        assert result.stderr == f"distractd review: error: recording {recording}: {problem}\n"
    garbage = tmp_path / "garbage.csv"
    garbage.write_bytes(b"\xff\xfe not a recording\n")
    result = subprocess.run([sys.executable, "-m", "distractd.cli", "review", garbage,
                             "--port", "0"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith(f"distractd review: error: {garbage}")
    assert len(result.stderr.splitlines()) == 1

    server = review_server(review_drive, "--model", tmp_path / "none.npz", "--labels", tmp_path)
    _, drive = server.get("/api/drive")
    assert drive["errors"][:2] == [f"model {tmp_path / 'none.npz'}: no such file",
                                   f"labels {tmp_path}: not a file"]
    assert drive["model"] is None and len(drive["windows"]["t_end"]) > 1000
    assert "Traceback" not in server.stop()


def test_the_page_and_its_assets_come_from_the_package(labelled_server):
    import urllib.request

    for name, kind in (("", "text/html"), ("static/uPlot.iife.min.js", "javascript"),
                       ("static/uPlot.min.css", "text/css"), ("static/review.js", "javascript")):
        with urllib.request.urlopen(labelled_server.url + name, timeout=30) as response:
            assert response.status == 200 and kind in response.headers["Content-Type"]
            assert len(response.read()) > 1000
    status, answer = labelled_server.get("/static/../_server.py")
    assert status == 404
