"""The command line on bad files, paths and arguments: one clear line each, never a traceback;
``--json`` and ``--quiet`` on every command with a summary."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from distractd._errors import ConfigError
from distractd.cli import _COMMANDS, main
from distractd.daemon import default_model_path
from distractd.models.detectors import train_detector
from distractd.pipeline import FEATURE_NAMES, extract_features, read_recording, write_recording
from distractd.pipeline.formats import RECORDING_SUFFIXES, valid_stream_id
from distractd.simulators import simulate_drive, stream_ids

pytestmark = pytest.mark.filterwarnings("error::ResourceWarning")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Good and bad inputs, side by side."""
    root = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(0)
    noise = rng.bytes(4096)
    paths = {
        "missing": root / "missing.csv",
        "folder": root / "folder.csv",
        "non-utf8": root / "latin1.csv",
        "random-csv": root / "random.csv",
        "random-bin": root / "random.bin",
        "random-npz": root / "random.npz",
        "random-parquet": root / "random.parquet",
    }
    paths["folder"].mkdir()
    paths["non-utf8"].write_bytes("t,gaze_r_yaw\n0.0,0.1\n1.0,caf\xe9\n".encode("latin-1"))
    for name in ("random-csv", "random-bin", "random-npz", "random-parquet"):
        paths[name].write_bytes(noise)
    good = root / "drive.npz"
    assert main(["simulate", "--seed", "5", "--duration", "60", "--protocol", "visual-manual",
                 "--out", str(good), "-q"]) == 0
    short = root / "short.csv"  # shorter than a window: the library writes it, simulate refuses
    write_recording(simulate_drive(5, 5.0), short)
    return root, paths, good, short


def _one_line_error(capsys, command, *named):
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"distractd {command}: error: "), err
    for text in ("Traceback", "allow_pickle", "pickle", "Errno"):
        assert text not in err
    for name in named:
        assert str(name) in lines[0]
    return lines[0]


def _commands_reading(model, recording, out_dir):
    """Every command that reads a recording, with ``recording`` in its place."""
    out = out_dir / "out.csv"
    scenarios = out_dir / "scenarios.csv"
    scenarios.write_text("name,family,start_s,end_s,expected,limit_s\n"
                         "calm,negative,20.0,30.0,none,\n")
    return {
        "info": ["info", recording],
        "convert": ["convert", recording, out_dir / "copy.npz"],
        "replay": ["replay", recording, "--endpoint", "tcp://127.0.0.1:1", "--wait", "0.1"],
        "pupil-emulator": ["pupil-emulator", recording, "--port", "0"],
        "events": ["events", recording, "--out", out],
        "features": ["features", recording, "--out", out],
        "label": ["label", recording, "--method", "kmeans", "--out", out],
        "segment": ["segment", recording, "--out", out],
        "train": ["train", recording, "--model", "elm", "--out", out_dir / "m.npz"],
        "adapt": ["adapt", model, recording, "--out", out_dir / "m.npz"],
        "predict": ["predict", model, recording, "--out", out],
        "evaluate": ["evaluate", recording, "--models", "elm", "--out", out_dir / "eval"],
        "conformance": ["conformance", "--recording", recording, "--annotations", scenarios,
                        "--out", out_dir / "scorecard"],
    }


BAD_FILES = ["missing", "folder", "non-utf8", "random-csv", "random-bin", "random-npz",
             "random-parquet"]


@pytest.mark.parametrize("bad", BAD_FILES)
def test_every_command_names_a_bad_recording_in_one_line(files, bad, tmp_path, capsys):
    _, paths, _, _ = files
    commands = _commands_reading(default_model_path(), paths[bad], tmp_path)
    # every command reading a recording is here; review shows bad input on its page (its tests)
    assert set(_COMMANDS) - set(commands) == {"run", "demo", "simulate", "review", "profiles"}
    for command, argv in commands.items():
        assert main(argv) == 1, command
        _one_line_error(capsys, command, paths[bad])


@pytest.mark.parametrize("bad", ["missing", "folder", "random-npz", "random-bin", "non-utf8"])
def test_every_command_names_a_bad_model_in_one_line(files, bad, tmp_path, capsys):
    _, paths, good, _ = files
    out = tmp_path / "out.csv"
    for argv in (["predict", paths[bad], good, "--out", out],
                 ["adapt", paths[bad], good, "--out", tmp_path / "m.npz"],
                 ["segment", good, "--model", paths[bad], "--out", out]):
        assert main(argv) == 1, argv
        _one_line_error(capsys, argv[0], paths[bad], "model file")


