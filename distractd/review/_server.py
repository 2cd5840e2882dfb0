"""The review page's HTTP server: the standard library's, on 127.0.0.1, for one drive.

Routes (JSON unless noted):

- ``GET /`` and ``GET /static/<file>``: the page and its assets (HTML, JS, CSS, uPlot), served
  from the package; nothing is fetched from the internet;
- ``GET /api/drive``: :meth:`ReviewDrive.summary`;
- ``GET /api/view?t0=&t1=&px=``: :meth:`ReviewDrive.view`, the samples and event runs of a time
  range for a chart ``px`` pixels wide;
- ``GET /api/feature?name=``: one window feature;
- ``POST /api/labels`` with ``{"intervals": [[start_s, end_s, label], ...], "reviewed":
  [[start_s, end_s], ...], "digest": ...}`` (``reviewed`` optional; ``digest`` the one the tab
  loaded from ``/api/drive`` or got from its last save): check and save
  (:meth:`ReviewDrive.save`).

A bad request is answered ``{"error": "<one line>"}`` with status 400 (409 when saving is off);
the line is printed on the console too. No traceback reaches the page or the console.

Only the page itself may use the server (docs/review.md, "Security"):

- every request must name the server in ``Host`` (``127.0.0.1`` or ``localhost`` on its own
  port), and an ``Origin``, when sent, must be that too: another web site, or a name of its
  re-bound by DNS to 127.0.0.1, is refused with 403;
- a save must present the session's token, which only the page carries (a ``<meta>`` tag of
  ``GET /``, sent back as the ``X-Distractd-Token`` header), and be ``application/json``
  (a form or ``text/plain`` post, the kinds a foreign page may send without asking, is refused);
- bodies are bounded (:data:`MAX_BODY_BYTES`) and so is JSON nesting; a request (its line,
  headers and body) must arrive within :data:`TIMEOUT_S` in all, however it trickles, or it is
  answered 408 and closed (a silent connection is closed without a word); at most
  :data:`MAX_CONNECTIONS` connections are served at once: one more closes the connection that has
  waited longest for its request to arrive (a trickling client) and takes its place, or is
  answered 503 when every one is busy answering; the listen backlog is :data:`BACKLOG`; every
  request gets an answer with a status line (an HTTP/0.9 one too), an unexpected fault included
  (500, one line on the console).

Two tabs of one page never overwrite each other: the page sends back the digest of the labels it
loaded, and a save over labels saved since (by the other tab, or an editor) is refused with 409
(:class:`StaleLabels`). SIGTERM and Ctrl-C stop the server between requests.
"""

import hmac
import io
import json
import mimetypes
import os
import secrets
import signal
import socket
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import parse_qs, urlsplit

from .._errors import ConfigError, DistractdError
from ._drive import load_drive
from ._labels import StaleLabels

__all__ = ["ReviewServer", "serve_review", "MAX_PX", "MAX_BODY_BYTES", "BACKLOG", "TIMEOUT_S",
           "MAX_CONNECTIONS", "TOKEN_HEADER"]

