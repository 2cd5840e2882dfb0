"""Daemon configuration: TOML file, built-in defaults, command-line overrides, validation.

A configuration is a dict of sections, each a dict of options (see ``config/distractd.toml``, which
documents every option and holds exactly the defaults below). Loading merges, in order, the
defaults, the TOML file and ``section.key=value`` overrides, then validates every option once, raising a
:class:`~distractd.ConfigError` that names ``section.key``, the rule and the value.
"""

import copy
import tomllib
from pathlib import Path

from .._errors import ConfigError
from .._validation import Interval, Options, check_params

__all__ = ["DEFAULTS", "load_config", "parse_override", "decision_options"]

DEFAULTS = {
    "input": {
        "bind": ["tcp://127.0.0.1:5555"],
        "connect": [],
        "topic": "samples.",
        "max_message_bytes": 1048576,
        "max_block_samples": 8192,
        "rcvhwm": 100000,
    },
    "pupil": {
        "remote": "",
        "stream": "pupil",
        "timeout_s": 2.0,
    },
    "output": {
        "bind": "tcp://127.0.0.1:5556",
        "republish_s": 1.0,
        "sndhwm": 100000,
    },
    "model": {
        "path": "",
    },
    "sessions": {
        "idle_timeout_s": 60.0,
        "max_streams": 10000,
        "min_quality": 0.5,
        "segmentation": True,
    },
    "smoothing": {  # the decision rule's defaults (DecisionRule), a test checks they agree
        "mode": "dwell",
        "on": 0.5,
        "off": 0.5,
        "min_dwell_s": 3.0,
    },
    "metrics": {
        "enabled": True,
        "address": "127.0.0.1",
        "port": 9105,
        "per_stream": False,
    },
    "security": {
        "curve": False,
        "secret_key_file": "",
        "authorized_keys_dir": "",
    },
    "service": {
        "poll_interval_s": 0.05,
        "status_interval_s": 5.0,
        "max_batch_messages": 1024,
        "log_level": "info",
        "rejection_log_interval_s": 10.0,
    },
}
"""Every option and its default; ``config/distractd.toml`` mirrors it."""

_POSITIVE = Interval(0, None, closed="neither")
_COUNT = Interval(1, None, integer=True)
_CONSTRAINTS = {
    "input": {"bind": list, "connect": list, "topic": str, "max_message_bytes": _COUNT,
              "max_block_samples": _COUNT, "rcvhwm": Interval(0, None, integer=True)},
    "pupil": {"remote": str, "stream": str, "timeout_s": _POSITIVE},
    "output": {"bind": str, "republish_s": _POSITIVE, "sndhwm": Interval(0, None, integer=True)},
    "model": {"path": str},
    "sessions": {"idle_timeout_s": _POSITIVE, "max_streams": _COUNT,
                 "min_quality": Interval(0, 1), "segmentation": bool},
    "smoothing": {"mode": Options(("hysteresis", "dwell")), "on": Interval(None, None),
                  "off": Interval(None, None), "min_dwell_s": Interval(0, None)},
    "metrics": {"enabled": bool, "address": str, "port": Interval(0, 65535, integer=True),
                "per_stream": bool},
    "security": {"curve": bool, "secret_key_file": str, "authorized_keys_dir": str},
    "service": {"poll_interval_s": Interval(0.001, 1), "status_interval_s": _POSITIVE,
                "max_batch_messages": _COUNT,
                "log_level": Options(("debug", "info", "warning", "error")),
                "rejection_log_interval_s": Interval(0, None)},
}


def load_config(path=None, overrides=()):
    """Return the validated configuration.

    Parameters
    ----------
    path : str or Path, optional
        A TOML file; options it leaves out keep their defaults.
    overrides : iterable of str
        ``section.key=value`` assignments applied after the file; ``value`` is a TOML value
        (``5``, ``2.5``, ``true``, ``["tcp://..."]``) or else taken as a bare string.

    Returns
    -------
    dict
        Sections to options, every option present.
    """
    config = copy.deepcopy(DEFAULTS)
    if path is not None:
        try:
            with open(path, "rb") as file:
                loaded = tomllib.load(file)
        except OSError as exc:
            raise ConfigError(f"config file {path}: {exc.strerror}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {path}: invalid TOML ({exc})") from None
        _merge(config, loaded, source=str(Path(path)))
    for text in overrides:
        section, key, value = parse_override(text)
        _merge(config, {section: {key: value}}, source="--set")
    for section, options in config.items():
        check_params(options, _CONSTRAINTS[section], owner=section)
    for section, key in (("input", "bind"), ("input", "connect")):
        for endpoint in config[section][key]:
            if not isinstance(endpoint, str) or "://" not in endpoint:
                raise ConfigError(f"{section}.{key} entries must be ZeroMQ endpoints like "
                                  f"'tcp://127.0.0.1:5555', got {endpoint!r}")
    if not config["input"]["bind"] and not config["input"]["connect"] \
            and not config["pupil"]["remote"]:
        raise ConfigError("input.bind, input.connect and pupil.remote are all empty: "
                          "the daemon would have no input")
    if config["security"]["curve"] and not config["security"]["secret_key_file"]:
        raise ConfigError("security.secret_key_file must name a CURVE secret key file when "
                          "security.curve is true, got ''")
    return config


def decision_options(config):
    """Keyword arguments of :class:`~distractd.models.detectors.DecisionRule` in ``config``:
    ``sessions.min_quality`` and the ``smoothing`` section."""
    return {"min_quality": config["sessions"]["min_quality"], **config["smoothing"]}


def parse_override(text):
    """Split ``section.key=value`` into ``(section, key, value)`` with ``value`` parsed as TOML."""
    name, sep, raw = text.partition("=")
    section, dot, key = name.strip().partition(".")
    if not sep or not dot or not section or not key:
        raise ConfigError(f"override must look like section.key=value, got {text!r}")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    return section, key, value


def _merge(config, loaded, source):
    for section, options in loaded.items():
        if section not in DEFAULTS:
            raise ConfigError(f"{source}: unknown section [{section}]; known sections are "
                              f"{', '.join(DEFAULTS)}")
        if not isinstance(options, dict):
            raise ConfigError(f"{source}: {section} must be a table, got {options!r}")
        for key, value in options.items():
            if key not in DEFAULTS[section]:
                raise ConfigError(f"{source}: unknown option {section}.{key}; options of "
                                  f"[{section}] are {', '.join(DEFAULTS[section])}")
            default = DEFAULTS[section][key]
            if isinstance(default, float) and isinstance(value, int) \
                    and not isinstance(value, bool):
                value = float(value)
            config[section][key] = value
