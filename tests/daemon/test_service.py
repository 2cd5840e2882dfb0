"""The daemon as a real subprocess with real sockets on 127.0.0.1."""

import csv
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import msgpack
import numpy as np
import pytest
import zmq
import zmq.auth

from distractd.daemon import DEFAULTS, decision_options, default_model_path
from distractd.models import load_model, save_model
from distractd.models.detectors import DecisionRule, predict_windows
from distractd.pipeline.formats import STATE_NAMES, encode_block, encode_map
from distractd.pipeline import (
    FIELD_INDEX, FIELDS, N_FIELDS, PipelineConfig, Recording, extract_features, write_recording,
)
from distractd.simulators import replay, simulate_drive

from ._published import states_of

@pytest.fixture(scope="module")
def drive():
    return simulate_drive(7, duration_s=120.0)  # the default model's driver; a task at 88 s


@pytest.fixture(scope="module")
def detector():
    return load_model(default_model_path())


def expected_states(recording, detector):
    """What the daemon must publish with its defaults: the same StreamProcessor, detector and
    decision rule, in batch."""
    rule = DecisionRule(**decision_options(DEFAULTS, detector.feature_names))
    windows, scores, labels = predict_windows(detector, recording, rule)
    return windows, scores, np.array([STATE_NAMES[label] for label in labels], dtype=object)


def assert_same_states(published, windows, scores, states):
    assert [m["t"] for m in published] == windows.t_end.tolist()
    assert [m["window"] for m in published] == np.c_[windows.t_start, windows.t_end].tolist()
    assert [m["state"] for m in published] == states.tolist()
    np.testing.assert_allclose([m["score"] for m in published], scores, rtol=1e-12,
                               equal_nan=True)
    np.testing.assert_allclose([m["quality"] for m in published], windows.quality, rtol=1e-12)


def predicted_by_cli(recording_path, tmp_path):
    """``distractd predict`` on the shipped model, with no option: the daemon's decision rule."""
    out = tmp_path / "predict.csv"
    subprocess.run([sys.executable, "-m", "distractd.cli", "predict", str(default_model_path()),
                    str(recording_path), "--out", str(out)], check=True, timeout=300)
    with open(out, newline="") as file:
        return list(csv.DictReader(file))