MAX_PX = 8192
"""Widest chart, pixels, a view request may ask for."""
MAX_T_S = 1e12
"""Largest view time, seconds, in magnitude (Unix times fit; 1e308 would overflow to NaN)."""
MAX_BODY_BYTES = 16 * 2**20
"""Largest label upload, bytes."""
BACKLOG = 128
"""Connections the kernel holds for the server while it is busy (the standard library's: 5)."""
TIMEOUT_S = 10.0
"""Seconds a request (line, headers and body) may take to arrive, and a connection may wait for
its next request; then it is answered 408 (part of a request arrived) and closed."""
MAX_CONNECTIONS = 256
"""Connections served at once; one more takes the place of the one waiting longest for its
request, or is answered 503 when all are busy answering."""
TOKEN_HEADER = "X-Distractd-Token"
"""The header a save carries the session's token in."""
_TOKEN_PLACEHOLDER = b"{{token}}"
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
    timeout_s : float, default=TIMEOUT_S
        Seconds a request may take to arrive (and a connection wait for its next one); then it
        is answered 408 (part of it arrived) and closed.

    Attributes
    ----------
    token : str
        The session's token, which every save must present (a new one each start).
    n_connections : int
        Connections being served now (:attr:`n_waiting` of them waiting for their request).
    """

    daemon_threads = True
    request_queue_size = BACKLOG

    def __init__(self, drive, host="127.0.0.1", port=0, log=sys.stderr, timeout_s=TIMEOUT_S):
        self.drive = drive
        self.log = log
        self.timeout_s = timeout_s
        self.token = secrets.token_urlsafe(24)
        self.save_lock = threading.Lock()
        self.stop_requested = False
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.n_connections = 0
        self._waiting = {}          # connection -> monotonic s since it waits for its request
        self._waiting_lock = threading.Lock()
        super().__init__((host, port), _Handler)
        self.origins = {f"{name}:{self.server_address[1]}" for name in ("127.0.0.1", "localhost")}

    @property
    def url(self):
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"

    def problem(self, message):
        """Print one line on the console."""
        print(f"distractd review: {message}", file=self.log, flush=True)

    @property
    def n_waiting(self):
        """Connections waiting for their request to arrive."""
        with self._waiting_lock:
            return len(self._waiting)

    def waiting(self, connection, since_s):
        """Note that ``connection`` waits for a request since ``since_s`` (None: no longer;
        an earlier time noted stays)."""
        with self._waiting_lock:
            if since_s is None:
                self._waiting.pop(connection, None)
            else:
                self._waiting.setdefault(connection, since_s)

    def _count(self, change):
        with self._waiting_lock:
            self.n_connections += change

    def _evict(self):
        """Close the connection that has waited longest for its request; whether there was
        one."""
        with self._waiting_lock:
            if not self._waiting:
                return False
            connection = min(self._waiting, key=self._waiting.get)
            since_s = self._waiting.pop(connection)
        try:
            peer = connection.getpeername()[0]
            connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            peer = "a client that left"
        self.problem(f"error: {MAX_CONNECTIONS} connections are being served; the one from "
                     f"{peer} waiting {time.monotonic() - since_s:.1f} s for its request was "
                     f"closed for a new one")
        return True

    def process_request(self, request, client_address):
        """A thread per connection while fewer than :data:`MAX_CONNECTIONS` are served; else
        one of the connections waiting for their request makes way for it, or, when every one is
        busy answering, a 503 answer at once."""
        if not self._slots.acquire(blocking=False) and not (
                self._evict() and self._slots.acquire(timeout=self.timeout_s)):
            self.problem(f"error: {MAX_CONNECTIONS} connections are being served; one from "
                         f"{client_address[0]} was answered 503")
            try:
                request.settimeout(self.timeout_s)
                request.sendall(_BUSY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        self._count(+1)
        self.waiting(request, time.monotonic())
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread started: its slot is free again
            self._free(request)
            raise

    def process_request_thread(self, request, client_address):
        """Serve the connection in its thread, then free its slot."""
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._free(request)

    def _free(self, request):
        self.waiting(request, None)
        self._count(-1)
        self._slots.release()

    def service_actions(self):
        """Between requests: stop serving once a signal asked (:func:`serve_review`)."""
        if self.stop_requested:
            raise _Stopped

    def handle_error(self, request, client_address):
        """One line instead of the standard library's traceback; a browser that hung up is no
        problem."""
        exc = sys.exc_info()[1]
        if not isinstance(exc, ConnectionError):
            self.problem(f"error: request from {client_address[0]} failed: "
                         f"{type(exc).__name__}: {exc}")


_BUSY_BODY = json.dumps({"error": f"busy: {MAX_CONNECTIONS} connections are being served, "
                                  f"try again"}).encode()
_BUSY = (b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
         b"Content-Length: " + str(len(_BUSY_BODY)).encode() + b"\r\nConnection: close\r\n\r\n"
         + _BUSY_BODY)


class _Stopped(Exception):
    """SIGTERM or Ctrl-C asked the server to stop."""


def serve_review(path, labels=None, model=None, *, port=0, host="127.0.0.1", config=None,
                 decision=None, log=sys.stderr, on_ready=None):
    """Load a drive and serve its review page until SIGTERM or Ctrl-C; then end the process.

    The signals only set :attr:`ReviewServer.stop_requested`, which the serving loop reads
    between requests (within half a second): an exception raised wherever the signal lands
    could leave a connection's slot counted twice. Once the server is closed and no save is
    under way, the process ends at once (``os._exit(0)``, output flushed): the interpreter's
    finalisation took 3-16 s of a stop under 32 concurrent clients on a loaded 2-vCPU machine
    (docs/results/robustness.md).

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
    DistractdError
        The recording cannot be read (there would be nothing to review).
    """
    drive = load_drive(path, labels, model, config, decision)
    if drive.windows is None:
        raise ConfigError("; ".join(drive.errors))
    for message in drive.errors:
        print(f"distractd review: error: {message}", file=log, flush=True)
    try:
        server = ReviewServer(drive, host, port, log)
    except OSError as exc:
        raise ConfigError(f"review.port {port} on {host}: {exc.strerror or exc}") from None
    signals = (signal.SIGTERM, signal.SIGINT)
    on_signal = threading.current_thread() is threading.main_thread()

    def stop(signum, frame):
        server.stop_requested = True

    previous = [signal.signal(number, stop) for number in signals] if on_signal else []
    with server:
        try:
            if on_ready is not None:
                on_ready(server)
            server.serve_forever()
        except _Stopped:
            pass
        finally:
            for number, handler in zip(signals, previous):
                signal.signal(number, handler)
    with server.save_lock:  # a save under way ends first; none starts after
        for stream in (log, sys.stdout, sys.stderr):
            stream.flush()
        os._exit(0)


class _RequestReader(io.RawIOBase):
    """A connection's bytes, read only until the current request's deadline (a timeout per read
    lets a client trickling a byte at a time hold the connection for ever)."""

    def __init__(self, connection):
        self.connection = connection
        self.deadline_s = 0.0
        self.received = 0
        self.timed_out = False

    def start(self, timeout_s):
        """A new request: ``timeout_s`` from now for all of it."""
        self.deadline_s = time.monotonic() + timeout_s
        self.received = 0
        self.timed_out = False

    def readable(self):
        return True

    def readinto(self, buffer):
        left_s = self.deadline_s - time.monotonic()
        try:
            if left_s <= 0:
                raise TimeoutError("the request's time is up")
            self.connection.settimeout(left_s)
            n = self.connection.recv_into(buffer)
        except TimeoutError:
            self.timed_out = True
            raise
        self.received += n
        return n


class _Handler(BaseHTTPRequestHandler):
    server_version = "distractd-review"

    def setup(self):
        self.timeout = self.server.timeout_s  # read before the socket is wrapped
        super().setup()
        self.rfile.close()
        self.reader = _RequestReader(self.connection)
        self.rfile = io.BufferedReader(self.reader)

    def handle_one_request(self):
        """The standard library's, within the request's deadline, with a 408 answer where the
        request line stalls after its first bytes."""
        self.reader.start(self.server.timeout_s)
        self.server.waiting(self.connection, time.monotonic())
        self.command = self.path = None
        self.requestline = ""
        self.request_version = self.protocol_version
        self.answered = False
        try:
            super().handle_one_request()
        finally:
            self.server.waiting(self.connection, None)
        if self.reader.timed_out and self.reader.received and not self.answered:
            self.close_connection = True
            self._error(HTTPStatus.REQUEST_TIMEOUT, f"the request line did not arrive within "
                        f"{self.server.timeout_s:g} s ({self.reader.received} bytes came), the "
                        f"request was given up")

    def do_GET(self):
        self._answer(self._get)

    def do_POST(self):
        self._answer(self._post)

    def _answer(self, route):
        """Check where the request comes from, then route it; every fault gets an answer."""
        if self.command == "GET":
            self.server.waiting(self.connection, None)
        try:
            refusal = self._foreign()
            if refusal:
                return self._error(HTTPStatus.FORBIDDEN, refusal)
            route()
        except TimeoutError:
            self.close_connection = True
            self._error(HTTPStatus.REQUEST_TIMEOUT, f"{self.command} {self.path}: the body did "
                        f"not arrive within {self.server.timeout_s:g} s, the request was given "
                        f"up")
        except ConnectionError:
            self.close_connection = True
        except Exception as exc:  # the page gets one line, whatever went wrong
            self.close_connection = True
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"{self.command} {self.path} failed: "
                        f"{type(exc).__name__}: {exc}")

    def parse_request(self):
        """The standard library's, with a 408 answer where the headers stall and a refusal of
        HTTP/0.9 (whose answer would have no status line)."""
        try:
            parsed = super().parse_request()
        except TimeoutError:
            self.close_connection = True
            self._error(HTTPStatus.REQUEST_TIMEOUT, f"{self.command} {self.path}: the headers "
                        f"did not arrive within {self.server.timeout_s:g} s, the request was "
                        f"given up")
            return False
        if parsed and self.request_version == "HTTP/0.9":
            self.send_error(HTTPStatus.HTTP_VERSION_NOT_SUPPORTED,
                            "HTTP/0.9 is not served: send HTTP/1.0 or HTTP/1.1")
            return False
        return parsed

    def _foreign(self):
        """Why the request is not the page's (None when it is): a ``Host`` or ``Origin`` that is
        not this server (another site, or DNS re-binding a name to 127.0.0.1)."""
        host = self.headers.get("Host")
        if host not in self.server.origins:
            return (f"Host {host!r} refused: the review page answers only to "
                    f"{' or '.join(sorted(self.server.origins))}")
        origin = self.headers.get("Origin")
        if origin is not None and origin not in {f"http://{o}" for o in self.server.origins}:
            return f"Origin {origin!r} refused: only the review page itself may call the server"
        return None

    def _get(self):
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
            with self.server.save_lock:  # the labels and their digest of one moment
                summary = drive.summary()
            return self._json(summary)
        if drive.windows is None and url.path.startswith("/api/"):
            return self._error(HTTPStatus.CONFLICT, "; ".join(drive.errors))
        if url.path == "/api/view":
            try:
                t0, t1 = float(query["t0"]), float(query["t1"])
                n_px = int(query.get("px", "1000"))
            except (KeyError, ValueError):
                return self._error(HTTPStatus.BAD_REQUEST, f"view needs numbers t0, t1 and px, "
                                   f"got {url.query!r}")
            if not (-MAX_T_S <= t0 < t1 <= MAX_T_S and 0 < n_px <= MAX_PX):
                return self._error(HTTPStatus.BAD_REQUEST, f"view needs -{MAX_T_S:g} <= t0 < "
                                   f"t1 <= {MAX_T_S:g} s and 0 < px <= {MAX_PX}, got "
                                   f"{url.query!r}")
            return self._json(drive.view(t0, t1, n_px))
        if url.path == "/api/feature":
            name = query.get("name", "")
            try:
                return self._json({"name": name, "values": drive.feature(name)})
            except KeyError:
                return self._error(HTTPStatus.BAD_REQUEST, f"feature {name!r} is not a window "
                                   f"feature")
        return self._error(HTTPStatus.NOT_FOUND, f"no page {url.path}")

    def _post(self):
        if urlsplit(self.path).path != "/api/labels":
            return self._error(HTTPStatus.NOT_FOUND, f"no page {self.path}")
        token = self.headers.get(TOKEN_HEADER, "")
        if not hmac.compare_digest(token.encode("utf-8", "replace"),
                                   self.server.token.encode()):
            return self._error(HTTPStatus.FORBIDDEN, f"labels: the {TOKEN_HEADER} header must "
                               f"carry this session's token (reload the page)")
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/json":
            return self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, f"labels: Content-Type must "
                               f"be application/json, got {kind or 'none'!r}")
        if self.headers.get("Transfer-Encoding"):
            return self._error(HTTPStatus.LENGTH_REQUIRED, "labels: send a Content-Length, not "
                               "Transfer-Encoding")
        text = self.headers.get("Content-Length", "")
        length = int(text) if text.strip().isdigit() and text.isascii() else -1
        if not 0 < length <= MAX_BODY_BYTES:
            self.close_connection = True
            return self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE if length > MAX_BODY_BYTES
                               else HTTPStatus.BAD_REQUEST, f"labels: Content-Length must be 1 "
                               f"to {MAX_BODY_BYTES} bytes, got {text[:40]!r}")
        data = self.rfile.read(length)
        self.server.waiting(self.connection, None)
        if len(data) < length:
            return self._error(HTTPStatus.BAD_REQUEST, f"labels: the body ended after "
                               f"{len(data)} of {length} bytes")
        try:
            body = json.loads(data)
        except ValueError as exc:
            return self._error(HTTPStatus.BAD_REQUEST, f"labels: the body is not JSON ({exc})")
        except RecursionError:
            return self._error(HTTPStatus.BAD_REQUEST, "labels: the body nests JSON too deeply")
        if not (isinstance(body, dict) and "intervals" in body and "digest" in body
                and (body["digest"] is None or isinstance(body["digest"], str))):
            return self._error(HTTPStatus.BAD_REQUEST, "labels: the body must be "
                               "{\"intervals\": [[start_s, end_s, label], ...], \"digest\": "
                               "the digest the page loaded (string or null)}")
        drive = self.server.drive
        if drive.save_to is None:
            return self._error(HTTPStatus.CONFLICT, "saving is off: " + "; ".join(drive.errors))
        try:
            with self.server.save_lock:
                report = drive.save(body["intervals"], body.get("reviewed", []),
                                    body["digest"])
        except StaleLabels as exc:
            return self._error(HTTPStatus.CONFLICT, str(exc))
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
        body = asset.read_bytes()
        if name == "index.html":
            body = body.replace(_TOKEN_PLACEHOLDER, self.server.token.encode())
        self._send(HTTPStatus.OK, body, kind)

    def _json(self, payload, status=HTTPStatus.OK):
        self._send(status, json.dumps(payload, allow_nan=False).encode(), "application/json")

    def _error(self, status, message):
        self.server.problem(f"error: {message}")
        self._json({"error": message}, status)

    def send_error(self, code, message=None, explain=None):
        """The standard library's own refusals (a malformed request line or header, an unknown
        method) as one JSON line too."""
        self.close_connection = True
        self._error(HTTPStatus(code), f"{code} {message or HTTPStatus(code).phrase}")

    def _send(self, status, body, kind):
        self.answered = True
        self.connection.settimeout(self.server.timeout_s)  # the reader left its deadline's rest
        if self.request_version == "HTTP/0.9":  # the standard library would omit the status line
            self.request_version = self.protocol_version
        self.send_response(status)
        self.send_header("Content-Type", kind + ("; charset=utf-8" if kind.startswith(
            ("text/", "application/json", "application/javascript")) else ""))
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format, *args):
        """Requests are not logged; problems are (``ReviewServer.problem``)."""
