"""The real-data benchmark: every quality figure of the product on recordings nobody here made,
each beside the naive floor measured in the same run.

Sections (``--sections``, all by default), each printing one JSON line per result as soon as it is
measured and appending it to ``--out``/results.jsonl, then a Markdown table:

- ``taamneh`` — (a) the real texting drives (Taamneh et al. 2017, doi:10.1038/sdata.2017.110:
  the normal drive and the texting drive of each subject, 1 Hz faceLAB gaze only), scheme
  ``new-driver`` (leave one driver out, at most 12 folds grouped by driver), every model kind and
  the naive floor in both variants, with window G-mean, false alarms per attentive hour through
  the decision rule, the fraction of windows decided, and paired t-tests over drivers of each
  model against the offline naive floor. Design choices were made on the **development half**
  (drivers at odd positions of the sorted list: T003, T007, ...); every figure is printed for the
  **held-out half**, the development half and all drivers (``--subset`` reads development-half
  drivers only: its held-out figures are empty).
- ``shipped`` — (b) the shipped model as deployed, through the ``predict`` path with no
  retraining, on the same drives: decided fraction of the windows that hold gaze, G-mean, false
  alarms per attentive hour.
- ``events`` — (c) eye events against human coders: IRF (1 coder) and HFC (12 coders; Hooge et
  al. 2018, doi:10.3758/s13428-017-0955-x, CC BY-NC-SA 4.0) resampled to 30, 60 and 120 Hz; event
  F1 with one-to-one overlap matching, Cohen's kappa and RTO/RTD, beside the naive I-VT and the
  coders' own pairwise agreement.
- ``vehicle`` — the car's signals beside the eyes (issue 33; :mod:`real_vehicle`): texting and
  the cognitive question drive against the normal drive on the same stretch of road, and
  against the task drive's own task-free windows (``--subset``: texting, same road), scheme
  ``new-driver``, signal sets eyes / vehicle / both, each model beside the naive floor with the
  same signals, paired over drivers; held-out half, development half and all; then the same
  signal sets trained only on simulated drives (the simulator's car) and scored on the real
  texting drives.
- ``sim-to-real`` — a model trained only on simulated drives of the Taamneh-like protocol, scored
  on the real drives, beside the naive floor trained the same way.

``--subset`` runs a small part of every section (the first 7 development-half drivers with gaze
while texting, :func:`subset_files`; two recordings per coded set) in about half a minute once
numba's cache is built: the suite runs it (``tests/test_real_benchmark.py``). The whole benchmark
takes about 20 minutes on 2 shared cores:
``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/real.py --out real-results``.
"""

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from distractd.daemon import DEFAULTS, decision_options
from distractd.models import save_model
from distractd.models.detectors import (
    DEFAULT_MODEL_PATH, NAIVE_MODELS, loss_evidence, model_specs, naive_feature_names,
    train_cohort,
)
from distractd.models.evaluation import (
    NAIVE_FLOOR, driver_halves, evaluate_models, half_figures, model_drives, per_driver_means,
    score_shipped, versus_floor,
)
from distractd._parallel import recording_windows
from distractd.pipeline import FIELD_INDEX, VEHICLE_FIELDS, PipelineConfig, Recording
from distractd.pipeline.formats import read_taamneh
from real_events import run_events
from real_vehicle import run_vehicle, run_vehicle_sim_to_real
from sim_to_real import run_sim_to_real

ROOT = Path(__file__).resolve().parents[1]
TAAMNEH = ROOT.parent / "shared" / "data" / "taamneh"
SECTIONS = ("taamneh", "shipped", "events", "vehicle", "sim-to-real")
MODELS = ("svm", "elm", "sselm")
SHIPPED_PIPELINE = ROOT / "config" / "shipped-pipeline.json"
REAL_PROTOCOLS = ("normal", "texting", "cognitive")
"""The drives ``make real-model`` trains on."""
SUBSET_DRIVERS = 7
"""``--subset``: the first 7 development-half drivers in name order with gaze while texting
(:func:`subset_files`): T011, T019, T034, T039, T043, T062, T073 of ``../shared/data/taamneh``."""


def subject_files(data):
    """The Taamneh et al. subject files (``T*.csv``) of ``data``, in name order."""
    files = sorted(Path(data).glob("T*.csv"))
    if not files:
        raise SystemExit(f"--data {data}: no Taamneh et al. subject files (T*.csv)")
    return files


def subset_files(files, development):
    """``--subset``'s files: the first :data:`SUBSET_DRIVERS` of ``files`` whose driver is in the
    ``development`` half and has gaze while texting (a sample of the texting drive labelled
    texting with a gaze angle): held-out drivers are never test fixtures, and the first
    development drivers have no gaze on the texting drive, which the sections score."""
    return [path for path in files if path.stem in development
            and _gaze_while_texting(path)][:SUBSET_DRIVERS]


