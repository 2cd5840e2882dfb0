"""The daemon's sockets: input SUB, output PUB, the Pupil link, and CURVE security.

Every socket is built in the loop's thread by :class:`Sockets` (a context manager that closes them
all with ``linger=0``); with ``security.curve`` the bound input and output sockets are CURVE servers,
and a :class:`Gatekeeper` (``_gate.py``) decides which peers may connect to them. The Pupil link
(:class:`PupilLink`) owns the Pupil backbone SUB socket and re-asks Pupil Remote for ``SUB_PORT``
when the backbone goes silent, since Pupil Capture binds a new backbone port at every launch.
"""

import logging
import time

import zmq
import zmq.auth

from .._errors import ConfigError
from ..pipeline.formats import PupilAdapter
from ._gate import DESCRIPTOR_RESERVE, Gatekeeper, raise_descriptor_limit
from ._lsl import LSL_ENDPOINT

__all__ = ["Sockets", "PupilLink", "pupil_sub_endpoint"]

log = logging.getLogger("distractd.daemon")


def pupil_sub_endpoint(context, remote, timeout_s):
    """Ask Pupil Remote at ``remote`` (``tcp://host:port``) for the backbone's SUB endpoint."""
    req = context.socket(zmq.REQ)
    req.linger = 0
    req.rcvtimeo = req.sndtimeo = int(timeout_s * 1e3)
    try:
        req.connect(remote)
        req.send_string("SUB_PORT")
        port = req.recv().decode("utf-8", "replace")
    except zmq.ZMQError as exc:
        raise ConfigError(f"pupil.remote {remote!r} did not answer SUB_PORT within "
                          f"pupil.timeout_s={timeout_s} ({exc})") from None
    finally:
        req.close(linger=0)
    return _sub_endpoint(remote, port)


def _sub_endpoint(remote, port):
    """``remote``'s host with the port Pupil Remote named: at most 5 ASCII digits of a port in
    1-65535 (``"²".isdigit()`` is true, and such an endpoint makes ``connect`` raise; ``int`` of
    4,301 digits or more raises)."""
    if not (port.isascii() and port.isdigit() and len(port) <= 5 and 1 <= int(port) <= 65535):
        shown = repr(port) if len(port) <= 40 else f"{port[:40]!r}... ({len(port)} characters)"
        raise ConfigError(f"pupil.remote {remote!r} answered SUB_PORT with {shown}, not a port "
                          f"in 1-65535")
    host = remote.rsplit(":", 1)[0]
    return f"{host}:{port}"


class PupilLink:
    """The daemon's connection to Pupil Capture: the backbone SUB socket, kept pointed at the
    port Pupil Remote names.

    At start Pupil Remote must answer ``SUB_PORT`` within ``pupil.timeout_s`` (else
    :class:`~distractd.ConfigError`). Afterwards, whenever the backbone has been silent for
    ``pupil.silence_s``, the link asks again without blocking the loop (a REQ socket polled by
    :meth:`check`); an answer naming another port replaces the SUB socket. A question unanswered
    within ``pupil.timeout_s`` is dropped and asked again after the next ``silence_s``.

    Attributes
    ----------
    sub : zmq.Socket
        The current backbone subscription.
    endpoint : str
        Its endpoint.
    """

    def __init__(self, context, pupil, rcvhwm):
        self.context = context
        self.remote = pupil["remote"]
        self.timeout_s = pupil["timeout_s"]
        self.silence_s = pupil["silence_s"]
        self.rcvhwm = rcvhwm
        self.endpoint = pupil_sub_endpoint(context, self.remote, self.timeout_s)
        self.sub = self._subscribe(self.endpoint)
        self.req = None
        self.heard_s = self.asked_s = time.monotonic()

    def _subscribe(self, endpoint):
        sub = self.context.socket(zmq.SUB)
        sub.linger = 0
        sub.rcvhwm = self.rcvhwm
        for topic in PupilAdapter.TOPICS:
            sub.subscribe(topic)
        sub.connect(endpoint)
        log.info("pupil: subscribed to %s", endpoint)
        return sub

    def heard(self, now_s):
        """Note that the backbone delivered messages at ``now_s`` (monotonic s)."""
        self.heard_s = now_s

    def check(self, now_s):
        """Ask or read Pupil Remote as the silence requires; return the replaced SUB socket
        (already closed; :attr:`sub` is its successor) or None."""
        if self.req is None:
            if now_s - max(self.heard_s, self.asked_s) >= self.silence_s:
                self.req = self.context.socket(zmq.REQ)
                self.req.linger = 0
                self.req.connect(self.remote)
                self.asked_s = now_s
                try:
                    self.req.send_string("SUB_PORT", zmq.NOBLOCK)
                except zmq.Again:  # no way to Pupil Remote yet: ask after the next silence
                    self._close_req()
            return None
        if not self.req.poll(0):
            if now_s - self.asked_s >= self.timeout_s:
                log.warning("pupil: %s did not answer SUB_PORT within pupil.timeout_s=%s",
                            self.remote, self.timeout_s)
                self._close_req()
            return None
        answer = self.req.recv().decode("utf-8", "replace")
        self._close_req()
        try:
            endpoint = _sub_endpoint(self.remote, answer)
        except ConfigError as exc:
            log.warning("pupil: %s", exc)
            return None
        if endpoint == self.endpoint:
            return None
        log.info("pupil: backbone moved from %s to %s", self.endpoint, endpoint)
        old, self.sub, self.endpoint = self.sub, self._subscribe(endpoint), endpoint
        old.close(linger=0)
        self.heard_s = now_s
        return old

    def _close_req(self):
        self.req.close(linger=0)
        self.req = None

    def close(self):
        self.sub.close(linger=0)
        if self.req is not None:
            self._close_req()


