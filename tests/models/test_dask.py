"""Batch work on a Dask cluster gives the numbers of the sequential run.

One small local cluster (two single-threaded worker processes) serves the module; the tests
reach it as a remote one, through its scheduler address (``batch_runner(scheduler=...)``).
"""

import json
import logging
import os
import signal
import subprocess
import sys
import time
import urllib.request
import warnings
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import dask
import pytest
from distributed import Client, LocalCluster

from distractd import ConfigError, DistractdError, RecordingError
from distractd._parallel import Runner, batch_runner, recording_windows
from distractd.cli import main
from distractd.models import ELMClassifier, SSELMClassifier, load_model
from distractd.models.detectors import ModelSpec, sselm_grid_search, train_cohort
from distractd.models.evaluation import SCHEMES, evaluate_cohort, evaluate_scheme, scheme_drives
from distractd.pipeline import PipelineConfig, write_recording
from distractd.simulators import free_port, simulate_cohort

CONFIG = PipelineConfig.from_dict({"drive_side": "right"})
# small randomised models: the tests are about seeds and scheduling, not about accuracy
ELM = ModelSpec("elm", ELMClassifier(n_hidden=40), {"C": [1.0, 100.0]}, randomised=True)
SSELM = ModelSpec("sselm", SSELMClassifier(n_hidden=40), {"C": [1.0], "lam": [0.1, 1.0]},
                  semi_supervised=True, randomised=True, select=sselm_grid_search)
OPTIONS = {"n_train": 300, "n_unlabelled": 100, "n_labelled": 40, "seed": 3}


@pytest.fixture(scope="module")
def scheduler():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address="127.0.0.1:0") as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """Two simulated drivers with two 8-minute drives each, on disk: a folder of Parquet
    files and one binary file."""
    folder = tmp_path_factory.mktemp("fleet")
    paths = []
    for recording in simulate_cohort(2, 11, drives=2, duration_s=480.0):
        suffix = ".npz" if recording.meta["drive"] == 1 else ".parquet"
        path = folder / "drives" / f"{recording.meta['recording_id']}{suffix}"
        path.parent.mkdir(exist_ok=True)
        write_recording(recording, path)
        paths.append(path)
    return folder / "drives", paths


def _json(value):
    return json.dumps(value, sort_keys=True, default=lambda a: np.asarray(a).tolist())


def test_features_are_read_where_they_live_and_equal_sequential(fleet, scheduler):
    folder, paths = fleet
    sequential = recording_windows([folder], CONFIG)
    with batch_runner(scheduler=scheduler) as runner:
        assert runner.n_workers == 2
        on_cluster = recording_windows([folder], CONFIG, runner)
    assert [item.meta["recording_id"] for item in on_cluster] == sorted(p.stem for p in paths)
    assert [item.source for item in on_cluster] == [str(p) for p in sorted(paths)]
    for item, item_seq in zip(on_cluster, sequential):
        assert item.meta == item_seq.meta and item.duration_s == item_seq.duration_s
        assert len(item.windows) > 800
        np.testing.assert_array_equal(item.windows.X, item_seq.windows.X)
        np.testing.assert_array_equal(item.windows.label, item_seq.windows.label)


def test_every_scheme_on_a_cluster_equals_sequential(fleet, scheduler):
    folder, _ = fleet
    with batch_runner(scheduler=scheduler) as runner:
        drives, names = scheme_drives([folder], CONFIG, "drive", runner=runner)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # few windows of a class in a fold
            for scheme in SCHEMES:  # within-drive schemes (slow) on one drive per driver
                within = scheme in ("blocked", "source")
                chosen, specs = ([drives[0], drives[2]], [SSELM]) if within else (
                    drives, [ELM, SSELM])
                sequential = evaluate_scheme(chosen, scheme, specs, **OPTIONS)
                on_cluster = evaluate_scheme(chosen, scheme, specs, runner=runner, **OPTIONS)
                assert _json(on_cluster) == _json(sequential), scheme
                g_means = [r["g_mean"] for records in sequential["sselm"].values()
                           for r in records]
                assert np.isfinite(g_means).any() and len(set(g_means)) > 1
    # a model's figures depend on its own seed, not on the other models of the run
    alone = evaluate_scheme(drives, "new-driver", [SSELM], **OPTIONS)
    assert _json(alone["sselm"]) == _json(
        evaluate_scheme(drives, "new-driver", [ELM, SSELM], **OPTIONS)["sselm"])


