"""The daemon's inputs: the sockets it reads samples from, decoded into the streams' inboxes.

Per wake-up, :meth:`Inputs.read` waits on the input sockets (at most ``service.poll_interval_s``),
reads up to ``service.max_batch_messages`` messages from each that has some, decodes each
(:mod:`distractd.pipeline.formats`) and adds its samples to its stream's inbox, opening the
stream's session on its first message. A message that fails decoding is refused, counted by reason
and explained in one rate-limited log line; nothing else is lost. Vehicle messages (topic
``vehicle.topic`` + stream id, on the same sockets) go to their stream's :class:`VehicleJoin`.
The Pupil source is followed across Pupil Capture restarts (:class:`PupilLink`).
"""

import logging
import math
import time

import numpy as np
import zmq

from ..pipeline.formats import (
    Limits, PupilAdapter, Rejected, UnsupportedGaze, decode_message,
)
from ._ratelog import RateLimitedLog
from ._vehicle import VehicleJoin, VehicleSamples

__all__ = ["Inputs"]

log = logging.getLogger("distractd.daemon")

_NOBLOCK = int(zmq.NOBLOCK)


class Inputs:
    """Reads the input sockets into the stream table.

    Parameters
    ----------
    config : dict
        The daemon's configuration (``[input]``, ``[pupil]``, ``service.max_batch_messages``,
        ``service.rejection_log_interval_s``).
    streams : StreamTable
    metrics : Metrics
    rates : Rates
        The samples received are added to ``rates.samples``.
    """

    def __init__(self, config, streams, metrics, rates):
        self.streams = streams
        self.metrics = metrics
        self.rates = rates
        self.poller = zmq.Poller()
        self.sources = []  # (socket, decode) read in order at each wake-up
        self.pupil = self.pupil_adapter = None
        self.configure(config, None)

    def configure(self, config, model):
        """Take a (re)loaded configuration (sockets change only at restart)."""
        self.config = config
        self.budget = config["service"]["max_batch_messages"]
        self.limits = Limits(config["input"]["topic"], config["input"]["max_message_bytes"],
                             config["input"]["max_block_samples"])
        self.vehicle_limits = Limits(config["vehicle"]["topic"],
                                     config["input"]["max_message_bytes"],
                                     config["input"]["max_block_samples"])
        self.lsl_limits = Limits("samples.", config["input"]["max_message_bytes"],
                                 config["input"]["max_block_samples"])
        self.rejection_log = RateLimitedLog(config["service"]["rejection_log_interval_s"])

    def open(self, sub, pupil=None, lsl=None):
        """Read from these sockets: the input SUB socket, a :class:`PupilLink` and the PULL
        socket of the LSL bridge (None: not configured)."""
        self.add(sub, self._decode_native)
        if lsl is not None:
            self.add(lsl, self._decode_lsl)
        if pupil is not None:
            self.pupil = pupil
            self.pupil_adapter = PupilAdapter(self.config["pupil"]["reorder_s"])
            self.streams.gaze_frames[self.config["pupil"]["stream"]] = PupilAdapter.GAZE_FRAME
            self.poller.register(pupil.sub, zmq.POLLIN)

    def add(self, sock, decode):
        """Read ``sock`` too, each message through ``decode(frames)``, which returns ``(stream,
        block, seq, driver)`` (``seq`` None when the source numbers no messages, ``driver`` when
        the message names none), or None for a message without samples, and raises
        :class:`Rejected` for a bad one."""
        self.sources.append((sock, decode))
        self.poller.register(sock, zmq.POLLIN)

    def read(self, timeout_ms, stopping):
        """Wait for input at most ``timeout_ms`` (not at all while ``stopping``, when every
        socket is drained); read it into the inboxes, source by source (Pupil last).

        Returns
        -------
        touched : list of _Inbox
            The inboxes that received their first message of this batch.
        n_read : int
            Messages read.
        woke : float
            Monotonic time (s) of the wake-up.
        """
        ready = dict(self.poller.poll(0 if stopping else timeout_ms))
        woke = time.monotonic()
        touched = []
        n_read = 0
        for sock, decode in self.sources:
            if sock in ready or stopping:
                n_read += self._drain(sock, decode, touched)
        if self.pupil is not None:
            n_read += self._follow_pupil(ready, stopping, touched)
        return touched, n_read, woke

    def flush_log(self, now, force=False):
        """Say the rejections the log held back (:meth:`RateLimitedLog.flush`)."""
        self.rejection_log.flush(now, force)

    def _drain(self, sock, decode, touched):
        """Read up to ``service.max_batch_messages`` messages into their streams' inboxes; return
        the number read.

        ``decode(frames)`` gives ``(stream, block, seq, driver)``, or None for a message without
        samples,
        and raises :class:`Rejected`. Inboxes receiving their first message of this batch are
        appended to ``touched``.
        """
        inboxes = self.streams.inboxes
        fault = self.streams.fault
        budget = self.budget
        n = n_samples = n_lost = 0
        while n < budget:
            try:
                frames = sock.recv_multipart(_NOBLOCK)
            except zmq.Again:
                break
            n += 1
            now = time.monotonic()
            try:
                decoded = decode(frames)
            except Rejected as exc:
                self._reject(exc, now)
                continue
            except Exception as exc:  # a decoder fault: this message is lost, nothing else
                fault(None, "decode", exc, now)
                continue
            if decoded is None:
                continue
            stream, block, seq, driver = decoded
            try:
                inbox = inboxes.get(stream) or self._open(stream, now)
                if inbox is None:
                    continue
                if driver is not None and inbox.session.driver is None:
                    self.streams.name_driver(inbox.session, driver)
                if type(block) is VehicleSamples:
                    n_samples += self._add_vehicle(inbox, block.block, now, touched)
                    continue
                vehicle = inbox.vehicle
                if vehicle is not None and not vehicle.eyes:
                    vehicle.eyes = True
                    if vehicle.alone:
                        vehicle.alone = False
                        log.info("stream %s: eye samples arrived: vehicle samples are joined "
                                 "to them", stream)
                lost = inbox.session.accept(seq, now)
                if lost is None:
                    self.metrics.seq_resets.inc()
                else:
                    n_lost += lost
                n_samples += len(block)
                if inbox.add(block, now):
                    touched.append(inbox)
            except Exception as exc:
                fault(stream, "ingest", exc, now)
        self._count_received(n, n_samples, n_lost)
        return n

    def _open(self, stream, now):
        """A new stream's inbox; None (the message refused) when the table is full."""
        try:
            return self.streams.open(stream, now)
        except Rejected as exc:
            self._reject(exc, now)
            return None

    def _decode_native(self, frames):
        topic = frames[0] if frames else None
        if type(topic) is bytes and topic.startswith(self.vehicle_limits.topic):
            stream, samples, seq, driver = decode_message(frames, self.vehicle_limits)
            if type(samples) is not np.ndarray:
                samples = np.array(samples, dtype=np.float64)
            return stream, VehicleSamples(samples), seq, driver
        return decode_message(frames, self.limits)

    def _add_vehicle(self, inbox, block, now, touched):
        """Give a vehicle message's samples to its stream's :class:`VehicleJoin` (counting and
        explaining those it drops), or to the inbox for a stream of vehicle samples alone; return
        the samples received. Vehicle messages' ``seq`` is not followed (their loss is not
        counted)."""
        session = inbox.session
        session.last_seen_s = now
        n_received = len(block)
        self.metrics.vehicle_samples.inc(n_received)
        join = inbox.vehicle
        if join is None:
            join = inbox.vehicle = VehicleJoin(self.config["vehicle"], now,
                                               eyes=not math.isnan(inbox.t_last))
        if not join.alone:
            n_late, n_overflow = join.add(block)
            for reason, n in (("vehicle_late", n_late), ("vehicle_overflow", n_overflow)):
                if n:
                    self.metrics.samples_rejected[reason].inc(n)
                    self.rejection_log.warning(reason, _VEHICLE_DROPPED[reason].format(
                        stream=session.stream, n=n, **self.config["vehicle"]), now)
            if not join.due_alone(now):
                return n_received
            join.alone = True
            log.info("stream %s: no eye sample in vehicle.alone_after_s=%g s: processed as "
                     "vehicle samples alone", session.stream, join.alone_after_s)
            block = join.take()
        if len(block) and inbox.add(block, now):
            touched.append(inbox)
        return n_received

    def _decode_lsl(self, frames):
        return decode_message(frames, self.lsl_limits)

    def _decode_pupil(self, frames):
        try:
            block = self.pupil_adapter.update(frames)
        except UnsupportedGaze as exc:  # counted; said once per mapping
            self.metrics.pupil_refused[exc.mapping].inc()
            if exc.first:
                log.warning("%s (counted in distractd_pupil_refused_total)", exc)
            return None
        return (self.config["pupil"]["stream"], block, None, None) if len(block) else None

    def _follow_pupil(self, ready, stopping, touched):
        """Drain the Pupil backbone; after ``pupil.silence_s`` of silence (or when the daemon
        stops) feed the gaze samples the adapter still holds for reordering, and follow Pupil
        Remote to a new backbone port; return the messages read."""
        link = self.pupil
        n = 0
        if link.sub in ready or stopping:
            n = self._drain(link.sub, self._decode_pupil, touched)
        now = time.monotonic()
        if n:
            link.heard(now)
        elif self.pupil_adapter.n_held and (stopping or now - link.heard_s >= link.silence_s):
            block = self.pupil_adapter.flush()
            stream = self.config["pupil"]["stream"]
            inbox = self.streams.inboxes.get(stream) or self._open(stream, now)
            if inbox is not None:
                inbox.session.accept(None, now)
                self._count_received(0, len(block), 0)
                if inbox.add(block, now):
                    touched.append(inbox)
        replaced = None if stopping else link.check(now)
        if replaced is not None:
            self.poller.unregister(replaced)
            self.poller.register(link.sub, zmq.POLLIN)
            self.metrics.pupil_reconnects.inc()
        return n

    def _count_received(self, n_messages, n_samples, n_lost):
        metrics = self.metrics
        if n_messages:
            metrics.messages_received.inc(n_messages)
        if n_samples:
            metrics.samples_received.inc(n_samples)
            self.rates.samples += n_samples
        if n_lost:
            metrics.messages_lost.inc(n_lost)

    def _reject(self, exc, now):
        self.metrics.messages_rejected[exc.reason].inc()
        self.rejection_log.warning(exc.reason, str(exc), now)


_VEHICLE_DROPPED = {
    "vehicle_late": "stream {stream}: {n} vehicle sample(s) dropped: t not after the stream's "
                    "newest vehicle sample, or over vehicle.max_age_s={max_age_s:g} s before its "
                    "newest eye sample",
    "vehicle_overflow": "stream {stream}: {n} oldest vehicle sample(s) dropped: "
                        "vehicle.buffer_samples={buffer_samples} full",
}
