"""Files the daemon reads (configuration, model): regular files only, size-bounded, never blocking.

A FIFO blocks ``open`` until a writer appears, ``/dev/zero`` never ends and a directory has no
bytes, so every path is opened with ``O_NONBLOCK`` and checked with ``fstat`` before anything is
read: only a regular file of at most ``max_bytes`` bytes is accepted.
"""

import os
import stat
import zipfile

__all__ = ["open_regular", "read_regular", "check_archive"]

_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


def open_regular(path, max_bytes, what, error):
    """Open ``path`` for reading if it is a regular file of at most ``max_bytes`` bytes.

    Parameters
    ----------
    path : str or Path
    max_bytes : int
        The size bound, in bytes.
    what : str
        What the file is, for the error (``"config file"``, ``"model file"``).
    error : type
        The :class:`~distractd.DistractdError` subclass raised.

    Returns
    -------
    file : binary file object, open and blocking again

    Raises
    ------
    error
        Naming the file and why it was refused (missing, unreadable, not a regular file, too big).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise error(f"{what} {path}: {exc.strerror}") from None
    except ValueError:  # a NUL character
        raise error(f"{what} {path!r}: not a valid path") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
            raise error(f"{what} {path} is {kind}; it must be a regular file")
        if info.st_size > max_bytes:
            raise error(f"{what} {path} has {info.st_size} bytes, more than the bound of "
                        f"{max_bytes}")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path, max_bytes, what, error):
    """The bytes of ``path``, a regular file of at most ``max_bytes`` bytes (see
    :func:`open_regular`); a file that grows past the bound while read is refused too."""
    with open_regular(path, max_bytes, what, error) as file:
        try:
            data = file.read(max_bytes + 1)
        except OSError as exc:
            raise error(f"{what} {path}: {exc.strerror}") from None
    if len(data) > max_bytes:
        raise error(f"{what} {path} has more than the bound of {max_bytes} bytes")
    return data


def check_archive(path, max_bytes, what, error):
    """Refuse ``path`` unless it is a regular file of at most ``max_bytes`` bytes whose zip members
    expand to at most ``max_bytes`` bytes together (a few hundred KB of zeros compress from
    hundreds of MB)."""
    with open_regular(path, max_bytes, what, error) as file:
        try:
            expanded = sum(member.file_size for member in zipfile.ZipFile(file).infolist())
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise error(f"{what} {path} is not a zip archive ({exc})") from None
    if expanded > max_bytes:
        raise error(f"{what} {path} expands to {expanded} bytes, more than the bound of "
                    f"{max_bytes}")
