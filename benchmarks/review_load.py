"""The review server under many clients at once and under idle connections (issue 23, item 12).

Starts ``distractd review`` on a simulated 10-minute drive (the installed ``distractd``, or the
one on ``PYTHONPATH``, to compare versions) and measures, over real sockets on 127.0.0.1:

- ``burst``: ``--clients`` clients connect at once and each sends one small GET; how many got an
  answer, and how many saw a reset, a refusal or no answer within ``--patience`` seconds;
- ``idle``: ``--idle`` connections opened and left silent, then one GET: its answer (a busy
  server's 503 is an answer), and how many of the idle connections the server has closed after
  ``--patience`` seconds;
- ``trickle`` (issue 37, item 5): ``--trickle`` connections each send a request line and then a
  header byte every 2 s; meanwhile 20 GETs, 0.5 s apart: their answers;
- ``sigterm`` (issue 37, item 5): ``--sigterm-runs`` times, a fresh server under 32 clients
  asking for views in a loop is sent SIGTERM after 3 s: seconds to its exit (``None``: none within
  60 s), and whether its console held a traceback or "Semaphore released too many times".

Prints one JSON line per measurement and appends them to ``--out``.
"""

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[40, 200])
    parser.add_argument("--idle", type=int, default=100)
    parser.add_argument("--patience", type=float, default=15.0)
    parser.add_argument("--trickle", type=int, default=256)
    parser.add_argument("--sigterm-runs", type=int, default=10)
    parser.add_argument("--label", default="this tree")
    parser.add_argument("--out", type=Path, default=Path("review_load.jsonl"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        drive = Path(folder) / "drive.npz"
        subprocess.run([sys.executable, "-m", "distractd.cli", "simulate", "--seed", "3",
                        "--duration", "600", "--out", str(drive), "-q"], check=True)
        server = subprocess.Popen([sys.executable, "-m", "distractd.cli", "review", str(drive),
                                   "--port", "0"], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        try:
            line = server.stdout.readline()
            port = int(line.split(" at http://127.0.0.1:")[1].split("/")[0])
            for n in args.clients:
                _emit(args, {"measure": "burst", "clients": n, **_burst(port, n, args.patience)})
            _emit(args, {"measure": "idle", "connections": args.idle,
                         **_idle(port, args.idle, args.patience)})
            _emit(args, {"measure": "trickle", "connections": args.trickle,
                         **_trickle(port, args.trickle, args.patience)})
        finally:
            server.terminate()
            server.wait()
        for run in range(args.sigterm_runs):
            _emit(args, {"measure": "sigterm", "run": run, **_sigterm(drive)})


def _get(port, patience_s):
    """One GET over a new connection: ``"answered <status>"``, ``"reset"``, ``"refused"`` or
    ``"no answer"``."""
    request = (f"GET /api/feature?name=x HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
               f"Connection: close\r\n\r\n").encode()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=patience_s) as connection:
            connection.sendall(request)
            head = connection.recv(64)
            return f"answered {head.split()[1].decode()}" if head.startswith(b"HTTP/") \
                else "no answer"
    except ConnectionResetError:
        return "reset"
    except ConnectionRefusedError:
        return "refused"
    except OSError:
        return "no answer"


def _burst(port, n, patience_s):
    outcomes = []
    start = threading.Barrier(n)

    def client():
        start.wait()
        outcomes.append(_get(port, patience_s))

    threads = [threading.Thread(target=client) for _ in range(n)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    counts = {kind: outcomes.count(kind) for kind in sorted(set(outcomes))}
    return {**counts, "wall_s": round(time.perf_counter() - began, 2)}


def _idle(port, n, patience_s):
    held = [socket.create_connection(("127.0.0.1", port), timeout=patience_s) for _ in range(n)]
    try:
        answer = _get(port, patience_s)
        time.sleep(patience_s)
        closed = 0
        for connection in held:
            connection.setblocking(False)
            try:
                closed += connection.recv(1) == b""
            except BlockingIOError:
                pass
            except OSError:
                closed += 1
        return {"get_while_idle": answer, "closed_by_server": closed}
    finally:
        for connection in held:
            connection.close()


def _trickle(port, n, patience_s):
    held = []
    for _ in range(n):
        connection = socket.create_connection(("127.0.0.1", port), timeout=patience_s)
        connection.sendall(b"GET /api/drive HTTP/1.1\r\nX-Slow: ")
        held.append(connection)
    stop = threading.Event()

    def trickle():
        while not stop.wait(2.0):
            for connection in held:
                try:
                    connection.sendall(b"a")
                except OSError:
                    pass

    threading.Thread(target=trickle, daemon=True).start()
    outcomes = []
    try:
        for _ in range(20):
            outcomes.append(_get(port, patience_s))
            time.sleep(0.5)
    finally:
        stop.set()
        for connection in held:
            connection.close()
    return {kind: outcomes.count(kind) for kind in sorted(set(outcomes))}


def _sigterm(drive):
    server = subprocess.Popen([sys.executable, "-m", "distractd.cli", "review", str(drive),
                               "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    port = int(server.stdout.readline().split(" at http://127.0.0.1:")[1].split("/")[0])
    request = (f"GET /api/view?t0=0&t1=600&px=2000 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
               f"Connection: close\r\n\r\n").encode()

    def client():
        while server.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
                    connection.sendall(request)
                    while connection.recv(65536):
                        pass
            except OSError:
                pass

    for _ in range(32):
        threading.Thread(target=client, daemon=True).start()
    time.sleep(3.0)
    began = time.perf_counter()
    server.terminate()
    try:
        server.wait(timeout=60)
        exit_s = round(time.perf_counter() - began, 2)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
        exit_s = None
    console = server.stderr.read()
    return {"exit_s": exit_s, "status": server.returncode, "traceback": "Traceback" in console,
            "semaphore": "Semaphore released" in console}


def _emit(args, record):
    record = {"label": args.label, **record}
    print(json.dumps(record), flush=True)
    with open(args.out, "a") as file:
        file.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
