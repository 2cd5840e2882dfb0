"""Online transduction in the daemon on new simulated drivers: does refitting a stream's model on
its driver's unlabelled windows, as ``[adaptation]`` does while the stream runs, raise the
shipped model's G-mean per driver?

For each new driver (``--seeds``, simulated here; report seeds 201-206, never the development
seeds 101-106) and protocol, drive 0 then drive 1 are streamed window by window (``--chunk``
windows at a time, as the daemon's hops deliver them) through the daemon's own per-stream
adaptation (:class:`distractd.daemon.StreamAdaptation` with the ``[adaptation]`` defaults, or
``--set key=value``; ``distractd.daemon.Fit.run``, the refit the daemon's fit worker runs,
with its held-back check: a refused fit is not swapped in). Each window is scored by the stream's
scorer at that moment and published through the daemon's decision rule; per drive:

- ``plain``: the shipped model, no refit (the daemon with ``[adaptation]`` off);
- ``online``: refits within the drive (a new driver, no profile);
- ``carried`` (drive 1 only): the stream starts with drive 0's adapted model and kept windows,
  as a driver profile carries them (``[profiles]``);
- ``naive_floor``: the deployable naive recipe trained on the Makefile's training cohort
  (:func:`shipped_simulated.naive_floor`), same windows, same rule.

Window G-mean of the published states against the simulator's truth (decided windows with a
label), per drive; one JSON line per driver and protocol appended to ``--out`` as it goes, then
one summary line per protocol (mean per variant, drivers lower / higher than plain by > 0.02,
fits done / refused).

Run: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/studies/transduction_new_drivers.py
--seeds 201 202 203 204 205 206 --out transduction.jsonl``.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from distractd.daemon import StreamAdaptation, load_config
from distractd.models.detectors import decide, decision_options, g_mean, load_model
from distractd.pipeline import FEATURE_NAMES, PipelineConfig
from distractd.simulators import simulate_cohort, simulate_drive

sys.path.insert(0, str(Path(__file__).parent))
from shipped_simulated import _windows, naive_floor  # noqa: E402  (a sibling study script)


def streamed(detector, columns, windows, options, chunk, carried=None):
    """Scores of a drive's windows as the daemon's adapted stream publishes them; the stream's
    adaptation afterwards (to carry to the next drive) and its fits' outcomes."""
    adaptation = StreamAdaptation(len(columns), options, collect=True)
    if carried is not None:   # a profile: the previous drive's rows and adapted model
        capacity = len(adaptation.rows)
        n = min(carried.n_rows, capacity)
        order = (carried.n_rows - n + np.arange(n)) % len(carried.rows)
        adaptation.rows[:n] = carried.rows[order]
        adaptation.n_rows = n
        adaptation.detector = carried.detector
    scores = np.full(len(windows), np.nan)
    outcomes = []
    for lo in range(0, len(windows), chunk):
        part = slice(lo, lo + chunk)
        scorer = adaptation.detector or detector
        scores[part] = scorer.window_scores(windows.X[part], FEATURE_NAMES)
        if adaptation.add(windows.X[part][:, columns], windows.t_end[part]):
            fit = adaptation.fit("driver", detector)
            adaptation.submitted()
            fit.run()
            adaptation.pending = False
            if fit.error is not None:
                outcomes.append("failed")
            elif fit.check["worse"]:
                outcomes.append("refused")
            else:
                outcomes.append("done")
                adaptation.detector = fit.result
    return scores, adaptation, outcomes


