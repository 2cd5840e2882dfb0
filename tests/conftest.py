"""Shared fixtures: the location of ../shared/data (real recordings and golden outputs), and a
Pupil Capture emulator running in a thread.

The suite runs on one BLAS thread, in this process and every daemon or worker it starts: how a
BLAS splits a sum depends on its thread count, so results would otherwise depend on the machine.
"""

import os
import shutil
import threading
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

from distractd.simulators import PupilEmulator

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"  # for subprocesses, and for BLAS libraries not loaded yet
threadpool_limits(limits=1, user_api="blas")  # for those already loaded

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def missing_tool():
    """``missing_tool(message)``: skip the test for lack of a real tool (promtool, Chromium,
    Playwright), or, under CI (``CI`` set), fail it: ``.ci/run`` installs them all, and a skip
    there let a run pass without its real-tool tests (issue 37, item 9)."""
    def missing(message):
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI must run this test (.ci/run installs it)", pytrace=False)
        pytest.skip(message)
    return missing


@pytest.fixture(scope="session")
def promtool(missing_tool):
    """Path of ``promtool`` (``$PROMTOOL``, else on the PATH)."""
    path = os.environ.get("PROMTOOL") or shutil.which("promtool")
    if path is None:
        missing_tool("promtool is absent (.ci/run unpacks it from Debian's prometheus package)")
    return path


@pytest.fixture(scope="session")
def shared_data():
    """Path of ../shared/data; tests that need it skip only where the folder is genuinely absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent")
    return SHARED_DATA


class EmulatorThread:
    """A :class:`~distractd.simulators.PupilEmulator` serving from a thread, ready on return;
    ``stop`` (or leaving a ``with`` block, which gives the emulator) stops and joins it."""

    def __init__(self, recording, **options):
        self.emulator = PupilEmulator(recording, **{"port": 0, **options})
        self.stopped = threading.Event()
        ready = threading.Event()
        self.thread = threading.Thread(target=self.emulator.run, kwargs={
            "stop": self.stopped.is_set, "on_ready": lambda e: ready.set()}, daemon=True)
        self.thread.start()
        assert ready.wait(5)

    def stop(self):
        self.stopped.set()
        self.thread.join(5)

    def __enter__(self):
        return self.emulator

    def __exit__(self, *_):
        self.stop()


@pytest.fixture
def run_emulator():
    """Start emulators (:class:`EmulatorThread` arguments); any still running at the test's end
    is stopped."""
    started = []

    def start(recording, **options):
        started.append(EmulatorThread(recording, **options))
        return started[-1]

    yield start
    for running in started:
        running.stop()
