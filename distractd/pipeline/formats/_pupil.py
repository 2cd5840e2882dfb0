"""Pupil Core datums <-> canonical samples: the mapping in both directions, no sockets.

Pupil Capture serves *Pupil Remote* (a REP socket, port 50020 by default) which answers
``SUB_PORT`` with the port of its IPC backbone; subscribers connect there and receive multipart
``[topic, msgpack payload, *raw frames]`` messages. The adapter subscribes to ``gaze.3d.``,
``pupil.`` and ``blink`` and maps each 3-D gaze datum to one canonical sample:

============================  =====================================================================
canonical field               Pupil datum
============================  =====================================================================
``t``                         gaze ``timestamp`` (Pupil time, s)
``gaze_r_yaw``/``_pitch``     eye 0's gaze normal (``gaze_normals_3d["0"]`` of ``gaze.3d.01.`` or
                              ``gaze_normal_3d`` of ``gaze.3d.0.``): yaw = atan2(x, z),
                              pitch = atan2(-y, hypot(x, z)) in the world camera frame
                              (x right, y down, z forward), rad; NaN in a ``gaze.3d.1.`` datum
``gaze_l_yaw``/``_pitch``     the same for eye 1
``pupil_r``/``pupil_l``       ``diameter_3d`` (mm) of the eye's pupil datum in the gaze datum's
                              ``base_data``, else of the eye's latest ``pupil.<eye>.3d`` datum
``confidence``                gaze ``confidence`` (Capture: mean of the matched pupil datums')
``blink``                     1 between a ``blinks`` onset and offset, 0 otherwise (NaN before the
                              first blink event)
============================  =====================================================================

Eye 0 is the right eye. Pupil Core has no head pose and no eyelid signal: those fields stay NaN.
Its gaze is **eye-in-head** (the world camera sits on the head), :data:`GAZE_FRAME`.

**Gaze Capture maps otherwise is refused, not dropped in silence.** With Capture's 2D gaze mapper
the gaze datums are ``gaze.2d.*``: a point in the world camera image (``norm_pos``) without gaze
normals, so without the eye-in-head angles the model's features are computed from; the surface
tracker's ``surfaces.<name>`` datums place gaze on a surface, not in angles either. The adapter
subscribes to both too, only to refuse them: each such datum raises :class:`UnsupportedGaze`
(``mapping`` one of :data:`REFUSED_MAPPINGS`, ``first`` for the first of its mapping, so a caller
can say it once). Surface datums are refused only when they come alone: beside 3-D gaze (the
surface tracker with the 3D mapper) they are redundant and dropped without a word.

Capture's gaze stream is not monotonic: its real-time matcher pairs the eyes' pupil datums into
binocular ``gaze.3d.01.`` datums stamped with the mean of the pair's timestamps and maps a datum
alone (``gaze.3d.0.``/``gaze.3d.1.``) when its confidence is below 0.6 or no partner is near, so a
datum can be older than the one before it. :class:`PupilAdapter` holds gaze samples for
``reorder_s`` and releases them in timestamp order, so none is lost as ``backwards_t``.

The other direction builds the datums Capture publishes: :func:`pupil_datums` (``pupil.<eye>.2d``
and ``pupil.<eye>.3d`` from a gaze normal, a diameter and a confidence, with the eye camera
geometry below), :func:`gaze_datum` (a gaze datum from one or two matched 3-D pupil datums, with
Capture's topic, confidence and timestamp rules), :func:`gaze_2d_datum` (what the 2D gaze mapper
publishes for the same match), :func:`surface_datum` and :func:`blink_datum`.

Geometry (a pinhole approximation of a Pupil Core headset, not a calibration): eye centres in the
world camera frame are Capture's initial ``Gazer3D`` eye translations, eye 0 at x = +20 mm (the
wearer's right is +x), eye 1 at x = -40 mm; each eye camera looks back at its eye (rotated 180°
about y from the world camera), 192 x 192 px with a 140 px focal length, the eyeball centre 35 mm
in front of it; pye3d's eyeball radius 10.39 mm; the world camera is 1280 x 720 px with a 794 px
focal length; monocular gaze points lie 500 mm along the gaze normal.
"""

import math

