"""Start-up times: the command line (``--version``, ``--help``, every command's ``--help``), the
imports of the daemon and the simulators, and the daemon up to READY with an empty and with a
filled numba cache.

Prints one JSON line per measurement: ``{"bench": "startup", "case": ..., "median_s": ...,
"runs_s": [...]}``. The baseline measured in the same run is the bare interpreter
(``python -c pass``), so a slow machine shows as a slow baseline, not as a slow distractd.

``daemon_ready_cold`` starts ``distractd run`` with ``NUMBA_CACHE_DIR`` pointing at a fresh empty
folder (a fresh install, or the systemd unit's fresh state directory) and times it to READY=1
over ``NOTIFY_SOCKET``; ``daemon_ready_warm`` starts it again on the folder the cold start
filled; ``check_cold`` runs ``distractd run --check`` (the unit's ExecStartPre) on another fresh
folder. The daemon cases also give the CPU seconds of the process and the children it waited for
(``cpu_s``, the figure to compare on a loaded machine). Targets (issues 16, 24, 26): ``--version``
and every ``--help`` <= 0.3 s, cold READY <= 10 s, warm READY <= 1 s.

Usage: ``python benchmarks/startup.py [--runs 5] [--daemon-runs 1] [--baseline-tree DIR]``
(``--daemon-runs 0``: the command line and the imports only; ``--runs 0``: the daemon only;
``--baseline-tree``: each case also on an older source tree, alternating run by run, so both meet
the same machine load, with ``baseline_tree_*`` figures and the ratio ``before_over_after``;
``--kernels``: also each kernel a cold warm-up compiles in the daemon's process, with its time).
"""

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from distractd.cli import _COMMANDS
from distractd.simulators import NotifyReceiver, free_port

SCRIPT = Path(sys.executable).with_name("distractd")


def timed(command, env=None):
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env,
                   cwd=tempfile.gettempdir())
    return time.perf_counter() - start


def compared(command, runs, tree):
    """Runs of ``command`` on the installed distractd and, alternating with them so that both
    meet the same load, on the distractd of source ``tree`` (put first on ``PYTHONPATH``; run
    from a neutral folder, so that ``python -c`` does not find the checkout in its working
    directory); ``(runs, tree runs)``, the latter empty without ``tree``."""
    own, old = [], []
    for _ in range(runs):
        own.append(timed(command))
        if tree:
            old.append(timed(command, {**os.environ, "PYTHONPATH": str(tree)}))
    return own, old


def report_compared(case, command, runs, tree, **extra):
    own, old = compared(command, runs, tree)
    if tree:
        extra.update(baseline_tree_median_s=statistics.median(old),
                     baseline_tree_runs_s=[round(r, 4) for r in old])
    report(case, own, **extra)


def children_cpu_s():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def tree_env(tree, cache_dir):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    if tree:
        env["PYTHONPATH"] = str(tree)
    return env


def daemon_ready(cache_dir, tree=None):
    """``(seconds, CPU seconds)`` from launch to READY=1 of ``distractd run`` on free loopback
    ports (of the source ``tree`` when given); the CPU is the process's whole life, SIGTERM
    included."""
    command = [str(SCRIPT), "run", "--set", f'input.bind=["tcp://127.0.0.1:{free_port()}"]',
               "--set", f"output.bind=tcp://127.0.0.1:{free_port()}",
               "--set", f"metrics.port={free_port()}"]
    with NotifyReceiver() as notify:
        cpu = children_cpu_s()
        start = time.perf_counter()
        process = subprocess.Popen(command, env={**tree_env(tree, cache_dir),
                                                 "NOTIFY_SOCKET": notify.path},
                                   stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir())
        try:
            ready = notify.wait_for("READY=1", timeout_s=900)
            elapsed = time.perf_counter() - start
            if ready is None:
                raise SystemExit(f"the daemon did not become ready (exit {process.poll()})")
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
    return elapsed, children_cpu_s() - cpu


def run_check(cache_dir, tree=None):
    """``(seconds, CPU seconds)`` of ``distractd run --check`` (of the source ``tree`` when
    given)."""
    cpu = children_cpu_s()
    start = time.perf_counter()
    subprocess.run([str(SCRIPT), "run", "--check", "--quiet"], check=True, env=tree_env(
        tree, cache_dir), stdout=subprocess.DEVNULL, cwd=tempfile.gettempdir())
    return time.perf_counter() - start, children_cpu_s() - cpu


def daemon_cases(runs, tree):
    """Per case, ``[(seconds, CPU seconds), ...]`` on this distractd and on ``tree`` (alternating,
    each cold start on a new cache folder)."""
    found = {(case, side): [] for case in ("daemon_ready_cold", "daemon_ready_warm", "check_cold")
             for side in ("own", "tree")}
    for _ in range(runs):
        for side, source in (("own", None), ("tree", tree)):
            if side == "tree" and not tree:
                continue
            with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache_dir:
                found["daemon_ready_cold", side].append(daemon_ready(cache_dir, source))
                found["daemon_ready_warm", side].append(daemon_ready(cache_dir, source))
            with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache_dir:
                found["check_cold", side].append(run_check(cache_dir, source))
    return found


