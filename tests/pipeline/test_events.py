import csv

import numpy as np
import pytest
from numba import types

from distractd.cli import main
from distractd.models.evaluation import read_irf
from distractd.pipeline import (
    FEATURE_NAMES, FIELD_INDEX, Events, PipelineConfig, Recording, StreamProcessor,
    detect_events, empty_block, extract_features, write_recording,
)
from distractd.pipeline._processor import _run  # its compiled specialisations

SACCADE = FEATURE_NAMES.index("mean_saccade")
BLINK = FEATURE_NAMES.index("mean_blink")


def fixating(seconds=20.0, rate_hz=60.0, eyelid=False):
    n = int(seconds * rate_hz)
    block = empty_block(n)
    block[:, 0] = np.arange(n) / rate_hz
    for name in ("gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch"):
        block[:, FIELD_INDEX[name]] = 0.0
    block[:, FIELD_INDEX["confidence"]] = 1.0
    if eyelid:
        block[:, FIELD_INDEX["eyelid_r"]] = block[:, FIELD_INDEX["eyelid_l"]] = 1.0
    return block


def step_saccade(block, t0, amplitude_deg, duration_s):
    """A gaze step of ``amplitude_deg`` in yaw, linear over ``duration_s`` from ``t0``."""
    t = block[:, 0]
    ramp = np.clip((t - t0) / duration_s, 0.0, 1.0) * np.radians(amplitude_deg)
    for name in ("gaze_r_yaw", "gaze_l_yaw"):
        block[:, FIELD_INDEX[name]] += ramp


@pytest.mark.parametrize("rate_hz", [30.0, 60.0, 120.0, 1000.0])
def test_saccade_step_is_one_event_with_its_amplitude(rate_hz):
    block = fixating(rate_hz=rate_hz)
    step_saccade(block, 5.0, 8.0, 0.04)
    events = detect_events(Recording(block))
    rows = events.events[events.events[:, 0] == 0]
    assert len(rows) == 1
    assert rows[0, 4] == pytest.approx(8.0, abs=0.01)
    assert 4.99 <= rows[0, 1] <= rows[0, 2] <= 5.04 + 1.0 / rate_hz
    assert np.nansum(events.saccade) == np.sum((events.t >= rows[0, 1]) & (events.t <= rows[0, 2]))


def test_slow_drift_and_small_jitter_are_not_saccades():
    block = fixating()
    rng = np.random.default_rng(0)
    block[:, FIELD_INDEX["gaze_r_yaw"]] += np.radians(np.linspace(0, 5, len(block)))  # 0.25 deg/s
    block[:, FIELD_INDEX["gaze_l_yaw"]] += np.radians(rng.normal(0, 0.02, len(block)))
    assert np.nansum(detect_events(Recording(block)).saccade) == 0


def test_saccades_unavailable_below_minimum_rate():
    block = fixating(rate_hz=10.0, seconds=30.0)
    step_saccade(block, 5.0, 8.0, 0.04)
    events = detect_events(Recording(block))
    assert np.isnan(events.saccade[2:]).all()
    windows = extract_features(Recording(block))
    assert np.isnan(windows.X[:, SACCADE]).all()
    assert np.isfinite(windows.X[:, 6]).all()      # window statistics still computed


def test_blink_from_eyelid_and_from_track_loss():
    block = fixating(eyelid=True)
    t = block[:, 0]
    block[(t >= 4.0) & (t < 4.2), FIELD_INDEX["eyelid_r"]] = 0.05           # eyelid blink
    block[(t >= 4.0) & (t < 4.2), FIELD_INDEX["eyelid_l"]] = 0.05
    lost = (t >= 8.0) & (t < 8.15)                                          # track-loss blink
    block[lost, FIELD_INDEX["confidence"]] = 0.0
    block[lost, FIELD_INDEX["eyelid_r"]] = block[lost, FIELD_INDEX["eyelid_l"]] = np.nan
    block[(t >= 12.0) & (t < 14.0), FIELD_INDEX["confidence"]] = 0.0        # looked away: no blink
    events = detect_events(Recording(block))
    blinks = events.events[events.events[:, 0] == 1]
    assert len(blinks) == 2
    np.testing.assert_allclose(blinks[:, 3], [0.2, 0.15], atol=1e-9)
    assert np.nansum(events.blink) == 12 + 9
    assert np.nansum(events.saccade) == 0


def test_tracker_flags_replace_detectors_when_configured():
    block = fixating()
    t = block[:, 0]
    block[:, FIELD_INDEX["saccade"]] = ((t >= 3.0) & (t < 3.05)).astype(float)
    block[:, FIELD_INDEX["blink"]] = ((t >= 6.0) & (t < 6.2)).astype(float)
    ours = detect_events(Recording(block))
    theirs = detect_events(Recording(block), PipelineConfig(use_tracker_flags=True))
    assert np.nansum(ours.saccade) == np.nansum(ours.blink) == 0
    np.testing.assert_array_equal(theirs.saccade, block[:, FIELD_INDEX["saccade"]])
    np.testing.assert_array_equal(theirs.blink, block[:, FIELD_INDEX["blink"]])


