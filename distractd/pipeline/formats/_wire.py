"""The native wire format (DESIGN §3): pure encode/decode functions for every message distractd speaks.

Messages are multipart ``[topic, payload, *ignored]`` with a msgpack payload. Input topics are
``samples.<stream_id>``; the payload is a *map* (one sample, canonical names) or a *block* (``seq``,
``fields``, ``dtype``, ``data`` = n × len(fields) row-major bytes). Output topics are
``state.<stream_id>`` and ``event.<stream_id>``; their payloads are built here too
(:func:`state_message` with its glance, fatigue, calibration and escalation dicts,
:func:`glance_state`, :func:`transition_event`, :func:`segment_event`, :func:`alert_event` for every
alert kind) so the schema of every
published message has one home. Decoding is bounded (message size, block rows, msgpack container
lengths, :func:`unpack`) and every rejection raises :class:`Rejected` carrying one reason of
:data:`MESSAGE_REJECT_REASONS`, which the daemon counts.
"""

import re

import msgpack
import numpy as np

from ..._errors import DistractdError, SchemaError
from ._schema import FIELDS, block_from_columns, row_from_map

__all__ = [
    "VERSION", "STATE_NAMES", "FATIGUE_UNAVAILABLE", "MESSAGE_REJECT_REASONS", "MAX_SEQ", "Rejected", "Limits", "unpack",
    "decode_samples", "decode_message", "valid_stream_id", "encode_map", "encode_block", "state_message", "transition_event", "segment_event",
    "glance_state", "alert_event", "encode_state", "encode_event", "decode_output",
]

VERSION = 1
STATE_NAMES = {0: "attentive", 1: "distracted", -1: "unknown"}
"""Published state name of each decision label: 0 attentive, 1 distracted, -1 unknown — no
decision (too little valid data, a missing feature, or a stream warming up)."""
FATIGUE_UNAVAILABLE = ("off", "no_eyelid", "not_visible")
"""Why a state's ``fatigue`` is unavailable: the pipeline runs no fatigue channel, the stream has
not delivered an eyelid signal, or the eyes are not visible to the tracker now (sunglasses, face
turned away; also while the driver's open-eye level is being learned)."""
MESSAGE_REJECT_REASONS = (
    "oversized", "bad_topic", "undecodable", "not_a_map", "unknown_version", "missing_t",
    "wrong_type", "bad_block", "too_many_streams",
)
"""Why a message was dropped: size over the bound, topic not ``<prefix><stream_id>``, not msgpack
(or nested or sized beyond the bounds), payload not a map, ``v`` not the integer 1, no ``t`` (map
form), a field of the wrong msgpack type (a sample value that is not a number, ``seq`` not an
integer in [0, :data:`MAX_SEQ`], ``data`` not bin, ``dtype`` not a string, ``fields`` not a list of
strings), a malformed block (no ``seq``, unknown dtype, empty, unknown or repeated fields, data not
whole rows), or the session table full. Timestamps going backwards are the pipeline's to judge,
per sample."""

MAX_SEQ = 2**63 - 1
"""Largest accepted ``seq`` (a signed 64-bit counter never wraps in practice)."""

_STREAM_ID = re.compile(rb"[A-Za-z0-9_.:\-]{1,128}")
_DTYPES = {"<f8": np.dtype("<f8"), "<f4": np.dtype("<f4")}
_CANONICAL = list(FIELDS)
_MAX_KNOWN_TOPICS = 65536


class Rejected(DistractdError):
    """A message the daemon drops; ``reason`` is one of :data:`MESSAGE_REJECT_REASONS`."""

    def __init__(self, reason, detail):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


class Limits:
    """Decoding bounds.

    Parameters
    ----------
    topic : str, default="samples."
        Topic prefix of input messages; the rest of the topic is the stream id.
    max_message_bytes : int, default=1048576
        Largest accepted payload in bytes.
    max_block_samples : int, default=8192
        Most samples accepted in one block message.

    Attributes
    ----------
    streams : dict
        Stream id of each topic already accepted (at most :data:`_MAX_KNOWN_TOPICS`, then
        emptied), so a stream's topic is checked once, not in every message.
    """

    def __init__(self, topic="samples.", max_message_bytes=1048576, max_block_samples=8192):
        self.topic = topic.encode("ascii")
        self.max_message_bytes = max_message_bytes
        self.max_block_samples = max_block_samples
        self.streams = {}


