"""Daemon configuration: the shipped file, overrides, and errors that name the field."""

import os
import tomllib
from pathlib import Path

import pytest

from distractd import ConfigError
from distractd.daemon import DEFAULTS, load_config, parse_override

CONFIG = Path(__file__).resolve().parents[2] / "config" / "distractd.toml"


def test_shipped_file_lists_every_option_with_its_default():
    with open(CONFIG, "rb") as file:
        assert tomllib.load(file) == DEFAULTS
    assert load_config(CONFIG) == DEFAULTS


def test_overrides_parse_toml_values_and_bare_strings():
    assert parse_override("metrics.port=9200") == ("metrics", "port", 9200)
    assert parse_override('input.bind=["tcp://127.0.0.1:7000"]') == (
        "input", "bind", ["tcp://127.0.0.1:7000"])
    assert parse_override("output.bind=tcp://127.0.0.1:7001") == (
        "output", "bind", "tcp://127.0.0.1:7001")
    config = load_config(CONFIG, ["sessions.idle_timeout_s=5", "metrics.enabled=false"])
    assert config["sessions"]["idle_timeout_s"] == 5.0
    assert isinstance(config["sessions"]["idle_timeout_s"], float)
    assert config["metrics"]["enabled"] is False


def test_file_then_overrides(tmp_path):
    path = tmp_path / "d.toml"
    path.write_text('[model]\npath = "a.npz"\n[smoothing]\nmode = "dwell"\n')
    config = load_config(path, ["model.path=b.npz"])
    assert config["model"]["path"] == "b.npz"
    assert config["smoothing"]["mode"] == "dwell"
    assert config["smoothing"]["on"] == DEFAULTS["smoothing"]["on"]


@pytest.mark.parametrize("override, message", [
    ("sessions.min_quality=2", "sessions.min_quality must be in [0, 1], got 2.0"),
    ("metrics.port=70000", "metrics.port must be an integer in [0, 65535], got 70000"),
    ("smoothing.mode=median", "smoothing.mode must be one of 'hysteresis', 'dwell', got 'median'"),
    ("service.max_batch_messages=0",
     "service.max_batch_messages must be an integer in [1, 1e+06], got 0"),
    ("input.bind=[5555]", "input.bind entries must be ZeroMQ endpoints"),
    ("sessions.idle=5", "unknown option sessions.idle"),
    ("daemon.port=5", "unknown section [daemon]"),
    ("port", "override must look like section.key=value"),
    ("security.curve=true", "security.secret_key_file must name a CURVE secret key file"),
])
def test_errors_name_the_field_and_value(override, message):
    with pytest.raises(ConfigError, match=None) as info:
        load_config(overrides=[override])
    assert message in str(info.value)


def test_no_input_at_all_is_an_error():
    with pytest.raises(ConfigError, match="input.bind, input.connect, pupil.remote and lsl.inlets "):
        load_config(overrides=["input.bind=[]"])


def test_bad_files(tmp_path):
    with pytest.raises(ConfigError, match="config file .*missing.toml"):
        load_config(tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("[input\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config(broken)


def test_relative_paths_in_the_file_are_relative_to_it(tmp_path):
    path = tmp_path / "etc" / "d.toml"
    path.parent.mkdir()
    path.write_text('[model]\npath = "models/m.npz"\n')
    assert load_config(path)["model"]["path"] == str(tmp_path / "etc" / "models" / "m.npz")
    assert load_config(path, ["model.path=x.npz"])["model"]["path"] == "x.npz"   # --set: as given


@pytest.mark.parametrize("content, message", [
    (b"[input]\n# " + b"x" * (1 << 20) + b"\n", "more than the bound of 1048576"),
    (b'[pupil]\nstream = "caf\xe9"\n', "not UTF-8 text (byte 0xe9 at offset 21)"),
    (b"x = " + b"{a=" * 3000 + b"1" + b"}" * 3000, "nested too deep"),
    (b"[output]\nsndhwm = 0\n", "output.sndhwm must be an integer in [1, 1e+07], got 0"),
    (b'[smoothing]\nmode = "hysteresis"\non = 0.1\noff = 0.3\n',
     "smoothing.off must be <= smoothing.on (0.1) in hysteresis mode, got 0.3"),
    (b"[sessions]\nidle_timeout_s = 1" + b"0" * 30 + b"\n", "must fit a 64-bit integer"),
    (b'[pupil]\nstream = "a b"\n', "pupil.stream must be a stream id"),
    (b'[input]\ntopic = "caf\xc3\xa9."\n', "input.topic must be ASCII"),
])
def test_hostile_files_are_one_clear_error(tmp_path, content, message):
    path = tmp_path / "d.toml"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert message in str(info.value)


def test_only_regular_files_are_read(tmp_path):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a FIFO"), (tmp_path, "a directory"),
                       (Path("/dev/zero"), "a character device")):
        with pytest.raises(ConfigError, match=f"is {kind}; it must be a regular file"):
            load_config(path)