def test_event_means_in_windows():
    block = fixating(seconds=25.0)
    for k in range(10):
        step_saccade(block, 1.0 + 2.0 * k, 5.0 if k % 2 == 0 else -5.0, 0.03)
    windows = extract_features(Recording(block))
    events = detect_events(Recording(block))
    t = events.t
    for i in range(len(windows)):
        inside = (t >= windows.t_start[i]) & (t < windows.t_end[i])
        assert windows.X[i, SACCADE] == pytest.approx(np.nanmean(events.saccade[inside]))
        assert windows.X[i, BLINK] == 0.0


def _noisy_steps():
    """30 s of fixation with 0.3 deg RMS tracker noise and five 8 deg saccades from 6 s."""
    block = fixating(seconds=30.0)
    rng = np.random.default_rng(4)
    for name in ("gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch"):
        block[:, FIELD_INDEX[name]] += np.radians(rng.normal(0.0, 0.3, len(block)))  # 0.3 deg RMS
    for k in range(5):
        step_saccade(block, 6.0 + 5.0 * k, 8.0 if k % 2 == 0 else -8.0, 0.04)
    return block


def _settled_saccades(block, config=None):
    settled = 1.0   # before that the noise estimate is young and the fixed minima rule
    rows = detect_events(Recording(block), config).events
    return rows[(rows[:, 0] == 0) & (rows[:, 1] > settled)]


@pytest.mark.parametrize("adaptive, max_noise", [
    ({}, 1),                                          # default: speed and amplitude adaptive (0)
    ({"saccade_noise_amplitude_factor": 0.0}, 5),     # the speed threshold alone (4 measured)
])
def test_noisy_tracker_raises_the_adaptive_thresholds_not_the_saccade_count(adaptive, max_noise):
    block = _noisy_steps()
    fixed = _settled_saccades(block, PipelineConfig(saccade_velocity_deg_s=10.0,
                                                    saccade_noise_factor=0.0,
                                                    saccade_noise_amplitude_factor=0.0))
    assert len(fixed) > 100                           # 10 deg/s, 0.1 deg: noise is "saccades"
    rows = _settled_saccades(block, PipelineConfig(**adaptive))
    steps = rows[rows[:, 4] > 5.0]
    np.testing.assert_allclose(steps[:, 1], 6.0 + 5.0 * np.arange(5), atol=0.05)
    assert len(rows) - len(steps) <= max_noise        # rare noise peaks at most


def test_fixations_lie_between_saccades_and_blinks():
    block = fixating(seconds=10.0)
    step_saccade(block, 2.0, 8.0, 0.04)
    step_saccade(block, 5.0, -8.0, 0.04)
    t = block[:, 0]
    block[(t >= 7.0) & (t < 7.15), FIELD_INDEX["confidence"]] = 0.0     # a track-loss blink
    block[(t >= 8.5) & (t < 8.54), FIELD_INDEX["confidence"]] = 0.0     # 2 lost samples: merged
    events = detect_events(Recording(block))
    rows = events.events
    fixations = rows[rows[:, 0] == 2]
    saccades = rows[rows[:, 0] == 0]
    assert len(saccades) == 2 and len(fixations) == 4
    # the first sample has no rate yet: the first fixation starts at the second
    np.testing.assert_allclose(fixations[:, 1], [1 / 60, saccades[0, 2] + 1 / 60,
                                                 saccades[1, 2] + 1 / 60, 7.15], atol=1e-9)
    np.testing.assert_allclose(fixations[:3, 2], [saccades[0, 1] - 1 / 60, saccades[1, 1] - 1 / 60,
                                                  7.0 - 1 / 60], atol=1e-9)
    assert fixations[3, 2] == pytest.approx(t[-1])   # open at the end: ends on the last sample
    # every tracked sample outside the saccades is in a fixation; no sample is in both
    assert np.nansum(events.fixation * events.saccade) == 0
    still = (events.saccade == 0) & (events.blink == 0) & (events.track_loss == 0)
    np.testing.assert_array_equal(events.fixation[1:] == 1, (still | (t >= 8.5) & (t < 8.54))[1:])


def test_the_feature_path_runs_a_kernel_compiled_without_the_fixation_step():
    """The fixation step's mere presence in the compiled loop made every sample of the feature
    path ~50 % slower (issue 22's CPU target) though it ran only for events: the feature path
    passes no fixation buffer (``None``), so numba compiles it a kernel of its own without it."""
    block = fixating(seconds=2.0)
    StreamProcessor().update(block)
    detect_events(Recording(block))
    fixation_buffers = {signature[-1] for signature in _run.signatures}
    assert types.none in fixation_buffers                     # the feature path
    assert any(isinstance(buffer, types.Array) for buffer in fixation_buffers)   # the events path


