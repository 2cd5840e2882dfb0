"""Compiling numba kernels side by side in processes that share numba's on-disk cache.

Within one process numba compiles one kernel at a time (its compiler lock serialises threads),
but processes compile side by side and share the cache (``NUMBA_CACHE_DIR``, else
``__pycache__`` beside the sources). A cold start therefore has a helper process
(:func:`start_helper`) compile some kernels while it compiles others, then loads the helper's
from the cache. A helper only saves time: whatever it did not compile (it failed, was ended,
could not write the cache, or met other argument types), the caller compiles as before.
"""

import os
import subprocess
import sys

__all__ = ["cache_is_fresh", "start_helper", "finish_helper"]


def cache_is_fresh(dispatcher):
    """Whether numba's cache holds compiled code of ``dispatcher`` for its current source: its
    index file exists and is at least as new as the source file (numba rewrites the index at each
    compile and ignores it once the source has changed, as after an upgrade). False when numba
    does not say where the index is."""
    try:
        index = dispatcher._cache._cache_file._index_path
        source = dispatcher.py_func.__code__.co_filename
        return os.stat(index).st_mtime_ns >= os.stat(source).st_mtime_ns
    except (AttributeError, OSError):
        return False


def start_helper(module, *args):
    """``python -m module args...`` in the background, silent; None when it cannot start."""
    try:
        return subprocess.Popen([sys.executable, "-m", module, *args], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        return None


def finish_helper(helper, timeout_s):
    """Wait up to ``timeout_s`` for ``helper`` (None: nothing to wait for), then end it: what it
    compiled is in the cache, the rest is the caller's to compile."""
    if helper is None:
        return
    try:
        helper.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        helper.kill()
        helper.wait()
