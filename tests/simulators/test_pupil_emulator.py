"""The Pupil Capture emulator against Pupil Labs' own client (``pupil-core-network-client``):
data path, control path, notifications, time sync, looping; and Capture's gaze matching rule."""

import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from pupil_labs.pupil_core_network_client import Device

from distractd.pipeline.formats import (
    FIELD_INDEX, Recording, empty_block, gaze_normal, pupil_datums, write_recording,
)
from distractd.simulators import CaptureMatcher, free_port


def _recording(n_samples=600, t0=100.0):
    """60 Hz gaze, pupils and blinks, with a stretch of track loss (NaN, confidence 0.1)."""
    rng = np.random.default_rng(3)
    block = empty_block(n_samples)
    block[:, FIELD_INDEX["t"]] = t0 + np.arange(n_samples) / 60.0
    for field in ("gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch"):
        block[:, FIELD_INDEX[field]] = rng.uniform(-0.4, 0.4, n_samples)
    block[:, FIELD_INDEX["pupil_r"]] = rng.uniform(2, 6, n_samples)
    block[:, FIELD_INDEX["pupil_l"]] = rng.uniform(2, 6, n_samples)
    block[:, FIELD_INDEX["confidence"]] = rng.uniform(0.8, 1, n_samples)
    block[:, FIELD_INDEX["blink"]] = (np.arange(n_samples) % 120 >= 110).astype(float)
    lost = slice(300, 330)
    block[lost, FIELD_INDEX["gaze_r_yaw"]:FIELD_INDEX["gaze_l_pitch"] + 1] = np.nan
    block[lost, FIELD_INDEX["pupil_r"]:FIELD_INDEX["pupil_l"] + 1] = np.nan
    block[lost, FIELD_INDEX["confidence"]] = 0.1
    return Recording(block)


def _messages(subscription, until, timeout_s=20):
    messages = []
    deadline = time.monotonic() + timeout_s
    while not until(messages) and time.monotonic() < deadline:
        message = subscription.recv_new_message(timeout_ms=200)
        if message is not None:
            messages.append(message)
    return messages


def test_official_client_data_path_and_time_sync(run_emulator):
    recording = _recording()
    with run_emulator(recording, speed=10.0, wait_subscriptions=4) as emulator:
        device = Device("127.0.0.1", emulator.port)  # announces itself, syncs its clock
        assert (device.ipc_pub_port, device.ipc_sub_port) == (emulator.pub_port,
                                                              emulator.sub_port)
        assert device.request_version() == "3.5.7"
        # the clock runs before anyone subscribed, at speed x real time
        before = time.monotonic()
        first = device.request_current_pupil_time()
        time.sleep(0.05)
        second = device.request_current_pupil_time()
        assert 0 < second - first <= (time.monotonic() - before) * 10.0
        with device.subscribe(["gaze.3d.", "pupil.", "blinks", "notify."]) as subscription:
            messages = _messages(subscription, lambda m: any(
                x.topic.startswith("gaze") and x.payload["timestamp"] > 109.0 for x in m))
            now = device.request_current_pupil_time()
    topics = {m.topic for m in messages}
    assert {"pupil.0.2d", "pupil.0.3d", "pupil.1.2d", "pupil.1.3d", "gaze.3d.01.", "gaze.3d.0.",
            "gaze.3d.1.", "blinks"} <= topics
    gaze = [m.payload for m in messages if m.topic.startswith("gaze")]
    stamps = np.array([g["timestamp"] for g in gaze])
    assert (np.diff(stamps) < 0).any()  # Capture's matcher is not monotonic
    assert stamps.max() <= now  # every datum carries the clock's time when it was published
    low = [g for g in gaze if g["confidence"] < 0.6]
    assert low and all(g["topic"] in ("gaze.3d.0.", "gaze.3d.1.") for g in low)
    assert all(np.isfinite(g["gaze_point_3d"]).all() for g in gaze)  # no NaN in track loss
    pupils = [m.payload for m in messages if m.topic == "pupil.0.3d"]
    assert all(p["confidence"] < 0.6 for p in pupils if 300 <= round((
        p["timestamp"] - pupils[0]["timestamp"]) * 60) < 330)


