"""Pupil Core mapping: Capture's datums (fields, geometry, gaze rules) and the adapter (mapping,
monocular and binocular gaze, reordering, garbage)."""

import math

import msgpack
import numpy as np
import pytest

from distractd.pipeline.formats import (
    FIELD_INDEX, PupilAdapter, Rejected, blink_datum, gaze_angles, gaze_datum, gaze_normal,
    pupil_datums,
)

# Datum fields as Pupil Capture 3.x publishes them (detector_2d_plugin, pye3d_plugin and
# pye3d's Detector3D result, gazer_headset's 3-D gaze mappers).
PUPIL_2D_FIELDS = {"topic", "id", "method", "norm_pos", "diameter", "confidence", "timestamp",
                   "ellipse"}
PUPIL_3D_FIELDS = PUPIL_2D_FIELDS | {"location", "sphere", "projected_sphere", "circle_3d",
                                     "diameter_3d", "model_confidence", "theta", "phi"}
GAZE_BINOCULAR_FIELDS = {"topic", "eye_centers_3d", "gaze_normals_3d", "gaze_point_3d",
                         "norm_pos", "confidence", "timestamp", "base_data"}
GAZE_MONOCULAR_FIELDS = {"topic", "eye_center_3d", "gaze_normal_3d", "gaze_point_3d", "norm_pos",
                         "confidence", "timestamp", "base_data"}


def _frames(datum):
    return [datum["topic"].encode(), msgpack.packb(datum)]


def test_gaze_angles_invert_the_normals():
    for yaw, pitch in ((0.0, 0.0), (0.3, -0.2), (-0.7, 0.4)):
        assert gaze_angles(gaze_normal(yaw, pitch)) == pytest.approx((yaw, pitch), abs=1e-15)
    assert gaze_angles([1.0, 0.0, 1.0]) == pytest.approx((math.pi / 4, 0.0))  # right of ahead
    assert gaze_angles([0.0, -1.0, 1.0]) == pytest.approx((0.0, math.pi / 4))  # y down: above


def test_pupil_datums_have_captures_fields_and_carry_the_gaze_normal():
    normal = gaze_normal(0.2, -0.1)
    datum_2d, datum_3d = pupil_datums(1, 12.5, normal, 3.4, 0.93)
    assert set(datum_2d) == PUPIL_2D_FIELDS and set(datum_3d) == PUPIL_3D_FIELDS
    assert (datum_2d["topic"], datum_3d["topic"]) == ("pupil.1.2d", "pupil.1.3d")
    assert datum_2d["method"] == "2d c++" and datum_3d["method"].startswith("pye3d ")
    assert datum_3d["id"] == 1 and datum_3d["timestamp"] == 12.5
    assert datum_3d["confidence"] == 0.93 and datum_3d["diameter_3d"] == 3.4
    assert datum_3d["circle_3d"]["radius"] == pytest.approx(1.7)
    # the eye camera looks back at the eye: a gaze ahead points at the camera (-z), and the
    # pupil lies on the eyeball sphere
    circle = datum_3d["circle_3d"]
    assert circle["normal"][2] < 0
    centre_to_sphere = np.subtract(circle["center"], datum_3d["sphere"]["center"])
    assert np.linalg.norm(centre_to_sphere) == pytest.approx(datum_3d["sphere"]["radius"])
    np.testing.assert_allclose(centre_to_sphere / datum_3d["sphere"]["radius"], circle["normal"])
    # pye3d's spherical angles of the normal: theta from +y, phi in the x-z plane
    x, y, z = circle["normal"]
    assert (datum_3d["theta"], datum_3d["phi"]) == pytest.approx((math.acos(y), math.atan2(z, x)))
    minor, major = datum_3d["ellipse"]["axes"]
    assert 0 < minor <= major == datum_3d["diameter"]
    assert all(0 < v < 1 for v in datum_3d["norm_pos"])
    assert gaze_datum([datum_3d])["gaze_normal_3d"] == pytest.approx(normal)


def test_gaze_datums_follow_captures_topic_confidence_and_timestamp_rules():
    p0 = pupil_datums(0, 10.000, gaze_normal(0.05, 0.0), 3.0, 0.9)[1]
    p1 = pupil_datums(1, 10.004, gaze_normal(0.11, 0.0), 3.2, 0.7)[1]
    binocular = gaze_datum([p0, p1])
    assert set(binocular) == GAZE_BINOCULAR_FIELDS and binocular["topic"] == "gaze.3d.01."
    assert binocular["confidence"] == pytest.approx(0.8)
    assert binocular["timestamp"] == pytest.approx(10.002)
    assert binocular["base_data"] == [p0, p1]
    # eye 0 is the right eye, on the world camera's +x side (Capture's Gazer3D: x = +20 mm)
    centres = binocular["eye_centers_3d"]
    assert centres["0"][0] > 0 > centres["1"][0]
    # the left eye turns further right than the right eye: the lines of sight meet ahead, where
    # their x offsets (60 mm apart at the eyes) close
    depth_mm = 60.0 / (math.tan(0.11) - math.tan(0.05))
    np.testing.assert_allclose(binocular["gaze_point_3d"],
                               [20 + depth_mm * math.tan(0.05), 15.0, depth_mm - 20], rtol=1e-9)
    monocular = gaze_datum([p1])
    assert set(monocular) == GAZE_MONOCULAR_FIELDS and monocular["topic"] == "gaze.3d.1."
    assert (monocular["confidence"], monocular["timestamp"]) == (0.7, 10.004)
    np.testing.assert_allclose(monocular["gaze_point_3d"],
                               np.add(centres["1"], 500 * np.array(gaze_normal(0.11, 0.0))))


