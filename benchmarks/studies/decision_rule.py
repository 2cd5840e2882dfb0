"""The decision rule's threshold and dwell against false alarms per hour, on new drivers.

For each protocol, a cohort of ``--drivers`` simulated drivers (``--drives`` protocol drives and
one no-task drive each) is scored under the ``new-driver`` scheme with the cohort recipe and
the running baseline (every score comes from a model that never saw the driver), keeping each
test drive's trace. The :class:`~distractd.models.detectors.DecisionRule` is then replayed on
those traces for every (threshold, dwell) of a grid, with and without the glance alerts:

- ``false_alarms_per_h``: transitions into the distracted state in attentive time, per attentive
  hour, over every drive of the cohort (no-task drives included);
- ``missed``: distraction episodes never reached; ``delay_s_median``: onset to first state;
- ``g_mean``: the decided windows' state against the window truth.

Choose the rule on a development cohort, then confirm it on a held-out one with
``--thresholds``/``--dwells`` fixed. Prints one JSON line per (protocol, model, rule) and appends
it to ``--out``. Run:
``.venv/bin/python benchmarks/studies/decision_rule.py --drivers 8 --drives 2 --seed 31338``.
"""

import argparse
import json
import time

import numpy as np

from distractd.models.detectors import decide, model_specs
from distractd.models.evaluation import (
    binary_scores, detection_delays, evaluate_scheme, false_alarms_per_hour, scheme_drives,
)
from distractd.pipeline import PipelineConfig
from distractd.simulators import simulate_cohort


def replay(records, alerts, **rule):
    """Deployment figures of one rule over the (trace, window quality) of a cohort's drives."""
    false_alarms, attentive_h, delays, states_all, truth_all = 0.0, 0.0, [], [], []
    for trace, quality in records:
        t, label = trace["t_end"], trace["label"]
        states = decide(t, trace["scores"], quality, trace["alerts"] if alerts else (), **rule)
        hours = np.sum(label == 0) * np.median(np.diff(t)) / 3600.0
        false_alarms += false_alarms_per_hour(t, label, states, grace_s=5.0) * hours
        attentive_h += hours
        delays += detection_delays(t, label, states).tolist()
        known = (label >= 0) & (states >= 0)
        states_all.append(states[known])
        truth_all.append(label[known])
    delays = np.array(delays)
    window = binary_scores(np.concatenate(truth_all), np.concatenate(states_all))
    return {"false_alarms_per_h": round(false_alarms / attentive_h, 2),
            "missed": round(float(np.mean(np.isnan(delays))), 3) if len(delays) else None,
            "delay_s_median": round(float(np.nanmedian(delays)), 1) if len(delays) else None,
            "g_mean": round(window["g_mean"], 3), "attentive_h": round(attentive_h, 2)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drivers", type=int, default=8)
    parser.add_argument("--drives", type=int, default=2)
    parser.add_argument("--protocols", nargs="+", default=["visual-manual", "cognitive"])
    parser.add_argument("--models", nargs="+", default=["svm", "sselm"])
    parser.add_argument("--thresholds", nargs="+", type=float,
                        default=[0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5])
    parser.add_argument("--dwells", nargs="+", type=float, default=[3.0, 5.0, 8.0])
    parser.add_argument("--seed", type=int, default=31338)
    parser.add_argument("--out", default="decision-rule.jsonl")
    args = parser.parse_args()

    config = PipelineConfig(drive_side="right")  # the simulator's car
    for protocol in args.protocols:
        start = time.perf_counter()
        task = simulate_cohort(args.drivers, args.seed, drives=args.drives, protocol=protocol)
        calm = simulate_cohort(args.drivers, args.seed, drives=1, protocol="none")
        for recording in calm:
            recording.meta["recording_id"] += "-calm"
        drives, _ = scheme_drives(task + calm, config)
        specs = model_specs(args.models, "small")
        results = evaluate_scheme(drives, "new-driver", specs, seed=args.seed, traces=True)
        for model, per_driver in results.items():
            quality = {d.recording_id: d.quality for d in drives}
            records = [(r["trace"], quality[r["recording_id"]])
                       for runs in per_driver.values() for r in runs]
            for alerts in (False, True):
                for dwell in args.dwells:
                    for on in args.thresholds:
                        line = {"bench": "decision_rule", "protocol": protocol, "model": model,
                                "drivers": args.drivers, "drives": args.drives,
                                "seed": args.seed, "on": on, "min_dwell_s": dwell,
                                "glance_alerts": alerts,
                                **replay(records, alerts, on=on, off=on, min_dwell_s=dwell),
                                "seconds": round(time.perf_counter() - start, 1)}
                        print(json.dumps(line), flush=True)
                        with open(args.out, "a") as file:
                            file.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
