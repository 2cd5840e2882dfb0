"""Real drives of Taamneh et al. 2017 ("A multimodal dataset for various forms of distracted
driving", Scientific Data 4:170110): one CSV per subject, one row per second, into recordings.

Each subject's file holds up to eight drives (``Drive`` 1-8); each becomes one canonical
:class:`Recording` with ``meta`` ``source="taamneh"``, ``driver_id`` (the file's stem, ``T001``),
``drive`` (the session number), ``protocol`` (:data:`DRIVES`) and ``recording_id``
(``T001-d7``). Labels come from ``Stimulus``: 1 while a task runs (questions, texting), 0 otherwise.

The tracker (faceLAB, dashboard-mounted) gives the gaze footprint on the simulator's central screen
in pixels, with ``0, 0`` for track loss; the screen's geometry is not in the data. Gaze becomes an
angle by an assumed linear scale, :data:`DEG_PER_PX` degrees per pixel about the centre
:data:`CENTER_PX` (a 1024-pixel-wide central channel spanning about 41°, typical of the study's
simulator class): absolute angles are therefore approximate, but the pipeline judges gaze against
the driver's own learned road centre and per-stream baselines, which a linear scale error changes
only in proportion. Both eyes get the same footprint angles (the data has one gaze point);
``confidence`` is 1 for a valid footprint and 0 for track loss; pupil diameters (metres in the
file, zeros where absent) become millimetres or NaN. There is no head pose, eyelid or blink signal:
those fields stay NaN.

The simulator's vehicle signals become the vehicle fields (:data:`VEHICLE_COLUMNS`), with units
checked on the 36 subjects' drives 2-8:

- ``Speed`` is km/h (median 72): on drives 2, 3 and 8, and on every drive of T055-T086, the
  ``Distance`` covered per row is ``Speed / 3.6`` to 1-3 %; it becomes ``speed`` in m/s. (Drives
  4-7 of T001-T051 cover about 1.34 times less distance per row than their speed gives: their
  rows span less than a second of simulator time. The labels, the gaze and every vehicle signal
  share those rows, so features stay consistent within a drive; durations in those drives are in
  rows, not simulator seconds.)
- ``Steering`` is the steering-wheel angle in rad (1st-99th percentile ±0.13, extremes ±2π);
  its sign is the simulator's (assumed positive left).
- ``LaneOffset`` is metres from the lane centre: ``Lane.Position + LaneOffset`` is 1.825 m (half
  of a 3.65 m lane) in every row where the car keeps its lane; ``Lane.Position`` grows as the
  offset falls, so a positive offset is towards the lane's left edge (assumed, as ISO 8855).
- ``Acceleration`` is not an acceleration: it is 0 in 15 % of the rows (nearly always while the
  brake is on), never below -4, up to 75 with a median of 6.8, and follows the next second's speed
  change (r 0.58): the accelerator pedal, read as percent of travel (``accelerator`` =
  ``Acceleration / 100``, clipped to 0-1). ``accel`` (m/s²) is not in the data and stays NaN.
- ``Brake`` is 0 in 88 % of the rows and saturates at 265 (its 95th-99th percentiles 264-265):
  the brake pedal in the simulator's units, ``brake`` = ``Brake / 265``, clipped to 0-1.
- ``Distance`` is metres along the route (about 11.1 km a drive, the same route every drive):
  ``distance``. It places a window on the road, so a task can be compared with the normal drive
  over the same stretch.

There is no yaw rate or headway: those fields stay NaN.
"""

import csv
import math
from pathlib import Path

import numpy as np

from ..._errors import RecordingError
from ._recording import Recording
from ._schema import FIELD_INDEX, empty_block

__all__ = ["read_taamneh", "is_taamneh", "DRIVES", "DEG_PER_PX", "CENTER_PX", "VEHICLE_COLUMNS"]

DRIVES = {1: "baseline", 2: "practice", 3: "relaxing", 4: "normal", 5: "cognitive",
          6: "emotional", 7: "texting", 8: "failure"}
"""The study's sessions: 1 sitting without driving, 2-8 driving on the same route."""

DEG_PER_PX = 0.04
"""Assumed gaze scale in degrees per screen pixel (see the module docstring)."""

CENTER_PX = (790.0, 750.0)
"""Assumed screen point of gaze yaw and pitch 0, in pixels (the middle of the typical footprint
range x 508-1073, y 540-967)."""

VEHICLE_COLUMNS = {
    "Speed": ("speed", 1 / 3.6),
    "Steering": ("steering", 1.0),
    "LaneOffset": ("lane_offset", 1.0),
    "Acceleration": ("accelerator", 1 / 100),
    "Brake": ("brake", 1 / 265),
    "Distance": ("distance", 1.0),
}
"""The study's vehicle columns: canonical field and the scale to its unit (see the module
docstring for how each unit was checked); pedals are clipped to 0-1 after scaling."""

