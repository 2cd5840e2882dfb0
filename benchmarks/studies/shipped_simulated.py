"""A saved model as deployed on new simulated drivers, per protocol, beside the naive floor.

Each drive of ``--seeds`` (drivers no model saw: keep development and report seeds apart) goes
through :func:`~distractd.models.detectors.predict_recording` with the daemon's decision rule, as
``distractd predict`` and the daemon run it. Per protocol, over the drives:

- ``g_mean``: the published states of the decided windows against the window truth, per drive
  with both classes, mean over drives (and pooled);
- ``episodes_detected``: task sections in which the state turned distracted;
- ``false_alarms_per_h``: transitions into distracted in attentive time (5 s grace before an
  episode), per attentive hour, pooled (no-task drives included when given);
- ``decided``: windows with a state.

The floor of the same run: the naive recipe (``naive``, deployable: running baseline, balanced RBF
SVM, no search) trained on ``--train`` drives (the model's own training recipe's cohort) and
published through the same rule with its threshold at its decision boundary.

Run (the Makefile's training cohort is seed 2026; development seeds 101-106, report 201-212):
``.venv/bin/python benchmarks/studies/shipped_simulated.py --model distractd/data/default_model.npz
--seeds 201 202 203 204 205 206 207 208 209 210 211 212 --out shipped-simulated.jsonl``.
"""

import argparse
import json
import time

import numpy as np

from distractd.models.detectors import (
    DecisionRule, decide, decision_options, detection_delays, false_alarms_per_hour, g_mean,
    load_model, model_specs, predict_recording,
)
from distractd.models.detectors._cohort import fit_cohort, thin_windows
from distractd.models.detectors._naive import NaiveRepresentation
from distractd.pipeline import (
    FEATURE_NAMES, PipelineConfig, StreamProcessor, Windows, read_recordings,
)
from distractd.simulators import simulate_cohort, simulate_drive

GRACE_S = 5.0


def naive_floor(train, config):
    """The deployable naive recipe fitted on ``train``'s windows: (fit, columns)."""
    representation = NaiveRepresentation("running")
    windows = [_windows(r, config) for r in train]
    names = representation.feature_names(windows)
    columns = [FEATURE_NAMES.index(name) for name in names]
    kept = [thin_windows(w.t_end, 5.0) for w in windows]
    X = representation.impute(np.vstack([w.X[k][:, columns] for w, k in zip(windows, kept)]))
    y = np.concatenate([w.label[k] for w, k in zip(windows, kept)])
    groups = np.concatenate([np.full(k.sum(), str(r.meta["driver_id"]))
                             for r, k in zip(train, kept)])
    (spec,) = model_specs(["naive"], "small")
    return fit_cohort(spec, X, y, groups, seed=0), columns, representation


def _windows(recording, config):
    processor = StreamProcessor(config)
    return Windows.concat([processor.update(recording.samples, recording.labels),
                           processor.flush()])


def drive_figures(t, label, states):
    """(g_mean or NaN, detected episodes, episodes, false alarms, attentive hours)."""
    known = (label >= 0) & (states >= 0)
    both = len(np.unique(label[label >= 0])) == 2
    gm = g_mean(label[known], states[known]) if both and known.any() else np.nan
    delays = detection_delays(t, label, states)
    hours = float((label == 0).sum()) * float(np.median(np.diff(t))) / 3600.0
    alarms = false_alarms_per_hour(t, label, states, GRACE_S) * hours if hours else 0.0
    return gm, int(np.isfinite(delays).sum()), len(delays), alarms, hours


def summarise(rows):
    """Per-protocol figures of ``(g_mean, detected, episodes, alarms, hours, decided, n)``."""
    rows = np.array(rows, dtype=np.float64)
    gm = rows[:, 0]
    return {"g_mean": round(float(np.nanmean(gm)), 3) if np.isfinite(gm).any() else None,
            "g_mean_min": round(float(np.nanmin(gm)), 3) if np.isfinite(gm).any() else None,
            "episodes_detected": round(float(rows[:, 1].sum() / max(rows[:, 2].sum(), 1)), 3),
            "false_alarms_per_h": round(float(rows[:, 3].sum() / max(rows[:, 4].sum(), 1e-9)), 2),
            "decided": round(float(rows[:, 5].sum() / rows[:, 6].sum()), 3),
            "drives": int(len(rows))}


def drives_of(args, protocol):
    """The new drivers' drives of ``protocol``: read from ``--recordings``, else simulated."""
    if args.recordings:
        for recording in read_recordings(args.recordings):
            if recording.meta["protocol"] == protocol and recording.meta["drive"] in args.drives:
                yield recording
        return
    for seed in args.seeds:
        for drive in args.drives:
            yield simulate_drive(seed, drive=drive, protocol=protocol)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="distractd/data/default_model.npz")
    parser.add_argument("--seeds", nargs="+", type=int, default=[],
                        help="new drivers' seeds, simulated here")
    parser.add_argument("--recordings", help="or a folder of their drives (distractd simulate "
                                             "--seed S --drive D --protocol P), read instead")
    parser.add_argument("--drives", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--protocols", nargs="+", default=["cognitive", "visual-manual", "none"])
    parser.add_argument("--train-seed", type=int, default=2026,
                        help="cohort seed of the naive floor's training drives (the Makefile's)")
    parser.add_argument("--train-drivers", type=int, default=8)
    parser.add_argument("--train-dir", help="read the floor's training drives from this folder "
                                            "(the Makefile's build/default-model) instead")
    parser.add_argument("--out", default="shipped-simulated.jsonl")
    args = parser.parse_args()

    start = time.perf_counter()
    detector = load_model(args.model)
    config = PipelineConfig.from_dict(detector.pipeline_config)
    if args.train_dir:
        train = read_recordings(args.train_dir)
    else:
        train = [r for protocol in ("cognitive", "visual-manual", "none")
                 for r in simulate_cohort(args.train_drivers, args.train_seed, protocol=protocol)]
    floor, floor_columns, representation = naive_floor(train, config)
    rule = decision_options(None, detector.feature_names)
    floor_rule = {**decision_options(None, [FEATURE_NAMES[c] for c in floor_columns]),
                  "on": 0.0, "off": 0.0}
    for protocol in args.protocols:
        model_rows, floor_rows = [], []
        for recording in drives_of(args, protocol):
            prediction = predict_recording(detector, recording, DecisionRule(**rule))
            w = prediction.windows
            model_rows.append((*drive_figures(w.t_end, w.label, prediction.states),
                               int((prediction.states >= 0).sum()), len(w)))
            X = representation.impute(w.X[:, floor_columns])
            scores = np.full(len(w), np.nan)
            ok = np.isfinite(X).all(axis=1)
            scores[ok] = floor.decision_function(X[ok])
            states = decide(w.t_end, scores, w.quality, w.alert_list(), **floor_rule)
            floor_rows.append((*drive_figures(w.t_end, w.label, states),
                               int((states >= 0).sum()), len(w)))
        line = {"protocol": protocol, "model": detector.model_id,
                "seeds": args.seeds or args.recordings,
                "drives": args.drives, "scheme": "new-driver (as deployed)",
                "shipped": summarise(model_rows), "naive_floor": summarise(floor_rows),
                "seconds": round(time.perf_counter() - start, 1)}
        print(json.dumps(line), flush=True)
        with open(args.out, "a") as out:
            out.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
