"""The canonical sample: field names, units, ranges, and conversions between its three forms.

A sample is one eye/head-tracker frame (DESIGN §2), optionally with the car's own signals beside
it (:data:`VEHICLE_FIELDS`, read from the vehicle bus; often a second source at its own rate). Inside distractd a run of samples is a *block*: a
C-contiguous ``float64`` array of shape ``(n_samples, N_FIELDS)`` whose columns are :data:`FIELDS`
in order, with NaN for every field a tracker did not supply. On the wire a sample is a *map*
(``{"t": 12.3, "gaze_r_yaw": 0.01, ...}``) or a block with its own field order; in files it is a CSV
row with canonical column names. The functions here convert between these forms and reject what does
not fit with a :class:`~distractd.SchemaError` naming the field and the value.
"""

import math
import numbers

import numpy as np

from ..._errors import SchemaError

__all__ = [
    "FIELDS", "FIELD_INDEX", "N_FIELDS", "UNITS", "RANGES", "OPTIONAL_FIELDS", "SPATIAL_FIELDS",
    "VEHICLE_FIELDS", "empty_block", "block_from_maps", "row_from_map", "block_from_columns", "maps_from_block",
]

FIELDS = (
    "t",
    "head_x", "head_y", "head_z",
    "head_yaw", "head_pitch", "head_roll",
    "gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch",
    "eyelid_r", "eyelid_l",
    "pupil_r", "pupil_l",
    "confidence",
    "saccade", "blink",
    "speed", "steering", "lane_offset", "accel", "accelerator", "brake", "yaw_rate", "headway",
    "distance",
)
"""Canonical field names, in block column order: the tracker's, then the vehicle's."""

VEHICLE_FIELDS = FIELDS[FIELDS.index("speed"):]
"""The vehicle's signals (DESIGN §2), all optional, in the vehicle's own axes (ISO 8855: x forward,
y left, angles counter-clockwise positive seen from above):

- ``speed``: forward speed over ground, m/s;
- ``steering``: steering-wheel angle, rad, positive turning left (0 straight ahead);
- ``lane_offset``: lateral offset of the car's centre from the lane centre, m, positive left;
- ``accel``: longitudinal acceleration, m/s², positive speeding up;
- ``accelerator``, ``brake``: pedal positions, 0 released to 1 fully pressed;
- ``yaw_rate``: rate of turn about the vertical axis, rad/s, positive turning left;
- ``headway``: distance gap to the lead vehicle, m (NaN without one);
- ``distance``: distance travelled since an arbitrary origin (an odometer), m."""

N_FIELDS = len(FIELDS)
FIELD_INDEX = {name: i for i, name in enumerate(FIELDS)}

UNITS = {
    "t": "s",
    "head_x": "m", "head_y": "m", "head_z": "m",
    "head_yaw": "rad", "head_pitch": "rad", "head_roll": "rad",
    "gaze_r_yaw": "rad", "gaze_r_pitch": "rad", "gaze_l_yaw": "rad", "gaze_l_pitch": "rad",
    "eyelid_r": "1", "eyelid_l": "1",
    "pupil_r": "mm", "pupil_l": "mm",
    "confidence": "1",
    "saccade": "1", "blink": "1",
    "speed": "m/s", "steering": "rad", "lane_offset": "m", "accel": "m/s2", "accelerator": "1",
    "brake": "1", "yaw_rate": "rad/s", "headway": "m", "distance": "m",
}

RANGES = {
    "t": (-math.inf, math.inf),
    "head_x": (-2.0, 2.0), "head_y": (-2.0, 2.0), "head_z": (-2.0, 2.0),
    "head_yaw": (-math.pi, math.pi), "head_pitch": (-math.pi / 2, math.pi / 2),
    "head_roll": (-math.pi, math.pi),
    "gaze_r_yaw": (-math.pi / 2, math.pi / 2), "gaze_r_pitch": (-math.pi / 2, math.pi / 2),
    "gaze_l_yaw": (-math.pi / 2, math.pi / 2), "gaze_l_pitch": (-math.pi / 2, math.pi / 2),
    "eyelid_r": (0.0, 1.5), "eyelid_l": (0.0, 1.5),
    "pupil_r": (0.5, 12.0), "pupil_l": (0.5, 12.0),
    "confidence": (0.0, 1.0),
    "saccade": (0.0, 1.0), "blink": (0.0, 1.0),
    "speed": (-15.0, 100.0), "steering": (-4 * math.pi, 4 * math.pi), "lane_offset": (-10.0, 10.0),
    "accel": (-20.0, 20.0), "accelerator": (0.0, 1.0), "brake": (0.0, 1.0),
    "yaw_rate": (-math.pi, math.pi), "headway": (0.0, 500.0),
    "distance": (-math.inf, math.inf),
}
"""Physically plausible closed range of each field. Head position is metres from the tracker origin
(a head box is well under a metre); eyelid opening may exceed 1 (eyes wider than the open baseline);
pupils are 0.5-12 mm; speed allows reversing (to 15 m/s) and 360 km/h; the steering wheel turns
at most two turns either way; a lane offset beyond 10 m is off the road; accelerations beyond 2 g
are not driving; a radar's headway ends at 500 m. Values outside are rejected by the pipeline's validation, not here."""

