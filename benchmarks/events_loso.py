"""Eye-event settings chosen leave one set out, at 30, 60 and 120 Hz, beside both floors.

Every setting of :data:`GRID` (on top of the default :class:`PipelineConfig`) is scored on every
coded set at every rate (``benchmarks/real_events.py`` does the scoring: event F1 by one-to-one
matching with positive overlap, averaged over coders). For each set left out, the setting with the
best criterion on the *other* sets (the mean over those sets, the rates and the kinds they code,
saccade, fixation, blink and pursuit, of the detector's F1) is scored on the set left out: the table's
figures are held out. The shipped setting is the one chosen on all the sets together.

The sets: IRF and HFC (``../shared/data``) and Lund2013's ``dots`` and ``img`` (a copy of its
repository, ``--lund2013`` or ``DISTRACTD_LUND2013``). Lund2013's ``video`` is the untouched set:
nothing is chosen on it; ``--untouched`` scores it, with the shipped setting, once the choice is
made.

Run: ``.venv/bin/python benchmarks/events_loso.py --lund2013 PATH [--untouched] [--out FILE]``:
JSON lines as it goes (into ``--out`` too), then the Markdown tables. Without a Lund2013 copy the
grid runs over IRF and HFC only.
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from distractd.pipeline import PipelineConfig
from real_events import DATA, cell, coded_recordings, lund2013_root, score

RATES = (30.0, 60.0, 120.0)
KINDS = ("saccade", "fixation", "blink", "pursuit")
UNTOUCHED = "lund-video"
GRID = [{"saccade_velocity_deg_s": v, "saccade_noise_factor": k,
         "saccade_noise_amplitude_factor": a, "pursuit_velocity_deg_s": p}
        for v in (5.0, 10.0, 20.0) for k in (3.0, 4.0, 5.0) for a in (3.0, 6.0)
        for p in (3.0, 5.0, 10.0)]
"""The settings compared: the speed floor, the adaptive speed factor, the adaptive amplitude factor
and the pursuit speed."""
SHORT = {"saccade_velocity_deg_s": "v", "saccade_noise_factor": "k",
         "saccade_noise_amplitude_factor": "a", "pursuit_velocity_deg_s": "p"}


def run_grid(sets, emit, data=DATA, lund2013=None, grid=GRID, rates=RATES):
    """Score the floors and coders once and every setting of ``grid`` on every set and rate;
    ``emit(dict)`` gets each record. Returns ``{(set, rate, kind): floors}`` and
    ``{(setting index, set, rate, kind): detector entry}``."""
    floors, detector = {}, {}
    for set_name in sets:
        for rate in rates:
            recordings = coded_recordings(set_name, rate, data=data, lund2013=lund2013)
            for kind, entry in score(recordings, who=("naive", "olsen", "coders")).items():
                floors[set_name, rate, kind] = entry
                emit({"record": "floors", "set": set_name, "rate_hz": rate, "event": kind, **entry})
            for index, setting in enumerate(grid):
                config = PipelineConfig(**setting)
                for kind, entry in score(recordings, config, who=("detector",)).items():
                    detector[index, set_name, rate, kind] = entry
                    emit({"record": "detector", "setting": setting, "set": set_name,
                          "rate_hz": rate, "event": kind, **entry})
    return floors, detector


def criterion(detector, index, sets, rates=RATES):
    """Mean detector F1 of setting ``index`` over ``sets``, ``rates`` and the kinds coded."""
    values = [entry["detector_f1"] for (i, s, r, k), entry in detector.items()
              if i == index and s in sets and r in rates and k in KINDS]
    return float(np.mean(values)) if values else float("nan")


def choose(detector, sets, n_settings):
    """The index of the setting with the best criterion on ``sets``."""
    return int(np.nanargmax([criterion(detector, i, sets) for i in range(n_settings)]))


def table(rows, floors, detector, grid):
    """Markdown rows: one per (set, rate, kind) of ``rows`` = [(set, chosen index, scheme)]."""
    lines = ["| set | scheme | setting | rate (Hz) | event | detector F1 | plain I-VT F1 | "
             "Olsen I-VT F1 | better floor + 0.02 | coders' pairwise F1 | human events | detected |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for set_name, index, scheme in rows:
        setting = grid[index]
        for rate in RATES:
            for kind in KINDS:
                if (index, set_name, rate, kind) not in detector:
                    continue
                d, f = detector[index, set_name, rate, kind], floors[set_name, rate, kind]
                bar = max(f.get("naive_f1", 0.0), f.get("olsen_f1", 0.0)) + 0.02
                lines.append(
                    f"| {set_name} | {scheme} | {label(setting)} | {rate:g} | {kind} | "
                    f"{cell(d['detector_f1'])} | {cell(f.get('naive_f1'))} | "
                    f"{cell(f.get('olsen_f1'))} | {cell(bar) if 'naive_f1' in f else '—'} | "
                    f"{cell(f.get('coders_f1'))} | {d['n_human']} | {d['detector_n']} |")
    return "\n".join(lines)


def label(setting):
    """A setting in short: ``v=10 k=4 a=6 p=5``."""
    return " ".join(f"{SHORT[name]}={value:g}" for name, value in setting.items())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lund2013", default=None, help="root of a copy of the Lund2013 repository")
    parser.add_argument("--untouched", action="store_true",
                        help=f"also score {UNTOUCHED} with the shipped setting")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON lines here")
    args = parser.parse_args(argv)
    lund2013 = lund2013_root(args.lund2013)
    sets = ("irf", "hfc") + (("lund-dots", "lund-img") if lund2013 else ())
    out = open(args.out, "w") if args.out else None

    def emit(record):
        line = json.dumps(record)
        print(line, flush=True)
        if out:
            print(line, file=out, flush=True)

    floors, detector = run_grid(sets, emit, lund2013=lund2013)
    rows = []
    for held_out in sets:
        index = choose(detector, [s for s in sets if s != held_out], len(GRID))
        rows.append((held_out, index, "held out"))
    shipped = choose(detector, sets, len(GRID))
    print("\n## Grid: criterion per set (mean F1 over rates and coded kinds)\n")
    print("| setting | " + " | ".join(sets) + " |")
    print("|---|" + "---|" * len(sets))
    for i, setting in enumerate(GRID):
        print(f"| {label(setting)} | "
              + " | ".join(f"{criterion(detector, i, [s]):.4f}" for s in sets) + " |")
    print(f"\nShipped (chosen on {', '.join(sets)}): {GRID[shipped]}\n")
    print("## Leave one set out\n")
    print(table(rows, floors, detector, GRID))
    if args.untouched and lund2013:
        more_floors, more = run_grid((UNTOUCHED,), emit, lund2013=lund2013, grid=[GRID[shipped]])
        print(f"\n## Untouched: {UNTOUCHED}, shipped setting\n")
        print(table([(UNTOUCHED, 0, "untouched")], more_floors, more, [GRID[shipped]]))
    if out:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
