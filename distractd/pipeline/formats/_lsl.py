"""Lab Streaming Layer streams <-> canonical samples: the channel mapping, no sockets, no pylsl.

An LSL stream describes itself with a content type (``Gaze``, ``EyeTracking``, ``MoCap``, ...) and
per-channel meta-data under ``desc/channels/channel`` (``label``, ``type``, ``eye``, ``unit``, the
XDF "Gaze Meta-Data" convention). :func:`lsl_mapping` turns that description into an
:class:`LslMapping` which maps each pulled chunk onto canonical samples. A channel is mapped by the
first rule that fits it:

1. its **label is a canonical field** (any case): ``gaze_r_yaw``, ``head_x``, ``confidence``,
   ``speed``, ...; a channel's ``unit`` converts to the field's (:data:`UNIT_SCALES`): angles in
   ``deg`` become rad, head positions and the lane offset in ``mm``/``cm`` m, speed in ``km/h`` or
   ``mph`` m/s, the yaw rate in ``deg/s`` rad/s, pedals in ``percent`` 0-1, acceleration in ``g``
   m/s²;
2. the **XDF gaze meta-data**: ``type`` ``DirectionX``/``DirectionY``/``DirectionZ`` with ``eye``
   ``right``/``left`` (the eye's 3-D gaze vector; both eyes with ``eye`` ``both``), ``Diameter`` or
   ``Radius`` (pupil, mm; ``eye`` ``both``: one value for both pupils) and ``Confidence``;
3. the **Pupil Capture LSL relay** layout (stream ``pupil_capture``): ``gaze_normal0_x/y/z``
   (eye 0, the right eye), ``gaze_normal1_x/y/z``, ``diameter0_3d``/``diameter1_3d`` (mm),
   ``confidence``.

Gaze vectors are read in Pupil's world camera convention (x right, y down, z forward):
yaw = atan2(x, z), pitch = atan2(-y, hypot(x, z)). Channels no rule fits are ignored and listed in
:attr:`LslMapping.ignored`.

**Time.** ``t`` = the sample's LSL timestamp + the inlet's clock correction
(``StreamInlet.time_correction()``, the offset from the sender's clock to this host's
``local_clock()``), so streams from several machines share this host's LSL clock.

**Eye-in-head gaze.** A stream whose ``desc`` has ``gaze_frame`` = ``head`` (and the Pupil relay
layout, whose world camera sits on the head) carries eye-in-head gaze. When the same sample has
the head's yaw and pitch, car-frame gaze = head + eye-in-head angle by angle (the convention of
distractd's recordings: gaze = head rotation + eye rotation) and the stream's :attr:`gaze_frame`
is ``car``; without head pose the gaze stays eye-in-head (``gaze_frame`` ``head``) and the glance
channel works on it directly (see docs/inputs.md).
"""

import math
import re

import numpy as np

from ..._errors import SchemaError
from ._schema import FIELD_INDEX, FIELDS, N_FIELDS, empty_block

__all__ = ["LslMapping", "lsl_mapping", "lsl_stream_id", "STATE_CHANNELS", "STATE_CHANNEL_META",
           "UNIT_SCALES"]

STATE_CHANNELS = ("t_end", "distracted", "score", "quality", "off_road_s")
"""Channels of distractd's LSL state outlets: the window end (s, the stream's clock), 1 distracted
/ 0 attentive / NaN unknown, the detector score, the window quality, the current glance away (s,
NaN without glance channel)."""

STATE_CHANNEL_META = {
    "t_end": {"type": "TimeStamp", "unit": "seconds"},
    "distracted": {"type": "State", "unit": "boolean"},
    "score": {"type": "Score", "unit": "none"},
    "quality": {"type": "Quality", "unit": "normalized"},
    "off_road_s": {"type": "GlanceDuration", "unit": "seconds"},
}
"""``type`` and ``unit`` of each of :data:`STATE_CHANNELS` in an outlet's ``desc/channels/channel``
(beside its ``label``, the XDF/LSL meta-data convention): ``boolean`` is 1/0 with NaN for unknown,
``none`` a dimensionless number (the score is compared with the decision threshold),
``normalized`` a fraction in [0, 1]."""

