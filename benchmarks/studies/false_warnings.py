"""False warnings per hour: the product's alerts on real normal drives and calm simulated drives.

Issue 27, Build 5. Every alert comes from the product's one implementation: the glance channel
through :func:`~distractd.pipeline.detect_glances` and the fatigue channel through
:func:`~distractd.pipeline.detect_fatigue`. Default :class:`PipelineConfig`:
its thresholds come from Euro NCAP, ISO 15007 and the fatigue literature and were chosen before
this study; nothing here is tuned on these drives. ``drive_side`` is the car's.

- **Real normal drives**: the no-task drive (``Drive`` 4, "normal") of every subject file in
  ``--data`` (Taamneh et al. 2017: 36 drivers, 1 Hz gaze footprint on the simulator's screen,
  US left-hand-drive cab), summed over all drivers and over each half (``drivers``: the
  development half, odd positions of the sorted subject ids, on which designs are chosen, and the
  held-out half, which is only reported; ``driver_halves``). Per drive: hours, hours with the road centre learned (alerts are
  possible only then), tracked fraction, the drive's gaze clusters, alerts per kind and per
  hour. The fatigue channel needs an eyelid signal, which this data lacks: it is reported
  unavailable, never as zero. Each alert gets a reason read from the samples (where the away
  samples were from the learned road centre, in which of the drive's gaze clusters, lost
  samples, and how short the glance could truly have been given the sampling period).
- **Simulated drives** (:data:`SIMULATED`): ``--drivers`` drivers (``cohort_seeds(--drivers,
  --seed)``; the default seed was never used in development), drive 2 of each, right-hand
  drive. The calm no-task drive seen by a full 60 Hz tracker and by a 1 Hz gaze-only faceLAB
  export like Taamneh's (``tracker="sparse-gaze"``): the same behaviour under both trackers;
  every alert on it is false by the issue's definition of calm driving. And the same drivers'
  visual-manual drive (awake, glancing down at a phone): its fatigue alerts are false. Each
  alert is also compared with the truth: the true glances away (``glance_alerts.true_glances``:
  runs outside the forward roadway ellipse around the true road direction), the true eyelid
  closure and PERCLOS.
- **Naive floors**, on the same recordings in the same run. Glances: any run of consecutive
  samples outside the forward roadway ellipse (``glance_road_yaw_deg`` x
  ``glance_road_pitch_deg``, the product's default) around the drive's median gaze lasting
  >= 2 s (and >= 3 s, the product's ``glance_long_s``) is an alert; track loss between two away
  samples no longer than ``glance_lost_carry_s`` is part of the run (a blink inside a glance, as
  ISO 15007 counts it), longer track loss ends it.
  Fatigue: :func:`fatigue_floor`. Both see the whole drive (the median), the product only the
  past.

Prints one JSON line per alert, per drive and per set as it goes and appends them to ``--out``.
Run (about 2 min on 2 shared cores):
``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/studies/false_warnings.py``.
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np

from distractd._json import json_ready
from distractd.pipeline import (
    ALERT_KINDS, FATIGUE_ALERT_KINDS, FIELD_INDEX, GLANCE_CLASSES, PipelineConfig, detect_fatigue,
    detect_glances,
)
from distractd.models.evaluation import driver_halves
from distractd.pipeline.formats import read_taamneh
from distractd.simulators import cohort_seeds, simulate_drive_truth
from glance_alerts import bridge_blinks, eyes_mean, tracked_gaze_deg, true_glances


FLOOR_MIN_S = (2.0, 3.0)
"""Run lengths of the naive floor, s: the issue's plain rule and the product's glance_long_s."""

AWAY = [GLANCE_CLASSES.index(name) for name in ("off_road", "mirror", "instrument")]
LOST = GLANCE_CLASSES.index("lost")
UNKNOWN = GLANCE_CLASSES.index("unknown")
ON_ROAD = GLANCE_CLASSES.index("on_road")
MODE_MIN_FRACTION = 0.1
"""Smallest share of a drive's tracked gaze that :func:`gaze_modes` calls a cluster."""
MAY_BE_SHORT_S = 0.5
"""A long-distraction alert whose glance, from its first to its last away sample, is this much
shorter than ``glance_long_s`` may have come from a shorter glance (the samples' spacing), s:
the half second Euro NCAP's target allows for the warning (glance_alerts.py's 3.5 s)."""
SIMULATED = {
    "simulated-calm 60 Hz full": {"protocol": "none", "rate_hz": 60.0, "tracker": "full"},
    "simulated-calm 1 Hz sparse-gaze": {"protocol": "none", "rate_hz": 1.0,
                                        "tracker": "sparse-gaze"},
    "simulated visual-manual 60 Hz full": {"protocol": "visual-manual", "rate_hz": 60.0,
                                           "tracker": "full"},
}
"""The simulated sets: the calm drive under two trackers, and an awake driver's visual-manual
drive (phone glances down: its glance alerts are true ones, its fatigue alerts false)."""


