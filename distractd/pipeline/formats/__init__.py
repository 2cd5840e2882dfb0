"""The canonical sample and all its forms: schema, recordings, wire messages, Pupil Core datums.

Pure encode/decode, no sockets: the daemon and the simulators both speak through this package and
never import each other (DESIGN §1).
"""

from ._files import RECORDING_SUFFIXES, read_recordings, recording_files
from ._label_files import (
    LABEL_SIDECAR_SUFFIX, check_label_file, check_overwrite, label_extent, label_sidecar,
    labels_by_recording, read_label_identity, read_reviewed, recording_identity,
    write_label_identity,
)
from ._lsl import (
    STATE_CHANNEL_META, STATE_CHANNELS, UNIT_SCALES, LslMapping, lsl_mapping, lsl_stream_id,
)
from ._parquet import write_table
from ._pupil import (
    GAZE_FRAME, MIN_PUPIL_CONFIDENCE, REFUSED_MAPPINGS, PupilAdapter, UnsupportedGaze, blink_datum,
    gaze_2d_datum, gaze_angles, gaze_datum, gaze_normal, pupil_datums, surface_datum,
)
from ._recording import (
    Recording, describe, label_intervals, labels_from_intervals, read_csv, read_intervals,
    read_recording, write_csv, write_intervals, write_recording,
)
from ._taamneh import CENTER_PX, DEG_PER_PX, DRIVES, VEHICLE_COLUMNS, is_taamneh, read_taamneh
from ._schema import (
    FIELD_INDEX, FIELDS, N_FIELDS, OPTIONAL_FIELDS, RANGES, SPATIAL_FIELDS, UNITS, VEHICLE_FIELDS,
    block_from_columns, block_from_maps, empty_block, maps_from_block,
)
from ._wire import (
    FATIGUE_UNAVAILABLE, MAX_SEQ, MESSAGE_REJECT_REASONS, STATE_NAMES, VERSION, Limits, Rejected,
    alert_event,
    decode_message, decode_output, decode_samples, encode_block, encode_event, encode_map, encode_state,
    glance_state, segment_event, state_message, transition_event, unpack, valid_stream_id,
)

__all__ = [
    "FIELDS", "FIELD_INDEX", "N_FIELDS", "UNITS", "RANGES", "OPTIONAL_FIELDS", "SPATIAL_FIELDS",
    "VEHICLE_FIELDS", "empty_block", "block_from_maps", "block_from_columns", "maps_from_block",
    "Recording", "read_recording", "write_recording", "read_csv", "write_csv", "describe",
    "label_intervals", "labels_from_intervals", "read_intervals", "write_intervals",
    "VERSION", "STATE_NAMES", "FATIGUE_UNAVAILABLE", "MESSAGE_REJECT_REASONS", "MAX_SEQ", "Rejected", "Limits", "unpack",
    "decode_message", "decode_samples", "valid_stream_id",
    "encode_map", "encode_block", "state_message", "transition_event", "segment_event",
    "glance_state", "alert_event", "encode_state", "encode_event", "decode_output",
    "PupilAdapter", "gaze_angles", "gaze_normal", "pupil_datums", "gaze_datum", "blink_datum",
    "GAZE_FRAME", "MIN_PUPIL_CONFIDENCE", "UnsupportedGaze", "REFUSED_MAPPINGS", "gaze_2d_datum",
    "surface_datum",
    "LslMapping", "lsl_mapping", "lsl_stream_id", "STATE_CHANNELS", "STATE_CHANNEL_META",
    "UNIT_SCALES",
    "read_taamneh", "is_taamneh", "DRIVES", "VEHICLE_COLUMNS", "DEG_PER_PX", "CENTER_PX", "read_recordings",
    "recording_files", "RECORDING_SUFFIXES", "LABEL_SIDECAR_SUFFIX", "recording_identity", "label_sidecar",
    "read_label_identity", "read_reviewed", "write_label_identity", "label_extent", "check_label_file", "check_overwrite",
    "labels_by_recording", "write_table",
]