_PEDALS = ("accelerator", "brake")

_REQUIRED = ("Time", "Drive", "Stimulus", "Gaze.X.Pos", "Gaze.Y.Pos")


def is_taamneh(path):
    """Whether ``path`` is a CSV whose header has the study's columns."""
    try:
        with open(path, newline="", encoding="utf-8") as file:
            header = next(csv.reader(file), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return False
    return all(name in header for name in _REQUIRED)


def read_taamneh(path, drives=(2, 3, 4, 5, 6, 7, 8)):
    """Read one subject's file into one recording per drive.

    Parameters
    ----------
    path : str or Path
        A ``T0NN.csv`` file.
    drives : sequence of int, default=(2, 3, 4, 5, 6, 7, 8)
        Sessions to keep (1, sitting without driving, is left out by default).

    Returns
    -------
    list of Recording
        In drive order; drives absent from the file are skipped.

    Raises
    ------
    RecordingError
        A missing column or a cell that is not a number or ``NA``, naming the file, line and
        column.
    """
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8") as file:
            rows = list(csv.reader(file))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise RecordingError(f"{path}: cannot read: {exc}") from None
    if not rows:
        raise RecordingError(f"{path}: empty file")
    header = rows[0]
    missing = [name for name in _REQUIRED if name not in header]
    if missing:
        raise RecordingError(f"{path}: not a Taamneh et al. file: missing column(s) {missing}")
    columns = ("Time", "Drive", "Stimulus", "Gaze.X.Pos", "Gaze.Y.Pos", "Rt.Pupil.Diameter",
               "Lft.Pupil.Diameter") + tuple(VEHICLE_COLUMNS)
    index = [header.index(name) if name in header else None for name in columns]
    values = np.full((len(rows) - 1, len(columns)), np.nan)
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise RecordingError(f"{path}:{line}: expected {len(header)} cells, got {len(row)}")
        for j, (name, i) in enumerate(zip(columns, index)):
            if i is not None:
                values[line - 2, j] = _number(path, line, name, row[i])
    recordings = []
    for drive in drives:
        rows_of_drive = values[values[:, 1] == drive]
        if len(rows_of_drive):
            recordings.append(_recording(path.stem, drive, rows_of_drive))
    return recordings


def _number(path, line, name, text):
    if text in ("NA", ""):
        return math.nan
    try:
        return float(text)
    except ValueError:
        raise RecordingError(f"{path}:{line}: column {name!r} must be a number or NA, "
                             f"got {text!r}") from None


def _recording(subject, drive, rows):
    t, stimulus, x, y, pupil_r, pupil_l = (rows[:, j] for j in (0, 2, 3, 4, 5, 6))
    block = empty_block(len(rows))
    for j, (field, scale) in enumerate(VEHICLE_COLUMNS.values(), start=7):
        values = rows[:, j] * scale
        block[:, FIELD_INDEX[field]] = np.clip(values, 0.0, 1.0) if field in _PEDALS else values
    block[:, FIELD_INDEX["t"]] = t
    lost = ~np.isfinite(x) | ~np.isfinite(y) | ((x == 0) & (y == 0))
    yaw = np.radians((x - CENTER_PX[0]) * DEG_PER_PX)
    pitch = np.radians(-(y - CENTER_PX[1]) * DEG_PER_PX)  # screen y grows downwards
    for eye in ("r", "l"):
        block[:, FIELD_INDEX[f"gaze_{eye}_yaw"]] = np.where(lost, np.nan, yaw)
        block[:, FIELD_INDEX[f"gaze_{eye}_pitch"]] = np.where(lost, np.nan, pitch)
    block[:, FIELD_INDEX["confidence"]] = np.where(lost, 0.0, 1.0)
    for field, metres in (("pupil_r", pupil_r), ("pupil_l", pupil_l)):
        block[:, FIELD_INDEX[field]] = np.where(metres > 0, metres * 1e3, np.nan)
    labels = np.where(np.isfinite(stimulus), (stimulus > 0).astype(np.int8), -1)
    protocol = DRIVES.get(int(drive), f"drive{int(drive)}")
    meta = {"source": "taamneh", "driver_id": subject, "drive": int(drive),
            "protocol": protocol, "recording_id": f"{subject}-d{int(drive)}", "rate_hz": 1.0,
            "gaze_scale_deg_per_px": DEG_PER_PX, "gaze_center_px": list(CENTER_PX)}
    return Recording(block, labels.astype(np.int8), meta)
