"""The review page's server as a real ``distractd review`` subprocess on 127.0.0.1, and a simulated
drive made by ``distractd simulate``."""

import json
import selectors
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

_START_TIMEOUT_S = 600.0   # a hang guard: a cold numba cache compiles the pipeline first, slowly on a busy machine


def distractd(*args):
    """Run a ``distractd`` command as a subprocess; fail with its error output."""
    result = subprocess.run([sys.executable, "-m", "distractd.cli", *map(str, args)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result


class ReviewProcess:
    """``distractd review ...`` running; :attr:`url` once it listens."""

    def __init__(self, *args):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "distractd.cli", "review", *map(str, args), "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.tab = {}
        self.url = self._address()

    def _address(self):
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if selector.select(timeout=1.0):
                line = self.process.stdout.readline()
                if " at http://" in line:
                    return line.split(" at ", 1)[1].split()[0]
                if not line:
                    break
        raise AssertionError(f"distractd review did not start: {self.stop()}")

    def get(self, path):
        """``(status, JSON body)`` of a GET."""
        return self._open(urllib.request.Request(self.url + path.lstrip("/")))

    def post(self, path, body, tab=None):
        """``(status, JSON body)`` of a POST of ``body`` (bytes, or JSON-encoded) as a tab of the
        page sends it: JSON, with the session's token read from the page and, for a dict without
        one, the ``digest`` of the labels the tab loaded or last saved. ``tab`` is a dict
        holding that digest (default: this server's one tab); the first post loads it."""
        tab = self.tab if tab is None else tab
        if isinstance(body, dict) and "digest" not in body:
            if "digest" not in tab:
                tab["digest"] = self.get("/api/drive")[1].get("digest")
            body = {**body, "digest": tab["digest"]}
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        status, answer = self._open(urllib.request.Request(
            self.url + path.lstrip("/"), data=data,
            headers={"Content-Type": "application/json", "X-Distractd-Token": self.token()}))
        if status == 200 and "digest" in answer:
            tab["digest"] = answer["digest"]
        return status, answer

    def token(self):
        """The session's token, as the page carries it (its ``distractd-token`` meta tag)."""
        with urllib.request.urlopen(self.url, timeout=60) as response:
            page = response.read().decode()
        return page.split('name="distractd-token" content="', 1)[1].split('"', 1)[0]

    @staticmethod
    def _open(request):
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def stop(self):
        """Stop the server (SIGTERM); return its standard error."""
        if self.process.stderr.closed:
            return self.stderr
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.stderr = self.process.stderr.read()
        self.process.stdout.close()
        self.process.stderr.close()
        return self.stderr


@pytest.fixture(scope="session")
def run_distractd():
    """:func:`distractd`: run a command as a subprocess."""
    return distractd


@pytest.fixture(scope="session")
def review_process():
    """:class:`ReviewProcess`, for servers that live longer than one test."""
    return ReviewProcess


@pytest.fixture(scope="session")
def review_drive(tmp_path_factory):
    """A 10-minute visual-manual drive from ``distractd simulate`` (truth labels included)."""
    path = tmp_path_factory.mktemp("review") / "drive.npz"
    distractd("simulate", "--seed", 3, "--protocol", "visual-manual", "--duration", 600,
              "--out", path)
    return path


@pytest.fixture
def review_server():
    """Start ``distractd review`` with the arguments given; every server is stopped at the end."""
    started = []

    def start(*args):
        started.append(ReviewProcess(*args))
        return started[-1]

    yield start
    for server in started:
        server.stop()
