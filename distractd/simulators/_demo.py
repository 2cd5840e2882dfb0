"""``distractd demo``: the daemon on the shipped model, fed a simulated drive, watched live.

The demo starts ``distractd run`` as a child process on free loopback ports (waiting for its
systemd ``READY=1`` on a private ``NOTIFY_SOCKET``), subscribes to its states, replays a simulated
drive at N× speed, prints the states next to the simulator's ground truth, prints the metrics URL
and a few metric values, then stops the daemon with SIGTERM and checks that it exits 0.
"""

import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import zmq

from .._errors import DistractdError
from ..models.detectors import detection_delays, false_alarms_per_hour
from ..pipeline.formats import STATE_NAMES, Recording, decode_output
from ._replay import replay
from ._simulate import simulate_drive

__all__ = ["demo", "free_port", "NotifyReceiver", "DaemonProcess", "running_daemon"]


EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
"""The kernel's ephemeral port range, where every outgoing connection takes its source port."""

_LOWEST_LISTENER_PORT = 10000
_held_ports = {}
"""Port -> the socket holding it for this process's life (bound, never listening)."""


def free_port():
    """A TCP port on 127.0.0.1 for a listener: free, outside the ephemeral range, and held.

    The kernel's port 0 comes from the ephemeral range, from which every outgoing connection (a
    subscriber's connect, a scrape) also draws its source port, so another process could take it
    before a daemon binds it; this port lies below that range. It stays bound here for this
    process's life with ``SO_REUSEADDR`` set after the bind: no other process's ``free_port`` can
    take it, while a listener that sets ``SO_REUSEADDR`` (ZeroMQ, the metrics server) binds it.
    """
    try:
        first_ephemeral = int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        first_ephemeral = 32768  # Linux's default
    draw = random.SystemRandom()
    for _ in range(1000):
        port = draw.randrange(_LOWEST_LISTENER_PORT, first_ephemeral) \
            if first_ephemeral > _LOWEST_LISTENER_PORT else 0  # no room below: the kernel's
        sock = socket.socket()
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            sock.close()
            continue
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        port = sock.getsockname()[1]
        _held_ports[port] = sock
        return port
    raise DistractdError(f"no free TCP port on 127.0.0.1 between {_LOWEST_LISTENER_PORT} and "
                         f"{first_ephemeral}")


class NotifyReceiver:
    """A ``NOTIFY_SOCKET`` datagram endpoint, as systemd provides, collecting every message.

    A background thread reads the socket continuously (as systemd does, so the sender's queue never
    fills). Use as a context manager; :attr:`path` is the value for the child's ``NOTIFY_SOCKET``.
    """

    def __init__(self):
        self._dir = tempfile.TemporaryDirectory(prefix="distractd-notify-")
        self.path = str(Path(self._dir.name) / "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.05)
        self.messages = []
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        while not self._closed.is_set():
            try:
                self.messages.append(self.sock.recv(4096).decode("utf-8"))
            except TimeoutError:
                continue
            except OSError:
                return

    def __enter__(self):
        return self

    def __exit__(self, *_):
        if not self._closed.is_set():
            self._closed.set()
            self._thread.join()
            self.sock.close()
            self._dir.cleanup()

    def wait_for(self, key, timeout_s):
        """The first message received so far or within ``timeout_s`` holding the line ``key``."""
        deadline = time.monotonic() + timeout_s
        while True:
            for message in list(self.messages):
                if key in message.split("\n"):
                    return message
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.02)