def runs(mask, t):
    """Durations of the runs of consecutive True samples, s: from a run's first sample to the
    sample after its last (the end of the recording plus one period for a run ending there)."""
    edges = np.flatnonzero(np.diff(np.r_[0, mask.astype(np.int8), 0]))
    period = float(np.median(np.diff(t)))
    ends = np.append(t, t[-1] + period)[edges[1::2]]
    return ends - t[edges[0::2]]


def floor_runs(recording, config):
    """The naive floor's off-centre runs (module docstring): their durations, s."""
    yaw, pitch = tracked_gaze_deg(recording, config)
    valid = np.isfinite(yaw) & np.isfinite(pitch)
    if not valid.any():
        return np.empty(0)
    centre = (np.median(yaw[valid]), np.median(pitch[valid]))
    away = bridge_blinks(valid & ~inside(yaw, pitch, centre, config), valid, recording.t,
                         config.glance_lost_carry_s)
    return runs(away, recording.t)


def fatigue_floor(recording, config):
    """A plain fatigue rule on the same drive: eyelid aperture (mean of the eyes with a value)
    at or below ``fatigue_closed_fraction`` of the drive's median aperture is closed; closed
    runs of ``fatigue_microsleep_s`` / ``fatigue_sleep_s`` or more (a missing aperture ends a
    run) and whole minutes with a closed share of ``fatigue_perclos_drowsy`` or more count as
    warnings. None without an eyelid signal."""
    aperture = eyes_mean(recording, "eyelid_{eye}")
    seen = np.isfinite(aperture)
    if not seen.any():
        return None
    closed = aperture <= config.fatigue_closed_fraction * np.median(aperture[seen])
    durations = runs(closed, recording.t)
    minute = ((recording.t - recording.t[0]) // 60.0).astype(int)
    shares = np.bincount(minute, closed) / np.maximum(np.bincount(minute, seen), 1)
    return {"microsleep": int(np.sum(durations >= config.fatigue_microsleep_s)),
            "sleep": int(np.sum(durations >= config.fatigue_sleep_s)),
            "drowsy_minutes": int(np.sum(shares[:-1] >= config.fatigue_perclos_drowsy))}


def fatigue_figures(recording, fatigue):
    """Fatigue alerts per kind, or why there are none to count: the channel needs an eyelid
    signal with the eyes visible; a drive where it never had one is reported unavailable,
    never as zero alerts."""
    if not fatigue.available.any():
        lids = np.isfinite(eyes_mean(recording, "eyelid_{eye}")).any()
        return {"available": False,
                "reason": "eyes never visible" if lids else "no eyelid signal"}
    return {"available": True, "available_fraction": round(float(fatigue.available.mean()), 3),
            "alerts": {kind: sum(a.kind == kind for a in fatigue.alerts)
                       for kind in FATIGUE_ALERT_KINDS}}


def closure_reason(truth, alert, config):
    """What the true eyelid did before a fatigue alert (simulated drives): the longest true
    closure (P80: closure >= 0.8) running into the alert, and the true PERCLOS over the
    channel's span."""
    frames = (truth.t > alert.t - config.fatigue_perclos_window_s) & (truth.t <= alert.t)
    closed = truth.closure[frames] >= 0.8
    run = np.flatnonzero(~closed)
    tail = len(closed) - 1 - run[-1] if len(run) else len(closed)
    period = float(np.median(np.diff(truth.t)))
    return {"true_closed_s": round(tail * period, 2),
            "true_perclos": round(float(closed.mean()), 3) if len(closed) else None}


def drive_line(name, recording, trace, fatigue, config, modes):
    """One drive's figures: hours, alerts per kind and per hour, the floor, fatigue, and the
    gaze clusters with the share of tracked samples the channel put on the road."""
    hours = recording.duration_s / 3600.0
    period = float(np.median(np.diff(recording.t)))
    ready = trace.glance > UNKNOWN
    kinds = {kind: sum(a.kind == kind for a in trace.alerts) for kind in ALERT_KINDS}
    durations = floor_runs(recording, config)
    floor = {f"{m:g}s": int(np.sum(durations >= m)) for m in FLOOR_MIN_S}
    tracked = recording.samples[:, FIELD_INDEX["confidence"]] >= config.confidence_min
    seen = ready & (trace.glance != LOST)
    return {"bench": "false_warnings", "set": name, "drive": recording.meta["recording_id"],
            "hours": round(hours, 4), "ready_hours": round(float(ready.sum()) * period / 3600.0, 4),
            "tracked_fraction": round(float(tracked.mean()), 3),
            "on_road_fraction": round(float(np.mean(trace.glance[seen] == ON_ROAD)), 3)
            if seen.any() else None,
            "gaze_clusters": modes, "glance_alerts": kinds,
            "glance_per_h": round(sum(kinds.values()) / hours, 2), "floor_alerts": floor,
            "fatigue": fatigue_figures(recording, fatigue),
            "fatigue_floor": fatigue_floor(recording, config)}


def gaze_modes(recording, config):
    """The drive's gaze clusters, largest first: the densest 2-degree bin of tracked gaze, then
    the densest outside the forward roadway ellipse around each one found, while one holds at
    least :data:`MODE_MIN_FRACTION` of the tracked samples. Rows of (yaw, pitch, fraction)."""
    yaw, pitch = tracked_gaze_deg(recording, config)
    left = np.isfinite(yaw) & np.isfinite(pitch)
    total, modes = max(int(left.sum()), 1), []
    while left.sum() >= MODE_MIN_FRACTION * total:
        counts, ye, pe = np.histogram2d(yaw[left], pitch[left], bins=(
            np.arange(-60.0, 62.0, 2.0), np.arange(-40.0, 42.0, 2.0)))
        i, j = np.unravel_index(np.argmax(counts), counts.shape)
        centre = (ye[i] + 1.0, pe[j] + 1.0)
        near = left & (inside(yaw, pitch, centre, config))
        if near.sum() < MODE_MIN_FRACTION * total:
            break
        modes.append((round(float(np.median(yaw[near])), 1),
                      round(float(np.median(pitch[near])), 1),
                      round(float(near.sum()) / total, 2)))
        left &= ~near
    return modes


def inside(yaw, pitch, centre, config):
    """Whether gaze lies inside the forward roadway ellipse around ``centre`` (degrees)."""
    return ((yaw - centre[0]) / config.glance_road_yaw_deg) ** 2 + \
        ((pitch - centre[1]) / config.glance_road_pitch_deg) ** 2 <= 1.0


def gaze_reason(recording, trace, alert, config, modes):
    """What the gaze did over an alert's glances, read from the samples: where the away samples
    were from the learned road centre, which of the drive's gaze clusters (``modes``) holds
    most of them, the lost samples, and how short each glance could truly have been (from its
    first to its last away sample: the sampling period decides how far that is from the
    channel's duration, which starts at the last road sample)."""
    yaw, pitch = tracked_gaze_deg(recording, config)
    t = recording.t
    at = int(np.searchsorted(t, alert.t))
    span = (t > alert.glances[0][0]) & (t <= alert.t)
    away = span & np.isin(trace.glance, AWAY) & np.isfinite(yaw)
    dyaw = float(np.median(yaw[away] - trace.road_yaw_deg[at])) if away.any() else np.nan
    dpitch = float(np.median(pitch[away] - trace.road_pitch_deg[at])) if away.any() else np.nan
    shares = [float(np.mean(inside(yaw[away], pitch[away], m, config))) if away.any() else 0.0
              for m in modes]
    road = [inside(trace.road_yaw_deg[at], trace.road_pitch_deg[at], m, config) for m in modes]
    cluster = None
    if shares and max(shares) >= 0.5:
        cluster = int(np.argmax(shares))
    shortest = []
    for a, b in alert.glances:
        times = t[(t > a) & (t <= b) & np.isin(trace.glance, AWAY)]
        shortest.append(round(float(times[-1] - times[0]), 2) if len(times) else 0.0)
    return {"away_samples": int(away.sum()),
            "lost_samples": int(np.sum(span & (trace.glance == LOST))),
            "classes": sorted({GLANCE_CLASSES[c] for c in trace.glance[span & np.isin(
                trace.glance, AWAY)]}),
            "offset_deg": [round(dyaw, 1), round(dpitch, 1)],
            "road_centre_deg": [round(float(trace.road_yaw_deg[at]), 1),
                                round(float(trace.road_pitch_deg[at]), 1)],
            "gaze_cluster": cluster, "cluster_is_road_centre":
                bool(road[cluster]) if cluster is not None else None,
            "glances_s": [round(b - a, 2) for a, b in alert.glances],
            "shortest_true_s": shortest}


def truth_reason(truth, alert, config):
    """What the true gaze did (simulated drives): the longest true glance away in progress over
    the alert's glances, the true time away within the time-sharing window before the alert,
    and the planned targets looked at."""
    starts, ends = true_glances(truth, config)
    hit = (ends >= alert.glances[0][0]) & (starts <= alert.t)
    window = alert.t - config.glance_sharing_window_s
    away_s = np.clip(np.minimum(ends, alert.t) - np.maximum(starts, window), 0.0, None).sum()
    planned = truth.glances()
    looked = (planned.end_s >= alert.glances[0][0]) & (planned.start_s <= alert.t)
    return {"longest_true_s": round(float(np.max(np.minimum(ends[hit], alert.t) - starts[hit])),
                                    2) if hit.any() else 0.0,
            "true_away_in_window_s": round(float(away_s), 2),
            "targets": sorted(set(planned.target[looked].tolist()))}


def reason_label(alert, reason, config):
    """One label per alert for the summary: against the true gaze when there is one, else
    where the away samples were."""
    if "longest_true_s" in reason:
        if alert.kind == "long_distraction":
            return "true glance >= 2 s" if reason["longest_true_s"] >= 2.0 else \
                "true glance < 2 s"
        return "true away >= 10 s in 30 s" if \
            reason["true_away_in_window_s"] >= config.glance_sharing_s else \
            "true away < 10 s in 30 s"
    if reason["gaze_cluster"] is not None and not reason["cluster_is_road_centre"]:
        return "another gaze cluster"
    return "off the road centre"


def measure(name, recording, config, emit, truth=None):
    """Run the channels over one drive; emit one line per alert (with its reason), then the
    drive's line with the count of alerts per reason label, and return that line."""
    trace = detect_glances(recording, config)
    fatigue = detect_fatigue(recording, config)
    modes = gaze_modes(recording, config)
    line = drive_line(name, recording, trace, fatigue, config, modes)
    line["reasons"] = {}
    for alert in trace.alerts:
        reason = {**gaze_reason(recording, trace, alert, config, modes),
                  **(truth_reason(truth, alert, config) if truth is not None else {})}
        label = reason_label(alert, reason, config)
        if alert.kind == "long_distraction" and \
                max(reason["shortest_true_s"]) < config.glance_long_s - MAY_BE_SHORT_S:
            label += f" (may be < {config.glance_long_s - MAY_BE_SHORT_S:g} s: sampling)"
        line["reasons"][label] = line["reasons"].get(label, 0) + 1
        emit({"bench": "false_warnings_alert", "set": name, "drive": line["drive"],
              "kind": alert.kind, "t": round(alert.t, 2), "away_s": round(alert.away_s, 2),
              "reason": label, **reason})
    for alert in fatigue.alerts:
        emit({"bench": "false_warnings_alert", "set": name, "drive": line["drive"],
              "kind": alert.kind, "t": round(alert.t, 2), "closed_s": alert.closed_s,
              "perclos": alert.perclos, "closures": alert.closures,
              **(closure_reason(truth, alert, config) if truth is not None else {})})
    emit(line)
    return line


def summary(name, lines, hours_key="hours"):
    """Pooled and per-drive figures of one set."""
    hours = sum(line[hours_key] for line in lines)
    glance = sum(sum(line["glance_alerts"].values()) for line in lines)
    by_kind = {k: sum(line["glance_alerts"][k] for line in lines) for k in ALERT_KINDS}
    floor = {m: sum(line["floor_alerts"][m] for line in lines) for m in lines[0]["floor_alerts"]}
    fatigue = [line["fatigue"] for line in lines]
    available = [f for f in fatigue if f["available"]]
    fatigue_kinds = {k: sum(f["alerts"][k] for f in available) for k in FATIGUE_ALERT_KINDS}
    fatigue_hours = sum(line[hours_key] for line in lines if line["fatigue"]["available"])
    with_lids = [line for line in lines if line["fatigue_floor"] is not None]
    lid_hours = sum(line[hours_key] for line in with_lids)
    reasons = {}
    for line in lines:
        for label, n in line["reasons"].items():
            reasons[label] = reasons.get(label, 0) + n
    worst = sorted(lines, key=lambda line: -line["glance_per_h"])[:3]
    return {"bench": "false_warnings_summary", "set": name, "drives": len(lines),
            "hours": round(hours, 2), "hours_basis": hours_key,
            "glance_alerts": by_kind, "glance_per_h": round(glance / hours, 2),
            "drives_with_alert": sum(sum(line["glance_alerts"].values()) > 0 for line in lines),
            "glance_per_h_median_drive": round(float(np.median(
                [line["glance_per_h"] for line in lines])), 2),
            "alerts_by_reason": reasons,
            "floor_per_h": {m: round(n / hours, 2) for m, n in floor.items()},
            "fatigue_available_drives": len(available),
            "fatigue_unavailable_reasons": sorted({f["reason"] for f in fatigue
                                                   if not f["available"]}),
            "fatigue_alerts": fatigue_kinds if available else None,
            "fatigue_per_h": round(sum(fatigue_kinds.values()) / fatigue_hours, 2)
            if available else None,
            "fatigue_floor_per_h": {k: round(sum(line["fatigue_floor"][k] for line in with_lids)
                                             / lid_hours, 2) for k in with_lids[0]["fatigue_floor"]}
            if with_lids else None,
            "worst": [line["drive"] for line in worst]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data/taamneh")
    parser.add_argument("--subjects", nargs="*", default=[],
                        help="subject files to read (e.g. T051); default all")
    parser.add_argument("--drivers", type=int, default=12)
    parser.add_argument("--seed", type=int, default=20261127)
    parser.add_argument("--out", default="false-warnings.jsonl")
    args = parser.parse_args()

    def emit(line):
        text = json.dumps(json_ready(line))   # NaN (no away sample with gaze) as null
        print(text, flush=True)
        with open(args.out, "a") as file:
            file.write(text + "\n")

    start_time = time.perf_counter()
    config = PipelineConfig(drive_side="left")   # the study's US cab
    paths = sorted(Path(args.data).glob("T*.csv"))
    if not paths:
        raise SystemExit(f"--data {args.data}: no T*.csv subject files")
    development, held_out = driver_halves([path.stem for path in paths])
    halves = {"all": {path.stem for path in paths}, "development": development,
              "held-out": held_out}
    lines = [measure("taamneh-normal", recording, config, emit)
             for path in paths if not args.subjects or path.stem in args.subjects
             for recording in read_taamneh(path, drives=(4,))]
    for basis in ("hours", "ready_hours"):
        for half, drivers in halves.items():
            mine = [line for line in lines if line["drive"].split("-")[0] in drivers]
            if mine:
                emit({**summary("taamneh-normal", mine, basis), "drivers": half,
                      "seconds": round(time.perf_counter() - start_time, 1)})

    config = PipelineConfig(drive_side="right")  # the simulator's car
    for name, options in SIMULATED.items():
        start_time = time.perf_counter()
        lines = []
        for seed in cohort_seeds(args.drivers, args.seed):
            recording, truth = simulate_drive_truth(seed, drive=2, **options)
            lines.append(measure(name, recording, config, emit, truth))
        emit({**summary(name, lines), "seed": args.seed,
              "seconds": round(time.perf_counter() - start_time, 1)})


if __name__ == "__main__":
    main()
