"""Relay a Pupil Capture's gaze to distractd as a native sample stream of your naming.

The daemon follows one Pupil Capture by itself (``pupil.remote``; docs/inputs.md): use that
when you can. Use a relay like this one when the daemon cannot or should not reach Capture:
several Captures into one daemon (one relay and stream id each), or Capture on another computer
whose network API (unauthenticated) must stay on that computer, while the relay reaches the
daemon's input, which can require CURVE keys.

What it does, as the daemon's own Pupil input does:
1. ask Pupil Remote (REQ, default port 50020) for ``SUB_PORT``, the IPC backbone's port;
2. subscribe there to ``gaze.3d.``, ``pupil.`` and ``blink`` (and to ``gaze.2d.`` and
   ``surfaces.``, only to say once that such gaze, without angles, is skipped);
3. map each datum to canonical samples with distractd's public ``PupilAdapter`` (gaze normals
   to yaw/pitch, 3-D pupil diameters, blinks), which also puts Capture's out-of-order gaze
   datums back in time order (held 0.25 s of Pupil time);
4. publish the samples in block form on ``samples.<stream_id>`` to the daemon's input.

Pupil Core gaze is eye-in-head (no head pose); the daemon's own Pupil input marks such a stream
(``"gaze_frame": "head"``), a relayed stream is not marked (docs/inputs.md, "Eye-in-head gaze").

    python examples/pupil_relay.py --remote tcp://127.0.0.1:50020 --to tcp://127.0.0.1:5555 \\
        --stream glasses-1

Runs until Ctrl-C. Needs pyzmq, msgpack, numpy and distractd (for the mapping).
"""

import argparse
import time

import msgpack
import numpy as np
import zmq

from distractd.pipeline.formats import FIELDS, PupilAdapter, Rejected, UnsupportedGaze

REPORT_EVERY_S = 10.0
"""How often the relay says how many samples it has relayed, s."""


def connect_publisher(context, endpoint, timeout_s=30.0):
    """An XPUB socket connected to the daemon's input, returned once the daemon's subscription
    has arrived: a plain PUB would silently drop the first messages ("slow joiner")."""
    socket = context.socket(zmq.XPUB)  # a PUB that also receives the subscriptions
    socket.linger = 2000  # on close, up to 2 s to deliver what is still queued
    socket.connect(endpoint)
    if not socket.poll(int(timeout_s * 1000)):
        raise SystemExit(f"no distractd subscribed at {endpoint} within {timeout_s:g} s")
    socket.recv()  # b"\x01samples." : the daemon's subscription to the input topic
    return socket


def backbone_endpoint(context, remote, timeout_s=5.0):
    """The endpoint of Capture's IPC backbone, from Pupil Remote's answer to ``SUB_PORT``."""
    with context.socket(zmq.REQ) as request:
        request.linger = 0
        request.connect(remote)
        request.send_string("SUB_PORT")
        if not request.poll(int(timeout_s * 1000)):
            raise SystemExit(f"Pupil Remote at {remote} did not answer within {timeout_s:g} s")
        port = request.recv_string()
    host = remote.rsplit(":", 1)[0]
    return f"{host}:{port}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--remote", default="tcp://127.0.0.1:50020", help="Pupil Remote")
    parser.add_argument("--to", default="tcp://127.0.0.1:5555", help="the daemon's input")
    parser.add_argument("--stream", default="pupil", help="stream id: [A-Za-z0-9_.:-], 1-128")
    args = parser.parse_args()

    adapter = PupilAdapter(reorder_s=0.25)
    topic = f"samples.{args.stream}".encode("ascii")
    seq = n_samples = n_refused = 0
    with zmq.Context() as context, context.socket(zmq.SUB) as backbone, \
            connect_publisher(context, args.to) as daemon:
        backbone.linger = 0
        backbone.connect(backbone_endpoint(context, args.remote))
        for prefix in PupilAdapter.TOPICS:
            backbone.subscribe(prefix.encode())

        def send(block):
            nonlocal seq, n_samples
            if len(block):
                message = {"v": 1, "seq": seq, "fields": list(FIELDS), "dtype": "<f8",
                           "data": np.ascontiguousarray(block, dtype="<f8").tobytes()}
                daemon.send_multipart([topic, msgpack.packb(message)])
                seq, n_samples = seq + 1, n_samples + len(block)

        print(f"relaying Pupil Capture at {args.remote} to the daemon at {args.to} as stream "
              f"{args.stream}; a count every {REPORT_EVERY_S:g} s; Ctrl-C stops", flush=True)
        last_datum = last_report = time.monotonic()
        try:
            while True:
                if time.monotonic() - last_report >= REPORT_EVERY_S:
                    print(f"relayed {n_samples} samples so far", flush=True)
                    last_report = time.monotonic()
                if backbone.poll(100):
                    try:  # [topic, payload, *raw data frames]: the adapter reads the first two
                        send(adapter.update(backbone.recv_multipart()))
                    except Rejected as exc:  # a datum the mapping cannot read: skip it
                        n_refused += 1
                        print(f"skipped: {exc}", flush=True)
                    except UnsupportedGaze as exc:  # 2-D or surface-mapped gaze: no angles
                        n_refused += 1
                        if exc.first:  # once per mapping
                            print(f"skipped: {exc}", flush=True)
                    last_datum = time.monotonic()
                elif adapter.n_held and time.monotonic() - last_datum > 1.0:
                    send(adapter.flush())  # Capture went quiet: release the held samples
        except KeyboardInterrupt:
            send(adapter.flush())
    print(f"relayed {n_samples} samples in {seq} messages to stream {args.stream} "
          f"({n_refused} datums skipped)", flush=True)


if __name__ == "__main__":
    main()
