"""`distractd demo`: daemon child on the shipped model, replayed drive, live states, clean stop."""

import io
import socket
import subprocess
import sys

import zmq

from distractd.daemon import default_model_path
from distractd.models import load_model
from distractd.pipeline import PipelineConfig, Recording, extract_features
from distractd.simulators import demo, free_port, simulate_drive
from distractd.simulators._demo import EPHEMERAL_RANGE


def test_shipped_default_model_is_a_cohort_model_the_demo_driver_never_met():
    detector = load_model(default_model_path())
    assert detector.kind == "SSELMClassifier" and detector.summary["kind"] == "cohort"
    assert "segmenter" in detector.extras and "anchors" in detector.extras
    assert PipelineConfig.from_dict(detector.pipeline_config).baseline
    assert len(detector.summary["drivers"]) == 8
    assert simulate_drive(7, duration_s=1.0).meta["driver_id"] not in detector.summary["drivers"]


def test_demo_runs_end_to_end_and_stops_cleanly():
    out = io.StringIO()
    assert demo(duration_s=90.0, speed=40.0, seed=7, out=out) == 0
    text = out.getvalue()
    assert "daemon ready" in text and "metrics at http://127.0.0.1:" in text
    assert "a driver the default model never saw" in text
    assert "distractd_windows_classified_total" in text
    assert "detection delay from each distraction episode's onset" in text
    assert "false alarm(s)" in text
    # the first minute's unknown states say why: the driver's baseline is warming up
    first_state = next(line for line in text.splitlines() if " s  state " in line)
    assert "state unknown" in first_state and "baseline warming up" in first_state
    assert "daemon stopped with exit status 0" in text
    received = int(text.split(" states received")[0].rsplit(" ", 1)[1])
    drive = simulate_drive(7, drive=1, protocol="visual-manual")
    first = drive.t < drive.t[0] + 90.0
    windows = extract_features(Recording(drive.samples[first], drive.labels[first]))
    assert received == len(windows)


def test_free_ports_are_held_distinct_and_never_an_outgoing_connections_source_port():
    first_ephemeral = int(EPHEMERAL_RANGE.read_text().split()[0])
    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == 50 and max(ports) < first_ephemeral
    held = ports[0]
    probe = f"import socket; socket.socket().bind(('127.0.0.1', {held}))"
    taken = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert taken.returncode == 1 and "Address already in use" in taken.stderr
    with zmq.Context() as context, context.socket(zmq.PULL) as listener, \
            socket.socket() as client:
        listener.bind(f"tcp://127.0.0.1:{held}")          # a daemon's bind takes it
        client.connect(("127.0.0.1", held))
        assert client.getsockname()[1] >= first_ephemeral  # the kernel's source port
