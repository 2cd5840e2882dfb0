"""Eye events against human coders on IRF, HFC and Lund2013, at tracker rates, beside two floors.

For each set (IRF ``lookAtPoint_EL``, one expert; HFC adult trials, 12 coders: Hooge et al. 2018,
doi:10.3758/s13428-017-0955-x, CC BY-NC-SA 4.0; Lund2013, two coders, Andersson et al. 2017,
doi:10.3758/s13428-016-0738-9, GPL-3.0, read from a copy of its repository given by ``--lund2013``
or ``DISTRACTD_LUND2013``), rate (30/60/120 Hz, tracker-like resampling, see
:mod:`distractd.models.evaluation._coded_sets`) and event kind, the streaming detectors
(:func:`distractd.pipeline.detect_events`, default :class:`PipelineConfig`), the plain I-VT
(:func:`distractd.models.evaluation.naive_ivt`) and the Tobii I-VT filter with Olsen's (2012)
defaults (:func:`distractd.models.evaluation.olsen_ivt`) are each scored against every coder
(smooth pursuit, coded in Lund2013, only for the detector, whose pursuit is its explicit other):
event F1 with one-to-one matching by positive overlap, per-sample Cohen's kappa and RTO/RTD of
matched onsets, pooled over the set's recordings, then averaged over coders. On multi-coder sets the
coders' mean pairwise F1 (every unordered pair, pooled the same way) is the human ceiling.

Run: ``.venv/bin/python benchmarks/real_events.py [--rates 30 60 120] [--subset] [--sets ...]``:
one JSON line per result, then a Markdown table. :func:`run_events` is what ``benchmarks/real.py``
calls; ``benchmarks/events_loso.py`` chooses the settings leave one set out.
"""

import argparse
import itertools
import json
import math
import os
from pathlib import Path

import numpy as np

from distractd.models.evaluation import (
    AgreementPool, flags_from_spans, hfc_names, irf_names, lund2013_names, naive_ivt, olsen_ivt,
    read_hfc, read_irf, read_lund2013, spans_from_flags,
)
from distractd.pipeline import EVENT_KINDS, PipelineConfig, detect_events

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SUBSET = {"irf": ("S1", "S2"), "hfc": 2, "lund": 2}   # subjects; number of trials
SETS = ("irf", "hfc", "lund-dots", "lund-img", "lund-video")
"""Every coded set: IRF and HFC (in the shared data), the three Lund2013 stimulus types."""
FLOORS = {"naive": naive_ivt, "olsen": olsen_ivt}
LUND2013_ENV = "DISTRACTD_LUND2013"


def detected(recording, config=None):
    """The streaming detectors' spans and per-sample flags per event kind, and ``pursuit``: the
    explicit other (tracked samples in no event) in runs of at least ``fixation_min_s``."""
    config = config or PipelineConfig()
    events = detect_events(recording, config)
    period = 1.0 / recording.meta["rate_hz"]
    spans, flags = {}, {}
    for index, kind in enumerate(EVENT_KINDS):
        rows = events.events[events.events[:, 0] == index]
        spans[kind] = np.column_stack([rows[:, 1] - 0.5 * period, rows[:, 2] + 0.5 * period])
        flags[kind] = np.nan_to_num(getattr(events, kind)) > 0.5
    other = (events.track_loss == 0) & ~np.any([flags[kind] for kind in EVENT_KINDS], axis=0)
    runs = spans_from_flags(events.t, other, period)
    spans["pursuit"] = runs[runs[:, 1] - runs[:, 0] >= config.fixation_min_s - 1e-9]
    flags["pursuit"] = flags_from_spans(spans["pursuit"], len(events.t), recording.meta["rate_hz"])
    return spans, flags


def coded_recordings(set_name, rate_hz, subset=False, data=DATA, lund2013=None, group="adult"):
    """The :class:`CodedRecording` list of one set at one rate (``lund2013``: the root of a copy of
    the Lund2013 repository, needed for the ``lund-*`` sets)."""
    if set_name == "irf":
        names = SUBSET["irf"] if subset else irf_names(data / "irf")
        return [read_irf(data / "irf", name, rate_hz) for name in names]
    if set_name == "hfc":
        names = hfc_names(data / "hfc", group)
        return [read_hfc(data / "hfc", name, rate_hz)
                for name in names[:SUBSET["hfc"] if subset else None]]
    if set_name.startswith("lund-"):
        if lund2013 is None:
            raise ValueError(f"set {set_name!r} needs a copy of Lund2013: give --lund2013 or "
                             f"{LUND2013_ENV}")
        names = lund2013_names(lund2013, set_name[len("lund-"):])
        return [read_lund2013(lund2013, name, rate_hz)
                for name in names[:SUBSET["lund"] if subset else None]]
    raise ValueError(f"set must be one of {SETS}, got {set_name!r}")


