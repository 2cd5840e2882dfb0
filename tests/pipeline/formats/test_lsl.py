"""LSL channel mapping: canonical labels with units, XDF gaze meta-data, the Pupil Capture relay
layout, eye-in-head gaze with and without head pose, clock correction, refusals."""

import math

import numpy as np
import pytest

from distractd import SchemaError
from distractd.pipeline.formats import FIELD_INDEX, gaze_normal, lsl_mapping, lsl_stream_id


def _column(block, field):
    return block[:, FIELD_INDEX[field]]


def test_canonical_labels_with_units_and_clock_correction():
    channels = [{"label": "Gaze_R_Yaw", "unit": "degrees"}, {"label": "gaze_r_pitch"},
                {"label": "head_x", "unit": "mm"}, {"label": "confidence"},
                {"label": "marker"}]
    mapping = lsl_mapping("car", "float32", channels)
    block = mapping.decode([[10.0, 0.1, 250.0, 0.9, 7.0], [-5.0, 0.2, -100.0, 0.4, 8.0]],
                           [100.0, 100.5], clock_offset_s=-3.25)
    np.testing.assert_allclose(block[:, 0], [96.75, 97.25])
    np.testing.assert_allclose(_column(block, "gaze_r_yaw"), np.radians([10.0, -5.0]))
    np.testing.assert_allclose(_column(block, "gaze_r_pitch"), [0.1, 0.2])
    np.testing.assert_allclose(_column(block, "head_x"), [0.25, -0.1])
    np.testing.assert_allclose(_column(block, "confidence"), [0.9, 0.4])
    assert np.isnan(_column(block, "gaze_l_yaw")).all() and mapping.ignored == ["marker"]
    assert mapping.gaze_frame == "car"


def test_xdf_gaze_meta_data():
    channels = [{"label": f"{eye}{axis}", "type": f"Direction{axis}", "eye": eye}
                for eye in ("right", "left") for axis in "XYZ"]
    channels += [{"label": "pr", "type": "Radius", "eye": "right", "unit": "mm"},
                 {"label": "pl", "type": "Diameter", "eye": "left", "unit": "mm"},
                 {"label": "conf", "type": "Confidence"}]
    mapping = lsl_mapping("tracker", "double64", channels)
    row = gaze_normal(0.2, -0.1) + gaze_normal(-0.3, 0.05) + [1.6, 3.4, 0.8]
    block = mapping.decode([row], [5.0], 0.0)
    assert (_column(block, "gaze_r_yaw")[0], _column(block, "gaze_r_pitch")[0]) == \
        pytest.approx((0.2, -0.1))
    assert (_column(block, "gaze_l_yaw")[0], _column(block, "gaze_l_pitch")[0]) == \
        pytest.approx((-0.3, 0.05))
    assert (_column(block, "pupil_r")[0], _column(block, "pupil_l")[0]) == (3.2, 3.4)
    assert _column(block, "confidence")[0] == pytest.approx(0.8)


def test_pupil_capture_relay_is_eye_in_head_and_head_pose_makes_it_car_frame():
    labels = ["confidence", "norm_pos_x", "norm_pos_y", "gaze_point_3d_x", "gaze_point_3d_y",
              "gaze_point_3d_z"] + [f"eye_center{e}_3d_{a}" for e in "01" for a in "xyz"] + [
        f"gaze_normal{e}_{a}" for e in "01" for a in "xyz"] + [
        "diameter0_2d", "diameter1_2d", "diameter0_3d", "diameter1_3d"]
    mapping = lsl_mapping("pupil_capture", "float32", [{"label": x} for x in labels])
    assert mapping.gaze_frame == "head"
    row = np.zeros(len(labels))
    row[0] = 0.95
    row[labels.index("gaze_normal0_x"):labels.index("gaze_normal0_z") + 1] = gaze_normal(0.1, 0)
    row[labels.index("gaze_normal1_x"):labels.index("gaze_normal1_z") + 1] = np.nan  # monocular
    row[labels.index("diameter0_3d")] = 3.3
    block = mapping.decode([row], [1.0], 0.0)
    assert _column(block, "gaze_r_yaw")[0] == pytest.approx(0.1)
    assert math.isnan(_column(block, "gaze_l_yaw")[0])
    assert _column(block, "pupil_r")[0] == 3.3 and _column(block, "confidence")[0] == 0.95
    # eye-in-head gaze beside head pose: car-frame gaze = head + eye, angle by angle
    channels = [{"label": x} for x in ("gaze_r_yaw", "gaze_r_pitch", "head_yaw", "head_pitch")]
    composed = lsl_mapping("glasses", "float32", channels, gaze_frame="head")
    assert composed.gaze_frame == "car"
    block = composed.decode([[0.1, -0.05, 0.3, 0.02]], [1.0], 0.0)
    assert (_column(block, "gaze_r_yaw")[0], _column(block, "gaze_r_pitch")[0]) == \
        pytest.approx((0.4, -0.03))
    assert lsl_mapping("glasses", "float32", channels[:2], gaze_frame="head").gaze_frame == "head"


def test_streams_without_samples_are_refused_with_their_name():
    with pytest.raises(SchemaError, match="'markers'.*string"):
        lsl_mapping("markers", "string", [{"label": "event"}])
    with pytest.raises(SchemaError, match="'eeg'.*no channel.*Fz, Cz"):
        lsl_mapping("eeg", "float32", [{"label": "Fz"}, {"label": "Cz"}])


def test_stream_ids_are_valid():
    assert lsl_stream_id("pupil_capture", "pupil_capture_abc") == \
        "lsl.pupil_capture.pupil_capture_abc"
    assert lsl_stream_id("My Tracker (left)") == "lsl.My_Tracker__left_"
    assert len(lsl_stream_id("x" * 300)) == 128
