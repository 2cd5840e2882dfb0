"""A fault in one stream never takes down the others: the daemon's loop in-process, on real sockets.

No input is known to make a stage of the daemon raise (the fuzzer finds none), so each stream
``s-<k>`` with ``k`` > 0 gets, at its session's creation, a component that fails at one stage: its
pipeline, its scorer, its online segmenter or its decision rule. Stream ``s-0`` beside them must be
published exactly as the batch prediction of its drive, each fault counted under its stage in
``distractd_stream_errors_total{stage}`` with one log line, and the loop must go on and stop
cleanly. A loop that hangs stops the systemd watchdog pings (they come from the loop's own thread).
"""

import logging
import threading
import time

import pytest
import zmq
from prometheus_client import CollectorRegistry

from distractd.daemon import Service, load_config
from distractd.daemon._systemd import Notifier
from distractd.models.detectors import DecisionRule
from distractd.pipeline import StreamProcessor
from distractd.pipeline.formats import decode_output
from distractd.simulators import NotifyReceiver, free_port, replay, simulate_drive

from ._published import states_of
from .test_service import assert_same_states, expected_states

FAULTY = {"s-1": "pipeline", "s-2": "scoring", "s-3": "segmentation", "s-4": "publish"}
"""The stage at which each faulty stream fails."""


class FailingProcessor(StreamProcessor):
    """A pipeline that fails at its first block."""

    def update(self, block):
        raise ValueError(f"pipeline defect at t={block[0, 0]:.3f}")


class FailingRule(DecisionRule):
    """A decision rule that fails at its first windows."""

    def update(self, *_):
        raise ZeroDivisionError("decision rule defect")


class FailingSegmenter:
    """An online segmenter that fails at its first windows."""

    current = None

    def update(self, X_raw, t_end):
        raise IndexError(f"segmenter defect at {len(t_end)} windows")

    def flush(self):
        return []


class FailingScorer:
    """A scorer that fails on every batch it is given."""

    model_id = "failing"

    def window_scores(self, X, names, scorer):
        raise FloatingPointError(f"scorer defect on {len(X)} windows")