def _gaze_while_texting(path):
    """Whether the texting drive (7) of subject file ``path`` has a gaze angle while texting."""
    gaze = FIELD_INDEX["gaze_l_yaw"]
    return any(np.isfinite(r.samples[r.labels == 1, gaze]).any()
               for r in read_taamneh(path, drives=(7,)))


def run_taamneh(emit, files, halves, models=MODELS, seed=0):
    """(a) Every model and both naive variants on the real drives, scheme new-driver, the
    product's own representation (``PipelineConfig()`` defaults); figures per half of
    ``halves`` (``(development, held_out)`` driver ids)."""
    recordings = [r for path in files for r in read_taamneh(path, drives=(4, 7))]
    specs = model_specs(list(models) + list(NAIVE_MODELS), "small")
    start = time.perf_counter()
    drives, names, own = model_drives(recordings, specs, PipelineConfig())
    results = evaluate_models(drives, own, "new-driver", specs,
                              decision={"loss_evidence": loss_evidence(names)}, seed=seed)
    development, held_out = halves
    g_means = {}
    for model, per in results.items():
        g_means[model] = per_driver_means(per, "g_mean")
        emit({"bench": "taamneh", "scheme": "new-driver", "model": model,
              "features": own[model][1] if model in own else names,
              **{metric: half_figures(per_driver_means(per, metric), development, held_out)
                 for metric in ("g_mean", "false_alarms_per_hour", "coverage")},
              "per_driver": {d: round(v, 3) for d, v in sorted(g_means[model].items())
                             if math.isfinite(v)},
              "seconds": round(time.perf_counter() - start, 1)})
    emit({"bench": "taamneh_vs_naive", "scheme": "new-driver", "floor": NAIVE_FLOOR,
          "tests": versus_floor(g_means, NAIVE_FLOOR, development, held_out)})


def shipped_summary(rows):
    """Decided fraction of the windows that hold gaze (pooled), driver mean and median G-mean,
    false alarms per attentive hour (pooled), for the model and the naive loss rule."""
    seen = [r for r in rows if r["gaze_windows"]]
    gaze = sum(r["gaze_windows"] for r in seen)
    hours = sum(r["attentive_hours"] for r in seen)
    g = np.array([r["g_mean"] for r in seen], dtype=float)
    naive = np.array([r["naive_g_mean"] for r in seen], dtype=float)
    both = np.isfinite(g) & np.isfinite(naive)
    return {
        "drivers_with_gaze": len(seen), "drivers_with_both_classes": int(both.sum()),
        "decided_fraction": sum(r["decided_fraction"] * r["gaze_windows"] for r in seen) / gaze,
        "decided_fraction_min": min(r["decided_fraction"] for r in seen),
        "g_mean_mean": float(g[both].mean()), "g_mean_median": float(np.median(g[both])),
        "naive_g_mean_mean": float(naive[both].mean()),
        "naive_g_mean_median": float(np.median(naive[both])),
        "false_alarms_per_hour": sum(r["false_alarms_per_hour"] * r["attentive_hours"]
                                     for r in seen) / hours,
        "naive_false_alarms_per_hour": sum(r["naive_false_alarms_per_hour"]
                                           * r["attentive_hours"] for r in seen) / hours,
    }


SHIPPED_TASKS = {"texting": ("normal", "texting"), "cognitive": ("normal", "cognitive")}
"""The shipped model's tasks on the real drives: each task drive with the normal drive."""
SHIPPED_SIGNALS = ("gaze+car", "gaze")
"""What the stream gives: 1 Hz gaze and the car (the ``sparse_gaze_vehicle`` sub-model), or the
gaze alone (the car's fields blanked: ``sparse_gaze``)."""


