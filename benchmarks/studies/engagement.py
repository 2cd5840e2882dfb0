"""Study: does steering and pedal input as proof of engagement (``sessions.engagement_s``) spare
pre-alerts in attentive driving without hiding distraction? Chosen on the development half of the
Taamneh et al. 2017 drives (doi:10.1038/sdata.2017.110), printed for the held-out half too.

The shipped model through the predict path and the daemon's rule, on each driver's normal,
texting and question drives (1 Hz gaze and the car: its ``sparse_gaze_vehicle`` sub-model); per
``engagement_s``, the escalation of every window (``DecisionRule.escalate``) and: pre-alert
episodes (entries to level >= 1) per attentive hour of the normal drives, the share of task
windows at level >= 1, and the share of windows with a glance away of at least 3 s
(``off_road_s``) at level >= 1 (must stay 1: the rule never hides such a glance). Also the share
of windows whose driver gave input within the span (how often the proof is there at all).

Run: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/studies/engagement.py`` (JSON lines).
"""

import json
import sys
from pathlib import Path

import numpy as np

from distractd.daemon import DEFAULTS, decision_options
from distractd.models import load_model
from distractd.models.detectors import DEFAULT_MODEL_PATH, DecisionRule, predict_recording
from distractd.models.evaluation import driver_halves
from distractd.pipeline.formats import read_taamneh

ROOT = Path(__file__).resolve().parents[2]
TAAMNEH = ROOT.parent / "shared" / "data" / "taamneh"
SPANS_S = (0.0, 1.0, 2.0, 5.0)


def main():
    files = sorted(TAAMNEH.glob("T*.csv"))
    development, held_out = driver_halves(path.stem for path in files)
    detector = load_model(DEFAULT_MODEL_PATH)
    options = {**decision_options(DEFAULTS, detector.feature_names)}
    predictions = {}
    for path in files:
        for recording in read_taamneh(path, drives=(4, 5, 7)):
            rule = DecisionRule(**options)
            predictions[recording.meta["recording_id"]] = (
                path.stem, recording.meta["protocol"], predict_recording(detector, recording, rule))
    for span in SPANS_S:
        for half, drivers in (("development", development), ("held-out", held_out)):
            hours = entries = task = task_up = long_glance = long_up = engaged = windows = 0
            for driver, protocol, p in predictions.values():
                if driver not in drivers:
                    continue
                w = p.windows
                rule = DecisionRule(**{**options, "engagement_s": span})
                levels, _ = rule.escalate(w.t_end, p.states, w.on_road, w.off_road_s,
                                          w.eyes_closed_s, w.drowsy,
                                          [[(a.t, a.kind) for a in g] for g in w.alerts],
                                          w.input_age_s)
                up = np.array([level for level, _, _ in levels]) >= 1
                windows += len(w)
                engaged += int(np.sum(w.input_age_s <= max(span, 1.0)))
                if protocol == "normal":
                    hop_s = float(np.median(np.diff(w.t_end)))
                    hours += len(w) * hop_s / 3600.0
                    entries += int(np.sum(up[1:] & ~up[:-1]) + up[0])
                task += int(np.sum(w.label == 1))
                task_up += int(np.sum(up & (w.label == 1)))
                glance = w.off_road_s >= 3.0
                long_glance += int(glance.sum())
                long_up += int(np.sum(up & glance))
            print(json.dumps({"study": "engagement", "engagement_s": span, "data": half,
                              "pre_alerts_per_attentive_hour": round(entries / hours, 2),
                              "task_windows_escalated": round(task_up / task, 4),
                              "long_glance_windows_escalated": (round(long_up / long_glance, 4)
                                                                if long_glance else None),
                              "windows_with_input_within": round(engaged / windows, 4)}),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