def demo(duration_s=600.0, speed=20.0, seed=7, protocol="visual-manual", out=None):
    """Run the demo; return the daemon's exit status (0 on a clean stop).

    The drive replayed is the first ``duration_s`` of ``simulate_drive(seed, drive=1,
    protocol=protocol)``: a driver the shipped cohort model never saw (it was trained on the
    drivers of cohort seed 2026, ``make default-model``). The demo prints states beside the truth,
    then the agreement, the detection delay of each distraction episode, the false alarms and the
    glance alerts.
    """
    out = out or sys.stdout
    print(f"simulating a {protocol} drive of driver {seed}, a driver the default model never saw; "
          f"replaying its first {duration_s:.0f} s at {speed:g}x ...", file=out, flush=True)
    drive = simulate_drive(seed, drive=1, protocol=protocol)
    first = drive.t < drive.t[0] + duration_s
    recording = Recording(drive.samples[first], drive.labels[first], drive.meta)
    print("starting the daemon (its first start on a machine compiles the numba kernels into "
          "the cache, up to a minute on 2 cores; later starts take about a second) ...",
          file=out, flush=True)
    with running_daemon() as daemon:
        print(f"daemon ready ({daemon.ready.splitlines()[-1]}); metrics at {daemon.metrics_url}",
              file=out)
        print("each line: the end of a 10 s window (one every 0.5 s; every 10th shown), the "
              "state the daemon published for it, its score (the decision rule turns distracted "
              "above its threshold) and the simulator's truth", file=out, flush=True)
        watcher = _Watcher(daemon.output, recording, out)
        watcher.start()
        time.sleep(0.3)
        summary = replay([recording], daemon.input, speed=speed, prefix="demo")
        watcher.wait_quiet(quiet_s=3.0, timeout_s=60)  # the idle stream's end flushes too
        watcher.stop()
        print(f"replayed {summary['samples']} samples in {summary['elapsed_s']:.1f} s; "
              f"{watcher.summary()}", file=out)
        with urllib.request.urlopen(daemon.metrics_url, timeout=5) as response:
            for line in response.read().decode("utf-8").splitlines():
                if line.startswith(("distractd_windows_classified_total",
                                    "distractd_samples_received_total",
                                    "distractd_processing_latency_seconds_count",
                                    "distractd_model_info")):
                    print(f"  {line}", file=out)
    status = daemon.status
    print(f"daemon stopped with exit status {status}", file=out)
    return status


@dataclass
class DaemonProcess:
    """A running ``distractd run`` child: its endpoints, its ``READY=1`` message and, once
    stopped, its exit ``status``."""

    input: str
    output: str
    metrics_url: str
    ready: str
    status: int = None


READY_TIMEOUT_S = 600
"""How long a child daemon may take to READY, s: the unit's ``TimeoutStartSec``, since the first
start on a fresh machine compiles every kernel (minutes on a busy 2-core machine)."""


@contextmanager
def running_daemon(*settings):
    """Run ``distractd run`` as a child on free loopback ports until the block ends.

    ``settings`` are extra ``section.key=value`` overrides. The child is waited for (its systemd
    ``READY=1`` on a private ``NOTIFY_SOCKET``, at most :data:`READY_TIMEOUT_S`), then stopped with SIGTERM when the
    block ends; :attr:`DaemonProcess.status` holds its exit status.
    """
    input_port, output_port, metrics_port = free_port(), free_port(), free_port()
    command = [sys.executable, "-m", "distractd.cli", "run",
               "--set", f'input.bind=["tcp://127.0.0.1:{input_port}"]',
               "--set", f"output.bind=tcp://127.0.0.1:{output_port}",
               "--set", f"metrics.port={metrics_port}",
               "--set", "service.log_level=warning", "--set", "sessions.idle_timeout_s=1"]
    for setting in settings:
        command += ["--set", setting]
    with NotifyReceiver() as notify:
        child = subprocess.Popen(command, env={**os.environ, "NOTIFY_SOCKET": notify.path})
        daemon = None
        try:
            ready = notify.wait_for("READY=1", timeout_s=READY_TIMEOUT_S)
            if ready is None or child.poll() is not None:
                raise DistractdError("the daemon did not become ready")
            daemon = DaemonProcess(f"tcp://127.0.0.1:{input_port}",
                                   f"tcp://127.0.0.1:{output_port}",
                                   f"http://127.0.0.1:{metrics_port}/metrics", ready)
            yield daemon
        finally:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
            status = child.wait(timeout=30)
            if daemon is not None:
                daemon.status = status