def decode_samples(frames, limits):
    """Decode one input message to a block.

    Parameters
    ----------
    frames : list of bytes
        The multipart message; frames after the second are ignored.
    limits : Limits

    Returns
    -------
    stream_id : str
    block : ndarray of shape (n_samples, N_FIELDS)
        Canonical block (read-only when it is a view of the message's bytes).
    seq : int or None
        The block's sequence number (None for the map form unless the sender gave one).

    Raises
    ------
    Rejected
    """
    stream, samples, seq, _ = decode_message(frames, limits)
    if type(samples) is not np.ndarray:
        samples = np.array(samples, dtype=np.float64)
    return stream, samples, seq


def decode_message(frames, limits):
    """Decode one input message as :func:`decode_samples` does, leaving a map's sample a row.

    The daemon's receive loop joins the rows of a stream's map messages into one block per hop
    (``np.array(rows, dtype=np.float64)``) rather than making each message a one-row array.

    Returns
    -------
    stream_id : str
    samples : ndarray of shape (n_samples, N_FIELDS), or list of one row
        A block-form message's canonical block; a map-form message's sample as ``[row]``, the row
        a list of its values in :data:`FIELDS` order (numbers, ``None`` or NaN where missing).
    seq : int or None
    driver : str or None
        The message's optional ``driver`` key: the driver the stream names (a driver id of 1-128
        characters of ``[A-Za-z0-9_.:-]``, as a stream id; refused as ``wrong_type`` otherwise).

    Raises
    ------
    Rejected
        With the same reason and message as :func:`decode_samples`, or ``wrong_type`` for a
        ``driver`` that is not a driver id.
    """
    if len(frames) < 2:
        raise Rejected("bad_topic", f"expected [topic, payload], got {len(frames)} frame(s)")
    topic, payload = frames[0], frames[1]
    stream = limits.streams.get(topic) if type(topic) is bytes else None
    if stream is None:
        stream = _stream_id(topic, limits)
    if len(payload) > limits.max_message_bytes:
        raise Rejected("oversized", f"stream {stream}: payload of {len(payload)} bytes exceeds "
                                    f"input.max_message_bytes={limits.max_message_bytes}")
    message = unpack(payload, f"stream {stream}")
    version = message.get("v")
    if type(version) is not int or version != VERSION:
        raise Rejected("unknown_version", f"stream {stream}: v must be the integer {VERSION}, "
                                          f"got {_shown(version)}")
    seq = message.get("seq")
    if seq is not None and (type(seq) is not int or not 0 <= seq <= MAX_SEQ):
        raise Rejected("wrong_type", f"stream {stream}: seq must be an integer in "
                                     f"[0, {MAX_SEQ}], got {_shown(seq)}")
    driver = message.get("driver")
    if driver is not None and (type(driver) is not str or not valid_stream_id(driver)):
        raise Rejected("wrong_type", f"stream {stream}: driver must be a driver id of 1-128 "
                                     f"characters of [A-Za-z0-9_.:-], got {_shown(driver)}")
    if "data" in message:
        return stream, _decode_block(stream, message, limits), seq, driver
    if message.get("t") is None:
        raise Rejected("missing_t", f"stream {stream}: a sample map must have t")
    try:
        return stream, [row_from_map(message)], seq, driver
    except SchemaError as exc:
        raise Rejected("wrong_type", f"stream {stream}: {_clipped(exc)}") from None


def unpack(payload, where, max_str_len=4096):
    """Decode a msgpack payload that must be a map, with bounded container sizes.

    Parameters
    ----------
    payload : bytes
    where : str
        What the payload is, for the rejection's message (``"stream s1"``, ``"pupil gaze.3d.0."``).
    max_str_len : int, default=4096
        Longest string accepted, in bytes.

    Raises
    ------
    Rejected
        ``undecodable`` for anything msgpack cannot decode within the bounds, ``not_a_map`` for a
        payload that is not a map.
    """
    try:
        message = msgpack.unpackb(payload, raw=False, strict_map_key=False, max_array_len=4096,
                                  max_map_len=256, max_str_len=max_str_len, max_ext_len=0)
    except Exception as exc:  # msgpack raises many unrelated types on garbage
        raise Rejected("undecodable", f"{where}: {type(exc).__name__}: {_clipped(exc)}") \
            from None
    if not isinstance(message, dict):
        raise Rejected("not_a_map", f"{where}: payload must be a map, "
                                    f"got {type(message).__name__}")
    return message


