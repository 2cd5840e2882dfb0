"""The daemon's output: the XPUB socket states and events go out on, and the LSL outlets.

:meth:`Output.send` publishes one message to every subscriber and counts what a full subscriber
queue misses; :meth:`Output.republish` sends every stream's latest state again, with its age, so
that a subscriber that joins late (PUB drops what precedes it) learns the state at once.
"""

import zmq

from ..pipeline.formats import encode_state

__all__ = ["Output"]

_NOBLOCK = int(zmq.NOBLOCK)
_SNDMORE_NOBLOCK = int(zmq.SNDMORE | zmq.NOBLOCK)
"""zmq's flags as plain ints: combining and passing its enum members costs microseconds per call
in the loop."""


class Output:
    """Where published messages go.

    Parameters
    ----------
    metrics : Metrics

    Attributes
    ----------
    pub : zmq.Socket or None
        The output XPUB socket (set while the daemon runs).
    lsl : LslStates or None
        The LSL outlets of the states (``lsl.outlets``; set while the daemon runs).
    """

    def __init__(self, metrics):
        self.metrics = metrics
        self.pub = None
        self.lsl = None

    def send(self, frames):
        """Publish ``[topic, payload]`` to every subscriber; one whose queue holds
        ``output.sndhwm`` messages misses this one, counted (``xpub_nodrop`` reports the full
        queue at the topic frame, then the message goes out lossy to the others). Two plain
        ``send`` calls with int flags: ``send_multipart`` with zmq's flag enums costs twice as
        much per message."""
        pub = self.pub
        topic, payload = frames
        try:
            pub.send(topic, _SNDMORE_NOBLOCK)
        except zmq.Again:
            self.metrics.output_dropped.inc()
            pub.xpub_nodrop = False
            pub.send(topic, _SNDMORE_NOBLOCK)
            pub.send(payload, _NOBLOCK)
            pub.xpub_nodrop = True
            return
        pub.send(payload, _NOBLOCK)

    def republish(self, inboxes, now):
        """Send every stream's latest state again, with ``age_s``: seconds since it was first
        published (a silent stream's state grows old until the session expires)."""
        for inbox in inboxes:
            session = inbox.session
            if session.latest is not None:
                self.send(encode_state({**session.latest,
                                        "age_s": round(now - session.latest_s, 3)}))

    def discard_subscriptions(self):
        """Read the subscription messages the XPUB socket queues (nothing uses them)."""
        while True:
            try:
                self.pub.recv(_NOBLOCK)
            except zmq.Again:
                return

    def drop(self, stream):
        """Forget a stream that left the table (its LSL outlet)."""
        if self.lsl is not None:
            self.lsl.drop(stream)