def test_output_paths_are_checked_before_any_work(files, tmp_path, capsys):
    root, paths, good, _ = files
    nowhere = tmp_path / "no" / "such" / "folder"
    model = default_model_path()
    # the inputs are missing too: the output is refused first, while parsing
    for argv in (["convert", paths["missing"], nowhere / "x.npz"],
                 ["events", paths["missing"], "--out", nowhere / "e.csv"],
                 ["features", paths["missing"], "--out", nowhere / "f.csv"],
                 ["label", paths["missing"], "--out", nowhere / "l.csv"],
                 ["label", paths["missing"], "--out", tmp_path / "l.csv",
                  "--intervals", nowhere / "i.csv"],
                 ["segment", paths["missing"], "--out", nowhere / "s.csv"],
                 ["train", paths["missing"], "--out", nowhere / "m.npz"],
                 ["adapt", model, paths["missing"], "--out", nowhere / "m.npz"],
                 ["predict", model, paths["missing"], "--out", nowhere / "p.csv"],
                 ["predict", model, paths["missing"], "--out", tmp_path / "p.csv",
                  "--plot", nowhere / "p.png"],
                 ["train", paths["missing"], "--out", paths["folder"]],
                 ["evaluate", paths["missing"], "--out", good / "eval"],
                 ["simulate", "--seed", "1", "--out", good / "x.npz"]):
        with pytest.raises(SystemExit) as exit:
            main(argv)
        assert exit.value.code == 2, argv
        line = _one_line_error(capsys, argv[0])
        assert "argument --out" in line or "argument --plot" in line or \
            "argument --intervals" in line or "argument output" in line, line
    assert not nowhere.parent.exists()


def test_the_output_suffix_picks_the_form_and_an_unknown_one_is_refused(files, tmp_path,
                                                                         capsys):
    _, _, good, _ = files
    for argv, known in ((["convert", good, tmp_path / "o.cvs"], ".npz, .bin, .rec, .csv, .parquet"),
                        (["convert", good, tmp_path / "out.json"], ".npz, .bin, .rec, .csv, .parquet"),
                        (["features", good, "--out", tmp_path / "f.txt"], ".csv, .parquet")):
        with pytest.raises(SystemExit) as exit:
            main(argv)
        assert exit.value.code == 2, argv
        line = _one_line_error(capsys, argv[0], argv[-1])
        assert f"unknown suffix '{Path(argv[-1]).suffix}'; known: {known}" in line, line
    assert not any(tmp_path.iterdir())
    # features: Parquet for .parquet, CSV for .csv, the same windows
    import pyarrow.parquet as pq

    assert main(["features", good, "--out", tmp_path / "f.parquet", "-q"]) == 0
    assert main(["features", good, "--out", tmp_path / "f.csv", "-q"]) == 0
    assert (tmp_path / "f.parquet").read_bytes()[:4] == b"PAR1"
    table = pq.read_table(tmp_path / "f.parquet")
    rows = np.genfromtxt(tmp_path / "f.csv", delimiter=",", names=True)
    assert table.column_names == list(rows.dtype.names)
    for name in ("t_end", "quality", "label", "sd_gaze_r_yaw"):
        np.testing.assert_array_equal(table.column(name).to_numpy(), rows[name])
    # convert: each known suffix its form, read back to the same samples
    recording = read_recording(good)
    for suffix, magic in ((".parquet", b"PAR1"), (".csv", b"t,"), (".rec", b"PK"), (".bin", b"PK")):
        assert main(["convert", good, tmp_path / f"c{suffix}", "-q"]) == 0
        assert (tmp_path / f"c{suffix}").read_bytes()[:len(magic)] == magic
        np.testing.assert_array_equal(read_recording(tmp_path / f"c{suffix}").t, recording.t)


def test_bad_arguments_are_one_line(capsys):
    for argv, command in ((["train", "x.npz", "--seed", "one", "--out", "m.npz"], "train"),
                          (["predict", "--no-such-option"], "predict"),
                          (["simulate", "--seed", "1", "--protocol", "yoga", "--out", "x.npz"],
                           "simulate")):
        with pytest.raises(SystemExit) as exit:
            main(argv)
        assert exit.value.code == 2
        _one_line_error(capsys, command)
    with pytest.raises(SystemExit):
        main(["no-such-command"])
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["label", "x.npz", "--out", "l.csv", "--param", "lam=[oops"]) == 1
    assert "--param must be NAME=VALUE with a JSON value" in _one_line_error(capsys, "label")


