"""A Pupil Capture impersonator: Pupil Remote plus the IPC backbone, fed by a recording.

Pupil Capture's network API as its clients use it: *Pupil Remote* is a REP socket (port 50020 by
default) answering ``SUB_PORT``/``PUB_PORT`` with the backbone's ports, ``t`` with the current Pupil
time, ``T <s>`` by resetting it, ``v`` with a version, and notifications (``notify.*`` multipart)
with an acknowledgement. The backbone publishes multipart ``[topic, msgpack datum]`` messages; this
emulator sends, per recorded sample, ``pupil.0.3d`` and ``pupil.1.3d`` datums (``diameter_3d``),
a binocular ``gaze.3d.01.`` datum (``gaze_normals_3d``, ``eye_centers_3d``, ``gaze_point_3d``,
``norm_pos``, ``confidence``, ``base_data``) and, before it, a ``blinks`` onset/offset datum where
the recording's blink flag changes. Gaze rotations become unit normals in the world camera frame
(x right, y down, z forward): ``(sin yaw cos pitch, -sin pitch, cos yaw cos pitch)``. Eye 0 is the
right eye.
Streaming starts at the first backbone subscription so no datum is lost to a late subscriber.
"""

import math
import time

import msgpack
import numpy as np
import zmq

from .._validation import Interval, check_params
from ..pipeline import FIELD_INDEX

__all__ = ["PupilEmulator", "gaze_normal"]

PUPIL_VERSION = "3.5.7"
_EYE_CENTERS_MM = {"0": [-32.0, 12.0, -20.0], "1": [28.0, 12.0, -20.0]}
_GAZE_DISTANCE_MM = 500.0


def gaze_normal(yaw_rad, pitch_rad):
    """The unit gaze normal ``[x, y, z]`` (Pupil world camera frame) of a yaw and pitch in rad."""
    cos_pitch = math.cos(pitch_rad)
    return [math.sin(yaw_rad) * cos_pitch, -math.sin(pitch_rad), math.cos(yaw_rad) * cos_pitch]


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
        t = float(row[FIELD_INDEX["t"]]) + offset_s
        confidence = float(row[FIELD_INDEX["confidence"]])
        flag = float(row[FIELD_INDEX["blink"]])
        if not math.isnan(flag) and flag != blink:
            self._publish(backbone, {"topic": "blinks", "type": "onset" if flag else "offset",
                                     "timestamp": t, "confidence": 1.0, "base_data": []})
            blink = flag
        pupils = []
        for eye, field in (("0", "pupil_r"), ("1", "pupil_l")):
            diameter = float(row[FIELD_INDEX[field]])
            if math.isnan(diameter):
                continue
            datum = {"topic": f"pupil.{eye}.3d", "id": int(eye), "timestamp": t,
                     "confidence": confidence, "diameter_3d": diameter,
                     "diameter": diameter * 8.0, "norm_pos": [0.5, 0.5],
                     "method": "pye3d 0.3.0 real-time"}
            pupils.append(datum)
            self._publish(backbone, datum)
        normals = {eye: gaze_normal(float(row[FIELD_INDEX[f"gaze_{side}_yaw"]]),
                                    float(row[FIELD_INDEX[f"gaze_{side}_pitch"]]))
                   for eye, side in (("0", "r"), ("1", "l"))}
        point = [_GAZE_DISTANCE_MM * v for v in np.nanmean([normals["0"], normals["1"]], axis=0)] \
            if not all(math.isnan(n[0]) for n in normals.values()) else [math.nan] * 3
        self._publish(backbone, {
            "topic": "gaze.3d.01.", "timestamp": t, "confidence": confidence,
            "gaze_normals_3d": normals, "eye_centers_3d": _EYE_CENTERS_MM,
            "gaze_point_3d": point,
            "norm_pos": [0.5 + point[0] / (2 * _GAZE_DISTANCE_MM),
                         0.5 - point[1] / (2 * _GAZE_DISTANCE_MM)],
            "base_data": pupils})
        return blink

    def _publish(self, backbone, datum):
        backbone.send_multipart([datum["topic"].encode("utf-8"), msgpack.packb(datum)])
        self.n_sent += 1
