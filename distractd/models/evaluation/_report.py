"""Reporting of an evaluation: a table per scheme, ``results.json``, timelines and sweep plots.

The first table has one row per scheme and one column per model (window G-mean, mean ± sd over
drivers), the naive floor's two variants among them. Then, per scheme and with what the scheme
means, the Table 5.2-style table: per model, mean ± sd over drivers of the per-driver means, the
deployment figures of the decision rule, the right-tailed paired t-tests of the source's pairs,
and each model against the offline naive floor (two-sided, with wins and losses over drivers).
The figures (timelines, sweeps) need the optional extra ``plots`` (:mod:`._figures`): a run that
will draw checks for matplotlib before it starts.
"""

import json
import math
from pathlib import Path

import numpy as np

from ..._json import json_ready
from ...pipeline import PipelineConfig
from ..detectors import NAIVE_MODELS, DecisionRule, loss_evidence, model_specs
from ._figures import COLUMN_WIDTH_IN, paper_figure, require_plots, save_figure
from ._models import evaluate_models, model_drives, naive_pairs
from ._options import EvaluationOptions
from ._protocol import sweep
from ._schemes import supported_schemes
from ._stats import PAIRS, paired_tests, summarise_scheme
from ._timeline import plot_timeline

__all__ = [
    "run_evaluation", "format_schemes", "format_table", "format_tests", "results_document",
    "write_results", "plot_sweep", "SCHEME_NOTES",
]

SCHEME_NOTES = {
    "new-driver": "trained on other drivers, tested on a driver never seen",
    "causal": "new-driver, and at time t a model has seen only that driver's windows before t",
    "new-drive": "tested on a drive never seen",
    "blocked": "unseen stretches of a seen drive, overlapping training windows purged",
    "source": "the source's random folds: they leak between 95 %-overlapping windows and "
              "reproduce the published table, nothing more",
}
"""What each scheme's figures mean, printed with every table."""

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
    ("Decided %", "coverage", 100.0, 1),
)


