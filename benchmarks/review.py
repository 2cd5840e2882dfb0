"""How fast the review page opens a 1 h drive at 60 Hz (target: under 3 s) and answers a zoom.

Prints JSON lines:

- ``baseline``: reading the recording and computing its windows (``read_recording`` +
  ``extract_features``), in this process — the least any page over the drive must do;
- ``prepare``: :func:`load_drive` in this process, without and with the shipped model;
- ``http``: the answers' sizes and times over a real socket (the summary, the whole drive at
  ``--px`` pixels, one minute, one second);
- ``open``: ``distractd review`` started as a subprocess until the summary and the first view have
  arrived — what a user waits for, the browser's drawing aside (start-up imports included); wall
  time, and the server's CPU time, which is what the wall time would be on an idle core;
- ``browser`` (when Chromium and Playwright are present): from loading the page to the charts
  drawn, and from a zoom key to the new view drawn, in headless Chromium.

Times are the median of ``--repeats`` runs, in seconds; ``cpu_s`` is the CPU time the stage took,
which on a busy shared machine says more than the wall time.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from distractd.review import load_drive
from distractd.pipeline import extract_features, read_recording, write_recording
from distractd.simulators import simulate_drive

MODEL = Path(__file__).resolve().parents[1] / "distractd" / "data" / "default_model.npz"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


def median_time(function, repeats):
    """Median wall seconds of ``repeats`` calls, median CPU seconds of this process, the result."""
    walls, cpus, result = [], [], None
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = function()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
    return round(statistics.median(walls), 3), round(statistics.median(cpus), 3), result


def fetch(url):
    with urllib.request.urlopen(url, timeout=120) as response:
        return response.read()


def start_server(path, *args):
    """``distractd review`` on a free port; return (process, url)."""
    process = subprocess.Popen([sys.executable, "-m", "distractd.cli", "review", str(path),
                                "--port", "0", *map(str, args)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    if " at http://" not in line:
        process.kill()
        raise SystemExit(f"distractd review did not start: {line}{process.stderr.read()}")
    return process, line.split(" at ", 1)[1].split()[0]


def open_time(path, px, *args):
    """Wall and CPU seconds from starting the server to the summary and the whole-drive view
    received (the server idles afterwards, so its CPU time is the work of opening)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process, url = start_server(path, *args)
    try:
        drive = json.loads(fetch(url + "api/drive"))
        fetch(f"{url}api/view?t0={drive['t0']}&t1={drive['t1']}&px={px}")
        wall = time.perf_counter() - start
    finally:
        process.terminate()
        process.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def browser_times(path, repeats):
    from playwright.sync_api import sync_playwright

    process, url = start_server(path, "--model", MODEL)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            loads, zooms = [], []
            for _ in range(repeats):
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                start = time.perf_counter()
                page.goto(url)
                page.wait_for_selector("body[data-ready='1']", timeout=120_000)
                loads.append(time.perf_counter() - start)
                page.evaluate("document.body.removeAttribute('data-ready')")
                start = time.perf_counter()
                page.keyboard.press("+")
                page.wait_for_selector("body[data-ready='1']", timeout=120_000)
                zooms.append(time.perf_counter() - start)
                page.close()
            browser.close()
    finally:
        process.terminate()
        process.wait()
    return round(statistics.median(loads), 3), round(statistics.median(zooms), 3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=3600.0, help="drive length, s")
    parser.add_argument("--rate", type=float, default=60.0, help="sample rate, Hz")
    parser.add_argument("--px", type=int, default=1600, help="chart width, pixels")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "drive.npz"
        recording = simulate_drive(1, args.duration, args.rate, protocol="visual-manual")
        write_recording(recording, path)
        common = {"duration_s": args.duration, "rate_hz": args.rate,
                  "samples": recording.n_samples}
        load_drive(path, model=MODEL)   # warm-up: numba caches, file cache
        seconds, cpu, _ = median_time(lambda: extract_features(read_recording(path)),
                                      args.repeats)
        print(json.dumps({"stage": "baseline", **common, "read_and_windows_s": seconds,
                          "cpu_s": cpu}), flush=True)
        for model in (None, MODEL):
            seconds, cpu, _ = median_time(lambda: load_drive(path, model=model), args.repeats)
            print(json.dumps({"stage": "prepare", **common, "model": model is not None,
                              "load_drive_s": seconds, "cpu_s": cpu}), flush=True)
        process, url = start_server(path, "--model", MODEL)
        try:
            drive = json.loads(fetch(url + "api/drive"))
            t0, t1 = drive["t0"], drive["t1"]
            for name, query in (("summary", "api/drive"),
                                ("whole drive", f"api/view?t0={t0}&t1={t1}&px={args.px}"),
                                ("one minute", f"api/view?t0={t0 + 600}&t1={t0 + 660}"
                                               f"&px={args.px}"),
                                ("one second", f"api/view?t0={t0 + 600}&t1={t0 + 601}"
                                               f"&px={args.px}")):
                seconds, _, body = median_time(lambda: fetch(url + query), args.repeats)
                print(json.dumps({"stage": "http", **common, "request": name, "seconds": seconds,
                                  "bytes": len(body), "full_detail": json.loads(body).get(
                                      "full")}), flush=True)
        finally:
            process.terminate()
            process.wait()
        for extra in ((), ("--model", MODEL)):
            runs = [open_time(path, args.px, *extra) for _ in range(args.repeats)]
            print(json.dumps({"stage": "open", **common, "model": bool(extra),
                              "start_to_first_view_s": round(statistics.median(
                                  wall for wall, _ in runs), 3),
                              "start_to_first_view_cpu_s": round(statistics.median(
                                  cpu for _, cpu in runs), 3),
                              "target_s": 3.0}), flush=True)
        try:
            import playwright  # noqa: F401
        except ImportError:
            playwright = None
        if playwright is not None and os.access(CHROMIUM, os.X_OK):
            load_s, zoom_s = browser_times(path, args.repeats)
            print(json.dumps({"stage": "browser", **common, "model": True,
                              "page_load_to_drawn_s": load_s, "zoom_to_drawn_s": zoom_s}),
                  flush=True)


if __name__ == "__main__":
    main()
