"""The review page's labels know their recording and are never lost (issue 23, items 13 and 14):
another drive's labels are refused naming both ids; reopening resumes from the corrections saved
before; a file changed since the page loaded it is never overwritten; several generations are
kept. Against real ``distractd review`` subprocesses on 127.0.0.1."""

import json
import shutil

import pytest

from distractd.review import GENERATIONS, file_digest
from distractd.models.detectors import read_labels
from distractd.pipeline import read_intervals, read_recording
from distractd.pipeline.formats import (
    label_sidecar, read_label_identity, read_reviewed, write_label_identity,
)


@pytest.fixture
def labelled_copy(review_drive, run_distractd, tmp_path):
    """A copy of the drive with the per-window and interval CSVs of ``distractd label``."""
    drive = tmp_path / "drive.npz"
    shutil.copy(review_drive, drive)
    run_distractd("label", drive, "--method", "kmeans", "--prior", "none",
                  "--out", tmp_path / "labels.csv")
    return drive, tmp_path / "labels.csv", tmp_path / "labels.intervals.csv"


def test_another_drives_labels_are_refused_naming_both(review_server, run_distractd,
                                                       labelled_copy, tmp_path):
    drive, _, _ = labelled_copy
    short = tmp_path / "short.npz"
    run_distractd("simulate", "--seed", 8, "--duration", 240, "--out", short)
    run_distractd("label", short, "--method", "kmeans", "--prior", "none",
                  "--out", tmp_path / "short.csv")
    theirs = tmp_path / "short.intervals.csv"
    content = theirs.read_bytes()
    server = review_server(drive, "--labels", theirs)
    _, summary = server.get("/api/drive")
    mine, other = read_recording(drive), read_recording(short)
    assert summary["errors"][0].startswith(
        f"{theirs}: labels of recording 'sim-8-d0-cognitive' ({other.t.min():.1f}-240.0 s), not "
        f"of recording '{mine.meta['recording_id']}' ({mine.t.min():.1f}-600.0 s)")
    assert summary["save_to"] is None
    status, answer = server.post("/api/labels", {"intervals": [[0.0, 10.0, 1]]})
    assert status == 409 and theirs.read_bytes() == content
    # without its sidecar (a legacy file) it is refused too: it does not cover the drive
    label_sidecar(theirs).unlink()
    server = review_server(drive, "--labels", theirs)
    _, summary = server.get("/api/drive")
    assert "do not cover recording" in summary["errors"][0] and summary["save_to"] is None


def test_reopening_resumes_from_the_corrections(review_server, labelled_copy):
    drive, windows_csv, intervals_csv = labelled_copy
    server = review_server(drive, "--labels", windows_csv)
    edit = [[0.0, 100.0, 0], [100.0, 200.0, 1]]
    status, report = server.post("/api/labels", {"intervals": edit})
    assert status == 200 and report["path"] == str(intervals_csv)
    server.stop()
    # the README's loop: the same command again shows the corrections, not the preliminary labels
    server = review_server(drive, "--labels", windows_csv)
    _, summary = server.get("/api/drive")
    assert summary["labels"] == edit and summary["errors"] == []
    assert summary["labels_source"] == f"{intervals_csv} (the corrections saved before)"
    assert summary["confidence_kind"] == "clustering"    # the per-window file's, still shown
    sidecar = json.loads(label_sidecar(intervals_csv).read_text())    # the save names its drive
    assert sidecar["recording_id"] == read_recording(drive).meta["recording_id"]
    # without --labels, the corrections saved beside the drive are resumed the same way
    status, _ = review_server(drive).post("/api/labels", {"intervals": edit[:1]})
    assert status == 200
    _, summary = review_server(drive).get("/api/drive")
    assert summary["labels"] == edit[:1]