import numpy as np

from ._schema import FIELD_INDEX, N_FIELDS, empty_block
from ._wire import Rejected, _clipped, _shown, unpack

__all__ = [
    "PupilAdapter", "UnsupportedGaze", "gaze_angles", "gaze_normal", "pupil_datums", "gaze_datum",
    "gaze_2d_datum", "surface_datum", "blink_datum", "GAZE_FRAME", "MIN_PUPIL_CONFIDENCE",
    "PYE3D_METHOD", "REFUSED_MAPPINGS",
]

GAZE_FRAME = "head"
"""Pupil Core's gaze rotations are eye-in-head (see docs/inputs.md, "Eye-in-head gaze")."""
MIN_PUPIL_CONFIDENCE = 0.6
"""Capture maps pupil datums below this confidence alone (monocular), never in a pair."""
REFUSED_MAPPINGS = ("gaze_2d", "surface")
"""Capture's gaze mappings the adapter refuses: its 2D gaze mapper's ``gaze.2d.*`` datums, and
surface-mapped gaze (``surfaces.<name>``) that comes without 3-D gaze."""
PYE3D_METHOD = "pye3d 0.3.0 real-time"
DETECTOR_2D_METHOD = "2d c++"

EYE_CENTERS_MM = {"0": (20.0, 15.0, -20.0), "1": (-40.0, 15.0, -20.0)}
_EYE_RADIUS_MM = 10.39
_EYE_SPHERE_MM = (0.0, 0.0, 35.0)     # eyeball centre in the eye camera frame
_EYE_CAMERA_FLIP = (-1.0, 1.0, -1.0)  # eye camera <-> world camera rotation (its own inverse)
_EYE_PX, _EYE_FOCAL_PX = 192.0, 140.0
_WORLD_PX, _WORLD_FOCAL_PX = (1280.0, 720.0), 794.0
_GAZE_DISTANCE_MM = 500.0

_COLUMNS = {name: FIELD_INDEX[name] for name in (
    "t", "gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch", "pupil_r", "pupil_l",
    "confidence", "blink")}
_EYE_FIELDS = {"0": ("gaze_r_yaw", "gaze_r_pitch", "pupil_r"),
               "1": ("gaze_l_yaw", "gaze_l_pitch", "pupil_l")}


def gaze_angles(normal):
    """``(yaw, pitch)`` in radians of a gaze normal ``(x, y, z)`` in Pupil's world camera frame."""
    x, y, z = (float(v) for v in normal)
    return math.atan2(x, z), math.atan2(-y, math.hypot(x, z))


def gaze_normal(yaw_rad, pitch_rad):
    """The unit gaze normal ``[x, y, z]`` (Pupil world camera frame) of a yaw and pitch in rad."""
    cos_pitch = math.cos(pitch_rad)
    return [math.sin(yaw_rad) * cos_pitch, -math.sin(pitch_rad), math.cos(yaw_rad) * cos_pitch]


def _eye_image(point):
    """Pixel coordinates of a point (mm) in the eye camera frame."""
    return (_EYE_FOCAL_PX * point[0] / point[2] + _EYE_PX / 2,
            _EYE_FOCAL_PX * point[1] / point[2] + _EYE_PX / 2)


_SPHERE_PX = _eye_image(_EYE_SPHERE_MM)
_SPHERE_DIAMETER_PX = 2 * _EYE_FOCAL_PX * _EYE_RADIUS_MM / _EYE_SPHERE_MM[2]


