"""Inputs that used to kill the daemon, now refused and counted: the daemon as a real subprocess.

Each killing input of issue 16 is tried on SIGHUP (the daemon keeps its old configuration and
model, counts a failed reload, keeps serving and pinging the watchdog) and at start (one clear line,
exit status 1, no traceback); then descriptor exhaustion, CURVE peers refused, and segments across a
tracker clock reset.
"""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import zmq
import zmq.auth

from distractd.daemon import Model, Session, decision_options, default_model_path, load_config
from distractd.models.detectors import _artifact  # to forge a hostile file with a valid checksum
from distractd.pipeline.formats import encode_block, encode_map
from distractd.simulators import simulate_drive

GOOD_MAP = {"t": 1.0, "gaze_r_yaw": 0.01, "confidence": 1.0}


def forged_model(path, edit):
    """The shipped model with ``edit(header)`` applied and a valid checksum (a file whose checksum
    passes but whose header is hostile)."""
    with np.load(default_model_path(), allow_pickle=False) as archive:
        contents = {name: archive[name] for name in archive.files}
    header = json.loads(contents.pop("header").tobytes())
    edit(header)
    _artifact._seal(header, contents)
    with open(path, "wb") as file:
        np.savez(file, header=np.frombuffer(json.dumps(header).encode(), np.uint8), **contents)
    return path


@pytest.fixture
def killers(tmp_path):
    """Configuration file contents that used to end the daemon, by name."""
    fifo = tmp_path / "model.fifo"
    os.mkfifo(fifo)
    no_extras = forged_model(tmp_path / "no_extras.npz", lambda header: header.pop("extras"))
    long_segments = forged_model(   # issue 37, item 2: 12 GB and a stalled loop at a stream
        tmp_path / "long_segments.npz",
        lambda header: header["extras"]["segmenter"]["json"].update(max_length=10**7))
    far_offset = forged_model(      # issue 37, item 2: every window attentive
        tmp_path / "far_offset.npz", lambda header: header["summary"].update(score_offset=1.7e308))
    return {
        "non_utf8": b'[model]\npath = "caf\xe9.npz"\n',
        "deep_toml": b"x = " + b"[" * 10000 + b"]" * 10000 + b"\n",
        "missing_extras": f'[model]\npath = "{no_extras.name}"\n'.encode(),
        "dev_zero": b'[model]\npath = "/dev/zero"\n',
        "fifo": f'[model]\npath = "{fifo}"\n'.encode(),
        "long_segments": f'[model]\npath = "{long_segments.name}"\n'.encode(),
        "far_offset": f'[model]\npath = "{far_offset.name}"\n'.encode(),
        "off_above_on": b'[smoothing]\nmode = "hysteresis"\non = 0.2\noff = 0.6\n',
    }


MESSAGES = {
    "non_utf8": "not UTF-8 text (byte 0xe9",
    "deep_toml": "nested too deep",
    "missing_extras": "extras are missing or malformed: KeyError: 'extras'",
    "dev_zero": "/dev/zero is a character device; it must be a regular file",
    "fifo": "is a FIFO; it must be a regular file",
    "long_segments": "SegmentPrototypes.max_length must be an integer in [1, 256], got 10000000",
    "far_offset": "summary.score_offset must be a number in [-1e+09, 1e+09], got 1.7e+308",
    "off_above_on": "smoothing.off must be <= smoothing.on (0.2) in hysteresis mode, got 0.6",
}


def send_maps(daemon, stream, n):
    """``n`` map messages of one stream; return when the daemon has counted them."""
    before = daemon.metric("distractd_messages_received_total")
    with zmq.Context() as context:
        pub = context.socket(zmq.PUB)
        pub.linger = 2000
        pub.connect(daemon.input)
        deadline = time.monotonic() + 30
        sent = 0
        while daemon.metric("distractd_messages_received_total") < before + n \
                and time.monotonic() < deadline:
            pub.send_multipart(encode_map(stream, {**GOOD_MAP, "t": 1.0 + sent / 60}))
            sent += 1
            time.sleep(0.05)
        pub.close()
    assert daemon.metric("distractd_messages_received_total") >= before + n


