"""Faults around the running daemon (a real subprocess on loopback sockets): SIGTERM under load,
SIGKILL and restart, a publisher restarted with a new clock, a slow subscriber, a scrape storm,
republished states that say how old they are."""

import concurrent.futures
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import numpy as np
import pytest
import zmq
from prometheus_client.parser import text_string_to_metric_families

from distractd.daemon import DEFAULTS, decision_options, default_model_path
from distractd.models import load_model
from distractd.models.detectors import DecisionRule, predict_windows
from distractd.pipeline import PipelineConfig, write_recording
from distractd.pipeline.formats import STATE_NAMES, decode_output
from distractd.simulators import replay, simulate_drive

from ._published import states_of

BLASTER = """
import sys, time
import numpy as np, zmq
from distractd.pipeline.formats import encode_block
from distractd.simulators import simulate_drive

endpoint, n_streams, rate_hz = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
samples = simulate_drive(7, duration_s=30.0).samples
span_s = samples[-1, 0] - samples[0, 0] + 1 / 60
pub = zmq.Context().socket(zmq.XPUB)
pub.connect(endpoint)
pub.recv()  # the daemon's subscription
print("sending", flush=True)
start, seq = time.monotonic(), 0
while True:  # the drive over and over on one continuous clock, 10 samples per message
    for lo in range(0, len(samples), 10):
        block = samples[lo:lo + 10].copy()
        block[:, 0] += (seq * 10 // len(samples)) * span_s
        for k in range(n_streams):
            pub.send_multipart(encode_block(f"blast-{k}", block, seq))
        seq += 1
        if rate_hz:
            time.sleep(max(0.0, start + seq * 10 / rate_hz - time.monotonic()))
"""


@pytest.fixture(scope="module")
def drive():
    return simulate_drive(7, duration_s=40.0)


@pytest.fixture(scope="module")
def detector():
    return load_model(default_model_path())