def run_shipped(emit, files, halves, model=DEFAULT_MODEL_PATH, deployment=True):
    """(b) Saved models as deployed, through the predict path with the daemon's rule:

    - ``deployment`` (unless ``deployment=False``): the shipped artifact on the **held-out half**,
      per task and per signal set; its real-drive sub-models were trained on the development
      half (``make real-model``), so these drivers are new to it (scheme new-driver); beside it
      ``floor``: the deployable naive recipe with the same signals (``naive``, the running
      baseline, the naive features of those signals), trained by the same public command on the
      development half and scored the same way;
    - ``shipped``: the shipped artifact on every driver of ``files``, texting (in-sample for the
      development half).
    """
    decision = decision_options(DEFAULTS)
    if deployment:
        development = [path for path in files if path.stem in halves[0]]
        held_out = [path for path in files if path.stem in halves[1]]
        with tempfile.TemporaryDirectory() as folder:
            for signals in SHIPPED_SIGNALS:
                floor = _naive_floor(development, signals, Path(folder) / f"naive-{signals}.npz")
                for task, protocols in SHIPPED_TASKS.items():
                    drives = [_with_signals(recording, signals) for path in held_out
                              for recording in read_taamneh(path)
                              if recording.meta["protocol"] in protocols]
                    for figure, path in (("deployment", model), ("floor", floor)):
                        rows = score_shipped(drives, path, decision, protocols=None)
                        emit({"bench": "shipped", "figure": figure, "task": task,
                              "signals": signals, "data": "held-out half",
                              "scheme": "new-driver (trained on the development half)",
                              "model": Path(path).name, **shipped_summary(rows),
                              "per_driver": rows})
    rows = score_shipped(files, model, decision)
    emit({"bench": "shipped", "figure": "shipped", "task": "texting", "signals": "gaze+car",
          "data": "all", "scheme": "as shipped (in-sample for the development half)",
          "model": Path(model).name, **shipped_summary(rows), "per_driver": rows})


def _naive_floor(development, signals, out):
    """The deployable naive recipe with ``signals``, trained as ``make real-model`` trains (the
    same cohort recipe, in process: the command line offers no naive kind) on the
    ``development`` files, with the naive features of those signals that have data in half the
    windows."""
    config = PipelineConfig.from_dict({**json.loads(SHIPPED_PIPELINE.read_text()),
                                       "baseline": True})
    windows = [item.windows for item in recording_windows(
        [_with_signals(r, signals) for path in development for r in read_taamneh(path)
         if r.meta["protocol"] in REAL_PROTOCOLS], config, None)]
    names = naive_feature_names(windows, vehicle=signals == "gaze+car")
    estimator, parts = train_cohort(development, "naive", features=names, config=config, seed=0,
                                    protocols=REAL_PROTOCOLS, operating_point=1.0,
                                    segment_frames=0)
    save_model(out, estimator, **parts)
    return out


def _with_signals(recording, signals):
    """``recording`` with the car's fields blanked for ``signals="gaze"``."""
    if signals == "gaze+car":
        return recording
    samples = recording.samples.copy()
    samples[:, [FIELD_INDEX[name] for name in VEHICLE_FIELDS]] = np.nan
    return Recording(samples, recording.labels, recording.meta)


