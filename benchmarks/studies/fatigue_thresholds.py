"""The fatigue channel on alert simulated drivers: false fatigue alerts per hour, and the PERCLOS
and blink-duration levels of alert driving the drowsiness thresholds must stand above.

Every driver of a cohort drives one no-task drive and one visual-manual drive (looks down at a
phone: lids lower, eyes lost) of ``--minutes``; none of them is drowsy, so every fatigue alert is
false. Figures per protocol, from :func:`~distractd.pipeline.detect_fatigue` at the defaults:

- ``alerts_per_h``: microsleep, sleep and drowsiness alerts per hour;
- ``perclos`` / ``blink_duration_s``: percentiles over drivers and time of the per-sample values
  (P80 PERCLOS and mean blink duration over ``fatigue_perclos_window_s``), and each driver's
  maximum (the drowsiness rule fires on a driver's worst minute);
- ``available``: the share of samples with a fatigue state.

Naive floors measured in the same run, on the same samples:

- ``naive_closure_per_h``: "eyes closed" = an eyelid below the blink threshold (0.5) or the gaze
  lost (a blink detector's track-loss fallback), a run of 1 s or more an alert: what a rule
  without the eyes-visible gate and the per-driver level raises;
- ``naive_perclos_per_h``: drowsiness from PERCLOS >= 10 % alone (no blink-duration condition),
  once per episode (re-armed below 6 %).

Prints one JSON line per protocol. Run:
``.venv/bin/python benchmarks/studies/fatigue_thresholds.py --drivers 12 --seed 2711``.
"""

import argparse
import json
import time

import numpy as np

from distractd.pipeline import FIELD_INDEX, PipelineConfig, detect_fatigue
from distractd.simulators import cohort_seeds, simulate_drive

PROTOCOLS = ("none", "visual-manual")
_EYELID = [FIELD_INDEX["eyelid_r"], FIELD_INDEX["eyelid_l"]]
_GAZE = [FIELD_INDEX[name] for name in ("gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw",
                                         "gaze_l_pitch")]


def naive_closures(samples, min_s=1.0):
    """Runs of "closed" samples (an eyelid below 0.5 or no gaze, any confidence) of ``min_s`` or
    more."""
    t = samples[:, 0]
    lid = samples[:, _EYELID]
    closed = (lid < 0.5).any(axis=1) | np.isnan(samples[:, _GAZE]).all(axis=1)
    edges = np.flatnonzero(np.diff(np.r_[0, closed.astype(np.int8), 0]))
    starts, ends = edges[0::2], edges[1::2] - 1
    return int(np.sum(t[ends] - t[starts] >= min_s))


def naive_perclos_episodes(perclos, config):
    """Episodes of PERCLOS >= fatigue_perclos_drowsy, re-armed below fatigue_perclos_recovered."""
    episodes, armed = 0, True
    for value in perclos[np.isfinite(perclos)]:
        if armed and value >= config.fatigue_perclos_drowsy:
            episodes, armed = episodes + 1, False
        elif value < config.fatigue_perclos_recovered:
            armed = True
    return episodes


def study(seeds, protocol, minutes, config):
    hours = 0.0
    counts = {"microsleep": 0, "sleep": 0, "drowsiness": 0}
    naive_closure = naive_perclos = 0
    perclos, blink, available = [], [], []
    worst_perclos, worst_blink = [], []
    for seed in seeds:
        recording = simulate_drive(int(seed), duration_s=minutes * 60.0, protocol=protocol)
        trace = detect_fatigue(recording, config)
        hours += (recording.t[-1] - recording.t[0]) / 3600.0
        for alert in trace.alerts:
            counts[alert.kind] += 1
        naive_closure += naive_closures(recording.samples)
        naive_perclos += naive_perclos_episodes(trace.perclos, config)
        perclos.append(trace.perclos[np.isfinite(trace.perclos)])
        blink.append(trace.blink_duration_s[np.isfinite(trace.blink_duration_s)])
        available.append(trace.available)
        worst_perclos.append(float(np.nanmax(trace.perclos)))
        worst_blink.append(float(np.nanmax(trace.blink_duration_s)))
    perclos, blink = np.concatenate(perclos), np.concatenate(blink)
    quantiles = (50, 95, 99, 100)
    return {
        "study": "fatigue_thresholds", "protocol": protocol, "drivers": len(seeds),
        "hours": round(hours, 3),
        "alerts_per_h": {kind: round(n / hours, 3) for kind, n in counts.items()},
        "naive_closure_per_h": round(naive_closure / hours, 3),
        "naive_perclos_per_h": round(naive_perclos / hours, 3),
        "perclos": {f"p{q}": round(float(np.percentile(perclos, q)), 4) for q in quantiles},
        "perclos_driver_max": sorted(round(v, 4) for v in worst_perclos),
        "blink_duration_s": {f"p{q}": round(float(np.percentile(blink, q)), 4)
                             for q in quantiles},
        "blink_duration_driver_max": sorted(round(v, 4) for v in worst_blink),
        "available": round(float(np.concatenate(available).mean()), 4),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drivers", type=int, default=12)
    parser.add_argument("--seed", type=int, default=2711)
    parser.add_argument("--minutes", type=float, default=20.0)
    args = parser.parse_args(argv)
    seeds = cohort_seeds(args.drivers, args.seed)
    config = PipelineConfig()
    for protocol in PROTOCOLS:
        start = time.perf_counter()
        result = study(seeds, protocol, args.minutes, config)
        result["seed"] = args.seed
        result["seconds"] = round(time.perf_counter() - start, 1)
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
