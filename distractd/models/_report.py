"""Reporting of an evaluation: the Table 5.2-style table, ``results.json`` and sweep plots.

The table lists, per model, mean ± sd over drivers of the per-driver means over the 12 splits
(S0 Table 5.2), the timings, the deployment metrics, and the right-tailed paired t-tests.
Plots use matplotlib's Agg backend (no display needed).
"""

import json
import math
from pathlib import Path

import numpy as np

__all__ = ["format_table", "format_tests", "results_document", "write_results", "plot_sweep"]

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
