"""A model file the daemon cannot use is refused in one line that names the file once, at
``run --check`` and at start (it was wrapped twice: ``model file X cannot be used: ModelError:
model file X: …``)."""

import subprocess
import sys
import zipfile

import pytest

from distractd.cli import main


@pytest.fixture
def bad_model(tmp_path):
    """A zip archive without a model header: ``load_model`` refuses it naming the file."""
    path = tmp_path / "bad.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("junk.npy", b"xx")
    return str(path)


def test_run_check_names_a_bad_model_file_once(bad_model, capsys):
    assert main(["run", "--check", "--set", f"model.path={bad_model}"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.count(bad_model) == 1, captured.err
    assert "header is missing or corrupt" in captured.err and "ModelError" not in captured.err


def test_the_daemon_refuses_a_bad_model_file_at_start_naming_it_once(bad_model):
    result = subprocess.run([sys.executable, "-m", "distractd.cli", "run", "--set",
                             f"model.path={bad_model}"], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count(bad_model) == 1 and "Traceback" not in result.stderr, \
        result.stderr
    assert "header is missing or corrupt" in result.stderr
