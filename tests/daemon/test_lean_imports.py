"""A deployed daemon pays for no scikit-learn, scipy or matplotlib (DESIGN §1): a real ``distractd
run`` subprocess, with Python's import log on (``PYTHONPROFILEIMPORTTIME``), starts, loads and
warms up the shipped model, serves a replayed drive (segmenting it: on by default) and stops; its
log then lists every module it imported, none of them heavy beyond what numba loads itself."""

import os
import subprocess
import sys
from pathlib import Path

from distractd.simulators import replay, simulate_drive

from ._published import states_of

HEAVY = ("sklearn", "scipy", "matplotlib")


def _imported(log):
    """The modules a ``python -X importtime`` log lists."""
    return {line.rsplit("|", 1)[1].strip() for line in log.splitlines()
            if line.startswith("import time:") and "|" in line} - {"imported package"}


def test_a_daemon_serving_a_stream_imports_neither_scikit_learn_nor_scipy(start_daemon):
    numba_running = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import numba\nnumba.njit(lambda x: x + 1)(1)"],
        capture_output=True, text=True, timeout=300, check=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPROFILEIMPORTTIME"}).stderr
    daemon = start_daemon(env={"PYTHONPROFILEIMPORTTIME": "1"})
    replay([simulate_drive(4, duration_s=60.0)], daemon.input, speed=20, prefix="car")
    published = states_of(daemon.collect(lambda m: len(states_of(m, "car")) >= 20, 60), "car")
    assert len(published) >= 20
    assert daemon.stop() == 0
    modules = _imported(daemon.log_text)
    # (a module a lazy re-export loads, like _online_segmenter, is not in the log: importlib's
    # import_module bypasses the log; what it imports in turn is)
    assert {"distractd.daemon._session", "distractd.models.segmentation._segment_chain",
            "distractd.models.detectors._scorers"} <= modules
    beyond_numba = modules - _imported(numba_running)
    assert [m for m in sorted(beyond_numba) if m.split(".")[0] in HEAVY] == []


def _mapped_heavy_modules(maps):
    """The compiled modules of the heavy packages a ``/proc/<pid>/maps`` text shows mapped."""
    return {line.split()[-1] for line in maps.splitlines()
            if any(f"/site-packages/{package}/" in line for package in HEAVY)}


def test_an_adapting_daemon_leaves_scikit_learn_and_scipy_to_its_fit_worker(start_daemon):
    """With adaptation on, the fits (scikit-learn, scipy) run in the fit worker: the daemon's own
    process, warmed up and serving a stream, has mapped no compiled module of those packages
    beyond what numba maps itself (its import log would mix in the worker's, which shares its
    standard error)."""
    numba_maps = subprocess.run(
        [sys.executable, "-c", "import numba\nnumba.njit(lambda x: x + 1)(1)\n"
         "print(open('/proc/self/maps').read())"],
        capture_output=True, text=True, timeout=300, check=True).stdout
    daemon = start_daemon(["adaptation.enabled=true"])
    replay([simulate_drive(4, duration_s=60.0)], daemon.input, speed=20, prefix="car")
    published = states_of(daemon.collect(lambda m: len(states_of(m, "car")) >= 20, 60), "car")
    assert len(published) >= 20
    maps = Path(f"/proc/{daemon.process.pid}/maps").read_text()
    assert "/site-packages/numba/" in maps                     # how a mapped module shows
    assert _mapped_heavy_modules(maps) - _mapped_heavy_modules(numba_maps) == set()
    assert daemon.stop() == 0
