"""Pupil Core adapter: datum mapping, tolerance of extra frames and garbage, and the emulator."""

import math
import threading

import msgpack
import numpy as np
import pytest
import zmq

from distractd.daemon import pupil_sub_endpoint
from distractd.pipeline.formats import (
    FIELD_INDEX, PupilAdapter, Recording, Rejected, empty_block, gaze_angles, gaze_normal,
)
from distractd.simulators import PupilEmulator


def _frames(topic, **datum):
    return [topic.encode(), msgpack.packb({"topic": topic, **datum})]


def test_gaze_angles_invert_the_emulator_normals():
    for yaw, pitch in ((0.0, 0.0), (0.3, -0.2), (-0.7, 0.4)):
        assert gaze_angles(gaze_normal(yaw, pitch)) == pytest.approx((yaw, pitch), abs=1e-15)
    assert gaze_angles([1.0, 0.0, 1.0]) == pytest.approx((math.pi / 4, 0.0))  # right of ahead
    assert gaze_angles([0.0, -1.0, 1.0]) == pytest.approx((0.0, math.pi / 4))  # y down: above


def test_binocular_gaze_with_pupils_and_blinks():
    adapter = PupilAdapter()
    assert adapter.update(_frames("pupil.0.3d", id=0, timestamp=1.0, diameter_3d=3.5)) is None
    assert adapter.update(_frames("pupil.1.3d", id=1, timestamp=1.0, diameter_3d=3.7)) is None
    assert adapter.update(_frames("blinks", type="onset", timestamp=1.0)) is None
    block = adapter.update(_frames("gaze.3d.01.", timestamp=1.01, confidence=0.9,
                                   gaze_normals_3d={"0": gaze_normal(0.1, 0.05),
                                                    "1": gaze_normal(0.12, 0.04)})
                           + [b"__raw_data__ frame"])
    row = block[0]
    assert row[FIELD_INDEX["t"]] == 1.01 and row[FIELD_INDEX["confidence"]] == 0.9
    np.testing.assert_allclose(row[[FIELD_INDEX[f] for f in (
        "gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch")]], [0.1, 0.05, 0.12, 0.04],
        atol=1e-15)
    assert (row[FIELD_INDEX["pupil_r"]], row[FIELD_INDEX["pupil_l"]]) == (3.5, 3.7)
    assert row[FIELD_INDEX["blink"]] == 1.0
    for field in ("head_x", "head_yaw", "eyelid_r", "eyelid_l", "saccade"):
        assert math.isnan(row[FIELD_INDEX[field]])
    adapter.update(_frames("blinks", type="offset", timestamp=1.02))
    block = adapter.update(_frames("gaze.3d.1.", timestamp=1.03, confidence=0.8,
                                   gaze_normal_3d=gaze_normal(-0.2, 0.0)))
    assert block[0, FIELD_INDEX["gaze_l_yaw"]] == pytest.approx(-0.2)
    assert math.isnan(block[0, FIELD_INDEX["gaze_r_yaw"]])
    assert block[0, FIELD_INDEX["blink"]] == 0.0


@pytest.mark.parametrize("reason, frames", [
    ("bad_topic", [b"gaze.3d.01."]),
    ("undecodable", [b"gaze.3d.01.", b"\xc1"]),
    ("not_a_map", [b"gaze.3d.01.", msgpack.packb([1.0])]),
    ("missing_t", _frames("gaze.3d.01.", confidence=1.0)),
    ("wrong_type", _frames("gaze.3d.01.", timestamp=1.0, gaze_normals_3d={"0": "ahead"})),
    ("wrong_type", _frames("gaze.3d.01.", timestamp=1.0, confidence=1.0)),
])
def test_bad_datums_are_rejected_by_reason(reason, frames):
    with pytest.raises(Rejected) as info:
        PupilAdapter().update(frames)
    assert info.value.reason == reason


def _recording(n_samples=240):
    rng = np.random.default_rng(3)
    block = empty_block(n_samples)
    block[:, FIELD_INDEX["t"]] = 100.0 + np.arange(n_samples) / 60.0
    for field in ("gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch"):
        block[:, FIELD_INDEX[field]] = rng.uniform(-0.4, 0.4, n_samples)
    block[:, FIELD_INDEX["pupil_r"]] = rng.uniform(2, 6, n_samples)
    block[:, FIELD_INDEX["pupil_l"]] = rng.uniform(2, 6, n_samples)
    block[:, FIELD_INDEX["confidence"]] = rng.uniform(0.5, 1, n_samples)
    block[:, FIELD_INDEX["blink"]] = (np.arange(n_samples) % 60 >= 50).astype(float)
    return Recording(block)


def test_emulator_speaks_pupil_remote_and_the_adapter_recovers_the_recording():
    recording = _recording()
    ready = threading.Event()
    emulator = PupilEmulator(recording, port=0, speed=20.0)
    with zmq.Context() as context:
        thread = threading.Thread(target=emulator.run, kwargs={
            "context": context, "on_ready": lambda e: ready.set()}, daemon=True)
        thread.start()
        assert ready.wait(5)
        remote = f"tcp://127.0.0.1:{emulator.port}"
        with context.socket(zmq.REQ) as req:
            req.linger = 0
            req.rcvtimeo = 2000
            req.connect(remote)
            for command, answer in (("PUB_PORT", str(emulator.pub_port)), ("v", "3.5.7"),
                                    ("T 5.0", "Timesync successful."),
                                    ("nonsense", "Unknown command.")):
                req.send_string(command)
                assert req.recv_string() == answer
        endpoint = pupil_sub_endpoint(context, remote, timeout_s=2)
        assert endpoint == f"tcp://127.0.0.1:{emulator.sub_port}"
        adapter = PupilAdapter()
        rows = []
        with context.socket(zmq.SUB) as sub:
            sub.linger = 0
            for topic in PupilAdapter.TOPICS:
                sub.subscribe(topic)
            sub.connect(endpoint)
            while len(rows) < recording.n_samples and sub.poll(3000):
                block = adapter.update(sub.recv_multipart())
                if block is not None:
                    rows.append(block[0])
        thread.join(5)
    got = np.array(rows)
    want = recording.samples.copy()
    want[:, 0] += 5.0 - 100.0  # "T 5.0" reset Pupil time to 5 s at the first sample
    want[:50, FIELD_INDEX["blink"]] = np.nan  # unknown until the first blink event
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=1e-12, equal_nan=True)