def test_sighup_with_each_killing_input_keeps_the_old_configuration(start_daemon, killers,
                                                                      tmp_path):
    config = tmp_path / "distractd.toml"
    config.write_text("")
    daemon = start_daemon(config_path=config, env={"WATCHDOG_USEC": "600000"})
    for failures, (name, content) in enumerate(killers.items(), start=1):
        config.write_bytes(content)
        daemon.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 60
        while daemon.metric("distractd_model_reloads_total", result="failure") < failures \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        assert daemon.metric("distractd_model_reloads_total", result="failure") == failures, name
        assert daemon.process.poll() is None, name
        pings = daemon.notify.messages.count("WATCHDOG=1")
        deadline = time.monotonic() + 10
        while daemon.notify.messages.count("WATCHDOG=1") == pings and time.monotonic() < deadline:
            time.sleep(0.05)
        assert daemon.notify.messages.count("WATCHDOG=1") > pings, name
    send_maps(daemon, "after", 5)   # the old configuration still takes samples
    assert daemon.metric("distractd_model_reloads_total", result="success") == 0
    config.write_text("")
    daemon.process.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 60
    while daemon.metric("distractd_model_reloads_total", result="success") < 1 \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    assert daemon.metric("distractd_model_reloads_total", result="success") == 1
    assert daemon.stop() == 0
    for name, message in MESSAGES.items():
        assert message in daemon.log_text, name
    assert "Traceback" not in daemon.log_text