def test_protocol_over_drivers_on_a_cluster_equals_sequential(scheduler):
    rng = np.random.default_rng(0)
    drivers = []
    for _ in range(3):
        y = ((np.arange(480) // 40) % 3 == 1).astype(np.int8)
        X = rng.normal(size=(480, 6)) + 0.7 * (y == 1)[:, None] * rng.normal(size=6)
        drivers.append((X, y, 0.5 * np.arange(1, 481)))
    options = {"n_labelled": 40, "seed": 5, "decision": {"on": 0.2, "off": -0.2}}

    def without_timings(results):
        return _json([{name: {**result, "splits": [
            {k: v for k, v in split.items() if not k.endswith("_ms")} for split in
            result["splits"]]} for name, result in driver.items()} for driver in results])

    sequential = without_timings(evaluate_cohort(drivers, [ELM], **options))
    with batch_runner(scheduler=scheduler) as runner:
        on_cluster = without_timings(evaluate_cohort(drivers, [ELM], runner=runner, **options))
    assert on_cluster == sequential
    first, second = json.loads(sequential)[:2]
    assert first != second  # each driver has its own seed


def test_cohort_training_on_a_cluster_equals_sequential(fleet, scheduler):
    _, paths = fleet
    options = {"n_train": 300, "config": CONFIG, "seed": 2, "segment_frames": 0}
    estimator, parts = train_cohort(paths, "elm", **options)
    with batch_runner(scheduler=scheduler) as runner:
        estimator_c, parts_c = train_cohort(paths, "elm", runner=runner, **options)
    assert _json(parts_c["summary"]) == _json(parts["summary"])
    assert parts["summary"]["n_recordings"] == 4 and len(parts["summary"]["drivers"]) == 2
    np.testing.assert_array_equal(parts_c["normalizer_mean"], parts["normalizer_mean"])
    rows = parts["extras"]["anchors"][1]["X"]
    np.testing.assert_array_equal(estimator_c.decision_function(rows),
                                  estimator.decision_function(rows))


def test_a_task_error_reaches_the_caller_as_in_a_sequential_run(fleet, tmp_path, scheduler):
    _, paths = fleet
    bad = tmp_path / "truncated.parquet"
    bad.write_bytes(paths[0].read_bytes()[:3000])
    with batch_runner(scheduler=scheduler) as runner:
        with pytest.raises(RecordingError, match="truncated.parquet: unreadable Parquet"):
            recording_windows([paths[0], bad], CONFIG, runner)
        with pytest.raises(RecordingError, match="no-such-folder: no such file or folder"):
            recording_windows([tmp_path / "no-such-folder"], CONFIG, runner)


def test_a_dead_worker_is_a_named_error():
    """A worker that dies (here by exiting; out of memory in life) fails its task with a
    DistractdError the command prints in one line, not with Dask's KilledWorker."""
    settings = {"n_workers": 1, "threads_per_worker": 1, "processes": True,
                "dashboard_address": "127.0.0.1:0", "silence_logs": logging.CRITICAL}
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            LocalCluster(**settings) as cluster, Client(cluster, set_as_default=False) as client:
        with pytest.raises(DistractdError, match="a Dask worker died running task _exit"):
            Runner(client).map(os._exit, [3])


def test_runner_settings_are_checked():
    with pytest.raises(ConfigError, match="batch.jobs must be"):
        with batch_runner(jobs=0):
            pass
    with batch_runner() as runner:
        assert runner.client is None and runner.map(divmod, [7, 9], 4) == [(1, 3), (2, 1)]
    assert Runner().share([1, 2]) == [1, 2]


def test_cli_features_train_and_evaluate_on_a_cluster_equal_sequential(fleet, scheduler,
                                                                        tmp_path):
    """--jobs starts a local cluster, --scheduler joins a running one; neither changes a
    number: feature CSVs byte for byte, the cohort model's id, the evaluation's results."""
    folder, _ = fleet
    outputs = {}
    for name, batch in (("sequential", []), ("jobs", ["--jobs", "2"]),
                        ("scheduler", ["--scheduler", scheduler])):
        out = tmp_path / name  # made by features: the folder holds several recordings
        assert main(["features", folder, "--out", out, "--drive-side", "right", "-q", *batch]) == 0
        csvs = {path.name: path.read_bytes() for path in sorted(out.iterdir())}
        if name == "jobs":  # a local cluster: features only (its start-up is the slow part)
            outputs[name] = csvs
            continue
        assert main(["train", folder, "--cohort", "--model", "elm", "--train", "300",
                     "--segment-windows", "0", "--drive-side", "right",
                     "--out", out / "model.npz", "-q", *batch]) == 0
        assert main(["evaluate", folder, "--scheme", "new-driver", "--models", "elm",
                     "--normalisation", "drive", "--train", "300", "--drive-side", "right",
                     "--out", out / "evaluation", "-q", *batch]) == 0
        results = json.loads((out / "evaluation" / "results.json").read_text())
        outputs[name] = (csvs, load_model(out / "model.npz").model_id, results["schemes"])
    assert len(outputs["sequential"][0]) == 4
    taken = tmp_path / "taken.csv"
    taken.write_text("")
    assert main(["features", folder, "--out", taken]) == 1  # four recordings, one file
    assert outputs["jobs"] == outputs["sequential"][0]
    assert outputs["scheduler"] == outputs["sequential"]


def test_cli_start_up_and_sequential_runs_import_neither_dask_nor_pyarrow(fleet, tmp_path):
    _, paths = fleet
    binary = next(p for p in paths if p.suffix == ".npz")
    code = ("import sys; from distractd.cli import main; "
            f"assert main(['features', {str(binary)!r}, '--out', {str(tmp_path / 'f.csv')!r}, "
            "'-q']) == 0; "
            "print(sorted(m for m in ('dask', 'distributed', 'pyarrow') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@contextmanager
def _dask_processes(n_workers=1):
    """A scheduler and a worker started with Dask's own commands, as on a multi-machine cluster
    (docs/evaluation.md), each in its own process group so that a test can kill it; yields
    ``(address, scheduler, worker)`` once the workers have joined."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask_command = str(Path(sys.executable).parent / "dask")
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL,
             "start_new_session": True}
    scheduler = subprocess.Popen([dask_command, "scheduler", "--host", "127.0.0.1", "--port",
                                  str(port), "--dashboard-address", "127.0.0.1:0"], **quiet)
    worker = subprocess.Popen([dask_command, "worker", address, "--nworkers", str(n_workers),
                               "--nthreads", "1", "--no-dashboard"], **quiet)
    try:
        with Client(address, timeout=120, set_as_default=False) as client:
            client.wait_for_workers(n_workers, timeout=120)
        yield address, scheduler, worker
    finally:
        for process in (worker, scheduler):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=60)


def _wait_for(path):
    """Wait until a task on a worker has made ``path`` (bounded by the test's timeout)."""
    while not path.exists():
        time.sleep(0.05)


def test_a_cluster_whose_workers_all_died_ends_the_run_with_one_error(tmp_path):
    """Every worker killed mid-run (the scheduler alive, waiting for workers): the run ends
    after no_workers_s with one DistractdError instead of hanging silently."""
    started = tmp_path / "started"
    task = ["sh", "-c", f"touch {started}; sleep 300"]
    with _dask_processes() as (address, _, worker):
        with batch_runner(scheduler=address, no_workers_s=3.0) as runner:
            assert runner.n_workers == 1
            with ThreadPoolExecutor(1) as pool:
                run = pool.submit(runner.map, subprocess.run, [task, task])
                _wait_for(started)
                os.killpg(worker.pid, signal.SIGKILL)  # the worker, its nanny and the task
                with pytest.raises(DistractdError) as error:
                    run.result(timeout=120)
    assert str(error.value) == (
        f"the Dask cluster {address} has had no workers for 3 s (0 of 2 tasks done; every "
        f"worker died or none started: start some, e.g. dask worker {address}, and run again)")


def test_a_lost_scheduler_is_one_line_and_status_1_from_the_command(tmp_path):
    """The scheduler killed while a worker runs a task of ``distractd features --scheduler``:
    the command prints one line naming the scheduler (Dask's 65 lines of logged tracebacks
    stay out) and exits 1. The task reads a named pipe, so it is known to be running."""
    pipe = tmp_path / "drive.csv"
    os.mkfifo(pipe)
    command = [sys.executable, "-m", "distractd.cli", "features", str(pipe), "--scheduler"]
    with _dask_processes() as (address, scheduler, _):
        done = subprocess.Popen([*command, address, "--out", str(tmp_path / "f.csv")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        writer = None
        while writer is None:  # a writer can open the pipe once the worker's task opened it
            try:
                writer = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                assert done.poll() is None, done.communicate()
                time.sleep(0.05)
        try:
            os.killpg(scheduler.pid, signal.SIGKILL)
            out, err = done.communicate(timeout=120)
        finally:
            os.close(writer)
    assert done.returncode == 1 and out == ""
    assert err.splitlines() == [
        f"distractd features: error: lost the Dask scheduler {address} after 0 of 1 tasks: it "
        f"stopped, or the network to it failed (the scheduler's log says why)"]


def test_the_cluster_serves_its_dashboard(scheduler):
    """bokeh comes with the dask extra: the cluster's dashboard page is served."""
    with batch_runner(scheduler=scheduler) as runner:
        link = runner.client.dashboard_link
        assert link.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(link, timeout=60) as page:
            assert page.status == 200
            assert b"Dask" in page.read()