def markdown(records):
    """The headline tables of the run's records."""
    def cell(value, digits=3):
        return "—" if value is None or (isinstance(value, float) and not math.isfinite(value)) \
            else f"{value:.{digits}f}"

    lines = []
    taamneh = [r for r in records if r.get("bench") == "taamneh"]
    if taamneh:
        tests = next((r["tests"] for r in records if r.get("bench") == "taamneh_vs_naive"), {})
        lines += ["", "(a) Taamneh et al. 2017 texting vs normal drives, new-driver "
                      "(window G-mean mean over drivers; floor = naive-offline, same run)", "",
                  "| model | G-mean held-out | development | all | false alarms/h held-out | "
                  "decided held-out | vs floor held-out (diff, wins/losses, p) |",
                  "|---|---|---|---|---|---|---|"]
        for r in taamneh:
            g, test = r["g_mean"], tests.get(r["model"], {}).get("held_out")
            if test:
                versus = (f"{test['mean_difference']:+.3f}, {test['wins']}/{test['losses']}, "
                          f"p={test['p']:.2g}")
            else:                                   # the floor, or no held-out driver (--subset)
                versus = "floor" if r["model"] == NAIVE_FLOOR else "—"
            lines.append(f"| {r['model']} | {cell(g['held_out']['mean'])} (n={g['held_out']['n']}) | "
                         f"{cell(g['development']['mean'])} | {cell(g['all']['mean'])} | "
                         f"{cell(r['false_alarms_per_hour']['held_out']['mean'], 1)} | "
                         f"{cell(r['coverage']['held_out']['mean'])} | {versus} |")
    shipped = [r for r in records if r.get("bench") == "shipped"]
    if shipped:
        lines += ["", "(b) Saved models as deployed on the same drives (predict path, daemon's "
                      "rule; floor = the deployable naive recipe with the same signals, trained "
                      "the same way; naive = valid-gaze fraction below 0.5)", "",
                  "| figure | task | signals | data | scheme | decided (of gaze windows) | "
                  "G-mean mean / median | naive G-mean | false alarms/h | "
                  "naive false alarms/h |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in shipped:
            lines.append(f"| {r['figure']} | {r['task']} | {r['signals']} | {r['data']} | "
                         f"{r['scheme']} | {cell(r['decided_fraction'])} | "
                         f"{cell(r['g_mean_mean'])} / {cell(r['g_mean_median'])} | "
                         f"{cell(r['naive_g_mean_mean'])} | {cell(r['false_alarms_per_hour'], 1)} | "
                         f"{cell(r['naive_false_alarms_per_hour'], 1)} |")
    events = [r for r in records if r.get("benchmark") == "real_events"]
    if events:
        lines += ["", "(c) Eye events against human coders (event F1, mean over coders)", "",
                  "| set | rate (Hz) | event | F1 | kappa | plain I-VT F1 | Olsen I-VT F1 | "
                  "coders' pairwise F1 |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in events:
            lines.append(f"| {r['set']} | {r['rate_hz']:g} | {r['event']} | "
                         f"{cell(r['detector_f1'])} | {cell(r['detector_kappa'])} | "
                         f"{cell(r['naive_f1'])} | {cell(r['olsen_f1'])} | "
                         f"{cell(r.get('coders_f1'))} |")
    vehicle = [r for r in records if r.get("bench") == "vehicle"]
    if vehicle:
        lines += ["", "Eyes and the car: task vs the normal drive on the same stretch of road "
                      "(same-road) or vs the task drive's own task-free windows (same-drive), "
                      "new-driver (window G-mean, mean over drivers; floor = naive-offline with "
                      "the same signals)", "",
                  "| control | task | signals | model | G-mean held-out | development | all | "
                  "false alarms/h held-out | decided |", "|---|---|---|---|---|---|---|---|---|"]
        for r in vehicle:
            g = r["g_mean"]
            lines.append(f"| {r['control']} | {r['task']} | {r['signals']} | {r['model']} | "
                         f"{cell(g['held_out']['mean'])} (n={g['held_out']['n']}) | "
                         f"{cell(g['development']['mean'])} | {cell(g['all']['mean'])} | "
                         f"{cell(r['false_alarms_per_hour']['held_out']['mean'], 1)} | "
                         f"{cell(r['coverage']['all']['mean'])} |")
    vehicle_sim = [r for r in records if r.get("bench") == "vehicle_sim_to_real"]
    if vehicle_sim:
        lines += ["", "Sim-to-real with the car: trained on simulated drives only, scored on the "
                      "real texting drives (same stretch of road)", "",
                  "| signals | model | G-mean held-out | development | all | "
                  "false alarms/h held-out |", "|---|---|---|---|---|---|"]
        for r in vehicle_sim:
            g = r["g_mean"]
            lines.append(f"| {r['signals']} | {r['model']} | {cell(g['held_out']['mean'])} | "
                         f"{cell(g['development']['mean'])} | {cell(g['all']['mean'])} | "
                         f"{cell(r['false_alarms_per_hour']['held_out']['mean'], 1)} |")
    sim = [r for r in records if r.get("bench") == "sim_to_real"]
    if sim:
        lines += ["", "Sim-to-real: trained on simulated drives only, scored on the real drives",
                  "", "| model | G-mean held-out | all | false alarms/h held-out |",
                  "|---|---|---|---|"]
        for r in sim:
            lines.append(f"| {r['model']} | {cell(r['g_mean']['held_out']['mean'])} | "
                         f"{cell(r['g_mean']['all']['mean'])} | "
                         f"{cell(r['false_alarms_per_hour']['held_out']['mean'], 1)} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(TAAMNEH), help="Taamneh et al. subject files")
    parser.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument("--subset", action="store_true",
                        help="a small part of every section (about half a minute)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="real-results", help="folder of results.jsonl")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    records = []

    def emit(record):
        line = json.dumps({"subset": args.subset, **record})
        print(line, flush=True)
        with open(out / "results.jsonl", "a") as file:
            file.write(line + "\n")
        records.append(record)

    files = subject_files(args.data)
    halves = driver_halves(path.stem for path in files)
    if args.subset:
        files = subset_files(files, halves[0])
    if "taamneh" in args.sections:
        run_taamneh(emit, files, halves, seed=args.seed)
    if "shipped" in args.sections:
        run_shipped(emit, files, halves, deployment=not args.subset)
    if "events" in args.sections:
        run_events(emit, subset=args.subset, **({"rates": (60,)} if args.subset else {}))
    if "vehicle" in args.sections:
        run_vehicle(emit, files, halves, seed=args.seed,
                    **({"tasks": ("texting",), "controls": ("same-road",)} if args.subset else {}))
        run_vehicle_sim_to_real(emit, files, halves, **({"n_drivers": 4} if args.subset else {}))
    if "sim-to-real" in args.sections:
        run_sim_to_real(emit, data=args.data, subjects=[path.stem for path in files],
                        **({"n_drivers": 4} if args.subset else {}))
    print(markdown(records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
