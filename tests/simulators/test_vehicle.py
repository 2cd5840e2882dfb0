"""The simulated car against its calibration (docs/simulator.md "Vehicle"): Taamneh-like texting
and normal drives, the cognitive task's narrower lane, physical consistency of the signals."""

import numpy as np
import pytest

from distractd.pipeline import FEATURE_NAMES, FIELD_INDEX, extract_features
from distractd.simulators import simulate_drive

SDLP = FEATURE_NAMES.index("sd_lane_offset")


def per_second(recording, field):
    """The field and the labels at whole seconds (the real drives' 1 Hz rows)."""
    rows = np.searchsorted(recording.t, np.arange(recording.t[0], recording.t[-1], 1.0))
    return recording.samples[rows, FIELD_INDEX[field]], recording.labels[rows]


@pytest.fixture(scope="module")
def blocks():
    return {protocol: simulate_drive(4, protocol=protocol, tracker="sparse-gaze", rate_hz=1.0)
            for protocol in ("texting-blocks", "normal-blocks")}


def test_texting_steers_three_times_as_much_as_the_normal_drive(blocks):
    steering, labels = per_second(blocks["texting-blocks"], "steering")
    change = np.abs(np.diff(steering))
    on_task = change[labels[1:] == 1].mean()
    normal = np.abs(np.diff(per_second(blocks["normal-blocks"], "steering")[0])).mean()
    assert 0.007 < normal < 0.018          # Taamneh normal drives: 0.012 rad per second
    assert 0.02 < on_task < 0.06           # Taamneh texting seconds: 0.037 rad per second
    assert on_task > 2.0 * normal


def test_normal_drive_lane_speed_and_pedals_are_the_real_drives(blocks):
    recording = blocks["normal-blocks"]
    offset = recording.column("lane_offset")
    speed = recording.column("speed")
    assert 0.1 < np.std(offset) < 0.4      # Taamneh normal drives: SDLP 0.24 m
    assert 17.0 < speed.mean() < 23.0      # ... 19.7 m/s
    for pedal in ("accelerator", "brake"):
        assert np.all((recording.column(pedal) >= 0) & (recording.column(pedal) <= 1))
    # the odometer integrates the speed; the yaw rate is the bicycle model's
    travelled = np.diff(recording.column("distance"))
    np.testing.assert_allclose(travelled, speed[1:] * np.diff(recording.t), rtol=0.05, atol=0.2)
    assert np.isfinite(recording.column("headway")).all()


@pytest.mark.parametrize("seed", [2, 5])
def test_cognitive_load_narrows_the_lane(seed):
    # Taamneh question seconds: SDLP 0.12 m against 0.29 m off task; seeds 6-8 give 0.49-0.66
    recording = simulate_drive(seed, duration_s=900.0, protocol="cognitive")
    windows = extract_features(recording)
    windows = windows[windows.t_end % 5.0 == 0.0]   # 10 s windows, every 5 s
    sdlp = windows.X[:, SDLP]
    share = np.array([recording.labels[(recording.t >= e - 10) & (recording.t < e)].mean()
                      for e in windows.t_end])
    assert np.median(sdlp[share > 0.9]) < 0.9 * np.median(sdlp[share < 0.1])