class Sockets:
    """Context manager building the input, output and Pupil sockets of ``config``.

    Entering returns ``(sub, pub, pupil, lsl)``; ``pupil`` is a :class:`PupilLink`, None unless
    ``pupil.remote`` is set; ``lsl`` the PULL socket the LSL bridge pushes to, None unless
    ``lsl.inlets`` is set.
    """

    def __init__(self, context, config, metrics):
        self.context = context
        self.config = config
        self.metrics = metrics
        self.sockets = []
        self.gatekeeper = None
        self.pupil = None

    def _socket(self, kind):
        sock = self.context.socket(kind)
        sock.linger = 0
        self.sockets.append(sock)
        return sock

    def __enter__(self):
        config = self.config
        try:
            self.gatekeeper = self._gatekeeper()
            sub = self._socket(zmq.SUB)
            sub.rcvhwm = config["input"]["rcvhwm"]
            sub.maxmsgsize = 4 * config["input"]["max_message_bytes"]
            self._secure(sub)
            self.gatekeeper.watch(sub, "input")
            sub.subscribe(config["input"]["topic"])
            sub.subscribe(config["vehicle"]["topic"])
            for endpoint in config["input"]["bind"]:
                _bind(sub, endpoint, "input.bind")
            for endpoint in config["input"]["connect"]:
                sub.connect(endpoint)
            pub = self._socket(zmq.XPUB)  # a PUB that says when a subscriber's queue is full
            pub.sndhwm = config["output"]["sndhwm"]
            pub.xpub_nodrop = True
            self._secure(pub)
            self.gatekeeper.watch(pub, "output")
            _bind(pub, config["output"]["bind"], "output.bind")
            self.gatekeeper.start()
            if config["pupil"]["remote"]:
                self.pupil = PupilLink(self.context, config["pupil"], config["input"]["rcvhwm"])
            lsl = None
            if config["lsl"]["inlets"]:
                lsl = self._socket(zmq.PULL)
                lsl.rcvhwm = config["input"]["rcvhwm"]
                lsl.bind(LSL_ENDPOINT)
        except BaseException:
            self.__exit__()
            raise
        return sub, pub, self.pupil, lsl

    def __exit__(self, *_):
        for sock in self.sockets:
            sock.close(linger=0)
        if self.gatekeeper is not None:
            self.gatekeeper.stop()
        if self.pupil is not None:
            self.pupil.close()

    def _gatekeeper(self):
        """The :class:`Gatekeeper` of this configuration, with the descriptor limit raised and
        ``input.max_connections`` lowered to fit it."""
        limit = raise_descriptor_limit()
        max_connections = self.config["input"]["max_connections"]
        if max_connections > limit - DESCRIPTOR_RESERVE:
            max_connections = max(1, limit - DESCRIPTOR_RESERVE)
            log.warning("input.max_connections lowered to %d: the descriptor limit is %d "
                        "(raise LimitNOFILE)", max_connections, limit)
        security = self.config["security"]
        keys = None
        if security["curve"] and security["authorized_keys_dir"]:
            try:
                keys = set(zmq.auth.load_certificates(security["authorized_keys_dir"]))
            except (OSError, ValueError) as exc:
                raise ConfigError(f"security.authorized_keys_dir "
                                  f"{security['authorized_keys_dir']!r}: {exc}") from None
        return Gatekeeper(self.context, max_connections, keys, self.metrics)

    def _secure(self, sock):
        security = self.config["security"]
        if not security["curve"]:
            return
        try:
            public, secret = zmq.auth.load_certificate(security["secret_key_file"])
        except (OSError, ValueError) as exc:
            raise ConfigError(f"security.secret_key_file {security['secret_key_file']!r}: "
                              f"{exc}") from None
        if secret is None:
            raise ConfigError(f"security.secret_key_file {security['secret_key_file']!r} holds "
                              f"no secret key")
        sock.curve_secretkey = secret
        sock.curve_publickey = public
        sock.curve_server = True


def _bind(sock, endpoint, field):
    try:
        sock.bind(endpoint)
    except zmq.ZMQError as exc:
        raise ConfigError(f"{field} cannot bind {endpoint!r}: {exc}") from None
