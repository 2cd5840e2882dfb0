"""Pupil Core datums <-> canonical samples: the mapping in both directions, no sockets.

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

The other direction, :func:`pupil_datums`, turns a canonical sample into the datums Capture would
publish for it (``pupil.0.3d``, ``pupil.1.3d``, a binocular ``gaze.3d.01.`` and, where the blink
flag changes, a ``blinks`` onset/offset); gaze rotations become unit normals in the world camera
frame: ``(sin yaw cos pitch, -sin pitch, cos yaw cos pitch)``.
"""

import math

import numpy as np

from ._schema import FIELD_INDEX, empty_block
from ._wire import Rejected, unpack

__all__ = ["PupilAdapter", "gaze_angles", "gaze_normal", "pupil_datums"]

_COLUMNS = {name: FIELD_INDEX[name] for name in (
    "t", "gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch", "pupil_r", "pupil_l",
    "confidence", "blink")}
_EYE_FIELDS = {"0": ("gaze_r_yaw", "gaze_r_pitch"), "1": ("gaze_l_yaw", "gaze_l_pitch")}


_EYE_CENTERS_MM = {"0": [-32.0, 12.0, -20.0], "1": [28.0, 12.0, -20.0]}
_GAZE_DISTANCE_MM = 500.0


def gaze_angles(normal):
    """``(yaw, pitch)`` in radians of a gaze normal ``(x, y, z)`` in Pupil's world camera frame."""
    x, y, z = (float(v) for v in normal)
    return math.atan2(x, z), math.atan2(-y, math.hypot(x, z))


def gaze_normal(yaw_rad, pitch_rad):
    """The unit gaze normal ``[x, y, z]`` (Pupil world camera frame) of a yaw and pitch in rad."""
    cos_pitch = math.cos(pitch_rad)
    return [math.sin(yaw_rad) * cos_pitch, -math.sin(pitch_rad), math.cos(yaw_rad) * cos_pitch]


def pupil_datums(row, t, blink):
    """The datums Pupil Capture would publish for one canonical sample.

    Parameters
    ----------
    row : ndarray of shape (N_FIELDS,)
        A canonical sample.
    t : float
        Its Pupil time (s).
    blink : float
        The blink flag of the previous sample (0 or 1).

    Returns
    -------
    datums : list of dict
        In publishing order; each holds its ``topic``.
    blink : float
        The blink flag after this sample.
    """
    datums = []
    confidence = float(row[FIELD_INDEX["confidence"]])
    flag = float(row[FIELD_INDEX["blink"]])
    if not math.isnan(flag) and flag != blink:
        datums.append({"topic": "blinks", "type": "onset" if flag else "offset",
                       "timestamp": t, "confidence": 1.0, "base_data": []})
        blink = flag
    pupils = []
    for eye, field in (("0", "pupil_r"), ("1", "pupil_l")):
        diameter = float(row[FIELD_INDEX[field]])
        if math.isnan(diameter):
            continue
        pupils.append({"topic": f"pupil.{eye}.3d", "id": int(eye), "timestamp": t,
                       "confidence": confidence, "diameter_3d": diameter,
                       "diameter": diameter * 8.0, "norm_pos": [0.5, 0.5],
                       "method": "pye3d 0.3.0 real-time"})
    datums += pupils
    normals = {eye: gaze_normal(float(row[FIELD_INDEX[f"gaze_{side}_yaw"]]),
                                float(row[FIELD_INDEX[f"gaze_{side}_pitch"]]))
               for eye, side in (("0", "r"), ("1", "l"))}
    if all(math.isnan(n[0]) for n in normals.values()):
        point = [math.nan] * 3
    else:
        point = [_GAZE_DISTANCE_MM * v for v in np.nanmean([normals["0"], normals["1"]], axis=0)]
    datums.append({
        "topic": "gaze.3d.01.", "timestamp": t, "confidence": confidence,
        "gaze_normals_3d": normals, "eye_centers_3d": _EYE_CENTERS_MM, "gaze_point_3d": point,
        "norm_pos": [0.5 + point[0] / (2 * _GAZE_DISTANCE_MM),
                     0.5 - point[1] / (2 * _GAZE_DISTANCE_MM)],
        "base_data": pupils})
    return datums, blink


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
        datum = unpack(frames[1], f"pupil {topic}", max_str_len=65536)
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
