"""Euro NCAP glance alerts against the simulated drivers' true gaze: hits, latency, false alerts.

Two references, both ISO 15007 glances (from the start of the transition away to the start of
the transition back; the return saccade is not part of the glance), both from the simulator's
truth before the tracker (no noise, no track loss):

- **true gaze** (the main one): the simulator's gaze judged against its true road direction
  (bends and hills included) with the glance channel's own forward-roadway ellipse. A *true
  glance away* is a run of frames outside it, runs back inside shorter than
  ``glance_min_dip_s`` bridged; its edges are the starts of the planned saccades
  (``GazePlan.saccade_start``) that carried the gaze out and back across the ellipse's edge, or
  the frame where a fixation's slow drift crossed it. For a glance to a target this is exactly
  the simulator's own :meth:`DriveTruth.glances`; the ellipse also counts road fixations far out
  in the road scatter and chains of mirror, cluster and such road fixations, which the
  channel, seeing only the gaze, must treat as away too.
- **planned targets**: the simulator's glances to its targets (:meth:`DriveTruth.glances`)
  chained when one follows another within ``glance_min_dip_s``; road fixations never count.

Figures per configuration (every driver drives one visual-manual and one no-task drive):

- ``hit_rate``: true glances away of >= 3 s with a long-distraction alert within 3.5 s of
  their start (Euro NCAP's 3 s plus the 0.5 s the target allows for the warning);
  ``target_hit_rate`` the same for the planned targets' glances (``target_long_glances``);
- ``held_rate``: the same, also counting a glance that began while the channel's glance in
  progress had raised its alert within ``alert_hold_s`` (2 s) before (the channel merged it
  with the glance before, through a dip too short for it to see; the published state is
  distracted through that hold);
- ``short_alone``: long-distraction alerts whose true glance (the one in progress at the alert,
  or ended within 0.5 s before it) lasted < 2 s — the alert had no glance to be based on;
- ``false_long_per_h`` / ``time_sharing_per_h``: on the no-task drives, long-distraction alerts
  counted in ``short_alone`` and the time-sharing alerts with less than ``glance_sharing_s`` of
  true glances away in the ``glance_sharing_window_s`` before them (the calm drives hold the
  drivers' own time-sharing episodes at the naturalistic rate: an alert there is a true one),
  per hour; ``true_sharing`` counts the others.

The ``naive floor`` configuration is no glance channel: a tracked sample outside the
forward-roadway ellipse around the drive's median tracked gaze (the whole drive's, which the
product never has) is away, track loss between two away samples no longer than
``glance_lost_carry_s`` is part of the glance (a blink inside a glance, as ISO 15007 counts it;
:func:`bridge_blinks`) and longer track loss ends a run, a run alerts ``glance_long_s`` after its
first sample, and time sharing alerts when the away samples of the last
``glance_sharing_window_s`` sum to ``glance_sharing_s`` (counting again after each alert).

Prints one JSON line per configuration and appends it to ``--out``. Run (seconds per cohort):
``.venv/bin/python benchmarks/studies/glance_alerts.py --drivers 12``.
"""

import argparse
import json
import time
from dataclasses import dataclass

import numpy as np

from distractd.pipeline import FIELD_INDEX, PipelineConfig, detect_glances
from distractd.simulators import cohort_seeds, simulate_drive_truth

CONFIGS = {
    "default": {},
    "naive floor": {},
    "no head fallback": {"glance_head_yaw_deg": 0.0, "glance_head_pitch_deg": 0.0},
    "no lost carry": {"glance_lost_carry_s": 0.0},
    "lost carry 1 s": {"glance_lost_carry_s": 1.0},
    "head memory 300 s": {"glance_head_memory_s": 300.0},
}
ALERT_HOLD_S = 2.0   # DecisionRule's alert_hold_s


def chained(starts, ends, min_dip_s):
    """Glances in time order with every gap back shorter than ``min_dip_s`` bridged (ISO 15007
    glances through a dip too short to be a glance back)."""
    merged_starts, merged_ends = [], []
    for start, end in zip(starts, ends):
        if merged_starts and start - merged_ends[-1] < min_dip_s:
            merged_ends[-1] = max(merged_ends[-1], end)
        else:
            merged_starts.append(start)
            merged_ends.append(end)
    return np.array(merged_starts), np.array(merged_ends)


def transition_start(plan, before, after):
    """Where the gaze began to move between frame times ``before`` and ``after`` (arrays, s):
    the start of the simulator's planned saccade in motion then (the ISO 15007 transition),
    or ``after`` where a fixation's slow drift crossed the ellipse's edge between them."""
    i = np.maximum(np.searchsorted(plan.saccade_start, after, side="right") - 1, 0)
    moving = plan.start[i] > before
    return np.where(moving, plan.saccade_start[i], after)


