"""The ``vehicle`` section of ``benchmarks/real.py``: the car's signals beside the eyes on the real
Taamneh et al. 2017 drives (doi:10.1038/sdata.2017.110), texting (drive 7) and the cognitive
question drive (drive 5), each against the normal drive (drive 4) on the same stretch of road.

**Control.** Every drive follows the same route, so a model could learn the road (a curve where
the task happens to start) instead of the driver. A window is labelled only where the road is
the same: a task window (label 1) against the normal drive's windows whose distance travelled
(``Distance``, m) falls in the stretches the driver covered while doing the task (label 0);
every other window is left unlabelled (-1: not scored, no false alarm counted). The second
control, ``same-drive``, labels the task drive alone (task windows against its own task-free
windows) and leaves the normal drive unlabelled: the drives' other differences (a task drive
steers more even outside the task) cannot be learned either.

**Ablation.** Three signal sets — ``eyes`` (the product's gaze features, chosen as the product
chooses them), ``vehicle`` (:data:`~distractd.pipeline.VEHICLE_FEATURES`), ``both`` — each with
the SVM in two forms, ``svm`` (the product's causal per-stream running baseline, deployable) and
``svm-offline`` (each driver's windows z-scored over both of the driver's drives, as the floor
has them: an offline reference, not deployable), and the naive floor with the same signals
(``naive-offline``: the track-loss fraction and the mean and SD of each gaze field,
:data:`~distractd.pipeline.NAIVE_VEHICLE_FEATURES` for the vehicle, per-driver z-scores), scheme
``new-driver``. A window's quality for a row that reads the vehicle is the larger of its gaze and
its vehicle data fractions: the car's signals are data when the eyes are lost. Missing values
in a window with any value are the centre (0), as the naive recipe does. Per driver the G-mean
pools the driver's two test drives (sensitivity on the task windows, specificity on the normal
drive's); false alarms per attentive hour are the normal drive's, through the decision rule.

**Sim-to-real.** The same signal sets, ``svm-offline`` and the floor trained only on simulated
texting-study drives (the simulator's car, ``simulate_texting_study``, the seed of
``benchmarks/sim_to_real.py``) and scored on the real texting drives with the same labels.
"""

import math
import time

import numpy as np

from distractd.models.detectors import (
    DecisionRule, NaiveRepresentation, chosen_features, fit_cohort, loss_evidence, model_specs,
    thin_windows,
)
from distractd.models.evaluation import (
    NAIVE_FLOOR, Drive, drive_record, drives_of, evaluate_scheme, featured_drives, half_figures,
    normalise_drives, versus_floor,
)
from distractd.pipeline import (
    FEATURE_NAMES, FIELD_INDEX, NAIVE_VEHICLE_FEATURES, VEHICLE_FEATURES, PipelineConfig,
    read_taamneh,
)
from distractd.simulators import simulate_texting_study
from sim_to_real import SEED as SIM_SEED

TASK_DRIVES = {"texting": 7, "questions": 5}
"""The task drives of the study compared with the normal drive (4)."""

SIGNALS = ("eyes", "vehicle", "both")
_CENTRED = NaiveRepresentation("driver")
"""Its ``impute``: a missing value in a window with any value is the centre (0)."""
NORMAL = ("normal", "normal-blocks")
"""Protocols of the drives without a task: the real study's and the simulator's."""
VEHICLE_MODELS = ("svm",)