def pupil_datums(eye, timestamp, normal, diameter_mm, confidence):
    """The ``pupil.<eye>.2d`` and ``pupil.<eye>.3d`` datums of one eye camera frame.

    Parameters
    ----------
    eye : int
        0 (right eye) or 1 (left eye).
    timestamp : float
        The frame's Pupil time in s.
    normal : sequence of 3 float
        The eye's unit gaze normal in the world camera frame.
    diameter_mm : float
        The pupil's diameter in mm.
    confidence : float
        Detection confidence, 0..1.

    Returns
    -------
    list of dict
        The 2-D datum, then the 3-D datum (pye3d's fields), each holding its ``topic``.
    """
    x, y, z = (flip * float(v) for flip, v in zip(_EYE_CAMERA_FLIP, normal))
    centre = [s + _EYE_RADIUS_MM * n for s, n in zip(_EYE_SPHERE_MM, (x, y, z))]
    u, v = _eye_image(centre)
    major_px = _EYE_FOCAL_PX * diameter_mm / centre[2]
    minor_px = major_px * abs(x * centre[0] + y * centre[1] + z * centre[2]) / math.hypot(*centre)
    ellipse = {"center": [u, v], "axes": [minor_px, major_px],
               "angle": math.degrees(math.atan2(y, x)) + 90.0}
    base = {"id": eye, "timestamp": timestamp, "confidence": confidence,
            "norm_pos": [u / _EYE_PX, 1.0 - v / _EYE_PX], "diameter": major_px,
            "ellipse": ellipse}
    datum_3d = {
        **base, "topic": f"pupil.{eye}.3d", "method": PYE3D_METHOD, "location": [u, v],
        "sphere": {"center": list(_EYE_SPHERE_MM), "radius": _EYE_RADIUS_MM},
        "projected_sphere": {"center": list(_SPHERE_PX), "axes": [_SPHERE_DIAMETER_PX] * 2,
                             "angle": 0.0},
        "circle_3d": {"center": centre, "normal": [x, y, z], "radius": diameter_mm / 2},
        "diameter_3d": diameter_mm, "model_confidence": 1.0,
        "theta": math.acos(max(-1.0, min(1.0, y))), "phi": math.atan2(z, x)}
    return [{**base, "topic": f"pupil.{eye}.2d", "method": DETECTOR_2D_METHOD}, datum_3d]


def _world_normal(datum):
    return np.multiply(_EYE_CAMERA_FLIP, datum["circle_3d"]["normal"])


def _norm_pos(point):
    (width, height), focal = _WORLD_PX, _WORLD_FOCAL_PX
    return [0.5 + focal * point[0] / point[2] / width, 0.5 - focal * point[1] / point[2] / height]


def _nearest_point(c0, n0, c1, n1):
    """Midpoint of the closest points of two gaze lines; the cyclopean point at 500 mm when they
    are (nearly) parallel or meet behind the eyes."""
    w = c0 - c1
    b, d, e = n0 @ n1, n0 @ w, n1 @ w
    denominator = 1.0 - b * b
    if denominator > 1e-9:
        s, r = (b * e - d) / denominator, (e - b * d) / denominator
        if s > 0 and r > 0:
            return (c0 + s * n0 + c1 + r * n1) / 2
    cyclop = n0 + n1
    return (c0 + c1) / 2 + _GAZE_DISTANCE_MM * cyclop / np.linalg.norm(cyclop)


def gaze_datum(pupils):
    """The gaze datum Capture's 3-D gaze mapper publishes for one match of 3-D pupil datums.

    Parameters
    ----------
    pupils : list of dict
        One datum (monocular, ``gaze.3d.<eye>.``) or two (eye 0, eye 1: ``gaze.3d.01.``).

    Returns
    -------
    dict
        With Capture's ``topic``, ``confidence`` and ``timestamp`` (means over the match),
        ``base_data`` (the match), ``gaze_point_3d``, ``norm_pos`` and the eye centres and
        normals (``eye_centers_3d``/``gaze_normals_3d`` keyed by eye, or ``eye_center_3d``/
        ``gaze_normal_3d``).
    """
    normals = {str(p["id"]): _world_normal(p) for p in pupils}
    centres = {eye: np.array(EYE_CENTERS_MM[eye]) for eye in normals}
    if len(pupils) == 2:
        point = _nearest_point(centres["0"], normals["0"], centres["1"], normals["1"])
        geometry = {"topic": "gaze.3d.01.",
                    "eye_centers_3d": {eye: c.tolist() for eye, c in centres.items()},
                    "gaze_normals_3d": {eye: n.tolist() for eye, n in normals.items()}}
    else:
        (eye, normal), = normals.items()
        point = centres[eye] + _GAZE_DISTANCE_MM * normal
        geometry = {"topic": f"gaze.3d.{eye}.", "eye_center_3d": centres[eye].tolist(),
                    "gaze_normal_3d": normal.tolist()}
    if point[2] < 0:  # Capture flips a gaze point behind the world camera
        point = -point
    return {**geometry, "gaze_point_3d": point.tolist(), "norm_pos": _norm_pos(point),
            "confidence": float(np.mean([p["confidence"] for p in pupils])),
            "timestamp": float(np.mean([p["timestamp"] for p in pupils])),
            "base_data": pupils}


