"""Online eye events against expert labels: the IRF recordings resampled as a vehicle tracker.

The six IRF ``lookAtPoint_EL`` recordings (EyeLink 1000Plus, 1000 Hz, hand-coded events; see
``../shared/data/README.md``) are reduced to 30, 60 and 120 Hz the way a camera tracker delivers
them: each output sample integrates its exposure, i.e. averages the tracked 1000 Hz samples of its
period, is stamped at the period's centre, and is track loss when more than half of its period was
lost. Gaze x/y (degrees on the screen) become yaw/pitch of both eyes. The detectors run through
:func:`distractd.pipeline.detect_events` with the default :class:`PipelineConfig`.

Scores per rate and event kind, pooled over recordings: per-sample Cohen's kappa (a resampled sample
is a human event when most of its period is), and event F1, where a detected event counts as a hit
when its time span overlaps a human event not yet matched (each matched once). Human saccades are
evt 2 with the following post-saccadic oscillation (evt 3) merged in; S3 is left out of the saccade
scores (only approximately coded, as the IRF authors did). Human blinks are evt 5.

The same detectors are also scored against the true saccades of simulated drives
(:func:`distractd.simulators.simulate_drive_truth`, 60 Hz, tracker noise on), whose gaze noise is
that of a vehicle tracker (0.15-0.4 deg RMS), for the fixed thresholds and the adaptive default.

Run: ``.venv/bin/python benchmarks/studies/irf_events.py [--rates 30 60 120] [--seeds 1 2 3]``; prints one
JSON line per (rate, kind) and per simulated setting, and Markdown tables.
"""

import argparse
import json
import math
from pathlib import Path

import numpy as np

from distractd.pipeline import FIELD_INDEX, PipelineConfig, Recording, detect_events, empty_block
from distractd.simulators import simulate_drive_truth

IRF = Path(__file__).resolve().parents[3] / "shared" / "data" / "irf"
SUBJECTS = (1, 2, 3, 4, 5, 6)
SACCADE_EXCLUDED = (3,)


def load(subject, irf=IRF):
    """The raw 1000 Hz structured array of one IRF subject."""
    return np.load(Path(irf) / f"lookAtPoint_EL_S{subject}.npy")


def resample(raw, rate_hz):
    """Integrate 1000 Hz IRF samples over each output period.

    Returns ``(recording, human)``: the canonical :class:`Recording` at ``rate_hz`` and a dict of
    per-output-sample human labels (``saccade``, ``blink``: bool, most of the period in the event).
    """
    t = raw["t"] - raw["t"][0]
    period = 1.0 / rate_hz
    bins = np.floor(t / period).astype(np.int64)
    n = int(bins[-1])            # drop the last, partial period
    keep = bins < n
    bins = bins[keep]
    tracked = raw["status"][keep] & np.isfinite(raw["x"][keep]) & np.isfinite(raw["y"][keep])
    count = np.bincount(bins, minlength=n).astype(float)
    n_tracked = np.bincount(bins, weights=tracked, minlength=n)
    x = np.bincount(bins, weights=np.where(tracked, raw["x"][keep], 0.0), minlength=n)
    y = np.bincount(bins, weights=np.where(tracked, raw["y"][keep], 0.0), minlength=n)
    lost = n_tracked <= 0.5 * count
    with np.errstate(invalid="ignore", divide="ignore"):
        yaw = np.radians(np.where(lost, np.nan, x / n_tracked))
        pitch = np.radians(np.where(lost, np.nan, y / n_tracked))
    block = empty_block(n)
    block[:, FIELD_INDEX["t"]] = (np.arange(n) + 0.5) * period
    for eye in ("r", "l"):
        block[:, FIELD_INDEX[f"gaze_{eye}_yaw"]] = yaw
        block[:, FIELD_INDEX[f"gaze_{eye}_pitch"]] = pitch
    block[:, FIELD_INDEX["confidence"]] = np.where(lost, 0.0, 1.0)
    evt = raw["evt"][keep]
    human = {
        "saccade": np.bincount(bins, weights=np.isin(evt, (2, 3)), minlength=n) > 0.5 * count,
        "blink": np.bincount(bins, weights=evt == 5, minlength=n) > 0.5 * count,
    }
    return Recording(block, meta={"source": "irf", "rate_hz": rate_hz}), human


def human_events(raw, kind):
    """Human events as ``(start_s, end_s)`` rows from the 1000 Hz labels."""
    codes = (2, 3) if kind == "saccade" else (5,)
    inside = np.isin(raw["evt"], codes)
    edges = np.diff(np.r_[0, inside.astype(np.int8), 0])
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
    t = raw["t"] - raw["t"][0]
    return np.column_stack([t[starts], t[ends]])


def detected_events(events, kind, rate_hz):
    """Detected events as time spans ``(start_s, end_s)``, each sample covering its own period."""
    rows = events.events[events.events[:, 0] == (0 if kind == "saccade" else 1)]
    half = 0.5 / rate_hz
    return np.column_stack([rows[:, 1] - half, rows[:, 2] + half])


