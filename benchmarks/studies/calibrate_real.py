"""Calibrate the Taamneh-like protocol against the real texting drives (Taamneh et al. 2017,
doi:10.1038/sdata.2017.110): what the 1 Hz gaze-only tracker delivered on and off task.

The real side is each subject's normal drive (drive 4, ``no-task``) and texting drive (drive 7,
``off-task``/``on-task`` seconds) in ``--data``, gaze in degrees by the reader's assumed scale
(``read_taamneh``); drives whose tracker recorded nothing (``MIN_TRACKED``) and texting drives
without a labelled texting second (T055) are left out. The
simulated side is ``--drivers`` drivers of ``simulate_texting_study`` (``normal-blocks`` drive 0,
``texting-blocks`` drive 1, ``sparse-gaze`` tracker at 1 Hz) of cohort ``--seed``. The statistics
(``distractd.simulators.tracking_statistics``): valid fraction, gaze SD yaw/pitch (quartiles over
drives), loss runs (pooled: mean, median, 90th percentile, share of 1-s runs, share of lost
seconds in runs of 5 s or more), on-task valid runs, lag-1 autocorrelation of off-task gaze.

The simulator's constants were chosen against the **development half** of the drivers (odd
positions of the sorted list: T003, T007, ...) with the development cohort seed 2201; the
**held-out half** is printed beside them and was not used while choosing. ``--export-check`` also
compares two ways of exporting the simulated 60 Hz gaze at 1 Hz: the frame at each second (what
the ``sparse-gaze`` tracker does) and a second that holds gaze when any of its frames does (an
average over the valid frames). Prints one JSON
line per group and appends it to ``--out``/results.jsonl, then a Markdown table. Run (about a
minute): ``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/studies/calibrate_real.py``.
"""

import argparse
import json
import warnings
from pathlib import Path

import numpy as np

from distractd.models.evaluation import driver_halves
from distractd.pipeline import Recording
from distractd.pipeline.formats import FIELD_INDEX, read_taamneh
from distractd.simulators import (
    CONDITIONS, simulate_texting_study, summarise_tracking, tracking_statistics,
)

ROWS = (("valid fraction", "valid"), ("gaze SD yaw (deg)", "sd_yaw_deg"),
        ("gaze SD pitch (deg)", "sd_pitch_deg"))


def real_groups(data):
    """The real drives 4 and 7 of every subject file in ``data``, split into the two halves."""
    files = sorted(Path(data).glob("T*.csv"))
    if not files:
        raise SystemExit(f"--data {data}: no T*.csv subject files")
    development, held_out = (sorted(half) for half in driver_halves(path.stem for path in files))
    recordings = {path.stem: [r for r in read_taamneh(path, drives=(4, 7))
                              if r.meta["drive"] == 4 or (r.labels == 1).any()]
                  for path in files}
    return {"real development": [r for d in development for r in recordings[d]],
            "real held-out": [r for d in held_out for r in recordings[d]]}


def export_check(n_drivers, seed):
    """Tracking summaries of one simulated cohort exported at 1 Hz two ways: ``point`` (the frame
    at each second) and ``mean of valid frames`` (a second holds gaze when any frame does)."""
    frames_per_s = 60
    exports = {"point": [], "mean of valid frames": []}
    for recording in simulate_texting_study(n_drivers, seed, rate_hz=float(frames_per_s)):
        n_s = len(recording.t) // frames_per_s
        frames = recording.samples[:n_s * frames_per_s]
        valid = (frames[:, FIELD_INDEX["confidence"]] > 0.5).reshape(n_s, frames_per_s)
        yaw = frames[:, FIELD_INDEX["gaze_r_yaw"]].reshape(n_s, frames_per_s)
        pitch = frames[:, FIELD_INDEX["gaze_r_pitch"]].reshape(n_s, frames_per_s)
        labels = recording.labels[:n_s * frames_per_s:frames_per_s]
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)   # a second without gaze: NaN
            means = (np.nanmean(np.where(valid, yaw, np.nan), axis=1),
                     np.nanmean(np.where(valid, pitch, np.nan), axis=1))
        for name, (yaw_s, pitch_s) in (("point", (yaw[:, 0], pitch[:, 0])),
                                       ("mean of valid frames", means)):
            block = np.full((n_s, recording.samples.shape[1]), np.nan)
            block[:, FIELD_INDEX["t"]] = np.arange(n_s)
            block[:, FIELD_INDEX["gaze_r_yaw"]] = yaw_s
            block[:, FIELD_INDEX["gaze_r_pitch"]] = pitch_s
            block[:, FIELD_INDEX["confidence"]] = np.isfinite(yaw_s)
            exports[name].append(tracking_statistics(Recording(block, labels, {})))
    return {name: summarise_tracking(items) for name, items in exports.items()}


