"""Study: where the shipped real-drive sub-models should put the decision threshold, chosen on the
development half of the Taamneh et al. 2017 drives (doi:10.1038/sdata.2017.110) only.

Three folds of the development drivers: ``make real-model``'s recipe (``train_cohort`` with
``vehicle=True`` on the normal, texting and question drives) trained on two folds, the third
scored as deployed: its windows through the pipeline with the model's settings, the sub-model's
published scores, the daemon's rule. Published scores move by the operating point as a whole (a
point p puts the out-of-fold best-G-mean decision at score p, the rule's threshold staying at 1),
so each fold is trained once and every point scored from the same scores. Per sub-model
(``sparse_gaze_vehicle``, ``sparse_gaze``) and point: window G-mean per driver over the normal
drive with each task drive, and false alarms per attentive hour, pooled over the folds.

Run: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/studies/car_operating_point.py``.
"""

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from distractd.daemon import DEFAULTS, decision_options
from distractd.models import load_model, save_model
from distractd.models.detectors import DecisionRule, g_mean, train_cohort
from distractd.models.evaluation import driver_halves, false_alarms_per_hour
from distractd.pipeline import FEATURE_NAMES, PipelineConfig, extract_features
from distractd.pipeline.formats import read_taamneh

ROOT = Path(__file__).resolve().parents[2]
TAAMNEH = ROOT.parent / "shared" / "data" / "taamneh"
POINTS = (1.0, 0.5, 0.0, -0.5)
TASKS = {"texting": "texting", "questions": "cognitive"}


def main():
    files = sorted(TAAMNEH.glob("T*.csv"))
    development = sorted(driver_halves(path.stem for path in files)[0])
    config = PipelineConfig.from_dict(json.loads((ROOT / "config" /
                                                  "shipped-pipeline.json").read_text()))
    folds = [development[k::3] for k in range(3)]
    rows = {}   # (sub-model, point, task) -> per-driver (g-mean, alarms, hours)
    for test in folds:
        train = [TAAMNEH / f"{d}.csv" for d in development if d not in test]
        estimator, parts = train_cohort(train, "sselm", config=config, seed=0,
                                        protocols=("normal", "texting", "cognitive"),
                                        operating_point=1.0, vehicle=True, segment_frames=0)
        subs = _submodels(estimator, parts)
        model_config = PipelineConfig.from_dict(parts["pipeline_config"])
        decision = decision_options(DEFAULTS, parts["feature_names"])
        for driver in test:
            drives = {r.meta["protocol"]: r for r in read_taamneh(TAAMNEH / f"{driver}.csv",
                                                                  drives=(4, 5, 7))}
            windows = {p: extract_features(r, model_config) for p, r in drives.items()}
            for name, sub in subs.items():
                scores = {p: sub.window_scores(w.X, FEATURE_NAMES, sub) for p, w in windows.items()}
                for point in POINTS:
                    states = {p: DecisionRule(**decision).update(w.t_end, scores[p] + point - 1.0,
                                                                 w.quality)
                              for p, w in windows.items()}
                    for task, protocol in TASKS.items():
                        if protocol not in windows or "normal" not in windows:
                            continue
                        y = np.concatenate([windows[p].label for p in ("normal", protocol)])
                        s = np.concatenate([states[p] for p in ("normal", protocol)])
                        known = (y >= 0) & (s >= 0)
                        w = windows["normal"]
                        hours = float((w.label == 0).sum()) * 0.5 / 3600.0
                        alarms = false_alarms_per_hour(w.t_end, w.label, states["normal"],
                                                       config.window_s / 2) * hours
                        rows.setdefault((name, point, task), []).append(
                            (g_mean(y[known], s[known]), alarms, hours))
    for (name, point, task), values in sorted(rows.items()):
        g = np.array([v[0] for v in values], dtype=float)
        print(json.dumps({"study": "car_operating_point", "data": "development half, 3 folds",
                          "submodel": name, "operating_point": point, "task": task,
                          "g_mean_mean": round(float(np.nanmean(g)), 4),
                          "false_alarms_per_hour": round(sum(v[1] for v in values)
                                                         / sum(v[2] for v in values), 1)}),
              flush=True)
    return 0


def _submodels(estimator, parts):
    """The fold model's sub-models as scoring Detectors (saved and loaded, as shipped)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fold.npz"
        save_model(path, estimator, **parts)
        detector = load_model(path)
    return {("sparse_gaze" if d.name == "main" else d.name): d for d in detector.submodels
            if d.name in ("sparse_gaze_vehicle", "main")}


if __name__ == "__main__":
    sys.exit(main())
