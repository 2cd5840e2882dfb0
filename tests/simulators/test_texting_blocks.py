"""The Taamneh-like protocol (texting-blocks, normal-blocks) and the sparse-gaze tracker: block
timing and labels, the 1 Hz gaze-only export, task-dependent loss against the real drives, seeds,
the CLI."""

import subprocess
import sys

import numpy as np
import pytest

from distractd import ConfigError
from distractd.pipeline import FIELD_INDEX, VEHICLE_FIELDS, read_recording
from distractd.pipeline.formats import read_taamneh
from distractd.simulators import (
    simulate_drive, simulate_texting_study, texting_schedule, tracking_statistics,
)
from distractd.simulators._protocol import TEXTING_BLOCKS

GAZE_ONLY = ("t", "gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch", "confidence",
             *VEHICLE_FIELDS)   # the tracker's gaze, and the car's own signals


@pytest.fixture(scope="module")
def study():
    """Six simulated drivers, a normal and a texting drive each, 1 Hz gaze only."""
    return simulate_texting_study(6, 7)


def test_texting_schedule_follows_taamneh_blocks():
    schedules = [texting_schedule(np.random.default_rng(seed)) for seed in range(300)]
    assert all([s.kind for s in sch] == ["normal", "task", "normal", "task", "normal"]
               for sch in schedules)
    lengths = np.array([[s.duration_s for s in sch] for sch in schedules])
    medians = np.array([block[1] for block in TEXTING_BLOCKS])
    sds = np.array([block[2] for block in TEXTING_BLOCKS])
    # the mean of 300 draws is within 4 standard errors of the real drives' median
    assert np.all(np.abs(lengths.mean(axis=0) - medians) < 4 * sds / np.sqrt(300))
    assert np.all(np.abs(lengths - medians) <= 3 * sds + 1e-9)
    assert len({tuple(row) for row in lengths.round(6)}) == 300   # jittered per drive
    for sch in schedules[:5]:
        assert sch[0].start_s == 0.0
        assert all(a.end_s == b.start_s for a, b in zip(sch[:-1], sch[1:]))


@pytest.mark.parametrize("duration_s", [200.0, 2000.0])
def test_texting_schedule_cuts_or_extends_the_last_block(duration_s):
    schedule = texting_schedule(np.random.default_rng(1), duration_s)
    assert schedule[-1].end_s == duration_s
    assert [s.kind for s in schedule] == ["normal", "task", "normal", "task",
                                          "normal"][:len(schedule)]


def test_labels_mark_the_texting_blocks(study):
    texting = study[1]
    assert texting.meta["protocol"] == "texting-blocks"
    for kind, start, end in texting.meta["schedule"]:
        inside = texting.labels[(texting.t >= start) & (texting.t < end)]
        assert len(inside) and (inside == (kind == "task")).all()
    on_task_s = (texting.labels == 1).sum()
    assert 2 * (158 - 15) <= on_task_s <= 2 * (158 + 15)
    normal = study[0]
    assert normal.meta["protocol"] == "normal-blocks" and (normal.labels == 0).all()
    assert [s[0] for s in normal.meta["schedule"]] == ["normal"]


@pytest.mark.parametrize("rate_hz", [1.0, 4.0])
def test_sparse_gaze_delivers_gaze_and_confidence_at_the_rate(rate_hz):
    recording = simulate_drive(3, duration_s=120.0, rate_hz=rate_hz, protocol="texting-blocks",
                               tracker="sparse-gaze")
    assert recording.fields_present == GAZE_ONLY
    np.testing.assert_allclose(np.diff(recording.t), 1 / rate_hz)
    assert len(recording.t) == int(120 * rate_hz)
    confidence = recording.column("confidence")
    assert set(np.unique(confidence)) == {0.0, 1.0}
    valid = confidence == 1
    for axis in ("yaw", "pitch"):
        right, left = recording.column(f"gaze_r_{axis}"), recording.column(f"gaze_l_{axis}")
        np.testing.assert_array_equal(right, left)   # one gaze point, like the real export
        assert np.isfinite(right[valid]).all() and np.isnan(right[~valid]).all()
    assert recording.meta["tracker"] == "sparse-gaze"
    assert recording.meta["frame_rate_hz"] == 60.0


def test_sparse_gaze_rejects_rates_above_its_frames():
    with pytest.raises(ConfigError, match="rate_hz.*60 Hz.*120"):
        simulate_drive(3, duration_s=10.0, rate_hz=120.0, tracker="sparse-gaze")
    with pytest.raises(ConfigError, match="simulate_drive.tracker"):
        simulate_drive(3, duration_s=10.0, tracker="webcam")


