"""Per-stream signal processing: the canonical sample, recordings, validation, events, windows."""

from ._config import PipelineConfig
from ._events import EVENT_KINDS
from ._processor import Events, StreamProcessor, detect_events, extract_features
from ._recording import (
    Recording, describe, label_intervals, labels_from_intervals, read_csv, read_intervals,
    read_recording, write_csv, write_intervals, write_recording,
)
from ._schema import (
    FIELD_INDEX, FIELDS, N_FIELDS, OPTIONAL_FIELDS, RANGES, SPATIAL_FIELDS, UNITS,
    block_from_columns, block_from_maps, empty_block, maps_from_block,
)
from ._validate import REJECT_REASONS
from ._windows import FEATURE_NAMES, MEASURES, Windows

__all__ = [
    "FIELDS", "FIELD_INDEX", "N_FIELDS", "UNITS", "RANGES", "OPTIONAL_FIELDS", "SPATIAL_FIELDS",
    "empty_block", "block_from_maps", "block_from_columns", "maps_from_block",
    "Recording", "read_recording", "write_recording", "read_csv", "write_csv", "describe",
    "label_intervals", "labels_from_intervals", "read_intervals", "write_intervals",
    "PipelineConfig", "StreamProcessor", "Windows", "extract_features", "FEATURE_NAMES", "MEASURES",
    "REJECT_REASONS", "Events", "detect_events", "EVENT_KINDS",
]