def event_f1(human, detected):
    """Event F1: hits are one-to-one time overlaps, matched greedily in time order."""
    used = np.zeros(len(detected), dtype=bool)
    hits = 0
    for start, end in human:
        overlap = np.flatnonzero(~used & (detected[:, 0] <= end) & (detected[:, 1] >= start))
        if overlap.size:
            used[overlap[0]] = True
            hits += 1
    return _f1(hits, len(human), len(detected)), hits


def _f1(hits, n_human, n_detected):
    return 2.0 * hits / (n_human + n_detected) if n_human + n_detected else math.nan


def cohen_kappa(a, b):
    """Cohen's kappa of two boolean label sequences."""
    a = np.asarray(a, dtype=bool)
    b = np.asarray(b, dtype=bool)
    observed = np.mean(a == b)
    pa, pb = a.mean(), b.mean()
    expected = pa * pb + (1 - pa) * (1 - pb)
    return (observed - expected) / (1 - expected) if expected < 1 else math.nan


def evaluate(rate_hz, subjects=SUBJECTS, config=None, irf=IRF):
    """Pooled scores at one rate: ``{kind: {kappa, f1, hits, n_human, n_detected}}``."""
    pooled = {kind: {"agree": [], "hits": 0, "n_human": 0, "n_detected": 0}
              for kind in ("saccade", "blink")}
    for subject in subjects:
        raw = load(subject, irf)
        recording, human = resample(raw, rate_hz)
        events = detect_events(recording, config)
        for kind in ("saccade", "blink"):
            if kind == "saccade" and subject in SACCADE_EXCLUDED:
                continue
            flags = getattr(events, kind)
            known = np.isfinite(flags)
            truth = human_events(raw, kind)
            found = detected_events(events, kind, rate_hz)
            _, hits = event_f1(truth, found)
            entry = pooled[kind]
            entry["agree"].append((flags[known] == 1.0, human[kind][known]))
            entry["hits"] += hits
            entry["n_human"] += len(truth)
            entry["n_detected"] += len(found)
    scores = {}
    for kind, entry in pooled.items():
        ours = np.concatenate([a for a, _ in entry["agree"]])
        theirs = np.concatenate([b for _, b in entry["agree"]])
        scores[kind] = {
            "kappa": float(cohen_kappa(ours, theirs)),
            "f1": float(_f1(entry["hits"], entry["n_human"], entry["n_detected"])),
            "hits": entry["hits"], "n_human": entry["n_human"], "n_detected": entry["n_detected"],
        }
    return scores


def evaluate_simulated(config, seeds=(1, 2, 3), duration_s=300.0, rate_hz=60.0):
    """Saccade event F1 against the simulator's true saccades, pooled over drives."""
    hits = n_true = n_detected = 0
    for seed in seeds:
        recording, truth = simulate_drive_truth(seed, duration_s=duration_s, rate_hz=rate_hz)
        plan = truth.gaze
        real = plan.saccade_duration > 0
        spans = np.column_stack([plan.saccade_start[real],
                                 plan.saccade_start[real] + plan.saccade_duration[real]])
        found = detected_events(detect_events(recording, config), "saccade", rate_hz)
        _, n_hits = event_f1(spans, found)
        hits += n_hits
        n_true += len(spans)
        n_detected += len(found)
    return {"f1": float(_f1(hits, n_true, n_detected)), "hits": hits, "n_true": n_true,
            "n_detected": n_detected}


SIMULATED_SETTINGS = (
    ("fixed 15 deg/s", {"saccade_noise_factor": 0.0}),
    ("fixed 30 deg/s", {"saccade_velocity_deg_s": 30.0, "saccade_noise_factor": 0.0}),
    ("fixed 60 deg/s", {"saccade_velocity_deg_s": 60.0, "saccade_noise_factor": 0.0}),
    ("adaptive k = 3", {"saccade_noise_factor": 3.0}),
    ("adaptive k = 3.5 (default)", {}),
    ("adaptive k = 6", {"saccade_noise_factor": 6.0}),
)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", type=float, nargs="+", default=[30.0, 60.0, 120.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    args = parser.parse_args(argv)
    config = PipelineConfig()
    table = []
    for rate in args.rates:
        for kind, score in evaluate(rate, config=config).items():
            line = {"benchmark": "irf_events", "rate_hz": rate, "event": kind, **score}
            print(json.dumps(line))
            table.append(line)
    print("\n| rate (Hz) | event | kappa | F1 | hits | human | detected |")
    print("|---|---|---|---|---|---|---|")
    for line in table:
        print(f"| {line['rate_hz']:g} | {line['event']} | {line['kappa']:.3f} | {line['f1']:.3f} | "
              f"{line['hits']} | {line['n_human']} | {line['n_detected']} |")
    simulated = []
    for name, settings in SIMULATED_SETTINGS:
        score = evaluate_simulated(PipelineConfig(**settings), seeds=tuple(args.seeds))
        line = {"benchmark": "simulated_saccades", "setting": name, **score}
        print(json.dumps(line))
        simulated.append(line)
    print("\n| saccade threshold | F1 | hits | true | detected |")
    print("|---|---|---|---|---|")
    for line in simulated:
        print(f"| {line['setting']} | {line['f1']:.3f} | {line['hits']} | {line['n_true']} | "
              f"{line['n_detected']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
