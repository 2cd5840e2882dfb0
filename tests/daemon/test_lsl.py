"""LSL on loopback: an outlet in this process -> the daemon (a real subprocess) -> states on its
ZeroMQ output equal to the batch pipeline's on the same samples, and the same states on the
daemon's LSL outlet, described per the XDF/LSL meta-data convention and stamped at each window's
end; refused and lost streams counted in its metrics; channel descriptions read from real
outlets."""

import re
import threading
import time
import uuid

import numpy as np
import pylsl
import pytest

from distractd.daemon import DEFAULTS, decision_options, default_model_path
from distractd.daemon._lsl import LSL_OUTCOMES, _Inlet
from distractd.models import load_model
from distractd.models.detectors import DecisionRule, predict_windows
from distractd.pipeline.formats import (
    FIELD_INDEX, FIELDS, STATE_CHANNEL_META, STATE_CHANNELS, STATE_NAMES, Recording, lsl_mapping,
    lsl_stream_id,
)
from distractd.simulators import replay, simulate_drive

from ._published import states_of


def _outlet(name, source_id, labels, meta=()):
    """A real outlet whose channels have these labels (and ``meta``: per channel, a dict of
    further ``desc/channels/channel`` entries)."""
    info = pylsl.StreamInfo(name, "Gaze", len(labels), 60.0, "double64", source_id)
    channels = info.desc().append_child("channels")
    for label, entries in zip(labels, list(meta) or [{}] * len(labels)):
        channel = channels.append_child("channel")
        channel.append_child_value("label", label)
        for key, value in entries.items():
            channel.append_child_value(key, value)
    return pylsl.StreamOutlet(info)


def _described_channels(info):
    channels, channel = [], info.desc().child("channels").child("channel")
    while not channel.empty():
        channels.append({key: channel.child_value(key) for key in ("label", "type", "unit")})
        channel = channel.next_sibling("channel")
    return channels


def test_lsl_outlet_to_daemon_states_and_back(start_daemon):
    drive = simulate_drive(7, duration_s=50.0)
    name, source_id = f"distractd-test-{uuid.uuid4().hex[:8]}", "tracker-1"
    stream = lsl_stream_id(name, source_id)
    labels = list(FIELDS[1:])
    outlet = _outlet(name, source_id, labels)
    daemon = start_daemon([f"lsl.inlets=[\"name='{name}'\"]", "lsl.outlets=true",
                           "lsl.correction_interval_s=100000", "sessions.idle_timeout_s=3"])
    assert outlet.wait_for_consumers(60)
    base = pylsl.local_clock() - drive.t[0]
    state_inlet = None
    from_lsl = []
    for start in range(0, drive.n_samples, 60):  # 1 s of samples every 0.05 s: 20x real time
        chunk = drive.samples[start:start + 60]
        outlet.push_chunk(chunk[:, 1:].tolist(), (base + chunk[:, 0]).tolist())
        time.sleep(0.05)
        if state_inlet is None:
            found = pylsl.resolve_byprop("name", f"distractd.{stream}", 1, 0.0)
            if found:
                state_inlet = pylsl.StreamInlet(found[0])
                state_inlet.open_stream(10)
        else:
            from_lsl += zip(*state_inlet.pull_chunk(timeout=0.0))
    offset = float(re.search(rf"lsl: stream {re.escape(stream)} .*clock offset (\S+) s",
                             daemon.stderr())[1])
    samples = lsl_mapping(name, "double64", [{"label": x} for x in labels]).decode(
        drive.samples[:, 1:], base + drive.t, offset)
    detector = load_model(default_model_path())
    rule = DecisionRule(**decision_options(DEFAULTS, detector.feature_names))
    windows, scores, labels_ = predict_windows(detector, Recording(samples), rule)
    published = states_of(daemon.collect(lambda m: len(states_of(m, stream)) >= len(windows),
                                       timeout_s=60), stream)
    assert [m["t"] for m in published] == windows.t_end.tolist()
    assert [m["state"] for m in published] == [STATE_NAMES[label] for label in labels_]
    np.testing.assert_allclose([m["score"] for m in published], scores, rtol=1e-12,
                               equal_nan=True)
    assert daemon.metric("distractd_samples_received_total") == drive.n_samples
    assert not any("gaze_frame" in m for m in published)  # a remote tracker: car-frame gaze
    # the daemon's LSL outlet carries the same states
    assert state_inlet is not None
    while chunk := list(zip(*state_inlet.pull_chunk(timeout=1.0))):  # until the outlet is silent
        from_lsl += chunk
    by_t = {m["t"]: m for m in published}
    assert len(from_lsl) > 10
    # issue 24: every channel has label, type and unit (XDF/LSL meta-data), and each state is
    # stamped at its window's end, in the LSL clock of the inlet's samples (t = LSL time + offset)
    description = state_inlet.info(timeout=10)
    assert _described_channels(description) == [{"label": label, **STATE_CHANNEL_META[label]}
                                                 for label in STATE_CHANNELS]
    assert description.desc().child_value("timestamps") == "window_end"
    assert description.desc().child_value("source_stream") == stream
    for row, stamp in from_lsl:
        values = dict(zip(STATE_CHANNELS, row))
        assert stamp == pytest.approx(values["t_end"], abs=1e-9)
        message = by_t[values["t_end"]]
        assert values["distracted"] == pytest.approx(
            {"distracted": 1.0, "attentive": 0.0}.get(message["state"], np.nan), nan_ok=True)
        assert values["score"] == pytest.approx(message["score"], nan_ok=True)
        assert values["quality"] == message["quality"]
    assert daemon.stop() == 0


