"""Files written whole or not at all: a new file beside the target, flushed, moved over it."""

import os
import shutil
import uuid
from pathlib import Path

__all__ = ["atomic_write"]


def atomic_write(path, write, binary=False):
    """Call ``write(file)`` on a new file beside ``path`` (created under the umask, given the
    replaced file's permissions), flush it to disk, move it over ``path`` and flush the folder.

    ``path`` is at every moment either the previous file or the new one. A symbolic link at
    ``path``, dangling or not, is replaced by the file, never followed: the write creates
    nothing outside ``path``'s folder.
    """
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        with open(temporary, "xb" if binary else "x", **({} if binary else {"newline": ""})) \
                as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        if path.exists() and not path.is_symlink():
            shutil.copymode(path, temporary)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
