"""Batch work in this process or on a Dask cluster: the one parallel path of ``features``,
``evaluate`` and ``train --cohort``.

A :class:`Runner` runs independent tasks and returns their results in the order they were given:
one after the other in this process, or on a Dask cluster (:func:`batch_runner`: a local cluster
of single-threaded worker processes for ``jobs > 1``, or the scheduler at an address, which may
hold workers on many machines). Tasks carry their own seeds, so results never depend on where or
in which order they ran: a run on a cluster gives the numbers of the sequential run.

Recordings are read where they live: :func:`recording_windows` sends each task a file path (a
folder is listed by a task, too), and the worker reads the file, so only the feature windows
travel. A path must name the same recording on every worker (a shared file system, or the same
copy at the same path on every machine); recordings already in memory travel with their task.

A cluster that fails does not leave the command hanging or dumping Dask's tracebacks: a cluster
left without workers for ``no_workers_s`` (all killed, none started), a lost scheduler, or a
worker killed while running a task each end the run with one :class:`DistractdError` naming
what happened (the command's one line, exit status 1); Dask's own log handlers pass only
CRITICAL lines while a runner is open.

Package-level (beside ``_validation``) because a pipeline command and two model wings use it.
``dask.distributed`` is imported only when a cluster is used (``pip install 'distractd[dask]'``).
Dask moves tasks and results between machines with pickle: a scheduler's port is for a trusted
network only (docs/evaluation.md).
"""

import logging
import queue
import time
from concurrent.futures import CancelledError
from contextlib import contextmanager
from typing import NamedTuple

from tqdm import tqdm

from ._errors import ConfigError, DistractdError
from ._validation import Interval, check_params
from .pipeline import (
    PipelineConfig, Recording, Windows, extract_features, read_recordings, recording_files,
)

__all__ = ["Runner", "batch_runner", "RecordingWindows", "recording_windows", "NO_WORKERS_S"]

NO_WORKERS_S = 60.0
"""How long a run waits on a cluster without workers before it gives up, in seconds: long
enough for workers being (re)started, short enough that a dead cluster is reported."""

_CHECK_S = 1.0
"""Seconds between checks of the cluster's workers while no task completes."""


class Runner:
    """Runs independent tasks and returns their results in order.

    Parameters
    ----------
    client : distributed.Client or None, default=None
        The Dask cluster to run on; None runs every task here, one after the other.
    no_workers_s : float, default=NO_WORKERS_S
        A run on a cluster that has had no worker for this long (seconds) fails with a
        DistractdError instead of waiting for ever.
    """

    def __init__(self, client=None, no_workers_s=NO_WORKERS_S):
        self.client = client
        self.no_workers_s = no_workers_s

    @property
    def n_workers(self):
        """Worker threads of the cluster (1 in this process)."""
        if self.client is None:
            return 1
        return max(1, sum(self.client.nthreads().values()))

    def map(self, fn, items, *args, progress=False, desc=None, **kwargs):
        """``[fn(item, *args, **kwargs) for item in items]``, the calls run where the runner runs.

        ``fn`` must be a module-level function (it travels by name). The first task to fail
        cancels the others and its exception is raised here, as the sequential run raises it.
        A task whose workers died (out of memory, killed), a cluster without workers for
        ``no_workers_s`` and a lost scheduler are each a DistractdError saying so.
        """
        items = list(items)
        bar = tqdm(total=len(items), disable=not progress, leave=False, desc=desc)
        with bar:
            if self.client is None:
                results = []
                for item in items:
                    results.append(fn(item, *args, **kwargs))
                    bar.update()
                return results
            from distributed import KilledWorker

            futures = [self.client.submit(fn, item, *args, pure=False, **kwargs)
                       for item in items]
            done = []  # the futures finished, in the order they finished
            try:
                self._wait(futures, done, bar)
                try:
                    return self.client.gather(futures)
                except (CancelledError, OSError):  # the scheduler lost after the last task
                    raise self._lost(len(done), len(items)) from None
            except KilledWorker as exc:
                raise DistractdError(f"a Dask worker died running task {exc.task} (out of "
                                     f"memory? the worker's log says why)") from None
            finally:
                if self.client.status == "running":
                    self.client.cancel([f for f in futures if not f.done()])

    def _wait(self, futures, done, bar):
        """Wait for every future, appending each to ``done`` as it finishes; raise the first
        task's error, and a DistractdError once the cluster has had no workers for
        ``no_workers_s``."""
        finished = queue.SimpleQueue()
        for future in futures:
            future.add_done_callback(finished.put)  # called in a thread of the client
        idle_since = None
        while len(done) < len(futures):
            try:
                future = finished.get(timeout=_CHECK_S)
            except queue.Empty:
                future = None
            if future is None:
                idle_since = self._without_workers(idle_since, len(done), len(futures))
                continue
            if future.status == "cancelled":  # by the client, when it lost the scheduler
                raise self._lost(len(done), len(futures))
            if future.status == "error":
                future.result()  # raises the task's exception
            done.append(future)
            bar.update()
            idle_since = None

    def _without_workers(self, idle_since, n_done, n_tasks):
        """Since when (monotonic s) the cluster has been without workers, None while it has
        some; a DistractdError once ``no_workers_s`` have passed."""
        try:
            if self.client.nthreads():
                return None
        except OSError:  # Dask's CommClosedError and kin: no scheduler to ask
            raise self._lost(n_done, n_tasks) from None
        now = time.monotonic()
        if idle_since is None:
            return now
        if now - idle_since < self.no_workers_s:
            return idle_since
        address = self.client.scheduler.address
        raise DistractdError(f"the Dask cluster {address} has had no workers for "
                             f"{self.no_workers_s:g} s ({n_done} of {n_tasks} tasks done; every "
                             f"worker died or none started: start some, e.g. dask worker "
                             f"{address}, and run again)")

    def _lost(self, n_done, n_tasks):
        return DistractdError(f"lost the Dask scheduler {self.client.scheduler.address} after "
                              f"{n_done} of {n_tasks} tasks: it stopped, or the network to it "
                              f"failed (the scheduler's log says why)")

    def share(self, value):
        """``value`` as every task will receive it: sent to the cluster once, not per task."""
        if self.client is None:
            return value
        return self.client.scatter([value], hash=False)[0]