def _streams_counted(daemon, outcome, count, timeout_s=60):
    """Scrape until ``distractd_lsl_streams_total{outcome}`` reaches ``count``; whether it did."""
    deadline = time.monotonic() + timeout_s
    while (counted := daemon.metric("distractd_lsl_streams_total", outcome=outcome)) < count:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return counted == count


def test_lsl_refused_and_lost_streams_are_counted(start_daemon):
    """A string stream is refused and a stream without a source id (liblsl cannot recover it)
    that goes away is lost: each counted by outcome, not only logged."""
    prefix = f"distractd-test-{uuid.uuid4().hex[:8]}"
    text = pylsl.StreamOutlet(pylsl.StreamInfo(f"{prefix}-text", "Gaze", 1, 60.0, "string",
                                               "text-1"))
    gone = _outlet(f"{prefix}-gone", "", list(FIELDS[1:]))
    daemon = start_daemon([f"lsl.inlets=[\"starts-with(name, '{prefix}')\"]"])
    assert _streams_counted(daemon, "refused", 1)
    assert _streams_counted(daemon, "opened", 1)
    assert daemon.metric("distractd_lsl_streams_total", outcome="lost") == 0
    del gone  # the outlet is destroyed: the daemon's inlet loses it
    assert _streams_counted(daemon, "lost", 1)
    assert {outcome: daemon.metric("distractd_lsl_streams_total", outcome=outcome)
            for outcome in LSL_OUTCOMES} == {"opened": 1, "refused": 1, "timed_out": 0,
                                             "lost": 1, "dropped": 0}
    log = daemon.stderr()
    assert f"lsl: stream '{prefix}-text' not used: " in log
    assert f"lsl: stream lsl.{prefix}-gone lost" in log
    assert "ERR|" not in log and "INFO|" not in log     # liblsl's own log (issue 37, item 8)
    assert daemon.stop() == 0
    del text  # kept open until here, so the daemon resolves and refuses it


def test_pupil_diameter_for_both_eyes_is_read_from_a_real_outlet():
    """Issue 24: a ``Diameter`` channel marked ``eye`` ``both`` (one pupil value for both eyes) was
    ignored; it now fills both pupil fields, read from a real outlet's description."""
    name = f"distractd-test-{uuid.uuid4().hex[:8]}"
    labels = ["gx", "gy", "gz", "pupil", "conf"]
    meta = [{"type": "DirectionX", "eye": "both"}, {"type": "DirectionY", "eye": "both"},
            {"type": "DirectionZ", "eye": "both"}, {"type": "Diameter", "eye": "both",
                                                     "unit": "mm"},
            {"type": "Confidence"}]
    outlet = _outlet(name, "both-1", labels, meta)
    found = pylsl.resolve_byprop("name", name, 1, 10.0)
    assert found
    inlet = _Inlet(pylsl, found[0], 10.0)
    assert inlet.mapping.ignored == []
    inlet.inlet.open_stream(10)
    assert outlet.wait_for_consumers(10)
    outlet.push_chunk([[0.0, 0.0, 1.0, 3.5, 0.9], [0.1, -0.1, 0.99, 4.0, 0.8]], [10.0, 10.1])
    deadline = time.monotonic() + 10
    while not (pulled := inlet.inlet.pull_chunk(timeout=0.5))[1] and time.monotonic() < deadline:
        pass
    block = inlet.mapping.decode(*pulled, 0.0)
    assert block[:, FIELD_INDEX["pupil_r"]].tolist() == [3.5, 4.0]
    assert block[:, FIELD_INDEX["pupil_l"]].tolist() == [3.5, 4.0]
    assert block[:, FIELD_INDEX["confidence"]].tolist() == pytest.approx([0.9, 0.8])
    np.testing.assert_allclose(block[:, FIELD_INDEX["gaze_r_yaw"]],
                               block[:, FIELD_INDEX["gaze_l_yaw"]])
    inlet.inlet.close_stream()


def test_states_of_a_zeromq_stream_are_stamped_at_publication(start_daemon):
    """A stream from ZeroMQ has a clock LSL does not know: its states on the LSL outlet are stamped
    with this host's local_clock() when published, and the outlet's desc says so."""
    daemon = start_daemon(["lsl.outlets=true"])
    before = pylsl.local_clock()
    sender = threading.Thread(target=replay, args=([simulate_drive(5, duration_s=60.0)],
                                                   daemon.input),
                              kwargs={"speed": 5.0, "prefix": "zmq"})
    sender.start()
    inlet, rows, stamps = None, [], []
    while sender.is_alive() or inlet is None:
        if inlet is None:
            found = [info for info in pylsl.resolve_byprop("type", "DistractionState", 0, 1.0)
                     if info.name().startswith("distractd.zmq")]
            if found:
                inlet = pylsl.StreamInlet(found[0])
                inlet.open_stream(10)
            assert sender.is_alive() or inlet is not None, "no state outlet for the stream"
        else:
            chunk, times = inlet.pull_chunk(timeout=0.2)
            rows += chunk
            stamps += times
    sender.join()
    assert daemon.stop() == 0  # the end of the stream publishes its last windows
    while (chunk := inlet.pull_chunk(timeout=1.0))[0]:
        rows += chunk[0]
        stamps += chunk[1]
    after = pylsl.local_clock()
    assert inlet.info(timeout=10).desc().child_value("timestamps") == "publication"
    assert len(rows) > 10
    assert all(before <= stamp <= after for stamp in stamps)
    assert all(row[0] <= 60.0 < before for row in rows)  # t_end: the drive's clock, from 0 s
