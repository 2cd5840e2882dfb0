"""Each part of the daemon alone, in process, with real parts around it: the stream table, the
policy (:class:`Classifier`) publishing on a real loopback socket, the adaptation, the reload
thread, the inputs reading a real socket, and the status text."""

import logging
import math
import time

import numpy as np
import pytest
import zmq
from prometheus_client import CollectorRegistry

from distractd.daemon import (
    Adaptation, Classifier, Inputs, Metrics, Model, Output, Rates, Reloader, Service, Status,
    StreamTable, load_config,
)
from distractd.daemon._adaptation import Fit
from distractd.daemon._systemd import Notifier
from distractd.pipeline import StreamProcessor, Windows
from distractd.pipeline.formats import (
    Limits, Rejected, decode_message, decode_output, encode_block,
)
from distractd.simulators import NotifyReceiver, free_port, simulate_drive

from .test_faults_stream import Running
from .test_service import assert_same_states, expected_states

MODEL = Model("")
DRIVE = simulate_drive(7, duration_s=75.0)   # past the 60 s baseline: windows get decided


def sample(metrics, name, **labels):
    return metrics.registry.get_sample_value(name, labels)


class Parts:
    """A stream table, an adaptation, an output on a real XPUB socket with a subscriber, and the
    policy over them, as :class:`Service` composes them."""

    def __init__(self, overrides=()):
        self.config = load_config(overrides=["metrics.enabled=false", *overrides])
        self.metrics = Metrics(CollectorRegistry())
        self.rates = Rates(0.0)
        self.streams = StreamTable(self.config, MODEL, self.metrics)
        self.output = Output(self.metrics)
        self.streams.dropped.append(self.output.drop)
        self.adaptation = Adaptation(self.config, MODEL, self.streams, self.metrics)
        self.classifier = Classifier(MODEL, self.streams, self.output, self.adaptation,
                                     self.metrics, self.rates)
        self.context = zmq.Context()
        self.output.pub = self.context.socket(zmq.XPUB)
        self.output.pub.linger = 0
        port = self.output.pub.bind_to_random_port("tcp://127.0.0.1")
        self.sub = self.context.socket(zmq.SUB)
        self.sub.linger = 0
        self.sub.subscribe(b"")
        self.sub.connect(f"tcp://127.0.0.1:{port}")
        assert self.output.pub.poll(5000)   # the subscription arrived
        self.output.discard_subscriptions()

    def feed(self, stream, samples, block_samples=6, now=0.0):
        """Feed a stream's samples as the loop does, message by message, and classify each
        batch; return the number of batches classified."""
        n_batches = 0
        for lo in range(0, len(samples), block_samples):
            inbox = self.streams.inboxes.get(stream) or self.streams.open(stream, now)
            inbox.session.accept(lo // block_samples, now)
            touched = [inbox] if inbox.add(samples[lo:lo + block_samples], now) else []
            pending = self.streams.ingest(touched, now)
            if pending:
                self.classifier.classify(pending)
                n_batches += 1
        return n_batches

    def published(self):
        messages = []
        while self.sub.poll(200):
            messages.append(decode_output(self.sub.recv_multipart()))
        return messages

    def close(self):
        self.sub.close()
        self.output.pub.close()
        self.context.term()
        self.adaptation.close()


@pytest.fixture
def parts():
    parts = Parts()
    yield parts
    parts.close()


def test_the_policy_publishes_what_batch_prediction_decides(parts):
    assert parts.feed("car", DRIVE.samples) > 100
    parts.classifier.end([parts.streams.inboxes.pop("car")])
    messages = parts.published()
    states = [m for kind, stream, m in messages if kind == "state" and stream == "car"]
    assert_same_states(states, *expected_states(DRIVE, MODEL.detector))
    assert parts.rates.states == len(states)
    assert sum(sample(parts.metrics, "distractd_windows_classified_total", state=state)
               for state in ("attentive", "distracted", "unknown")) == len(states)


def test_a_failing_scorer_drops_its_session_only(parts):
    good = parts.classifier.scorer
    parts.classifier.scorer = lambda session: None if session.stream == "ok" else \
        _Failing() if session.stream == "bad" else good(session)
    sessions = []
    parts.streams.opened.append(sessions.append)
    parts.feed("bad", DRIVE.samples[:1200])
    failed = [session for session in sessions if session.failed]
    assert failed and sample(parts.metrics, "distractd_stream_errors_total",
                             stage="scoring") == len(failed)
    assert all(parts.streams.inboxes.get("bad") is not session for session in failed)
    parts.feed("ok", DRIVE.samples[:1200])   # no sub-model can score it: published unknown
    states = [m for kind, stream, m in parts.published() if kind == "state"]
    assert len(states) >= 10
    assert all(m["stream"] == "ok" and m["state"] == "unknown" for m in states)


class _Failing:
    model_id = "failing"

    def window_scores(self, X, names, scorer):
        raise FloatingPointError("scorer defect")


def test_the_stream_table_opens_refuses_drops_and_expires():
    config = load_config(overrides=["sessions.max_streams=2", "sessions.idle_timeout_s=5"])
    metrics = Metrics(CollectorRegistry())
    table = StreamTable(config, MODEL, metrics)
    opened, dropped = [], []
    table.opened.append(opened.append)
    table.dropped.append(dropped.append)
    first = table.open("a", now=0.0)
    table.open("b", now=3.0)
    assert [session.stream for session in opened] == ["a", "b"]
    with pytest.raises(Rejected, match="stream c: sessions.max_streams=2 streams are active"):
        table.open("c", now=3.0)
    # a fault drops the session, its stream's next message opens a new one
    table.fault("a", "pipeline", ValueError("defect"), now=4.0, session=first.session)
    assert first.session.failed and "a" not in table.inboxes and dropped == ["a"]
    again = table.open("a", now=4.0)
    # a fault of the ended session does not drop the new one
    table.fault("a", "end", ValueError("late"), now=4.0, session=first.session)
    assert table.inboxes["a"] is again and dropped == ["a"]
    assert sample(metrics, "distractd_stream_errors_total", stage="pipeline") == 1
    assert sample(metrics, "distractd_stream_errors_total", stage="end") == 1
    expired = table.expire(now=8.5)   # b: 5.5 s idle; a: 4.5 s
    assert [inbox.session.stream for inbox in expired] == ["b"] and list(table.inboxes) == ["a"]
    table.release(expired)
    assert dropped == ["a", "b"]
    assert sample(metrics, "distractd_streams_expired_total") == 1
    assert sample(metrics, "distractd_active_streams") == 1


def test_the_stream_table_feeds_a_stream_as_one_pipeline():
    config = load_config()
    table = StreamTable(config, MODEL, Metrics(CollectorRegistry()))
    windows = []
    for lo in range(0, 1800, 7):
        inbox = table.inboxes.get("car") or table.open("car", 0.0)
        inbox.add(DRIVE.samples[lo:min(lo + 7, 1800)], 0.0)
        windows += [w for _, w, _ in table.ingest([inbox], 0.0)]
    expected = StreamProcessor(MODEL.pipeline_config).update(DRIVE.samples[:1800])
    fed = Windows.concat(windows)
    assert len(fed) >= 38 and fed.t_end.tolist() == expected.t_end[:len(fed)].tolist()
    np.testing.assert_array_equal(fed.X, expected.X[:len(fed)])


def test_a_reloaded_configuration_restarts_sessions_only_when_their_rule_changes():
    metrics = Metrics(CollectorRegistry())
    table = StreamTable(load_config(), MODEL, metrics)
    kept = table.open("car", 0.0)
    assert not table.configure(load_config(overrides=["service.log_level=debug"]), MODEL)
    assert table.inboxes["car"] is kept
    assert table.configure(load_config(overrides=["smoothing.min_dwell_s=2"]), MODEL)
    assert table.inboxes == {} and sample(metrics, "distractd_active_streams") == 0
    session = table.open("car", 0.0).session
    assert session.decision.smoother.min_dwell_s == 2.0


def test_adaptation_attaches_restarts_on_new_options_and_finds_fits_stale():
    config = load_config(overrides=["adaptation.enabled=true"])
    metrics = Metrics(CollectorRegistry())
    table = StreamTable(config, MODEL, metrics)
    adaptation = Adaptation(config, MODEL, table, metrics)
    try:
        session = table.open("car", 0.0).session
        first = session.adaptation
        assert first is not None and first.due_s == config["adaptation"]["after_s"]
        adaptation.configure(load_config(overrides=["adaptation.enabled=true"]), MODEL)
        assert session.adaptation is first   # same model, same options: kept
        adaptation.configure(load_config(overrides=["adaptation.enabled=true",
                                                    "adaptation.after_s=60"]), MODEL)
        assert session.adaptation is not first and session.adaptation.due_s == 60.0
        # a fit of the replaced adaptation comes back stale
        assert adaptation.adapter.submit(Fit("car", first, MODEL.detector,
                                             np.zeros((20, len(MODEL.columns))), 10.0))
        deadline = time.monotonic() + 60
        while not sample(metrics, "distractd_adaptation_skipped_total", reason="stale") \
                and time.monotonic() < deadline:
            adaptation.swap_finished()
            time.sleep(0.05)
        assert sample(metrics, "distractd_adaptation_skipped_total", reason="stale") == 1
        assert session.adaptation.detector is None
        adaptation.configure(load_config(), MODEL)   # off: new sessions get none
        assert table.open("other", 0.0).session.adaptation is None
    finally:
        adaptation.close()


def test_the_reloader_loads_in_a_thread_and_counts_a_rejected_reload(tmp_path):
    path = tmp_path / "distractd.toml"
    path.write_text("[smoothing]\nmin_dwell_s = 2.0\n")
    metrics = Metrics(CollectorRegistry())
    with NotifyReceiver() as receiver:
        reloader = Reloader(str(path), ["sessions.idle_timeout_s=7"],
                            Notifier({"NOTIFY_SOCKET": receiver.path}), metrics)
        assert reloader.poll("old") is None   # nothing asked
        reloader.request()
        assert reloader.poll("old", stopping=True) is None and reloader.loading is None
        loaded = _polled(reloader)
        config, model = loaded
        assert config["smoothing"]["min_dwell_s"] == 2.0
        assert config["sessions"]["idle_timeout_s"] == 7.0
        assert model.detector.model_id == MODEL.detector.model_id
        path.write_text("[model]\npath = \"missing.npz\"\n")
        reloader.request()
        assert _polled(reloader) is None
        assert sample(metrics, "distractd_model_reloads_total", result="failure") == 1
        assert receiver.wait_for("READY=1", timeout_s=5)
        lines = "\n".join(receiver.messages).splitlines()
        assert lines.count("RELOADING=1") == 2
        assert any(line.startswith("STATUS=reload rejected: model file ") for line in lines)


def _polled(reloader):
    """Poll until the reload under way has ended; what it returned."""
    deadline = time.monotonic() + 120
    loaded = reloader.poll("old")
    while reloader.loading is not None and time.monotonic() < deadline:
        time.sleep(0.02)
        loaded = reloader.poll("old")
    return loaded


def test_the_inputs_read_real_sockets_into_the_table_and_refuse_by_reason():
    config = load_config(overrides=["sessions.max_streams=2"])
    metrics = Metrics(CollectorRegistry())
    table = StreamTable(config, MODEL, metrics)
    rates = Rates(0.0)
    inputs = Inputs(config, table, metrics, rates)
    with zmq.Context() as context:
        sub = context.socket(zmq.SUB)
        sub.linger = 0
        sub.subscribe(b"samples.")
        endpoint = f"tcp://127.0.0.1:{free_port()}"
        sub.bind(endpoint)
        pub = context.socket(zmq.XPUB)
        pub.linger = 0
        pub.connect(endpoint)
        inputs.open(sub)
        deadline = time.monotonic() + 10
        while not pub.poll(10) and time.monotonic() < deadline:
            inputs.read(10, stopping=False)   # the SUB sends its subscription once it is used
        # a second source, added as a new part would add its own: its stream ids are prefixed
        pull = context.socket(zmq.PULL)
        pull.linger = 0
        second = pull.bind_to_random_port("tcp://127.0.0.1")
        limits = Limits("other.")
        inputs.add(pull, lambda frames: decode_message(frames, limits))
        push = context.socket(zmq.PUSH)
        push.linger = 0
        push.connect(f"tcp://127.0.0.1:{second}")
        push.send_multipart([b"other.car2", encode_block("x", DRIVE.samples[:6], 0)[1]])
        touched, n_read, _ = inputs.read(10_000, stopping=False)
        pub.send_multipart(encode_block("car", DRIVE.samples[:6], 0))
        pub.send_multipart(encode_block("car", DRIVE.samples[6:12], 2))   # one lost
        pub.send_multipart([b"samples.car", b"\xc1"])
        pub.send_multipart(encode_block("third", DRIVE.samples[:6], 0))   # the table is full
        deadline = time.monotonic() + 10
        while n_read < 5 and time.monotonic() < deadline:
            more, n, _ = inputs.read(100, stopping=False)
            n_read += n
            touched += more
        for sock in (sub, pub, pull, push):
            sock.close()
    assert n_read == 5 and sorted(inbox.session.stream for inbox in touched) == ["car", "car2"]
    assert table.inboxes["car"].n_held == 12 and table.inboxes["car2"].n_held == 6
    assert rates.samples == 18
    assert sample(metrics, "distractd_messages_lost_total") == 1
    for reason in ("undecodable", "too_many_streams"):
        assert sample(metrics, "distractd_messages_rejected_total", reason=reason) == 1


def test_the_status_says_streams_rates_and_model():
    metrics = Metrics(CollectorRegistry())
    table = StreamTable(load_config(), MODEL, metrics)
    table.open("car", 0.0)
    rates = Rates(10.0)
    rates.samples, rates.states = 1200, 40
    status = Status(table, metrics, Notifier({}), rates)
    assert status.text("m1", 30.0) == "1 streams, 60 samples/s in, 2.0 states/s out, model m1"
    status.report("m1", 30.0)
    assert sample(metrics, "distractd_input_wall_rate_hertz") == 60.0
    assert (rates.since_s, rates.samples, rates.states) == (30.0, 0, 0)
    assert not math.isnan(sample(metrics, "distractd_loop_status_timestamp_seconds"))


def test_the_ready_line_names_every_endpoint(caplog):
    connect = f"tcp://127.0.0.1:{free_port()}"
    with caplog.at_level(logging.INFO, logger="distractd"):
        running = Running(Service, [f'input.connect=["{connect}"]'])
        assert running.stop() == 0
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("ready: ")]
    assert len(lines) == 1
    assert lines[0].endswith(f"; input {running.input} (bind); input {connect} (connect); "
                             f"output {running.service.config['output']['bind']}")


def test_the_output_republishes_each_latest_state_with_its_age(parts):
    parts.feed("car", DRIVE.samples)
    latest = parts.streams.inboxes["car"].session.latest
    assert math.isfinite(latest["score"])
    assert [m for kind, _, m in parts.published() if kind == "state"][-1] == latest
    parts.streams.inboxes["car"].session.latest_s = 100.0
    parts.output.republish(parts.streams.inboxes.values(), now=102.5)
    (kind, stream, message), = parts.published()
    assert (kind, stream) == ("state", "car") and message == {**latest, "age_s": 2.5}
