"""Label files know their recording (issue 23, items 13 and 15): ``label`` writes the recording's
id and span beside its files; ``train`` and ``label`` refuse another recording's labels in one line
naming both; ``train --cohort --labels`` takes per-recording corrections matched by id."""

import json

import numpy as np
import pytest

from distractd.cli import main
from distractd.models import load_model
from distractd.pipeline import read_intervals, read_recording, write_intervals
from distractd.pipeline.formats import label_sidecar, recording_identity, write_label_identity

_TRAIN = ["--model", "elm", "--labelled", "40", "--grid", "small", "--segment-windows", "0"]


@pytest.fixture(scope="module")
def drives(tmp_path_factory):
    """A 5-minute and a 3-minute drive of two drivers, each labelled by ``distractd label``."""
    folder = tmp_path_factory.mktemp("identity")
    made = {}
    for name, seed, duration in (("long", 5, 300), ("short", 6, 180)):
        drive = folder / f"{name}.npz"
        assert main(["simulate", "--seed", str(seed), "--duration", str(duration), "--protocol",
                     "visual-manual", "--out", str(drive), "-q"]) == 0
        assert main(["label", str(drive), "--method", "kmeans", "--prior", "none", "--out",
                     str(folder / f"{name}.labels.csv"), "-q"]) == 0
        made[name] = (drive, folder / f"{name}.labels.csv",
                      folder / f"{name}.labels.intervals.csv")
    return made


def _one_line(capsys, command):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"distractd {command}: error: "), err
    return err


def test_label_writes_the_recording_beside_both_files(drives):
    drive, windows_csv, intervals_csv = drives["long"]
    recording = read_recording(drive)
    for written in (windows_csv, intervals_csv):
        sidecar = json.loads(label_sidecar(written).read_text())
        assert sidecar["format"] == "distractd-labels"
        assert sidecar["recording_id"] == recording.meta["recording_id"] == "sim-5-d0-visual-manual"
        assert sidecar["t_start_s"] == recording.t.min() and sidecar["t_end_s"] == recording.t.max()


def test_train_refuses_another_drives_labels_naming_both(drives, tmp_path, capsys):
    drive, _, _ = drives["long"]
    _, short_windows, short_intervals = drives["short"]
    for labels in (short_intervals, short_windows):
        assert main(["train", str(drive), *_TRAIN, "--labels", str(labels),
                     "--out", str(tmp_path / "m.npz")]) == 1
        line = _one_line(capsys, "train")
        assert (f"{labels}: labels of recording 'sim-6-d0-visual-manual' (0.0-180.0 s), not of "
                f"recording 'sim-5-d0-visual-manual' (0.0-300.0 s)") in line, line
    # the same file without its sidecar (a legacy file): refused, as it does not cover the drive
    legacy = tmp_path / "legacy.intervals.csv"
    legacy.write_bytes(short_intervals.read_bytes())
    assert main(["train", str(drive), *_TRAIN, "--labels", str(legacy),
                 "--out", str(tmp_path / "m.npz")]) == 1
    line = _one_line(capsys, "train")
    assert "do not cover recording 'sim-5-d0-visual-manual' (0.0-300.0 s)" in line, line
    assert not (tmp_path / "m.npz").exists()


def test_train_takes_its_own_labels_and_a_legacy_file_that_covers_the_drive(drives, tmp_path):
    drive, windows_csv, intervals_csv = drives["long"]
    assert main(["train", str(drive), *_TRAIN, "--labels", str(windows_csv), "-q",
                 "--out", str(tmp_path / "a.npz")]) == 0
    legacy = tmp_path / "legacy.csv"
    legacy.write_bytes(intervals_csv.read_bytes())
    assert main(["train", str(drive), *_TRAIN, "--labels", str(legacy), "-q",
                 "--out", str(tmp_path / "b.npz")]) == 0


def test_label_never_writes_over_another_drives_labels(drives, capsys):
    drive, _, _ = drives["long"]
    _, short_windows, short_intervals = drives["short"]
    before = short_windows.read_bytes(), short_intervals.read_bytes()
    assert main(["label", str(drive), "--method", "kmeans", "--prior", "none",
                 "--out", str(short_windows)]) == 1
    line = _one_line(capsys, "label")
    assert "labels of recording 'sim-6-d0-visual-manual'" in line
    assert "not of recording 'sim-5-d0-visual-manual'" in line
    assert (short_windows.read_bytes(), short_intervals.read_bytes()) == before


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """Three drivers' 5-minute drives."""
    folder = tmp_path_factory.mktemp("fleet")
    assert main(["simulate", "--cohort", "3", "--drives", "1", "--protocol", "visual-manual",
                 "--duration", "300", "--seed", "31", "--out", str(folder / "d.npz"), "-q"]) == 0
    return folder


def _cohort(fleet, out, *labels):
    assert main(["train", "--cohort", str(fleet), "--model", "elm", "--train", "300",
                 "--segment-windows", "0", "--out", str(out), "-q",
                 *(["--labels", *map(str, labels)] if labels else [])]) == 0
    return load_model(out).summary


def test_cohort_training_takes_corrections_matched_by_recording(fleet, tmp_path, capsys):
    files = sorted(fleet.glob("*.npz"))
    recording = read_recording(files[0])
    own = _cohort(fleet, tmp_path / "own.npz")
    # the expert found the first drive attentive throughout; its correction sits in a folder
    # beside an unrelated drive's, each naming its recording
    corrections = tmp_path / "corrections"
    corrections.mkdir()
    fixed = corrections / "first.intervals.csv"
    write_intervals([(float(recording.t.min()), float(recording.t.max()) + 1.0, 0)], fixed)
    write_label_identity(fixed, recording_identity(recording))
    second = read_recording(files[1])
    kept = corrections / "second.intervals.csv"
    write_intervals(second.label_intervals(), kept)
    write_label_identity(kept, recording_identity(second))
    corrected = _cohort(fleet, tmp_path / "corrected.npz", corrections)
    assert own["known_truth"]["attentive"] + own["known_truth"]["distracted"] == \
        corrected["known_truth"]["attentive"] + corrected["known_truth"]["distracted"]
    # every window of the first drive that was distracted is attentive now, and only those
    assert corrected["known_truth"]["distracted"] < own["known_truth"]["distracted"]
    moved = own["known_truth"]["distracted"] - corrected["known_truth"]["distracted"]
    only_first = _cohort(fleet, tmp_path / "first.npz", fixed)
    assert only_first["known_truth"] == corrected["known_truth"]
    assert moved > 10   # the drive had a task: a correction that reaches the model
    # a file of a recording that is not among the inputs is refused in one line
    other = tmp_path / "other.intervals.csv"
    write_intervals(read_intervals(fixed), other)
    write_label_identity(other, {**recording_identity(recording), "recording_id": "elsewhere"})
    assert main(["train", "--cohort", str(fleet), "--model", "elm", "--labels", str(other),
                 "--out", str(tmp_path / "x.npz")]) == 1
    line = _one_line(capsys, "train")
    assert f"labels {other}: labels of recording 'elsewhere', none of the 3 input" in line
    assert not (tmp_path / "x.npz").exists()
    np.testing.assert_array_equal(read_recording(files[0]).labels, recording.labels)