def drive_g_mean(windows, scores, rule):
    states = decide(windows.t_end, scores, windows.quality, windows.alert_list(), **rule)
    known = (windows.label >= 0) & (states >= 0)
    if len(np.unique(windows.label[known])) < 2:
        return None
    return round(float(g_mean(windows.label[known], states[known])), 4)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="distractd/data/default_model.npz")
    parser.add_argument("--seeds", nargs="+", type=int, required=True)
    parser.add_argument("--protocols", nargs="+", default=["cognitive", "visual-manual"])
    parser.add_argument("--chunk", type=int, default=2, help="windows per hop batch")
    parser.add_argument("--set", nargs="*", default=[], help="adaptation.KEY=VALUE overrides")
    parser.add_argument("--train-seed", type=int, default=2026)
    parser.add_argument("--train-drivers", type=int, default=8)
    parser.add_argument("--out", default="transduction.jsonl")
    args = parser.parse_args()

    start = time.perf_counter()
    options = load_config(overrides=["adaptation.enabled=true", *args.set])["adaptation"]
    detector = load_model(args.model)
    config = PipelineConfig.from_dict(detector.pipeline_config)
    columns = detector.feature_columns(FEATURE_NAMES)
    train = [r for protocol in ("cognitive", "visual-manual", "none")
             for r in simulate_cohort(args.train_drivers, args.train_seed, protocol=protocol)]
    floor, floor_columns, representation = naive_floor(train, config)
    rule = decision_options(None, detector.feature_names)
    floor_rule = {**decision_options(None, [FEATURE_NAMES[c] for c in floor_columns]),
                  "on": 0.0, "off": 0.0}
    for protocol in args.protocols:
        rows = []
        for seed in args.seeds:
            line = {"protocol": protocol, "seed": seed, "model": detector.model_id}
            previous = None
            for drive in (0, 1):
                windows = _windows(simulate_drive(seed, drive=drive, protocol=protocol), config)
                plain = detector.window_scores(windows.X, FEATURE_NAMES)
                online, adaptation, outcomes = streamed(detector, columns, windows, options,
                                                        args.chunk)
                X = representation.impute(windows.X[:, floor_columns])
                floor_scores = np.full(len(windows), np.nan)
                ok = np.isfinite(X).all(axis=1)
                floor_scores[ok] = floor.decision_function(X[ok])
                figures = {"plain": drive_g_mean(windows, plain, rule),
                           "online": drive_g_mean(windows, online, rule),
                           "naive_floor": drive_g_mean(windows, floor_scores, floor_rule),
                           "fits": outcomes,
                           "online_max_score_change": round(float(np.nanmax(np.abs(
                               online - plain))), 4) if np.isfinite(online - plain).any()
                           else None}
                if previous is not None:
                    carried, _, carried_outcomes = streamed(detector, columns, windows, options,
                                                            args.chunk, carried=previous)
                    figures["carried"] = drive_g_mean(windows, carried, rule)
                    figures["carried_fits"] = carried_outcomes
                line[f"drive{drive}"] = figures
                previous = adaptation
            line["seconds"] = round(time.perf_counter() - start, 1)
            rows.append(line)
            print(json.dumps(line), flush=True)
            with open(args.out, "a") as out:
                out.write(json.dumps(line) + "\n")
        summary = {"protocol": protocol, "model": detector.model_id, "seeds": args.seeds,
                   "scheme": "new driver, streamed as deployed; refits on its unlabelled windows",
                   "options": options}
        for variant, drives in (("plain", (0, 1)), ("online", (0, 1)), ("carried", (1,)),
                                ("naive_floor", (0, 1))):
            pairs = [(r[f"drive{d}"]["plain"], r[f"drive{d}"][variant]) for r in rows
                     for d in drives if r[f"drive{d}"].get(variant) is not None
                     and r[f"drive{d}"]["plain"] is not None]
            base, value = (np.array(v, dtype=float) for v in zip(*pairs))
            summary[variant] = {"g_mean": round(float(value.mean()), 4), "drives": len(pairs),
                                "plain_same_drives": round(float(base.mean()), 4),
                                "lower_by_0_02": int((base - value > 0.02).sum()),
                                "higher_by_0_02": int((value - base > 0.02).sum())}
        fits = [f for r in rows for d in (0, 1) for f in r[f"drive{d}"]["fits"]]
        summary["fits"] = {outcome: fits.count(outcome) for outcome in ("done", "refused",
                                                                         "failed")}
        summary["seconds"] = round(time.perf_counter() - start, 1)
        print(json.dumps(summary), flush=True)
        with open(args.out, "a") as out:
            out.write(json.dumps(summary) + "\n")


if __name__ == "__main__":
    main()
