"""Replay recordings over ZeroMQ in distractd's native protocol, at real time or N× speed.

Each recording is published on ``samples.<stream_id>``; ``copies`` > 1 publishes K copies of every
recording under distinct stream ids (for load tests), each copy's clock shifted by a fraction of a
hop so that the copies' windows end at different moments instead of in one burst. A message is
sent when the last sample it holds is due (``(t - t_first) / speed`` after the start). The publisher
waits for a subscriber before sending (an XPUB socket sees the subscription), so nothing is lost
to ZeroMQ's slow-joiner behaviour. Messages are encoded by :mod:`distractd.pipeline.formats`, the
wire format's one home.
"""

import heapq
import math
import time

import numpy as np
import zmq

from .._errors import ConfigError
from .._validation import Interval, Options, check_params
from ..pipeline.formats import FIELDS, encode_block, encode_map

__all__ = ["replay", "stream_ids"]

_CONSTRAINTS = {
    "speed": Interval(0, None, closed="neither"),
    "copies": Interval(1, None, integer=True),
    "form": Options(("block", "map")),
    "block_samples": Interval(1, None, integer=True),
    "stagger_s": Interval(0, None),
    "wait_s": Interval(0, None),
}


def stream_ids(recordings, copies=1, prefix=None):
    """The stream ids :func:`replay` uses: ``<name>`` or ``<name>-<k>`` for each copy.

    ``name`` is ``prefix``, else the recording's ``meta["driver_id"]``, else ``rec<i>``; names
    repeated across recordings get the recording's index appended.
    """
    names = []
    for i, recording in enumerate(recordings):
        name = prefix or str(recording.meta.get("driver_id", f"rec{i}"))
        name = "".join(c if c.isascii() and c.isalnum() or c in "_.:-" else "_" for c in name)
        names.append(f"{name}{i}" if name in names or (prefix and len(recordings) > 1) else name)
    if copies == 1:
        return [[name] for name in names]
    return [[f"{name}-{k}" for k in range(copies)] for name in names]


def replay(recordings, endpoint, speed=1.0, copies=1, form="block", block_samples=6,
           stagger_s=0.5, wait_s=5.0, bind=False, curve=None, prefix=None, context=None,
           on_send=None, driver=None):
    """Publish recordings and return a summary.

    Parameters
    ----------
    recordings : list of Recording
    endpoint : str
        ZeroMQ endpoint of the daemon's input (connected to, or bound when ``bind``).
    speed : float, default=1.0
        Time scale: 1 real time, N for N× faster.
    copies : int, default=1
        Copies of each recording, under distinct stream ids.
    form : {"block", "map"}, default="block"
        Wire form: blocks of ``block_samples`` samples with a sequence number, or one map per
        sample.
    block_samples : int, default=6
        Samples per block message (6 = 0.1 s at 60 Hz).
    stagger_s : float, default=0.5
        Copy ``k`` of ``copies`` has ``k * stagger_s / copies`` seconds added to its timestamps and
        its schedule, so copies complete their windows at different moments, as independent
        trackers' clocks do (one hop, 0.5 s, spreads them evenly). Unused when ``copies`` is 1.
    wait_s : float, default=5.0
        How long to wait for a subscriber before giving up with :class:`~distractd.ConfigError`.
    bind : bool, default=False
        Bind ``endpoint`` instead of connecting to it.
    curve : tuple of bytes, optional
        ``(server_public_key, client_public_key, client_secret_key)`` for CURVE encryption.
    prefix : str, optional
        Stream-id name instead of the recordings' driver ids.
    context : zmq.Context, optional
    on_send : callable, optional
        Called as ``on_send(stream_id, t_last_sample, monotonic_send_s)`` after each message.
    driver : str, optional
        The driver every message names (the ``driver`` key: the daemon's driver profiles).

    Returns
    -------
    dict
        ``streams``, ``messages``, ``samples``, ``start_monotonic_s`` (``time.monotonic()`` at the
        schedule's origin; the same clock in every process of the machine), ``elapsed_s``,
        ``behind_s`` (the largest lateness of a message against its schedule).
    """
    check_params({"speed": speed, "copies": copies, "form": form, "block_samples": block_samples,
                  "stagger_s": stagger_s, "wait_s": wait_s}, _CONSTRAINTS, owner="replay")
    ids = stream_ids(recordings, copies, prefix)
    per_message = 1 if form == "map" else block_samples
    queue = []
    for recording, names in zip(recordings, ids):
        t = recording.t
        if len(t) == 0:
            continue
        ends = np.arange(per_message, len(t) + per_message, per_message).clip(max=len(t))
        due = (t[ends - 1] - t[0]) / speed
        for k, name in enumerate(names):
            offset_s = stagger_s * k / len(names)
            heapq.heappush(queue, (float(due[0]) + offset_s / speed, name, 0, recording, ends, due,
                                   offset_s))
    own_context = context is None
    context = context or zmq.Context()
    sock = context.socket(zmq.XPUB)
    sock.linger = 2000
    sock.sndhwm = 0
    try:
        if curve is not None:
            sock.curve_serverkey, sock.curve_publickey, sock.curve_secretkey = curve
        (sock.bind if bind else sock.connect)(endpoint)
        if not sock.poll(wait_s * 1e3, zmq.POLLIN):
            raise ConfigError(f"replay: no subscriber on {endpoint!r} within wait_s={wait_s}")
        sock.recv()
        seqs = {}
        messages = samples = 0
        behind_s = 0.0
        start = time.monotonic()
        while queue:
            due_s, name, index, recording, ends, due, offset_s = heapq.heappop(queue)
            delay = start + due_s - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            else:
                behind_s = max(behind_s, -delay)
            lo = ends[index - 1] if index else 0
            hi = ends[index]
            block = recording.samples[lo:hi]
            if offset_s:
                block = block.copy()
                block[:, 0] += offset_s
            if form == "map":
                sock.send_multipart(encode_map(name, _present(block[0]), driver=driver))
            else:
                seq = seqs.get(name, 0)
                seqs[name] = seq + 1
                sock.send_multipart(encode_block(name, block, seq, driver=driver))
            messages += 1
            samples += hi - lo
            if on_send is not None:
                on_send(name, float(block[-1, 0]), time.monotonic())
            if index + 1 < len(ends):
                heapq.heappush(queue, (float(due[index + 1]) + offset_s / speed, name, index + 1,
                                       recording, ends, due, offset_s))
        elapsed_s = time.monotonic() - start
    finally:
        sock.close()
        if own_context:
            context.term()
    return {"streams": sum(len(names) for names in ids), "messages": messages,
            "samples": int(samples), "start_monotonic_s": start, "elapsed_s": elapsed_s,
            "behind_s": behind_s}


def _present(row):
    return {name: value for name, value in zip(FIELDS, row.tolist()) if not math.isnan(value)}
