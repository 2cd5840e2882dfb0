"""The fatigue channel: eye closures, PERCLOS, microsleep, sleep and drowsiness alerts."""

import numpy as np
import pytest

from distractd._errors import ConfigError
from distractd.pipeline import (
    FATIGUE_ALERT_KINDS, FIELD_INDEX, FatigueAlert, PipelineConfig, Recording, StreamProcessor,
    Windows, detect_fatigue, empty_block, extract_features,
)
from distractd.simulators import simulate_drive

RATE_HZ = 60.0
OPEN = 1.0
SHUT = 0.05


def eyes(segments, rate_hz=RATE_HZ, head_yaw_deg=0.0, seed=0):
    """Samples of a driver looking at the road: ``segments`` of (seconds, aperture, head yaw in
    degrees or None for ``head_yaw_deg``); aperture None is eyes hidden (sunglasses: eyelid and
    gaze NaN, confidence 0). As a remote tracker does, a lid over the pupil (aperture below 0.4)
    loses the gaze and lowers the confidence. Returns the block and each segment's start time."""
    rng = np.random.default_rng(seed)
    counts = [int(round(seconds * rate_hz)) for seconds, *_ in segments]
    n = sum(counts)
    block = empty_block(n)
    block[:, 0] = np.arange(n) / rate_hz
    aperture = np.empty(n)
    head = np.empty(n)
    starts, i = [], 0
    for count, (_, value, *turn) in zip(counts, segments):
        starts.append(block[i, 0])
        aperture[i:i + count] = np.nan if value is None else value
        head[i:i + count] = turn[0] if turn else head_yaw_deg
        i += count
    aperture += rng.normal(0.0, 0.01, n)
    covered = ~(aperture >= 0.4)
    for eye in "rl":
        block[:, FIELD_INDEX[f"eyelid_{eye}"]] = aperture
        for angle in ("yaw", "pitch"):
            gaze = np.radians(rng.normal(0.0, 0.5, n))
            gaze[covered] = np.nan
            block[:, FIELD_INDEX[f"gaze_{eye}_{angle}"]] = gaze
    block[:, FIELD_INDEX["confidence"]] = np.where(
        np.isnan(aperture), 0.0, np.where(covered, 0.3, 0.9))
    block[:, FIELD_INDEX["head_yaw"]] = np.radians(head)
    block[:, FIELD_INDEX["head_pitch"]] = 0.0
    return block, starts


def blinking(seconds, blink_s=0.15, every_s=4.0):
    """Open eyes with a blink of ``blink_s`` every ``every_s`` seconds, as segments."""
    return [(blink_s, SHUT), (every_s - blink_s, OPEN)] * int(round(seconds / every_s))


def kinds(alerts):
    return [alert.kind for alert in alerts]


def test_a_closure_facing_forward_raises_microsleep_once_and_a_long_one_sleep_too():
    block, starts = eyes(blinking(45.0) + [(1.5, SHUT), (20.0, OPEN), (4.0, SHUT), (20.0, OPEN)])
    result = detect_fatigue(Recording(block))
    first, second = starts[-4], starts[-2]
    assert kinds(result.alerts) == ["microsleep", "microsleep", "sleep"]
    micro, micro2, sleep = result.alerts
    period = 1.0 / RATE_HZ
    for alert, start, after in ((micro, first, 1.0), (micro2, second, 1.0), (sleep, second, 3.0)):
        assert isinstance(alert, FatigueAlert)
        assert alert.t == pytest.approx(start + after, abs=2 * period)
        assert alert.closed_s == pytest.approx(after, abs=2 * period)
        (closure,) = alert.closures
        assert closure[0] == pytest.approx(start, abs=period) and closure[1] == alert.t
        assert 0.0 < alert.perclos < 0.2
    # the per-sample state follows the closure
    t = result.t
    during = (t > second + 0.5) & (t < second + 3.9)
    assert np.allclose(result.eyes_closed_s[during], t[during] - second, atol=2 * period)
    assert (result.eyes_closed_s[(t > second + 4.5) & (t < second + 5.0)] == 0.0).all()
    assert result.available[t > 20.0].all()
    processor = StreamProcessor()
    processor.update(block[:int(5 * RATE_HZ)])
    assert processor.fatigue.has_eyelid and not processor.fatigue.level_ready
    processor.update(block[int(5 * RATE_HZ):])
    assert processor.fatigue.level_ready
    assert processor.fatigue.open_level == pytest.approx(OPEN, abs=0.02)


