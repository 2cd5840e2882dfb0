"""Recordings as Apache Parquet columns, for the tools a fleet's data already lives in.

One row per sample, one column per field. Written by distractd: every canonical field as a
``double`` column in schema order, a missing value (NaN) as null, so that Polars', DuckDB's and
Arrow's aggregates skip it as they skip nulls (they propagate NaN); ``label`` as ``int8`` (1, 0,
null for unknown); and the binary form's JSON header (format, version, metadata) under the schema
metadata key ``distractd``. Lossless like the binary form, except that every NaN reads back as
numpy's one NaN (a NaN's payload bits are not kept). Any other Parquet file (pandas, Polars,
DuckDB, Spark, Arrow) is read like a CSV: columns named by canonical fields (any subset, ``t``
required) holding numbers or booleans, NaN and null alike as missing values; ``t`` may be a
timestamp (read as Unix epoch seconds) or a duration (seconds); an optional ``label`` column
(null as -1); other columns are ignored with one log line naming them.

Pure encode/decode through pyarrow, which is imported on first use (an optional dependency:
``pip install 'distractd[parquet]'``) so that nothing else pays for it.
"""

import json
import logging

import numpy as np

from ..._errors import RecordingError, SchemaError
from ._schema import FIELD_INDEX

__all__ = ["read_columns", "write_columns", "write_table", "HEADER_KEY"]

HEADER_KEY = b"distractd"
"""The Parquet schema metadata key holding a distractd recording's JSON header."""

log = logging.getLogger(__name__)


def read_columns(path):
    """The columns of a Parquet recording.

    Parameters
    ----------
    path : Path

    Returns
    -------
    fields : list of str
        The columns named by canonical fields, in file order (any other column but ``label`` is
        left out, named in one warning of the module's logger).
    data : ndarray of shape (n_samples, len(fields)), float64
        The columns; nulls as NaN, booleans as 1.0/0.0, a timestamp ``t`` in Unix epoch seconds
        (a time-zone-free timestamp taken as UTC), a duration ``t`` in seconds.
    labels : ndarray of shape (n_samples,), int8
        The ``label`` column (null as -1), all -1 when there is none.
    header : dict or None
        The distractd JSON header, None for a file written by another tool.

    Raises
    ------
    RecordingError
        An unreadable file or header; SchemaError for a canonical column that is neither numeric
        nor boolean (nor a timestamp or duration, for ``t``), a label that is not 1, 0, -1 or
        null.
    """
    pq = _parquet()
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise RecordingError(f"{path}: unreadable Parquet recording ({exc})") from exc
    metadata = table.schema.metadata or {}
    try:
        header = json.loads(metadata[HEADER_KEY]) if HEADER_KEY in metadata else None
    except ValueError as exc:
        raise RecordingError(f"{path}: unreadable distractd header ({exc})") from exc
    fields, columns = [], []
    ignored = [name for name in table.column_names if name not in FIELD_INDEX and name != "label"]
    if ignored:
        log.warning("%s: ignored columns that are not canonical fields: %s", path,
                    ", ".join(ignored))
    for name, column in zip(table.column_names, table.columns):
        if name not in FIELD_INDEX:
            continue
        if name == "t" and _temporal(column.type):
            columns.append(_seconds(column))
        elif _numeric(column.type):
            columns.append(_floats(column))
        else:
            raise SchemaError(f"{path}: column {name} must be numeric or boolean"
                              f"{' (or a timestamp)' if name == 't' else ''}, got {column.type}")
        fields.append(name)
    data = np.column_stack(columns) if columns else np.empty((table.num_rows, 0))
    labels = np.full(table.num_rows, -1, dtype=np.int8)
    if "label" in table.column_names:
        labels = _labels(path, table.column("label"))
    return fields, data, labels, header


def write_columns(path, fields, samples, labels, header):
    """Write ``samples`` (one column per name of ``fields``, NaN as null), ``labels`` (-1 as
    null) and the JSON header."""
    pa, pq = _pyarrow(), _parquet()
    arrays = [_nullable(samples[:, i]) for i in range(len(fields))]
    labels = np.asarray(labels, dtype=np.int8)
    arrays.append(pa.array(labels, type=pa.int8(), mask=labels == -1))
    table = pa.table(arrays, names=[*fields, "label"])
    table = table.replace_schema_metadata({HEADER_KEY: json.dumps(header).encode("utf-8")})
    pq.write_table(table, path, compression="zstd")


def write_table(path, columns):
    """Write a table of named 1-d columns (e.g. ``distractd features``' windows), each column
    in its own dtype, a float column's NaN as null."""
    pa, pq = _pyarrow(), _parquet()
    arrays = {}
    for name, values in columns.items():
        values = np.asarray(values)
        arrays[name] = (_nullable(values) if values.dtype.kind == "f"
                        else pa.array(values, from_pandas=False))
    pq.write_table(pa.table(arrays), path, compression="zstd")


def _nullable(values):
    """A float64 Arrow array of ``values`` with every NaN a null."""
    pa = _pyarrow()
    values = np.asarray(values, dtype=np.float64)
    return pa.array(values, type=pa.float64(), mask=np.isnan(values))


def _labels(path, column):
    """The label column as int8, null as -1; any other value is a named error."""
    pa = _pyarrow()
    if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
            or pa.types.is_boolean(column.type) or pa.types.is_null(column.type)):
        raise SchemaError(f"{path}: column label must be 1, 0, -1 or null, got type {column.type}")
    values = _floats(column)
    values = np.where(np.isnan(values), -1.0, values)
    bad = ~np.isin(values, (-1.0, 0.0, 1.0))
    if bad.any():
        row = int(np.argmax(bad))
        raise SchemaError(f"{path}: label[{row}] must be 1, 0, -1 or null, got {float(values[row])!r}")
    return values.astype(np.int8)


def _floats(column):
    """A column as float64 values, nulls as NaN (integers beyond 2**53 rounded, as in CSV)."""
    pa = _pyarrow()
    return column.cast(pa.float64(), safe=False).to_numpy(zero_copy_only=False)


def _seconds(column):
    """A timestamp column as Unix epoch seconds (a duration column as seconds), nulls as NaN.

    Whole seconds and the fraction are converted apart, so that nanosecond ticks near today's
    epoch (~1.8e18) lose nothing beyond float64's last bit of the result (0.24 us)."""
    pa = _pyarrow()
    per_second = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[column.type.unit]
    ticks = column.cast(pa.int64())
    missing = ticks.is_null().to_numpy(zero_copy_only=False)
    ticks = ticks.fill_null(0).to_numpy(zero_copy_only=False)
    whole, part = np.divmod(ticks, per_second)
    seconds = whole.astype(np.float64) + part / per_second
    seconds[missing] = np.nan
    return seconds


def _temporal(arrow_type):
    pa = _pyarrow()
    return pa.types.is_timestamp(arrow_type) or pa.types.is_duration(arrow_type)


def _numeric(arrow_type):
    pa = _pyarrow()
    return (pa.types.is_floating(arrow_type) or pa.types.is_integer(arrow_type)
            or pa.types.is_boolean(arrow_type) or pa.types.is_null(arrow_type))


def _pyarrow():
    try:
        import pyarrow
    except ImportError:
        raise RecordingError("Parquet recordings need pyarrow: pip install "
                             "'distractd[parquet]'") from None
    return pyarrow


def _parquet():
    _pyarrow()
    import pyarrow.parquet

    return pyarrow.parquet