def test_short_still_runs_are_not_fixations():
    block = fixating(seconds=3.0)
    t = block[:, 0]
    block[(t >= 1.0) & (t < 1.2) | (t >= 1.23), FIELD_INDEX["confidence"]] = 0.0   # 2 tracked samples
    events = detect_events(Recording(block))
    fixations = events.events[events.events[:, 0] == 2]
    assert len(fixations) == 1 and fixations[0, 2] == pytest.approx(1.0 - 1 / 60)
    long_enough = detect_events(Recording(block), PipelineConfig(fixation_min_s=0.03))
    assert (long_enough.events[:, 0] == 2).sum() == 2


def _pursuit(rate_hz=60.0, noise_deg=0.05, seed=0):
    """Fixation 0-2 s, smooth pursuit at 10 deg/s 2-4 s with a 2 deg catch-up saccade at 3 s
    (25 ms, about the main sequence's), fixation 4-6 s; white noise on the gaze."""
    block = fixating(seconds=6.0, rate_hz=rate_hz)
    t = block[:, 0]
    yaw = 10.0 * np.clip(t - 2.0, 0.0, 2.0) + 2.0 * np.clip((t - 3.0) / 0.025, 0.0, 1.0)
    noise = np.random.default_rng(seed).normal(0.0, noise_deg, (len(t), 2))
    for name in ("gaze_r_yaw", "gaze_l_yaw"):
        block[:, FIELD_INDEX[name]] = np.radians(yaw + noise[:, 0])
    for name in ("gaze_r_pitch", "gaze_l_pitch"):
        block[:, FIELD_INDEX[name]] = np.radians(noise[:, 1])
    return block


@pytest.mark.parametrize("rate_hz", [60.0, 120.0])
def test_smooth_pursuit_is_neither_fixation_nor_saccade_but_its_catch_up_saccade_is_found(rate_hz):
    events = detect_events(Recording(_pursuit(rate_hz)))
    saccades = events.events[events.events[:, 0] == 0]
    assert len(saccades) == 1 and 2.98 <= saccades[0, 1] <= 3.05
    fixations = events.events[events.events[:, 0] == 2]
    # one fixation before the pursuit and one after: the pursuit's samples are in none
    assert len(fixations) == 2
    assert 1.9 <= fixations[0, 2] <= 2.2 and 4.0 <= fixations[1, 1] <= 4.3
    pursuing = (events.t > 2.3) & (events.t < 3.9) & (np.abs(events.t - 3.02) > 0.07)
    assert not (events.fixation[pursuing] > 0).any()
    # without the smooth velocity the pursuit is taken for fixation
    plain = detect_events(Recording(_pursuit(rate_hz)), PipelineConfig(pursuit_tau_s=0.0))
    assert (plain.fixation[pursuing] > 0).all()


def test_a_stream_that_starts_closed_starts_in_a_blink():
    block = fixating(seconds=3.0)
    block[:3, FIELD_INDEX["confidence"]] = 0.0   # lost from the first sample, 50 ms
    blinks = detect_events(Recording(block)).events
    blinks = blinks[blinks[:, 0] == 1]
    assert len(blinks) == 1 and blinks[0, 1] == 0.0 and blinks[0, 3] == pytest.approx(3 / 60)


@pytest.mark.parametrize("block_samples", [1, 7, 100])
def test_streamed_events_equal_batch_events(shared_data, block_samples):
    recording = read_irf(shared_data / "irf", "S2", 60.0).recording
    batch = detect_events(recording)
    processor = StreamProcessor()
    samples = recording.samples
    found = [processor._feed(samples[i:i + block_samples], None, with_events=True, final=False)[1]
             for i in range(0, len(samples), block_samples)]
    found.append(processor._feed(samples[:0], None, with_events=True, final=True)[1])
    streamed = np.concatenate(found)
    assert (streamed["kind"] == 2).sum() > 100
    for column, name in enumerate(Events.EVENT_COLUMNS):
        np.testing.assert_array_equal(streamed[name], batch.events[:, column])


def test_events_command_writes_per_sample_fixation_flags(tmp_path, capsys):
    block = fixating(seconds=10.0)
    step_saccade(block, 4.0, 8.0, 0.04)
    write_recording(Recording(block), tmp_path / "r.npz")
    assert main(["events", str(tmp_path / "r.npz"), "--out", str(tmp_path / "e.csv")]) == 0
    assert "2 fixations" in capsys.readouterr().out
    with open(tmp_path / "e.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    expected = detect_events(Recording(block))
    assert [row["fixation"] for row in rows] == [
        "" if np.isnan(f) else str(int(f)) for f in expected.fixation]
    assert sum(row["fixation"] == "1" for row in rows) == np.nansum(expected.fixation) > 500
