"""Does the daemon's per-stream adaptation beat the plain cohort model (new driver, new drive)?

A simulated cohort (seed 20261125 by default, never used in development), each driver with one
drive (two with ``--scheme new-drive``) of the visual-manual protocol, of the cognitive protocol
and without a task. For each held-out driver (``new-driver``) or drive (``new-drive``) an SS-ELM
cohort model is trained on the other drives (``train_cohort``: baselines on, right-hand drive,
small grid; ``--recipe mixed``, the shipped model's, on every protocol at once, or
``per-protocol``, one model per tested protocol on its drives and the no-task ones); then each of
the held-out task drives is streamed window by window through the daemon's per-stream adaptation
(:class:`distractd.daemon.StreamAdaptation` with the daemon's ``[adaptation]`` defaults except
``after_s``, ``distractd.daemon.Fit.run``, the refit the daemon's fit worker runs), and the
windows after the swap are scored by the adapted model and by the plain cohort model. The daemon
swaps a few windows after the fit's newest one (when its thread finishes); here the swap is at the
next window, a negligible difference over the 15-20 minutes scored.

Per driver, protocol and ``after_s``: window G-mean (score > 0 against the simulator's truth,
windows with known truth and every feature) after the swap, plain and adapted, and for reference
the offline adaptation on the whole drive (``adapt_rows`` on up to 600 of all its windows, the
future included: what ``distractd adapt`` on the finished drive would give); the fit's CPU
seconds. One JSON line per result, appended to ``--out`` as it goes (a stopped run keeps its
results; a rerun skips what the file holds), then one summary line per scheme, recipe, protocol
and ``after_s`` with paired tests over drivers (``scipy.stats.ttest_rel`` and ``wilcoxon``).
Run::

    nice -n 10 .venv/bin/python benchmarks/studies/daemon_adaptation.py --drivers 10 \\
        [--scheme new-driver|new-drive] [--recipe mixed|per-protocol] \\
        --out build/daemon_adaptation.jsonl
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import stats
from threadpoolctl import threadpool_limits

from distractd.daemon import DEFAULTS, StreamAdaptation
from distractd.models import load_model, save_model
from distractd.models.detectors import adapt_rows, g_mean, train_cohort
from distractd.pipeline import FEATURE_NAMES, PipelineConfig, extract_features
from distractd.simulators import simulate_cohort

PROTOCOLS = ("visual-manual", "cognitive", "none")
TESTED = ("visual-manual", "cognitive")


def _cohort_model(recordings, seed, folder):
    estimator, parts = train_cohort(recordings, "sselm", config=PipelineConfig(drive_side="right"),
                                    seed=seed, segment_frames=0)
    path = Path(folder) / "cohort.npz"
    save_model(path, estimator, **parts)
    return load_model(path)


def _streamed(detector, windows, after_s):
    """The daemon's per-stream path over a drive's windows, one hop at a time: the index of the
    first window scored by the adapted model, and the finished fit (None when none fell due)."""
    options = {**DEFAULTS["adaptation"], "after_s": after_s}
    columns = detector.feature_columns(FEATURE_NAMES)
    adaptation = StreamAdaptation(len(columns), options, collect=True)
    X = windows.X[:, columns]
    for i in range(len(windows)):
        if adaptation.add(X[i:i + 1], windows.t_end[i:i + 1]):
            fit = adaptation.fit("driver", detector)
            adaptation.submitted()
            fit.run()
            return i + 1, fit
    return len(windows), None


def _g_mean(truth, scores):
    return float(g_mean(truth, (scores > 0).astype(np.int8)))


def _evaluate(detector, recording, after_s):
    windows = extract_features(recording, PipelineConfig.from_dict(detector.pipeline_config))
    swap, fit = _streamed(detector, windows, after_s)
    if fit is None or fit.error is not None:
        return {"error": "no fit" if fit is None else fit.error}
    after = slice(swap, None)
    plain = detector.window_scores(windows.X[after], FEATURE_NAMES)
    adapted = fit.result.window_scores(windows.X[after], FEATURE_NAMES)
    columns = detector.feature_columns(FEATURE_NAMES)
    offline = adapt_rows(detector, windows.X[:, columns],
                         n_unlabelled=DEFAULTS["adaptation"]["max_windows"], seed=0)
    transductive = offline.window_scores(windows.X[after], FEATURE_NAMES)
    truth = windows.label[after]
    scored = (truth >= 0) & np.isfinite(plain)
    return {"swap_t": float(windows.t_end[swap - 1]), "fit_windows": fit.n_windows,
            "fit_cpu_s": fit.cpu_s, "n_scored": int(scored.sum()),
            "g_plain": _g_mean(truth[scored], plain[scored]),
            "g_adapted": _g_mean(truth[scored], adapted[scored]),
            "g_offline": _g_mean(truth[scored], transductive[scored])}


def _folds(cohort, scheme, recipe):
    """``(training recordings, test recordings)`` per model to train.

    ``new-driver``: one fold per driver (trained on the others); ``new-drive``: fold k tests every
    driver's drive k, trained on every other drive. Recipe ``mixed`` trains one model on every
    protocol (as the shipped model); ``per-protocol`` one per tested protocol, on that protocol's
    drives and the no-task drives.
    """
    if scheme == "new-driver":
        keys = sorted({r.meta["driver_id"] for r in cohort})
        key = "driver_id"
    else:
        keys = sorted({r.meta["drive"] for r in cohort})
        key = "drive"
    for value in keys:
        train = [r for r in cohort if r.meta[key] != value]
        test = [r for r in cohort if r.meta[key] == value and r.meta["protocol"] in TESTED]
        if recipe == "mixed":
            yield train, test
            continue
        for protocol in TESTED:
            yield ([r for r in train if r.meta["protocol"] in (protocol, "none")],
                   [r for r in test if r.meta["protocol"] == protocol])


def _summaries(rows, afters):
    """Paired over drivers (a driver's drives averaged first) per scheme, recipe, protocol and
    ``after_s``."""
    for scheme, recipe in sorted({(r["scheme"], r["recipe"]) for r in rows}):
        for protocol in TESTED:
            for after_s in afters:
                done = [r for r in rows if (r["scheme"], r["recipe"], r["protocol"], r["after_s"])
                        == (scheme, recipe, protocol, after_s) and "g_adapted" in r]
                drivers = sorted({r["driver"] for r in done})
                if len(drivers) < 2:
                    continue
                mean = {name: np.array([np.mean([r[name] for r in done if r["driver"] == d])
                                        for d in drivers])
                        for name in ("g_plain", "g_adapted", "g_offline")}
                plain, adapted = mean["g_plain"], mean["g_adapted"]
                diff = adapted - plain
                yield {"summary": True, "scheme": scheme, "recipe": recipe, "protocol": protocol,
                       "after_s": after_s, "drivers": len(drivers), "drives": len(done),
                       **{name: [float(v.mean()), float(v.std(ddof=1))]
                          for name, v in mean.items()},
                       "gain": float(diff.mean()),
                       "gain_range": [float(diff.min()), float(diff.max())],
                       "wins": int((diff > 0).sum()),
                       "ttest_p": float(stats.ttest_rel(adapted, plain).pvalue),
                       "wilcoxon_p": float(stats.wilcoxon(adapted, plain).pvalue)
                       if np.any(diff != 0) else 1.0,
                       "fit_cpu_s_median": float(np.median([r["fit_cpu_s"] for r in done]))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drivers", type=int, default=10)
    parser.add_argument("--seed", type=int, default=20261125, help="cohort seed")
    parser.add_argument("--scheme", choices=("new-driver", "new-drive"), default="new-driver",
                        help="new-drive simulates two drives per driver and protocol")
    parser.add_argument("--recipe", choices=("mixed", "per-protocol"), default="mixed")
    parser.add_argument("--after", type=float, nargs="+", default=[300.0, 600.0],
                        help="adaptation.after_s values, seconds of driving")
    parser.add_argument("--duration", type=float, default=None,
                        help="drive length in seconds (default: the full protocol)")
    parser.add_argument("--out", type=Path, required=True, help="JSON lines, appended")
    args = parser.parse_args()

    options = {} if args.duration is None else {"duration_s": args.duration}
    drives = 2 if args.scheme == "new-drive" else 1
    cohort = simulate_cohort(args.drivers, args.seed, drives=drives, protocol=PROTOCOLS,
                             **options)
    run = {"seed": args.seed, "drivers_total": args.drivers, "duration_s": args.duration,
           "drives_per_driver": drives}
    rows = []
    if args.out.exists():
        rows = [row for row in map(json.loads, args.out.read_text().splitlines())
                if not row.get("summary") and all(row.get(k) == v for k, v in run.items())]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with threadpool_limits(limits=1, user_api="blas"), open(args.out, "a") as out:
        for train, test in _folds(cohort, args.scheme, args.recipe):
            todo = [(r, a) for r in test for a in args.after
                    if not any((row["scheme"], row["recipe"], row["driver"], row["protocol"],
                                row["drive"], row["after_s"])
                               == (args.scheme, args.recipe, r.meta["driver_id"],
                                   r.meta["protocol"], r.meta["drive"], a) for row in rows)]
            if not todo:
                continue
            started = time.process_time()
            with tempfile.TemporaryDirectory() as folder:
                detector = _cohort_model(train, seed=0, folder=folder)
            train_cpu_s = time.process_time() - started
            for recording, after_s in todo:
                row = {**run, "scheme": args.scheme, "recipe": args.recipe,
                       "driver": recording.meta["driver_id"],
                       "protocol": recording.meta["protocol"], "drive": recording.meta["drive"],
                       "after_s": after_s, "params": detector.summary["params"],
                       "train_cpu_s": train_cpu_s, **_evaluate(detector, recording, after_s)}
                rows.append(row)
                print(json.dumps(row), file=out, flush=True)
                print(json.dumps(row), flush=True)
        for summary in _summaries(rows, args.after):
            summary.update(run)
            print(json.dumps(summary), file=out, flush=True)
            print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
