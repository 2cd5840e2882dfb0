"""The timeline of one evaluated drive: what a researcher looks at first, sized for a paper.

Panels over the drive's clock, sharing the time axis:

1. **score**: the detector's window score — its decision value less the model's offset, over the
   spread of its training scores, so one unit is one training spread — with the decision rule's
   own threshold(s) (:class:`DecisionRule`, never a constant), above which the state turns
   distracted, over the stretches the truth calls distracted;
2. **states**: two rows of colour, the truth and the published state, each distracted,
   attentive or unknown; unknown (no label, no decision) is hatched grey, a third kind rather
   than a level between the two; the glance alerts are marked above the rows;
3. **glances** (when the glance channel is given): glances away from the road by target, and
   track loss.

Every colour and mark is in a legend. Written by :func:`~._figures.save_figure`: PNG, PDF or
SVG by the file's suffix.
"""

import numpy as np

from ...pipeline import GLANCE_CLASSES
from ._figures import check_figure_path, paper_figure, save_figure

__all__ = ["plot_timeline", "SCORE_LABEL", "STATE_STYLE", "ALERT_STYLE", "GLANCE_ROWS"]

SCORE_LABEL = "score (training spreads;\ndistracted above the threshold)"
"""The score axis of a saved model's published scores (see the module notes)."""
STATE_STYLE = {1: ("distracted", "#d62728", None), 0: ("attentive", "#2ca02c", None),
               -1: ("unknown", "#ffffff", "////")}
"""Truth and state codes: legend name, colour, hatch."""
ALERT_STYLE = {"long_distraction": ("long-glance alert", "#7b3294", "v"),
               "time_sharing": ("time-sharing alert", "#e66101", "v")}
"""Glance alert kinds (:data:`~distractd.pipeline.ALERT_KINDS`): legend name, colour, marker."""
GLANCE_ROWS = (("off_road", "off road", "#5e3c99"), ("mirror", "mirror", "#1f78b4"),
               ("instrument", "instrument", "#33a02c"), ("lost", "track lost", "#7f7f7f"))
"""Glance panel rows, top to bottom: class of :data:`~distractd.pipeline.GLANCE_CLASSES`, row
name, colour."""
_TRUTH_SHADE = "#fdd0a2"


def plot_timeline(path, t_end, scores, states, truth, rule, *, title, alerts=(), glances=None):
    """Draw one drive's timeline to ``path``; return the figure.

    Parameters
    ----------
    path : str or Path
        Output file; ``.png``, ``.pdf`` or ``.svg`` names the format.
    t_end : array-like of shape (n_windows,)
        Window end times, s.
    scores : array-like of shape (n_windows,)
        Published scores, in units of the model's training spread (NaN: no score).
    states : array-like of shape (n_windows,)
        Published states: 1 distracted, 0 attentive, -1 unknown.
    truth : array-like of shape (n_windows,)
        Window truth: 1, 0, or -1 unknown.
    rule : DecisionRule
        The rule that made ``states``: its smoother's threshold(s) are drawn.
    title : str
        Names the drive, the model and the scheme.
    alerts : sequence of (t_s, kind), default=()
        Glance alerts.
    glances : GlanceTrace or None, default=None
        The per-sample glance channel (:func:`~distractd.pipeline.detect_glances`); None leaves
        the glance panel out.

    Returns
    -------
    matplotlib.figure.Figure
    """
    path = check_figure_path(path)
    t_end, scores = np.asarray(t_end, float), np.asarray(scores, float)
    states, truth = np.asarray(states), np.asarray(truth)
    hop = float(np.median(np.diff(t_end))) if len(t_end) > 1 else 0.0
    ratios = [1.7, 1.0] + ([1.2] if glances is not None else [])
    with paper_figure(0.9 + 1.05 * sum(ratios), len(ratios), ratios) as (figure, axes):
        _score_panel(axes[0], t_end, scores, truth, rule, hop)
        _state_panel(axes[1], t_end, states, truth, alerts, hop)
        if glances is not None:
            _glance_panel(axes[2], glances)
        axes[-1].set_xlabel("time (s)")
        axes[-1].set_xlim(t_end[0] if len(t_end) else 0, t_end[-1] if len(t_end) else 1)
        figure.suptitle(title)
        save_figure(figure, path)
    return figure


