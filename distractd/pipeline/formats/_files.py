"""Every recording in a file or a folder, whatever its form.

``read_recordings(path)`` reads a distractd recording (binary, CSV or Parquet: one recording), a
subject file of Taamneh et al. 2017 (one recording per drive), or a folder of either (its ``.npz``,
``.bin``, ``.rec``, ``.csv`` and ``.parquet`` files, in name order; :func:`recording_files` lists them, so
that batch work can read each file where it lives). A recording without a ``recording_id`` in its
metadata gets the file's stem, and one without a ``driver_id`` gets the same: each plain file is
then its own driver.
"""

from pathlib import Path

from ..._errors import RecordingError
from ._recording import read_recording
from ._taamneh import is_taamneh, read_taamneh

__all__ = ["read_recordings", "recording_files", "RECORDING_SUFFIXES"]

RECORDING_SUFFIXES = (".npz", ".bin", ".rec", ".csv", ".parquet")
"""The suffixes of recordings: binary (``.npz``, ``.bin``, ``.rec``), CSV and Parquet."""


def read_recordings(path, taamneh_drives=(2, 3, 4, 5, 6, 7, 8)):
    """The recordings of a file or folder.

    Parameters
    ----------
    path : str or Path
    taamneh_drives : sequence of int, default=(2, 3, 4, 5, 6, 7, 8)
        Sessions kept from Taamneh et al. subject files.

    Returns
    -------
    list of Recording

    Raises
    ------
    RecordingError
        A missing path, an empty folder, or a file that is not a recording.
    """
    path = Path(path)
    if path.is_dir():
        return [r for file in recording_files(path) for r in read_recordings(file, taamneh_drives)]
    if not path.exists():
        raise RecordingError(f"{path}: no such file or folder")
    if path.suffix.lower() == ".csv" and is_taamneh(path):
        return read_taamneh(path, taamneh_drives)
    recording = read_recording(path)
    recording.meta.setdefault("recording_id", path.stem)
    recording.meta.setdefault("driver_id", recording.meta["recording_id"])
    return [recording]


def recording_files(path):
    """The files :func:`read_recordings` reads for ``path``: a folder's recordings in name order,
    or the file itself.

    Raises
    ------
    RecordingError
        A missing path or a folder without a recording.
    """
    path = Path(path)
    if not path.exists():
        raise RecordingError(f"{path}: no such file or folder")
    if not path.is_dir():
        return [path]
    files = sorted(p for p in path.iterdir() if p.suffix.lower() in RECORDING_SUFFIXES and p.is_file())
    if not files:
        raise RecordingError(f"{path}: no recording ({', '.join(RECORDING_SUFFIXES)}) in the folder")
    return files
