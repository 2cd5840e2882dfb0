"""Real texting drives (Taamneh et al. 2017): detection on drivers never seen, 1 Hz gaze only.

The normal drive (no task) and the texting drive of every subject file in ``--data`` (36 drivers
in ``../shared/data/taamneh``), scheme ``new-driver`` with the cohort recipe (leave one driver out,
drivers grouped into 12 folds; SS-ELM also gets the held-out driver's windows unlabelled: the
adaptation), small grids, one hidden layer per fit. Window figures count every window of known
truth (an undecided window is no alarm) and come with the fraction decided.

Design choices were made on the **development half** — the drivers at odd positions of the sorted
driver list (T003, T007, ...) — and the figures are printed for the other half (**held out**),
for the development half and for all drivers. Representations:

- ``product``: what ``distractd evaluate`` and ``train --cohort`` do now — the running per-stream
  baseline, the features that stay defined when the tracker loses the eyes
  (``usable_features``), and low-quality windows judged by a model that scores track loss
  (``DecisionRule(loss_evidence=True)``);
- ``before``: the previous behaviour — the 13 features with data in half of the windows (gaze
  means and SDs included) and no decision below ``min_quality`` 0.5;
- ``product-drive``: the product's features with each drive z-scored offline (an upper bound);
- ``product-raw``: the product's features without any per-stream normalisation (the glance
  features are already relative to the driver's learned road centre, or fractions);
- ``product-driver``: the product's features with each driver's drives z-scored together offline
  (the naive floor's standardisation: is the floor's gain its standardisation?).

Every representation's run also evaluates the naive floor in its two variants (``naive``: the
running per-stream baseline; ``naive-offline``: per-driver z-scores over all of a driver's drives;
:mod:`distractd.models.detectors._naive`) on the same windows, with paired tests of each model
against ``naive-offline`` over drivers (two-sided, wins and losses) per half. Then the **literal**
recipe of issue 22, which the product form must match: per 10 s window at 1 s hop over the 1 Hz
samples, the valid-gaze fraction and the mean and SD of gaze x and y in pixels, z-scored per
driver, missing values 0, a balanced RBF SVM (C = 1, ``gamma="scale"``) trained on all other
drivers (leave one driver out; training windows one per 5 s), scored on every window of pure
truth of the normal and texting drives (no decision rule).

Prints one JSON line per (representation, model) and per naive run as soon as it is measured and
appends it to ``--out``/results.jsonl. Run (about 10 min on 2 shared cores):
``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/studies/taamneh.py``.
"""

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np

from distractd.models.detectors import (
    NAIVE_MODELS, binary_scores, fit_cohort, loss_evidence, model_specs, thin_windows,
)
from distractd.models.evaluation import (
    NAIVE_FLOOR, Drive, driver_halves, evaluate_models, half_figures, model_drives,
    normalise_drives, per_driver_means, summarise_scheme, versus_floor,
)
from distractd.pipeline import PipelineConfig
from distractd.pipeline.formats import DEG_PER_PX, FIELD_INDEX, read_taamneh

BEFORE_FEATURES = [f"{kind}_gaze_{eye}_{axis}" for kind in ("mean", "sd") for eye in ("r", "l")
                   for axis in ("yaw", "pitch")] + [
    "glance_prc", "glance_off_road_fraction", "glance_longest_away_s", "glance_rate_per_min",
    "glance_track_loss_fraction"]
"""The 13 features the evaluation chose before (data in half of the windows)."""

REPRESENTATIONS = {
    "product": ("running", None, None),
    "before": ("running", BEFORE_FEATURES, {"loss_evidence": False}),
    "product-drive": ("drive", None, None),
    "product-raw": ("none", None, None),
    "product-driver": ("driver", None, None),
}


def literal_drives(recordings):
    """The issue's literal naive windows: per 1 s hop the 10 samples ending there, as
    :class:`~distractd.models.evaluation.Drive` rows of [valid fraction, mean x, mean y, sd x,
    sd y] (pixels via the reader's linear scale), truth 1 or 0 when every second agrees."""
    drives = []
    for rec in recordings:
        s = rec.samples
        valid = s[:, FIELD_INDEX["confidence"]] > 0.5
        x = np.degrees(s[:, FIELD_INDEX["gaze_r_yaw"]]) / DEG_PER_PX
        y = np.degrees(s[:, FIELD_INDEX["gaze_r_pitch"]]) / DEG_PER_PX
        ends = np.arange(10, len(s) + 1)
        rows = np.full((len(ends), 5), np.nan)
        label = np.full(len(ends), -1, dtype=np.int8)
        for i, end in enumerate(ends):
            window = slice(end - 10, end)
            with warnings.catch_warnings():  # a window without valid gaze: NaN, imputed 0
                warnings.simplefilter("ignore", RuntimeWarning)
                rows[i] = [valid[window].mean(), np.nanmean(x[window]), np.nanmean(y[window]),
                           np.nanstd(x[window], ddof=1), np.nanstd(y[window], ddof=1)]
            labels = rec.labels[window]
            if (labels == labels[0]).all() and labels[0] >= 0:
                label[i] = labels[0]
        drives.append(Drive(rec.meta["driver_id"], rec.meta["recording_id"],
                            rec.meta["protocol"], s[ends - 1, FIELD_INDEX["t"]], label,
                            valid[ends - 1].astype(float), rows))
    return drives


