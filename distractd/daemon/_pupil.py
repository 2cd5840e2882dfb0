"""Pupil Core adapter: Pupil Capture's network protocol mapped onto canonical samples.

Pupil Capture serves *Pupil Remote* (a REP socket, port 50020 by default) which answers
``SUB_PORT`` with the port of its IPC backbone; subscribers connect there and receive multipart
``[topic, msgpack payload, *raw frames]`` messages. The adapter subscribes to ``gaze.3d.``
(gaze datums, one canonical sample each), ``pupil.`` (the latest 3-D diameter of each eye) and
``blink`` (``blinks`` onset/offset events), and maps:

============================  =====================================================================
canonical field               Pupil datum
============================  =====================================================================
``t``                         gaze ``timestamp`` (Pupil time, s)
``gaze_r_yaw``/``_pitch``     eye 0's gaze normal (``gaze_normals_3d["0"]`` or, from
                              ``gaze.3d.0.``, ``gaze_normal_3d``): yaw = atan2(x, z),
                              pitch = atan2(-y, hypot(x, z)) in the world camera frame
                              (x right, y down, z forward), rad
``gaze_l_yaw``/``_pitch``     the same for eye 1
``pupil_r``/``pupil_l``       latest ``diameter_3d`` (mm) of ``pupil.0.*``/``pupil.1.*``
``confidence``                gaze ``confidence``
``blink``                     1 between a blink onset and offset, 0 otherwise (NaN before the
                              first blink event)
============================  =====================================================================

Pupil Core has no head pose and no eyelid signal: those fields stay NaN. Eye 0 is the right eye.
"""

import math

import msgpack
import zmq

from .._errors import ConfigError
from ..pipeline import FIELD_INDEX, empty_block
from ._wire import Rejected

__all__ = ["PupilAdapter", "gaze_angles", "pupil_sub_endpoint"]

_COLUMNS = {name: FIELD_INDEX[name] for name in (
    "t", "gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch", "pupil_r", "pupil_l",
    "confidence", "blink")}
_EYE_FIELDS = {"0": ("gaze_r_yaw", "gaze_r_pitch"), "1": ("gaze_l_yaw", "gaze_l_pitch")}


def pupil_sub_endpoint(context, remote, timeout_s):
    """Ask Pupil Remote at ``remote`` (``tcp://host:port``) for the backbone's SUB endpoint."""
    req = context.socket(zmq.REQ)
    req.linger = 0
    req.rcvtimeo = req.sndtimeo = int(timeout_s * 1e3)
    try:
        req.connect(remote)
        req.send_string("SUB_PORT")
        port = req.recv_string()
    except zmq.ZMQError as exc:
        raise ConfigError(f"pupil.remote {remote!r} did not answer SUB_PORT within "
                          f"pupil.timeout_s={timeout_s} ({exc})") from None
    finally:
        req.close(linger=0)
    if not port.isdigit():
        raise ConfigError(f"pupil.remote {remote!r} answered SUB_PORT with {port!r}")
    host = remote.rsplit(":", 1)[0]
    return f"{host}:{port}"


def gaze_angles(normal):
    """``(yaw, pitch)`` in radians of a gaze normal ``(x, y, z)`` in Pupil's world camera frame."""
    x, y, z = (float(v) for v in normal)
    return math.atan2(x, z), math.atan2(-y, math.hypot(x, z))


class PupilAdapter:
    """Turn Pupil backbone messages into canonical one-sample blocks.

    Attributes
    ----------
    diameter_mm : dict
        Latest 3-D pupil diameter of eye ``"0"`` and ``"1"``, in mm.
    blink : float
        1.0 inside a blink, 0.0 outside, NaN before the first blink event.
    """

    TOPICS = ("gaze.3d.", "pupil.", "blink")

    def __init__(self):
        self.diameter_mm = {"0": math.nan, "1": math.nan}
        self.blink = math.nan

    def update(self, frames):
        """Consume one message; return a (1, N_FIELDS) block for a gaze datum, else None.

        Raises
        ------
        Rejected
            Undecodable payloads, non-map datums, missing timestamps and wrongly typed values.
        """
        if len(frames) < 2:
            raise Rejected("bad_topic", f"pupil: expected [topic, payload, ...], got "
                                        f"{len(frames)} frame(s)")
        topic = bytes(frames[0][:64]).decode("utf-8", "replace")
        try:
            datum = msgpack.unpackb(frames[1], raw=False, strict_map_key=False,
                                    max_array_len=4096, max_map_len=256, max_str_len=65536)
        except Exception as exc:  # msgpack raises many unrelated types on garbage
            raise Rejected("undecodable", f"pupil {topic}: {type(exc).__name__}: {exc}") from None
        if not isinstance(datum, dict):
            raise Rejected("not_a_map", f"pupil {topic}: datum must be a map, "
                                        f"got {type(datum).__name__}")
        timestamp = datum.get("timestamp")
        if isinstance(timestamp, bool) or not isinstance(timestamp, (int, float)):
            raise Rejected("missing_t", f"pupil {topic}: timestamp must be a number, "
                                        f"got {timestamp!r}")
        try:
            if topic.startswith("gaze.3d."):
                return self._gaze(topic, datum, float(timestamp))
            if topic.startswith("pupil."):
                eye = str(datum.get("id", topic.split(".")[1]))
                if eye in self.diameter_mm and "diameter_3d" in datum:
                    self.diameter_mm[eye] = float(datum["diameter_3d"])
            elif topic.startswith("blink"):
                self.blink = {"onset": 1.0, "offset": 0.0}.get(datum.get("type"), self.blink)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            raise Rejected("wrong_type", f"pupil {topic}: {type(exc).__name__}: {exc}") from None
        return None

    def _gaze(self, topic, datum, timestamp):
        block = empty_block(1)
        row = block[0]
        row[_COLUMNS["t"]] = timestamp
        row[_COLUMNS["confidence"]] = float(datum.get("confidence", math.nan))
        if "gaze_normals_3d" in datum:
            normals = datum["gaze_normals_3d"]
        else:
            normals = {topic[len("gaze.3d."):].rstrip(".")[:1]: datum["gaze_normal_3d"]}
        for eye, normal in normals.items():
            fields = _EYE_FIELDS.get(str(eye))
            if fields is not None:
                row[[_COLUMNS[fields[0]], _COLUMNS[fields[1]]]] = gaze_angles(normal)
        row[_COLUMNS["pupil_r"]] = self.diameter_mm["0"]
        row[_COLUMNS["pupil_l"]] = self.diameter_mm["1"]
        row[_COLUMNS["blink"]] = self.blink
        return block
