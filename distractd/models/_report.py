"""Reporting of an evaluation: the Table 5.2-style table, ``results.json`` and sweep plots.

The table lists, per model, mean ± sd over drivers of the per-driver means over the 12 splits
(S0 Table 5.2), the timings, the deployment metrics, and the right-tailed paired t-tests.
Plots use matplotlib's Agg backend (no display needed).
"""

import json
import math
from functools import partial
from pathlib import Path

import numpy as np
from tqdm import tqdm

from ..pipeline import PipelineConfig, extract_features
from ._protocol import MODELS, PAIRS, evaluate_cohort, model_specs, paired_tests, summarise, sweep
from ._smoothing import DecisionSmoother

__all__ = [
    "run_evaluation", "format_table", "format_tests", "results_document", "write_results",
    "plot_sweep",
]

_ROWS = (
    # (label, metric, scale, decimals)
    ("Accuracy %", "accuracy", 100.0, 1),
    ("Sensitivity %", "sensitivity", 100.0, 1),
    ("Specificity %", "specificity", 100.0, 1),
    ("G-mean", "g_mean", 1.0, 3),
    ("Train ms", "fit_ms", 1.0, 1),
    ("Predict ms", "predict_ms", 1.0, 2),
    ("Selection s", "select_ms", 1e-3, 2),
    ("Delay s", "detection_delay_s", 1.0, 1),
    ("Missed %", "missed_fraction", 100.0, 1),
    ("False alarms/h", "false_alarms_per_hour", 1.0, 1),
)