def run_evaluation(recordings, out_dir, options=None, *, runner=None, progress=True):
    """The whole evaluation of recordings: a table per scheme, tests, ``results.json``, plots.

    Parameters
    ----------
    recordings : sequence of Recording, str or Path
        Labelled drives, or paths of them (read where they live when ``runner`` is a cluster);
        ``meta`` names their driver (``driver_id``), drive (``recording_id``) and ``protocol``
        (see :func:`~._schemes.scheme_drives`).
    out_dir : str or Path
        Created if needed; receives ``results.json`` and ``table.txt`` (rewritten after every
        scheme and sweep, so a stopped run keeps what it finished), the sweep plots and, with
        ``options.plots``, ``timeline_<scheme>_<recording>.png`` per test drive.
    options : EvaluationOptions or None, default=None
        Schemes, models, grids, recipe, representation, sizes, seed, window and decision
        settings, sweeps and plots (:class:`~._options.EvaluationOptions`; None: its defaults).
    runner : Runner or None, default=None
        Where features, folds, drives and sweeps run (:func:`~distractd._parallel.batch_runner`:
        a local or remote Dask cluster; None: here, one task after another). The results do
        not depend on it.
    progress : bool, default=True
        tqdm bars on standard error (one step per split and model).

    Returns
    -------
    document : dict
        :func:`results_document` output (also written to ``results.json``).
    text : str
        The tables and the tests, as printed.
    """
    o = options or EvaluationOptions()
    if o.plots or len(o.unlabelled_sizes) or len(o.labelled_sizes):
        require_plots()   # before hours of work, not after
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    config = o.config or PipelineConfig()
    models = list(o.models) + [name for name in NAIVE_MODELS
                               if o.naive and name not in o.models]
    specs = model_specs(models, o.grid)
    drives, names, own = model_drives(recordings, specs, config, o.normalisation, o.features,
                                      progress, runner, o.protocols)
    schemes = list(o.schemes or supported_schemes(drives))
    # a model that scores track loss judges low-quality windows, as the daemon's rule does
    decision = {**(o.decision or {}), "loss_evidence": loss_evidence(names)}
    protocol = {"schemes": list(schemes), "models": models, "grid": o.grid, "recipe": o.recipe,
                "normalisation": o.normalisation, "features": names,
                "own_features": {name: spec_names for name, (_, spec_names) in own.items()},
                "n_drivers": len({d.driver_id for d in drives}), "n_drives": len(drives),
                "n_labelled": o.n_labelled, "n_train": o.n_train,
                "n_unlabelled": o.n_unlabelled, "n_draws": o.n_draws, "seed": o.seed,
                "pipeline_config": config.to_dict(),
                "decision": dict(decision),
                "windows_per_drive": [int(len(d.label)) for d in drives]}
    summaries, tests, sweeps = {}, {}, []
    document = text = None
    for scheme in schemes:
        results = evaluate_models(drives, own, scheme, specs, recipe=o.recipe,
                                  n_train=o.n_train, n_unlabelled=o.n_unlabelled,
                                  n_labelled=o.n_labelled, n_draws=o.n_draws,
                                  window_s=config.window_s, decision=decision, seed=o.seed,
                                  progress=progress, traces=o.plots, runner=runner)
        if o.plots and scheme == schemes[0]:
            _plot_traces(out_dir, scheme, specs[0].name, results[specs[0].name], decision)
        summaries[scheme] = summarise_scheme(results)
        tests[scheme] = (paired_tests(summaries[scheme], PAIRS)
                         + paired_tests(summaries[scheme], naive_pairs(models),
                                        alternative="two-sided"))
        document, text = _write(out_dir, summaries, tests, sweeps, protocol, models)
    drivers = [(d.X, d.label, d.t_end, d.quality) for d in drives]
    specs = [spec for spec in specs if spec.representation is None]  # sweeps: shared features
    for parameter, sizes, fixed in (("n_unlabelled", o.unlabelled_sizes,
                                     {"n_labelled": o.sweep_n_labelled}),
                                    ("n_labelled", o.labelled_sizes,
                                     {"n_unlabelled": o.sweep_n_unlabelled})):
        if len(sizes):
            curves = sweep(drivers, specs, parameter, sizes, seed=o.seed, n_draws=o.n_draws,
                           runner=runner, progress=progress, **fixed)
            plot_sweep(curves, out_dir / f"sweep_{parameter.removeprefix('n_')}.png")
            sweeps.append(curves)
            tests["source"] = tests.get("source", []) + _sweep_tests(curves)
            document, text = _write(out_dir, summaries, tests, sweeps, protocol, models)
    return document, text


def _plot_traces(out_dir, scheme, model, drivers, decision):
    """One timeline PNG per test drive of ``model`` (the records' traces, removed from the
    results), with the threshold of the rule that decided its states."""
    for records in drivers.values():
        for record in records:
            trace = record.pop("trace", None)
            if trace is None:  # within-drive schemes keep no trace
                continue
            name = "".join(c if c.isalnum() or c in "-_." else "_"
                           for c in record["recording_id"])
            plot_timeline(out_dir / f"timeline_{scheme}_{name}.png", trace["t_end"],
                          trace["scores"], trace["states"], trace["label"],
                          DecisionRule(**decision), alerts=trace["alerts"],
                          title=f"{record['recording_id']}: model {model}, window G-mean "
                                f"{record['g_mean']:.3f}\nscheme {scheme}: {SCHEME_NOTES[scheme]}")


def _write(out_dir, summaries, tests, sweeps, protocol, models):
    """Write ``results.json`` and ``table.txt``; return the document and the printed text."""
    document = results_document(summaries, tests, sweeps, protocol)
    write_results(out_dir / "results.json", document)
    parts = [format_schemes(summaries, models)] if summaries else []
    for scheme, summary in summaries.items():
        parts.append(f"{scheme} ({SCHEME_NOTES[scheme]}):\n" + format_table(summary, models))
        if tests.get(scheme):
            parts.append(format_tests(tests[scheme]))
    text = "\n\n".join(parts)
    (out_dir / "table.txt").write_text(text + "\n")
    return document, text