def test_official_client_control_path_and_notifications(run_emulator):
    with run_emulator(_recording(), speed=1.0) as emulator:
        device = Device("127.0.0.1", emulator.port)
        with device.subscribe(["notify.", "annotation"]) as subscription:
            time.sleep(0.3)  # the subscription reaches the backbone
            assert device.request_recording_start("drive-7") == "OK"
            assert device.request_recording_stop() == "OK"
            assert device.request_calibration_start() == "OK"
            assert device.request_calibration_stop() == "OK"
            assert device.send_annotation("phone call", duration=2.0) == "Message forwarded."
            assert device.send_notification({"subject": "custom.event", "x": 1}) == \
                "Message forwarded."
            assert device.request_plugin_start("Annotation_Capture") == "Message forwarded."
            assert device._send_recv_command("T nonsense") == \
                "'nonsense' cannot be converted to float."
            assert device._send_recv_command("what") == "Unknown command."
            messages = _messages(subscription, lambda m: len(m) >= 12)
    notes = [(m.topic, m.payload) for m in messages]
    assert [topic for topic, _ in notes] == [
        "notify.recording.should_start", "notify.recording.started",
        "notify.recording.should_stop", "notify.recording.stopped",
        "notify.calibration.should_start", "notify.calibration.started",
        "notify.calibration.should_stop", "notify.calibration.stopped",
        "notify.calibration.failed", "annotation", "notify.custom.event", "notify.start_plugin"]
    payloads = dict(notes)
    assert payloads["notify.recording.should_start"]["session_name"] == "drive-7"
    started = payloads["notify.recording.started"]
    assert started["session_name"] == "drive-7" and started["rec_path"].endswith("drive-7/000")
    assert payloads["notify.recording.stopped"]["rec_path"] == started["rec_path"]
    assert payloads["notify.calibration.failed"]["reason"] == \
        "Not sufficient reference data available."
    assert payloads["annotation"]["label"] == "phone call"
    assert payloads["annotation"]["duration"] == 2.0
    assert payloads["notify.custom.event"]["x"] == 1


def test_timesync_resets_the_running_clock(run_emulator):
    with run_emulator(_recording(), speed=1.0, wait_subscriptions=1) as emulator:
        device = Device("127.0.0.1", emulator.port)
        # the client synced its clock at connect; 0.3 s later its estimate still agrees (a clock
        # frozen until the first subscription would put it the whole 0.3 s off)
        time.sleep(0.3)
        estimate = device.current_pupil_time()
        assert abs(device.request_current_pupil_time() - estimate) < 0.3 / 2
        before = time.monotonic()
        assert device._send_recv_command("T 5.0") == "Timesync successful."
        after_t = device.request_current_pupil_time()
        assert 5.0 <= after_t <= 5.0 + (time.monotonic() - before)


def test_loop_keeps_streaming_with_increasing_timestamps(run_emulator):
    short = Recording(_recording().samples[:60])  # one second
    with run_emulator(short, speed=5.0, loop=True) as emulator:
        device = Device("127.0.0.1", emulator.port)
        with device.subscribe("pupil.0.3d") as subscription:
            messages = _messages(subscription, lambda m: len(m) >= 150)
        assert emulator.n_passes >= 2
    stamps = np.array([m.payload["timestamp"] for m in messages])
    assert len(stamps) >= 150 and (np.diff(stamps) > 0).all()
    assert stamps[-1] - stamps[0] > 2.0  # beyond one pass of the recording


def test_without_loop_the_data_end_but_pupil_remote_answers(run_emulator):
    with run_emulator(Recording(_recording().samples[:30]), speed=30.0) as emulator:
        device = Device("127.0.0.1", emulator.port)
        with device.subscribe("pupil.") as subscription:
            while emulator.n_passes == 0:
                time.sleep(0.05)
            while subscription.recv_new_message(timeout_ms=300) is not None:
                pass  # what was sent before the end; then the data stop
            assert emulator.n_passes == 1
            first = device.request_current_pupil_time()
            assert device.request_current_pupil_time() > first  # the clock goes on


def _pupil(eye, t, confidence=0.9):
    return pupil_datums(eye, t, gaze_normal(0, 0), 3.0, confidence)[1]


def test_capture_matcher_pairs_close_datums_and_maps_low_confidence_alone():
    matcher = CaptureMatcher()
    p0, p1 = _pupil(0, 1.000), _pupil(1, 1.004)
    assert matcher.add(p0) is None
    assert matcher.add(p1) == [p0, p1]          # the older head leaves, the partner stays
    q0 = _pupil(0, 1.0083)
    assert matcher.add(q0) == [q0, p1]          # ... and pairs again with the next datum
    weak = _pupil(0, 1.0166, confidence=0.3)
    assert matcher.add(weak) is None            # queued behind q0, which waits for eye 1
    r1 = _pupil(1, 1.0124)
    assert matcher.add(r1) == [q0, r1]
    assert matcher.add(_pupil(1, 1.0207)) == [weak]  # a head below 0.6 leaves alone, first
    far = _pupil(0, 2.0)
    assert matcher.add(far) == [r1]             # too far apart: the older leaves alone
    matcher = CaptureMatcher()
    alone = [_pupil(0, 1 + k / 120) for k in range(12)]
    out = [matcher.add(p) for p in alone]
    assert out[:10] == [None] * 10 and out[10] == [alone[0]]  # a queue over 10 gives way


def test_cli_loops_until_sigterm(tmp_path):
    path = tmp_path / "short.npz"
    write_recording(Recording(_recording().samples[:60]), path)
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "distractd.cli", "pupil-emulator", str(path), "--port", str(port),
         "--speed", "5", "--loop", "--json"], stdout=subprocess.PIPE, text=True)
    try:
        device = Device("127.0.0.1", port)
        with device.subscribe("pupil.0.3d") as subscription:
            messages = _messages(subscription, lambda m: len(m) >= 150)
        assert len(messages) >= 150  # 2.5 passes of a 60-sample recording
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 0
    summary = json.loads(out)
    assert summary["passes"] >= 2 and summary["datums"] >= 150 * 4