def _shown(value, max_items=8):
    """A received value for a rejection line: its type and ``repr``, or only its length when it
    holds more than ``max_items`` items (a 1 MB bin is not formatted to be logged)."""
    if isinstance(value, (bytes, str, list, dict)) and len(value) > max_items:
        return f"{type(value).__name__} of length {len(value)}"
    return f"{type(value).__name__} {value!r}"[:200]


def valid_stream_id(name):
    """Whether ``name`` (str) is a stream id: 1-128 characters of ``[A-Za-z0-9_.:-]``."""
    return isinstance(name, str) and name.isascii() \
        and _STREAM_ID.fullmatch(name.encode("ascii")) is not None


def _clipped(error, max_chars=240):
    """A schema error's message, cut so that a 4,096-name ``fields`` list is not logged whole."""
    text = str(error)
    return text if len(text) <= max_chars else f"{text[:max_chars]}... ({len(text)} characters)"


def _stream_id(topic, limits):
    """Check a topic new to ``limits.streams``; return its stream id and remember it."""
    if not topic.startswith(limits.topic) or not _STREAM_ID.fullmatch(topic, len(limits.topic)):
        raise Rejected("bad_topic", f"topic must be {limits.topic!r} + a stream id of 1-128 "
                                    f"[A-Za-z0-9_.:-], got {bytes(topic[:160])!r}")
    if len(limits.streams) >= _MAX_KNOWN_TOPICS:
        limits.streams.clear()
    stream = limits.streams[bytes(topic)] = topic[len(limits.topic):].decode("ascii")
    return stream


def _decode_block(stream, message, limits):
    fields, dtype, data = message.get("fields"), message.get("dtype"), message.get("data")
    if message.get("seq") is None:
        raise Rejected("bad_block", f"stream {stream}: a block must have seq")
    if type(data) is not bytes:
        raise Rejected("wrong_type", f"stream {stream}: data must be bin, "
                                     f"got {_shown(data)}")
    if type(dtype) is not str:
        raise Rejected("wrong_type", f"stream {stream}: dtype must be a string, "
                                     f"got {_shown(dtype)}")
    if dtype not in _DTYPES:
        raise Rejected("bad_block", f"stream {stream}: dtype must be one of {list(_DTYPES)}, "
                                    f"got {_shown(dtype)}")
    canonical = fields == _CANONICAL
    if not canonical and (type(fields) is not list or not all(type(f) is str for f in fields)):
        raise Rejected("wrong_type", f"stream {stream}: fields must be a list of names, "
                                     f"got {_shown(fields)}")
    if not fields:
        raise Rejected("bad_block", f"stream {stream}: fields must not be empty")
    row_bytes = _DTYPES[dtype].itemsize * len(fields)
    if len(data) % row_bytes:
        raise Rejected("bad_block", f"stream {stream}: {len(data)} data bytes are not a whole "
                                    f"number of {len(fields)}-field {dtype} rows")
    n_samples = len(data) // row_bytes
    if n_samples > limits.max_block_samples:
        raise Rejected("oversized", f"stream {stream}: block of {n_samples} samples exceeds "
                                    f"input.max_block_samples={limits.max_block_samples}")
    values = np.frombuffer(data, dtype=_DTYPES[dtype]).reshape(n_samples, len(fields))
    if canonical and dtype == "<f8":
        return values
    try:
        return block_from_columns(fields, values)
    except SchemaError as exc:
        raise Rejected("bad_block", f"stream {stream}: {_clipped(exc)}") from None


def encode_map(stream, sample, seq=None, driver=None):
    """Frames of a map-form sample message; ``sample`` maps canonical names to numbers;
    ``driver`` names the stream's driver."""
    message = {"v": VERSION, **sample}
    if seq is not None:
        message["seq"] = seq
    if driver is not None:
        message["driver"] = driver
    return [b"samples." + stream.encode("ascii"), msgpack.packb(message)]


def encode_block(stream, block, seq, fields=FIELDS, driver=None):
    """Frames of a block-form message of the canonical ``block`` (or its ``fields`` columns);
    ``driver`` names the stream's driver."""
    block = np.asarray(block, dtype="<f8")
    if block.ndim != 2 or block.shape[1] != len(fields):
        raise SchemaError(f"block must have shape (n_samples, {len(fields)}), got {block.shape}")
    message = {"v": VERSION, "seq": seq, "fields": list(fields), "dtype": "<f8",
               "data": np.ascontiguousarray(block).tobytes()}
    if driver is not None:
        message["driver"] = driver
    return [b"samples." + stream.encode("ascii"), msgpack.packb(message)]