def run_vehicle(emit, files, halves, tasks=tuple(TASK_DRIVES), models=VEHICLE_MODELS,
                controls=None, seed=0):
    """Every control × task × signal set × model (with the running baseline, and offline with
    per-driver z-scores as the floor has them) and the floor of the same signals; one record
    each, with figures per half of ``halves`` (``(development, held_out)`` driver ids);
    ``controls`` are names of :data:`CONTROLS` (None: all)."""
    config = PipelineConfig()
    for control, task in ((c, t) for c in controls or CONTROLS for t in tasks):
        start = time.perf_counter()
        recordings = [r for path in files
                      for r in read_taamneh(path, drives=(4, TASK_DRIVES[task]))]
        sets = signal_sets(recordings, config, control=control)
        development, held_out = halves
        for signals in SIGNALS:
            g_means = {}
            runs = [(model, model + ("" if form == "running" else "-offline"), form)
                    for model in models for form in ("running", "driver")]
            runs.append((NAIVE_FLOOR, NAIVE_FLOOR, "floor"))
            for model, name, form in runs:
                model_drives, model_names = sets[signals][form]
                (spec,) = model_specs([model], "small")
                decision = {"loss_evidence": signals == "eyes" and loss_evidence(model_names)}
                per = evaluate_scheme(model_drives, "new-driver", [spec], decision=decision,
                                      seed=seed, traces=True)[model]
                figures = driver_figures(per, model_drives, decision)
                g_means[name] = figures["g_mean"]
                emit({"bench": "vehicle", "control": control, "task": task,
                      "signals": signals, "scheme": f"new-driver, {control}", "model": name,
                      "normalisation": form if form != "floor" else "driver",
                      "features": list(model_names),
                      **{metric: half_figures(values, development, held_out)
                         for metric, values in figures.items()},
                      "per_driver": {d: round(v, 3) for d, v in sorted(g_means[name].items())
                                     if math.isfinite(v)},
                      "seconds": round(time.perf_counter() - start, 1)})
            emit({"bench": "vehicle_vs_naive", "control": control, "task": task,
                  "signals": signals, "floor": NAIVE_FLOOR,
                  "tests": versus_floor(g_means, NAIVE_FLOOR, development, held_out)})


def run_vehicle_sim_to_real(emit, files, halves, n_drivers=12, seed=SIM_SEED,
                            forms=("driver", "floor")):
    """Sim-to-real with the car: models trained only on simulated texting-study drives (the
    simulator's vehicle, ``simulate_texting_study``), scored on the real texting drives with the
    same-road labels, per signal set, figures per half of ``halves``; the floor trained the same
    way beside each."""
    config = PipelineConfig()
    simulated = simulate_texting_study(n_drivers, seed)
    train_sets = signal_sets(simulated, config)
    eye_names = train_sets["eyes"]["running"][1]
    floor_eye_names = train_sets["eyes"]["floor"][1]
    real = [r for path in files for r in read_taamneh(path, drives=(4, TASK_DRIVES["texting"]))]
    test_sets = signal_sets(real, config, eye_names, floor_eye_names)
    development, held_out = halves
    for signals in SIGNALS:
        g_means = {}
        for form in forms:
            model = "svm" if form == "driver" else NAIVE_FLOOR
            name = "svm-offline" if form == "driver" else NAIVE_FLOOR
            train, names = train_sets[signals][form]
            test, _ = test_sets[signals][form]
            (spec,) = model_specs([model], "small")
            decision = {"loss_evidence": signals == "eyes" and loss_evidence(names)}
            kept = [thin_windows(d.t_end, 5.0) & (d.label >= 0) for d in train]
            X = np.vstack([d.X[k] for d, k in zip(train, kept)])
            y = np.concatenate([d.label[k] for d, k in zip(train, kept)])
            groups = np.concatenate([np.full(k.sum(), d.driver_id) for d, k in zip(train, kept)])
            finite = np.isfinite(X).all(axis=1)
            fit = fit_cohort(spec, X[finite], y[finite], groups[finite], seed=seed)
            per = {}
            for drive in test:
                scores = np.full(len(drive.X), np.nan)
                ok = np.isfinite(drive.X).all(axis=1)
                if ok.any():
                    scores[ok] = fit.decision_function(drive.X[ok])
                per.setdefault(drive.driver_id, []).append(
                    drive_record(drive, scores, decision, config.window_s, True))
            figures = driver_figures(per, test, decision)
            g_means[name] = figures["g_mean"]
            emit({"bench": "vehicle_sim_to_real", "task": "texting", "signals": signals,
                  "model": name, "scheme": f"sim-to-real (trained on {n_drivers} simulated "
                                           f"drivers, seed {seed}), same stretch of road",
                  "features": list(names),
                  **{metric: half_figures(values, development, held_out)
                     for metric, values in figures.items()},
                  "per_driver": {d: round(v, 3) for d, v in sorted(g_means[name].items())
                                 if math.isfinite(v)}})