def gaze_2d_datum(gaze):
    """What Capture's 2D gaze mapper publishes for the match of a 3-D ``gaze`` datum
    (:func:`gaze_datum`): ``gaze.2d.<eyes>.`` with the world image point, confidence, timestamp
    and the matched 2-D pupil datums, and no gaze normals."""
    eyes = gaze["topic"][len("gaze.3d."):]
    base = [{**pupil, "topic": f"pupil.{pupil['id']}.2d", "method": DETECTOR_2D_METHOD}
            for pupil in gaze["base_data"]]
    return {"topic": f"gaze.2d.{eyes}", "norm_pos": gaze["norm_pos"],
            "confidence": gaze["confidence"], "timestamp": gaze["timestamp"], "base_data": base}


def surface_datum(name, gazes, timestamp):
    """A ``surfaces.<name>`` datum (Capture's surface tracker) placing ``gazes`` on a surface that
    fills the world image (surface position = image position)."""
    on_surface = [{"topic": f"{gaze['topic']}_on_surface", "norm_pos": gaze["norm_pos"],
                   "confidence": gaze["confidence"], "on_surf": True,
                   "base_data": [gaze["topic"], gaze["timestamp"]],
                   "timestamp": gaze["timestamp"]} for gaze in gazes]
    return {"topic": f"surfaces.{name}", "name": name, "timestamp": timestamp,
            "gaze_on_surfaces": on_surface, "fixations_on_surfaces": []}


class UnsupportedGaze(Exception):
    """A datum of a gaze mapping :class:`PupilAdapter` cannot read (:data:`REFUSED_MAPPINGS`).

    Attributes
    ----------
    mapping : str
        ``gaze_2d`` or ``surface``.
    first : bool
        Whether it is the adapter's first refused datum of this mapping.
    """

    def __init__(self, mapping, first, message):
        super().__init__(message)
        self.mapping = mapping
        self.first = first


_REFUSALS = {
    "gaze.2d.": ("gaze_2d", "Capture's 2D gaze mapper gives a point in the world image, without "
                            "the gaze angles the model's features need"),
    "surfaces.": ("surface", "surface-mapped gaze gives positions on a surface, without the gaze "
                             "angles the model's features need, and no 3-D gaze comes beside it"),
}


def blink_datum(timestamp, onset, base_data=()):
    """A ``blinks`` datum (Capture's blink detector) for a blink onset or offset at ``timestamp``."""
    return {"topic": "blinks", "type": "onset" if onset else "offset", "timestamp": timestamp,
            "confidence": 1.0, "base_data": list(base_data), "record": True}


