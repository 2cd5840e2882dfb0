"""The camera front-end's tests: its own environment, the labelled face clips and their halves.

The front-end runs from ``.venv-camera`` (``make camera-env``; its landmark library pins numpy<2),
always as a subprocess, as a user runs it. Without that environment the tests skip with the
command to make it, except under CI, which builds it (.ci/run): there they fail.

Clips with eye labels are split as the project splits drivers (sorted names, odd positions the
development half, even positions held out: benchmarks/studies/camera_blinks.py); tests use the
development half and clips without eye labels only.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

collect_ignore = ["splice_video.py"]  # run by the camera environment, not importable here

ROOT = Path(__file__).resolve().parents[2]
CAMERA_PYTHON = ROOT / ".venv-camera" / "bin" / "python"
CAMERA_PROGRAM = ROOT / ".venv-camera" / "bin" / "distractd-camera"
SPLICE = Path(__file__).with_name("splice_video.py")
BLINK_STUDY = ROOT / "benchmarks" / "studies" / "camera_blinks.py"


@pytest.fixture(scope="session")
def camera_program():
    """The ``distractd-camera`` program of ``.venv-camera``."""
    if not CAMERA_PROGRAM.exists():
        message = f"{CAMERA_PROGRAM} is absent: run `make camera-env`"
        if os.environ.get("CI"):
            pytest.fail(message + " (.ci/run builds it)")
        pytest.skip(message)
    return CAMERA_PROGRAM


def run_camera(program, *args, timeout=300):
    """Run the front-end; its JSON summaries, one per source (a failure shows its stderr)."""
    done = subprocess.run([str(program), *map(str, args), "--json"], capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def splice(source, out, order, width=None):
    """Write ``out`` (.avi) of ``source``'s frames in ``order``, scaled to ``width`` pixels wide
    if given (tests/camera/splice_video.py); its frame rate and frame count."""
    done = subprocess.run([str(CAMERA_PYTHON), str(SPLICE), str(source), str(out),
                           json.dumps([int(i) for i in order]), *([str(width)] if width else [])],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="session")
def faces(shared_data):
    return shared_data / "faces"


@pytest.fixture(scope="session")
def blink_study(faces, camera_program, tmp_path_factory):
    """``benchmarks/studies/camera_blinks.py`` on the development half: ``(records, folder)``,
    the folder holding each clip's recording ``<clip>.csv`` and raw measures."""
    out = tmp_path_factory.mktemp("camera-blinks")
    done = subprocess.run([sys.executable, str(BLINK_STUDY), "--half", "development",
                           "--faces", str(faces), "--camera", str(camera_program),
                           "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return records, out
