"""The vehicle channel against closed forms: moments, lateral speed and time to line crossing,
reversal counts of a sinusoid, the entropy's running 90th percentile; a stream of the car alone
is windowed; stream ≡ batch (tests/pipeline/test_clock.py checks it with every clock fault)."""

import math

import numpy as np
import pytest

from distractd.pipeline import (
    FEATURE_NAMES, FIELD_INDEX, VEHICLE_FEATURES, PipelineConfig, Recording, StreamProcessor,
    VehicleChannel, Windows, detect_channel, empty_block, extract_features,
)

F = {name: FEATURE_NAMES.index(name) for name in VEHICLE_FEATURES}


def drive(seconds=60.0, rate_hz=60.0, **signals):
    t = np.arange(0.0, seconds, 1.0 / rate_hz)
    block = empty_block(len(t))
    block[:, FIELD_INDEX["t"]] = t
    for field, make in signals.items():
        block[:, FIELD_INDEX[field]] = make(t)
    return Recording(block, np.full(len(t), -1, dtype=np.int8))


def window(recording, start, end):
    """The features of the pipeline's window ``[start, end)`` (windows of ``end - start``)."""
    windows = extract_features(recording, PipelineConfig(window_s=end - start))
    (row,) = np.flatnonzero((windows.t_start == start) & (windows.t_end == end))
    return windows.X[row]


def test_moments_and_rates_are_numpy_s():
    rng = np.random.default_rng(3)
    recording = drive(20.0, 10.0, lane_offset=lambda t: 0.3 * np.sin(t) + 0.01 * rng.standard_normal(len(t)),
                      speed=lambda t: 25.0 + 0.5 * t, accelerator=lambda t: 0.2 + 0.0 * t,
                      brake=lambda t: np.where(t > 15, 0.4, 0.0))
    block = recording.samples
    block[::7, FIELD_INDEX["lane_offset"]] = np.nan       # gaps inside the window
    x = window(recording, 5.0, 15.0)
    inside = (block[:, 0] >= 5.0) & (block[:, 0] < 15.0)
    lane = block[inside, FIELD_INDEX["lane_offset"]]
    assert x[F["mean_lane_offset"]] == pytest.approx(np.nanmean(lane))
    assert x[F["sd_lane_offset"]] == pytest.approx(np.nanstd(lane, ddof=1))
    assert x[F["mean_speed"]] == pytest.approx(25.0 + 0.5 * np.mean(block[inside, 0]))
    assert x[F["speed_change_m_s2"]] == pytest.approx(0.5)   # 0.5 m/s per s throughout
    assert x[F["mean_accelerator"]] == pytest.approx(0.2) and x[F["mean_brake"]] == 0.0
    assert x[F["pedal_change_per_s"]] == 0.0
    assert np.isnan(x[F["sd_steering"]]) and np.isnan(x[F["steering_entropy"]])  # no steering
    # the car alone is a stream: its windows have no eye features and quality 0
    assert np.isnan(x[:FEATURE_NAMES.index(VEHICLE_FEATURES[0])]).all()


def test_lateral_speed_and_time_to_line_crossing():
    # drifting left at 0.1 m/s from the lane centre: a wheel crosses at (3.65 - 1.8) / 2 m
    x = window(drive(8.0, 10.0, lane_offset=lambda t: 0.1 * t), 5.0, 8.0)
    assert x[F["lane_offset_speed_m_s"]] == pytest.approx(0.1)
    assert x[F["lane_tlc_min_s"]] == pytest.approx((0.925 - 0.79) / 0.1)  # last sample t=7.9
    # a lane change (a jump of a lane width) is no lateral speed; holding the offset caps TLC
    x = window(drive(10.0, 10.0, lane_offset=lambda t: np.where(t < 5.0, 1.5, -2.15)), 0.0, 10.0)
    assert x[F["lane_offset_speed_m_s"]] == 0.0 and x[F["lane_tlc_min_s"]] == 20.0


def test_reversals_of_a_sinusoid_count_both_gaps():
    # 5° at 0.2 Hz: one reversal each half period, 24 a minute; the 0.6 Hz filter keeps 95 %
    x = window(drive(70.0, 60.0, steering=lambda t: math.radians(5.0) * np.sin(2 * np.pi * 0.2 * t)),
               10.0, 70.0)
    assert x[F["steering_reversals_small_per_min"]] == pytest.approx(24.0, abs=1.0)
    assert x[F["steering_reversals_large_per_min"]] == pytest.approx(24.0, abs=1.0)
    # 1° is below the large gap once filtered: only the small gap sees reversals
    x = window(drive(70.0, 60.0, steering=lambda t: math.radians(0.5) * np.sin(2 * np.pi * 0.2 * t)),
               10.0, 70.0)
    assert x[F["steering_reversals_large_per_min"]] == 0.0
    assert x[F["steering_reversals_small_per_min"]] == pytest.approx(24.0, abs=1.0)
    assert x[F["steering_speed_rad_s"]] == pytest.approx(
        math.radians(0.5) * 4 * 0.2, rel=0.02)          # mean |dθ/dt| of a sinusoid: 4 A f


