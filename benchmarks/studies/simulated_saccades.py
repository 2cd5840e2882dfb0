"""Saccades on a noisy vehicle tracker: the detectors against the simulator's true saccades.

Simulated drives (:func:`distractd.simulators.simulate_drive_truth`, 60 Hz, tracker noise on: gaze
noise of a vehicle tracker, 0.15-0.4 deg RMS) are scored with the event F1 of
:func:`distractd.models.evaluation.event_agreement` (one-to-one overlap matching) for fixed
velocity thresholds and the adaptive default. The real, human-coded sets are scored by
``benchmarks/real_events.py``.

Run: ``.venv/bin/python benchmarks/studies/simulated_saccades.py [--seeds 1 2 3]``; prints one JSON
line per setting and a Markdown table.
"""

import argparse
import json

import numpy as np

from distractd.models.evaluation import AgreementPool
from distractd.pipeline import PipelineConfig, detect_events
from distractd.simulators import simulate_drive_truth

_FIXED = {"saccade_noise_factor": 0.0, "saccade_noise_amplitude_factor": 0.0,
          "saccade_min_amplitude_deg": 0.2, "pursuit_tau_s": 0.0}
SETTINGS = (
    ("fixed 15 deg/s, 0.2 deg", {**_FIXED, "saccade_velocity_deg_s": 15.0}),
    ("fixed 30 deg/s, 0.2 deg", {**_FIXED, "saccade_velocity_deg_s": 30.0}),
    ("fixed 60 deg/s, 0.2 deg", {**_FIXED, "saccade_velocity_deg_s": 60.0}),
    ("adaptive speed only (k = 4, 5 deg/s floor, 0.1 deg)", {"saccade_noise_amplitude_factor": 0.0}),
    ("adaptive speed and amplitude, a = 3", {"saccade_noise_amplitude_factor": 3.0}),
    ("default without the smooth gaze velocity", {"pursuit_tau_s": 0.0}),
    ("default (adaptive speed and amplitude, a = 6)", {}),
)


def evaluate_simulated(config, seeds=(1, 2, 3), duration_s=300.0, rate_hz=60.0):
    """Saccade event F1 against the simulator's true saccades, pooled over drives."""
    pool = AgreementPool()
    for seed in seeds:
        recording, truth = simulate_drive_truth(seed, duration_s=duration_s, rate_hz=rate_hz)
        plan = truth.gaze
        real = plan.saccade_duration > 0
        spans = np.column_stack([plan.saccade_start[real],
                                 plan.saccade_start[real] + plan.saccade_duration[real]])
        rows = detect_events(recording, config).events
        rows = rows[rows[:, 0] == 0]
        found = np.column_stack([rows[:, 1] - 0.5 / rate_hz, rows[:, 2] + 0.5 / rate_hz])
        pool.add(spans, [], found, [])
    score = pool.result()
    return {"f1": score["f1"], "hits": score["hits"], "n_true": score["n_reference"],
            "n_detected": score["n_test"]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    args = parser.parse_args(argv)
    lines = []
    for name, settings in SETTINGS:
        score = evaluate_simulated(PipelineConfig(**settings), seeds=tuple(args.seeds))
        line = {"benchmark": "simulated_saccades", "setting": name, **score}
        print(json.dumps(line), flush=True)
        lines.append(line)
    print("\n| saccade threshold | F1 | hits | true | detected |")
    print("|---|---|---|---|---|")
    for line in lines:
        print(f"| {line['setting']} | {line['f1']:.3f} | {line['hits']} | {line['n_true']} | "
              f"{line['n_detected']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
