"""A Pupil Capture impersonator: Pupil Remote plus the IPC backbone, fed by a recording.

Pupil Capture's network API as its clients use it: *Pupil Remote* is a REP socket (port 50020 by
default) answering ``SUB_PORT``/``PUB_PORT`` with the backbone's ports, ``t`` with the current Pupil
time, ``T <s>`` by resetting it, ``v`` with a version, and notifications (``notify.*`` multipart)
with an acknowledgement. The backbone publishes multipart ``[topic, msgpack datum]`` messages; this
emulator sends, per recorded sample, the datums of
:func:`~distractd.pipeline.formats.pupil_datums` (``pupil.0.3d``, ``pupil.1.3d``, a binocular
``gaze.3d.01.`` and, where the blink flag changes, ``blinks``).
Streaming starts at the first backbone subscription so no datum is lost to a late subscriber.
"""

import time

import msgpack
import zmq

from .._validation import Interval, check_params
from ..pipeline.formats import FIELD_INDEX, pupil_datums

__all__ = ["PupilEmulator"]

PUPIL_VERSION = "3.5.7"


class PupilEmulator:
    """Serve a recording the way Pupil Capture serves live data.

    Parameters
    ----------
    recording : Recording
    port : int, default=50020
        Pupil Remote's port.
    host : str, default="127.0.0.1"
        Address every socket binds.
    speed : float, default=1.0
        1 real time, N for N× faster.

    Attributes
    ----------
    sub_port, pub_port : int
        The backbone's ports (bound on :meth:`start`).
    n_sent : int
        Datums published so far.
    """

    def __init__(self, recording, port=50020, host="127.0.0.1", speed=1.0):
        check_params({"port": port, "speed": speed},
                     {"port": Interval(0, 65535, integer=True),
                      "speed": Interval(0, None, closed="neither")}, owner="pupil-emulator")
        self.recording = recording
        self.port = port
        self.host = host
        self.speed = speed
        self.n_sent = 0
        self.sub_port = self.pub_port = None

    def run(self, context=None, stop=None, on_ready=None):
        """Serve until the recording is exhausted or ``stop()`` returns True; return ``n_sent``."""
        own_context = context is None
        context = context or zmq.Context()
        sockets = []

        def make(kind, port):
            sock = context.socket(kind)
            sock.linger = 0
            sockets.append(sock)
            if port:
                sock.bind(f"tcp://{self.host}:{port}")
            else:
                port = sock.bind_to_random_port(f"tcp://{self.host}")
            return sock, port

        try:
            remote, self.port = make(zmq.REP, self.port)
            backbone, self.sub_port = make(zmq.XPUB, 0)
            backbone.sndhwm = 0  # a replay loses nothing to a slow subscriber (Capture would)
            inbound, self.pub_port = make(zmq.XSUB, 0)
            inbound.send(b"\x01")
            if on_ready is not None:
                on_ready(self)
            self._serve(remote, backbone, inbound, stop or (lambda: False))
        finally:
            for sock in sockets:
                sock.close(linger=0)
            if own_context:
                context.term()
        return self.n_sent

    def _serve(self, remote, backbone, inbound, stop):
        poller = zmq.Poller()
        for sock in (remote, backbone, inbound):
            poller.register(sock, zmq.POLLIN)
        samples = self.recording.samples
        t = samples[:, FIELD_INDEX["t"]]
        start = None
        offset_s = 0.0
        index = 0
        blink = 0.0
        while index < len(samples) and not stop():
            now = time.monotonic()
            if start is None:
                timeout_ms = 100
            else:
                timeout_ms = max(0.0, (start + (t[index] - t[0]) / self.speed - now) * 1e3)
            for sock, _ in poller.poll(timeout_ms):
                if sock is remote:
                    pupil_time = float(t[index]) + offset_s
                    reply, offset_s = self._answer(remote.recv_multipart(), pupil_time, offset_s)
                    remote.send_string(reply)
                elif sock is backbone:
                    if backbone.recv()[:1] == b"\x01" and start is None:
                        start = time.monotonic()
                else:
                    backbone.send_multipart(inbound.recv_multipart())
            now = time.monotonic()
            while start is not None and index < len(samples) \
                    and start + (t[index] - t[0]) / self.speed <= now:
                blink = self._send_sample(backbone, samples[index], offset_s, blink)
                index += 1

    def _answer(self, frames, pupil_time, offset_s):
        command = frames[0].decode("utf-8", "replace")
        if command.startswith("notify."):
            return "Notification received.", offset_s
        if command == "SUB_PORT":
            return str(self.sub_port), offset_s
        if command == "PUB_PORT":
            return str(self.pub_port), offset_s
        if command == "t":
            return repr(pupil_time), offset_s
        if command == "v":
            return PUPIL_VERSION, offset_s
        if command.startswith("T "):
            try:
                return "Timesync successful.", offset_s + float(command[2:]) - pupil_time
            except ValueError:
                return "Unknown command.", offset_s
        if command in ("R", "r", "C", "c"):
            return "OK", offset_s
        return "Unknown command.", offset_s

    def _send_sample(self, backbone, row, offset_s, blink):
        datums, blink = pupil_datums(row, float(row[FIELD_INDEX["t"]]) + offset_s, blink)
        for datum in datums:
            self._publish(backbone, datum)
        return blink

    def _publish(self, backbone, datum):
        backbone.send_multipart([datum["topic"].encode("utf-8"), msgpack.packb(datum)])
        self.n_sent += 1