def human_flags(coded):
    """Coder -> kind -> per-sample flags on the recording's grid."""
    n = len(coded.recording.t)
    return {coder: {kind: flags_from_spans(spans, n, coded.rate_hz) for kind, spans in by_kind.items()}
            for coder, by_kind in coded.coders.items()}


def score(recordings, config=None, who=("detector", "naive", "olsen", "coders")):
    """Per kind: the detector's and each floor's scores averaged over coders, and on multi-coder
    sets the coders' mean pairwise scores (``who`` names which)."""
    pools = {}

    def pool(*key):
        return pools.setdefault(key, AgreementPool())

    for coded in recordings:
        found = {}
        if "detector" in who:
            found["detector"] = detected(coded.recording, config)
        for name, floor in FLOORS.items():
            if name in who:
                flags, spans = floor(coded.recording)
                found[name] = spans, flags
        humans = human_flags(coded)
        for kind in coded.kinds:
            for coder, by_kind in coded.coders.items():
                reference = by_kind[kind], humans[coder][kind]
                for name, (spans, flags) in found.items():
                    if kind in spans:   # the floors find no pursuit
                        pool(kind, name, coder).add(*reference, spans[kind], flags[kind])
            if "coders" in who:
                for a, b in itertools.combinations(sorted(coded.coders), 2):
                    pool(kind, "coders", a + "/" + b).add(
                        coded.coders[a][kind], humans[a][kind], coded.coders[b][kind],
                        humans[b][kind])
    results = {}
    for kind in dict.fromkeys(k for coded in recordings for k in coded.kinds):
        entry = {}
        for name in who:
            scores = [p.result() for key, p in pools.items() if key[:2] == (kind, name)]
            if not scores:
                continue
            for field in ("f1", "kappa", "rto_onset_s", "rtd_onset_s", "rto_offset_s",
                          "rtd_offset_s"):
                entry[f"{name}_{field}"] = float(np.mean([s[field] for s in scores]))
            entry[f"{name}_n"] = int(np.sum([s["n_test"] for s in scores])) // len(scores)
            if name != "coders":
                entry["n_human"] = int(np.sum([s["n_reference"] for s in scores])) // len(scores)
                entry["n_coders"] = len(scores)
        results[kind] = entry
    return results


def run_events(emit, rates=(30, 60, 120), subset=False, config=None, data=DATA,
               sets=("irf", "hfc"), lund2013=None):
    """Score every set, rate and kind; ``emit(dict)`` gets one record per result."""
    for set_name in sets:
        for rate in rates:
            recordings = coded_recordings(set_name, float(rate), subset, Path(data), lund2013)
            for kind, entry in score(recordings, config).items():
                emit({"benchmark": "real_events", "set": set_name, "rate_hz": float(rate),
                      "event": kind, "recordings": len(recordings), "subset": subset, **entry})


def cell(value, digits=3):
    """A table cell: the value rounded, or a dash for none."""
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else \
        f"{value:.{digits}f}"


def lund2013_root(option):
    """The Lund2013 copy given by the option or the environment, or None."""
    root = option or os.environ.get(LUND2013_ENV)
    return Path(root) if root else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", type=float, nargs="+", default=[30.0, 60.0, 120.0])
    parser.add_argument("--subset", action="store_true", help="2 recordings of each set")
    parser.add_argument("--sets", nargs="+", choices=SETS, default=None,
                        help="default: irf hfc, and the Lund2013 sets when a copy is given")
    parser.add_argument("--lund2013", default=None,
                        help=f"root of a copy of the Lund2013 repository (or {LUND2013_ENV})")
    args = parser.parse_args(argv)
    lund2013 = lund2013_root(args.lund2013)
    sets = args.sets or (SETS if lund2013 else ("irf", "hfc"))
    lines = []

    def emit(record):
        print(json.dumps(record), flush=True)
        lines.append(record)

    run_events(emit, rates=tuple(args.rates), subset=args.subset, sets=sets, lund2013=lund2013)
    print("\n| set | rate (Hz) | event | F1 (mean over coders) | kappa | RTO / RTD onset (ms) | "
          "plain I-VT F1 | Olsen I-VT F1 | coders' pairwise F1 | human events | detected |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in lines:
        print(f"| {r['set']} | {r['rate_hz']:g} | {r['event']} | {cell(r['detector_f1'])} | "
              f"{cell(r['detector_kappa'])} | {cell(1e3 * r['detector_rto_onset_s'], 1)} / "
              f"{cell(1e3 * r['detector_rtd_onset_s'], 1)} | {cell(r['naive_f1'])} | "
              f"{cell(r['olsen_f1'])} | {cell(r.get('coders_f1'))} | {r['n_human']} | "
              f"{r['detector_n']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