_DEGREES = dict.fromkeys(("deg", "degree", "degrees"), math.pi / 180.0)
_LENGTHS = {"mm": 1e-3, "millimeter": 1e-3, "millimeters": 1e-3, "cm": 1e-2}
_PERCENT = dict.fromkeys(("%", "percent"), 0.01)
UNIT_SCALES = {
    **{f: _DEGREES for f in FIELDS if f.endswith(("_yaw", "_pitch", "_roll")) or f == "steering"},
    **dict.fromkeys(("head_x", "head_y", "head_z", "lane_offset"), _LENGTHS),
    "speed": {"km/h": 1 / 3.6, "kph": 1 / 3.6, "mph": 0.44704},
    "yaw_rate": dict.fromkeys(("deg/s", "degrees/s"), math.pi / 180.0),
    "accel": {"g": 9.80665},
    "accelerator": _PERCENT, "brake": _PERCENT,
    "headway": {"km": 1e3}, "distance": {"km": 1e3, "mi": 1609.344},
}
"""Per canonical field, the channel units (lower case) that are not the field's own and the scale
to it; any other unit is read as the field's own (:data:`~distractd.pipeline.formats.UNITS`)."""
_EYES = {"right": "r", "left": "l"}
_RELAY_EYES = {"0": "r", "1": "l"}
_RELAY_NORMAL = re.compile(r"gaze_normal([01])_([xyz])")
_RELAY_DIAMETER = re.compile(r"diameter([01])_3d")
_STREAM_ID_BAD = re.compile(r"[^A-Za-z0-9_.:\-]")


def lsl_stream_id(name, source_id=""):
    """The distractd stream id of an LSL stream: ``lsl.<name>`` (``.<source_id>`` when given),
    characters outside ``[A-Za-z0-9_.:-]`` replaced by ``_``, at most 128 characters."""
    text = f"lsl.{name}" + (f".{source_id}" if source_id else "")
    return _STREAM_ID_BAD.sub("_", text)[:128]


class LslMapping:
    """How one LSL stream's channels become canonical fields.

    Attributes
    ----------
    columns : list of (int, int, float)
        ``(channel, field index, scale)`` copied straight (scaled).
    vectors : list of (str, tuple of 3 int)
        ``(eye side "r"/"l", channels of x, y, z)`` gaze vectors turned into yaw and pitch.
    ignored : list of str
        Labels of the channels no rule maps.
    gaze_frame : str
        ``car`` or ``head`` (eye-in-head gaze without head pose in the stream).
    """

    def __init__(self, n_channels, columns, vectors, ignored, eye_in_head):
        self.n_channels = n_channels
        self.columns = columns
        self.vectors = vectors
        self.ignored = ignored
        fields = {FIELDS[field] for _, field, _ in columns}
        self.compose = eye_in_head and {"head_yaw", "head_pitch"} <= fields
        self.gaze_frame = "head" if eye_in_head and not self.compose else "car"

    def decode(self, chunk, timestamps, clock_offset_s):
        """Canonical samples of a pulled chunk.

        Parameters
        ----------
        chunk : array-like of shape (n, n_channels)
            The chunk's values.
        timestamps : array-like of shape (n,)
            Their LSL timestamps (the sender's clock), s.
        clock_offset_s : float
            The inlet's ``time_correction()``, s.

        Returns
        -------
        ndarray of shape (n, N_FIELDS)
        """
        values = np.asarray(chunk, dtype=np.float64).reshape(-1, self.n_channels)
        block = empty_block(len(values))
        block[:, 0] = np.asarray(timestamps, dtype=np.float64) + clock_offset_s
        for channel, field, scale in self.columns:
            block[:, field] = values[:, channel] * scale
        for side, (cx, cy, cz) in self.vectors:
            x, y, z = values[:, cx], values[:, cy], values[:, cz]
            block[:, FIELD_INDEX[f"gaze_{side}_yaw"]] = np.arctan2(x, z)
            block[:, FIELD_INDEX[f"gaze_{side}_pitch"]] = np.arctan2(-y, np.hypot(x, z))
        if self.compose:
            for side in "rl":
                block[:, FIELD_INDEX[f"gaze_{side}_yaw"]] += block[:, FIELD_INDEX["head_yaw"]]
                block[:, FIELD_INDEX[f"gaze_{side}_pitch"]] += block[:, FIELD_INDEX["head_pitch"]]
        return block