def test_normal_blinks_and_a_calm_simulated_drive_raise_nothing():
    block, _ = eyes(blinking(120.0, blink_s=0.2, every_s=3.0))
    assert detect_fatigue(Recording(block)).alerts == []
    result = detect_fatigue(simulate_drive(3, duration_s=240.0))
    assert result.alerts == []
    ready = result.t > 60.0
    assert result.available[ready].mean() > 0.9
    assert 0.01 < np.nanmean(result.perclos[ready]) < 0.08    # alert level: a few percent
    assert 0.1 < np.nanmean(result.blink_duration_s[ready]) < 0.25
    assert np.nanmax(result.eyes_closed_s) < 0.5


def test_sunglasses_and_trackers_without_eyelid_have_no_fatigue_state_and_no_alert():
    plan = blinking(45.0) + [(4.0, SHUT), (20.0, OPEN)]
    block, _ = eyes(plan)
    hidden = block.copy()
    hidden[:, [FIELD_INDEX["eyelid_r"], FIELD_INDEX["eyelid_l"]]] = np.nan   # sunglasses
    hidden[:, FIELD_INDEX["confidence"]] = 0.0
    for samples in (hidden, _gaze_only(block)):
        result = detect_fatigue(Recording(samples))
        assert result.alerts == []
        assert not result.available.any()
        assert np.isnan(result.eyes_closed_s).all() and np.isnan(result.perclos).all()
        windows = extract_features(Recording(samples))
        assert not windows.fatigue_available.any() and np.isnan(windows.perclos).all()
        assert windows.alert_list() == []
    processor = StreamProcessor()
    processor.update(_gaze_only(block))
    assert not processor.fatigue.has_eyelid


def _gaze_only(block):
    samples = block.copy()
    for name in ("eyelid_r", "eyelid_l", "head_yaw", "head_pitch"):
        samples[:, FIELD_INDEX[name]] = np.nan
    samples[:, FIELD_INDEX["confidence"]] = 0.9
    return samples


def test_a_closure_goes_on_through_a_short_loss_of_the_eyes_and_ends_at_a_long_one():
    short = [(2.0, SHUT), (0.3, None), (2.0, SHUT), (20.0, OPEN)]
    block, starts = eyes(blinking(45.0) + short)
    result = detect_fatigue(Recording(block))
    assert kinds(result.alerts) == ["microsleep", "sleep"]
    assert result.alerts[1].closures[0][0] == pytest.approx(starts[-4], abs=1 / RATE_HZ)
    assert np.isnan(result.eyes_closed_s[(result.t > starts[-3]) & (result.t < starts[-2])]).all()
    # hidden for longer: the closure's end is unknown, and the rest of it raises nothing
    block, _ = eyes(blinking(45.0) + [(0.8, SHUT), (1.0, None), (3.0, SHUT), (20.0, OPEN)])
    assert detect_fatigue(Recording(block)).alerts == []


def test_a_closure_goes_on_through_a_short_gap_in_the_samples_and_is_unknown_after_a_long_one():
    block, starts = eyes(blinking(45.0) + [(4.0, SHUT), (20.0, OPEN)])
    start = starts[-2]
    t = block[:, 0]
    short = block[~((t >= start + 2.0) & (t < start + 2.3))]   # 0.3 s of samples missing
    result = detect_fatigue(Recording(short))
    assert kinds(result.alerts) == ["microsleep", "sleep"]
    assert result.alerts[1].closures[0][0] == pytest.approx(start, abs=1 / RATE_HZ)
    # a gap longer than fatigue_hidden_s: the closure's end is unknown; its duration is NaN (not
    # 0, which would say the eyes were seen open) until the eyes are seen open
    long = block[~((t >= start + 1.2) & (t < start + 2.0))]
    result = detect_fatigue(Recording(long))
    assert kinds(result.alerts) == ["microsleep"]
    after = (result.t > start + 2.1) & (result.t < start + 3.9)
    assert np.isnan(result.eyes_closed_s[after]).all()
    assert (result.eyes_closed_s[(result.t > start + 4.5) & (result.t < start + 5.0)] == 0.0).all()


