"""A Pupil Capture impersonator: Pupil Remote plus the IPC backbone, fed by a recording.

It behaves as Pupil Capture 3.x does towards its network clients (``pupil_remote_controller.py``
and the documented network API), so Pupil Labs' own clients work against it:

- **Pupil Remote** (REP, port 50020 by default): a multipart message (a notification
  ``notify.<subject>``, an ``annotation``, any topic) is forwarded to the backbone and answered
  ``Message forwarded.``; ``SUB_PORT``/``PUB_PORT`` give the backbone's ports; ``t`` the current
  Pupil time; ``T <s>`` resets it (``Timesync successful.``, or ``'<x>' cannot be converted to
  float.``); ``v`` a version; ``R [name]``, ``r``, ``C``, ``c`` publish
  ``notify.recording.should_start`` (with ``session_name``), ``notify.recording.should_stop``,
  ``notify.calibration.should_start``, ``notify.calibration.should_stop`` and answer ``OK``;
  anything else ``Unknown command.``.
- **Notifications** on the backbone, from Pupil Remote or from a client publishing on ``PUB_PORT``,
  get Capture's answers: ``recording.should_start`` -> ``recording.started`` (``rec_path``,
  ``session_name``, ``start_time_synced``, ...), ``recording.should_stop`` ->
  ``recording.stopped``; ``calibration.should_start`` -> ``calibration.started``,
  ``calibration.should_stop`` -> ``calibration.stopped`` then ``calibration.failed`` ("Not
  sufficient reference data available.": the emulator shows no calibration marker). Nothing is
  written to disk.
- **The clock runs from start**: Pupil time advances at ``speed`` × real time from the moment the
  sockets are bound, whether anyone subscribed or not, and every datum carries the clock's time.
- **Data**, per recorded sample and eye camera (eye 1's frames ``eye_lag_s`` after eye 0's, as two
  free-running cameras are): ``pupil.<eye>.2d`` and ``pupil.<eye>.3d`` datums
  (:func:`~distractd.pipeline.formats.pupil_datums`), then the gaze datums Capture's real-time
  matcher (:class:`CaptureMatcher`) makes of the 3-D ones — binocular ``gaze.3d.01.`` and
  monocular ``gaze.3d.0.``/``gaze.3d.1.``, whose timestamps are not monotonic (with
  ``gaze_mapping="2d"`` the 2D gaze mapper's ``gaze.2d.*`` datums instead; with ``surfaces``, a
  ``surfaces.<name>`` datum per sample placing its gaze on each surface) — and ``blinks``
  onsets/offsets where the recorded blink flag changes. Where the recording has lost the eye
  (NaN gaze), the datums keep the eye's last normal and diameter with the recorded (low)
  confidence, as Capture keeps sending low-confidence datums through track loss.
- At the end of the recording the data stop but Pupil Remote, the clock and the backbone go on
  (as Capture's do when its cameras are gone), so clients never wait forever; with ``loop`` the
  recording starts again with timestamps that keep counting up.
"""

import math
import time
from collections import deque

import msgpack
import numpy as np
import zmq

from .._validation import Interval, Options, check_params
from ..pipeline.formats import (
    FIELD_INDEX, MIN_PUPIL_CONFIDENCE, blink_datum, gaze_2d_datum, gaze_datum, gaze_normal,
    pupil_datums, surface_datum,
)

__all__ = ["PupilEmulator", "CaptureMatcher"]

PUPIL_VERSION = "3.5.7"
_EYES = ((0, "r"), (1, "l"))
_CALIBRATION_FAILURE = "Not sufficient reference data available."


