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

Package-level (beside ``_validation``) because a pipeline command and two model wings use it.
``dask.distributed`` is imported only when a cluster is used (``pip install 'distractd[dask]'``).
Dask moves tasks and results between machines with pickle: a scheduler's port is for a trusted
network only (docs/evaluation.md).
"""

import logging
from contextlib import contextmanager
from typing import NamedTuple

from tqdm import tqdm

from ._errors import ConfigError, DistractdError
from ._validation import Interval, check_params
from .pipeline import (
    PipelineConfig, Recording, Windows, extract_features, read_recordings, recording_files,
)

__all__ = ["Runner", "batch_runner", "RecordingWindows", "recording_windows"]


class Runner:
    """Runs independent tasks and returns their results in order.

    Parameters
    ----------
    client : distributed.Client or None, default=None
        The Dask cluster to run on; None runs every task here, one after the other.
    """

    def __init__(self, client=None):
        self.client = client

    @property
    def n_workers(self):
        """Worker threads of the cluster (1 in this process)."""
        if self.client is None:
            return 1
        return max(1, sum(self.client.nthreads().values()))

    def map(self, fn, items, *args, progress=False, desc=None, **kwargs):
        """``[fn(item, *args, **kwargs) for item in items]``, the calls run where the runner runs.

        ``fn`` must be a module-level function (it travels by name). The first task to fail
        cancels the others and its exception is raised here, as the sequential run raises it;
        a task whose workers died (out of memory, killed) is a DistractdError naming it.
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
            from distributed import KilledWorker, as_completed

            futures = [self.client.submit(fn, item, *args, pure=False, **kwargs)
                       for item in items]
            try:
                for future in as_completed(futures, loop=self.client.loop):
                    if future.status == "error":
                        future.result()  # raises the task's exception
                    bar.update()
                return self.client.gather(futures)
            except KilledWorker as exc:
                raise DistractdError(f"a Dask worker died running task {exc.task} (out of "
                                     f"memory? the worker's log says why)") from None
            finally:
                self.client.cancel([f for f in futures if not f.done()])

    def share(self, value):
        """``value`` as every task will receive it: sent to the cluster once, not per task."""
        if self.client is None:
            return value
        return self.client.scatter([value], hash=False)[0]


@contextmanager
def batch_runner(jobs=1, scheduler=None):
    """A :class:`Runner` for the length of a ``with`` block.

    Parameters
    ----------
    jobs : int, default=1
        Without ``scheduler``: 1 runs here, one task after another; more starts a local Dask
        cluster of ``jobs`` worker processes with one thread each (closed at the end).
    scheduler : str or None, default=None
        Address of a running Dask scheduler (``tcp://host:8786``), whose workers may be on many
        machines; ``jobs`` then does not apply.

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
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=10, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ConfigError(f"scheduler {scheduler!r}: no Dask scheduler answers ({exc})") \
                from None
        with client:
            yield Runner(client)
        return
    # every port on 127.0.0.1, the scheduler's HTTP port a free one (no clash with 8787); the
    # workers' log lines below errors (start-up, shutdown) are not the command's output
    with LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                      dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster, set_as_default=False) as client:
        yield Runner(client)


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
