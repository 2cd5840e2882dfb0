"""Giving the memory of ended sessions back to the system.

A session's arrays (tens of KB each) come from the C heap, below glibc's mmap threshold, so the
memory of thousands of expired sessions stays in the process, free but not returned, unless the
heap is trimmed: ``malloc_trim(0)`` releases every free page of every arena (docs/daemon.md,
"Memory"). Where the C library has no ``malloc_trim`` (not glibc), nothing is done.
"""

import ctypes

__all__ = ["trim_heap"]


def _malloc_trim():
    try:
        function = ctypes.CDLL(None).malloc_trim
    except AttributeError:   # not glibc
        return None
    function.argtypes = [ctypes.c_size_t]
    function.restype = ctypes.c_int
    return function


_MALLOC_TRIM = _malloc_trim()


def trim_heap():
    """Return the C heap's free pages to the system; False where that is not possible."""
    if _MALLOC_TRIM is None:
        return False
    _MALLOC_TRIM(0)
    return True
