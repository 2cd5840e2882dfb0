"""Start-up times: the command line (``--version``, ``--help``, every command's ``--help``), the
imports of the daemon and the simulators, and the daemon up to READY with an empty and with a
filled numba cache.

Prints one JSON line per measurement: ``{"bench": "startup", "case": ..., "median_s": ...,
"runs_s": [...]}``. The baseline measured in the same run is the bare interpreter
(``python -c pass``), so a slow machine shows as a slow baseline, not as a slow distractd.

``daemon_ready_cold`` starts ``distractd run`` with ``NUMBA_CACHE_DIR`` pointing at a fresh empty
folder (a fresh install, or the systemd unit's fresh state directory) and times it to READY=1
over ``NOTIFY_SOCKET``; ``daemon_ready_warm`` starts it again on the folder the cold start
filled. Targets (issues 16, 24): ``--version`` and every ``--help`` <= 0.3 s, cold READY <= 10 s.

Usage: ``python benchmarks/startup.py [--runs 5] [--daemon-runs 1] [--baseline-tree DIR]``
(``--daemon-runs 0``: the command line and the imports only; ``--baseline-tree``: each case also
on an older source tree, alternating run by run, so both meet the same machine load).
"""

import argparse
import json
import os
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


def daemon_ready_s(cache_dir):
    """Seconds from launch to READY=1 of ``distractd run`` on free loopback ports."""
    notify = NotifyReceiver()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir), "NOTIFY_SOCKET": notify.path}
    command = [str(SCRIPT), "run", "--set", f'input.bind=["tcp://127.0.0.1:{free_port()}"]',
               "--set", f"output.bind=tcp://127.0.0.1:{free_port()}",
               "--set", f"metrics.port={free_port()}"]
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    try:
        ready = notify.wait_for("READY=1", timeout_s=600)
        elapsed = time.perf_counter() - start
        if ready is None:
            raise SystemExit(f"the daemon did not become ready (exit {process.poll()})")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    return elapsed


def report(case, runs, **extra):
    print(json.dumps({"bench": "startup", "case": case, "median_s": statistics.median(runs),
                      "runs_s": [round(r, 4) for r in runs], **extra}), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each command")
    parser.add_argument("--daemon-runs", type=int, default=1,
                        help="cold and warm daemon starts (each cold one on a new folder)")
    parser.add_argument("--baseline-tree", metavar="DIR",
                        help="a source tree of another distractd version (e.g. git archive of an "
                             "older commit): every command and import is also timed on it, "
                             "alternating, as baseline_tree_median_s")
    args = parser.parse_args()
    report("python_baseline", [timed([sys.executable, "-c", "pass"]) for _ in range(args.runs)])
    tree = args.baseline_tree
    for flag in ("--version", "--help"):
        report_compared(flag, [str(SCRIPT), flag], args.runs, tree, target_s=0.3)
    for command in _COMMANDS:
        report_compared(f"{command} --help", [str(SCRIPT), command, "--help"], args.runs, tree,
                        target_s=0.3)
    for module in ("distractd.daemon", "distractd.simulators"):
        report_compared(f"import {module}", [sys.executable, "-c", f"import {module}"],
                        args.runs, tree)
    cold, warm = [], []
    for _ in range(args.daemon_runs):
        with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache_dir:
            cold.append(daemon_ready_s(cache_dir))
            warm.append(daemon_ready_s(cache_dir))
    if args.daemon_runs:
        report("daemon_ready_cold", cold, target_s=10.0)
        report("daemon_ready_warm", warm)


if __name__ == "__main__":
    main()