def test_valid_fraction_drops_on_task_by_the_real_margin(study, shared_data):
    """The real texting drives lose gaze on task: the median over drivers of valid off task
    minus valid on task is 0.40 (development half) and 0.42 (held-out half); 6-driver simulated
    cohorts measured 0.38-0.44 (seeds 5-7). The tolerance is three times that spread."""
    real = [tracking_statistics(r) for path in sorted((shared_data / "taamneh").glob("T*.csv"))
            for r in read_taamneh(path, drives=(7,))]
    simulated = [tracking_statistics(r) for r in study[1::2]]

    def margins(statistics):
        return [s["off-task"]["valid"] - s["on-task"]["valid"] for s in statistics
                if s is not None and "on-task" in s]

    real_margin, simulated_margin = np.median(margins(real)), np.median(margins(simulated))
    assert real_margin == pytest.approx(0.41, abs=0.03)
    assert simulated_margin == pytest.approx(real_margin, abs=0.1)
    # and the normal drive keeps about the texting drive's off-task validity
    normal = [tracking_statistics(r)["no-task"]["valid"] for r in study[0::2]]
    off = [s["off-task"]["valid"] for s in simulated]
    assert abs(np.median(normal) - np.median(off)) < 0.1


def test_loss_runs_are_longer_on_task(study):
    statistics = [tracking_statistics(r) for r in study[1::2]]
    on = np.concatenate([s["on-task"]["loss_runs"] for s in statistics])
    off = np.concatenate([s["off-task"]["loss_runs"] for s in statistics])
    # real drives: 0.42-0.44 of on-task loss runs last 1 s against 0.67-0.80 off task
    assert np.mean(on == 1) < np.mean(off == 1) - 0.2
    assert on.mean() > off.mean() + 1.0


def test_same_seed_same_study_other_seed_other():
    a, b = (simulate_drive(9, protocol="texting-blocks", tracker="sparse-gaze", rate_hz=1.0)
            for _ in range(2))
    np.testing.assert_array_equal(a.samples, b.samples)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.meta == b.meta
    c = simulate_drive(10, protocol="texting-blocks", tracker="sparse-gaze", rate_hz=1.0)
    assert a.meta["schedule"] != c.meta["schedule"]


def test_the_cli_simulates_the_protocol(tmp_path):
    path = tmp_path / "texting.csv"
    subprocess.run([sys.executable, "-m", "distractd.cli", "simulate", "--seed", "4",
                    "--protocol", "texting-blocks", "--tracker", "sparse-gaze", "--rate", "1",
                    "--out", str(path), "--quiet"], check=True)
    recording = read_recording(path)
    assert recording.fields_present == GAZE_ONLY
    np.testing.assert_allclose(np.diff(recording.t), 1.0)
    expected = simulate_drive(4, rate_hz=1.0, protocol="texting-blocks", tracker="sparse-gaze")
    np.testing.assert_array_equal(recording.labels, expected.labels)
    np.testing.assert_allclose(recording.samples[:, FIELD_INDEX["gaze_r_yaw"]],
                               expected.samples[:, FIELD_INDEX["gaze_r_yaw"]], rtol=1e-6)


def test_tracking_statistics_of_a_hand_made_drive():
    from distractd.pipeline import Recording, empty_block
    from distractd.simulators import summarise_tracking

    labels = np.array([0] * 10 + [1] * 10, dtype=np.int8)
    valid = np.ones(20, dtype=bool)
    valid[[2, 5, 6]] = False            # off task: runs of 1 and 2 s
    valid[[11, 12, 13, 15]] = False     # on task: runs of 3 and 1 s, valid runs 1, 1, 4 s
    block = empty_block(20)
    block[:, 0] = np.arange(20)
    yaw_deg = np.where(np.arange(20) < 10, 1.0, 3.0) * (-1) ** np.arange(20)
    for field in ("gaze_r_yaw", "gaze_l_yaw"):
        block[:, FIELD_INDEX[field]] = np.where(valid, np.radians(yaw_deg), np.nan)
    for field in ("gaze_r_pitch", "gaze_l_pitch"):
        block[:, FIELD_INDEX[field]] = np.where(valid, 0.0, np.nan)
    block[:, FIELD_INDEX["confidence"]] = valid
    stats = tracking_statistics(Recording(block, labels, {}))
    assert stats["off-task"]["valid"] == pytest.approx(0.7)
    assert stats["on-task"]["valid"] == pytest.approx(0.6)
    assert stats["off-task"]["loss_runs"] == [1, 2]
    assert stats["on-task"]["loss_runs"] == [3, 1]
    assert stats["on-task"]["valid_runs"] == [1, 4]   # 14 and 16-19; 7-10 began off task
    assert stats["off-task"]["sd_yaw_deg"] == pytest.approx(1.0, abs=0.1)
    assert stats["on-task"]["sd_pitch_deg"] == 0.0
    summary = summarise_tracking([stats, None])
    assert summary["on-task"]["loss_runs"]["share_1"] == 0.5
    assert summary["on-task"]["drives"] == 1 and "no-task" not in summary
    block[:, FIELD_INDEX["confidence"]] = 0.0
    assert tracking_statistics(Recording(block, labels, {})) is None