def format_schemes(summaries, models=None):
    """One row per scheme, one column per model: window G-mean, mean ± sd over drivers."""
    first = next(iter(summaries.values()))
    models = list(first) if models is None else list(models)
    rows = [["G-mean by scheme"] + models]
    for scheme, summary in summaries.items():
        n = len(summary[models[0]]["drivers"])
        rows.append([f"{scheme} ({n} drivers)"] + [
            _format_mean_sd(summary[m]["g_mean"]["mean"], summary[m]["g_mean"]["sd"], 3)
            for m in models])
    return _columns(rows)


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
        :func:`~._stats.summarise` output.
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
            cells.append(_format_mean_sd(value["mean"] * scale, value["sd"] * scale, decimals))
        rows.append(cells)
    return _columns(rows)


def _columns(rows):
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.rjust(w) if i else cell.ljust(w)
                               for i, (cell, w) in enumerate(zip(row, widths))) for row in rows)


def format_tests(tests):
    """One line per paired t-test: ``sselm > elm on g_mean: ..., t(33) = 4.00, p = ...`` for a
    right-tailed one, ``svm vs naive-offline on g_mean: ..., 3 wins / 20 losses, ...`` for a
    two-sided one."""
    lines = []
    for t in tests:
        two_sided = t.get("alternative") == "two-sided"
        relation = "vs" if two_sided else ">"
        record = f", {t['wins']} wins / {t['losses']} losses" if "wins" in t else ""
        lines.append(f"{t['better']} {relation} {t['worse']} on {t['metric']}: mean difference "
                     f"{t['mean_difference']:+.4f}{record}, t({t['df']}) = {t['t']:.2f}, "
                     f"p = {t['p']:.2g}{' (two-sided)' if two_sided else ''}")
    return "\n".join(lines)


def results_document(summaries, tests, sweeps=(), protocol=None):
    """The JSON-ready evaluation results.

    Parameters
    ----------
    summaries : dict
        Per scheme, :func:`~._stats.summarise_scheme` output.
    tests : dict
        Per scheme, a list of :func:`~._stats.paired_tests` results.
    sweeps : sequence of dict, default=()
        :func:`~._protocol.sweep` outputs.
    protocol : dict or None, default=None
        The settings the evaluation ran with.

    Returns
    -------
    dict
        ``protocol``, ``schemes`` (per scheme: ``note``, ``models`` — per model and metric
        ``{"mean", "sd"}``, ``per_driver`` and ``drivers`` — and ``tests``) and ``sweeps`` (keyed
        by the swept parameter); NaN becomes null.
    """
    return json_ready({"protocol": protocol or {},
                       "schemes": {scheme: {"note": SCHEME_NOTES[scheme], "models": summary,
                                            "tests": list(tests.get(scheme, []))}
                                   for scheme, summary in summaries.items()},
                       "sweeps": {s["parameter"]: s for s in sweeps}})


def write_results(path, document):
    """Write :func:`results_document` output as indented JSON."""
    Path(path).write_text(json.dumps(document, indent=1, allow_nan=False) + "\n")


def plot_sweep(curves, path, metric_label="G-mean"):
    """Plot mean ± sd over drivers against the swept size and save the figure.

    Parameters
    ----------
    curves : dict
        :func:`~._protocol.sweep` output.
    path : str or Path
        Figure file written; ``.png``, ``.pdf`` or ``.svg`` names the format.
    metric_label : str, default="G-mean"
        Y-axis label.
    """
    with paper_figure(2.8, width_in=COLUMN_WIDTH_IN) as (figure, (axes,)):
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
        axes.legend(title="model")
        save_figure(figure, path)


def _format_mean_sd(mean, sd, decimals):
    """``mean±sd`` at ``decimals`` for a table cell; ``-`` without a mean, the mean alone
    without a spread (summarising is :func:`._stats._mean_sd`'s job)."""
    if not math.isfinite(mean):
        return "-"
    if not math.isfinite(sd):
        return f"{mean:.{decimals}f}"
    return f"{mean:.{decimals}f}±{sd:.{decimals}f}"