def test_replay_to_daemon_equals_batch_prediction(start_daemon, drive, detector, tmp_path):
    path = tmp_path / "drive.npz"
    write_recording(drive, path)
    windows, scores, states = expected_states(drive, detector)
    assert len(set(states)) >= 2
    predicted = predicted_by_cli(path, tmp_path)  # `distractd predict`: same windows, decisions
    assert [float(row["t_end"]) for row in predicted] == windows.t_end.tolist()
    decided = states != "unknown"
    assert [row["state"] for row, ok in zip(predicted, decided) if ok] == [
        {"distracted": "1", "attentive": "0"}[state] for state in states[decided]]
    assert all(row["state"] == "" for row, ok in zip(predicted, decided) if not ok)
    daemon = start_daemon(["sessions.idle_timeout_s=3"],
                          env={"WATCHDOG_USEC": "200000"})  # idle end of stream flushes
    assert "READY=1" in daemon.ready
    result = subprocess.run(
        [sys.executable, "-m", "distractd.cli", "replay", str(path), "--endpoint", daemon.input,
         "--speed", "60", "--stream-id", "car"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    messages = daemon.collect(lambda m: len(states_of(m, "car")) >= len(windows), timeout_s=60)
    published = states_of(messages, "car")
    assert_same_states(published, windows, scores, states)
    assert published[-1]["model"] == detector.model_id
    segment = published[-1]["segment"]
    assert set(segment) == {"id", "start", "label", "cluster", "final"}
    events = [m for kind, _, m in messages if kind == "event"]
    transitions = [e for e in events if e["type"] == "transition"]
    flips = [(a, b) for a, b in zip(["unknown"] + states.tolist(), states.tolist()) if a != b]
    assert [(e["from"], e["to"]) for e in transitions] == flips
    finals = [e["segment"] for e in events if e["type"] == "segment"]
    assert finals and [s["id"] for s in finals] == list(range(len(finals)))
    assert all(s["final"] and s["start"] <= s["end"] for s in finals)

    assert daemon.metric("distractd_samples_received_total") == drive.n_samples
    assert daemon.metric("distractd_messages_received_total") == math.ceil(drive.n_samples / 6)
    for state in ("attentive", "distracted", "unknown"):
        assert daemon.metric("distractd_windows_classified_total", state=state) == \
            (states == state).sum()
    assert daemon.metric("distractd_state_transitions_total") == len(flips)
    flushed = (windows.t_end > drive.t[-1] - PipelineConfig().lag_s).sum()  # by the stream's end
    assert daemon.metric("distractd_processing_latency_seconds_count") == len(windows) - flushed
    assert daemon.metric("distractd_messages_rejected_total", reason="undecodable") == 0
    assert daemon.metric("distractd_model_info", model_id=detector.model_id,
                         kind=detector.kind) == 1
    promtool = os.environ.get("PROMTOOL") or shutil.which("promtool")
    if promtool:
        lint = subprocess.run([promtool, "check", "metrics"], input=daemon.scrape().encode(),
                              capture_output=True, timeout=30)
        assert lint.returncode == 0, lint.stdout + lint.stderr

    assert daemon.notify.wait_for("WATCHDOG=1", timeout_s=5) is not None
    status = [m for m in daemon.notify.messages if m.startswith("STATUS=")]
    assert any(m.startswith("STATUS=1 streams") for m in status), status
    assert daemon.stop() == 0
    assert daemon.notify.wait_for("STOPPING=1", timeout_s=5) is not None


def _fuzz_messages(rng, n_messages):
    """Malformed messages of every kind, with the reason each must be counted under."""
    good = {"v": 1, "seq": 0, "fields": list(FIELDS), "dtype": "<f8",
            "data": np.zeros((2, N_FIELDS)).tobytes()}
    makers = {
        "bad_topic": lambda i: [b"samples.", msgpack.packb({"v": 1, "t": 1.0})],
        "oversized": lambda i: [b"samples.fuzz", b"\x00" * 70000],
        "undecodable": lambda i: [b"samples.fuzz", b"\xc1" + rng.bytes(int(rng.integers(0, 40)))],
        "not_a_map": lambda i: [b"samples.fuzz", msgpack.packb([float(i), "x"])],
        "unknown_version": lambda i: [b"samples.fuzz", msgpack.packb({"v": 9, "t": 1.0})],
        "missing_t": lambda i: [b"samples.fuzz", msgpack.packb({"v": 1, "gaze_r_yaw": 0.1})],
        "wrong_type": lambda i: [b"samples.fuzz", msgpack.packb({"v": 1, "t": "soon"})],
        "bad_block": lambda i: [b"samples.fuzz", msgpack.packb({**good, "dtype": "<i2"})],
    }
    reasons = list(makers)
    messages, counts = [], dict.fromkeys(reasons, 0)
    for i in range(n_messages):
        reason = reasons[int(rng.integers(len(reasons)))]
        messages.append(makers[reason](i))
        counts[reason] += 1
    return messages, counts


def test_map_form_replay_publishes_the_same_states(start_daemon, drive, detector):
    """One sample per message: the stream's inbox batches them per hop, the windows stay the same."""
    windows, scores, states = expected_states(drive, detector)
    daemon = start_daemon(["sessions.idle_timeout_s=3"])
    summary = replay([drive], daemon.input, speed=40, form="map", prefix="mapcar")
    assert summary["messages"] == drive.n_samples
    published = states_of(daemon.collect(
        lambda m: len(states_of(m, "mapcar")) >= len(windows), timeout_s=60), "mapcar")
    assert_same_states(published, windows, scores, states)
    assert daemon.stop() == 0


def test_fuzzed_ingest_is_counted_and_good_streams_are_unaffected(start_daemon, drive, detector):
    windows, scores, states = expected_states(drive, detector)
    daemon = start_daemon(["input.max_message_bytes=65536", "sessions.idle_timeout_s=3"])
    messages, counts = _fuzz_messages(np.random.default_rng(0), 4000)
    with zmq.Context() as context:
        fuzzer = context.socket(zmq.PUB)
        fuzzer.linger = 5000
        fuzzer.sndhwm = 0
        fuzzer.connect(daemon.input)
        time.sleep(0.5)

        def fuzz():
            for frames in messages:
                fuzzer.send_multipart(frames)
                time.sleep(0.0003)
            block = drive.samples[:6].copy()  # sequence gaps and time going backwards
            for seq in (0, 1, 5):
                block[:, 0] += 1.0
                fuzzer.send_multipart(encode_block("gappy", block, seq))
            fuzzer.send_multipart(encode_block("gappy", drive.samples[:6], 6))
            fuzzer.send_multipart(encode_map("gappy", {"t": -5.0}))

        thread = threading.Thread(target=fuzz)
        thread.start()
        replay([drive], daemon.input, speed=40, prefix="good", context=context)
        thread.join()
        fuzzer.close()
    published = states_of(daemon.collect(
        lambda m: len(states_of(m, "good")) >= len(windows), timeout_s=60), "good")
    assert_same_states(published, windows, scores, states)
    deadline = time.monotonic() + 10
    while (daemon.metric("distractd_samples_rejected_total", reason="backwards_t") or 0) < 7 \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    assert daemon.process.poll() is None
    for reason, count in counts.items():
        assert daemon.metric("distractd_messages_rejected_total", reason=reason) == count, reason
    # The re-sent first block goes back 3 s and the map to t = -5 further: the pipeline drops those
    # 7 samples one by one (too short a run to be a clock reset); no message is rejected for it.
    assert daemon.metric("distractd_samples_rejected_total", reason="backwards_t") == 7
    assert daemon.metric("distractd_samples_rejected_total", reason="clock_reset") == 0
    assert daemon.metric("distractd_messages_lost_total") == 3
    assert daemon.metric("distractd_active_streams") is not None
    assert daemon.stop() == 0
    assert "rejected" in daemon.log_text and " more undecodable messages" in daemon.log_text


def _copy_model(detector, path, note):
    """The same detector under another model id (the summary is part of the content hash)."""
    mean = detector.normalize(np.zeros((1, len(detector.feature_names))))[0]
    scale = 1.0 / (detector.normalize(np.ones((1, len(detector.feature_names))))[0] - mean)
    save_model(path, detector.estimator, normalizer_mean=-mean * scale,
               normalizer_scale=scale, feature_names=detector.feature_names,
               pipeline_config=detector.pipeline_config, extras=detector.extras,
               summary={"note": note}, seed=detector.seed)
    return load_model(path).model_id


def test_sighup_rejects_a_corrupt_model_and_swaps_a_good_one(start_daemon, drive, detector,
                                                             tmp_path):
    corrupt = tmp_path / "corrupt.npz"
    data = bytearray(default_model_path().read_bytes())
    data[len(data) // 2:len(data) // 2 + 64] = bytes(64)
    corrupt.write_bytes(bytes(data))
    other_id = _copy_model(detector, tmp_path / "other.npz", "reload test")
    config = tmp_path / "distractd.toml"
    config.write_text(f'[model]\npath = "{default_model_path()}"\n')
    daemon = start_daemon(config_path=config)
    first = Recording(drive.samples[:1800], drive.labels[:1800])
    replay([first], daemon.input, speed=60, prefix="car")
    assert states_of(daemon.collect(lambda m: len(states_of(m, "car")) > 5, 30), "car")

    def reload_and_wait(result):
        before = daemon.metric("distractd_model_reloads_total", result=result)
        daemon.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 60
        while daemon.metric("distractd_model_reloads_total", result=result) == before:
            assert time.monotonic() < deadline
            time.sleep(0.1)

    config.write_text(f'[model]\npath = "{corrupt}"\n')
    reload_and_wait("failure")
    assert daemon.metric("distractd_model_info", model_id=detector.model_id) == 1
    assert daemon.notify.wait_for("RELOADING=1", 5) is not None
    config.write_text(f'[model]\npath = "{tmp_path / "other.npz"}"\n')
    reload_and_wait("success")
    assert daemon.metric("distractd_model_info", model_id=other_id) == 1
    assert daemon.metric("distractd_model_info", model_id=detector.model_id) is None
    rest = Recording(drive.samples[1800:], drive.labels[1800:])
    replay([rest], daemon.input, speed=60, prefix="car")
    def new_states(messages):  # the latest state re-published before the reload is older
        return [m for m in states_of(messages, "car") if m["t"] > first.t[-1]]

    later = new_states(daemon.collect(lambda m: len(new_states(m)) > 5, 30))
    assert len(later) > 5 and {m["model"] for m in later} == {other_id}
    assert daemon.process.poll() is None
    assert daemon.stop() == 0
    assert "reload rejected" in daemon.log_text


def test_curve_encrypts_and_authenticates(start_daemon, drive, tmp_path):
    keys, allowed = tmp_path / "keys", tmp_path / "allowed"
    keys.mkdir()
    allowed.mkdir()
    server_public_file, server_secret_file = zmq.auth.create_certificates(keys, "server")
    client_public_file, client_secret_file = zmq.auth.create_certificates(keys, "client")
    zmq.auth.create_certificates(keys, "intruder")
    shutil.copy(client_public_file, allowed)
    daemon = start_daemon(["security.curve=true", f"security.secret_key_file={server_secret_file}",
                           f"security.authorized_keys_dir={allowed}"])
    server_public, _ = zmq.auth.load_certificate(server_public_file)
    client_public, client_secret = zmq.auth.load_certificate(client_secret_file)
    intruder_public, intruder_secret = zmq.auth.load_certificate(keys / "intruder.key_secret")
    first = Recording(drive.samples[:1500], drive.labels[:1500])
    with pytest.raises(Exception, match="no subscriber"):
        replay([first], daemon.input, speed=60, prefix="intruder", wait_s=1.0,
               curve=(server_public, intruder_public, intruder_secret))
    with zmq.Context() as context, context.socket(zmq.SUB) as sub:
        sub.linger = 0
        sub.curve_serverkey, sub.curve_publickey, sub.curve_secretkey = (
            server_public, client_public, client_secret)
        sub.subscribe(b"state.")
        sub.connect(daemon.output)
        time.sleep(0.3)
        replay([first], daemon.input, speed=60, prefix="car",
               curve=(server_public, client_public, client_secret))
        received = []
        while sub.poll(2000) and len(received) < 5:
            received.append(sub.recv_multipart())
    assert len(received) == 5 and received[0][0] == b"state.car"
    assert daemon.collect(lambda m: len(m) > 0, timeout_s=2) == []  # plain subscriber: nothing
    assert daemon.metric("distractd_samples_received_total") == 1500
    assert daemon.stop() == 0
