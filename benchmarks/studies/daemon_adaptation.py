"""Does the daemon's per-stream adaptation beat the plain cohort model? Scheme new-driver.

A simulated cohort (seed 20261125 by default, never used in development), each driver with one
drive of the visual-manual protocol, one of the cognitive protocol and one without a task. For each
held-out driver an SS-ELM cohort model is trained on the other drivers' drives (``train_cohort``,
the shipped model's recipe: baselines on, right-hand drive, small grid); then each of the held-out
driver's task drives is streamed window by window through the daemon's per-stream adaptation
(:class:`distractd.daemon.StreamAdaptation` with the daemon's ``[adaptation]`` defaults except
``after_s``, the fit run as the daemon's thread runs it, :class:`distractd.daemon.Fit`), and the
windows after the swap are scored by the adapted model and by the plain cohort model. The daemon
swaps a few windows after the fit's newest one (when its thread finishes); here the swap is at the
next window, a negligible difference over the 15-20 minutes scored.

Per driver, protocol and ``after_s``: window G-mean (score > 0 against the simulator's truth,
windows with known truth and every feature) after the swap, plain and adapted, and for reference
the offline adaptation on the whole drive (``adapt_rows`` on up to 600 of all its windows, the
future included: what ``distractd adapt`` on the finished drive would give); the fit's CPU
seconds. One JSON line per
result, appended to ``--out`` as it goes (a stopped run keeps its results; a rerun skips what the
file holds), then one summary line per protocol and ``after_s`` with paired tests over drivers
(``scipy.stats.ttest_rel`` and ``wilcoxon``). Run::

    nice -n 10 .venv/bin/python benchmarks/studies/daemon_adaptation.py --drivers 10 \\
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


def _summaries(rows, afters):
    for protocol in TESTED:
        for after_s in afters:
            done = [r for r in rows if r["protocol"] == protocol and r["after_s"] == after_s
                    and "g_adapted" in r]
            if len(done) < 2:
                continue
            plain = np.array([r["g_plain"] for r in done])
            adapted = np.array([r["g_adapted"] for r in done])
            offline = np.array([r["g_offline"] for r in done])
            diff = adapted - plain
            yield {"summary": True, "scheme": "new-driver", "protocol": protocol,
                   "after_s": after_s, "drivers": len(done),
                   "g_plain": [float(plain.mean()), float(plain.std(ddof=1))],
                   "g_adapted": [float(adapted.mean()), float(adapted.std(ddof=1))],
                   "g_offline": [float(offline.mean()), float(offline.std(ddof=1))],
                   "gain": float(diff.mean()), "wins": int((diff > 0).sum()),
                   "ttest_p": float(stats.ttest_rel(adapted, plain).pvalue),
                   "wilcoxon_p": float(stats.wilcoxon(adapted, plain).pvalue)
                   if np.any(diff != 0) else 1.0,
                   "fit_cpu_s_median": float(np.median([r["fit_cpu_s"] for r in done]))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drivers", type=int, default=10)
    parser.add_argument("--seed", type=int, default=20261125, help="cohort seed")
    parser.add_argument("--after", type=float, nargs="+", default=[300.0, 600.0],
                        help="adaptation.after_s values, seconds of driving")
    parser.add_argument("--duration", type=float, default=None,
                        help="drive length in seconds (default: the full protocol)")
    parser.add_argument("--out", type=Path, required=True, help="JSON lines, appended")
    args = parser.parse_args()

    options = {} if args.duration is None else {"duration_s": args.duration}
    cohort = simulate_cohort(args.drivers, args.seed, protocol=PROTOCOLS, **options)
    drivers = sorted({r.meta["driver_id"] for r in cohort})
    run = {"seed": args.seed, "drivers_total": args.drivers, "duration_s": args.duration}
    rows = []
    if args.out.exists():
        rows = [row for row in map(json.loads, args.out.read_text().splitlines())
                if not row.get("summary") and all(row.get(k) == v for k, v in run.items())]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with threadpool_limits(limits=1, user_api="blas"), open(args.out, "a") as out:
        for driver in drivers:
            todo = [(p, a) for p in TESTED for a in args.after
                    if not any(r["driver"] == driver and r["protocol"] == p and r["after_s"] == a
                               for r in rows)]
            if not todo:
                continue
            started = time.process_time()
            with tempfile.TemporaryDirectory() as folder:
                detector = _cohort_model([r for r in cohort if r.meta["driver_id"] != driver],
                                         seed=0, folder=folder)
            train_cpu_s = time.process_time() - started
            for protocol, after_s in todo:
                (recording,) = [r for r in cohort if r.meta["driver_id"] == driver
                                and r.meta["protocol"] == protocol]
                row = {**run, "scheme": "new-driver", "driver": driver, "protocol": protocol,
                       "after_s": after_s, "train_cpu_s": train_cpu_s,
                       **_evaluate(detector, recording, after_s)}
                rows.append(row)
                print(json.dumps(row), file=out, flush=True)
                print(json.dumps(row), flush=True)
        for summary in _summaries(rows, args.after):
            summary.update(run)
            print(json.dumps(summary), file=out, flush=True)
            print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
