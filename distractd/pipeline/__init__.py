"""Per-stream signal processing: the canonical sample, recordings, validation, events, windows."""

from ._recording import (
    Recording, describe, label_intervals, labels_from_intervals, read_csv, read_intervals,
    read_recording, write_csv, write_intervals, write_recording,
)
from ._schema import (
    FIELD_INDEX, FIELDS, N_FIELDS, OPTIONAL_FIELDS, RANGES, SPATIAL_FIELDS, UNITS,
    block_from_columns, block_from_maps, empty_block, maps_from_block,
)

__all__ = [
    "FIELDS", "FIELD_INDEX", "N_FIELDS", "UNITS", "RANGES", "OPTIONAL_FIELDS", "SPATIAL_FIELDS",
    "empty_block", "block_from_maps", "block_from_columns", "maps_from_block",
    "Recording", "read_recording", "write_recording", "read_csv", "write_csv", "describe",
    "label_intervals", "labels_from_intervals", "read_intervals", "write_intervals",
]
