"""simulate_drive / simulate_cohort: determinism, meta, labels, tracker switches, CLI."""

import json

import numpy as np
import pytest

from distractd import ConfigError
from distractd.cli import main
from distractd.pipeline import FIELD_INDEX, FIELDS, describe, read_recording
from distractd.simulators import (
    cohort_seeds, simulate_cohort, simulate_drive, simulate_drive_truth,
)

CLEAN = dict(noise=False, track_loss=False, drops=False, duplicates=False, jitter=False)
GAZE = [FIELD_INDEX[f] for f in ("gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch")]


@pytest.fixture(scope="module")
def drive():
    return simulate_drive_truth(11, duration_s=600.0)


def test_same_seed_same_drive_other_seed_other_drive():
    a, b, c = (simulate_drive(s, duration_s=120.0) for s in (5, 5, 6))
    np.testing.assert_array_equal(a.samples, b.samples)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.meta == b.meta
    assert a.samples.shape != c.samples.shape or not np.allclose(a.samples, c.samples,
                                                                 equal_nan=True)


def test_all_fields_rate_and_labels(drive):
    recording, truth = drive
    assert recording.fields_present == FIELDS
    summary = describe(recording)
    assert summary["rate_hz"] == pytest.approx(60.0, rel=2e-3)
    assert recording.duration_s == pytest.approx(600.0, abs=0.1)
    t = truth.t[truth.rows]
    for kind, start, end in recording.meta["schedule"]:
        inside = recording.labels[(t >= start) & (t < end)]
        assert (inside == (kind == "task")).all()
    assert set(np.unique(recording.labels)) == {0, 1}


def test_meta_records_seed_rate_options_traits_schedule(drive):
    meta = drive[0].meta
    assert meta["source"] == "simulator" and meta["seed"] == 11 and meta["rate_hz"] == 60.0
    assert meta["options"]["visual"] is False and meta["options"]["drops"] is True
    assert meta["internal_rate_hz"] >= 500
    assert meta["traits"]["blink_rate_per_min"] > 0
    assert meta["schedule"][0][0] == "normal" and meta["schedule"][-1][2] == 600.0
    json.dumps(meta)


def test_rate_is_configurable():
    recording = simulate_drive(3, duration_s=60.0, rate_hz=250.0, **CLEAN)
    assert np.diff(recording.t) == pytest.approx(1 / 250)
    assert recording.meta["internal_rate_hz"] == 500.0


def test_clean_tracker_has_no_imperfections():
    recording = simulate_drive(4, duration_s=300.0, **CLEAN)
    assert np.isfinite(recording.samples).all()
    np.testing.assert_allclose(np.diff(recording.t), 1 / 60, atol=1e-9)
    assert len(recording.t) == 300 * 60
    assert recording.column("confidence").min() > 0.65