def lsl_mapping(stream_name, channel_format, channels, gaze_frame=""):
    """The :class:`LslMapping` of an LSL stream's description.

    Parameters
    ----------
    stream_name : str
        The stream's ``name`` (names errors).
    channel_format : str
        ``string`` for a stream of strings (refused), anything else for numbers.
    channels : list of dict
        Per channel, its ``desc/channels/channel`` entries (``label``, ``type``, ``eye``,
        ``unit``; missing ones empty).
    gaze_frame : str, default=""
        The stream's ``desc/gaze_frame`` (``head`` marks eye-in-head gaze).

    Raises
    ------
    SchemaError
        A string stream, or one without any channel mapped to a canonical field.
    """
    if channel_format == "string":
        raise SchemaError(f"LSL stream {stream_name!r}: string channels carry no samples")
    columns, ignored, parts = [], [], {}
    canonical = {name.lower(): name for name in FIELDS if name != "t"}
    relay = False
    for index, channel in enumerate(channels):
        label = str(channel.get("label", "")).strip()
        kind = str(channel.get("type", "")).strip().lower()
        eye = str(channel.get("eye", "")).strip().lower()
        unit = str(channel.get("unit", "")).strip().lower()
        field = canonical.get(label.lower())
        normal = _RELAY_NORMAL.fullmatch(label.lower())
        diameter = _RELAY_DIAMETER.fullmatch(label.lower())
        if field is not None:
            columns.append((index, FIELD_INDEX[field], _scale(field, unit)))
        elif kind in ("directionx", "directiony", "directionz"):
            for side in (_EYES[eye],) if eye in _EYES else ("r", "l") if eye == "both" else ():
                parts.setdefault(side, {})[kind[-1]] = index
        elif kind in ("diameter", "radius") and (eye in _EYES or eye == "both"):
            scale = 2.0 if kind == "radius" else 1.0
            for side in (_EYES[eye],) if eye in _EYES else ("r", "l"):
                columns.append((index, FIELD_INDEX[f"pupil_{side}"], scale))
        elif kind == "confidence":
            columns.append((index, FIELD_INDEX["confidence"], 1.0))
        elif normal:
            relay = True
            parts.setdefault(_RELAY_EYES[normal[1]], {})[normal[2]] = index
        elif diameter:
            columns.append((index, FIELD_INDEX[f"pupil_{_RELAY_EYES[diameter[1]]}"], 1.0))
        else:
            ignored.append(label or f"channel {index}")
    vectors = [(side, (axes["x"], axes["y"], axes["z"])) for side, axes in parts.items()
               if set(axes) == {"x", "y", "z"}]
    if not columns and not vectors:
        labels = ascii(", ".join(ignored))[1:-1][:240]  # printable and bounded: one log line
        raise SchemaError(f"LSL stream {stream_name!r}: no channel maps to a canonical field "
                          f"(labels: {labels or 'none'}); see docs/inputs.md")
    eye_in_head = gaze_frame.strip().lower() == "head" or relay
    return LslMapping(len(channels), columns, vectors, ignored, eye_in_head)


def _scale(field, unit):
    return UNIT_SCALES.get(field, {}).get(unit, 1.0)