def test_a_closure_with_the_head_turned_away_raises_nothing():
    plan = blinking(45.0) + [(1.5, SHUT, 40.0), (20.0, OPEN), (1.5, SHUT, 10.0), (20.0, OPEN)]
    block, starts = eyes(plan)
    result = detect_fatigue(Recording(block))
    assert kinds(result.alerts) == ["microsleep"]   # the second: 10 deg is still forward
    assert result.alerts[0].closures[0][0] == pytest.approx(starts[-2], abs=1 / RATE_HZ)


def test_drowsiness_is_raised_once_and_re_armed_after_recovery():
    slow = blinking(90.0, blink_s=0.45, every_s=3.0)      # PERCLOS 15 %, blinks 0.45 s
    plan = blinking(60.0) + slow + blinking(120.0) + slow
    block, starts = eyes(plan)
    result = detect_fatigue(Recording(block))
    assert kinds(result.alerts) == ["drowsiness", "drowsiness"]
    first_slow = starts[len(blinking(60.0))]
    second_slow = starts[len(blinking(60.0)) + len(slow) + len(blinking(120.0))]
    first, second = result.alerts
    assert first_slow < first.t < first_slow + 60.0
    assert second_slow < second.t < second_slow + 60.0
    for alert in (first, second):
        assert alert.perclos >= 0.10 and np.isnan(alert.closed_s)
        assert len(alert.closures) >= 5
        assert all(alert.t - 60.5 < end <= alert.t and end - start >= 0.15
                   for start, end in alert.closures)
    t = result.t
    assert result.drowsy[(t > first.t) & (t < first_slow + 90.0)].all()
    assert not result.drowsy[(t > second_slow - 10.0) & (t < second_slow)].any()


def test_streaming_in_chunks_equals_batch():
    block, _ = eyes(blinking(45.0) + [(1.5, SHUT), (10.0, OPEN), (0.2, None), (4.0, SHUT)]
                    + blinking(60.0, blink_s=0.45))
    recording = Recording(block)
    batch = extract_features(recording)
    assert [kind for _, kind in batch.alert_list()] == [
        "microsleep", "microsleep", "sleep", "drowsiness"]
    rng = np.random.default_rng(5)
    cuts = np.sort(rng.choice(np.arange(1, len(block)), 40, replace=False))
    processor = StreamProcessor()
    parts = [processor.update(part) for part in np.split(block, cuts)]
    stream = Windows.concat(parts + [processor.flush()])
    for name in ("t_end", "fatigue_available", "eyes_closed_s", "perclos", "blink_duration_s",
                 "drowsy"):
        np.testing.assert_array_equal(getattr(stream, name), getattr(batch, name))
    np.testing.assert_equal(_fields(stream.alerts), _fields(batch.alerts))   # NaN == NaN
    assert batch.fatigue_available[batch.t_end > 20.0].all()
    assert np.nanmax(batch.eyes_closed_s) > 0.0


def _fields(alerts):
    return [[vars(alert) for alert in group] for group in alerts]


def test_fatigue_off_leaves_the_columns_unknown_and_raises_nothing():
    block, _ = eyes(blinking(45.0) + [(4.0, SHUT), (20.0, OPEN)])
    windows = extract_features(Recording(block), PipelineConfig(fatigue=False))
    assert not windows.fatigue_available.any() and not windows.drowsy.any()
    assert np.isnan(windows.eyes_closed_s).all() and windows.alert_list() == []


@pytest.mark.parametrize("settings, field", [
    ({"fatigue_microsleep_s": 4.0}, "fatigue_microsleep_s"),
    ({"fatigue_closed_fraction": 0.6}, "fatigue_closed_fraction"),
    ({"fatigue_perclos_window_s": 3601.0}, "fatigue_perclos_window_s"),
    ({"fatigue_head_yaw_deg": -1.0}, "fatigue_head_yaw_deg"),
])
def test_bad_fatigue_settings_are_refused_by_name(settings, field):
    with pytest.raises(ConfigError, match=field):
        PipelineConfig(**settings)


def test_alert_kinds_are_the_contract():
    assert FATIGUE_ALERT_KINDS == ("microsleep", "sleep", "drowsiness")