def markdown(summaries):
    """One table: a row per statistic and condition, a column per group."""
    names = list(summaries)
    lines = ["| statistic | condition | " + " | ".join(names) + " |",
             "|---|---|" + "---|" * len(names)]

    def cell(summary, condition, key, part=None):
        value = summary.get(condition, {}).get(key)
        if value is None:
            return "–"
        if part is None:  # quartiles
            return f"{value[1]:.2f} ({value[0]:.2f}–{value[2]:.2f})"
        return f"{value[part]:g}"

    for condition in CONDITIONS:
        lines.append(f"| drives | {condition} | " + " | ".join(
            str(summaries[n].get(condition, {}).get("drives", 0)) for n in names) + " |")
        for label, key in ROWS:
            lines.append(f"| {label} | {condition} | " + " | ".join(
                cell(summaries[n], condition, key) for n in names) + " |")
        for label, part in (("loss run mean (s)", "mean"), ("loss run median (s)", "median"),
                            ("loss run p90 (s)", "p90"), ("loss runs of 1 s (share)", "share_1"),
                            ("lost s in runs >= 5 s (share)", "lost_in_runs_5")):
            lines.append(f"| {label} | {condition} | " + " | ".join(
                cell(summaries[n], condition, "loss_runs", part) for n in names) + " |")
    lines.append("| valid run median / p90 (s) | on-task | " + " | ".join(
        "–" if summaries[n].get("on-task", {}).get("valid_runs") is None else
        "{median:g} / {p90:g}".format(**summaries[n]["on-task"]["valid_runs"]) for n in names)
        + " |")
    lines.append("| lag-1 autocorrelation yaw / pitch | off task | " + " | ".join(
        " / ".join("–" if value is None else f"{value:.2f}" for value in summaries[n]["lag1"])
        for n in names) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data/taamneh")
    parser.add_argument("--drivers", type=int, default=18, help="simulated drivers per cohort")
    parser.add_argument("--seed", type=int, nargs="+", default=[2201],
                        help="simulated cohort seed(s), one column each")
    parser.add_argument("--export-check", action="store_true",
                        help="also the 1 Hz export two ways (point, mean of valid frames), "
                             "10 drivers of the first seed")
    parser.add_argument("--out", default="calibrate-real-results")
    args = parser.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    groups = real_groups(args.data)
    for seed in args.seed:
        groups[f"simulated (seed {seed})"] = simulate_texting_study(args.drivers, seed)
    summaries = {}

    def emit(line):
        print(json.dumps(line), flush=True)
        with open(out / "results.jsonl", "a") as file:
            file.write(json.dumps(line) + "\n")

    for name, recordings in groups.items():
        summaries[name] = summarise_tracking(tracking_statistics(r) for r in recordings)
        emit({"bench": "calibrate_real", "group": name, "recordings": len(recordings),
              **summaries[name]})
    if args.export_check:
        for name, summary in export_check(10, args.seed[0]).items():
            summaries[f"export: {name} (seed {args.seed[0]})"] = summary
            emit({"bench": "calibrate_real", "group": f"export: {name}", "seed": args.seed[0],
                  **summary})
    print(markdown(summaries))


if __name__ == "__main__":
    main()