class CaptureMatcher:
    """Capture's real-time pairing of the two eyes' pupil datums into gaze matches.

    The rule of Capture's ``RealtimeMatcher`` (Pupil 3.x ``gaze_mapping/matching.py``), written
    anew: each eye's datums queue in arrival order; the frame period is a running estimate
    (smoothing 1/50, from 1/120 s) of the larger of the two queues' mean timestamp steps. For each
    new datum, at most one match is made: a queue head below :data:`MIN_PUPIL_CONFIDENCE` leaves
    alone (eye 0 first); else, when both queues hold datums, the older head leaves, paired with
    the other head (which stays queued) when their timestamps differ by less than two frame
    periods, alone otherwise; else a queue longer than 10 gives up its head alone.
    """

    def __init__(self):
        self.queues = (deque(), deque())
        self.period_s = 1 / 120

    def _smoothed_period(self):
        steps = [np.mean(np.diff([d["timestamp"] for d in q])) for q in self.queues if len(q) > 1]
        if steps:
            self.period_s += (max(steps) - self.period_s) / 50
        return self.period_s

    def add(self, datum):
        """Queue a 3-D pupil datum; return the match it completes (a list of 1 or 2), or None."""
        eye0, eye1 = self.queues
        self.queues[datum["id"]].append(datum)
        cutoff_s = 2 * self._smoothed_period()
        for queue in self.queues:
            if queue and queue[0]["confidence"] < MIN_PUPIL_CONFIDENCE:
                return [queue.popleft()]
        if eye0 and eye1:
            older, other = (eye0, eye1) if eye0[0]["timestamp"] < eye1[0]["timestamp"] \
                else (eye1, eye0)
            head, partner = older.popleft(), other[0]
            if abs(head["timestamp"] - partner["timestamp"]) < cutoff_s:
                return sorted((head, partner), key=lambda datum: datum["id"])
            return [head]
        for queue in self.queues:
            if len(queue) > 10:
                return [queue.popleft()]
        return None


class PupilEmulator:
    """Serve a recording the way Pupil Capture serves live data.

    Parameters
    ----------
    recording : Recording
    port : int, default=50020
        Pupil Remote's port (0: any free port).
    host : str, default="127.0.0.1"
        Address every socket binds.
    speed : float, default=1.0
        1 real time, N for N× faster (the Pupil clock runs N× too).
    loop : bool, default=False
        Start the recording again at its end instead of stopping.
    eye_lag_s : float, default=0.004
        Eye 1's camera frames come this long after eye 0's (s of recording time).
    wait_subscriptions : int, default=0
        Hold the recording's first sample until this many topic subscriptions reached the
        backbone (a subscriber to three topics makes three; the clock runs meanwhile); 0 streams
        at once, as Capture does.
    gaze_mapping : {"3d", "2d"}, default="3d"
        Capture's gaze mapper: ``gaze.3d.*`` datums, or the 2D mapper's ``gaze.2d.*``.
    surfaces : tuple of str, default=()
        Names of tracked surfaces: each sample's gaze also goes out as a ``surfaces.<name>`` datum.

    Attributes
    ----------
    sub_port, pub_port : int
        The backbone's ports (bound on :meth:`run`).
    n_sent : int
        Messages published on the backbone so far.
    n_passes : int
        Passes through the recording completed.
    """

    def __init__(self, recording, port=50020, host="127.0.0.1", speed=1.0, loop=False,
                 eye_lag_s=0.004, wait_subscriptions=0, gaze_mapping="3d", surfaces=()):
        check_params({"port": port, "speed": speed, "eye_lag_s": eye_lag_s,
                      "wait_subscriptions": wait_subscriptions, "gaze_mapping": gaze_mapping},
                     {"port": Interval(0, 65535, integer=True),
                      "speed": Interval(0, None, closed="neither"),
                      "eye_lag_s": Interval(0, None),
                      "wait_subscriptions": Interval(0, None, integer=True),
                      "gaze_mapping": Options(("3d", "2d"))},
                     owner="pupil-emulator")
        self.gaze_mapping = gaze_mapping
        self.surfaces = tuple(surfaces)
        self.recording = recording
        self.port = port
        self.host = host
        self.speed = speed
        self.loop = loop
        self.eye_lag_s = eye_lag_s
        self.wait_subscriptions = wait_subscriptions
        self.n_sent = 0
        self.n_passes = 0
        self.sub_port = self.pub_port = None

    def run(self, context=None, stop=None, on_ready=None):
        """Serve until ``stop()`` returns True (checked at least every 0.1 s); return ``n_sent``.

        Without ``stop`` the emulator serves until the process ends."""
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
            backbone.xpub_verbose = True  # every subscription counts, repeated topics included
            inbound, self.pub_port = make(zmq.XSUB, 0)
            inbound.send(b"\x01")
            _Capture(self, remote, backbone, inbound).serve(stop or (lambda: False), on_ready)
        finally:
            for sock in sockets:
                sock.close(linger=0)
            if own_context:
                context.term()
        return self.n_sent