def true_glances(truth, config):
    """Start and end times of the true glances away (see the module docstring)."""
    dyaw = (truth.gaze_yaw - truth.road_centre[:, 0]) / config.glance_road_yaw_deg
    dpitch = (truth.gaze_pitch - truth.road_centre[:, 1]) / config.glance_road_pitch_deg
    away = np.r_[False, dyaw ** 2 + dpitch ** 2 > 1.0, False]
    edges = np.flatnonzero(np.diff(away.astype(np.int8)))
    t = truth.t
    first_away, back = edges[0::2], np.minimum(edges[1::2], len(t) - 1)
    starts = transition_start(truth.gaze, t[np.maximum(first_away - 1, 0)], t[first_away])
    ends = np.where(edges[1::2] < len(t), transition_start(truth.gaze, t[back - 1], t[back]),
                    t[-1])
    return chained(starts, ends, config.glance_min_dip_s)


@dataclass
class Alerts:
    """One drive's alerts: long-distraction and time-sharing alert times (s), and per sample
    (``t``) whether the detector had a glance away in progress."""

    long: np.ndarray
    sharing: np.ndarray
    t: np.ndarray
    off_road: np.ndarray


def product_alerts(recording, config):
    """The glance channel's alerts (:func:`~distractd.pipeline.detect_glances`)."""
    trace = detect_glances(recording, config)
    times = {kind: np.array([a.t for a in trace.alerts if a.kind == kind])
             for kind in ("long_distraction", "time_sharing")}
    return Alerts(times["long_distraction"], times["time_sharing"], trace.t,
                  trace.off_road_s > 0.0)


def eyes_mean(recording, field):
    """Per-sample mean of the right and left eye's ``field`` (``"gaze_{eye}_yaw"``...), over
    the eyes with a value (NaN when neither has one)."""
    eyes = recording.samples[:, [FIELD_INDEX[field.format(eye=eye)] for eye in ("r", "l")]]
    n = np.isfinite(eyes).sum(axis=1)
    return np.where(n > 0, np.nansum(eyes, axis=1) / np.maximum(n, 1), np.nan)


def tracked_gaze_deg(recording, config):
    """Per-sample gaze (yaw, pitch), degrees: the mean of the eyes with a value, NaN in track
    loss (confidence below ``config.confidence_min``) or with neither eye."""
    tracked = recording.samples[:, FIELD_INDEX["confidence"]] >= config.confidence_min
    return [np.degrees(np.where(tracked, eyes_mean(recording, f"gaze_{{eye}}_{axis}"), np.nan))
            for axis in ("yaw", "pitch")]


def bridge_blinks(away, valid, t, max_s):
    """``away`` with every run of untracked samples (``~valid``) between two away samples made
    away when the tracked samples either side are at most ``max_s`` apart: a blink inside a
    glance belongs to the glance (ISO 15007); longer track loss, or loss next to a road sample,
    is left as it is."""
    tracked = np.flatnonzero(valid)
    if len(tracked) < 2:
        return away
    before, after = tracked[:-1], tracked[1:]
    bridged = (after - before > 1) & away[before] & away[after] & (t[after] - t[before] <= max_s)
    out = away.copy()
    for lo, hi in zip(before[bridged], after[bridged]):
        out[lo + 1:hi] = True
    return out


def naive_alerts(recording, config):
    """The naive floor (module docstring): away = a tracked sample outside the forward roadway
    ellipse around the drive's median tracked gaze, blinks inside a glance bridged."""
    yaw, pitch = tracked_gaze_deg(recording, config)
    t, valid = recording.t, np.isfinite(yaw) & np.isfinite(pitch)
    if not valid.any():
        return Alerts(np.empty(0), np.empty(0), t, valid)
    centre = (np.median(yaw[valid]), np.median(pitch[valid]))
    away = valid & (((yaw - centre[0]) / config.glance_road_yaw_deg) ** 2
                    + ((pitch - centre[1]) / config.glance_road_pitch_deg) ** 2 > 1.0)
    away = bridge_blinks(away, valid, t, config.glance_lost_carry_s)
    edges = np.flatnonzero(np.diff(np.r_[0, away.astype(np.int8), 0]))
    starts, ends = t[edges[0::2]], t[edges[1::2] - 1]
    long = starts[ends - starts >= config.glance_long_s] + config.glance_long_s
    dt = np.diff(t, append=t[-1])
    away_s = np.r_[0.0, np.cumsum(np.where(away, dt, 0.0))]
    window_start = np.searchsorted(t, t - config.glance_sharing_window_s)
    sharing, since = [], 0
    while True:
        start = np.maximum(window_start, since)
        over = np.flatnonzero(away_s[1:] - away_s[start] >= config.glance_sharing_s)
        over = over[over >= since]
        if not len(over):
            break
        sharing.append(t[over[0]])
        since = over[0] + 1
    return Alerts(long, np.array(sharing), t, away)


