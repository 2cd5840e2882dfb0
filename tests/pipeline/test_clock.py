"""Clock jumps and resets, and the end of the stream: counted, bounded, stream == batch."""

import numpy as np
import pytest

from distractd.pipeline import (
    FEATURE_NAMES, PipelineConfig, Recording, StreamProcessor, Windows, detect_events,
    extract_features,
)


PERCLOS = FEATURE_NAMES.index("mean_perclos")
BLINK_FREQUENCY = FEATURE_NAMES.index("mean_blink_frequency_hz")


def streamed(recording, seed):
    """Windows of ``recording`` fed in random blocks (1 to 90 samples), then flushed."""
    rng = np.random.default_rng(seed)
    n = recording.n_samples
    cuts = np.cumsum(rng.integers(1, 91, n))
    cuts = cuts[cuts < n]
    processor = StreamProcessor()
    parts = [processor.update(b, lab) for b, lab in zip(np.split(recording.samples, cuts),
                                                       np.split(recording.labels, cuts))]
    return processor, Windows.concat(parts + [processor.flush()])


def assert_same(a, b):
    for name in ("t_start", "t_end", "quality", "label"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    np.testing.assert_array_equal(a.X, b.X)


def batch_and_stream(recording):
    batch = extract_features(recording)
    for seed in (1, 2):
        processor, stream = streamed(recording, seed)
        assert_same(stream, batch)
    return processor, batch


def without(recording, rows):
    keep = np.ones(recording.n_samples, dtype=bool)
    keep[rows] = False
    return Recording(recording.samples[keep], recording.labels[keep])


def test_single_future_timestamp_is_dropped_and_later_windows_are_unaffected(make_drive):
    recording = make_drive(seconds=60.0)
    bad = recording.samples.copy()
    bad[1800, 0] += 5e8                               # one sample 16 years ahead
    processor, windows = batch_and_stream(Recording(bad, recording.labels))
    assert processor.rejected["t_jump"] == 1
    assert processor.rejected["backwards_t"] == 0
    assert_same(windows, extract_features(without(recording, [1800])))
    events = detect_events(Recording(bad, recording.labels))
    assert events.rejected[1800] == "t_jump" and (events.rejected != "").sum() == 1


def test_a_real_pause_is_kept_as_a_gap(make_drive):
    recording = make_drive(seconds=60.0)
    paused = recording.samples.copy()
    paused[1800:, 0] += 600.0                         # the tracker paused for 10 min
    processor, windows = batch_and_stream(Recording(paused, recording.labels))
    assert processor.rejected["t_jump"] == 0 and processor.rejected["gap"] == 1
    assert windows.t_end[-1] == pytest.approx(1660.0)


def test_clock_restart_to_zero_resumes_after_warm_up(make_drive):
    recording = make_drive(seconds=120.0)
    restarted = recording.samples.copy()
    restarted[3600:, 0] -= restarted[3600, 0] - 0.004   # at 1060 s the clock restarts at 0
    processor, windows = batch_and_stream(Recording(restarted, recording.labels))
    assert processor.rejected["clock_reset"] == 1
    assert processor.rejected["backwards_t"] == 0      # the run that proved it is replayed
    old = windows.t_end > 100.0
    np.testing.assert_array_equal(windows.t_end[old], np.arange(1010.0, 1060.01, 0.5))
    new = windows.t_end[~old]
    np.testing.assert_array_equal(new, np.arange(10.0, 60.01, 0.5))   # first window: 10 s
    first = np.flatnonzero(~old)[0]
    # the derived measures warm up again, as on a fresh stream over the new clock (which has
    # not measured the rate before: quality differs in the last digits, and its first sample is
    # unresolved for events, which only touches the first window)
    fresh = extract_features(Recording(restarted[3600:], recording.labels[3600:]))
    for name in ("t_start", "t_end", "label"):
        np.testing.assert_array_equal(getattr(windows, name)[first:], getattr(fresh, name))
    np.testing.assert_array_equal(windows.X[first + 1:], fresh.X[1:])
    other = ~np.isin(np.arange(len(FEATURE_NAMES)), [FEATURE_NAMES.index("mean_blink"),
                                     FEATURE_NAMES.index("mean_saccade")])
    np.testing.assert_array_equal(windows.X[first, other], fresh.X[0, other])
    np.testing.assert_allclose(windows.quality[first:], fresh.quality, rtol=1e-9)
    assert np.isfinite(windows.X[first - 1, PERCLOS])        # the old clock was warm
    assert np.isnan(windows.X[first, PERCLOS])               # warm-up restarts: 10 s of signal
    assert np.isfinite(windows.X[first + 1:, PERCLOS]).all()


def test_backwards_burst_that_is_not_a_clock_is_dropped(make_drive):
    recording = make_drive(seconds=60.0)
    bad = recording.samples.copy()
    rng = np.random.default_rng(5)
    bad[1800:1840, 0] = rng.uniform(0.0, 1000.0, 40)  # 40 scrambled times in the past
    processor, windows = batch_and_stream(Recording(bad, recording.labels))
    assert processor.rejected["backwards_t"] == 40
    assert processor.rejected["clock_reset"] == 0
    assert_same(windows, extract_features(without(recording, np.arange(1800, 1840))))


def test_resent_old_block_is_not_a_reset(make_drive):
    recording = make_drive(seconds=60.0)
    resent = np.concatenate([recording.samples[:1800], recording.samples[1770:1800],
                             recording.samples[1800:]])
    labels = np.concatenate([recording.labels[:1800], recording.labels[1770:1800],
                             recording.labels[1800:]])
    processor, windows = batch_and_stream(Recording(resent, labels))
    assert processor.rejected["clock_reset"] == 0
    assert processor.rejected["backwards_t"] == 29 and processor.rejected["duplicate_t"] == 1
    assert_same(windows, extract_features(recording))


def test_unconfirmed_jump_at_the_end_is_dropped_by_the_flush(make_drive):
    recording = make_drive(seconds=30.0)
    bad = recording.samples.copy()
    bad[-1, 0] += 1e6
    processor = StreamProcessor()
    processor.update(bad)
    assert processor.rejected["t_jump"] == 0           # still held: the next sample decides
    processor.flush()
    assert processor.rejected["t_jump"] == 1


def test_flush_leaves_open_events_unresolved(make_drive):
    recording = make_drive(seconds=30.0)
    closing = recording.samples.copy()
    closing[-3:, [11, 12]] = 0.05                      # the eye closes in the last 50 ms
    windows = extract_features(Recording(closing))
    whole = extract_features(Recording(recording.samples))
    assert windows.t_end[-1] == whole.t_end[-1] == 1030.0
    blink = FEATURE_NAMES.index("mean_blink")
    # the unresolved samples leave the blink mean: it is not pulled towards "no blink"
    np.testing.assert_array_equal(windows.X[-1, blink], whole.X[-1, blink])


def test_every_clock_fault_at_once_stream_equals_batch_in_one_sample_blocks(make_drive):
    recording = make_drive(seconds=90.0)
    bad = recording.samples.copy()
    rng = np.random.default_rng(9)
    bad[600, 0] += 1e7                                 # a future outlier
    bad[900:910, 0] = rng.uniform(0.0, 1000.0, 10)     # a scrambled burst
    bad[1500:, 0] -= 2000.0                            # a restart far back ...
    bad[3000, 0] = 3e9                                 # ... another outlier on the new clock
    bad[4000:, 0] -= bad[4000, 0] + 3000.0             # ... and a restart further back
    batch = extract_features(Recording(bad, recording.labels))
    processor = StreamProcessor()
    parts = [processor.update(bad[i:i + 1], recording.labels[i:i + 1])
             for i in range(len(bad))]
    assert_same(Windows.concat(parts + [processor.flush()]), batch)
    assert processor.rejected["clock_reset"] == 2
    assert processor.rejected["t_jump"] == 2
    assert processor.rejected["backwards_t"] == 10
    events = detect_events(Recording(bad, recording.labels))
    assert (events.rejected != "").sum() == 12