@contextmanager
def batch_runner(jobs=1, scheduler=None, no_workers_s=NO_WORKERS_S):
    """A :class:`Runner` for the length of a ``with`` block.

    Parameters
    ----------
    jobs : int, default=1
        Without ``scheduler``: 1 runs here, one task after another; more starts a local Dask
        cluster of ``jobs`` worker processes with one thread each (closed at the end).
    scheduler : str or None, default=None
        Address of a running Dask scheduler (``tcp://host:8786``), whose workers may be on many
        machines; ``jobs`` then does not apply.
    no_workers_s : float, default=NO_WORKERS_S
        See :class:`Runner`.

    Raises
    ------
    ConfigError
        ``jobs`` below 1, dask.distributed not installed, or a scheduler that does not answer.
    """
    check_params({"jobs": jobs}, {"jobs": Interval(1, None, integer=True)}, owner="batch")
    if scheduler is None and jobs == 1:
        yield Runner()
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ConfigError("--jobs > 1 and --scheduler need dask.distributed: pip install "
                          "'distractd[dask]'") from None
    with _quiet_dask():
        if scheduler is not None:
            try:
                client = Client(scheduler, timeout=10, set_as_default=False)
            except (OSError, TimeoutError, ValueError) as exc:
                raise ConfigError(f"scheduler {scheduler!r}: no Dask scheduler answers "
                                  f"({exc})") from None
            with client:
                yield Runner(client, no_workers_s)
            return
        # every port on 127.0.0.1, the scheduler's HTTP port a free one (no clash with 8787);
        # the workers' log lines below errors (start-up, shutdown) are not the command's output
        with LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                          dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR) as cluster, \
                Client(cluster, set_as_default=False) as client:
            yield Runner(client, no_workers_s)


@contextmanager
def _quiet_dask():
    """Dask's log handlers in this process (which Dask's configuration puts on the
    ``distributed`` logger) pass only CRITICAL for the block: a lost scheduler or worker reaches
    the user as the runner's one-line error, not as Dask's logged tracebacks."""
    handlers = logging.getLogger("distributed").handlers
    levels = [handler.level for handler in handlers]
    for handler in handlers:
        handler.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for handler, level in zip(handlers, levels):
            handler.setLevel(level)


class RecordingWindows(NamedTuple):
    """The feature windows of one recording, with what the recording says of itself."""

    source: str
    """The file read (a recording in memory: its ``recording_id``)."""
    meta: dict
    duration_s: float
    windows: Windows


def recording_windows(sources, config=None, runner=None, progress=False):
    """The feature windows of every recording of ``sources``, computed where each file lives.

    Parameters
    ----------
    sources : sequence of (str, Path or Recording)
        Paths as :func:`~distractd.pipeline.read_recordings` takes them (recordings, Taamneh et
        al. subject files, folders), or recordings in memory.
    config : PipelineConfig or None, default=None
    runner : Runner or None, default=None
        Where the tasks run (None: here, one after another). One task per file.
    progress : bool, default=False
        A tqdm bar over the files on standard error.

    Returns
    -------
    list of RecordingWindows
        In the order of ``sources``, a folder's files in name order; metadata as
        :func:`~distractd.pipeline.read_recordings` gives it (``recording_id`` and ``driver_id``
        default to the file's stem).
    """
    runner = runner or Runner()
    config = config or PipelineConfig()
    sources = list(sources)
    paths = [s for s in sources if not isinstance(s, Recording)]
    listed = iter(runner.map(_listing, [paths])[0] if paths else [])
    tasks = []
    for source in sources:
        tasks.extend([source] if isinstance(source, Recording) else next(listed))
    groups = runner.map(_windows_of, tasks, config, progress=progress, desc="features")
    return [item for group in groups for item in group]


def _listing(paths):
    """The recording files of every path, listed where they live (one task, one round trip)."""
    return [recording_files(path) for path in paths]


def _windows_of(source, config):
    """The task of :func:`recording_windows`: read one file (or take a recording), extract."""
    if isinstance(source, Recording):
        recordings, name = [source], str(source.meta.get("recording_id", "recording"))
    else:
        recordings, name = read_recordings(source), str(source)
    return [RecordingWindows(name, r.meta, r.duration_s, extract_features(r, config))
            for r in recordings]