@pytest.mark.parametrize("argv, option, rule", [
    (["simulate", "--seed", "-1"], "--seed", "an integer in [0, inf)"),
    (["simulate", "--seed", "one"], "--seed", "an integer in [0, inf)"),
    (["simulate", "--seed", "1", "--duration", "0"], "--duration", "in [10, inf)"),
    (["simulate", "--seed", "1", "--duration", "5"], "--duration", "in [10, inf)"),
    (["simulate", "--seed", "1", "--duration", "nan"], "--duration", "in [10, inf)"),
    (["simulate", "--seed", "1", "--rate", "0"], "--rate", "in [1, 2000]"),
    (["simulate", "--seed", "1", "--cohort", "0"], "--cohort", "an integer in [1, inf)"),
    (["simulate", "--seed", "1", "--cohort", "2", "--drives", "0"], "--drives",
     "an integer in [1, inf)"),
    (["evaluate", "--cohort", "0"], "--cohort", "an integer in [1, inf)"),
    (["replay", "x.npz", "--speed", "0"], "--speed", "in (0, inf)"),
    (["replay", "x.npz", "--streams", "0"], "--streams", "an integer in [1, inf)"),
    (["replay", "x.npz", "--stream-id", "fahrer-ü"], "--stream-id",
     "a stream id of 1-128 characters of [A-Za-z0-9_.:-]"),
    (["review", "x.npz", "--port", "70000"], "--port", "an integer in [0, 65535]"),
    (["predict", "m.npz", "x.npz", "--min-quality", "1.5"], "--min-quality", "in [0, 1]"),
    (["train", "x.npz", "--labelled", "3"], "--labelled", "an integer in [8, inf)"),
    (["features", "x.npz", "--jobs", "0"], "--jobs", "an integer in [1, inf)"),
])
def test_a_bad_argument_value_exits_2_naming_the_option_and_the_rule(argv, option, rule,
                                                                       tmp_path, capsys):
    with pytest.raises(SystemExit) as exit:
        main(argv + ["--out", str(tmp_path / "out.npz")])
    assert exit.value.code == 2
    line = _one_line_error(capsys, argv[0], f"argument {option}: must be {rule}, got")
    assert line.split(", got ")[-1].strip("'").startswith(argv[-1])
    assert not re.search(r"\w\.\w+ must be", line)  # not the library's owner.parameter
    assert not any(tmp_path.iterdir())


