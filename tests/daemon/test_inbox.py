"""The stream inbox with map-form rows (issue 26): a stream's map messages, decoded to rows
(``decode_message``) and held as rows, are fed as one array per hop, and the session completes
exactly the windows it completes from one-row blocks; rows and blocks keep their arrival order;
a map the decoder refuses is refused with the same reason and message as ``decode_samples``; the
daemon (in a thread, real sockets) decoding maps to rows publishes what batch decides."""

import math
import time

import msgpack
import numpy as np
import pytest

from distractd.daemon import (
    Model, Service, Session, decision_options, default_model_path, load_config,
)
from distractd.daemon._streams import _Inbox
from distractd.models import load_model
from distractd.pipeline import FIELD_INDEX
from distractd.pipeline.formats import (
    FIELDS, Limits, Rejected, decode_message, decode_samples, encode_block, encode_map,
)
from distractd.simulators import replay, simulate_drive

from ._published import states_of
from .test_faults_stream import Running
from .test_service import assert_same_states, expected_states

MODEL = Model("")
DECISION = decision_options(load_config(), MODEL.detector.feature_names)
DRIVE = simulate_drive(3, duration_s=40.0)


def _maps(samples, seq0=0):
    """Map-form messages of ``samples``, NaN fields left out, a field sent as nil every 7th."""
    messages = []
    for i, row in enumerate(samples):
        sample = {name: float(value) for name, value in zip(FIELDS, row) if not math.isnan(value)}
        if i % 7 == 0:
            sample["pupil_r"] = None
        messages.append(encode_map("car", sample, seq0 + i))
    return messages


def _session():
    return Session("car", MODEL.pipeline_config, DECISION, MODEL.segmenter(True), 0.0)


def _fed(messages, decode):
    """Decode ``messages`` with ``decode``, hold them in an inbox as the daemon's loop does (due
    after every message, the wall clock standing still) and feed each take to a session; return
    the blocks fed and the windows completed."""
    session, limits = _session(), Limits()
    inbox = _Inbox(session, MODEL.pipeline_config)
    fed, windows = [], []
    for frames in messages:
        _, samples, seq = decode(frames, limits)[:3]
        session.accept(seq, 0.0)
        inbox.add(samples, 0.0)
        inbox.arrival_s = None
        if inbox.due(0.0):
            fed.append(inbox.take())
            windows.append(session.process(fed[-1]))
    if inbox.n_held:
        fed.append(inbox.take())
        windows.append(session.process(fed[-1]))
    windows.append(session.flush())
    return fed, windows


def test_map_rows_are_fed_per_hop_and_complete_the_same_windows():
    messages = _maps(DRIVE.samples)
    fed_rows, windows_rows = _fed(messages, decode_message)
    fed_blocks, windows_blocks = _fed(messages, decode_samples)
    assert len(fed_rows) == len(fed_blocks) < len(messages) / 20  # about one block per hop
    for rows, blocks in zip(fed_rows, fed_blocks):
        assert rows.dtype == np.float64 and rows.flags.c_contiguous
        np.testing.assert_array_equal(rows, blocks)
    expected = DRIVE.samples.copy()
    expected[::7, FIELD_INDEX["pupil_r"]] = math.nan
    np.testing.assert_array_equal(np.concatenate(fed_rows), expected)
    n_windows = sum(len(w) for w in windows_rows)
    assert n_windows == sum(len(w) for w in windows_blocks) > 0
    for got, want in zip(windows_rows, windows_blocks):
        np.testing.assert_array_equal(got.t_end, want.t_end)
        np.testing.assert_array_equal(got.X, want.X)
        np.testing.assert_array_equal(got.quality, want.quality)


def test_rows_and_blocks_are_fed_in_arrival_order():
    samples = DRIVE.samples[:20]
    limits = Limits()
    inbox = _Inbox(_session(), MODEL.pipeline_config)
    parts = [("map", 0, 3), ("block", 3, 8), ("map", 8, 9), ("map", 9, 12), ("block", 12, 20)]
    for form, lo, hi in parts:
        messages = _maps(samples[lo:hi], lo) if form == "map" \
            else [encode_block("car", samples[lo:hi], lo)]
        for frames in messages:
            inbox.add(decode_message(frames, limits)[1], 0.0)
    assert inbox.n_held == 20 and inbox.t_last == samples[-1, 0]
    taken = inbox.take()
    expected = samples.copy()
    for form, lo, hi in parts:
        if form == "map":
            expected[lo:hi:7, FIELD_INDEX["pupil_r"]] = math.nan
    np.testing.assert_array_equal(taken, expected)
    assert inbox.take() is None and inbox.n_held == 0 and not inbox.due(1e9)


def test_time_going_back_in_a_row_makes_the_inbox_due():
    limits = Limits()
    inbox = _Inbox(_session(), MODEL.pipeline_config)
    inbox.add(decode_message(encode_map("car", {"t": 5.0}), limits)[1], 0.0)
    inbox.take()
    inbox.add(decode_message(encode_map("car", {"t": 5.1}), limits)[1], 0.0)
    assert not inbox.due(0.0)
    inbox.add(decode_message(encode_map("car", {"t": 2, "gaze_r_yaw": 1}), limits)[1], 0.0)
    assert inbox.due(0.0)
    np.testing.assert_array_equal(inbox.take()[:, 0], [5.1, 2.0])


@pytest.mark.parametrize("payload, reason, says", [
    ({"v": 1}, "missing_t", "a sample map must have t"),
    ({"v": 1, "t": None}, "missing_t", "a sample map must have t"),
    ({"v": 1, "t": "1.0"}, "wrong_type", "samples[0].t must be a number, got '1.0'"),
    ({"v": 1, "t": 1.0, "confidence": True}, "wrong_type",
     "samples[0].confidence must be a number, got True"),
    ({"v": 1, "t": 1.0, "gaze_r_yaw": [1]}, "wrong_type",
     "samples[0].gaze_r_yaw must be a number, got [1]"),
    ({"v": 2, "t": 1.0}, "unknown_version", "v must be the integer 1, got int 2"),
    ({"v": 1, "t": 1.0, "seq": -1}, "wrong_type", "seq must be an integer in"),
])
def test_a_refused_map_is_refused_as_decode_samples_refuses_it(payload, reason, says):
    frames = [b"samples.car", msgpack.packb(payload)]
    with pytest.raises(Rejected) as by_samples:
        decode_samples(frames, Limits())
    with pytest.raises(Rejected) as by_message:
        decode_message(frames, Limits())
    assert by_message.value.reason == by_samples.value.reason == reason
    assert str(by_message.value) == str(by_samples.value)
    text = str(by_message.value)
    assert text.startswith(f"{reason}: stream car: ") and says in text


def test_the_daemon_fed_rows_publishes_what_batch_decides():
    drive = simulate_drive(7, duration_s=60.0)
    windows, scores, states = expected_states(drive, load_model(default_model_path()))
    running = Running(Service, ["sessions.idle_timeout_s=3"])
    summary = replay([drive], running.input, speed=40, form="map", prefix="rows")
    assert summary["messages"] == drive.n_samples
    deadline = time.monotonic() + 120
    while len(states_of(running.messages, "rows")) < len(windows) \
            and time.monotonic() < deadline:
        time.sleep(0.2)
    registry = running.service.metrics.registry
    assert running.stop() == 0
    assert_same_states(states_of(running.messages, "rows"), windows, scores, states)
    assert registry.get_sample_value("distractd_messages_received_total") == drive.n_samples
    assert registry.get_sample_value("distractd_samples_received_total") == drive.n_samples
