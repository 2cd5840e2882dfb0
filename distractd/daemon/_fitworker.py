"""The adaptation's fit worker: a separate process that refits streams' models for the daemon.

A fit holds the interpreter's lock in the Python parts of scikit-learn and numpy for stretches of
milliseconds, which in a thread of the daemon the loop would wait for. In its own process a
fit shares only the CPU (the loop's lag still rose under a stress of fits:
docs/results/transduction.md), and the daemon's side of a fit is numpy only. The daemon starts
the worker (:data:`WORKER_COMMAND`) with ``[adaptation]`` on and talks to it over its standard
input and output: each message is an 8-byte little-endian length and an npz archive — a JSON
``header`` (as bytes) and plain arrays, read with ``allow_pickle=False``: nothing is pickled
either way.

Request: header ``{"model": path, "model_id": ..., "seed": ...}``, array ``rows`` (the stream's
kept windows). Reply: header ``{"error": None or one line, "check": ..., "spread": [before,
after], "cpu_s": ..., "params": ..., "score_scale": ..., "score_offset": ...}`` and the refit's
arrays that differ from the model's (``adapted/<name>``). The worker loads the model itself from
the path (checking its id) and runs :func:`refit`, the one implementation the in-process
:meth:`~distractd.daemon.Fit.run` also calls.
"""

import io
import json
import os
import struct
import subprocess
import sys
import threading
import time

import numpy as np
from threadpoolctl import threadpool_limits

# adapt_checked and load_model are read from the (lazy) wing in the worker: the daemon that
# imports this module for its framing never loads scikit-learn
from ..models import detectors

__all__ = ["refit", "pack", "unpack", "read_message", "write_message", "main", "Worker"]

MAX_MESSAGE_BYTES = 1 << 28
"""Largest message either side reads (a LapSVM refit's expansion is a few MB)."""

WORKER_COMMAND = (sys.executable, "-c",
                  "import sys; from distractd.daemon._fitworker import main; "
                  "sys.exit(main(sys.argv[1:]))")
"""The worker's command line, before its model path: :func:`main` called, not the module run as
``__main__`` (``-m`` would run it a second time beside the copy the package has imported)."""

_NICE = 10
"""Niceness the worker asks for where it cannot have the idle scheduling class."""


def refit(base, rows, seed=0):
    """A stream's refit: :func:`~distractd.models.detectors.adapt_checked` of ``base`` on every
    row, and the score spread (standard deviation of the published scores of ``rows``) under
    ``base`` and under the refit. Returns ``(adapted, check, (before, after))``."""
    adapted, check = detectors.adapt_checked(base, rows, n_unlabelled=len(rows), seed=seed)
    spread = tuple(float(np.std(d.decision_function(rows)) / d.score_scale)
                   for d in (base, adapted))
    return adapted, check, spread


def pack(header, arrays):
    """One message's payload: an npz of the JSON ``header`` and the ``arrays``."""
    buffer = io.BytesIO()
    np.savez(buffer, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays)
    return buffer.getvalue()


def unpack(payload):
    """``(header, arrays)`` of a payload (:func:`pack`), read without unpickling."""
    with np.load(io.BytesIO(payload), allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    return json.loads(arrays.pop("header").tobytes().decode("utf-8")), arrays


def write_message(stream, payload):
    stream.write(struct.pack("<Q", len(payload)))
    stream.write(payload)
    stream.flush()


def read_message(stream):
    """The next message's payload; None at the end of the stream."""
    head = stream.read(8)
    if len(head) < 8:
        return None
    (size,) = struct.unpack("<Q", head)
    if size > MAX_MESSAGE_BYTES:
        raise ValueError(f"message of {size} bytes, over {MAX_MESSAGE_BYTES}")
    payload = stream.read(size)
    if len(payload) < size:
        return None
    return payload


def main(argv=()):
    """Serve fits on standard input and output until the input ends; with a model path in
    ``argv``, load it and run one fit on synthetic rows first (its kernels compiled, its imports
    done before the first stream's fit)."""
    try:   # runs only when nothing else wants the CPU: the daemon's loop never waits for it
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (OSError, AttributeError):
        try:
            os.setpriority(os.PRIO_PROCESS, 0, _NICE)
        except OSError:   # a system-call filter without @resources: it keeps its priority
            pass
    threadpool_limits(limits=1)
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr   # nothing else may write to the message stream
    models = {}
    for path in argv[:1]:
        try:
            models[path] = detectors.load_model(path)
            refit(models[path], np.zeros((10, len(models[path].feature_names))))
        except Exception as exc:  # said; the requests say it again
            print(f"distractd fit worker: warm-up on {path} failed: {exc}", file=sys.stderr)
    while True:
        payload = read_message(source)
        if payload is None:
            return 0
        header, arrays = unpack(payload)
        start = time.process_time()
        try:
            path, model_id = header["model"], header["model_id"]
            if path not in models or models[path].model_id != model_id:
                models[path] = detectors.load_model(path)
            base = models[path]
            if base.model_id != model_id:
                raise ValueError(f"model file {path} now holds model {base.model_id}, not "
                                 f"{model_id}")
            adapted, check, spread = refit(base, arrays["rows"], header["seed"])
            params, differing = adapted.arrays_beside(base)
            reply = {"error": None, "check": check, "spread": spread, "params": params,
                     "score_scale": adapted.score_scale, "score_offset": adapted.score_offset}
            out = {f"adapted/{name}": value for name, value in differing.items()}
        except Exception as exc:  # a fit that fails is said back, the worker goes on
            reply, out = {"error": f"{type(exc).__name__}: {exc}"}, {}
        reply["cpu_s"] = time.process_time() - start
        write_message(sink, pack(reply, out))


class Worker:
    """The daemon's side of the worker process: started at the first call, started again after
    it ended; :meth:`call` is used by one thread at a time."""

    def __init__(self):
        self.process = None
        self.lock = threading.Lock()

    def start(self, model_path=None):
        """Start the worker unless it runs (warming up on ``model_path``); return it."""
        with self.lock:
            if self.process is None or self.process.poll() is not None:
                self.process = subprocess.Popen(
                    [*WORKER_COMMAND, *([str(model_path)] if model_path else [])],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            return self.process

    def call(self, payload):
        """Send a request payload; return the reply's payload. Raises RuntimeError when the
        worker ended (it is started again at the next call)."""
        process = self.start()
        try:
            write_message(process.stdin, payload)
            reply = read_message(process.stdout)
        except (OSError, ValueError) as exc:
            reply = None
            why = f"{type(exc).__name__}: {exc}"
        else:
            why = "its output ended"
        if reply is None:
            process.kill()
            status = process.wait()
            raise RuntimeError(f"the fit worker ended ({why}, exit status {status})")
        return reply

    def close(self, timeout_s=1.0):
        """End the worker: its input closed, then killed after ``timeout_s``."""
        with self.lock:
            process, self.process = self.process, None
        if process is None:
            return
        try:
            process.stdin.close()
            process.wait(timeout_s)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()
        process.stdout.close()