FLOORS = {"naive floor": naive_alerts}
"""The configurations whose alerts come from a floor, not from the glance channel."""


def planned_glances(truth, config):
    """Start and end times of the planned targets' glances, chained (module docstring)."""
    planned = truth.glances()
    return chained(planned.start_s, planned.end_s, config.glance_min_dip_s)


def judge(alerts, starts, ends):
    """Hits of >= 3 s true glances, those held by an earlier alert, latencies, and long alerts
    without a >= 2 s true glance."""
    longs = alerts.long
    hits, held, latencies = 0, 0, []
    long_glances = np.flatnonzero(ends - starts >= 3.0)
    for i in long_glances:
        raised = longs[(longs >= starts[i]) & (longs <= starts[i] + 3.5)]
        if len(raised):
            hits += 1
            latencies.append(raised[0] - starts[i])
            continue
        at = min(np.searchsorted(alerts.t, starts[i]), len(alerts.t) - 1)
        before = longs[(longs < starts[i]) & (longs >= starts[i] - ALERT_HOLD_S)]
        held += bool(len(before)) and bool(alerts.off_road[at])
    unexplained = 0
    for t in longs:
        current = (starts <= t) & (ends >= t - 0.5)
        if not np.any(current & (ends - starts >= 2.0)):
            unexplained += 1
    return len(long_glances), hits, held, latencies, unexplained


def false_sharing(alerts, starts, ends, config):
    """Time-sharing alerts with less than ``glance_sharing_s`` of true glances away within the
    ``glance_sharing_window_s`` before them."""
    false = 0
    for t in alerts.sharing:
        window = t - config.glance_sharing_window_s
        away = np.clip(np.minimum(ends, t) - np.maximum(starts, window), 0.0, None).sum()
        false += int(away < config.glance_sharing_s)
    return false


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drivers", type=int, default=12)
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--out", default="glance-alerts.jsonl")
    args = parser.parse_args()

    drives = [(simulate_drive_truth(seed, drive=1, protocol="visual-manual"),
               simulate_drive_truth(seed, drive=2, protocol="none"))
              for seed in cohort_seeds(args.drivers, args.seed)]  # (task, calm) per driver
    for name in args.configs:
        start_time = time.perf_counter()
        config = PipelineConfig(drive_side="right", **CONFIGS[name])  # the simulator's car
        detect = FLOORS.get(name, product_alerts)
        total = hits = held = short_alone = calm_false = calm_sharing = true_sharing = 0
        target_total = target_hits = 0
        latencies, calm_hours = [], 0.0
        for pair in drives:
            for calm, (recording, truth) in enumerate(pair):
                alerts = detect(recording, config)
                n, h, k, lat, unexplained = judge(alerts, *true_glances(truth, config))
                total, hits, held = total + n, hits + h, held + k
                latencies += lat
                short_alone += unexplained
                n, h = judge(alerts, *planned_glances(truth, config))[:2]
                target_total, target_hits = target_total + n, target_hits + h
                if calm:
                    calm_false += unexplained
                    wrong = false_sharing(alerts, *true_glances(truth, config), config)
                    calm_sharing += wrong
                    true_sharing += len(alerts.sharing) - wrong
                    calm_hours += recording.duration_s / 3600.0
        line = {"bench": "glance_alerts", "config": name, "drivers": args.drivers,
                "seed": args.seed, "long_glances": total, "hit_rate": round(hits / total, 3),
                "held_rate": round((hits + held) / total, 3), "target_long_glances": target_total,
                "target_hit_rate": round(target_hits / target_total, 3),
                "latency_s_median": round(float(np.median(latencies)), 2) if latencies else None,
                "short_alone": short_alone,
                "false_long_per_h": round(calm_false / calm_hours, 2),
                "time_sharing_per_h": round(calm_sharing / calm_hours, 2),
                "true_sharing": true_sharing,
                "calm_hours": round(calm_hours, 2),
                "seconds": round(time.perf_counter() - start_time, 1)}
        print(json.dumps(line), flush=True)
        with open(args.out, "a") as file:
            file.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
