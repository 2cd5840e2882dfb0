"""The vehicle's signals in every form a sample has (wire map and block, CSV, Parquet, binary, LSL)
and the Taamneh et al. reader's mapping of its simulator columns, units checked on the real data."""

import math

import numpy as np
import pytest

from distractd.pipeline.formats import (
    FIELD_INDEX, FIELDS, OPTIONAL_FIELDS, RANGES, UNITS, VEHICLE_COLUMNS, VEHICLE_FIELDS, Limits,
    Recording, decode_samples, empty_block, encode_block, encode_map, lsl_mapping,
    read_recording, read_taamneh, write_recording,
)

VEHICLE = {"speed": 22.5, "steering": -0.04, "lane_offset": 0.31, "accel": -1.2,
           "accelerator": 0.0, "brake": 0.35, "yaw_rate": 0.02, "headway": 41.0,
           "distance": 1834.5}


def _vehicle_block():
    block = empty_block(3)
    block[:, FIELD_INDEX["t"]] = [0.0, 0.02, 0.04]
    block[:, FIELD_INDEX["gaze_r_yaw"]] = [0.01, np.nan, 0.02]
    for k, (field, value) in enumerate(VEHICLE.items()):
        block[:, FIELD_INDEX[field]] = value + 0.001 * np.arange(3) * (k + 1)
    block[1, FIELD_INDEX["headway"]] = np.nan   # no lead vehicle for a moment
    return block


def test_vehicle_fields_are_optional_with_units_and_ranges():
    assert FIELDS[-len(VEHICLE_FIELDS):] == VEHICLE_FIELDS == tuple(VEHICLE)
    assert set(VEHICLE_FIELDS) <= OPTIONAL_FIELDS
    assert [UNITS[f] for f in VEHICLE_FIELDS] == ["m/s", "rad", "m", "m/s2", "1", "1", "rad/s",
                                                  "m", "m"]
    assert RANGES["accelerator"] == RANGES["brake"] == (0.0, 1.0)
    assert all(low <= VEHICLE[f] <= high for f, (low, high) in RANGES.items() if f in VEHICLE)


def test_wire_map_and_block_carry_the_vehicle():
    limits = Limits()
    stream, block, _ = decode_samples(encode_map("car-7", {"t": 3.0, **VEHICLE}), limits)
    assert stream == "car-7"
    assert [block[0, FIELD_INDEX[f]] for f in VEHICLE] == list(VEHICLE.values())
    assert np.isnan(block[0, FIELD_INDEX["gaze_r_yaw"]])
    sent = _vehicle_block()
    fields = ("t",) + VEHICLE_FIELDS     # a vehicle-only block: its own field order
    frames = encode_block("car-7", sent[:, [FIELD_INDEX[f] for f in fields]], 4, fields=fields)
    _, back, seq = decode_samples(frames, limits)
    assert seq == 4
    expected = sent.copy()
    expected[:, FIELD_INDEX["gaze_r_yaw"]] = np.nan
    np.testing.assert_array_equal(back, expected)


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".npz"])
def test_files_keep_the_vehicle(tmp_path, suffix):
    sent = Recording(_vehicle_block(), np.array([0, 1, -1], dtype=np.int8), {"driver_id": "d"})
    path = tmp_path / f"drive{suffix}"
    write_recording(sent, path)
    back = read_recording(path)
    np.testing.assert_array_equal(back.samples, sent.samples)
    np.testing.assert_array_equal(back.labels, sent.labels)


def test_a_recording_written_before_the_vehicle_fields_reads_with_them_missing(tmp_path):
    older = FIELDS[:FIELDS.index("speed")]
    block = np.zeros((2, len(older)))
    block[:, 0] = [0.0, 0.5]
    path = tmp_path / "old.npz"
    header = b'{"format": "distractd-recording", "version": 1, "meta": {}}'
    with open(path, "wb") as file:
        np.savez(file, samples=block, labels=np.zeros(2, np.int8), fields=np.array(older),
                 header=np.frombuffer(header, dtype=np.uint8))
    back = read_recording(path)
    assert np.isnan(back.samples[:, [FIELD_INDEX[f] for f in VEHICLE_FIELDS]]).all()
    np.testing.assert_array_equal(back.t, [0.0, 0.5])


def test_lsl_vehicle_channels_in_the_units_cars_send():
    channels = [{"label": "speed", "unit": "km/h"}, {"label": "Steering", "unit": "deg"},
                {"label": "lane_offset", "unit": "cm"}, {"label": "accel", "unit": "g"},
                {"label": "accelerator", "unit": "percent"}, {"label": "brake", "unit": "%"},
                {"label": "yaw_rate", "unit": "deg/s"}, {"label": "headway", "unit": "m"},
                {"label": "distance", "unit": "km"}]
    mapping = lsl_mapping("can-bus", "float32", channels)
    block = mapping.decode([[90.0, -30.0, 25.0, 0.1, 40.0, 0.0, 5.0, 35.0, 1.5]], [7.0], 0.5)
    got = {f: block[0, FIELD_INDEX[f]] for f in VEHICLE_FIELDS}
    expected = {"speed": 25.0, "steering": math.radians(-30.0), "lane_offset": 0.25,
                "accel": 0.980665, "accelerator": 0.4, "brake": 0.0,
                "yaw_rate": math.radians(5.0), "headway": 35.0, "distance": 1500.0}
    assert got == pytest.approx(expected)
    assert block[0, 0] == 7.5 and np.isnan(block[0, FIELD_INDEX["gaze_r_yaw"]])


@pytest.fixture(scope="module")
def drives(shared_data):
    path = shared_data / "taamneh" / "T076.csv"   # a development-half driver
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    return {r.meta["drive"]: r for r in read_taamneh(path, drives=(4, 7))}


def test_taamneh_speed_is_km_h_by_the_distance_travelled(drives):
    for recording in drives.values():
        speed = recording.column("speed")
        travelled = np.diff(recording.column("distance"))  # metres per 1 s row
        moving = (speed[1:] > 5.0) & (travelled > 0)
        ratio = np.median(0.5 * (speed[1:] + speed[:-1])[moving] / travelled[moving])
        assert ratio == pytest.approx(1.0, abs=0.05)     # km/h / 3.6 = m/s


def test_taamneh_lane_offset_steering_and_pedals(shared_data, drives):
    normal = drives[4]
    offset = normal.column("lane_offset")
    assert 0.1 < np.nanstd(offset) < 0.4 and np.nanmax(np.abs(offset)) < 2.3  # m in a 3.65 m lane
    steering = normal.column("steering")
    assert np.nanpercentile(np.abs(steering), 99) < 0.3          # rad on a highway route
    for pedal in ("accelerator", "brake"):
        values = normal.column(pedal)
        assert np.nanmin(values) >= 0.0 and np.nanmax(values) <= 1.0
    on_brake = normal.column("brake") > 0
    assert np.mean(normal.column("accelerator")[on_brake] == 0) > 0.9   # one foot, two pedals
    assert np.isnan(normal.column("accel")).all() and np.isnan(normal.column("yaw_rate")).all()
    assert set(VEHICLE_COLUMNS) == {"Speed", "Steering", "LaneOffset", "Acceleration", "Brake",
                                    "Distance"}
    # texting moves the car about in its lane more than the normal drive does (issue 33's probe)
    texting = drives[7]
    assert (np.nanstd(np.diff(texting.column("steering"))[texting.labels[1:] == 1])
            > np.nanstd(np.diff(steering)))