def state_message(stream, window_s, state, score, model_id, quality, segment, glance=None,
                  baseline=None, gaze_frame=None, adapted=None, fatigue=None, calibration=None,
                  escalation=None):
    """The payload of a ``state.<stream>`` message (DESIGN §3).

    Parameters
    ----------
    stream : str
    window_s : tuple of float
        The window's start and end, in stream seconds; the end is the message's ``t``.
    state : str
        A value of :data:`STATE_NAMES`.
    score : float
        The detector's decision value (NaN where no feature row could be scored).
    model_id : str
    quality : float
        Fraction of the window's samples that are valid.
    segment : dict or None
        The online segmenter's current segment.
    glance : dict, default=None
        The glance channel's state (:func:`glance_state`); the key is left out when None.
    baseline : bool, default=None
        Whether the stream's feature baseline is ready (``"baseline": "ready"``) or warming up
        (``"warming"``); the key is left out when None (a model without baselines).
    gaze_frame : str, default=None
        ``"head"`` for a stream of eye-in-head gaze without head pose (a head-mounted tracker);
        the key is left out when None (car-frame gaze).
    adapted : dict or False, default=None
        With the daemon's ``[adaptation]`` on: the fit of the model adapted to the stream that
        scored the window, ``{"t": end of the newest window in the fit (s), "windows": windows
        in the fit}``, or False while the loaded model scores it (published as null); the key is
        left out when None (adaptation off).
    fatigue : str or tuple, default=None
        The eyelid channel at the window's end: ``(eyes_closed_s, perclos, blink_duration_s,
        drowsy)`` when it is available, published as ``{"available": true, "eyes_closed_s",
        "perclos", "blink_duration_s", "drowsy"}`` (NaN as null); or the reason it is not (one
        of :data:`FATIGUE_UNAVAILABLE`), published as ``{"available": false, "reason": ...}``;
        the key is left out when None.
    calibration : tuple, default=None
        ``(baseline_ready, baseline_progress, road_ready, road_progress)``, published as
        ``{"baseline": {"ready", "progress"}, "road": {"ready", "progress"}}`` (progress 0..1);
        the key is left out when None.
    escalation : tuple, default=None
        ``(level, name, since_s)``: the escalation level (0..3), its name and the stream time it
        was entered (None at level 0), published as ``{"level", "name", "since_s"}``; the key is
        left out when None.
    """
    message = {"v": VERSION, "stream": stream, "t": window_s[1], "window": list(window_s),
               "state": state, "score": score, "model": model_id, "quality": quality,
               "segment": segment}
    if glance is not None:
        message["glance"] = glance
    if baseline is not None:
        message["baseline"] = "ready" if baseline else "warming"
    if gaze_frame is not None:
        message["gaze_frame"] = gaze_frame
    if adapted is not None:
        message["adapted"] = adapted or None
    if fatigue is not None:
        if type(fatigue) is str:
            message["fatigue"] = {"available": False, "reason": fatigue}
        else:
            closed_s, perclos, blink_s, drowsy = fatigue
            message["fatigue"] = {"available": True, "eyes_closed_s": _maybe(closed_s, float),
                                  "perclos": _maybe(perclos, float),
                                  "blink_duration_s": _maybe(blink_s, float),
                                  "drowsy": bool(drowsy)}
    if calibration is not None:
        baseline_ready, baseline_progress, road_ready, road_progress = calibration
        message["calibration"] = {
            "baseline": {"ready": bool(baseline_ready), "progress": float(baseline_progress)},
            "road": {"ready": bool(road_ready), "progress": float(road_progress)}}
    if escalation is not None:
        level, name, since_s = escalation
        message["escalation"] = {"level": int(level), "name": name,
                                 "since_s": _maybe(since_s, float)}
    return message


