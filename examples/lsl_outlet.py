r"""Send eye/head-tracker samples to distractd over Lab Streaming Layer (an LSL outlet).

The daemon takes every LSL stream that matches one of its ``lsl.inlets`` predicates, e.g.

    distractd run --set "lsl.inlets=[\"name='my-tracker'\"]"

and processes it as stream ``lsl.<name>.<source_id>`` (here ``lsl.my-tracker.tracker-1``).
A channel whose label is a canonical field name is taken as that field, in the canonical unit
(radians, metres; a channel ``unit`` of ``deg`` or ``mm``/``cm`` is converted); the other
mappings (XDF gaze meta-data, Pupil Capture's LSL relay) are in docs/inputs.md. Each sample is
stamped with the LSL clock of this computer (``local_clock()``); the daemon adds liblsl's clock
offset, so streams from several computers share one clock.

Here the samples come from a CSV file with canonical column names (as ``distractd simulate --out
drive.csv`` writes); in your integration, push your tracker's frames instead.

    python examples/lsl_outlet.py drive.csv --name my-tracker --speed 10

Needs numpy and pylsl (``pip install pylsl``, liblsl included).
"""

import argparse
import csv
import time

import numpy as np
import pylsl


def read_columns(path):
    """The CSV's field names (the label column left out) and its values, empty cells as NaN."""
    with open(path, newline="") as file:
        reader = csv.reader(file)
        header = next(reader)
        keep = [i for i, name in enumerate(header) if name != "label"]
        rows = [[float(row[i]) if row[i] else np.nan for i in keep] for row in reader if row]
    return [header[i] for i in keep], np.array(rows).reshape(-1, len(keep))


def make_outlet(name, source_id, labels, rate_hz):
    """An outlet of double channels, each labelled with the canonical field it carries."""
    info = pylsl.StreamInfo(name, "Gaze", len(labels), rate_hz, "double64", source_id)
    channels = info.desc().append_child("channels")
    for label in labels:
        channel = channels.append_child("channel")
        channel.append_child_value("label", label)  # canonical name: the field it carries
    return pylsl.StreamOutlet(info)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", help="samples with canonical column names (t required)")
    parser.add_argument("--name", default="my-tracker", help="the LSL stream's name")
    parser.add_argument("--source-id", default="tracker-1",
                        help="a stable id: liblsl reconnects a stream with one after a restart")
    parser.add_argument("--speed", type=float, default=1.0, help="times real time")
    parser.add_argument("--wait", type=float, default=60.0,
                        help="seconds to wait for the daemon's inlet before sending")
    args = parser.parse_args()

    fields, data = read_columns(args.csv)
    t = data[:, fields.index("t")]
    labels = [name for name in fields if name != "t"]  # the timestamp travels as LSL's own
    values = data[:, [fields.index(name) for name in labels]]
    rate_hz = 1.0 / float(np.median(np.diff(t)))
    outlet = make_outlet(args.name, args.source_id, labels, rate_hz)
    if not outlet.wait_for_consumers(args.wait):
        raise SystemExit(f"no LSL inlet opened {args.name} within {args.wait:g} s")
    start_clock, start_wall = pylsl.local_clock(), time.monotonic()
    chunk = max(1, int(round(rate_hz / 20)))  # push every ~50 ms of samples
    for first in range(0, len(t), chunk):
        last = min(first + chunk, len(t)) - 1
        delay = (t[last] - t[0]) / args.speed - (time.monotonic() - start_wall)
        if delay > 0:
            time.sleep(delay)
        # the samples' own timing on this computer's LSL clock (at --speed above 1 the stamps
        # run ahead of the clock: the daemon goes by the stamps, as for a recording)
        stamps = start_clock + (t[first:last + 1] - t[0])
        outlet.push_chunk(values[first:last + 1].tolist(), stamps.tolist())
    time.sleep(1.0)  # let the inlet pull the last chunk before the outlet goes away
    print(f"sent {len(t)} samples on LSL stream {args.name} ({args.source_id})", flush=True)


if __name__ == "__main__":
    main()
