"""Per-sample CPU of the car's signals: the pipeline on a 60 Hz stream without vehicle fields,
with them and the vehicle channel off, and with them and the channel on (the default; issue 33's
budget: unchanged without, at most +15 % with).

One stream fed in 30-sample blocks (the daemon's hop at 60 Hz), three processors fed the same
blocks in turn, each update timed in this process's CPU time (load on a shared machine weighs on
all three alike); best of ``--repeat`` passes. Prints one JSON line.
Run: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/vehicle_cpu.py``.
"""

import argparse
import json
import time

import numpy as np

from distractd.pipeline import VEHICLE_FIELDS, FIELD_INDEX, PipelineConfig, StreamProcessor
from distractd.simulators import simulate_drive

BLOCK = 30


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with_car = simulate_drive(3, duration_s=args.seconds, protocol="visual-manual").samples
    without = with_car.copy()
    without[:, [FIELD_INDEX[f] for f in VEHICLE_FIELDS]] = np.nan
    blocks = [(without[i:i + BLOCK], with_car[i:i + BLOCK])
              for i in range(0, len(with_car), BLOCK)]
    configs = {"without": PipelineConfig(), "with_channel_off": PipelineConfig(vehicle=False),
               "with": PipelineConfig()}
    best = dict.fromkeys(configs, np.inf)
    for _ in range(args.repeat):
        processors = {name: StreamProcessor(config) for name, config in configs.items()}
        spent = dict.fromkeys(best, 0.0)
        for plain, car in blocks:
            for name, block in (("without", plain), ("with_channel_off", car), ("with", car)):
                start = time.process_time()
                processors[name].update(block)
                spent[name] += time.process_time() - start
        best = {name: min(best[name], spent[name]) for name in best}
    n = len(with_car)
    us = {name: 1e6 * seconds / n for name, seconds in best.items()}
    print(json.dumps({"benchmark": "vehicle_cpu", "samples": n, "block_samples": BLOCK,
                      "cpu_us_per_sample": {k: round(v, 3) for k, v in us.items()},
                      "with_vs_without": round(us["with"] / us["without"] - 1, 3),
                      "channel_off_vs_without": round(us["with_channel_off"] / us["without"] - 1,
                                                      3)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
