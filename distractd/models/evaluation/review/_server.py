"""The review page's HTTP server: the standard library's, on 127.0.0.1, for one drive.

Routes (JSON unless noted):

- ``GET /`` and ``GET /static/<file>``: the page and its assets (HTML, JS, CSS, uPlot), served
  from the package; nothing is fetched from the internet;
- ``GET /api/drive``: :meth:`ReviewDrive.summary`;
- ``GET /api/view?t0=&t1=&px=``: :meth:`ReviewDrive.view`, the samples and event runs of a time
  range for a chart ``px`` pixels wide;
- ``GET /api/feature?name=``: one window feature;
- ``POST /api/labels`` with ``{"intervals": [[start_s, end_s, label], ...]}``: check and save
  (:meth:`ReviewDrive.save`).

A bad request is answered ``{"error": "<one line>"}`` with status 400 (409 when saving is off);
the line is printed on the console too. No traceback reaches the page or the console.
"""

import json
import math
import mimetypes
import signal
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import parse_qs, urlsplit

from ...._errors import ConfigError, DistractdError
from ._drive import load_drive

__all__ = ["ReviewServer", "serve_review", "MAX_PX", "MAX_BODY_BYTES"]

MAX_PX = 8192
"""Widest chart, pixels, a view request may ask for."""
MAX_BODY_BYTES = 16 * 2**20
"""Largest label upload, bytes."""
_STATIC = resources.files(__package__) / "static"


class ReviewServer(ThreadingHTTPServer):
    """Serves one :class:`ReviewDrive` on ``host:port`` (port 0: a free one).

    Parameters
    ----------
    drive : ReviewDrive
    host : str, default="127.0.0.1"
    port : int, default=0
    log : file, default=sys.stderr
        Where problems are printed, one line each.
    """

    daemon_threads = True

    def __init__(self, drive, host="127.0.0.1", port=0, log=sys.stderr):
        self.drive = drive
        self.log = log
        self.save_lock = threading.Lock()
        super().__init__((host, port), _Handler)

    @property
    def url(self):
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"

    def problem(self, message):
        """Print one line on the console."""
        print(f"distractd review: {message}", file=self.log, flush=True)

    def handle_error(self, request, client_address):
        """One line instead of the standard library's traceback; a browser that hung up is no
        problem."""
        exc = sys.exc_info()[1]
        if not isinstance(exc, ConnectionError):
            self.problem(f"error: request from {client_address[0]} failed: "
                         f"{type(exc).__name__}: {exc}")


def serve_review(path, labels=None, model=None, *, port=0, host="127.0.0.1", config=None,
                 decision=None, log=sys.stderr, on_ready=None):
    """Load a drive and serve its review page until interrupted.

    Parameters
    ----------
    path, labels, model, config, decision
        As :func:`load_drive`.
    port : int, default=0
        TCP port on ``host``; 0 picks a free one.
    host : str, default="127.0.0.1"
    log : file, default=sys.stderr
        Where problems go, one line each.
    on_ready : callable or None, default=None
        Called with the server once it listens (the CLI prints the address).

    Raises
    ------
    ConfigError
        The port cannot be bound.
    """
    drive = load_drive(path, labels, model, config, decision)
    for message in drive.errors:
        print(f"distractd review: error: {message}", file=log, flush=True)
    try:
        server = ReviewServer(drive, host, port, log)
    except OSError as exc:
        raise ConfigError(f"review.port {port} on {host}: {exc.strerror or exc}") from None
    stop_on_sigterm = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _interrupt) if stop_on_sigterm else None
    with server:
        if on_ready is not None:
            on_ready(server)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            if stop_on_sigterm:
                signal.signal(signal.SIGTERM, previous)


def _interrupt(signum, frame):
    """SIGTERM stops the page as Ctrl-C does."""
    raise KeyboardInterrupt