def driver_figures(per, drives, decision):
    """Per driver, over the driver's test drives pooled: window G-mean (sensitivity on the task
    windows, specificity on the attentive ones; an undecided window is no alarm), false alarms
    per attentive hour through the decision rule (of the drives with attentive windows), and the
    fraction of windows decided."""
    quality = {d.recording_id: d.quality for d in drives}
    rule = DecisionRule(**decision)
    out = {"g_mean": {}, "false_alarms_per_hour": {}, "coverage": {}}
    for driver, records in per.items():
        hits, misses, calm, alarms = 0, 0, 0, 0
        for record in records:
            trace = record["trace"]
            decided = rule.usable(trace["scores"], quality[record["recording_id"]])
            alarm = decided & (trace["scores"] > 0)
            label = trace["label"]
            hits += int(np.sum(alarm & (label == 1)))
            misses += int(np.sum(~alarm & (label == 1)))
            calm += int(np.sum(~alarm & (label == 0)))
            alarms += int(np.sum(alarm & (label == 0)))
        if hits + misses and calm + alarms:
            out["g_mean"][driver] = math.sqrt(hits / (hits + misses) * calm / (calm + alarms))
        normal = [r["false_alarms_per_hour"] for r in records
                  if (r["trace"]["label"] == 0).any()]
        finite = [value for value in normal if math.isfinite(value)]
        out["false_alarms_per_hour"][driver] = float(np.mean(finite)) if finite else math.nan
        out["coverage"][driver] = float(np.nanmean([r["coverage"] for r in records]))
    return out


def signal_sets(recordings, config, eye_names=None, floor_eye_names=None, control="same-road"):
    """Per signal set, per form (``running``: the per-stream baseline; ``driver``: per-driver
    z-scores; ``floor``: the naive floor's features, per-driver z-scores), ``(drives, names)``
    on the same windows with the labels of ``control`` (:data:`CONTROLS`); the eye features are
    chosen from the data unless given."""
    running = featured_drives(recordings, config, "running")
    offline = featured_drives(recordings, config, "driver")
    eye_names = eye_names or chosen_features([item.windows for item in running])
    floor_eye_names = floor_eye_names or NaiveRepresentation("driver").feature_names(
        [i.windows for i in offline])
    eyes = {"running": drives_of(running, eye_names),
            "driver": normalise_drives(drives_of(offline, eye_names), "driver"),
            "floor": normalise_drives(drives_of(offline, floor_eye_names), "driver")}
    columns = [FEATURE_NAMES.index(name) for name in VEHICLE_FEATURES]   # the vehicle channel's
    raw = [item.windows.X[:, columns] for item in offline]
    standardised = [item.windows.X[:, columns] for item in running]   # the running baseline's
    quality = [_vehicle_quality(recording, item.windows, config.window_s)
               for recording, item in zip(recordings, running)]
    labels = CONTROLS[control](recordings, running)
    floor_columns = [VEHICLE_FEATURES.index(name) for name in NAIVE_VEHICLE_FEATURES]
    base = eyes["running"]
    vehicle = {"running": standardised,
               "driver": [d.X for d in normalise_drives(
                   [_with(d, X=X) for d, X in zip(base, raw)], "driver")],
               "floor": [d.X for d in normalise_drives(
                   [_with(d, X=X[:, floor_columns]) for d, X in zip(base, raw)], "driver")]}
    names = {"eyes": {"running": eye_names, "driver": eye_names, "floor": floor_eye_names}}
    names["vehicle"] = {"running": VEHICLE_FEATURES, "driver": VEHICLE_FEATURES,
                        "floor": NAIVE_VEHICLE_FEATURES}
    names["both"] = {form: list(names["eyes"][form]) + list(names["vehicle"][form])
                     for form in names["eyes"]}
    sets = {}
    for signals in SIGNALS:
        sets[signals] = {}
        for form in ("running", "driver", "floor"):
            drives = []
            for i, eye in enumerate(eyes[form]):
                if signals == "eyes":
                    X, q = eye.X, eye.quality
                else:
                    q = np.maximum(eye.quality, quality[i])
                    X = vehicle[form][i]
                    X = _CENTRED.impute(np.hstack([eye.X, X]) if signals == "both" else X)
                if form == "floor":
                    X = _CENTRED.impute(X)
                drives.append(_with(eye, X=X, label=labels[i], quality=q))
            sets[signals][form] = (drives, list(names[signals][form]))
    return sets


