"""The expert workflow end to end: ``distractd label`` -> edit -> ``distractd train --labels``."""

import csv
import shutil

import numpy as np
import pytest

from distractd.cli import main
from distractd.models import load_model
from distractd.models.detectors import read_labels, training_windows
from distractd.pipeline import read_intervals, read_recording, write_intervals, write_recording
from distractd.pipeline.formats import label_sidecar
from distractd.simulators import simulate_drive


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    """A 5-minute drive and the files ``distractd label`` writes for it."""
    folder = tmp_path_factory.mktemp("round_trip")
    drive = folder / "drive.npz"
    write_recording(simulate_drive(5, duration_s=300.0), drive)
    assert main(["label", str(drive), "--method", "kmeans", "--seed", "1",
                 "--out", str(folder / "labels.csv")]) == 0
    return drive, folder / "labels.csv", folder / "labels.intervals.csv"


def _train(drive, labels, out):
    assert main(["train", str(drive), "--model", "elm", "--labelled", "40", "--grid", "small",
                 "--segment-windows", "0", "--seed", "0", "--labels", str(labels),
                 "--out", str(out)]) == 0
    return load_model(out).summary


def _known_truth(labels):
    return {"distracted": int((labels == 1).sum()), "attentive": int((labels == 0).sum())}


def test_edited_intervals_train_the_detector(labelled, tmp_path):
    drive, window_csv, interval_csv = labelled
    intervals = read_intervals(interval_csv)
    assert len(intervals) >= 4
    # The expert swaps every label (the cluster map was the wrong way round) and deletes the last
    # interval (not sure about it): its windows become unlabelled. The edited file keeps the
    # recording its original names (as an edit in place does), so the labels no longer cover the
    # whole drive and still train.
    edited = [(start, end, 1 - label) for start, end, label in intervals[:-1]]
    write_intervals(edited, tmp_path / "edited.csv")
    shutil.copyfile(label_sidecar(interval_csv), label_sidecar(tmp_path / "edited.csv"))

    recording = read_recording(drive)
    windows = training_windows([recording], labels=[tmp_path / "edited.csv"])
    _, (_, preliminary) = read_labels(window_csv)
    assert len(preliminary) == len(windows)
    last_start = intervals[-1][0]
    owned = (preliminary >= 0) & (0.5 * (windows.t_start + windows.t_end) < last_start)
    # Every window the expert kept carries the flipped label where the preliminary labels are
    # constant over the window's span (intervals are applied to samples and windows take their
    # majority, so a run shorter than a window can be outvoted) ...
    span = int(round((windows.t_end[0] - windows.t_start[0]) / np.median(np.diff(windows.t_end))))
    steady = np.array([len(set(preliminary[max(0, i - span):i + 1].tolist())) == 1
                       for i in range(len(preliminary))])
    np.testing.assert_array_equal(windows.label[owned & steady],
                                  1 - preliminary[owned & steady])
    # (on this 5-minute drive about a third of the preliminary labels change within a window's
    # span, so the majority outvotes a few percent of them: 93 % carry the flipped label)
    assert steady[owned].mean() > 0.5
    assert np.mean(windows.label[owned] == 1 - preliminary[owned]) > 0.9
    # ... and the deleted interval's windows are unlabelled.
    assert np.all(windows.label[windows.t_start >= last_start] == -1)

    summary = _train(drive, tmp_path / "edited.csv", tmp_path / "model.npz")
    finite = np.isfinite(windows.X).all(axis=1)
    assert summary["known_truth"] == _known_truth(windows.label[finite])
    original = training_windows([recording])
    assert summary["known_truth"] != _known_truth(original.label[finite])


def test_edited_window_csv_trains_the_detector(labelled, tmp_path):
    drive, window_csv, _ = labelled
    with open(window_csv, newline="") as file:
        rows = list(csv.DictReader(file))
    # The expert flips the first half of the windows and leaves the rest as proposed.
    half = len(rows) // 2
    for row in rows[:half]:
        if row["label"] != "-1":
            row["label"] = str(1 - int(row["label"]))
    edited = tmp_path / "edited.csv"
    with open(edited, "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)

    windows = training_windows([read_recording(drive)], labels=[edited])
    expected = np.array([int(row["label"]) for row in rows], dtype=np.int8)
    np.testing.assert_array_equal(windows.label, expected)
    assert np.any(expected[:half] == 1) and np.any(expected[:half] == 0)

    summary = _train(drive, edited, tmp_path / "model.npz")
    finite = np.isfinite(windows.X).all(axis=1)
    assert summary["known_truth"] == _known_truth(expected[finite])
