"""Print the distraction states and alerts distractd publishes, one line each.

The daemon's PUB socket (``output.bind``, default tcp://127.0.0.1:5556) sends
``[b"state.<stream_id>", msgpack(state)]`` once per window (every 0.5 s) and
``[b"event.<stream_id>", msgpack(event)]`` for state transitions, finished segments and alerts
(glance: long distraction, time sharing; fatigue: microsleep, sleep, drowsiness; unresponsive). Every second it sends the latest state of each
stream again, marked with ``age_s``, so that a late subscriber converges; this script prints
first publications only. Schemas: docs/daemon.md, "Output".

    python examples/subscribe_states.py --from tcp://127.0.0.1:5556 [--stream car-1]

Runs until Ctrl-C. Needs only pyzmq and msgpack.
"""

import argparse

import msgpack
import zmq


def describe(kind, message):
    """One line for a state or event message, None for a republished copy."""
    stream, t = message["stream"], message["t"]
    if kind == "state":
        if "age_s" in message:  # the periodic re-publication of a state already printed
            return None
        return (f"state {stream} t={t:.3f} {message['state']} score={message['score']:.3f} "
                f"quality={message['quality']:.2f}")
    if message["type"] == "alert":  # glance alerts: time away; fatigue: time shut; unresponsive
        details = [f"{label}={message[key]:.2f}s" for key, label in
                   (("away_s", "away"), ("closed_s", "closed")) if message.get(key) is not None]
        details += [f"cause={message['cause']}"] if "cause" in message else []
        return " ".join([f"alert {stream} t={t:.3f} {message['kind']}", *details])
    if message["type"] == "transition":
        return f"transition {stream} t={t:.3f} {message['from']} -> {message['to']}"
    segment = message["segment"]  # a segment the online segmenter has finished
    return (f"segment {stream} t={t:.3f} {segment['label']} "
            f"[{segment['start']:.3f}, {segment['end']:.3f}]")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="endpoint", default="tcp://127.0.0.1:5556",
                        help="the daemon's output")
    parser.add_argument("--stream", help="only this stream (default: every stream)")
    args = parser.parse_args()

    with zmq.Context() as context, context.socket(zmq.SUB) as socket:
        socket.linger = 0
        socket.connect(args.endpoint)
        suffix = args.stream or ""  # topics are prefixes: "state.car-1" also matches "car-10"
        for kind in ("state", "event"):
            socket.subscribe(f"{kind}.{suffix}".encode())
        print(f"listening on {args.endpoint}", flush=True)
        try:
            while True:
                topic, payload, *_ = socket.recv_multipart()  # extra frames are ignored
                kind, _, stream = topic.decode().partition(".")
                if args.stream and stream != args.stream:
                    continue
                line = describe(kind, msgpack.unpackb(payload, raw=False,
                                                      strict_map_key=False))
                if line:
                    print(line, flush=True)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
