"""Who may connect to the daemon's bound sockets, and how many at once.

Every connection to a bound socket costs a file descriptor, and a process out of descriptors makes
ZeroMQ spin on ``accept`` (or abort), so the daemon raises its descriptor limit at start
(:func:`raise_descriptor_limit`) and a :class:`Gatekeeper` thread answers ZeroMQ's authentication
requests (ZAP, RFC 27) for the input and output sockets: it refuses peers beyond
``input.max_connections`` (lowered to fit the descriptor limit) and, with ``security.curve``, client
keys not in ``security.authorized_keys_dir``. It follows the sockets' monitor events to count open
connections, refusals by reason and established connections that end.
"""

import logging
import resource
import threading

import zmq
from zmq.utils import z85
from zmq.utils.monitor import parse_monitor_message

__all__ = ["Gatekeeper", "raise_descriptor_limit", "REFUSAL_REASONS", "DESCRIPTOR_RESERVE"]

log = logging.getLogger("distractd.daemon")

REFUSAL_REASONS = ("too_many_connections", "curve_denied", "handshake_failed")
"""Why a connection was refused: ``input.max_connections`` reached, a CURVE client key not
authorised, or a peer that failed the ZeroMQ handshake (not ZeroMQ, another security mechanism,
gone before the handshake ended)."""

DESCRIPTOR_RESERVE = 256
"""File descriptors kept for everything but peer connections (model and configuration files,
metrics scrapes, ZeroMQ's own signalling)."""

_ZAP_ENDPOINT = "inproc://zeromq.zap.01"
_MONITORED = (zmq.EVENT_ACCEPTED | zmq.EVENT_CONNECTED | zmq.EVENT_DISCONNECTED
              | zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
              | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL)


def raise_descriptor_limit():
    """Raise the soft ``RLIMIT_NOFILE`` to the hard limit (systemd's default soft limit is 1,024);
    return the soft limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else 1 << 20
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:
            log.warning("cannot raise the descriptor limit from %d to %d: %s", soft, target, exc)
    return soft


class Gatekeeper(threading.Thread):
    """The ZAP handler and connection monitor of the daemon's bound sockets (one thread).

    Create it before the sockets, :meth:`watch` each before it binds, :meth:`start` it, and
    :meth:`stop` it before the sockets close.

    Parameters
    ----------
    context : zmq.Context
    max_connections : int
        Connections allowed at once over all watched sockets; a peer beyond is refused.
    authorized_keys : set of bytes or None
        Z85 public keys of the CURVE clients allowed; None allows any.
    metrics : Metrics
        Where refusals (``connections_refused``), established connections (``connections``) and
        their ends (``connections_closed``) are counted.
    """

    def __init__(self, context, max_connections, authorized_keys, metrics):
        super().__init__(name="distractd-gatekeeper", daemon=True)
        self.context = context
        self.max_connections = max_connections
        self.authorized_keys = authorized_keys
        self.metrics = metrics
        self.n_open = 0             # accepted or connected descriptors, handshake or not
        self.n_established = 0      # past the handshake
        self.n_refused_open = 0     # refused, their descriptor not yet closed
        self.monitors = []          # (monitor endpoint, socket name)
        self._stopping = threading.Event()
        self._zap = context.socket(zmq.REP)
        self._zap.linger = 0
        self._zap.bind(_ZAP_ENDPOINT)

    def watch(self, sock, name):
        """Make ``sock`` ask this handler about every peer and report its connections to it."""
        endpoint = f"inproc://distractd.monitor.{len(self.monitors)}"
        sock.zap_domain = b"distractd"
        sock.monitor(endpoint, _MONITORED)
        self.monitors.append((endpoint, name))

    def stop(self):
        """Stop the thread (or, never started, close its socket)."""
        if self.is_alive():
            self._stopping.set()
            self.join()
        else:
            self._zap.close(linger=0)

    def run(self):
        poller = zmq.Poller()
        poller.register(self._zap, zmq.POLLIN)
        pairs = []
        try:
            for endpoint, name in self.monitors:
                pair = self.context.socket(zmq.PAIR)
                pair.linger = 0
                pair.connect(endpoint)
                poller.register(pair, zmq.POLLIN)
                pairs.append((pair, name))
            while not self._stopping.is_set():
                ready = dict(poller.poll(100))
                for pair, name in pairs:   # connection events first: the count a ZAP reply uses
                    while pair.poll(0):
                        self._event(name, parse_monitor_message(pair.recv_multipart()))
                if self._zap in ready:
                    self._zap.send_multipart(self._answer(self._zap.recv_multipart()))
        finally:
            for pair, _ in pairs:
                pair.close(linger=0)
            self._zap.close(linger=0)

    def _event(self, name, event):
        """Follow one monitor event. Handshake events do not say which connection they concern
        (their value is an error code), so a disconnection is taken as the end of a refused
        connection while refused ones are still open, else of an established one: the counts are
        exact once connections settle."""
        kind = event["event"]
        if kind in (zmq.EVENT_ACCEPTED, zmq.EVENT_CONNECTED):
            self.n_open += 1
            return
        if kind == zmq.EVENT_DISCONNECTED:
            self.n_open -= 1
            if self.n_refused_open:
                self.n_refused_open -= 1
            else:
                self.n_established -= 1
                self.metrics.connections_closed[name].inc()
        elif kind == zmq.EVENT_HANDSHAKE_SUCCEEDED:
            self.n_established += 1
        else:   # failed for another reason than a refusal of this handler's
            self.n_refused_open += 1
            self.metrics.connections_refused["handshake_failed"].inc()
        self.metrics.connections.set(self.n_established)

    def _answer(self, request):
        """The reply to a ZAP request: status 200, or 400 with the reason of the refusal."""
        version, request_id, _domain, address, _identity, mechanism = request[:6]
        reason = None
        if self.n_open > self.max_connections:
            reason = "too_many_connections"
        elif mechanism == b"CURVE" and self.authorized_keys is not None \
                and z85.encode(request[6]) not in self.authorized_keys:
            reason = "curve_denied"
        if reason is None:
            return [version, request_id, b"200", b"OK", b"", b""]
        self.n_refused_open += 1
        self.metrics.connections_refused[reason].inc()
        log.debug("refused a connection from %s: %s", address.decode("ascii", "replace"), reason)
        return [version, request_id, b"400", reason.encode("ascii"), b"", b""]
