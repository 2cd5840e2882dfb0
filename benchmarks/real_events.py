"""Eye events against human coders on IRF and HFC, at tracker rates, beside the naive I-VT.

For each set (IRF ``lookAtPoint_EL``, one expert; HFC adult trials, 12 coders: Hooge et al. 2018,
doi:10.3758/s13428-017-0955-x, CC BY-NC-SA 4.0), rate (30/60/120 Hz, tracker-like resampling, see
:mod:`distractd.models.evaluation._coded_sets`) and event kind, the streaming detectors
(:func:`distractd.pipeline.detect_events`, default :class:`PipelineConfig`) and the naive I-VT
(:func:`distractd.models.evaluation.naive_ivt`, 30 deg/s point-to-point) are each scored against
every coder: event F1 with one-to-one overlap matching, per-sample Cohen's kappa and RTO/RTD of
matched onsets, pooled over the set's recordings, then averaged over coders. On HFC the coders'
mean pairwise F1 (every unordered pair, pooled the same way) is the human ceiling.

Run: ``.venv/bin/python benchmarks/real_events.py [--rates 30 60 120] [--subset]``:
one JSON line per result, then a Markdown table. :func:`run_events` is what ``benchmarks/real.py``
calls.
"""

import argparse
import itertools
import json
import math
from pathlib import Path

import numpy as np

from distractd.models.evaluation import (
    AgreementPool, flags_from_spans, hfc_names, irf_names, naive_ivt, read_hfc, read_irf,
)
from distractd.pipeline import EVENT_KINDS, PipelineConfig, detect_events

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SUBSET = {"irf": ("S1", "S2"), "hfc": 2}   # subjects; number of adult trials


def detected(recording, config=None):
    """The streaming detectors' spans and per-sample flags per event kind."""
    events = detect_events(recording, config)
    half = 0.5 / recording.meta["rate_hz"]
    spans, flags = {}, {}
    for index, kind in enumerate(EVENT_KINDS):
        rows = events.events[events.events[:, 0] == index]
        spans[kind] = np.column_stack([rows[:, 1] - half, rows[:, 2] + half])
        flags[kind] = np.nan_to_num(getattr(events, kind)) > 0.5
    return spans, flags


def coded_recordings(set_name, rate_hz, subset=False, data=DATA, group="adult"):
    """The :class:`CodedRecording` list of one set at one rate."""
    if set_name == "irf":
        names = SUBSET["irf"] if subset else irf_names(data / "irf")
        return [read_irf(data / "irf", name, rate_hz) for name in names]
    names = hfc_names(data / "hfc", group)
    return [read_hfc(data / "hfc", name, rate_hz) for name in names[:SUBSET["hfc"] if subset else None]]


def score(recordings, config=None):
    """Per kind: the detector's and the naive I-VT's scores averaged over coders, and on
    multi-coder sets the coders' mean pairwise scores."""
    pools = {}

    def pool(*key):
        return pools.setdefault(key, AgreementPool())

    for coded in recordings:
        n, rate = len(coded.recording.t), coded.rate_hz
        ours_spans, ours_flags = detected(coded.recording, config)
        naive_flags, naive_spans = naive_ivt(coded.recording)
        human_flags = {coder: {kind: flags_from_spans(spans, n, rate) for kind, spans in by_kind.items()}
                       for coder, by_kind in coded.coders.items()}
        for kind in coded.kinds:
            for coder, by_kind in coded.coders.items():
                reference = by_kind[kind], human_flags[coder][kind]
                pool(kind, "detector", coder).add(*reference, ours_spans[kind], ours_flags[kind])
                pool(kind, "naive", coder).add(*reference, naive_spans[kind], naive_flags[kind])
            for a, b in itertools.combinations(sorted(coded.coders), 2):
                pool(kind, "coders", a + "/" + b).add(
                    coded.coders[a][kind], human_flags[a][kind], coded.coders[b][kind],
                    human_flags[b][kind])
    results = {}
    for kind in dict.fromkeys(k for coded in recordings for k in coded.kinds):
        entry = {}
        for who in ("detector", "naive", "coders"):
            scores = [p.result() for key, p in pools.items() if key[:2] == (kind, who)]
            if not scores:
                continue
            for name in ("f1", "kappa", "rto_onset_s", "rtd_onset_s", "rto_offset_s", "rtd_offset_s"):
                entry[f"{who}_{name}"] = float(np.mean([s[name] for s in scores]))
            entry[f"{who}_n"] = int(np.sum([s["n_test"] for s in scores])) // len(scores)
            if who != "coders":
                entry["n_human"] = int(np.sum([s["n_reference"] for s in scores])) // len(scores)
                entry["n_coders"] = len(scores)
        results[kind] = entry
    return results


def run_events(emit, rates=(30, 60, 120), subset=False, config=None, data=DATA,
               sets=("irf", "hfc")):
    """Score every set, rate and kind; ``emit(dict)`` gets one record per result."""
    for set_name in sets:
        for rate in rates:
            recordings = coded_recordings(set_name, float(rate), subset, Path(data))
            for kind, entry in score(recordings, config).items():
                emit({"benchmark": "real_events", "set": set_name, "rate_hz": float(rate),
                      "event": kind, "recordings": len(recordings), "subset": subset, **entry})


def _cell(value, digits=3):
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else \
        f"{value:.{digits}f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", type=float, nargs="+", default=[30.0, 60.0, 120.0])
    parser.add_argument("--subset", action="store_true", help="2 IRF subjects, 2 HFC trials")
    args = parser.parse_args(argv)
    lines = []

    def emit(record):
        print(json.dumps(record), flush=True)
        lines.append(record)

    run_events(emit, rates=tuple(args.rates), subset=args.subset)
    print("\n| set | rate (Hz) | event | F1 (mean over coders) | kappa | RTO / RTD onset (ms) | "
          "naive I-VT F1 | naive kappa | coders' pairwise F1 | human events | detected |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in lines:
        print(f"| {r['set']} | {r['rate_hz']:g} | {r['event']} | {_cell(r['detector_f1'])} | "
              f"{_cell(r['detector_kappa'])} | {_cell(1e3 * r['detector_rto_onset_s'], 1)} / "
              f"{_cell(1e3 * r['detector_rtd_onset_s'], 1)} | {_cell(r['naive_f1'])} | "
              f"{_cell(r['naive_kappa'])} | {_cell(r.get('coders_f1'))} | {r['n_human']} | "
              f"{r['detector_n']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
