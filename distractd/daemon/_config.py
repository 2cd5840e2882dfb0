"""Daemon configuration: TOML file, built-in defaults, command-line overrides, validation.

A configuration is a dict of sections, each a dict of options (see ``config/distractd.toml``, which
documents every option and holds exactly the defaults below). The decision rule's options
(``sessions.min_quality`` and ``[smoothing]``) take their defaults from their one home, the
signature of :class:`~distractd.models.detectors.DecisionRule`. Loading merges, in order, the
defaults, the TOML file and ``section.key=value`` overrides, then validates every option and the
rules between options once, raising a :class:`~distractd.ConfigError` that names ``section.key``,
the rule and the value. The file is read as a regular file of at most :data:`MAX_CONFIG_BYTES`,
must be UTF-8 and nest no deeper than the parser's recursion allows; relative paths in it are
relative to its directory.
"""

import copy
import tomllib
from pathlib import Path

from .._errors import ConfigError
from .._validation import Interval, Options, check_params
from ..models.detectors import decision_options
from ..pipeline.formats import valid_stream_id
from ._files import read_regular

__all__ = ["DEFAULTS", "MAX_CONFIG_BYTES", "load_config", "parse_override"]

MAX_CONFIG_BYTES = 1 << 20
"""Largest configuration file read, in bytes."""

PATH_OPTIONS = (("model", "path"), ("security", "secret_key_file"),
                ("security", "authorized_keys_dir"), ("profiles", "dir"))
"""Options naming files: a relative path in the configuration file is taken relative to the
file's directory (a unit's working directory is ``/``); one given with ``--set`` is relative to
the working directory, as any command-line path."""

_RULE = decision_options()
"""The decision rule's own defaults (:class:`~distractd.models.detectors.DecisionRule`)."""

DEFAULTS = {
    "input": {
        "bind": ["tcp://127.0.0.1:5555"],
        "connect": [],
        "topic": "samples.",
        "max_message_bytes": 1048576,
        "max_block_samples": 8192,
        "rcvhwm": 100000,
        "max_connections": 4096,
    },
    "vehicle": {
        "topic": "vehicle.",
        "max_age_s": 0.25,
        "buffer_samples": 1024,
        "alone_after_s": 2.0,
    },
    "pupil": {
        "remote": "",
        "stream": "pupil",
        "timeout_s": 2.0,
        "silence_s": 2.0,
        "reorder_s": 0.25,
    },
    "lsl": {
        "inlets": [],
        "outlets": False,
        "timeout_s": 2.0,
        "correction_interval_s": 5.0,
    },
    "output": {
        "bind": "tcp://127.0.0.1:5556",
        "republish_s": 1.0,
        "sndhwm": 100000,
    },
    "model": {
        "path": "",
        "max_bytes": 268435456,
    },
    "sessions": {
        "idle_timeout_s": 60.0,
        "max_streams": 10000,
        "min_quality": _RULE["min_quality"],
        "engagement_s": _RULE["engagement_s"],
        "segmentation": True,
    },
    "smoothing": {key: _RULE[key] for key in ("mode", "on", "off", "min_dwell_s")},
    "adaptation": {
        "enabled": False,
        "after_s": 300.0,
        "every_s": 300.0,
        "stride_s": 2.0,
        "min_windows": 60,
        "max_windows": 600,
        "queue_size": 32,
    },
    "profiles": {
        "enabled": False,
        "dir": "",
        "max_age_days": 90.0,
        "max_bytes": 4194304,
    },
    "metrics": {
        "enabled": True,
        "address": "127.0.0.1",
        "port": 9105,
        "per_stream": False,
        "cache_s": 1.0,
    },
    "security": {
        "curve": False,
        "secret_key_file": "",
        "authorized_keys_dir": "",
    },
    "service": {
        "poll_interval_s": 0.05,
        "coalesce_s": 0.002,
        "status_interval_s": 5.0,
        "max_batch_messages": 1024,
        "log_level": "info",
        "rejection_log_interval_s": 10.0,
        "drain_timeout_s": 5.0,
    },
}
"""Every option and its default; ``config/distractd.toml`` and the table of docs/daemon.md
say the same (tests check them against it)."""

