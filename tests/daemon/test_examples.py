"""The scripts of examples/ against a real daemon subprocess: what each publishes reaches the
daemon and comes back as the states the batch pipeline gives on the same samples, printed by the
subscriber example.

Here rather than in tests/ because they share the daemon fixture of tests/daemon/conftest.py.
"""

import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import msgpack
import numpy as np
import pytest
from pupil_labs.pupil_core_network_client import Device

from distractd.daemon import DEFAULTS, decision_options, default_model_path
from distractd.models import load_model
from distractd.models.detectors import DecisionRule, predict_windows
from distractd.pipeline.formats import (
    FIELD_INDEX, STATE_NAMES, PupilAdapter, Recording, read_recording, write_recording,
)
from distractd.simulators import simulate_drive

from ._published import states_of

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STATE_LINE = re.compile(r"state (\S+) t=(\S+) (attentive|distracted|unknown) score=(\S+) "
                        r"quality=(\S+)")


@pytest.fixture(scope="module")
def drive_csv(tmp_path_factory):
    """A 90 s simulated drive as CSV, with one 4 s glance down and to the right (a phone on the
    passenger seat) once the glance channel has learned the road centre (60 s): a
    long-distraction alert."""
    drive = simulate_drive(7, duration_s=90.0)
    away = (drive.t >= 75.0) & (drive.t < 79.0)
    for eye in ("r", "l"):
        drive.samples[away, FIELD_INDEX[f"gaze_{eye}_yaw"]] = 0.35
        drive.samples[away, FIELD_INDEX[f"gaze_{eye}_pitch"]] = -0.6
    path = tmp_path_factory.mktemp("examples") / "drive.csv"
    write_recording(drive, path)
    return path