_LABELS = {name: label for label, name in STATE_NAMES.items()}
"""Label of a published state name."""


class _Watcher(threading.Thread):
    """Subscribe to the daemon's output and print states against the ground truth."""

    def __init__(self, endpoint, recording, out):
        super().__init__(daemon=True)
        self.endpoint = endpoint
        self.t = recording.t
        self.labels = recording.labels
        self.out = out
        self.seen = []
        self.alerts = []
        self._done = threading.Event()

    def run(self):
        with zmq.Context() as context, context.socket(zmq.SUB) as sub:
            sub.linger = 0
            sub.subscribe(b"state.")
            sub.subscribe(b"event.")
            sub.connect(self.endpoint)
            while not self._done.is_set():
                if not sub.poll(100):
                    continue
                kind, stream, message = decode_output(sub.recv_multipart())
                if kind == "event":
                    if message["type"] == "transition":
                        print(f"  t={message['t']:7.1f} s  {stream}: {message['from']} -> "
                              f"{message['to']}", file=self.out, flush=True)
                    elif message["type"] == "alert":
                        self.alerts.append(message)
                        print(f"  t={message['t']:7.1f} s  {stream}: glance alert "
                              f"{message['kind']} ({message['away_s']:.1f} s away)",
                              file=self.out, flush=True)
                    continue
                truth = self._truth(message["t"])
                if self.seen and message["t"] <= self.seen[-1][0]:
                    continue  # a re-published latest state
                self.seen.append((message["t"], message["state"], truth))
                if len(self.seen) % 10 == 0:
                    warming = message.get("baseline") == "warming"
                    print(f"  t={message['t']:7.1f} s  state {message['state']:<10} score "
                          f"{message['score']:+.2f}  truth {truth}"
                          + ("  (baseline warming up: the first minute learns this driver's own "
                             "baseline; no decision before)" if warming else ""),
                          file=self.out, flush=True)

    def _truth(self, t):
        i = min(np.searchsorted(self.t, t, side="right") - 1, len(self.t) - 1)
        return STATE_NAMES[int(self.labels[max(i, 0)])]

    def wait_quiet(self, quiet_s, timeout_s):
        """Wait until no new state arrived for ``quiet_s`` (the daemon has caught up)."""
        deadline = time.monotonic() + timeout_s
        count, since = len(self.seen), time.monotonic()
        while time.monotonic() < deadline and time.monotonic() - since < quiet_s:
            time.sleep(0.1)
            if len(self.seen) != count:
                count, since = len(self.seen), time.monotonic()

    def stop(self):
        self._done.set()
        self.join(timeout=5)

    def summary(self):
        """Agreement, detection delays, false alarms and alerts of the states seen."""
        decided = [(s, truth) for _, s, truth in self.seen
                   if s != "unknown" and truth != "unknown"]
        agree = sum(s == truth for s, truth in decided)
        t = np.array([t for t, _, _ in self.seen])
        label = np.array([_LABELS.get(truth, -1) for _, _, truth in self.seen])
        state = np.array([_LABELS.get(s, -1) for _, s, _ in self.seen])
        delays = detection_delays(t, label, state) if len(t) else np.empty(0)
        alarms = false_alarms_per_hour(t, label, state, grace_s=5.0) if len(t) else np.nan
        shown = ", ".join("missed" if d != d else f"{d:.1f} s" for d in delays) or "none"
        return (f"{len(self.seen)} states received, {len(decided)} decided; "
                f"{agree} ({100 * agree / max(len(decided), 1):.1f} %) agree with the ground "
                f"truth; detection delay from each distraction episode's onset to its first "
                f"distracted state: {shown} (a state judges the 10 s window that ends with it, "
                f"so it follows a change of behaviour by several seconds; a glance alert comes "
                f"within 3-4 s of a long glance); false alarm(s) per hour of attentive "
                f"driving: {alarms:.1f}; "
                f"{len(self.alerts)} glance alert(s)")