def _score_panel(ax, t_end, scores, truth, rule, hop):
    for lo, hi in _runs(t_end, truth == 1, hop):
        ax.axvspan(lo, hi, color=_TRUTH_SHADE, lw=0, zorder=0)
    ax.fill_between([], [], color=_TRUTH_SHADE, label="truth: distracted")
    ax.plot(t_end, scores, lw=0.7, color="#1f4e79", label="score")
    for value, label, style in _thresholds(rule.smoother):
        ax.axhline(value, color="k", lw=0.9, ls=style, label=label)
    ax.set_ylabel(SCORE_LABEL)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, borderaxespad=0)


def _thresholds(smoother):
    """``(value, legend label, line style)`` of the smoother's threshold lines."""
    if smoother.mode == "dwell":
        return [(smoother.on, f"threshold {smoother.on:g}\n(held {smoother.min_dwell_s:g} s)",
                 "--")]
    if smoother.off == smoother.on:
        return [(smoother.on, f"threshold {smoother.on:g}", "--")]
    return [(smoother.on, f"on {smoother.on:g}", "--"), (smoother.off, f"off {smoother.off:g}",
                                                         ":")]


def _state_panel(ax, t_end, states, truth, alerts, hop):
    for row, values in ((1, truth), (0, states)):
        for code, (name, colour, hatch) in STATE_STYLE.items():
            spans = [(lo, hi - lo) for lo, hi in _runs(t_end, values == code, hop)]
            ax.broken_barh(spans, (row + 0.1, 0.8), facecolor=colour, hatch=hatch,
                           edgecolor="#9a9a9a" if hatch else colour, lw=0)
    for code, (name, colour, hatch) in STATE_STYLE.items():
        ax.fill_between([], [], facecolor=colour, hatch=hatch, edgecolor="#9a9a9a",
                        label=name + (" (no label or\nno decision)" if code < 0 else ""))
    for kind, (name, colour, marker) in ALERT_STYLE.items():
        times = [t for t, alert_kind in alerts if alert_kind == kind]
        ax.plot(times, np.full(len(times), 2.2), ls="none", marker=marker, ms=5, color=colour,
                label=name)
    ax.set_yticks([0.5, 1.5], ["state", "truth"])
    ax.set_ylim(0, 2.5)
    ax.tick_params(axis="y", length=0)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, borderaxespad=0)


def _glance_panel(ax, glances):
    t = np.asarray(glances.t, float)
    period = float(np.median(np.diff(t))) if len(t) > 1 else 0.0
    for row, (name, label, colour) in enumerate(reversed(GLANCE_ROWS)):
        spans = [(lo, hi - lo) for lo, hi in _runs(t, glances.glance == GLANCE_CLASSES.index(name),
                                                   period)]
        ax.broken_barh(spans, (row + 0.15, 0.7), facecolor=colour, lw=0)
    ax.set_yticks(np.arange(len(GLANCE_ROWS)) + 0.5, [label for _, label, _ in
                                                      reversed(GLANCE_ROWS)])
    ax.set_ylim(0, len(GLANCE_ROWS))
    ax.tick_params(axis="y", length=0)
    ax.set_ylabel("glance channel")


def _runs(t, mask, step):
    """``(start, end)`` times of the runs of True in ``mask`` over the increasing times ``t``: a
    run lasts until the next time (the last time, until ``step`` after it)."""
    mask = np.asarray(mask, bool)
    edges = np.flatnonzero(np.diff(np.r_[0, mask.astype(np.int8), 0]))
    ends = np.append(t[1:], t[-1] + step) if len(t) else t
    return [(t[lo], ends[hi - 1]) for lo, hi in zip(edges[::2], edges[1::2])]
