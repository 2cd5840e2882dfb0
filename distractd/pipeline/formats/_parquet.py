"""Recordings as Apache Parquet columns, for the tools a fleet's data already lives in.

One row per sample, one column per field. Written by distractd: every canonical field as a
``double`` column in schema order (NaN stays NaN, never null), ``label`` as ``int8`` (1, 0, -1),
and the binary form's JSON header (format, version, metadata) under the schema metadata key
``distractd`` — lossless, like the binary form. Any other Parquet file (pandas, Polars, DuckDB,
Spark, Arrow) is read like a CSV: numeric columns named by canonical fields (any subset, ``t``
required), an optional integer ``label`` column, nulls as missing values (NaN, or -1 for labels).

Pure encode/decode through pyarrow, which is imported on first use (an optional dependency:
``pip install 'distractd[parquet]'``) so that nothing else pays for it.
"""

import json

import numpy as np

from ..._errors import RecordingError, SchemaError

__all__ = ["read_columns", "write_columns", "write_table", "HEADER_KEY"]

HEADER_KEY = b"distractd"
"""The Parquet schema metadata key holding a distractd recording's JSON header."""


def read_columns(path):
    """The columns of a Parquet recording.

    Parameters
    ----------
    path : Path

    Returns
    -------
    fields : list of str
        Column names other than ``label``, in file order.
    data : ndarray of shape (n_samples, len(fields)), float64
        The columns; nulls as NaN.
    labels : ndarray of shape (n_samples,), int8
        The ``label`` column (null as -1), all -1 when there is none.
    header : dict or None
        The distractd JSON header, None for a file written by another tool.

    Raises
    ------
    RecordingError
        An unreadable file or header; SchemaError for a column that is not numeric, a label that
        is not 1, 0, -1 or null.
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
    for name, column in zip(table.column_names, table.columns):
        if name == "label":
            continue
        if not _numeric(column.type):
            raise SchemaError(f"{path}: column {name} must be numeric, got {column.type}")
        fields.append(name)
        columns.append(_floats(column))
    data = np.column_stack(columns) if columns else np.empty((table.num_rows, 0))
    labels = np.full(table.num_rows, -1, dtype=np.int8)
    if "label" in table.column_names:
        labels = _labels(path, table.column("label"))
    return fields, data, labels, header


def write_columns(path, fields, samples, labels, header):
    """Write ``samples`` (one column per name of ``fields``), ``labels`` and the JSON header."""
    pa, pq = _pyarrow(), _parquet()
    arrays = [pa.array(samples[:, i], type=pa.float64(), from_pandas=False)
              for i in range(len(fields))]
    arrays.append(pa.array(np.asarray(labels, dtype=np.int8), type=pa.int8()))
    table = pa.table(arrays, names=[*fields, "label"])
    table = table.replace_schema_metadata({HEADER_KEY: json.dumps(header).encode("utf-8")})
    pq.write_table(table, path, compression="zstd")


def write_table(path, columns):
    """Write a table of named 1-d columns (e.g. ``distractd features``' windows), each column
    in its own dtype (float64 NaN stays NaN)."""
    pa, pq = _pyarrow(), _parquet()
    table = pa.table({name: pa.array(np.asarray(values), from_pandas=False)
                      for name, values in columns.items()})
    pq.write_table(table, path, compression="zstd")


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


def _numeric(arrow_type):
    pa = _pyarrow()
    return (pa.types.is_floating(arrow_type) or pa.types.is_integer(arrow_type)
            or pa.types.is_null(arrow_type))


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