def road_control(recordings, featured):
    """Window labels of the same-road control: 1 for a task window, 0 for a normal-drive window
    whose distance travelled lies in a stretch the driver covered on task, -1 otherwise."""
    stretches = {}
    positions = []
    for recording, item in zip(recordings, featured):
        w = item.windows
        start, end = _distance_at(recording, w.t_start), _distance_at(recording, w.t_end)
        positions.append((start, end))
        if recording.meta["protocol"] not in NORMAL:
            on_task = w.label == 1
            stretches[recording.meta["driver_id"]] = (start[on_task], end[on_task])
    labels = []
    for recording, item, (start, end) in zip(recordings, featured, positions):
        w = item.windows
        label = np.full(len(w.label), -1, dtype=np.int8)
        if recording.meta["protocol"] not in NORMAL:
            label[w.label == 1] = 1
        else:
            low, high = stretches.get(recording.meta["driver_id"], (np.empty(0), np.empty(0)))
            middle = 0.5 * (start + end)
            inside = ((middle[:, None] >= low[None, :]) & (middle[:, None] <= high[None, :]))
            label[inside.any(axis=1) & (w.label == 0)] = 0
        labels.append(label)
    return labels


def drive_control(recordings, featured):
    """Window labels of the within-drive control: the task drive's own labels (1 on task, 0 off
    task, -1 mixed), the normal drive unlabelled — no difference between drives to learn."""
    return [np.where(recording.meta["protocol"] in NORMAL, -1, item.windows.label).astype(np.int8)
            for recording, item in zip(recordings, featured)]


CONTROLS = {"same-road": road_control, "same-drive": drive_control}
"""The labelling controls: the normal drive on the task's stretches of road, or the task drive
against its own task-free windows."""


def _distance_at(recording, times):
    """Distance travelled at ``times`` (linear between the samples that have it), m."""
    t, distance = recording.t, recording.samples[:, FIELD_INDEX["distance"]]
    known = np.isfinite(distance)
    if not known.any():
        return np.full(len(times), np.nan)
    return np.interp(times, t[known], distance[known])


def _vehicle_quality(recording, windows, window_s):
    """Per window, samples with a steering and a speed value over the samples expected."""
    samples = recording.samples
    have = np.isfinite(samples[:, FIELD_INDEX["steering"]]) & \
        np.isfinite(samples[:, FIELD_INDEX["speed"]])
    counts = np.concatenate([[0], np.cumsum(have)])
    t = recording.t
    first = np.searchsorted(t, windows.t_start)
    stop = np.searchsorted(t, windows.t_end)
    period = float(np.median(np.diff(t))) if len(t) > 1 else 1.0
    return np.clip((counts[stop] - counts[first]) * period / window_s, 0.0, 1.0)


def _with(drive, **changes):
    """A copy of ``drive`` with some attributes replaced."""
    fields = {name: getattr(drive, name) for name in (
        "driver_id", "recording_id", "protocol", "t_end", "label", "quality", "X", "alerts")}
    return Drive(**{**fields, **changes})
