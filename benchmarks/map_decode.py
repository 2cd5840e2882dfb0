"""Per-message cost of the daemon's map-form ingest: decode one sample map and hold it in the
stream's inbox, fed as one block per hop (issue 26).

A simulated drive at 60 Hz is encoded as map-form messages (one sample each, NaN fields left out).
Three loops read the same messages, interleaved ``--repeats`` times and timed with the process's
CPU clock:

- ``one_row_arrays``: ``decode_samples`` (each message a one-row array), the inbox joining the
  arrays with ``np.concatenate`` at each take;
- ``rows``: ``decode_message`` (each message a checked row), the inbox making one array of the rows
  at each take;
- ``floor``: the lean receiver's decode (``msgpack.unpackb``, append to a list), nothing checked.

Both inbox loops check ``due`` after every message and take when due, as the daemon's loop does
when each drain brings one message of the stream. Prints one JSON line: microseconds of CPU per
message (median over repeats) for each loop, the ratios to the floor, the speed-up of rows over
one-row arrays, and the load average.

Run: ``.venv/bin/python benchmarks/map_decode.py [--seed 3] [--duration 120] [--repeats 7]``.
Compare runs by the ratios, not by absolute times (the machine is shared).
"""

import argparse
import json
import math
import os
import statistics
import time

import msgpack

from distractd.daemon import Model
from distractd.daemon._streams import _Inbox
from distractd.pipeline.formats import FIELDS, Limits, decode_message, decode_samples, encode_map
from distractd.simulators import simulate_drive


def messages_of(seed, duration_s):
    """The drive's map-form messages, NaN fields left out."""
    samples = simulate_drive(seed, duration_s=duration_s).samples
    return [encode_map("car", {name: float(value) for name, value in zip(FIELDS, row)
                               if not math.isnan(value)}, seq)
            for seq, row in enumerate(samples)]


def ingest(messages, decode, pipeline_config):
    """Decode every message into one inbox and take the held samples whenever due; return the
    samples taken."""
    limits = Limits()
    inbox = _Inbox(None, pipeline_config)
    n_taken = 0
    for frames in messages:
        inbox.add(decode(frames, limits)[1], 0.0)
        if inbox.due(0.0):
            n_taken += len(inbox.take())
    if inbox.n_held:
        n_taken += len(inbox.take())
    return n_taken


def floor(messages):
    """The lean receiver's decode: unpack and keep."""
    received = []
    for _, payload in messages:
        received.append(msgpack.unpackb(payload))
    return len(received)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--duration", type=float, default=120.0, help="drive length, s")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    pipeline_config = Model("").pipeline_config
    messages = messages_of(args.seed, args.duration)
    loops = {"one_row_arrays": lambda: ingest(messages, decode_samples, pipeline_config),
             "rows": lambda: ingest(messages, decode_message, pipeline_config),
             "floor": lambda: floor(messages)}
    times = {name: [] for name in loops}
    for _ in range(args.repeats):
        for name, loop in loops.items():
            start = time.process_time()
            n = loop()
            times[name].append(time.process_time() - start)
            assert n == len(messages), (name, n)
    us = {name: round(1e6 * statistics.median(t) / len(messages), 3) for name, t in times.items()}
    print(json.dumps({
        "bench": "map_decode", "seed": args.seed, "duration_s": args.duration,
        "messages": len(messages), "repeats": args.repeats, "us_per_message": us,
        "ratio_to_floor": {name: round(us[name] / us["floor"], 2)
                           for name in ("one_row_arrays", "rows")},
        "speedup_rows": round(us["one_row_arrays"] / us["rows"], 2),
        "load_1min": os.getloadavg()[0]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
