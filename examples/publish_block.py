"""Publish eye/head-tracker samples to distractd in batches (the block form, the fastest).

Each message carries n samples as one n x len(fields) row-major float64 array:
``[b"samples.<stream_id>", msgpack({"v": 1, "seq": 17, "fields": ["t", "gaze_r_yaw", ...],
"dtype": "<f8", "data": <bytes>})]``. Missing values are NaN. ``seq`` goes up by one per
message, so the daemon counts lost messages (``distractd_messages_lost_total``). The daemon
decodes the block without copying when ``fields`` is the canonical order (docs/daemon.md).

Here the samples come from a CSV file with canonical column names (as ``distractd simulate --out
drive.csv`` writes); in your integration, fill the array from your tracker's frames instead.

    python examples/publish_block.py drive.csv --to tcp://127.0.0.1:5555 --stream car-2 --block 30

Needs only numpy, pyzmq and msgpack.
"""

import argparse
import csv
import time

import msgpack
import numpy as np
import zmq


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


def read_columns(path):
    """The CSV's field names (the label column left out) and its values, empty cells as NaN."""
    with open(path, newline="") as file:
        reader = csv.reader(file)
        header = next(reader)
        keep = [i for i, name in enumerate(header) if name != "label"]
        rows = [[float(row[i]) if row[i] else np.nan for i in keep] for row in reader if row]
    return [header[i] for i in keep], np.array(rows, dtype="<f8").reshape(-1, len(keep))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", help="samples with canonical column names (t required)")
    parser.add_argument("--to", default="tcp://127.0.0.1:5555", help="the daemon's input")
    parser.add_argument("--stream", default="car-1", help="stream id: [A-Za-z0-9_.:-], 1-128")
    parser.add_argument("--block", type=int, default=30, help="samples per message")
    parser.add_argument("--speed", type=float, default=1.0, help="times real time")
    args = parser.parse_args()

    fields, data = read_columns(args.csv)
    t = data[:, fields.index("t")]
    with zmq.Context() as context, connect_publisher(context, args.to) as socket:
        topic = f"samples.{args.stream}".encode("ascii")
        start_wall = time.monotonic()
        for seq, first in enumerate(range(0, len(data), args.block)):
            block = data[first:first + args.block]
            # a block is sent once its last sample is due, as a tracker would send it
            due_s = (t[first + len(block) - 1] - t[0]) / args.speed
            delay = due_s - (time.monotonic() - start_wall)
            if delay > 0:
                time.sleep(delay)
            message = {"v": 1, "seq": seq, "fields": fields, "dtype": "<f8",
                       "data": np.ascontiguousarray(block).tobytes()}
            socket.send_multipart([topic, msgpack.packb(message)])
    print(f"sent {len(data)} samples in {seq + 1} messages to stream {args.stream}", flush=True)


if __name__ == "__main__":
    main()