@pytest.mark.parametrize("name", list(MESSAGES))
def test_start_with_a_killing_input_is_one_clear_line(name, killers, tmp_path):
    config = tmp_path / "distractd.toml"
    config.write_bytes(killers[name])
    result = subprocess.run([sys.executable, "-m", "distractd.cli", "run", "--config", str(config),
                             "--set", "metrics.enabled=false"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and MESSAGES[name] in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_descriptor_exhaustion_is_refused_and_counted(start_daemon):
    """Under a 400-descriptor limit the daemon admits 400 - 256 connections; further peers are
    refused and counted, the first keeps working and the metrics keep answering."""
    daemon = start_daemon(wrapper=("prlimit", "--nofile=400:400"))
    with zmq.Context() as context:
        first = context.socket(zmq.PUB)
        first.linger = 0
        first.connect(daemon.input)
        deadline = time.monotonic() + 10
        while daemon.metric("distractd_connections") < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        flood = []
        for _ in range(300):
            sock = context.socket(zmq.PUB)
            sock.linger = 0
            sock.connect(daemon.input)
            flood.append(sock)
        deadline = time.monotonic() + 60
        while daemon.metric("distractd_connections_refused_total",
                            reason="too_many_connections") < 100 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert daemon.metric("distractd_connections_refused_total",
                             reason="too_many_connections") >= 100
        assert daemon.metric("distractd_connections") <= 400 - 256
        assert len(os.listdir(f"/proc/{daemon.process.pid}/fd")) < 400
        for sock in flood:
            sock.close(linger=0)
        before = daemon.metric("distractd_messages_received_total")
        deadline = time.monotonic() + 10
        while daemon.metric("distractd_messages_received_total") == before \
                and time.monotonic() < deadline:
            first.send_multipart(encode_map("first", GOOD_MAP))
            time.sleep(0.1)
        assert daemon.metric("distractd_messages_received_total") > before
        first.close(linger=0)
    assert daemon.stop() == 0
    assert "input.max_connections lowered to 144: the descriptor limit is 400" in daemon.log_text


def test_curve_refusals_are_counted(start_daemon, tmp_path):
    keys, allowed = tmp_path / "keys", tmp_path / "allowed"
    keys.mkdir()
    allowed.mkdir()
    _, server_secret = zmq.auth.create_certificates(keys, "server")
    client_public, _ = zmq.auth.create_certificates(allowed, "client")
    _, stranger_secret = zmq.auth.create_certificates(keys, "stranger")
    server_key, _ = zmq.auth.load_certificate(server_secret)
    daemon = start_daemon(["security.curve=true", f"security.secret_key_file={server_secret}",
                           f"security.authorized_keys_dir={allowed}"])
    with zmq.Context() as context:
        stranger = context.socket(zmq.PUB)
        stranger.linger = 0
        stranger.curve_publickey, stranger.curve_secretkey = \
            zmq.auth.load_certificate(stranger_secret)
        stranger.curve_serverkey = server_key
        stranger.connect(daemon.input)
        plain = context.socket(zmq.PUB)
        plain.linger = 0
        plain.connect(daemon.input)
        deadline = time.monotonic() + 30
        while (daemon.metric("distractd_connections_refused_total", reason="curve_denied") < 1
               or daemon.metric("distractd_connections_refused_total",
                                reason="handshake_failed") < 1) and time.monotonic() < deadline:
            stranger.send_multipart(encode_map("stranger", GOOD_MAP))
            plain.send_multipart(encode_map("plain", GOOD_MAP))
            time.sleep(0.1)
        stranger.close()
        plain.close()
    assert daemon.metric("distractd_connections_refused_total", reason="curve_denied") >= 1
    assert daemon.metric("distractd_connections_refused_total", reason="handshake_failed") >= 1
    assert daemon.metric("distractd_messages_received_total") == 0
    assert daemon.stop() == 0


def test_no_segment_spans_a_tracker_clock_reset():
    """A stream whose clock restarts mid-drive: every published segment ends after it starts."""
    model = Model("")
    drive = simulate_drive(7, duration_s=150.0)
    session = Session("s", model.pipeline_config,
                      decision_options(load_config(), model.detector.feature_names),
                      model.segmenter(True), 0.0)
    half = len(drive.samples) // 2
    restarted = drive.samples[half:].copy()
    restarted[:, 0] -= restarted[0, 0] - 1.0   # the tracker restarts its clock at 1 s
    segments = []
    for block in (drive.samples[:half], restarted):
        for lo in range(0, len(block), 30):
            windows = session.process(block[lo:lo + 30])
            if len(windows):
                _, events = session.decide(windows, model.scores(windows.X), "m")
                segments += [e["segment"] for e in events if e["type"] == "segment"]
    segments += [e["segment"] for e in session.final_segments()]
    assert len(segments) >= 2, "the segment open at the reset is committed there"
    assert all(s["end"] >= s["start"] for s in segments), segments
    assert [s["id"] for s in segments] == list(range(len(segments)))


def test_timestamps_near_the_float_limit_are_dropped_and_counted(start_daemon):
    """Issue 23, item 1: ``t = 1e308`` (map form, a one-row block) or ±9e307 once made the loop's
    next-window arithmetic overflow and the process exit 1. Each sample is now dropped by
    validation as ``t_out_of_range`` and the daemon goes on serving the stream. (The block's two
    equal stamps end a held batch without a forward jump, the case that reached the overflow.)"""
    daemon = start_daemon()
    send_maps(daemon, "edge", 30)
    hostile = [encode_map("edge", {"t": 1e308}), encode_map("edge", {**GOOD_MAP, "t": -9e307}),
               encode_map("edge", {**GOOD_MAP, "t": 9e307}),
               encode_block("edge", np.array([[1e308], [1e308]]), seq=1, fields=("t",))]
    before = daemon.metric("distractd_samples_rejected_total", reason="t_out_of_range")
    with zmq.Context() as context:
        pub = context.socket(zmq.PUB)
        pub.linger = 2000
        pub.connect(daemon.input)
        time.sleep(0.3)
        deadline = time.monotonic() + 30
        while daemon.metric("distractd_samples_rejected_total", reason="t_out_of_range") \
                < before + len(hostile) and time.monotonic() < deadline:
            for frames in hostile:
                pub.send_multipart(frames)
            time.sleep(0.5)
        pub.close()
    assert daemon.metric("distractd_samples_rejected_total",
                         reason="t_out_of_range") >= before + len(hostile)
    assert daemon.process.poll() is None
    send_maps(daemon, "edge", 10)   # the stream is still served after them
    assert daemon.stop() == 0
