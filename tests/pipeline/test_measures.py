import numpy as np
import pytest

from distractd.pipeline import (
    FEATURE_NAMES, FIELD_INDEX, PipelineConfig, Recording, empty_block, extract_features,
)

FREQUENCY = FEATURE_NAMES.index("mean_blink_frequency_hz")
DURATION = FEATURE_NAMES.index("mean_blink_duration_s")
PERCLOS = FEATURE_NAMES.index("mean_perclos")


def eyes(seconds, rate_hz=60.0, blink_every_s=3.0, blink_s=0.2, closed_fraction=0.0, eyelid=True):
    """Open eyes with a blink every ``blink_every_s`` and, separately, slow closures (opening 0.1)
    for ``closed_fraction`` of every 10 s."""
    n = int(seconds * rate_hz)
    block = empty_block(n)
    t = np.arange(n) / rate_hz
    block[:, 0] = t
    for name in ("gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch"):
        block[:, FIELD_INDEX[name]] = 0.0
    block[:, FIELD_INDEX["confidence"]] = 1.0
    blinking = (t % blink_every_s >= 1.0) & (t % blink_every_s < 1.0 + blink_s)
    if eyelid:
        opening = np.where(blinking, 0.3, 1.0)   # 0.3: a blink, but not PERCLOS-closed
        opening[(t % 10.0) >= 10.0 * (1 - closed_fraction)] = 0.1
        block[:, FIELD_INDEX["eyelid_r"]] = block[:, FIELD_INDEX["eyelid_l"]] = opening
    else:
        block[blinking, FIELD_INDEX["confidence"]] = 0.0
    return Recording(block)


@pytest.mark.parametrize("eyelid", [True, False])
def test_blink_frequency_and_duration_closed_form(eyelid):
    windows = extract_features(eyes(150.0, eyelid=eyelid))
    late = windows.t_start >= 70.0
    np.testing.assert_allclose(windows.X[late, FREQUENCY], 1 / 3, rtol=0.02)
    np.testing.assert_allclose(windows.X[late, DURATION], 0.2, atol=0.01)


def test_perclos_closed_form_and_absent_without_eyelid():
    windows = extract_features(eyes(400.0, closed_fraction=0.3, blink_every_s=1000.0))
    late = windows.t_start >= 200.0
    np.testing.assert_allclose(windows.X[late, PERCLOS], 0.3, atol=0.005)
    assert np.isnan(windows.X[late, DURATION]).all()       # no blink in 60 s: undefined, not 0
    assert (windows.X[late, FREQUENCY] == 0.0).all()       # observed, none: a true 0
    no_eyelid = extract_features(eyes(60.0, eyelid=False))
    assert np.isnan(no_eyelid.X[:, PERCLOS]).all()


def test_warm_up_is_nan_then_covers_what_was_seen():
    config = PipelineConfig(warmup_s=10.0)
    windows = extract_features(eyes(40.0, closed_fraction=0.3, blink_every_s=1000.0), config)
    assert np.isnan(windows.X[0, PERCLOS])                  # [0, 10): under 10 s of signal
    assert windows.X[1, PERCLOS] == pytest.approx(0.3, abs=0.02)   # 10 s seen so far
    shorter = extract_features(eyes(40.0, closed_fraction=0.3, blink_every_s=1000.0),
                               PipelineConfig(warmup_s=2.0))
    assert np.isfinite(shorter.X[0, PERCLOS])


def test_closure_threshold_is_configurable():
    recording = eyes(60.0, closed_fraction=0.3, blink_every_s=3.0)
    strict = extract_features(recording, PipelineConfig(perclos_closure=0.95))
    loose = extract_features(recording, PipelineConfig(perclos_closure=0.6))
    assert strict.X[-1, PERCLOS] == pytest.approx(0.0)
    assert loose.X[-1, PERCLOS] > 0.3   # the blinks (opening 0.3, closure 0.7) count too


def test_closures_count_when_the_tracker_loses_the_pupil():
    """A tracker loses gaze and pupil while the lid covers the pupil; the lid aperture is still
    measured, so those closures must reach PERCLOS and the blink detector."""
    recording = eyes(400.0, closed_fraction=0.3, blink_every_s=1000.0)
    closed = recording.column("eyelid_r") < 0.5
    for name in ("gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch", "confidence"):
        recording.samples[closed, FIELD_INDEX[name]] = np.nan if name != "confidence" else 0.0
    windows = extract_features(recording)
    late = windows.t_start >= 200.0
    np.testing.assert_allclose(windows.X[late, PERCLOS], 0.3, atol=0.005)
