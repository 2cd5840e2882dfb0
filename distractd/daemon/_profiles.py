"""Driver profiles (``[profiles]``): what a stream learned of its driver, kept across drives.

A stream names its driver with the ``driver`` key of its messages (docs/daemon.md, "Driver
profiles"). When the stream ends, what its session learned of the driver is written to one file
per driver, ``<dir>/<driver>.npz`` (numpy's npz, read back with ``allow_pickle=False``; a JSON
header and plain arrays, written atomically); the driver's next stream starts from it:

- ``baseline``: the running baseline's ring of past windows' features (the baseline is ready at
  the first window: no warm-up);
- ``road``: the glance channel's road-centre histogram and centre (ready at once);
- ``rows``: the stream's kept windows for adaptation (``[adaptation]``), so its refits go on
  with the driver's earlier windows;
- ``adapted``: the stream's adapted model, if a fit was swapped in — the arrays of the refit that
  differ from the loaded model's (an SS-ELM's output weights) and its operating point (the score
  offset and scale that put the decision threshold where the refit placed it) — used with
  ``[adaptation]`` on, for the model it was fitted from.

Every file that cannot be used is refused with a counted reason
(``distractd_profiles_rejected_total{reason}``) and one log line naming the file and the field;
the stream then starts cold. Profiles unused for ``max_age_days`` are deleted (at start and at
most hourly at a save); ``distractd profiles list`` and ``distractd profiles erase`` manage the
store.
"""

import hashlib
import io
import json
import logging
import math
import os
import time
from pathlib import Path

import numpy as np

from .._atomic import atomic_write
from .._errors import ConfigError
from ..pipeline.formats import valid_stream_id
from ._files import read_regular

__all__ = ["ProfileStore", "Profiles", "PROFILE_OUTCOMES", "PROFILE_REJECT_REASONS",
           "profile_dir"]

log = logging.getLogger("distractd.daemon")

FORMAT = "distractd-profile"
VERSION = 1

PROFILE_REJECT_REASONS = ("unreadable", "bad_header", "bad_field", "other_pipeline",
                          "other_model")
"""Why a profile file (or its adapted model) is not used: not a readable npz of at most
``profiles.max_bytes``; a header that is not the format's JSON; a field of the wrong type, shape
or value; a profile saved under other pipeline settings (the baseline and road centre mean
something else); an adapted model of another model (only that part is dropped)."""

PROFILE_OUTCOMES = ("loaded", "new", "saved", "unwritable", "expired")
"""What became of a named stream's profile (``distractd_profiles_total{outcome}``)."""

ROAD_FIELDS = ("mode", "yaw", "pitch", "cos", "seen_s", "road2", "yaw2", "pitch2")
"""The glance channel's road-centre state a profile keeps (with its histogram)."""

_EXPIRE_EVERY_S = 3600.0

_MAX_VALUE = 1e9


class _Bad(Exception):
    """A profile file refused: ``reason`` of :data:`PROFILE_REJECT_REASONS`, ``field``, why."""

    def __init__(self, reason, field, why):
        super().__init__(f"{field}: {why}")
        self.reason = reason


def profile_dir(config):
    """The profiles' directory: ``profiles.dir``, else ``$STATE_DIRECTORY/profiles`` (systemd's
    ``StateDirectory=``), else ``$XDG_STATE_HOME/distractd/profiles`` (``~/.local/state``)."""
    if config["profiles"]["dir"]:
        return Path(config["profiles"]["dir"])
    state = os.environ.get("STATE_DIRECTORY", "").split(":")[0]
    if state:
        return Path(state) / "profiles"
    home = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(home) / "distractd" / "profiles"


def pipeline_key(pipeline_config):
    """A short hash of a model's pipeline settings: profiles are kept per settings."""
    text = json.dumps(pipeline_config, sort_keys=True).encode()
    return hashlib.sha256(text).hexdigest()[:16]