def test_entropy_alpha_is_a_running_90th_percentile():
    rng = np.random.default_rng(5)
    recording = drive(600.0, 10.0, steering=lambda t: 0.01 * np.cumsum(rng.standard_normal(len(t))))
    bins = detect_channel(VehicleChannel, recording).outputs["entropy_bin"]
    late = bins[len(bins) // 2:]
    late = late[late >= 0]                 # at 10 Hz every other sample is taken (0.15 s apart)
    assert len(late) == 1500 and (late <= 8).all()
    # beyond ±α are bins 0-2 and 6-8: about 10 % of the errors once α has settled
    assert np.mean((late <= 2) | (late >= 6)) == pytest.approx(0.1, abs=0.02)
    x = window(recording, 300.0, 400.0)
    assert 0.5 < x[F["steering_entropy"]] <= 1.0
    assert x[F["steering_hf_ratio"]] < 0.1    # a random walk is slow steering


def test_stream_in_blocks_equals_batch_and_the_switch_turns_the_channel_off():
    rng = np.random.default_rng(9)
    recording = drive(60.0, 60.0,
                      steering=lambda t: 0.02 * np.sin(t) + 0.002 * rng.standard_normal(len(t)),
                      lane_offset=lambda t: 0.2 * np.sin(0.3 * t), speed=lambda t: 20.0 + np.sin(t),
                      accelerator=lambda t: 0.3 + 0.1 * np.sin(t), brake=lambda t: 0.0 * t)
    block = recording.samples
    block[rng.random(len(block)) < 0.05, FIELD_INDEX["steering"]] = np.nan
    keep = rng.random(len(block)) > 0.02                             # dropped samples
    recording = Recording(block[keep], recording.labels[keep])
    batch = extract_features(recording)
    trace = detect_channel(VehicleChannel, recording)
    assert np.isfinite(batch.X[:, [F[name] for name in VEHICLE_FEATURES]]).all()
    processor = StreamProcessor()
    cuts = np.sort(rng.choice(np.arange(1, recording.n_samples), 40, replace=False))
    parts = [processor.update(part) for part in np.split(recording.samples, cuts)]
    stream = Windows.concat(parts + [processor.flush()])
    np.testing.assert_array_equal(stream.X, batch.X)
    assert processor.vehicle.has_vehicle
    np.testing.assert_array_equal(trace.outputs["speed"], recording.column("speed"))
    off = extract_features(recording, PipelineConfig(vehicle=False))
    assert np.isnan(off.X[:, [F[name] for name in VEHICLE_FEATURES]]).all()
    np.testing.assert_array_equal(off.X[:, :F[VEHICLE_FEATURES[0]]],
                                  batch.X[:, :F[VEHICLE_FEATURES[0]]])


def test_the_drivers_last_steering_or_pedal_input_is_aged_at_each_window_end():
    # lane keeping's slow steering (1 deg/s) is no input; a turn of the wheel at 20 deg/s over
    # 20-21 s is, and so is pressing the brake at 40 s
    def steering(t):
        turn = np.clip(t - 20.0, 0.0, 1.0) * math.radians(20.0)
        return math.radians(1.0) * np.sin(t) + turn
    recording = drive(60.0, 10.0, steering=steering, brake=lambda t: np.where(t >= 40.0, 0.5, 0.0))
    windows = extract_features(recording)
    age = dict(zip(windows.t_end, windows.input_age_s))
    assert np.isnan(age[15.0])                           # no input yet on this clock
    assert age[25.0] == pytest.approx(25.0 - 21.0)       # the last step of the turn: t = 21.0
    assert age[39.5] == pytest.approx(39.5 - 21.0)
    assert age[45.0] == pytest.approx(45.0 - 40.0)       # the brake's step
    eyes_only = drive(30.0, 10.0, gaze_r_yaw=lambda t: 0.0 * t, gaze_r_pitch=lambda t: 0.0 * t)
    assert np.isnan(extract_features(eyes_only).input_age_s).all()