def report_daemon(runs, tree):
    found = daemon_cases(runs, tree)
    targets = {"daemon_ready_cold": 10.0, "daemon_ready_warm": 1.0, "check_cold": 10.0}
    for case, target in targets.items():
        own = found[case, "own"]
        extra = {"cpu_median_s": statistics.median(c for _, c in own),
                 "cpu_runs_s": [round(c, 3) for _, c in own], "target_s": target}
        old = found[case, "tree"]
        if old:
            extra.update(
                baseline_tree_median_s=statistics.median(w for w, _ in old),
                baseline_tree_cpu_median_s=statistics.median(c for _, c in old),
                baseline_tree_runs_s=[round(w, 4) for w, _ in old],
                before_over_after=round(statistics.median(w for w, _ in old)
                                        / statistics.median(w for w, _ in own), 3),
                cpu_before_over_after=round(statistics.median(c for _, c in old)
                                            / extra["cpu_median_s"], 3))
        report(case, [w for w, _ in own], **extra)


KERNELS = """
import json, sys, time
from numba.core import event
from distractd.daemon import Model

class Compiles(event.Listener):
    def __init__(self):
        self.open, self.done = [], []
    def on_start(self, ev):
        self.open.append((time.perf_counter(), time.process_time()))
    def on_end(self, ev):
        wall, cpu = self.open.pop()
        function = ev.data["dispatcher"].py_func
        self.done.append({"kernel": f"{function.__module__}.{function.__qualname__}",
                          "nested_in_another": bool(self.open),
                          "wall_s": round(time.perf_counter() - wall, 3),
                          "cpu_s": round(time.process_time() - cpu, 3)})

compiles = Compiles()
event.register("numba:compile", compiles)
wall, cpu = time.perf_counter(), time.process_time()
Model(None)
print(json.dumps({"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu,
                  "compiles": compiles.done}))
"""
"""The model's warm-up in a fresh interpreter, each numba compile timed (numba's compile events;
the CPU of this process only, not of a helper process)."""


def report_kernels(tree):
    """One line per kernel compiled by a cold warm-up in the daemon's process (``cpu_s`` includes
    the kernels compiled inside it, ``nested_in_another`` marks those), then the whole warm-up:
    on this distractd and on ``tree``."""
    for side, source in (("own", None), ("baseline_tree", tree)):
        if side == "baseline_tree" and not tree:
            continue
        with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache_dir:
            found = json.loads(subprocess.run(
                [sys.executable, "-c", KERNELS], check=True, capture_output=True, text=True,
                env=tree_env(source, cache_dir), cwd=tempfile.gettempdir()).stdout)
        for compile_ in found["compiles"]:
            print(json.dumps({"bench": "startup", "case": "kernel_compile", "tree": side,
                              **compile_}), flush=True)
        top = [c for c in found["compiles"] if not c["nested_in_another"]]
        print(json.dumps({"bench": "startup", "case": "warm_up_cold", "tree": side,
                          "wall_s": round(found["wall_s"], 3), "cpu_s": round(found["cpu_s"], 3),
                          "compiles": len(top),
                          "compile_cpu_s": round(sum(c["cpu_s"] for c in top), 3)}), flush=True)


def report(case, runs, **extra):
    print(json.dumps({"bench": "startup", "case": case, "median_s": statistics.median(runs),
                      "runs_s": [round(r, 4) for r in runs], **extra}), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5,
                        help="runs of each command (0: the daemon cases only)")
    parser.add_argument("--daemon-runs", type=int, default=1,
                        help="cold and warm daemon starts and cold checks (each cold one on a "
                             "new folder)")
    parser.add_argument("--baseline-tree", metavar="DIR",
                        help="a source tree of another distractd version (e.g. git archive of an "
                             "older commit): every command and import is also timed on it, "
                             "alternating, as baseline_tree_median_s")
    parser.add_argument("--kernels", action="store_true",
                        help="also time each kernel a cold warm-up compiles (kernel_compile lines)")
    args = parser.parse_args()
    tree = args.baseline_tree
    if args.runs:
        report("python_baseline",
               [timed([sys.executable, "-c", "pass"]) for _ in range(args.runs)])
        for flag in ("--version", "--help"):
            report_compared(flag, [str(SCRIPT), flag], args.runs, tree, target_s=0.3)
        for command in _COMMANDS:
            report_compared(f"{command} --help", [str(SCRIPT), command, "--help"], args.runs,
                            tree, target_s=0.3)
        for module in ("distractd.daemon", "distractd.simulators"):
            report_compared(f"import {module}", [sys.executable, "-c", f"import {module}"],
                            args.runs, tree)
    if args.daemon_runs:
        report_daemon(args.daemon_runs, tree)
    if args.kernels:
        report_kernels(tree)


if __name__ == "__main__":
    main()