def literal_naive(recordings, seed):
    """Per driver with gaze and both classes, the window G-mean of the literal recipe (module
    docstring), leave one driver out: over both drives pooled, and over the texting drive alone
    (the product's per-driver G-mean: a drive of one class has none)."""
    (spec,) = model_specs(["naive-offline"])
    raw = literal_drives(recordings)
    with_gaze = {d.driver_id for d in raw if (d.X[:, 0] > 0).any()}
    drives = [Drive(d.driver_id, d.recording_id, d.protocol, d.t_end, d.label, d.quality,
                    spec.representation.impute(d.X), d.alerts)
              for d in normalise_drives(raw, "driver")]
    pooled, texting = {}, {}
    for driver in sorted(with_gaze):
        test = [d for d in drives if d.driver_id == driver]
        if len(np.unique(np.concatenate([d.label for d in test]))) < 3:  # -1, 0 and 1
            continue
        train = [d for d in drives if d.driver_id != driver]
        kept = [thin_windows(d.t_end, 5.0) for d in train]
        X = np.vstack([d.X[k] for d, k in zip(train, kept)])
        y = np.concatenate([d.label[k] for d, k in zip(train, kept)])
        groups = np.concatenate([np.full(k.sum(), d.driver_id) for d, k in zip(train, kept)])
        fit = fit_cohort(spec, X, y, groups, n_train=int((y >= 0).sum()), seed=seed)
        alarms = [(fit.decision_function(d.X) > 0).astype(np.int8) for d in test]
        truth = [d.label for d in test]
        known = np.concatenate(truth) >= 0
        pooled[driver] = binary_scores(np.concatenate(truth)[known],
                                       np.concatenate(alarms)[known])["g_mean"]
        for d, alarm in zip(test, alarms):
            if d.protocol == "texting" and len(np.unique(d.label[d.label >= 0])) == 2:
                texting[driver] = binary_scores(d.label[d.label >= 0],
                                                alarm[d.label >= 0])["g_mean"]
    return pooled, texting


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data/taamneh")
    parser.add_argument("--models", nargs="+", default=["svm", "elm", "sselm"])
    parser.add_argument("--representations", nargs="*", default=list(REPRESENTATIONS),
                        choices=list(REPRESENTATIONS), help="none: the naive reference only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="taamneh-results")
    args = parser.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    files = sorted(Path(args.data).glob("T*.csv"))
    recordings = [r for path in files for r in read_taamneh(path, drives=(4, 7))]
    dev, held = driver_halves({r.meta["driver_id"] for r in recordings})

    def emit(line):
        print(json.dumps(line), flush=True)
        with open(out / "results.jsonl", "a") as file:
            file.write(json.dumps(line) + "\n")

    specs = model_specs(list(args.models) + list(NAIVE_MODELS), "small")
    for name in args.representations:
        normalisation, features, decision = REPRESENTATIONS[name]
        start = time.perf_counter()
        drives, names, own = model_drives(recordings, specs, PipelineConfig(), normalisation,
                                          features)
        decision = {"loss_evidence": loss_evidence(names), **(decision or {})}
        results = evaluate_models(drives, own, "new-driver", specs, decision=decision,
                                  seed=args.seed)
        summary = summarise_scheme(results)
        seconds = round(time.perf_counter() - start, 1)
        g_by_model = {}
        for model, per in results.items():
            g_means = g_by_model[model] = per_driver_means(per, "g_mean")
            emit({"bench": "taamneh", "representation": name, "scheme": "new-driver",
                  "model": model, "features": own[model][1] if model in own else names,
                  "decision": decision, "g_mean": half_figures(g_means, dev, held),
                  "coverage": half_figures(per_driver_means(per, "coverage"), dev, held),
                  "false_alarms_per_hour": half_figures(
                      per_driver_means(per, "false_alarms_per_hour"), dev, held),
                  "sensitivity": summary[model]["sensitivity"],
                  "specificity": summary[model]["specificity"],
                  "per_driver": {d: round(v, 3) for d, v in sorted(g_means.items())
                                 if np.isfinite(v)},
                  "seconds": seconds})
        emit({"bench": "taamneh_vs_naive", "representation": name, "scheme": "new-driver",
              "floor": NAIVE_FLOOR, "tests": versus_floor(g_by_model, NAIVE_FLOOR, dev, held)})
    start = time.perf_counter()
    pooled, texting = literal_naive(recordings, args.seed)
    emit({"bench": "taamneh_naive_literal", "scheme": "new-driver (leave one driver out; "
                                                      "issue 22's literal recipe)",
          "g_mean_pooled": half_figures(pooled, dev, held),
          "g_mean_texting_drive": half_figures(texting, dev, held),
          "per_driver_pooled": {d: round(v, 3) for d, v in sorted(pooled.items())},
          "per_driver_texting_drive": {d: round(v, 3) for d, v in sorted(texting.items())},
          "seconds": round(time.perf_counter() - start, 1)})

if __name__ == "__main__":
    main()
