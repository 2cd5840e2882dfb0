"""The daemon's sockets: input SUB, output PUB, the Pupil backbone SUB, and CURVE security.

Every socket is built in the loop's thread by :class:`Sockets` (a context manager that closes them
all with ``linger=0``); with ``security.curve`` the bound input and output sockets are CURVE servers,
and a :class:`Gatekeeper` (``_gate.py``) decides which peers may connect to them.
"""

import logging

import zmq
import zmq.auth

from .._errors import ConfigError
from ..pipeline.formats import PupilAdapter
from ._gate import DESCRIPTOR_RESERVE, Gatekeeper, raise_descriptor_limit

__all__ = ["Sockets", "pupil_sub_endpoint"]

log = logging.getLogger("distractd.daemon")


def pupil_sub_endpoint(context, remote, timeout_s):
    """Ask Pupil Remote at ``remote`` (``tcp://host:port``) for the backbone's SUB endpoint."""
    req = context.socket(zmq.REQ)
    req.linger = 0
    req.rcvtimeo = req.sndtimeo = int(timeout_s * 1e3)
    try:
        req.connect(remote)
        req.send_string("SUB_PORT")
        port = req.recv_string()
    except zmq.ZMQError as exc:
        raise ConfigError(f"pupil.remote {remote!r} did not answer SUB_PORT within "
                          f"pupil.timeout_s={timeout_s} ({exc})") from None
    finally:
        req.close(linger=0)
    if not port.isdigit():
        raise ConfigError(f"pupil.remote {remote!r} answered SUB_PORT with {port!r}")
    host = remote.rsplit(":", 1)[0]
    return f"{host}:{port}"


class Sockets:
    """Context manager building the input, output and Pupil sockets of ``config``.

    Entering returns ``(sub, pub, pupil_sub)``; ``pupil_sub`` is None unless ``pupil.remote`` is
    set.
    """

    def __init__(self, context, config, metrics):
        self.context = context
        self.config = config
        self.metrics = metrics
        self.sockets = []
        self.gatekeeper = None

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
            pupil_sub = None
            if config["pupil"]["remote"]:
                endpoint = pupil_sub_endpoint(self.context, config["pupil"]["remote"],
                                              config["pupil"]["timeout_s"])
                pupil_sub = self._socket(zmq.SUB)
                pupil_sub.rcvhwm = config["input"]["rcvhwm"]
                for topic in PupilAdapter.TOPICS:
                    pupil_sub.subscribe(topic)
                pupil_sub.connect(endpoint)
                log.info("pupil: subscribed to %s", endpoint)
        except BaseException:
            self.__exit__()
            raise
        return sub, pub, pupil_sub

    def __exit__(self, *_):
        for sock in self.sockets:
            sock.close(linger=0)
        if self.gatekeeper is not None:
            self.gatekeeper.stop()

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