class _Capture:
    """One run of the emulator: clock, schedule, eye state, recorder and calibration state."""

    def __init__(self, emulator, remote, backbone, inbound):
        self.emulator = emulator
        self.remote, self.backbone, self.inbound = remote, backbone, inbound
        samples = emulator.recording.samples
        self.samples = samples
        t = samples[:, FIELD_INDEX["t"]]
        self.t_rel = t - t[0]
        period_s = float(np.median(np.diff(t))) if len(t) > 1 else 1 / 60
        self.pass_s = float(self.t_rel[-1]) + period_s if len(t) else 0.0
        self.start = time.monotonic()
        self.offset_s = float(t[0]) if len(t) else 0.0  # Pupil time = emulator seconds + offset
        self.stream_s = None  # emulator seconds at which the first pass starts
        self.index = 0
        self.done = not len(samples)
        self.n_subscribed = 0
        self.matcher = CaptureMatcher()
        self.last = {eye: ([0.0, 0.0, 1.0], 0.0) for eye, _ in _EYES}  # normal, diameter
        self.blink = 0.0
        self.recording_path = None
        self.n_recordings = 0
        self.calibrating = False

    def seconds(self):
        """Emulator seconds: real time since start × speed."""
        return (time.monotonic() - self.start) * self.emulator.speed

    def pupil_time(self):
        return self.seconds() + self.offset_s

    def _due_s(self):
        """Emulator seconds at which the next sample is due (None: not streaming, or done)."""
        if self.stream_s is None or self.done:
            return None
        return self.stream_s + self.emulator.n_passes * self.pass_s + self.t_rel[self.index]

    def serve(self, stop, on_ready):
        emulator = self.emulator
        if emulator.wait_subscriptions == 0:
            self.stream_s = 0.0
        if on_ready is not None:
            on_ready(emulator)
        poller = zmq.Poller()
        for sock in (self.remote, self.backbone, self.inbound):
            poller.register(sock, zmq.POLLIN)
        while not stop():
            due = self._due_s()
            timeout_ms = 100 if due is None else \
                max(0.0, (due - self.seconds()) / emulator.speed * 1e3)
            for sock, _ in poller.poll(min(timeout_ms, 100)):
                if sock is self.remote:
                    self._answer(self.remote.recv_multipart())
                elif sock is self.backbone:
                    self._subscription(self.backbone.recv())
                else:
                    self._forward(self.inbound.recv_multipart())
            self._publish_due()

    def _subscription(self, frame):
        if frame[:1] != b"\x01":
            return
        self.n_subscribed += 1
        if self.stream_s is None and self.n_subscribed >= self.emulator.wait_subscriptions:
            self.stream_s = self.seconds()

    def _publish_due(self):
        """Publish every sample due by now."""
        emulator = self.emulator
        now_s = self.seconds()
        while (due := self._due_s()) is not None and due <= now_s:
            self._send_sample(self.samples[self.index], due + self.offset_s)
            self.index += 1
            if self.index == len(self.samples):
                self.index = 0
                emulator.n_passes += 1
                self.done = not emulator.loop

    # -- data ------------------------------------------------------------------------------

    def _send_sample(self, row, timestamp):
        flag = row[FIELD_INDEX["blink"]]
        if not math.isnan(flag) and flag != self.blink:
            self._publish(blink_datum(timestamp, bool(flag)))
            self.blink = flag
        confidence = row[FIELD_INDEX["confidence"]]
        confidence = 0.0 if math.isnan(confidence) else float(confidence)
        gazes = []
        for eye, side in _EYES:
            normal, diameter = self.last[eye]
            yaw, pitch = row[FIELD_INDEX[f"gaze_{side}_yaw"]], row[FIELD_INDEX[f"gaze_{side}_pitch"]]
            if not (math.isnan(yaw) or math.isnan(pitch)):
                normal = gaze_normal(yaw, pitch)
            if not math.isnan(row[FIELD_INDEX[f"pupil_{side}"]]):
                diameter = float(row[FIELD_INDEX[f"pupil_{side}"]])
            self.last[eye] = normal, diameter
            t_eye = timestamp + eye * self.emulator.eye_lag_s
            datums = pupil_datums(eye, t_eye, normal, diameter,
                                  confidence if diameter > 0 else 0.0)
            for datum in datums:
                self._publish(datum)
            match = self.matcher.add(datums[1])
            if match is not None:
                gaze = gaze_datum(match)
                gazes.append(gaze if self.emulator.gaze_mapping == "3d" else gaze_2d_datum(gaze))
                self._publish(gazes[-1])
        for name in self.emulator.surfaces:
            self._publish(surface_datum(name, gazes, timestamp))

    def _publish(self, datum):
        self.backbone.send_multipart([datum["topic"].encode("utf-8"), msgpack.packb(datum)])
        self.emulator.n_sent += 1

    # -- control ---------------------------------------------------------------------------

    def _answer(self, frames):
        if len(frames) > 1:
            self._forward(frames)
            reply = "Message forwarded."
        else:
            reply = self._command(frames[0].decode("utf-8", "replace"))
        self.remote.send_string(reply)

    def _command(self, command):
        emulator = self.emulator
        if command == "SUB_PORT":
            return str(emulator.sub_port)
        if command == "PUB_PORT":
            return str(emulator.pub_port)
        head = command[:1]
        if head == "R":
            self._notify("recording.should_start", session_name=command[2:])
        elif head == "r":
            self._notify("recording.should_stop")
        elif command in ("C", "c"):
            self._notify(f"calibration.should_{'start' if command == 'C' else 'stop'}")
        elif head == "T":
            try:
                target = float(command[2:])
            except ValueError:
                return f"'{command[2:]}' cannot be converted to float."
            self.offset_s = target - self.seconds()
            return "Timesync successful."
        elif head == "t":
            return repr(self.pupil_time())
        elif head == "v":
            return PUPIL_VERSION
        else:
            return "Unknown command."
        return "OK"

    def _forward(self, frames):
        """Publish a client's message on the backbone; react to it when it is a notification."""
        self.backbone.send_multipart(frames)
        self.emulator.n_sent += 1
        if not frames[0].startswith(b"notify."):
            return
        try:
            note = msgpack.unpackb(frames[1], raw=False, strict_map_key=False)
        except (ValueError, msgpack.UnpackException, IndexError):
            return  # Capture logs an undecodable notification and carries on
        if isinstance(note, dict) and isinstance(note.get("subject"), str):
            self._react(note)

    def _notify(self, subject, **fields):
        note = {"subject": subject, "topic": f"notify.{subject}", **fields}
        self._publish(note)
        self._react(note)

    def _react(self, note):
        """What Capture's recorder and calibration choreography do on a notification."""
        subject = note["subject"]
        if subject == "recording.should_start" and self.recording_path is None:
            session = note.get("session_name") or time.strftime("%Y_%m_%d")
            self.recording_path = f"~/recordings/{session}/{self.n_recordings:03d}"
            self.n_recordings += 1
            self._notify("recording.started", rec_path=self.recording_path, session_name=session,
                         record_eye=True, compression=True,
                         start_time_synced=self.pupil_time())
        elif subject == "recording.should_stop" and self.recording_path is not None:
            path, self.recording_path = self.recording_path, None
            self._notify("recording.stopped", rec_path=path)
        elif subject == "calibration.should_start" and not self.calibrating:
            self.calibrating = True
            self._notify("calibration.started")
        elif subject == "calibration.should_stop" and self.calibrating:
            self.calibrating = False
            self._notify("calibration.stopped")
            self._notify("calibration.failed", reason=_CALIBRATION_FAILURE,
                         gazer_class_name="Gazer3D", timestamp=self.pupil_time(), record=True)
