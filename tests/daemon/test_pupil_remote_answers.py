"""A hostile Pupil Remote (a real REQ/REP peer on 127.0.0.1) against the daemon as a real
subprocess (issue 37, item 1): an answer of 4,301 or more ASCII digits made ``int`` raise, which
killed the running daemon and was a traceback at start."""

import subprocess
import sys
import threading

import zmq

from distractd.simulators import free_port

_DIGITS = "7" * 5000          # past Python's 4,300-digit limit of int(str)
_PATIENCE_S = 120.0           # a hang guard, not a measured time


class _Remote:
    """A Pupil Remote that answers ``SUB_PORT`` with ``first``, then with ``then`` for ever;
    :attr:`asked` counts the questions answered."""

    def __init__(self, first, then):
        self.answers = [first, then]
        self.asked = 0
        self.asked_twice_after = threading.Event()   # ``then`` answered twice
        self.context = zmq.Context()
        self.rep = self.context.socket(zmq.REP)
        self.rep.linger = 0
        self.port = self.rep.bind_to_random_port("tcp://127.0.0.1")
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stopping.is_set():
            if not self.rep.poll(100):
                continue
            self.rep.recv()
            self.rep.send_string(self.answers[min(self.asked, 1)])
            self.asked += 1
            if self.asked >= 3:
                self.asked_twice_after.set()

    def close(self):
        self.stopping.set()
        self.thread.join(5)
        self.rep.close(linger=0)
        self.context.term()


def test_a_running_daemon_outlives_a_huge_sub_port_answer(start_daemon):
    remote = _Remote(str(free_port()), _DIGITS)
    try:
        daemon = start_daemon([f"pupil.remote=tcp://127.0.0.1:{remote.port}",
                               "pupil.silence_s=0.05", "pupil.timeout_s=5"])
        assert remote.asked_twice_after.wait(_PATIENCE_S)    # asked again after the silence
        assert daemon.process.poll() is None                 # still running, and serving
        assert daemon.metric("distractd_active_streams") == 0
        assert daemon.stop() == 0
    finally:
        remote.close()
    log = daemon.log_text
    assert "Traceback" not in log and "ValueError" not in log
    assert f"answered SUB_PORT with '{_DIGITS[:40]}'... (5000 characters), not a port" in log


def test_a_huge_sub_port_answer_at_start_is_one_line():
    remote = _Remote(_DIGITS, _DIGITS)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "distractd.cli", "run", "--set",
             f"pupil.remote=tcp://127.0.0.1:{remote.port}", "--set",
             f"metrics.port={free_port()}", "--set", f"output.bind=tcp://127.0.0.1:{free_port()}"],
            capture_output=True, text=True, timeout=_PATIENCE_S)
    finally:
        remote.close()
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "ValueError" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1, result.stderr[-2000:]
    assert errors[0].startswith("distractd run: error: pupil.remote ")
    assert errors[0].endswith(f"answered SUB_PORT with '{_DIGITS[:40]}'... (5000 characters), "
                             f"not a port in 1-65535")