class ProfileStore:
    """The profile files of one directory: read, written, listed, erased, expired.

    Parameters
    ----------
    directory : Path
    max_bytes : int
        Largest profile file read.
    max_age_days : float
        Profiles unused (not written) for longer are deleted by :meth:`expire`.
    """

    def __init__(self, directory, max_bytes, max_age_days):
        self.directory = Path(directory)
        self.max_bytes = max_bytes
        self.max_age_s = max_age_days * 86400.0

    def path(self, driver):
        return self.directory / f"{driver}.npz"

    def drivers(self):
        """``(driver, path, age_s, bytes)`` of every profile, by driver."""
        now = time.time()
        found = []
        if not self.directory.is_dir():
            return found
        for path in sorted(self.directory.glob("*.npz")):
            driver = path.name[:-len(".npz")]
            if valid_stream_id(driver) and path.is_file():
                stat = path.stat()
                found.append((driver, path, now - stat.st_mtime, stat.st_size))
        return found

    def read(self, driver):
        """The header and arrays of a driver's profile; None when there is none; raise
        :class:`_Bad` for a file that cannot be used."""
        path = self.path(driver)
        if not path.exists():
            return None
        try:
            data = read_regular(path, self.max_bytes, "profile", ConfigError)
            with np.load(io.BytesIO(data), allow_pickle=False) as archive:
                arrays = {name: archive[name] for name in archive.files}
        except Exception as exc:  # a refused file, a bad zip, a pickled array: all unreadable
            raise _Bad("unreadable", "file", f"{type(exc).__name__}: {exc}") from None
        raw = arrays.pop("header", None)
        if raw is None or raw.dtype != np.uint8 or raw.ndim != 1:
            raise _Bad("bad_header", "header", "missing, or not JSON bytes")
        try:
            header = json.loads(raw.tobytes().decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise _Bad("bad_header", "header", f"not JSON ({exc})") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT \
                or header.get("version") != VERSION:
            raise _Bad("bad_header", "header.format", f"must be {FORMAT!r} version {VERSION}, "
                       f"got {_short(header)}")
        if header.get("driver") != driver:
            raise _Bad("bad_header", "header.driver", f"must be {driver!r}, got "
                       f"{_short(header.get('driver'))}")
        return header, arrays

    def write(self, driver, header, arrays):
        """Write a driver's profile atomically (the directory is made when missing)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        header = {"format": FORMAT, "version": VERSION, "driver": driver,
                  "saved_unix_s": round(time.time(), 3), **header}
        raw = np.frombuffer(json.dumps(header, sort_keys=True).encode(), dtype=np.uint8)
        atomic_write(self.path(driver), lambda file: np.savez(file, header=raw, **arrays),
                     binary=True)

    def erase(self, driver):
        """Delete a driver's profile; return whether there was one."""
        try:
            self.path(driver).unlink()
        except FileNotFoundError:
            return False
        return True

    def expire(self):
        """Delete the profiles unused for longer than the retention; return their drivers."""
        gone = [driver for driver, _, age_s, _ in self.drivers() if age_s > self.max_age_s]
        for driver in gone:
            self.erase(driver)
        return gone


class Profiles:
    """Driver profiles in the daemon: each named stream's profile loaded into its session, and
    written when the stream ends.

    Parameters
    ----------
    config : dict
        The daemon's configuration (``[profiles]``).
    model : Model
    streams : StreamTable
        Followed through its listeners: ``named`` (a stream names its driver) and ``dropped``.
    metrics : Metrics
    """

    def __init__(self, config, model, streams, metrics):
        self.metrics = metrics
        self.streams = streams
        self.sessions = {}   # stream id -> its session, for the named streams
        self.store = None
        self.expired_s = -math.inf
        self.configure(config, model)
        streams.named.append(self.load)
        streams.dropped.append(self.save)

    def configure(self, config, model):
        """Take a (re)loaded configuration and model; profiles on: expire the old ones. Sessions
        a reload restarted are forgotten (their driver's profile stays as it was)."""
        self.model = model
        inboxes = self.streams.inboxes
        self.sessions = {stream: session for stream, session in self.sessions.items()
                         if stream in inboxes and inboxes[stream].session is session}
        options = config["profiles"]
        store = ProfileStore(profile_dir(config), options["max_bytes"], options["max_age_days"]) \
            if options["enabled"] else None
        self.store = store
        if store is not None:
            self._expire(time.monotonic())

    def load(self, session):
        """A stream named its driver: start it from the driver's profile, if any (the baseline
        and road centre only when no sample was fed yet)."""
        if self.store is None:
            return
        self.sessions[session.stream] = session
        try:
            found = self.store.read(session.driver)
            if found is None:
                self.metrics.profiles["new"].inc()
                return
            parts = _checked(*found, session, self.model)
        except _Bad as exc:
            self._reject(session, exc)
            return
        fresh = session.processor.n_samples == 0
        if fresh and "baseline" in parts:
            _restore_baseline(session.processor.baseline, parts["baseline"])
        if fresh and "road" in parts:
            _restore_road(session.processor.glances, *parts["road"])
        if session.adaptation is not None and "rows" in parts:
            rows = parts["rows"][-len(session.adaptation.rows):]
            session.adaptation.rows[:len(rows)] = rows
            session.adaptation.n_rows = len(rows)
        if session.adaptation is not None and "adapted" in parts:
            session.adaptation.detector, session.adaptation.adapted = parts["adapted"]
        if isinstance(parts.get("other_model"), _Bad):
            self._reject(session, parts["other_model"], partly=True)
        self.metrics.profiles["loaded"].inc()
        log.info("stream %s: driver %s's profile loaded (%s)", session.stream, session.driver,
                 ", ".join(name for name in ("baseline", "road", "rows", "adapted")
                           if name in parts and (fresh or name not in ("baseline", "road")))
                 or "nothing usable")

    def save(self, stream):
        """A stream left the table: write its driver's profile (not for a failed session)."""
        session = self.sessions.pop(stream, None)
        if session is None or self.store is None or session.failed:
            return
        header, arrays = _profile_of(session, self.model)
        if not arrays:
            return
        try:
            self.store.write(session.driver, header, arrays)
        except OSError as exc:
            self.metrics.profiles["unwritable"].inc()
            log.warning("stream %s: driver %s's profile not written: %s", stream,
                        session.driver, exc)
            return
        self.metrics.profiles["saved"].inc()
        self._expire(time.monotonic())

    def close(self):
        """At stop: write the profiles of the named streams still running."""
        for stream in list(self.sessions):
            self.save(stream)

    def _expire(self, now):
        if now - self.expired_s < _EXPIRE_EVERY_S:
            return
        self.expired_s = now
        try:
            gone = self.store.expire()
        except OSError as exc:
            log.warning("profiles: %s not expired: %s", self.store.directory, exc)
            return
        if gone:
            self.metrics.profiles["expired"].inc(len(gone))
            log.info("profiles: %d unused for over %g days deleted", len(gone),
                     self.store.max_age_s / 86400)

    def _reject(self, session, exc, partly=False):
        self.metrics.profiles_rejected[exc.reason].inc()
        log.warning("stream %s: profile %s %s (%s): %s; %s", session.stream,
                    self.store.path(session.driver), "partly refused" if partly else "refused",
                    exc.reason, exc, "its adapted model is not used" if partly
                    else "the stream starts cold")


def _profile_of(session, model):
    """What a session learned of its driver: the profile's header and arrays."""
    processor = session.processor
    header = {"pipeline": pipeline_key(model.detector.pipeline_config)}
    arrays = {}
    baseline = processor.baseline
    if baseline is not None and baseline.ready:
        arrays["baseline/ring"] = baseline.ring
        arrays["baseline/count"] = baseline.count
        arrays["baseline/head"] = baseline.head
    glances = getattr(processor, "glances", None)
    if glances is not None and glances.road_ready:
        state, _, hist, _ = glances.kernel
        weight = float(state["w"][0])
        arrays["road/hist"] = hist / weight
        arrays["road/state"] = np.array([float(state[name][0]) for name in ROAD_FIELDS])
    adaptation = session.adaptation
    if adaptation is not None and adaptation.n_rows:
        capacity = len(adaptation.rows)
        n = min(adaptation.n_rows, capacity)
        arrays["rows"] = adaptation.rows[(adaptation.n_rows - n + np.arange(n)) % capacity]
    if adaptation is not None and adaptation.detector is not None:
        adapted = adaptation.detector
        params, differing = adapted.arrays_beside(model.detector)
        header["adapted"] = {"model_id": model.detector.model_id, "kind": adapted.kind,
                             "params": params, "score_scale": adapted.score_scale,
                             "score_offset": adapted.score_offset, **adaptation.adapted}
        arrays.update({f"adapted/{name}": value for name, value in differing.items()})
    return header, arrays


def _checked(header, arrays, session, model):
    """The usable parts of a profile for this session, checked field by field; raise
    :class:`_Bad` naming the first field that is wrong."""
    if header.get("pipeline") != pipeline_key(model.detector.pipeline_config):
        raise _Bad("other_pipeline", "header.pipeline", "saved under other pipeline settings "
                   "than the loaded model's")
    known = {"baseline/ring", "baseline/count", "baseline/head", "road/hist", "road/state",
             "rows"}
    for name, value in arrays.items():
        if name not in known and not name.startswith("adapted/"):
            raise _Bad("bad_field", name, "unknown array")
        if value.dtype.kind not in "fiu":
            raise _Bad("bad_field", name, f"must be numbers, got dtype {value.dtype}")
    parts = {}
    baseline = session.processor.baseline
    if "baseline/ring" in arrays and baseline is not None:
        ring = _array(arrays, "baseline/ring", baseline.ring.shape, nan=True)
        count = _array(arrays, "baseline/count", baseline.count.shape)
        head = _array(arrays, "baseline/head", (1,))
        if not np.array_equal(count, np.isfinite(ring).sum(axis=0)):
            raise _Bad("bad_field", "baseline/count", "must count the ring's values per feature")
        if not 0 <= head[0] < len(ring):
            raise _Bad("bad_field", "baseline/head", f"must be in [0, {len(ring)}), got "
                       f"{head[0]:g}")
        parts["baseline"] = (ring, count.astype(np.int64), head.astype(np.int64))
    glances = getattr(session.processor, "glances", None)
    if "road/hist" in arrays and glances is not None:
        _, _, hist, _ = glances.kernel
        road = _array(arrays, "road/hist", hist.shape)
        if (road < 0).any():
            raise _Bad("bad_field", "road/hist", "must not be negative")
        state = _array(arrays, "road/state", (len(ROAD_FIELDS),), nan=True)
        values = dict(zip(ROAD_FIELDS, state))
        if not (values["mode"] == int(values["mode"]) and 0 <= values["mode"] < len(hist)):
            raise _Bad("bad_field", "road/state", f"mode must be a bin index in [0, {len(hist)}), "
                       f"got {values['mode']:g}")
        for name in ("yaw", "pitch"):
            if not abs(values[name]) <= math.pi:
                raise _Bad("bad_field", "road/state", f"{name} must be an angle in [-pi, pi] rad, "
                           f"got {values[name]:g}")
        parts["road"] = (road, values)
    adaptation = session.adaptation
    if "rows" in arrays and adaptation is not None:
        parts["rows"] = _array(arrays, "rows", (None, adaptation.rows.shape[1]))
    adapted = header.get("adapted")
    if adapted is not None and adaptation is not None:
        if adapted.get("model_id") != model.detector.model_id:
            parts["other_model"] = _Bad("other_model", "header.adapted.model_id",
                                        f"fitted from model {_short(adapted.get('model_id'))}, "
                                        f"not the loaded {model.detector.model_id}")
            parts.pop("rows", None)
        else:
            parts["adapted"] = _adapted(adapted, arrays, model)
    return parts


def _adapted(adapted, arrays, model):
    """The adapted model and its published ``adapted`` field from a profile's part."""
    try:
        scale, offset = float(adapted["score_scale"]), float(adapted["score_offset"])
        t, windows = float(adapted["t"]), int(adapted["windows"])
        params = adapted["params"]
    except (KeyError, TypeError, ValueError) as exc:
        raise _Bad("bad_field", "header.adapted", f"needs score_scale, score_offset, t, windows "
                   f"and params ({type(exc).__name__}: {exc})") from None
    if not (math.isfinite(scale) and scale > 0 and abs(offset) < _MAX_VALUE):
        raise _Bad("bad_field", "header.adapted.score_scale",
                   f"must be positive and finite (and the offset finite), got {scale:g}, "
                   f"{offset:g}")
    own = {name[len("adapted/"):]: value for name, value in arrays.items()
           if name.startswith("adapted/")}
    try:
        detector = model.detector.with_arrays(params, own, scale, offset)
    except (ValueError, TypeError, KeyError) as exc:
        raise _Bad("bad_field", "adapted", f"{type(exc).__name__}: {exc}") from None
    return detector, {"t": t, "windows": windows}


def _array(arrays, name, shape, nan=False):
    """``arrays[name]`` as float64 of ``shape`` (None: any length), finite (or NaN with
    ``nan``) and within +-1e9."""
    if name not in arrays:
        raise _Bad("bad_field", name, "missing")
    value = arrays[name]
    if value.ndim != len(shape) or any(want is not None and got != want
                                       for got, want in zip(value.shape, shape)):
        raise _Bad("bad_field", name, f"must have shape {tuple(shape)}, got {value.shape}")
    value = value.astype(np.float64)
    checked = value[~np.isnan(value)] if nan else value
    if not (np.isfinite(checked).all() and (np.abs(checked) <= _MAX_VALUE).all()):
        raise _Bad("bad_field", name, "must hold finite values within +-1e9")
    return value


def _restore_baseline(baseline, parts):
    """Start a baseline from a profile's ring: ready at its first window (its warm-up and first
    entry are taken as long past) and refitted from the ring then."""
    ring, count, head = parts
    baseline.ring[:] = ring
    baseline.count[:] = count
    baseline.head[:] = head
    baseline.state[:] = (-np.inf, -np.inf, 1.0, np.nan)


def _restore_road(glances, hist, values):
    """Start the glance channel from a profile's road centre (ready; the histogram's weight
    restarts at 1, its entries scaled to it when saved)."""
    state, _, own, _ = glances.kernel
    own[:] = hist
    for name, value in values.items():
        state[name][0] = value
    state["w"][0] = 1.0
    state["ready"][0] = 1.0
    state["centre_t"][0] = -np.inf


def _short(value, max_chars=60):
    text = repr(value)
    return text if len(text) <= max_chars else text[:max_chars] + "..."