_POSITIVE = Interval(0, None, closed="neither")
_QUEUE = Interval(1, 10_000_000, integer=True)  # messages; ZeroMQ's 0 (no bound) is refused
_CONSTRAINTS = {
    "input": {"bind": list, "connect": list, "topic": str,
              "max_message_bytes": Interval(64, 1 << 30, integer=True),
              "max_block_samples": Interval(1, 1_000_000, integer=True), "rcvhwm": _QUEUE,
              "max_connections": Interval(1, 1_000_000, integer=True)},
    "vehicle": {"topic": str, "max_age_s": _POSITIVE,
                "buffer_samples": Interval(1, 1_000_000, integer=True),
                "alone_after_s": _POSITIVE},
    "pupil": {"remote": str, "stream": str, "timeout_s": _POSITIVE, "silence_s": _POSITIVE,
              "reorder_s": Interval(0, 10)},
    "lsl": {"inlets": list, "outlets": bool, "timeout_s": _POSITIVE,
            "correction_interval_s": _POSITIVE},
    "output": {"bind": str, "republish_s": _POSITIVE, "sndhwm": _QUEUE},
    "model": {"path": str, "max_bytes": Interval(1024, 1 << 34, integer=True)},
    "sessions": {"idle_timeout_s": _POSITIVE, "max_streams": Interval(1, 1_000_000, integer=True),
                 "min_quality": Interval(0, 1), "engagement_s": Interval(0, 60),
                 "segmentation": bool},
    "smoothing": {"mode": Options(("hysteresis", "dwell")), "on": Interval(None, None),
                  "off": Interval(None, None), "min_dwell_s": Interval(0, None)},
    "adaptation": {"enabled": bool, "after_s": _POSITIVE, "every_s": Interval(0, None),
                   "stride_s": Interval(0, 3600),
                   "min_windows": Interval(10, 100_000, integer=True),
                   "max_windows": Interval(10, 100_000, integer=True),
                   "queue_size": Interval(1, 100_000, integer=True)},
    "profiles": {"enabled": bool, "dir": str, "max_age_days": _POSITIVE,
                 "max_bytes": Interval(1024, 1 << 30, integer=True)},
    "metrics": {"enabled": bool, "address": str, "port": Interval(0, 65535, integer=True),
                "per_stream": bool, "cache_s": Interval(0, 60)},
    "security": {"curve": bool, "secret_key_file": str, "authorized_keys_dir": str},
    "service": {"poll_interval_s": Interval(0.001, 1), "coalesce_s": Interval(0, 0.1),
                "status_interval_s": _POSITIVE,
                "max_batch_messages": Interval(1, 1_000_000, integer=True),
                "log_level": Options(("debug", "info", "warning", "error")),
                "rejection_log_interval_s": Interval(0, None),
                "drain_timeout_s": Interval(0, 600)},
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
        loaded = _read_toml(path)
        _merge(config, loaded, source=str(Path(path)))
        for section, key in PATH_OPTIONS:
            value = loaded.get(section, {}).get(key)
            if value and isinstance(value, str):
                config[section][key] = str(Path(path).resolve().parent / value)
    for text in overrides:
        section, key, value = parse_override(text)
        _merge(config, {section: {key: value}}, source="--set")
    for section, options in config.items():
        check_params(options, _CONSTRAINTS[section], owner=section)
    _check_rules(config)
    return config


def _read_toml(path):
    """The tables of the TOML file ``path``, read within :data:`MAX_CONFIG_BYTES`."""
    data = read_regular(path, MAX_CONFIG_BYTES, "config file", ConfigError)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {path}: not UTF-8 text (byte 0x{data[exc.start]:02x} "
                          f"at offset {exc.start})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path}: invalid TOML ({exc})") from None
    except RecursionError:
        raise ConfigError(f"config file {path}: invalid TOML (arrays or tables nested too "
                          f"deep)") from None


def _check_rules(config):
    """The rules between options and on the content of strings and lists."""
    for section, key in (("input", "bind"), ("input", "connect")):
        for endpoint in config[section][key]:
            if not isinstance(endpoint, str) or "://" not in endpoint:
                raise ConfigError(f"{section}.{key} entries must be ZeroMQ endpoints like "
                                  f"'tcp://127.0.0.1:5555', got {endpoint!r}")
    if not config["input"]["bind"] and not config["input"]["connect"] \
            and not config["pupil"]["remote"] and not config["lsl"]["inlets"]:
        raise ConfigError("input.bind, input.connect, pupil.remote and lsl.inlets are all "
                          "empty: the daemon would have no input")
    for predicate in config["lsl"]["inlets"]:
        if not isinstance(predicate, str) or not predicate.strip():
            raise ConfigError(f"lsl.inlets entries must be LSL predicates like \"type='Gaze'\", "
                              f"got {predicate!r}")
    if config["security"]["curve"] and not config["security"]["secret_key_file"]:
        raise ConfigError("security.secret_key_file must name a CURVE secret key file when "
                          "security.curve is true, got ''")
    if "://" not in config["output"]["bind"]:
        raise ConfigError(f"output.bind must be a ZeroMQ endpoint like 'tcp://127.0.0.1:5556', "
                          f"got {config['output']['bind']!r}")
    for section in ("input", "vehicle"):
        if not config[section]["topic"].isascii():
            raise ConfigError(f"{section}.topic must be ASCII (topics are bytes on the wire), "
                              f"got {config[section]['topic']!r}")
    if not valid_stream_id(config["pupil"]["stream"]):
        raise ConfigError(f"pupil.stream must be a stream id of 1-128 [A-Za-z0-9_.:-], got "
                          f"{config['pupil']['stream']!r}")
    adaptation = config["adaptation"]
    if adaptation["min_windows"] > adaptation["max_windows"]:
        raise ConfigError(f"adaptation.min_windows must be <= adaptation.max_windows "
                          f"({adaptation['max_windows']}), got {adaptation['min_windows']}")
    smoothing = config["smoothing"]
    if smoothing["mode"] == "hysteresis" and smoothing["off"] > smoothing["on"]:
        raise ConfigError(f"smoothing.off must be <= smoothing.on ({smoothing['on']}) in "
                          f"hysteresis mode, got {smoothing['off']}")


def parse_override(text):
    """Split ``section.key=value`` into ``(section, key, value)`` with ``value`` parsed as TOML."""
    name, sep, raw = text.partition("=")
    section, dot, key = name.strip().partition(".")
    if not sep or not dot or not section or not key:
        raise ConfigError(f"override must look like section.key=value, got {text!r}")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError):
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
            if isinstance(value, int) and not -2**63 <= value < 2**63:
                raise ConfigError(f"{source}: {section}.{key} must fit a 64-bit integer (TOML), "
                                  f"got one of {len(str(value))} digits")
            default = DEFAULTS[section][key]
            if isinstance(default, float) and isinstance(value, int) \
                    and not isinstance(value, bool):
                value = float(value)
            config[section][key] = value
