"""Daemon configuration: the shipped file, overrides, and errors that name the field."""

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
    with pytest.raises(ConfigError, match="input.bind, input.connect and pupil.remote are all"):
        load_config(overrides=["input.bind=[]"])


def test_bad_files(tmp_path):
    with pytest.raises(ConfigError, match="config file .*missing.toml"):
        load_config(tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("[input\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config(broken)