OPTIONAL_FIELDS = frozenset(("eyelid_r", "eyelid_l", "pupil_r", "pupil_l", "saccade", "blink")
                            + VEHICLE_FIELDS)
"""Fields a tracker commonly lacks, and the vehicle's (DESIGN §2). Every field but ``t`` may be missing in practice
(a Pupil Core stream has no head pose); missing fields are NaN."""

SPATIAL_FIELDS = FIELDS[1:11]
"""The 10 spatial measures of Table 5.1 (head position, head rotation, gaze rotation)."""

_PLAIN_TYPES = frozenset((float, int, type(None)))
_MISSING_ROW = (math.nan,) * N_FIELDS


def empty_block(n_samples):
    """Return an all-NaN block of ``n_samples`` rows."""
    return np.full((n_samples, N_FIELDS), np.nan)


def block_from_maps(samples):
    """Convert an iterable of sample maps to a block.

    Keys are canonical field names; ``"v"`` and ``"seq"`` are envelope keys and ignored, as are
    unknown keys (so a newer sender's extra fields do not break an older receiver). ``t`` is required.
    Values must be real numbers (``None`` means missing).

    >>> block_from_maps([{"t": 0.5, "gaze_r_yaw": 0.01}])[0, :2]
    array([0.5, nan])
    """
    values = []
    n_rows = 0
    for sample in samples:
        values.extend(row_from_map(sample, n_rows))
        n_rows += 1
    try:
        return np.array(values, dtype=np.float64).reshape(n_rows, N_FIELDS)
    except OverflowError:  # an int or fraction beyond float64 (msgpack cannot carry one)
        index = next(i for i, value in enumerate(values) if _overflows(value))
        raise SchemaError(f"samples[{index // N_FIELDS}].{FIELDS[index % N_FIELDS]} must be a "
                          f"number within float64's range (±1.8e308), got a "
                          f"{type(values[index]).__name__} beyond it") from None


def row_from_map(sample, row=0):
    """The values of one sample map in :data:`FIELDS` order (``None`` for a missing field, which
    ``np.array(..., dtype=np.float64)`` makes NaN), checked as :func:`block_from_maps` checks it;
    ``row`` is the sample's index, for the error's message. Range is left to the conversion: an
    int beyond float64 passes here (msgpack carries none)."""
    # fast path, the daemon's per-message case: a dict whose fields hold plain numbers (other
    # keys are ignored either way)
    if type(sample) is dict and sample.get("t") is not None:
        values = list(map(sample.get, FIELDS, _MISSING_ROW))
        if _PLAIN_TYPES.issuperset(map(type, values)):
            return values
    return _checked_row(sample, row)


def _overflows(value):
    """Whether a row's value is a number beyond float64 (None, a missing field, is not)."""
    if value is None:
        return False
    try:
        float(value)
    except OverflowError:
        return True
    return False


def _checked_row(sample, row):
    """The values of one sample map in :data:`FIELDS` order, checked field by field."""
    if not hasattr(sample, "items"):
        raise SchemaError(f"samples[{row}] must be a map of field names to numbers, "
                          f"got {type(sample).__name__}")
    if sample.get("t") is None:
        raise SchemaError(f"samples[{row}].t is required, got {sample.get('t')!r}")
    values = list(_MISSING_ROW)
    for name, value in sample.items():
        column = FIELD_INDEX.get(name)
        if column is None or value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise SchemaError(f"samples[{row}].{name} must be a number, got {value!r}")
        values[column] = value
    return values


def block_from_columns(fields, data):
    """Reorder a 2-D array whose columns are ``fields`` into a canonical block.

    Used for the wire's block form and for CSV files, whose field order is the sender's.
    Unknown or repeated field names and a missing ``t`` are errors.
    """
    fields = list(fields)
    data = np.asarray(data, dtype=np.float64)
    if data.ndim != 2 or data.shape[1] != len(fields):
        raise SchemaError(f"data must have shape (n_samples, {len(fields)}) for fields {fields}, "
                          f"got {data.shape}")
    if "t" not in fields:
        raise SchemaError(f"fields must include 't', got {fields}")
    columns = []
    for name in fields:
        if name not in FIELD_INDEX:
            raise SchemaError(f"fields has unknown field {name!r}; canonical fields are {FIELDS}")
        columns.append(FIELD_INDEX[name])
    if len(set(columns)) != len(columns):
        raise SchemaError(f"fields has a repeated name: {fields}")
    block = empty_block(len(data))
    block[:, columns] = data
    return block


def maps_from_block(block):
    """Convert a block to a list of sample maps, leaving out NaN fields."""
    block = np.asarray(block, dtype=np.float64)
    return [{name: float(value) for name, value in zip(FIELDS, row) if not math.isnan(value)}
            for row in block]
