"""Per-window cost of ``Session.decide`` (decision rule, escalation, state and event dicts), the
way the daemon calls it: one or two windows at a time.

A simulated drive goes through a session's pipeline in the daemon's blocks (30 samples, one hop
at 60 Hz) and is scored by the shipped model; each block's windows and scores are kept. Then fresh
sessions replay only ``decide`` on those pairs, ``--repeats`` times, timed with the process's CPU
clock. In the same run, the lean floor: packing each state message it published with msgpack
(``encode_state``, what the daemon does with every state anyway). Prints one JSON line:
microseconds of CPU per window for ``decide`` and the floor, their ratio, and the load average.

Run: ``.venv/bin/python benchmarks/session_decide.py [--seed 3] [--duration 300] [--repeats 20]``.
Compare runs by the ratio to the floor, not by absolute times (the machine is shared).
"""

import argparse
import json
import os
import time

import numpy as np
from threadpoolctl import threadpool_limits

from distractd.daemon import Model, Session, decision_options, load_config
from distractd.pipeline.formats import encode_state
from distractd.simulators import simulate_drive

BLOCK_SAMPLES = 30


def replayed(model, decision, seed, duration_s):
    """The drive's ``(windows, scores)`` per block, as a session's pipeline and the model give
    them."""
    session = Session("car", model.pipeline_config, decision, None, 0.0)
    samples = simulate_drive(seed, duration_s=duration_s).samples
    pairs = []
    for lo in range(0, len(samples), BLOCK_SAMPLES):
        windows = session.process(samples[lo:lo + BLOCK_SAMPLES])
        if len(windows):
            pairs.append((windows, model.scores(windows.X)))
    return pairs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--duration", type=float, default=300.0, help="drive length, s")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)
    model = Model("")
    decision = decision_options(load_config(), model.detector.feature_names)
    with threadpool_limits(limits=1):
        pairs = replayed(model, decision, args.seed, args.duration)
        n_windows = sum(len(windows) for windows, _ in pairs)
        published = []
        start = time.process_time()
        for _ in range(args.repeats):
            session = Session("car", model.pipeline_config, decision, None, 0.0)
            published = []
            for windows, scores in pairs:
                states, _ = session.decide(windows, scores, model.detector.model_id)
                published += states
        decide_s = time.process_time() - start
        start = time.process_time()
        for _ in range(args.repeats):
            for message in published:
                encode_state(message)
        floor_s = time.process_time() - start
    total = n_windows * args.repeats
    print(json.dumps({
        "bench": "session_decide", "seed": args.seed, "duration_s": args.duration,
        "windows": n_windows, "calls": len(pairs), "repeats": args.repeats,
        "decide_us_per_window": round(1e6 * decide_s / total, 3),
        "encode_state_us_per_window": round(1e6 * floor_s / total, 3),
        "ratio_to_encode": round(decide_s / floor_s, 3),
        "load_1min": os.getloadavg()[0]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
