"""Publish eye/head-tracker samples to distractd, one sample per message (the map form).

The friendliest input: each message is ``[b"samples.<stream_id>", msgpack({"v": 1, "t": ...,
<canonical field>: value, ...})]`` on a ZeroMQ PUB socket that connects to the daemon's input
(``input.bind``, default tcp://127.0.0.1:5555). Fields you do not have are left out (the daemon
takes them as missing). Names and units: README "Canonical sample fields" (seconds, metres,
radians); gaze in the car frame, + yaw to the driver's right, + pitch up (README "Conventions").

Here the samples come from a CSV file with canonical column names (as ``distractd simulate --out
drive.csv`` writes); in your integration, build the dict from your tracker's frame instead.

    python examples/publish_map.py drive.csv --to tcp://127.0.0.1:5555 --stream car-1 --speed 10

Needs only pyzmq and msgpack.
"""

import argparse
import csv
import math
import time

import msgpack
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


def samples(path):
    """Each CSV row as a dict of canonical fields; empty cells (missing values) left out."""
    with open(path, newline="") as file:
        for row in csv.DictReader(file):
            yield {name: float(value) for name, value in row.items()
                   if name != "label" and value != ""}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", help="samples with canonical column names (t required)")
    parser.add_argument("--to", default="tcp://127.0.0.1:5555", help="the daemon's input")
    parser.add_argument("--stream", default="car-1", help="stream id: [A-Za-z0-9_.:-], 1-128")
    parser.add_argument("--speed", type=float, default=1.0, help="times real time")
    args = parser.parse_args()

    with zmq.Context() as context, connect_publisher(context, args.to) as socket:
        topic = f"samples.{args.stream}".encode("ascii")
        start_wall, start_t, n = time.monotonic(), None, 0
        for sample in samples(args.csv):
            start_t = sample["t"] if start_t is None else start_t
            # keep the recording's timing: wait until this sample is due
            delay = (sample["t"] - start_t) / args.speed - (time.monotonic() - start_wall)
            if delay > 0:
                time.sleep(delay)
            sample = {k: v for k, v in sample.items() if not math.isnan(v)}
            socket.send_multipart([topic, msgpack.packb({"v": 1, **sample})])
            n += 1
    print(f"sent {n} samples to stream {args.stream}", flush=True)


if __name__ == "__main__":
    main()