class _Handler(BaseHTTPRequestHandler):
    server_version = "distractd-review"

    def do_GET(self):
        url = urlsplit(self.path)
        query = {key: values[-1] for key, values in parse_qs(url.query).items()}
        drive = self.server.drive
        if url.path in ("/", "/index.html"):
            return self._static("index.html")
        if url.path == "/favicon.ico":
            return self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        if url.path.startswith("/static/"):
            return self._static(url.path[len("/static/"):])
        if url.path == "/api/drive":
            return self._json(drive.summary())
        if drive.windows is None and url.path.startswith("/api/"):
            return self._error(HTTPStatus.CONFLICT, "; ".join(drive.errors))
        if url.path == "/api/view":
            try:
                t0, t1 = float(query["t0"]), float(query["t1"])
                n_px = int(query.get("px", "1000"))
            except (KeyError, ValueError):
                return self._error(HTTPStatus.BAD_REQUEST, f"view needs numbers t0, t1 and px, "
                                   f"got {url.query!r}")
            if not (math.isfinite(t0) and math.isfinite(t1) and t0 < t1 and 0 < n_px <= MAX_PX):
                return self._error(HTTPStatus.BAD_REQUEST, f"view needs finite t0 < t1 and "
                                   f"0 < px <= {MAX_PX}, got {url.query!r}")
            return self._json(drive.view(t0, t1, n_px))
        if url.path == "/api/feature":
            name = query.get("name", "")
            try:
                return self._json({"name": name, "values": drive.feature(name)})
            except KeyError:
                return self._error(HTTPStatus.BAD_REQUEST, f"feature {name!r} is not a window "
                                   f"feature")
        return self._error(HTTPStatus.NOT_FOUND, f"no page {url.path}")

    def do_POST(self):
        if urlsplit(self.path).path != "/api/labels":
            return self._error(HTTPStatus.NOT_FOUND, f"no page {self.path}")
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_BODY_BYTES:
            return self._error(HTTPStatus.BAD_REQUEST, f"labels: body of 1 to {MAX_BODY_BYTES} "
                               f"bytes expected, got {length}")
        try:
            body = json.loads(self.rfile.read(length))
        except ValueError as exc:
            return self._error(HTTPStatus.BAD_REQUEST, f"labels: the body is not JSON ({exc})")
        if not isinstance(body, dict) or "intervals" not in body:
            return self._error(HTTPStatus.BAD_REQUEST, "labels: the body must be "
                               "{\"intervals\": [[start_s, end_s, label], ...]}")
        drive = self.server.drive
        if drive.save_to is None:
            return self._error(HTTPStatus.CONFLICT, "saving is off: " + "; ".join(drive.errors))
        try:
            with self.server.save_lock:
                report = drive.save(body["intervals"])
        except DistractdError as exc:
            return self._error(HTTPStatus.BAD_REQUEST, str(exc))
        except OSError as exc:
            return self._error(HTTPStatus.INTERNAL_SERVER_ERROR,
                               f"{exc.filename}: not saved ({exc.strerror or exc})")
        self.server.problem(f"saved {report['intervals']} intervals to {report['path']}"
                            + (f" (previous file kept as {report['backup']})"
                               if report["backup"] else ""))
        return self._json(report)

    def _static(self, name):
        asset = _STATIC / name
        if "/" in name or name.startswith(".") or not asset.is_file():
            return self._error(HTTPStatus.NOT_FOUND, f"no file {name}")
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        self._send(HTTPStatus.OK, asset.read_bytes(), kind)

    def _json(self, payload, status=HTTPStatus.OK):
        self._send(status, json.dumps(payload, allow_nan=False).encode(), "application/json")

    def _error(self, status, message):
        self.server.problem(f"error: {message}")
        self._json({"error": message}, status)

    def _send(self, status, body, kind):
        self.send_response(status)
        self.send_header("Content-Type", kind + ("; charset=utf-8" if kind.startswith(
            ("text/", "application/json", "application/javascript")) else ""))
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        """Requests are not logged; problems are (``ReviewServer.problem``)."""