def glance_state(on_road, off_road_s, buffer_s, road_ready):
    """The ``"glance"`` dict of a state message (DESIGN §3), from a window's glance state.

    Parameters
    ----------
    on_road : bool, float or None
        On the road (True / 1.0), away (False / 0.0), or unknown (None or NaN: track loss, road
        centre warming up).
    off_road_s : float
        The current glance away, seconds (0 on road); NaN or None when unknown.
    buffer_s : float
        The AttenD attention buffer, seconds; NaN or None when unknown.
    road_ready : bool
        The road centre is learned; ``"road"`` is ``"ready"``, else ``"warming"``.

    Examples
    --------
    >>> glance_state(1.0, 0.0, 2.0, True)
    {'on_road': True, 'off_road_s': 0.0, 'buffer_s': 2.0, 'road': 'ready'}
    >>> glance_state(float("nan"), float("nan"), float("nan"), False)["on_road"] is None
    True
    """
    return {"on_road": _maybe(on_road, bool), "off_road_s": _maybe(off_road_s, float),
            "buffer_s": _maybe(buffer_s, float), "road": "ready" if road_ready else "warming"}


def _maybe(value, kind):
    if value is None or value != value:   # None or NaN
        return None
    return kind(value)


def alert_event(stream, kind, t, glances=None, away_s=None, *, closures=None, closed_s=None,
                perclos=None, since=None, cause=None):
    """The payload of an ``event.<stream>`` message for an alert (DESIGN §3, docs/daemon.md).

    Each kind carries its own fields, the ones given: a glance alert ``glances`` and ``away_s``,
    a fatigue alert ``closures``, ``closed_s`` and ``perclos``, the unresponsive driver alert
    ``since`` and ``cause``. NaN is published as null.

    Parameters
    ----------
    stream : str
    kind : str
        ``"long_distraction"``, ``"time_sharing"`` (glance), ``"microsleep"``, ``"sleep"``,
        ``"drowsiness"`` (fatigue) or ``"unresponsive"`` (escalation).
    t : float
        Stream time the alert was raised, seconds.
    glances : sequence of (float, float), default=None
        Start and end, seconds, of the glances away the alert is based on.
    away_s : float, default=None
        Glance-away time that crossed the threshold, seconds.
    closures : sequence of (float, float), default=None
        Start and end (so far), seconds, of the eye closures a fatigue alert is based on.
    closed_s : float, default=None
        The closure's duration so far, seconds (NaN for drowsiness).
    perclos : float, default=None
        PERCLOS at ``t``, share of time (NaN while not defined).
    since : float, default=None
        Stream time the unresponsive driver's episode of inattention began, seconds.
    cause : str, default=None
        What held the episode: ``"eyes_closed"`` or ``"away"``.

    Examples
    --------
    >>> alert_event("car", "sleep", 12.5, closures=[(9.5, 12.5)], closed_s=3.0,
    ...             perclos=float("nan"))["perclos"] is None
    True
    """
    message = {"v": VERSION, "stream": stream, "t": float(t), "type": "alert", "kind": kind}
    if glances is not None:
        message["glances"] = [[float(a), float(b)] for a, b in glances]
        message["away_s"] = float(away_s)
    if closures is not None:
        message["closures"] = [[float(a), float(b)] for a, b in closures]
        message["closed_s"] = _maybe(closed_s, float)
        message["perclos"] = _maybe(perclos, float)
    if since is not None:
        message["since"] = float(since)
        message["cause"] = cause
    return message


def transition_event(stream, t, old, new, score, model_id):
    """The payload of an ``event.<stream>`` message for a change of state at ``t`` (s)."""
    return {"v": VERSION, "stream": stream, "t": t, "type": "transition", "from": old, "to": new,
            "score": score, "model": model_id}


def segment_event(stream, segment):
    """The payload of an ``event.<stream>`` message for a finalised ``segment``."""
    return {"v": VERSION, "stream": stream, "t": segment["end"], "type": "segment",
            "segment": segment}


def encode_state(message):
    """Frames ``[b"state.<stream>", payload]`` of a state message (see docs/daemon.md)."""
    return [b"state." + message["stream"].encode("ascii"), msgpack.packb(message)]


def encode_event(message):
    """Frames ``[b"event.<stream>", payload]`` of an event message (see docs/daemon.md)."""
    return [b"event." + message["stream"].encode("ascii"), msgpack.packb(message)]


def decode_output(frames):
    """Decode a ``state.`` or ``event.`` message into ``(kind, stream_id, message)``."""
    kind, _, stream = bytes(frames[0]).decode("ascii").partition(".")
    return kind, stream, msgpack.unpackb(frames[1], raw=False, strict_map_key=False)

