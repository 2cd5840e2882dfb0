"""A real ``distractd run`` subprocess on free loopback ports, with a NOTIFY_SOCKET receiver."""

import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest
import zmq
from prometheus_client.parser import text_string_to_metric_families

from distractd.pipeline.formats import decode_output
from distractd.simulators import NotifyReceiver, free_port


class Daemon:
    """``distractd run`` with its ports, notifications, an output subscriber and metrics."""

    def __init__(self, overrides=(), config_path=None, env=None, like=None, wrapper=()):
        """``like``: a stopped daemon whose endpoints and metrics port to bind again (a restart);
        ``wrapper``: a command that runs the daemon's command line (its arguments follow)."""
        self.input = like.input if like else f"tcp://127.0.0.1:{free_port()}"
        self.output = like.output if like else f"tcp://127.0.0.1:{free_port()}"
        self.metrics_port = like.metrics_port if like else free_port()
        command = [*wrapper, sys.executable, "-m", "distractd.cli", "run"]
        if config_path is not None:
            command += ["--config", str(config_path)]
        for override in (f'input.bind=["{self.input}"]', f"output.bind={self.output}",
                         f"metrics.port={self.metrics_port}", "service.status_interval_s=0.2",
                         *overrides):
            command += ["--set", override]
        self.notify = NotifyReceiver()
        self.log = tempfile.TemporaryFile(mode="w+")
        self.closed = False
        self.process = subprocess.Popen(
            command, env={**os.environ, **(env or {}), "NOTIFY_SOCKET": self.notify.path},
            stderr=self.log, text=True)
        self.ready = self.notify.wait_for("READY=1", timeout_s=180)
        assert self.ready is not None, self._failure()
        self.context = zmq.Context()
        self.sub = self.context.socket(zmq.SUB)
        self.sub.linger = 0
        self.sub.subscribe(b"")
        self.sub.connect(self.output)
        time.sleep(0.3)  # let the subscription reach the daemon's PUB (slow joiner)

    def _failure(self):
        self.process.kill()
        self.process.wait()
        return f"daemon did not become ready: {self.stderr()[-3000:]}"

    def stderr(self):
        self.log.seek(0)
        return self.log.read()

    def collect(self, until, timeout_s=60):
        """Output messages ``(kind, stream, message)`` until ``until(messages)`` or the timeout."""
        messages = []
        deadline = time.monotonic() + timeout_s
        while not until(messages) and time.monotonic() < deadline:
            if self.sub.poll(100):
                messages.append(decode_output(self.sub.recv_multipart()))
        return messages

    def scrape(self):
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode("utf-8")

    def metric(self, name, **labels):
        for family in text_string_to_metric_families(self.scrape()):
            for sample in family.samples:
                if sample.name == name and all(sample.labels.get(k) == v
                                               for k, v in labels.items()):
                    return sample.value
        return None

    def stop(self):
        """SIGTERM, then the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        finally:
            self.close()

    def close(self):
        if self.closed:
            return
        self.closed = True
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.log_text = self.stderr()
        self.log.close()
        self.sub.close(linger=0)
        self.context.term()
        self.notify.__exit__()


@pytest.fixture
def start_daemon():
    """Start daemons; whatever a test leaves running is killed at its end."""
    daemons = []

    def start(*args, **kwargs):
        daemon = Daemon(*args, **kwargs)
        daemons.append(daemon)
        return daemon

    yield start
    for daemon in daemons:
        daemon.close()