def test_a_file_changed_since_loading_is_never_overwritten(review_server, labelled_copy):
    drive, _, intervals_csv = labelled_copy
    first = review_server(drive, "--labels", intervals_csv)
    second = review_server(drive, "--labels", intervals_csv)
    status, _ = first.post("/api/labels", {"intervals": [[0.0, 50.0, 1]]})
    assert status == 200
    saved = intervals_csv.read_bytes()
    status, answer = second.post("/api/labels", {"intervals": [[0.0, 60.0, 0]]})
    assert status == 409 and answer["error"].startswith(
        f"labels: {intervals_csv} changed since this page loaded it")
    assert intervals_csv.read_bytes() == saved
    # the first page, which wrote it, goes on saving
    status, _ = first.post("/api/labels", {"intervals": [[0.0, 70.0, 1]]})
    assert status == 200 and read_labels(intervals_csv)[1] == [(0.0, 70.0, 1)]


def test_two_tabs_of_one_page_never_overwrite_each_other(review_server, labelled_copy):
    """Issue 37, item 3: the server kept one digest for all tabs, so a tab loaded before
    another's save replaced it without a word. Each tab sends the digest it loaded."""
    drive, _, intervals_csv = labelled_copy
    server = review_server(drive, "--labels", intervals_csv)
    first, second = {}, {}
    for tab in (first, second):       # both tabs load the page before either saves
        tab["digest"] = server.get("/api/drive")[1]["digest"]
    assert first["digest"] == second["digest"] == file_digest(intervals_csv)
    status, _ = server.post("/api/labels", {"intervals": [[0.0, 50.0, 1]]}, tab=first)
    assert status == 200
    saved = intervals_csv.read_bytes()
    status, answer = server.post("/api/labels", {"intervals": [[0.0, 60.0, 0]]}, tab=second)
    assert status == 409 and answer["error"].startswith(
        f"labels: {intervals_csv} changed since this page loaded it")
    assert intervals_csv.read_bytes() == saved
    # the tab that saved goes on saving; the other, reloaded, starts from its work
    status, _ = server.post("/api/labels", {"intervals": [[0.0, 70.0, 1]]}, tab=first)
    assert status == 200
    _, summary = server.get("/api/drive")
    assert summary["labels"] == [[0.0, 70.0, 1]] and summary["digest"] == first["digest"]
    status, _ = server.post("/api/labels", {"intervals": [[0.0, 80.0, 0]]},
                            tab={"digest": summary["digest"]})
    assert status == 200 and read_labels(intervals_csv)[1] == [(0.0, 80.0, 0)]
    assert "Traceback" not in server.stop()


def test_several_generations_are_kept(review_server, labelled_copy):
    drive, _, intervals_csv = labelled_copy
    preliminary = intervals_csv.read_bytes()
    server = review_server(drive, "--labels", intervals_csv)
    versions = [preliminary]
    for n in range(1, GENERATIONS + 3):
        status, report = server.post("/api/labels", {"intervals": [[0.0, float(n), 1]]})
        assert status == 200 and report["backup"] == f"{intervals_csv}.bak.1"
        versions.append(intervals_csv.read_bytes())
    assert read_intervals(intervals_csv) == [(0.0, float(GENERATIONS + 2), 1)]
    for n in range(1, GENERATIONS + 1):     # .bak.1 the newest previous version
        assert (intervals_csv.parent / f"{intervals_csv.name}.bak.{n}").read_bytes() == \
            versions[-1 - n]
    assert not (intervals_csv.parent / f"{intervals_csv.name}.bak.{GENERATIONS + 1}").exists()


def test_the_sidecar_write_replaces_a_dangling_symlink_instead_of_following_it(tmp_path):
    """Issue 37, item 4: a symbolic link in the sidecar's place, pointing where nothing is,
    made the write create a file at its target."""
    labels = tmp_path / "drive.intervals.csv"
    labels.write_text("start,end,label\n0,10,1\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "planted.json"
    sidecar = label_sidecar(labels)
    sidecar.symlink_to(target)
    identity = {"recording_id": "drive", "t_start_s": 0.0, "t_end_s": 10.0}
    assert write_label_identity(labels, identity, [[1.0, 2.0]]) == sidecar
    assert not target.exists() and list(elsewhere.iterdir()) == []
    assert not sidecar.is_symlink()
    assert read_label_identity(labels) == identity and read_reviewed(labels) == [[1.0, 2.0]]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "drive.intervals.csv", sidecar.name, "elsewhere"]          # no temporary file left