def run_evaluation(recordings, out_dir, *, models=MODELS, grid="full", n_labelled=60,
                   n_unlabelled=None, folds="random", n_draws=5, seed=0, config=None,
                   smoothing=None,
                   unlabelled_sizes=(0, 120, 240, 360, 480), labelled_sizes=(16, 32, 48, 64, 80),
                   sweep_n_labelled=60, sweep_n_unlabelled=45, n_jobs=1, progress=True):
    """The whole evaluation of a cohort: table, tests, sweeps, ``results.json`` and plots.

    Parameters
    ----------
    recordings : sequence of Recording
        One per driver, labelled.
    out_dir : str or Path
        Created if needed; receives ``results.json``, ``sweep_unlabelled.png``,
        ``sweep_labelled.png`` and ``table.txt``.
    models : sequence of str, default=MODELS
    grid : {"full", "small"}, default="full"
    n_labelled, n_unlabelled : int, int or None, default=60, None
        The main protocol (None: the rest of the training fold is unlabelled).
    folds : {"random", "blocked"}, default="random"
        ``"random"``: the source's stratified folds. ``"blocked"``: folds of consecutive windows,
        training windows overlapping a test window left out (``purge_s`` = the window length), so
        that no test sample was seen in training; see :func:`~distractd.models.make_splits`.
    n_draws : int, default=5
        Hidden layers per split for the ELM family (S0: 5).
    seed : int, default=0
    config : PipelineConfig or None, default=None
        Window settings.
    smoothing : dict or None, default=None
        Keyword arguments of :class:`~distractd.models.DecisionSmoother` for the deployment
        metrics; None = the daemon default (hysteresis with both thresholds at 0).
    unlabelled_sizes, labelled_sizes : sequence of int
        Sweep sizes (S0: u in {0, 120, 240, 360, 480} at l = ``sweep_n_labelled``; l from 16 to
        80 at u = ``sweep_n_unlabelled``); empty skips a sweep.
    sweep_n_labelled, sweep_n_unlabelled : int, default=60, 45
    n_jobs : int, default=1
        Drivers evaluated in parallel processes; the results do not depend on it.
    progress : bool, default=True
        tqdm bars on standard error.

    Returns
    -------
    document : dict
        :func:`results_document` output (also written to ``results.json``).
    text : str
        The table and the tests, as printed.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    config = config or PipelineConfig()
    specs = model_specs(models, grid)
    drivers = []
    for recording in tqdm(recordings, disable=not progress, desc="features"):
        windows = extract_features(recording, config)
        drivers.append((windows.X, windows.label, windows.t_end))
    smoothing = dict(smoothing or {})
    options = {"n_draws": n_draws, "n_jobs": n_jobs, "progress": progress, "folds": folds,
               "purge_s": config.window_s if folds == "blocked" else 0.0}
    cohort = evaluate_cohort(drivers, specs, seed=seed, n_labelled=n_labelled,
                             n_unlabelled=n_unlabelled,
                             make_smoother=partial(DecisionSmoother, **smoothing), **options)
    summary = summarise(cohort)
    protocol = {"n_drivers": len(drivers), "models": list(models), "grid": grid,
                "n_labelled": n_labelled, "n_unlabelled": n_unlabelled, "folds": folds,
                "purge_s": options["purge_s"], "n_folds": 4, "n_repeats": 3, "n_draws": n_draws,
                "seed": seed, "pipeline_config": config.to_dict(), "smoothing": smoothing,
                "windows_per_driver": [int(len(d[1])) for d in drivers]}
    tests = paired_tests(summary, PAIRS)
    sweeps = []
    # written after the main table and again after each sweep: a long run that is stopped keeps
    # what it has finished
    document, text = _write(out_dir, summary, tests, sweeps, protocol, models)
    for parameter, sizes, fixed in (("n_unlabelled", unlabelled_sizes,
                                     {"n_labelled": sweep_n_labelled}),
                                    ("n_labelled", labelled_sizes,
                                     {"n_unlabelled": sweep_n_unlabelled})):
        if len(sizes):
            curves = sweep(drivers, specs, parameter, sizes, seed=seed, **fixed, **options)
            plot_sweep(curves, out_dir / f"sweep_{parameter.removeprefix('n_')}.png")
            sweeps.append(curves)
            tests += _sweep_tests(curves)
            document, text = _write(out_dir, summary, tests, sweeps, protocol, models)
    return document, text


def _write(out_dir, summary, tests, sweeps, protocol, models):
    """Write ``results.json`` and ``table.txt``; return the document and the printed text."""
    document = results_document(summary, tests, sweeps, protocol)
    write_results(out_dir / "results.json", document)
    text = format_table(summary, models) + "\n\n" + format_tests(tests)
    (out_dir / "table.txt").write_text(text + "\n")
    return document, text


def _sweep_tests(curves):
    """Paired tests of each semi-supervised model over its counterpart at every swept size."""
    tests = []
    for size, index in zip(curves["sizes"], range(len(curves["sizes"]))):
        per_size = {name: {"per_driver": {"g_mean": curve["per_driver"][index]}}
                    for name, curve in curves["models"].items()}
        for test in paired_tests(per_size, PAIRS):
            tests.append({**test, "metric": f"g_mean at {curves['parameter']}={size}"})
    return tests


def format_table(summary, models=None):
    """The summary as a fixed-width text table, one column per model.

    Parameters
    ----------
    summary : dict
        :func:`~distractd.models._protocol.summarise` output.
    models : sequence of str or None, default=None
        Column order; None = the order of ``summary``.

    Returns
    -------
    str
        Rows: accuracy, sensitivity, specificity (%), G-mean, train (final fit) ms, predict ms
        (one test fold), selection s, detection delay s, missed episodes %, false alarms per hour;
        rows absent from the summary are left out.
    """
    models = list(summary) if models is None else list(models)
    rows = [[""] + models]
    for label, key, scale, decimals in _ROWS:
        if key not in summary[models[0]]:
            continue
        cells = [label]
        for name in models:
            value = summary[name][key]
            cells.append(_mean_sd(value["mean"] * scale, value["sd"] * scale, decimals))
        rows.append(cells)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.rjust(w) if i else cell.ljust(w)
                               for i, (cell, w) in enumerate(zip(row, widths))) for row in rows)


def format_tests(tests):
    """One line per right-tailed paired t-test: ``sselm > elm on g_mean: t(33) = 4.00, p = ...``."""
    return "\n".join(
        f"{t['better']} > {t['worse']} on {t['metric']}: mean difference "
        f"{t['mean_difference']:+.4f}, t({t['df']}) = {t['t']:.2f}, p = {t['p']:.2g}"
        for t in tests)


def results_document(summary, tests, sweeps=(), protocol=None):
    """The JSON-ready evaluation results.

    Parameters
    ----------
    summary : dict
        :func:`~distractd.models._protocol.summarise` output.
    tests : list of dict
        :func:`~distractd.models._protocol.paired_tests` output.
    sweeps : sequence of dict, default=()
        :func:`~distractd.models._protocol.sweep` outputs.
    protocol : dict or None, default=None
        The settings the evaluation ran with.

    Returns
    -------
    dict
        ``protocol``, ``models`` (per model and metric ``{"mean", "sd"}``, plus ``per_driver``),
        ``tests`` and ``sweeps`` (keyed by the swept parameter); NaN becomes null.
    """
    return _finite({"protocol": protocol or {}, "models": summary, "tests": list(tests),
                    "sweeps": {s["parameter"]: s for s in sweeps}})


def write_results(path, document):
    """Write :func:`results_document` output as indented JSON."""
    Path(path).write_text(json.dumps(document, indent=1, allow_nan=False) + "\n")


def plot_sweep(curves, path, metric_label="G-mean"):
    """Plot mean ± sd over drivers against the swept size and save a PNG.

    Parameters
    ----------
    curves : dict
        :func:`~distractd.models._protocol.sweep` output.
    path : str or Path
        PNG file written.
    metric_label : str, default="G-mean"
        Y-axis label.
    """
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(5.5, 4.0), layout="constrained")
    axes = figure.add_subplot()
    sizes = np.asarray(curves["sizes"])
    for name, curve in curves["models"].items():
        mean = np.asarray(curve["mean"], dtype=float)
        sd = np.nan_to_num(np.asarray(curve["sd"], dtype=float))
        axes.errorbar(sizes, mean, yerr=sd, marker="o", capsize=3, label=name)
    what = "unlabelled" if curves["parameter"] == "n_unlabelled" else "labelled"
    axes.set_xlabel(f"{what} windows per training fold")
    axes.set_ylabel(f"test {metric_label} (mean ± sd over drivers)")
    axes.set_xticks(sizes)
    axes.grid(alpha=0.3)
    axes.legend()
    figure.savefig(path, dpi=120)


def _mean_sd(mean, sd, decimals):
    if not math.isfinite(mean):
        return "-"
    if not math.isfinite(sd):
        return f"{mean:.{decimals}f}"
    return f"{mean:.{decimals}f}±{sd:.{decimals}f}"


def _finite(value):
    """Replace NaN and infinities by None, recursively (JSON has no NaN)."""
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value
