"""The timeline of one evaluated drive: what a researcher looks at first.

Four stacked panels over the drive's clock, sharing the time axis:

1. the ground truth (shaded where distracted) under the detector's score, with the decision
   threshold;
2. the published state (distracted / attentive / unknown) against the truth;
3. the glance channel where it ran: glances away from the road (by target) and track loss, with the
   glance alerts as markers;
4. the online segments, coloured by their label, when a segmentation is given.

Written to a PNG (or any format matplotlib knows by the file's extension).
"""

import numpy as np

__all__ = ["plot_timeline"]

_STATE_Y = {1: 1.0, 0: 0.0, -1: 0.5}
_STATE_COLOURS = {1: "#d62728", 0: "#2ca02c", -1: "#bbbbbb"}


def plot_timeline(path, t_end, scores, states, truth, *, threshold=0.0, glances=None,
                  lost=None, alerts=None, segments=None, title=""):
    """Draw one drive's timeline to ``path``.

    Parameters
    ----------
    path : str or Path
        Output file; the format follows its extension.
    t_end : array-like of shape (n_windows,)
        Window end times, s.
    scores : array-like of shape (n_windows,)
        Detector scores (NaN: no score).
    states : array-like of shape (n_windows,)
        Published states by label: 1 distracted, 0 attentive, -1 unknown.
    truth : array-like of shape (n_windows,)
        Window truth: 1, 0, or -1 unknown.
    threshold : float, default=0.0
        The decision threshold drawn on the score panel.
    glances : sequence of (start_s, end_s, target) or None
        Glances away from the road.
    lost : sequence of (start_s, end_s) or None
        Stretches of track loss.
    alerts : sequence of (t_s, kind) or None
        Glance alerts.
    segments : sequence of dict or None
        Segments with ``start``, ``end`` (s) and ``label`` ("distracted", "attentive", "unknown").
    title : str, default=""
    """
    import matplotlib  # heavy: imported only when a plot is asked for

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    t_end, scores = np.asarray(t_end, float), np.asarray(scores, float)
    states, truth = np.asarray(states), np.asarray(truth)
    n_panels = 3 + (segments is not None)
    fig, axes = plt.subplots(n_panels, 1, sharex=True, figsize=(12, 1.6 + 1.5 * n_panels),
                             gridspec_kw={"height_ratios": [2.2, 1, 1, 0.6][:n_panels]})
    score_ax, state_ax, glance_ax = axes[:3]
    for lo, hi in _runs(t_end, truth == 1):
        for ax in (score_ax, state_ax):
            ax.axvspan(lo, hi, color="#fdd0a2", lw=0, zorder=0)
    score_ax.plot(t_end, scores, lw=0.8, color="#1f77b4", label="score")
    score_ax.axhline(threshold, color="k", lw=0.6, ls="--", label="threshold")
    score_ax.set_ylabel("score")
    score_ax.legend(loc="upper right", fontsize=8, frameon=False,
                    title="shaded: truth distracted", title_fontsize=8)
    for label, colour in _STATE_COLOURS.items():
        mask = states == label
        state_ax.scatter(t_end[mask], np.full(mask.sum(), _STATE_Y[label]), s=2, color=colour,
                         label={1: "distracted", 0: "attentive", -1: "unknown"}[label])
    state_ax.set_yticks([0, 0.5, 1], ["attentive", "unknown", "distracted"], fontsize=8)
    state_ax.set_ylim(-0.3, 1.3)
    state_ax.set_ylabel("state")
    targets = sorted({target for _, _, target in glances or ()})
    for start, end, target in glances or ():
        glance_ax.broken_barh([(start, end - start)], (targets.index(target) + 0.6, 0.8),
                              color="#9467bd")
    for start, end in lost or ():
        glance_ax.broken_barh([(start, end - start)], (0.1, 0.8), color="#7f7f7f")
    for t, kind in alerts or ():
        glance_ax.axvline(t, color="#d62728" if kind == "long_distraction" else "#ff7f0e",
                          lw=1.0)
    glance_ax.set_yticks(np.arange(len(targets) + 1) + 0.5, ["lost", *targets], fontsize=7)
    glance_ax.set_ylim(0, len(targets) + 1.1)
    glance_ax.set_ylabel("glances")
    if segments is not None:
        segment_ax = axes[3]
        for segment in segments:
            colour = {"distracted": "#d62728", "attentive": "#2ca02c"}.get(segment["label"],
                                                                          "#bbbbbb")
            segment_ax.broken_barh([(segment["start"], segment["end"] - segment["start"])],
                                   (0, 1), color=colour, edgecolor="white", lw=0.3)
        segment_ax.set_yticks([])
        segment_ax.set_ylabel("segments")
    axes[-1].set_xlabel("time (s)")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _runs(t, mask):
    """``(start, end)`` times of the runs of True in ``mask`` over the times ``t``."""
    mask = np.asarray(mask, bool)
    edges = np.flatnonzero(np.diff(np.r_[0, mask.astype(np.int8), 0]))
    return [(t[lo], t[min(hi, len(t) - 1)]) for lo, hi in zip(edges[::2], edges[1::2])]