@pytest.mark.parametrize("switch", ["noise", "track_loss", "drops", "duplicates", "jitter"])
def test_each_imperfection_only_when_switched_on(switch):
    clean, truth = simulate_drive_truth(8, duration_s=600.0, **CLEAN)
    on, on_truth = simulate_drive_truth(8, duration_s=600.0, **{**CLEAN, switch: True})
    periods = np.diff(on.t)
    if switch == "noise":
        assert not truth.gaze_offset.any()
        residual = np.degrees(on.samples[:, GAZE] - clean.samples[:, GAZE])
        offset = on_truth.gaze_offset
        assert np.median(np.abs(residual[:, 0] - offset[:, 0])) > 0.05
        np.testing.assert_allclose(np.median(residual[:, [0, 1]] - offset, axis=0), 0, atol=0.02)
        drift = offset - [truth.traits.offset_yaw_deg, truth.traits.offset_pitch_deg]
        assert 0.05 < np.abs(drift).max() < 5 * truth.traits.calibration_drift_deg
    elif switch == "track_loss":
        lost = np.isnan(on.samples[:, GAZE[0]])
        assert 0.005 < lost.mean() < 0.3
        assert (on.column("confidence")[lost] < 0.35).all()
        assert (lost & (truth.closure > 0.6)).sum() == (truth.closure > 0.6).sum()
        assert np.isfinite(on.column("head_yaw")).all()
    elif switch == "drops":
        assert len(on.t) < len(clean.t)
        assert (periods > 1.5 / 60).sum() == pytest.approx(len(clean.t) - len(on.t), abs=3)
    elif switch == "duplicates":
        assert len(on.t) > len(clean.t)
        assert (periods == 0).sum() == len(on.t) - len(clean.t)
        duplicated = np.flatnonzero(periods == 0)
        np.testing.assert_array_equal(on.samples[duplicated], on.samples[duplicated + 1])
    else:
        jitter = on.t - clean.t
        assert 0.0004 < jitter.std() < 0.0025
        assert np.abs(jitter).max() <= 0.4 / 60 + 1e-12 and (periods > 0).all()
    other = [FIELD_INDEX[f] for f in ("pupil_r", "head_x")]
    if switch in ("drops", "duplicates", "jitter"):
        np.testing.assert_array_equal(on.samples[:, other], clean.samples[truth.rows][:, other]
                                      if len(on.t) == len(clean.t) else
                                      clean.samples[_rows(on, clean)][:, other])


def _rows(on, clean):
    return np.searchsorted(clean.t, on.t - 0.4 / 60)


def test_visual_mode_adds_long_display_glances():
    _, truth = simulate_drive_truth(9, visual=True)
    display = truth.gaze.target == 5
    assert display.sum() > 50
    starts = truth.gaze.start[display]
    in_task = np.zeros(len(starts), bool)
    for s in truth.sections:
        if s.kind == "task":
            in_task |= (starts >= s.start_s) & (starts < s.end_s + 3.0)  # a glance may end a task
    assert in_task.all()
    long = (truth.gaze.duration[display] > 2.0).mean()
    assert 0.03 < long <= 0.15
    _, plain = simulate_drive_truth(9)
    assert (plain.gaze.target == 5).sum() == 0


def test_cohort_seeds_are_independent_of_cohort_size():
    assert cohort_seeds(5, 1)[:3] == cohort_seeds(3, 1)
    assert len(set(cohort_seeds(34, 1))) == 34
    cohort = simulate_cohort(2, 1, duration_s=30.0)
    assert [r.meta["cohort"]["index"] for r in cohort] == [0, 1]
    np.testing.assert_array_equal(cohort[1].samples,
                                  simulate_drive(cohort_seeds(2, 1)[1], duration_s=30.0).samples)


def test_bad_arguments_name_the_field():
    with pytest.raises(ConfigError, match="simulate_drive.rate_hz"):
        simulate_drive(1, rate_hz=0.0)
    with pytest.raises(ConfigError, match="simulate_drive.duration_s"):
        simulate_drive(1, duration_s=-5.0)
    with pytest.raises(ConfigError, match="simulate_cohort.n_drivers"):
        simulate_cohort(0, 1)


def test_cli_single_csv_and_cohort_binary(tmp_path, capsys):
    assert main(["simulate", "--seed", "2", "--duration", "20", "--out",
                 str(tmp_path / "one.csv"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    single = read_recording(tmp_path / "one.csv")
    assert summary["samples"] == single.n_samples
    np.testing.assert_allclose(single.samples, simulate_drive(2, duration_s=20.0).samples,
                               rtol=1e-15, equal_nan=True)
    assert main(["simulate", "--seed", "2", "--duration", "20", "--cohort", "3", "--no-drops",
                 "--out", str(tmp_path / "sub" / "d.npz")]) == 0
    paths = sorted((tmp_path / "sub").iterdir())
    assert [p.name for p in paths] == ["d_00.npz", "d_01.npz", "d_02.npz"]
    second = read_recording(paths[1])
    assert second.meta["cohort"] == {"seed": 2, "index": 1, "size": 3}
    assert second.meta["options"]["drops"] is False