def _start(name, *args):
    """An example script as a child that Ctrl-C (SIGINT) stops, even when this test process was
    started in the background by a shell, which makes it and its children ignore SIGINT."""
    return subprocess.Popen([sys.executable, str(EXAMPLES / name), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _subscriber(daemon, stream):
    """The subscriber example, once it says it is listening."""
    subscriber = _start("subscribe_states.py", "--from", daemon.output, "--stream", stream)
    assert subscriber.stdout.readline() == f"listening on {daemon.output}\n"
    return subscriber


def _stopped(process):
    """Ctrl-C for a script that runs until it, then its output lines."""
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    return out.splitlines()


def _batch_states(samples):
    """The window ends and states the batch pipeline gives on ``samples`` with the daemon's
    default model and decision rule."""
    detector = load_model(default_model_path())
    rule = DecisionRule(**decision_options(DEFAULTS, detector.feature_names))
    windows, _, labels = predict_windows(detector, Recording(samples), rule)
    return windows.t_end.tolist(), [STATE_NAMES[label] for label in labels]


def _printed_states(lines, stream):
    found = [STATE_LINE.fullmatch(line) for line in lines if line.startswith("state ")]
    assert all(found) and {m[1] for m in found} == {stream}
    return [(float(m[2]), m[3]) for m in found]


def _published(daemon, stream, n_windows):
    """What the daemon published for ``stream`` (its last windows come when the idle stream
    is flushed): the states and the alerts."""
    messages = daemon.collect(lambda m: len(states_of(m, stream)) >= n_windows, timeout_s=120)
    alerts = [message for kind, name, message in messages
              if kind == "event" and name == stream and message["type"] == "alert"]
    return states_of(messages, stream), alerts


@pytest.mark.parametrize("example, stream", [("publish_map.py", "car-1"),
                                              ("publish_block.py", "car-2")])
def test_publishers_to_the_states_the_subscriber_prints(start_daemon, drive_csv, example, stream):
    recording = read_recording(drive_csv)
    t_end, states = _batch_states(recording.samples)
    daemon = start_daemon(["sessions.idle_timeout_s=2"])
    subscriber = _subscriber(daemon, stream)
    publisher = _start(example, str(drive_csv), "--to", daemon.input, "--stream", stream,
                       "--speed", "20")
    out, err = publisher.communicate(timeout=120)
    assert publisher.returncode == 0, err
    assert out.startswith(f"sent {recording.n_samples} samples")
    published, alerts = _published(daemon, stream, len(t_end))
    assert [m["t"] for m in published] == pytest.approx(t_end, abs=1e-9)
    assert [m["state"] for m in published] == states
    assert daemon.metric("distractd_samples_received_total") == recording.n_samples
    assert daemon.metric("distractd_messages_lost_total") == 0
    lines = _stopped(subscriber)
    assert _printed_states(lines, stream) == [(round(t, 3), s) for t, s in zip(t_end, states)]
    printed_alerts = [line for line in lines if line.startswith("alert ")]
    assert printed_alerts == [f"alert {stream} t={a['t']:.3f} {a['kind']} away={a['away_s']:.2f}s"
                              for a in alerts]
    assert [a["kind"] for a in alerts] == ["long_distraction"]  # the 4 s glance at the phone
    assert daemon.stop() == 0


def test_lsl_outlet_to_the_daemons_inlet(start_daemon, drive_csv):
    recording = read_recording(drive_csv)
    name = f"distractd-example-{uuid.uuid4().hex[:8]}"
    stream = f"lsl.{name}.tracker-1"
    daemon = start_daemon([f"lsl.inlets=[\"name='{name}'\"]", "sessions.idle_timeout_s=3"])
    subscriber = _subscriber(daemon, stream)
    outlet = _start("lsl_outlet.py", str(drive_csv), "--name", name, "--speed", "20")
    out, err = outlet.communicate(timeout=180)
    assert outlet.returncode == 0, err
    assert out == f"sent {recording.n_samples} samples on LSL stream {name} (tracker-1)\n"
    # the samples' own timing moved to this computer's LSL clock: the same windows, shifted
    offset = re.search(rf"lsl: stream {re.escape(stream)} .*clock offset (\S+) s",
                       daemon.stderr())
    assert offset is not None, daemon.stderr()[-2000:]
    t_end, _ = _batch_states(recording.samples)
    published, _ = _published(daemon, stream, len(t_end))
    assert len(published) == len(t_end)
    shift = published[0]["t"] - t_end[0]
    assert [m["t"] - shift for m in published] == pytest.approx(t_end, abs=1e-6)
    assert daemon.metric("distractd_samples_received_total") == recording.n_samples
    assert daemon.metric("distractd_lsl_streams_total", outcome="opened") == 1
    assert _printed_states(_stopped(subscriber), stream) == [
        (round(m["t"], 3), m["state"]) for m in published]
    assert daemon.stop() == 0


def test_pupil_relay_from_capture_to_the_daemon(start_daemon, run_emulator):
    """The Pupil Capture emulator -> the relay -> the daemon's native input: the states equal
    the batch pipeline's on the samples the mapping makes of the same datums (read here with
    Pupil Labs' own client), and none arrive out of order."""
    drive = simulate_drive(7, duration_s=40.0)
    running = run_emulator(drive, speed=20.0,  # the relay's subscriptions and ours
                           wait_subscriptions=2 * len(PupilAdapter.TOPICS))
    daemon = start_daemon(["sessions.idle_timeout_s=2"])
    try:
        relay = _start("pupil_relay.py", "--remote", f"tcp://127.0.0.1:{running.emulator.port}",
                       "--to", daemon.input, "--stream", "glasses-1")
        messages = []
        with Device("127.0.0.1", running.emulator.port).subscribe(
                PupilAdapter.TOPICS) as subscription:
            while True:
                message = subscription.recv_new_message(timeout_ms=1000)
                if message is not None:
                    messages.append(message)
                elif running.emulator.n_passes:
                    break
    finally:
        running.stop()
    adapter = PupilAdapter()
    samples = np.concatenate([adapter.update([m.topic.encode(), msgpack.packb(m.payload)])
                              for m in messages] + [adapter.flush()])
    t_end, states = _batch_states(samples)
    published, _ = _published(daemon, "glasses-1", len(t_end))
    lines = _stopped(relay)
    assert lines[0] == (f"relaying Pupil Capture at tcp://127.0.0.1:{running.emulator.port} to "
                        f"the daemon at {daemon.input} as stream glasses-1; a count every 10 s; "
                        f"Ctrl-C stops")
    assert lines[-1].startswith(f"relayed {len(samples)} samples in ")
    assert lines[-1].endswith(" to stream glasses-1 (0 datums skipped)")
    assert [m["t"] for m in published] == pytest.approx(t_end, abs=1e-9)
    assert [m["state"] for m in published] == states
    assert daemon.metric("distractd_samples_received_total") == len(samples)
    assert daemon.metric("distractd_samples_rejected_total", reason="backwards_t") == 0
    assert daemon.stop() == 0


def test_real_drives_example_tables_a_subject_file_and_draws_its_texting_drive(
        shared_data, tmp_path):
    """The worked example on real drives, as a user runs it: one row per drive of a
    development-half driver (T011), named with its protocol, and the texting drive's timeline."""
    figure = tmp_path / "texting.png"
    done = subprocess.run([sys.executable, str(EXAMPLES / "real_drives.py"),
                           str(shared_data / "taamneh" / "T011.csv"), "--plot", str(figure)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[:3] == ["drive", "decided", "sens."]
    names = [line.split()[1] for line in lines[1:8]]
    assert names == ["(practice)", "(relaxing)", "(normal)", "(cognitive)", "(emotional)",
                     "(texting)", "(failure)"]
    texting = lines[6].split()
    assert texting[0] == "T011-d7" and texting[-2].endswith("/2")   # its two texting blocks
    assert lines[-1] == f"the texting drive's timeline: {figure}"
    assert figure.read_bytes().startswith(b"\x89PNG")