class FaultyService(Service):
    """The daemon, its sessions of the :data:`FAULTY` streams given their failing component by a
    listener of its stream table, and its policy given a failing scorer for the ``scoring``
    stream."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.streams.opened.append(fail_at_stage)
        scorer = self.classifier.scorer
        self.classifier.scorer = lambda session: (
            FailingScorer() if FAULTY.get(session.stream) == "scoring" else scorer(session))


def fail_at_stage(session):
    """Give a new session of a :data:`FAULTY` stream the component failing at its stage."""
    stage = FAULTY.get(session.stream)
    if stage == "pipeline":
        session.processor = FailingProcessor(session.processor.config)
    elif stage == "segmentation":
        assert session.segmenter is not None   # the shipped model segments
        session.segmenter = FailingSegmenter()
    elif stage == "publish":
        session.decision = FailingRule()


class Running:
    """A service of ``service_class`` running in a thread on free loopback ports, and a
    subscriber reading its output in another."""

    def __init__(self, service_class, overrides=(), notifier=None):
        config = load_config(overrides=[f'input.bind=["tcp://127.0.0.1:{free_port()}"]',
                                        f"output.bind=tcp://127.0.0.1:{free_port()}",
                                        "metrics.enabled=false", *overrides])
        self.service = service_class(config, registry=CollectorRegistry(), notifier=notifier)
        self.input = config["input"]["bind"][0]
        self.status = None
        self.messages = []
        self.context = zmq.Context()
        self.sub = self.context.socket(zmq.SUB)
        self.sub.linger = 0
        self.sub.subscribe(b"")
        self.sub.connect(config["output"]["bind"])
        self.thread = threading.Thread(target=self._run)
        self.reader = threading.Thread(target=self._read)
        self.thread.start()
        self.reader.start()
        time.sleep(0.5)   # the subscription reaches the daemon

    def _run(self):
        self.status = self.service.run(install_signals=False)

    def _read(self):
        while self.thread.is_alive() or self.sub.poll(0):
            if self.sub.poll(100):
                self.messages.append(decode_output(self.sub.recv_multipart()))

    def stop(self):
        """Stop the service; return its exit status."""
        self.service.request_stop()
        self.thread.join(120)
        self.reader.join(120)
        assert not self.thread.is_alive()
        self.sub.close(linger=0)
        self.context.term()
        return self.status


def errors(service, stage):
    return service.metrics.registry.get_sample_value("distractd_stream_errors_total",
                                                     {"stage": stage})


@pytest.fixture(scope="module")
def drive():
    return simulate_drive(7, duration_s=120.0)  # past the 60 s baseline: windows get decided


def test_a_failing_stream_is_dropped_counted_and_the_others_go_on(drive, caplog):
    running = Running(FaultyService)
    service = running.service
    with caplog.at_level(logging.INFO, logger="distractd"):
        replay([drive], running.input, speed=40, copies=5, stagger_s=0.0, prefix="s")
        assert running.stop() == 0
    messages = running.messages
    windows, scores, states = expected_states(drive, service.model.detector)
    assert_same_states(states_of(messages, "s-0"), windows, scores, states)
    for stream, stage in FAULTY.items():
        assert errors(service, stage) >= 1, stage
        assert f"stream error: stream {stream} failed at {stage}, its session dropped: " in \
            caplog.text
        if stage != "segmentation":   # (the segmenter gets the windows decided after 60 s)
            assert not any(kind == "state" and name == stream for kind, name, _ in messages)
    for stage in ("decode", "ingest", "adaptation", "end"):
        assert errors(service, stage) == 0
    assert "Traceback" not in caplog.text   # the traceback is at debug level only


def test_the_traceback_of_a_stream_error_is_at_debug_level(caplog):
    running = Running(FaultyService, ["service.log_level=debug"])
    with caplog.at_level(logging.DEBUG, logger="distractd"):
        replay([simulate_drive(7, duration_s=20.0)], running.input, speed=40, copies=2,
               prefix="s")
        assert running.stop() == 0
    debug = [record for record in caplog.records if record.levelno == logging.DEBUG
             and record.getMessage() == "stream s-1 failed at pipeline"]
    assert debug and "ValueError: pipeline defect" in caplog.text
    assert "Traceback" in caplog.text


class HangingService(Service):
    """The daemon, whose pipeline of stream ``hang`` waits for :attr:`release` at its first
    block (and sets :attr:`entered`): the loop's thread hangs."""

    entered = threading.Event()
    release = threading.Event()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.streams.opened.append(self.hang)

    @staticmethod
    def hang(session):
        if session.stream.startswith("hang"):
            session.processor = HangingProcessor(session.processor.config)


class HangingProcessor(StreamProcessor):
    def update(self, block):
        HangingService.entered.set()
        HangingService.release.wait()
        return super().update(block)


def test_a_hung_loop_stops_the_watchdog_pings():
    with NotifyReceiver() as receiver:
        notifier = Notifier({"NOTIFY_SOCKET": receiver.path, "WATCHDOG_USEC": "300000"})
        running = Running(HangingService, notifier=notifier)
        assert receiver.messages.count("WATCHDOG=1") > 0   # every 0.1 s while the loop turns
        replay([simulate_drive(7, duration_s=5.0)], running.input, speed=10, prefix="hang")
        assert HangingService.entered.wait(60)   # the loop's thread is held in the pipeline
        hung = receiver.messages.count("WATCHDOG=1")
        time.sleep(1.0)   # 10 ping intervals
        assert receiver.messages.count("WATCHDOG=1") <= hung + 1   # (one sent as it entered)
        HangingService.release.set()
        deadline = time.monotonic() + 60
        while receiver.messages.count("WATCHDOG=1") <= hung + 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert receiver.messages.count("WATCHDOG=1") > hung + 1   # pings again once it turns
        assert running.stop() == 0