def test_info_counts_backwards_timestamps_that_the_other_commands_refuse(files, tmp_path,
                                                                         capsys):
    _, _, good, _ = files
    recording = read_recording(good)
    recording.samples[100, 0] = recording.samples[99, 0] - 0.05  # one step back in time
    path = tmp_path / "backwards.csv"
    write_recording(recording, path)
    assert main(["info", path, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["imperfections"]["backwards"] == 1 and summary["samples"] == len(recording.t)
    assert main(["features", path, "--out", tmp_path / "f.csv"]) == 1
    assert "t must not decrease" in _one_line_error(capsys, "features", f"{path}:102")


def test_replay_stream_ids_of_a_non_ascii_driver_are_wire_stream_ids():
    recording = simulate_drive(1, 12.0)
    recording.meta["driver_id"] = "fahrer-ü"
    assert stream_ids([recording]) == [["fahrer-_"]]
    assert valid_stream_id("fahrer-_")


def test_recordings_simulate_writes_are_read_by_the_folder_commands(tmp_path, capsys):
    """Every suffix simulate accepts is one the folder commands read (RECORDING_SUFFIXES)."""
    for seed, suffix in enumerate(RECORDING_SUFFIXES):  # one driver each: one recording id each
        assert main(["simulate", "--seed", str(seed), "--duration", "12", "--out",
                     tmp_path / "drives" / f"d{suffix}", "-q"]) == 0
    assert main(["features", tmp_path / "drives", "--out", tmp_path / "f", "--json"]) == 0
    outputs = json.loads(capsys.readouterr().out)["outputs"]
    assert len(outputs) == len(RECORDING_SUFFIXES)
    assert all(output["windows"] > 0 for output in outputs)


def test_help_names_the_number_of_window_features(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["features", "--help"])
    assert exit.value.code == 0
    assert f"Compute the {len(FEATURE_NAMES)} window features" in capsys.readouterr().out


def test_zero_windows_is_an_error_naming_the_recording(files, tmp_path, capsys):
    _, _, _, short = files
    for argv in (["features", short, "--out", tmp_path / "f.csv"],
                 ["predict", default_model_path(), short, "--out", tmp_path / "p.csv"],
                 ["label", short, "--out", tmp_path / "l.csv"],
                 ["segment", short, "--out", tmp_path / "s.csv"]):
        assert main(argv) == 1
        line = _one_line_error(capsys, argv[0], short)
        assert "no complete window" in line and "spans 5.0 s, a window 10 s" in line
    assert not any(tmp_path.iterdir())  # no header-only file left behind


def test_train_names_missing_labels_and_suggests_labels(files, tmp_path, capsys):
    _, _, good, _ = files
    unlabelled = tmp_path / "unlabelled.npz"
    recording = read_recording(good)
    recording.labels[:] = -1
    write_recording(recording, unlabelled)
    assert main(["train", unlabelled, "--model", "elm", "--out", tmp_path / "m.npz"]) == 1
    line = _one_line_error(capsys, "train")
    assert "label 0 distracted and 0 attentive windows" in line and "--labels" in line


def test_train_names_the_features_missing_where_the_labels_are(files):
    _, _, good, _ = files
    windows = extract_features(read_recording(good))
    windows.label[:] = np.arange(len(windows)) % 2  # every other window distracted
    column = FEATURE_NAMES.index("mean_head_yaw")
    windows.X[windows.label == 1, column] = np.nan  # the tracker lost the head when distracted
    with pytest.raises(ConfigError, match=r"got 0 distracted .* lack features: mean_head_yaw "
                                          r"\(50 %\)"):
        train_detector(windows, "elm", n_labelled=10, grid="small", segment_frames=0)


def test_json_and_quiet_on_every_command_with_a_summary(files, tmp_path, capsys):
    _, _, good, _ = files
    model = default_model_path()
    runs = {
        "info": ["info", good],
        "convert": ["convert", good, tmp_path / "copy.csv"],
        "events": ["events", good, "--out", tmp_path / "e.csv"],
        "features": ["features", good, "--out", tmp_path / "f.csv"],
        "label": ["label", good, "--method", "kmeans", "--out", tmp_path / "l.csv"],
        "segment": ["segment", good, "--out", tmp_path / "s.csv"],
        "simulate": ["simulate", "--seed", "9", "--duration", "20", "--out", tmp_path / "s.npz"],
        "predict": ["predict", model, good, "--out", tmp_path / "p.csv"],
    }
    for command, argv in runs.items():
        assert main(argv + ["--json"]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert isinstance(summary, dict) and summary, command
        assert main(argv + ["--quiet"]) == 0
        out, err = capsys.readouterr()
        # --quiet keeps warnings: label warns when its labels look no better than chance
        assert out == "" and (err == "" or command == "label" and
                              err.startswith("warning: ") and err.count("\n") == 1), command
        assert main(argv) == 0
        assert capsys.readouterr().out.strip(), command
    assert json.loads(_run_json(runs["features"], capsys))["windows"] == len(
        extract_features(read_recording(good)))


def _run_json(argv, capsys):
    assert main(argv + ["--json"]) == 0
    return capsys.readouterr().out


def test_the_console_script_starts_without_importing_a_wing():
    """``--help`` and ``--version`` import no wing, so they answer at once; what a command needs
    is imported when it runs."""
    code = ("import sys; from distractd.cli import main\n"
            "for argv in (['--version'], ['--help']):\n"
            "    try: main(argv)\n"
            "    except SystemExit: pass\n"
            "heavy = [m for m in ('numpy', 'numba', 'scipy', 'sklearn', 'zmq', 'matplotlib', "
            "'distractd.pipeline', 'distractd.models', 'distractd.daemon', "
            "'distractd.simulators') if m in sys.modules]\n"
            "print(heavy, file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert result.stderr.strip() == "[]"
    assert "info" in result.stdout and "distractd 0.1.0" in result.stdout


def test_a_bad_file_through_the_installed_command_is_one_line(files):
    _, paths, _, _ = files
    script = Path(sys.executable).with_name("distractd")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "distractd.cli"]
    result = subprocess.run(command + ["info", str(paths["random-npz"])], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (f"distractd info: error: {paths['random-npz']}: not a distractd "
                             f"recording (the binary form is an .npz archive)\n")


@pytest.mark.parametrize("bad", BAD_FILES)
def test_run_check_names_a_bad_configuration_or_model_in_one_line(files, bad, capsys):
    _, paths, _, _ = files
    assert main(["run", "--check", "--config", paths[bad]]) == 1
    _one_line_error(capsys, "run", paths[bad], "config file")
    assert main(["run", "--check", "--set", f"model.path={paths[bad]}"]) == 1
    _one_line_error(capsys, "run", paths[bad], "model file")


def test_run_check_loads_the_model_and_exits(capsys):
    from distractd.models import load_model

    assert main(["run", "--check", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["model_id"] == load_model(default_model_path()).model_id
    assert main(["run", "--check", "--set", "sessions.min_quality=2.0"]) == 1
    assert "sessions.min_quality" in _one_line_error(capsys, "run")