class PupilAdapter:
    """Turn Pupil backbone messages into canonical samples, released in timestamp order.

    Parameters
    ----------
    reorder_s : float, default=0.25
        How long (s of Pupil time) a gaze sample is held for older ones still to come; a sample
        older than one already released stays late (the pipeline counts it ``backwards_t``).

    Attributes
    ----------
    diameter_mm : dict
        Latest 3-D pupil diameter of eye ``"0"`` and ``"1"``, in mm.
    blink : float
        1.0 inside a blink, 0.0 outside, NaN before the first blink event.
    n_held : int
        Gaze samples waiting for release.
    """

    TOPICS = ("gaze.3d.", "pupil.", "blink", *_REFUSALS)
    GAZE_FRAME = GAZE_FRAME

    def __init__(self, reorder_s=0.25):
        self.reorder_s = reorder_s
        self.diameter_mm = {"0": math.nan, "1": math.nan}
        self.blink = math.nan
        self.refused = dict.fromkeys(REFUSED_MAPPINGS, 0)
        self._surfaces_alone = 0  # surface datums in a row without a 3-D gaze datum between
        self._held = []

    @property
    def n_held(self):
        return len(self._held)

    def update(self, frames):
        """Consume one message; return the block of samples it releases (often 0 rows).

        Raises
        ------
        Rejected
            Undecodable payloads, non-map datums, missing timestamps and wrongly typed values.
        UnsupportedGaze
            A datum of a gaze mapping the adapter cannot read (counted in :attr:`refused`).
        """
        if len(frames) < 2:
            raise Rejected("bad_topic", f"pupil: expected [topic, payload, ...], got "
                                        f"{len(frames)} frame(s)")
        topic = ascii(bytes(frames[0][:64]))[2:-1]  # printable: a log line stays one line
        if topic.startswith(("gaze.2d.", "surfaces.")):
            self._refuse(topic)
            return empty_block(0)
        datum = unpack(frames[1], f"pupil {topic}", max_str_len=65536)
        timestamp = datum.get("timestamp")
        if isinstance(timestamp, bool) or not isinstance(timestamp, (int, float)):
            raise Rejected("missing_t", f"pupil {topic}: timestamp must be a number, "
                                        f"got {_shown(timestamp)}")
        try:
            if topic.startswith("gaze.3d."):
                self._surfaces_alone = 0
                self._held.append(self._gaze(topic, datum, float(timestamp)))
                return self._release(float(timestamp) - self.reorder_s)
            if topic.startswith("pupil.") and topic.endswith(".3d"):
                eye = str(datum.get("id", topic.split(".")[1]))
                if eye in self.diameter_mm:
                    self.diameter_mm[eye] = float(datum["diameter_3d"])
            elif topic.startswith("blink"):
                self.blink = {"onset": 1.0, "offset": 0.0}.get(datum.get("type"), self.blink)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            raise Rejected("wrong_type", f"pupil {topic}: {type(exc).__name__}: "
                                         f"{_clipped(exc)}") from None
        return empty_block(0)

    def _refuse(self, topic):
        """Raise :class:`UnsupportedGaze` for a 2-D gaze datum, and for a surface datum that
        follows another without 3-D gaze between (beside 3-D gaze it is redundant: dropped)."""
        prefix = "gaze.2d." if topic.startswith("gaze.2d.") else "surfaces."
        if prefix == "surfaces.":
            self._surfaces_alone += 1
            if self._surfaces_alone < 2:
                return
        mapping, why = _REFUSALS[prefix]
        self.refused[mapping] += 1
        raise UnsupportedGaze(mapping, self.refused[mapping] == 1,
                              f"pupil {topic}: {why}; distractd reads 3-D gaze (gaze.3d.*): "
                              f"select the 3D gaze mapper in Capture's calibration settings and "
                              f"calibrate again")

    def flush(self):
        """Release every held sample (the stream went quiet); a block, possibly of 0 rows."""
        return self._release(math.inf)

    def _release(self, until_t):
        held = self._held
        if not held or min(row[0] for row in held) > until_t:
            return empty_block(0)
        held.sort(key=lambda row: row[0])
        n = next((i for i, row in enumerate(held) if row[0] > until_t), len(held))
        block = np.array(held[:n]).reshape(n, N_FIELDS)
        del held[:n]
        return block

    def _gaze(self, topic, datum, timestamp):
        row = empty_block(1)[0]
        row[_COLUMNS["t"]] = timestamp
        row[_COLUMNS["confidence"]] = float(datum["confidence"])
        if "gaze_normals_3d" in datum:
            normals = {str(eye): normal for eye, normal in datum["gaze_normals_3d"].items()}
        else:
            normals = {topic[len("gaze.3d."):].rstrip(".")[:1]: datum["gaze_normal_3d"]}
        diameters = dict(self.diameter_mm)
        for pupil in datum.get("base_data") or ():
            if isinstance(pupil, dict) and "diameter_3d" in pupil:
                diameters[str(pupil.get("id"))] = float(pupil["diameter_3d"])
        for eye, (yaw, pitch, diameter) in _EYE_FIELDS.items():
            if eye in normals:
                row[[_COLUMNS[yaw], _COLUMNS[pitch]]] = gaze_angles(normals[eye])
            row[_COLUMNS[diameter]] = diameters[eye]
        row[_COLUMNS["blink"]] = self.blink
        return row