def test_binocular_and_monocular_gaze_with_pupils_and_blinks():
    adapter = PupilAdapter(reorder_s=0.0)
    p0 = pupil_datums(0, 1.0, gaze_normal(0.1, 0.05), 3.5, 0.9)[1]
    p1 = pupil_datums(1, 1.02, gaze_normal(0.12, 0.04), 3.7, 0.9)[1]
    assert len(adapter.update(_frames(p0))) == 0
    assert len(adapter.update(_frames(blink_datum(1.0, onset=True)))) == 0
    block = adapter.update(_frames(gaze_datum([p0, p1])) + [b"__raw_data__ frame"])
    row = block[0]
    assert row[FIELD_INDEX["t"]] == pytest.approx(1.01) and row[FIELD_INDEX["confidence"]] == 0.9
    np.testing.assert_allclose(row[[FIELD_INDEX[f] for f in (
        "gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch")]], [0.1, 0.05, 0.12, 0.04],
        atol=1e-12)
    assert (row[FIELD_INDEX["pupil_r"]], row[FIELD_INDEX["pupil_l"]]) == (3.5, 3.7)
    assert row[FIELD_INDEX["blink"]] == 1.0
    for field in ("head_x", "head_yaw", "eyelid_r", "eyelid_l", "saccade"):
        assert math.isnan(row[FIELD_INDEX[field]])
    adapter.update(_frames(blink_datum(1.02, onset=False)))
    lone = pupil_datums(1, 1.03, gaze_normal(-0.2, 0.0), 3.9, 0.3)[1]
    row = adapter.update(_frames(gaze_datum([lone])))[0]
    assert row[FIELD_INDEX["gaze_l_yaw"]] == pytest.approx(-0.2)
    assert math.isnan(row[FIELD_INDEX["gaze_r_yaw"]])
    assert row[FIELD_INDEX["pupil_l"]] == 3.9 and row[FIELD_INDEX["pupil_r"]] == 3.5
    assert (row[FIELD_INDEX["confidence"]], row[FIELD_INDEX["blink"]]) == (0.3, 0.0)


def test_gaze_is_released_in_timestamp_order_without_loss():
    rng = np.random.default_rng(5)
    t = np.arange(400) / 120.0
    late = t + rng.uniform(0, 0.15, t.size)   # each datum arrives up to 0.15 s late
    order = np.argsort(late, kind="stable")
    adapter = PupilAdapter(reorder_s=0.15)
    released = []
    for i in order:
        datum = gaze_datum([pupil_datums(0, float(t[i]), gaze_normal(0, 0), 3.0, 0.9)[1]])
        released.append(adapter.update(_frames(datum)))
    assert adapter.n_held > 0
    released.append(adapter.flush())
    got = np.concatenate(released)[:, FIELD_INDEX["t"]]
    np.testing.assert_array_equal(got, t)
    assert adapter.n_held == 0 and len(adapter.flush()) == 0
    # without the wait, the same stream comes out of order
    adapter = PupilAdapter(reorder_s=0.0)
    got = np.concatenate([adapter.update(_frames(gaze_datum([pupil_datums(
        0, float(t[i]), gaze_normal(0, 0), 3.0, 0.9)[1]]))) for i in order])[:, 0]
    assert (np.diff(got) < 0).any() and len(got) == t.size


@pytest.mark.parametrize("reason, frames", [
    ("bad_topic", [b"gaze.3d.01."]),
    ("undecodable", [b"gaze.3d.01.", b"\xc1"]),
    ("not_a_map", [b"gaze.3d.01.", msgpack.packb([1.0])]),
    ("missing_t", [b"gaze.3d.01.", msgpack.packb({"confidence": 1.0})]),
    ("wrong_type", [b"gaze.3d.01.", msgpack.packb({"timestamp": 1.0, "confidence": 1.0,
                                                   "gaze_normals_3d": {"0": "ahead"}})]),
    ("wrong_type", [b"gaze.3d.01.", msgpack.packb({"timestamp": 1.0, "confidence": 1.0})]),
    ("wrong_type", [b"pupil.0.3d", msgpack.packb({"timestamp": 1.0, "id": 0})]),
])
def test_bad_datums_are_rejected_by_reason(reason, frames):
    adapter = PupilAdapter()
    with pytest.raises(Rejected) as info:
        adapter.update(frames)
    assert info.value.reason == reason
    assert adapter.n_held == 0