def blast(daemon, n_streams, rate_hz=0.0):
    """A publisher sending ``n_streams`` streams at ``rate_hz`` samples/s each (0: flat out)."""
    process = subprocess.Popen([sys.executable, "-c", BLASTER, daemon.input, str(n_streams),
                                str(rate_hz)], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "sending"
    return process


def stop(process):
    process.kill()
    process.wait()


def test_sigterm_flushes_every_stream_and_exits_0(start_daemon, drive, detector):
    """Stopped before its stream goes idle, the daemon still publishes the last windows, which
    only the end of the stream completes: the states equal the batch prediction over the whole
    recording."""
    rule = DecisionRule(**decision_options(DEFAULTS, detector.feature_names))
    windows, scores, labels = predict_windows(detector, drive, rule)
    by_the_end = int((windows.t_end > drive.t[-1] - PipelineConfig().lag_s).sum())
    assert by_the_end >= 1
    daemon = start_daemon()
    replay([drive], daemon.input, speed=40, prefix="car")
    before = daemon.collect(lambda m: len(states_of(m, "car")) >= len(windows) - by_the_end,
                            timeout_s=60)
    before += daemon.collect(lambda m: False, timeout_s=1.0)
    daemon.process.send_signal(signal.SIGTERM)
    after = daemon.collect(lambda m: daemon.process.poll() is not None, timeout_s=60)
    after += daemon.collect(lambda m: False, timeout_s=0.5)
    assert daemon.stop() == 0
    published = states_of(before + after, "car")
    assert [m["t"] for m in published] == windows.t_end.tolist()
    assert [m["state"] for m in published] == [STATE_NAMES[label] for label in labels]
    assert [m["t"] for m in states_of(after, "car")] == windows.t_end[-by_the_end:].tolist()
    assert daemon.notify.wait_for("STOPPING=1", timeout_s=5) is not None
    assert "1 streams flushed" in daemon.log_text


def test_sigterm_under_a_blasting_publisher_stops_after_the_drain_timeout(start_daemon):
    """A publisher that never pauses: the daemon reads for ``service.drain_timeout_s``, flushes
    every stream and exits 0 instead of draining for ever (and being SIGKILLed by systemd)."""
    daemon = start_daemon(["service.drain_timeout_s=1", "service.log_level=info"])
    publisher = blast(daemon, n_streams=20)
    try:
        daemon.collect(lambda m: len(m) >= 100, timeout_s=60)
        daemon.process.send_signal(signal.SIGTERM)
        status = daemon.process.wait(timeout=120)
    finally:
        stop(publisher)
    assert status == 0
    daemon.close()
    assert "input still arriving after service.drain_timeout_s=1 s" in daemon.log_text
    assert "20 streams flushed" in daemon.log_text
    assert "Traceback" not in daemon.log_text


def test_sigkill_loses_the_sessions_and_a_restart_on_the_same_ports_resumes(start_daemon):
    """After SIGKILL a daemon restarted on the same endpoints and metrics port serves the
    still-running publisher again (which reconnects and sends what it queued meanwhile): new
    sessions, whose baselines warm up again."""
    first = start_daemon()
    publisher = blast(first, n_streams=2, rate_hz=1200.0)  # 20x real time
    try:
        before = states_of(first.collect(lambda m: len(states_of(m, "blast-0")) >= 5,
                                         timeout_s=60), "blast-0")
        first.process.kill()
        assert first.process.wait(timeout=30) == -signal.SIGKILL
        first.close()
        second = start_daemon(like=first)
        after = states_of(second.collect(lambda m: len(states_of(m, "blast-0")) >= 5,
                                         timeout_s=60), "blast-0")
        received = second.metric("distractd_messages_received_total")
    finally:
        stop(publisher)
    assert len(before) >= 5 and len(after) >= 5
    assert after[0]["t"] > before[-1]["t"]  # the publisher's clock went on
    assert after[0]["baseline"] == "warming"  # everything learned per stream was lost
    assert second.stop() == 0


def test_publisher_killed_and_restarted_with_a_new_clock(start_daemon, drive, tmp_path):
    """A tracker that dies mid-drive and comes back with its clock from zero: the stream's state
    restarts (counted as a clock reset), its states follow the new clock, no segment ends before
    it starts, and the daemon lives on."""
    path = tmp_path / "drive.npz"
    write_recording(drive, path)
    daemon = start_daemon()
    command = [sys.executable, "-m", "distractd.cli", "replay", str(path), "--endpoint",
               daemon.input, "--speed", "40", "--stream-id", "car"]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    old = daemon.collect(lambda m: len(states_of(m, "car")) >= 10, timeout_s=60)
    stop(first)
    old_t = states_of(old, "car")[-1]["t"]
    assert subprocess.run(command, stdout=subprocess.DEVNULL, timeout=120).returncode == 0
    new = daemon.collect(lambda m: any(s["t"] >= drive.t[-1] - 1.0
                                       for s in states_of(m, "car")), timeout_s=60)
    assert daemon.metric("distractd_samples_rejected_total", reason="clock_reset") >= 1
    new_t = [s["t"] for s in states_of(new, "car")]
    assert new_t[0] < old_t and new_t[-1] >= drive.t[-1] - 1.0
    segments = [m["segment"] for kind, _, m in old + new if kind == "event"
                and m["type"] == "segment"]
    assert all(s["start"] <= s["end"] for s in segments)
    assert daemon.stop() == 0


def test_a_slow_subscriber_loses_messages_counted_and_the_fast_one_keeps_up(start_daemon,
                                                                            drive):
    """A subscriber that stops reading fills its queue (``output.sndhwm``); what it misses is
    counted in ``distractd_output_dropped_total`` while a subscriber that reads gets every
    window of every stream."""
    daemon = start_daemon(["output.sndhwm=1000", "output.republish_s=0.005",
                           "service.poll_interval_s=0.001"])
    context = zmq.Context()
    fast, done = [], threading.Event()

    def read():
        sub = context.socket(zmq.SUB)
        sub.rcvhwm = 0
        sub.subscribe(b"state.")
        sub.connect(daemon.output)
        while not done.is_set():
            while sub.poll(100):
                fast.append(decode_output(sub.recv_multipart()))
        sub.close(linger=0)

    reader = threading.Thread(target=read)
    reader.start()
    slow = context.socket(zmq.SUB)
    slow.rcvhwm = 1
    slow.rcvbuf = 4096
    slow.subscribe(b"state.")
    slow.connect(daemon.output)
    try:
        time.sleep(0.5)  # both subscriptions reach the daemon
        replay([drive], daemon.input, speed=40, copies=20, prefix="car")
        deadline = time.monotonic() + 60
        while (daemon.metric("distractd_output_dropped_total") or 0) == 0 \
                and time.monotonic() < deadline:
            time.sleep(0.5)
        dropped = daemon.metric("distractd_output_dropped_total")
        assert daemon.stop() == 0
    finally:
        done.set()
        reader.join()
        slow.close(linger=0)
        context.term()
    assert dropped > 0
    for k in range(20):
        t_end = np.array([m["t"] for m in states_of(fast, f"car-{k}")])
        assert len(t_end) >= (drive.t[-1] - 11.0) / 0.5 and np.all(np.diff(t_end) == 0.5)


def test_republished_states_carry_their_age(start_daemon, drive):
    """The first publication of a state has no ``age_s``; its republished copies carry the
    seconds since, growing while the stream is silent."""
    daemon = start_daemon(["output.republish_s=0.2"])
    replay([drive], daemon.input, speed=40, prefix="car")
    messages = daemon.collect(lambda m: len([1 for k, _, s in m if k == "state" and "age_s" in s
                                             and s["age_s"] > 1.5]) > 0, timeout_s=60)
    states = [s for kind, name, s in messages if kind == "state" and name == "car"]
    first = [s for s in states if "age_s" not in s]
    copies = [s for s in states if "age_s" in s]
    last = first[-1]
    tail = [s for s in copies if s["t"] == last["t"]]
    assert len(tail) >= 5
    assert all(repr({**s, "age_s": None}) == repr({**last, "age_s": None}) for s in tail)
    ages = [s["age_s"] for s in tail]
    assert ages == sorted(ages) and ages[-1] - ages[0] > 0.5
    assert daemon.stop() == 0


def test_a_scrape_storm_is_answered_and_ingest_goes_on(start_daemon, drive, detector):
    """200 concurrent scrapes while a stream is replayed: every scrape gets a whole exposition
    (with the process collector's series) and the stream's states are those of the batch."""
    rule = DecisionRule(**decision_options(DEFAULTS, detector.feature_names))
    windows, scores, labels = predict_windows(detector, drive, rule)
    daemon = start_daemon(["sessions.idle_timeout_s=2"])
    url = f"http://127.0.0.1:{daemon.metrics_port}/metrics"

    def scrape(_):
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.read().decode()

    with concurrent.futures.ThreadPoolExecutor(200) as pool:
        scrapes = pool.map(scrape, range(400))
        replay([drive], daemon.input, speed=20, prefix="car")
        answers = list(scrapes)
    messages = daemon.collect(lambda m: len(states_of(m, "car")) >= len(windows), timeout_s=60)
    assert all(status == 200 for status, _ in answers)
    for _, text in answers[::50]:
        names = {family.name for family in text_string_to_metric_families(text)}
        assert {"distractd_messages_received", "process_resident_memory_bytes",
                "process_open_fds", "python_info"} <= names
    published = states_of(messages, "car")
    assert [m["t"] for m in published] == windows.t_end.tolist()
    assert [m["state"] for m in published] == [STATE_NAMES[label] for label in labels]
    assert daemon.stop() == 0
