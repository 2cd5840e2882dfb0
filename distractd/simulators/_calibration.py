"""What a gaze tracker delivered on and off task: the statistics that compare simulated drives with
real ones (Taamneh et al. 2017's texting drives, doi:10.1038/sdata.2017.110).

Per drive and condition — ``no-task`` (a drive without a task section), ``off-task`` and
``on-task`` (the task-free and task samples of a drive with a task) — the valid fraction (samples
with gaze), the gaze SD in yaw and pitch over the valid samples (degrees), the lengths of the runs
of lost samples (a run belongs to the condition of its first sample) and, on task, of the runs of
valid samples between them. :func:`summarise_tracking` pools them over drives.
"""

import numpy as np

from ..pipeline import FIELD_INDEX

__all__ = ["CONDITIONS", "MIN_TRACKED", "tracking_statistics", "summarise_tracking"]

CONDITIONS = ("no-task", "off-task", "on-task")
MIN_TRACKED = 0.1
"""Drives with gaze in fewer of their samples are left out: the tracker did not record them
(in Taamneh's files such a drive's gaze is ``NA`` throughout)."""


def tracking_statistics(recording):
    """The tracking statistics of one drive.

    Parameters
    ----------
    recording : Recording
        Labels 1 on task, 0 off task (-1 unknown: left out).

    Returns
    -------
    dict or None
        Per condition present: ``valid`` (fraction), ``sd_yaw_deg``, ``sd_pitch_deg`` (NaN with
        fewer than 3 valid samples), ``loss_runs`` and ``valid_runs`` (lists of run lengths in
        samples); ``lag1`` the lag-1 autocorrelation of consecutive valid off-task (or no-task)
        gaze, yaw and pitch. None when fewer than :data:`MIN_TRACKED` of the samples hold gaze.
    """
    s = recording.samples
    yaw = np.degrees(s[:, FIELD_INDEX["gaze_r_yaw"]])
    pitch = np.degrees(s[:, FIELD_INDEX["gaze_r_pitch"]])
    valid = np.isfinite(yaw) & np.isfinite(pitch) & (s[:, FIELD_INDEX["confidence"]] > 0.5)
    if valid.mean() < MIN_TRACKED:
        return None
    labels = recording.labels
    tasked = bool((labels == 1).any())
    masks = ({"off-task": labels == 0, "on-task": labels == 1} if tasked
             else {"no-task": labels == 0})
    loss_start, loss_length = _runs(~valid)
    valid_start, valid_length = _runs(valid)
    out = {}
    for condition, mask in masks.items():
        kept = mask & valid
        out[condition] = {
            "valid": float(valid[mask].mean()) if mask.any() else np.nan,
            "sd_yaw_deg": float(np.std(yaw[kept])) if kept.sum() >= 3 else np.nan,
            "sd_pitch_deg": float(np.std(pitch[kept])) if kept.sum() >= 3 else np.nan,
            "loss_runs": loss_length[mask[loss_start]].tolist(),
            "valid_runs": valid_length[mask[valid_start]].tolist(),
        }
    calm = labels == 0
    pair = valid[1:] & valid[:-1] & calm[1:] & calm[:-1]
    out["lag1"] = [float(np.corrcoef(v[:-1][pair], v[1:][pair])[0, 1]) if pair.sum() >= 10
                   else np.nan for v in (yaw, pitch)]
    return out


def summarise_tracking(statistics):
    """Pool per-drive statistics (``None`` entries are skipped).

    Returns
    -------
    dict
        Per condition: ``drives``; the median and quartiles over drives of ``valid``,
        ``sd_yaw_deg`` and ``sd_pitch_deg``; of the pooled loss runs the ``count``, ``mean``,
        ``median``, 90th percentile, the share of one-sample runs and the share of lost samples
        in runs of 5 or more; of the valid runs the median and 90th percentile. ``lag1`` (yaw,
        pitch): the median over drives (None without a defined value).
    """
    statistics = [item for item in statistics if item is not None]
    out = {}
    for condition in CONDITIONS:
        items = [item[condition] for item in statistics if condition in item]
        if not items:
            continue
        summary = {"drives": len(items)}
        for name in ("valid", "sd_yaw_deg", "sd_pitch_deg"):
            values = np.array([item[name] for item in items], dtype=np.float64)
            values = values[np.isfinite(values)]
            summary[name] = ([round(float(v), 3) for v in np.percentile(values, [25, 50, 75])]
                             if len(values) else None)
        loss = np.concatenate([item["loss_runs"] for item in items]).astype(np.int64)
        valid = np.concatenate([item["valid_runs"] for item in items]).astype(np.int64)
        summary["loss_runs"] = ({
            "count": int(len(loss)), "mean": round(float(loss.mean()), 2),
            "median": float(np.median(loss)), "p90": float(np.percentile(loss, 90)),
            "share_1": round(float(np.mean(loss == 1)), 3),
            "lost_in_runs_5": round(float(loss[loss >= 5].sum() / loss.sum()), 3),
        } if len(loss) else None)
        summary["valid_runs"] = ({"median": float(np.median(valid)),
                                  "p90": float(np.percentile(valid, 90))} if len(valid) else None)
        out[condition] = summary
    lag1 = np.array([item["lag1"] for item in statistics], dtype=np.float64).reshape(-1, 2)
    out["lag1"] = [round(float(np.median(v[np.isfinite(v)])), 3) if np.isfinite(v).any()
                   else None for v in lag1.T]
    return out


def _runs(mask):
    """Starts and lengths of the runs of True in ``mask``."""
    edges = np.diff(np.r_[0, mask.astype(np.int8), 0])
    starts = np.flatnonzero(edges == 1)
    return starts, np.flatnonzero(edges == -1) - starts
