import math

import numpy as np
import pytest

from distractd import SchemaError
from distractd.pipeline import (
    FIELD_INDEX, FIELDS, N_FIELDS, block_from_columns, block_from_maps, maps_from_block,
)


def test_map_block_round_trip_keeps_values_and_nan_for_missing():
    maps = [{"t": 0.0, "gaze_r_yaw": 0.01, "confidence": 0.9},
            {"t": 1 / 60, "head_x": -0.02, "pupil_l": 3.5, "blink": 1}]
    block = block_from_maps(maps)
    assert block.shape == (2, N_FIELDS)
    assert block[0, FIELD_INDEX["gaze_r_yaw"]] == 0.01
    assert math.isnan(block[0, FIELD_INDEX["pupil_l"]])
    assert maps_from_block(block) == [{k: float(v) for k, v in m.items()} for m in maps]


def test_map_envelope_and_unknown_keys_are_ignored():
    block = block_from_maps([{"v": 1, "seq": 3, "t": 2.0, "future_field": 7.0}])
    assert block[0, 0] == 2.0 and np.isnan(block[0, 1:]).all()


@pytest.mark.parametrize("sample, message", [
    ({"gaze_r_yaw": 0.1}, "samples[0].t is required"),
    ({"t": 1.0, "gaze_r_yaw": "abc"}, "samples[0].gaze_r_yaw must be a number, got 'abc'"),
    ({"t": True}, "samples[0].t must be a number, got True"),
    ([1, 2], "samples[0] must be a map"),
])
def test_bad_maps_name_field_and_value(sample, message):
    with pytest.raises(SchemaError, match=message.replace("[", r"\[").replace("]", r"\]")):
        block_from_maps([sample])


def test_columns_in_sender_order_are_reordered():
    data = np.array([[0.5, 1.0, 0.25]])
    block = block_from_columns(["head_x", "t", "eyelid_r"], data)
    assert block[0, 0] == 1.0 and block[0, FIELD_INDEX["head_x"]] == 0.5
    assert block[0, FIELD_INDEX["eyelid_r"]] == 0.25


@pytest.mark.parametrize("fields, message", [
    (["t", "gaze_x"], "unknown field 'gaze_x'"),
    (["head_x", "head_y"], "must include 't'"),
    (["t", "t"], "repeated"),
])
def test_bad_columns_are_rejected(fields, message):
    with pytest.raises(SchemaError, match=message):
        block_from_columns(fields, np.zeros((1, 2)))


def test_fields_are_the_design_table():
    # the tracker's 18 fields, then the vehicle's 9
    assert FIELDS[0] == "t" and len(FIELDS) == 27 and len(set(FIELDS)) == 27
