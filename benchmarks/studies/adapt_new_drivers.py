"""``distractd adapt`` on new drivers: does adapting a cohort model to a driver's first drive,
without labels, help on that driver's next drive?

For each new driver (the drives of ``--recordings``, made by ``distractd simulate --seed S
--drive D --protocol P``), drive 0 adapts ``--model`` (:func:`~distractd.models.detectors.
adapt_detector`: its own held-back check decides whether the result is kept, as ``distractd
adapt`` does) and drive 1 is scored, as deployed (the daemon's rule), by the model before and
after. Scheme: new driver, adaptation on an earlier drive of the same driver, judged on a later
one it never saw. Per protocol: mean G-mean before and after, the largest drop of a driver, how
many adaptations the check refused (those drivers keep the model: after = before).

Run: ``.venv/bin/python benchmarks/studies/adapt_new_drivers.py --recordings new --out
adapt-new-drivers.jsonl`` (``new``: the folder of docs/results/shipped-model.md).
"""

import argparse
import json
import time

import numpy as np

from distractd.models import load_model, save_model
from distractd.models.detectors import (
    DecisionRule, adapt_detector, decision_options, g_mean, predict_recording,
)
from distractd.pipeline import read_recordings


def deployed_g_mean(detector, recording):
    """Window G-mean of the published states over the decided labelled windows."""
    rule = DecisionRule(**decision_options(None, detector.feature_names))
    prediction = predict_recording(detector, recording, rule)
    label, states = prediction.windows.label, prediction.states
    known = (label >= 0) & (states >= 0)
    return g_mean(label[known], states[known])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="distractd/data/default_model.npz")
    parser.add_argument("--recordings", required=True)
    parser.add_argument("--protocols", nargs="+", default=["cognitive", "visual-manual"])
    parser.add_argument("--unlabelled", type=int, default=1000)
    parser.add_argument("--scratch", default="/tmp/adapted.npz",
                        help="where each adapted model is saved and read back")
    parser.add_argument("--out", default="adapt-new-drivers.jsonl")
    args = parser.parse_args()

    start = time.perf_counter()
    detector = load_model(args.model)
    drives = {}
    for recording in read_recordings(args.recordings):
        key = (recording.meta["protocol"], recording.meta["driver_id"])
        drives.setdefault(key, {})[recording.meta["drive"]] = recording
    for protocol in args.protocols:
        rows = []
        for (kind, driver), pair in sorted(drives.items()):
            if kind != protocol or not {0, 1} <= set(pair):
                continue
            estimator, parts = adapt_detector(detector, [pair[0]],
                                              n_unlabelled=args.unlabelled)
            check = parts["summary"]["adapted"]["check"]
            before = deployed_g_mean(detector, pair[1])
            if check["worse"]:
                after = before   # refused: the driver keeps the model
            else:
                save_model(args.scratch, estimator, **parts)
                after = deployed_g_mean(load_model(args.scratch), pair[1])
            rows.append({"driver": driver, "before": before, "after": after,
                         "refused": check["worse"], "check": check})
        before = np.array([r["before"] for r in rows])
        after = np.array([r["after"] for r in rows])
        line = {"protocol": protocol, "model": detector.model_id,
                "scheme": "new driver; adapted on drive 0, scored on drive 1 as deployed",
                "drivers": len(rows), "g_mean_before": round(float(np.mean(before)), 3),
                "g_mean_after": round(float(np.mean(after)), 3),
                "largest_drop": round(float(np.max(before - after)), 3),
                "drivers_lower_by_0_02": int(np.sum(before - after > 0.02)),
                "refused": int(sum(r["refused"] for r in rows)), "per_driver": rows,
                "seconds": round(time.perf_counter() - start, 1)}
        print(json.dumps(line), flush=True)
        with open(args.out, "a") as out:
            out.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
