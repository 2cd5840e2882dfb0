"""Heavy libraries stay off the light import paths (DESIGN §1): each check runs a fresh
interpreter, since this test process has long imported everything."""

import os
import subprocess
import sys

import pytest

from distractd.cli import _COMMANDS

HEAVY = ("sklearn", "scipy", "matplotlib")


def _new_modules(code, before="import numba"):
    """The modules ``code`` imports in a fresh interpreter beyond those of ``before`` (numba
    imports the bare ``scipy`` package to check its version, whoever uses numba)."""
    script = (f"import sys\n{before}\nbase = set(sys.modules)\n{code}\n"
              "print('\\n'.join(sorted(set(sys.modules) - base)))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=300, check=True,
                            env={**os.environ, "PYTHONWARNINGS": "ignore"})
    return result.stdout.split()


def _heavy(modules):
    return [m for m in modules if m.split(".")[0] in HEAVY]


_NUMBA_RUNNING = "import numba\nnumba.njit(lambda x: x + 1)(1)"
"""What numba loads itself once it compiles or loads a kernel: scipy's BLAS/LAPACK wrappers."""


@pytest.mark.parametrize("command", list(_COMMANDS))
def test_every_help_loads_neither_scikit_learn_nor_scipy(command):
    modules = _new_modules("from distractd.cli import main\ntry:\n"
                           f"    main([{command!r}, '--help'])\nexcept SystemExit:\n    pass")
    assert "distractd.cli" in modules
    assert _heavy(modules) == []


@pytest.mark.parametrize("command", list(_COMMANDS))
def test_every_help_loads_no_numba_kernel(command):
    """``features --help`` names and counts the features from ``pipeline._feature_names``, not from
    the kernels that compute them; no ``--help`` loads numba (issue 25: 4.5 s when it did)."""
    modules = _new_modules("from distractd.cli import main\ntry:\n"
                           f"    main([{command!r}, '--help'])\nexcept SystemExit:\n    pass",
                           before="")
    assert "distractd.cli" in modules
    assert [m for m in modules if m.split(".")[0] == "numba"] == []


def test_light_commands_start_without_scikit_learn_or_more_scipy_than_numba(tmp_path):
    """simulate, info, convert, events and features run with no scikit-learn and no scipy module
    beyond those numba loads itself when it runs a kernel."""
    drive = tmp_path / "d.npz"
    runs = [["simulate", "--seed", "1", "--duration", "12", "--out", drive],
            ["info", drive], ["convert", drive, tmp_path / "d.csv"],
            ["events", drive, "--out", tmp_path / "e.csv"],
            ["features", drive, "--out", tmp_path / "f.csv"]]
    for argv in runs:
        modules = _new_modules("from distractd.cli import main\n"
                               f"assert main({[str(a) for a in argv] + ['-q']!r}) == 0",
                               before=_NUMBA_RUNNING)
        assert "distractd.cli" in modules
        assert _heavy(modules) == [], argv[0]


def test_the_simulators_import_neither_scikit_learn_nor_scipy():
    """``python -X importtime`` lists every module ``import distractd.simulators`` loads: none of
    scikit-learn, matplotlib or scipy beyond the bare package numba itself checks."""
    def imported(code):
        result = subprocess.run([sys.executable, "-X", "importtime", "-c", code],
                                capture_output=True, text=True, timeout=300, check=True)
        return {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines()
                if line.startswith("import time:") and "|" in line} - {"imported package"}

    numba_alone = imported("import numba")
    simulators = imported("import distractd.simulators")
    assert "distractd.simulators" in simulators
    assert _heavy(simulators - numba_alone) == []


def test_simulating_and_replaying_load_no_scikit_learn():
    modules = _new_modules("import distractd.simulators as s\n"
                           "s.simulate_drive(1, 12.0); s.replay; s.PupilEmulator; s.demo")
    assert "distractd.simulators._simulate" in modules
    assert [m for m in modules if m.split(".")[0] in ("sklearn", "matplotlib")] == []
    assert not any(m.startswith(("distractd.models.evaluation", "distractd.models.clustering",
                                 "distractd.daemon")) for m in modules)


def test_the_daemon_imports_no_labelling_evaluation_or_training_wing():
    modules = _new_modules("import distractd.daemon")
    assert "distractd.daemon._service" in modules
    for wing in ("distractd.models.clustering", "distractd.models.evaluation",
                 "distractd.models.detectors._cohort", "distractd.models.detectors._training",
                 "distractd.models.detectors._selection", "distractd._parallel",
                 "distractd.simulators", "matplotlib", "tqdm"):
        assert not any(m == wing or m.startswith(wing + ".") for m in modules), wing


def test_the_daemon_imports_neither_scikit_learn_nor_scipy_nor_matplotlib():
    assert _heavy(_new_modules("import distractd.daemon")) == []


def test_loading_the_model_and_scoring_a_stream_load_neither_scikit_learn_nor_scipy():
    """The daemon's work past its import: load and warm up the shipped model as the daemon does
    (``Model``: its light scorers, not the estimators), then run a simulated drive through a
    ``Session`` block by block, scoring and segmenting its windows; beyond the simulator and what
    numba loads itself when it runs a kernel, no heavy module."""
    setup = (f"{_NUMBA_RUNNING}\nfrom distractd.simulators import simulate_drive\n"
             "drive = simulate_drive(3, duration_s=90.0)")
    code = """
import numpy as np
from distractd.daemon import Model, Session, decision_options, load_config
model = Model("")
session = Session("car", model.pipeline_config,
                  decision_options(load_config(), model.detector.feature_names),
                  model.segmenter(True), 0.0)
n_scored = 0
for lo in range(0, len(drive.samples), 30):
    windows = session.process(drive.samples[lo:lo + 30])
    if len(windows):
        n_scored += int(np.isfinite(model.scores(windows.X)).sum())
        session.segmenter.update(windows.X, windows.t_end)
assert n_scored > 0 and session.segmenter.n_committed > 0
"""
    modules = _new_modules(code, before=setup)
    assert "distractd.daemon._session" in modules
    assert _heavy(modules) == []


def test_the_offline_commands_take_their_defaults_without_the_daemon(tmp_path):
    """``predict`` (like label, segment, evaluate and review) takes the decision rule's defaults
    and the shipped model's path from the detectors wing, not from the daemon."""
    recording = tmp_path / "drive.npz"
    modules = _new_modules(
        "from distractd.cli import main\n"
        "from distractd.models.detectors import DEFAULT_MODEL_PATH\n"
        f"assert main(['simulate', '--seed', '1', '--duration', '30', '--out', r'{recording}', "
        "'-q']) == 0\n"
        f"assert main(['predict', str(DEFAULT_MODEL_PATH), r'{recording}', '--out', "
        f"r'{tmp_path / 'p.csv'}', '-q']) == 0", before="")
    assert "distractd.models.detectors._prediction" in modules
    assert not any(m.startswith("distractd.daemon") for m in modules)
