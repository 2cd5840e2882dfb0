"""Blink detection on the labelled real face clips: the camera front-end against a naive floor.

    python benchmarks/studies/camera_blinks.py [--half development|held-out|all] [--out DIR]

The camera front-end (``.venv-camera/bin/distractd-camera``, docs/camera.md) turns each clip of
``../shared/data/faces`` that has eye labels into a recording; distractd's own online blink
detector (``detect_events``: the daemon's, on the eyelid opening) finds the blinks. The naive
floor, measured in the same run on the same face mesh, is Soukupova & Cech's (2016) fixed
threshold: the eyes are closed while the image-plane eye aspect ratio, mean of both eyes, is
below 0.2; each run of closed frames is a blink.

Reference: the clips' ``eyes_closed`` labels of at most ``blink_max_s`` (0.5 s). Longer closures
(the 0.9 s squeeze) and lowered or narrowed lids are *unsure*: a detection overlapping one is
neither a hit nor a false blink, for either detector. Events are matched one to one by overlap
(``models.evaluation.match_events``, as for the human-coded eye events) and pooled over clips:
F1 = 2 hits / (reference + detected). Clips are split as drivers are: sorted names, odd positions
the development half (where the front-end's settings were chosen), even positions held out.

Beside the events, the closed state per frame: frames inside ``eyes_closed`` labels (any length)
are closed, the rest open, lowered or narrowed lids left out; the camera calls a frame closed
when its mean eyelid opening is below the pipeline's ``blink_opening_max`` (0.5), the naive rule
when the eye aspect ratio is below 0.2; Cohen's kappa pooled over the frames of each half.

Prints one JSON line per clip (the front-end's summary, then each detector's counts) and per half
and detector, and writes them to ``DIR/results.jsonl`` with the recordings (``DIR/<clip>.csv``)
and raw measures.
"""

import argparse
import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from distractd.models.evaluation import cohen_kappa, match_events, spans_from_flags
from distractd.pipeline import PipelineConfig, detect_events, read_recording

ROOT = Path(__file__).resolve().parents[2]
NAIVE_EAR = 0.2
"""Soukupova & Cech's (2016) fixed eye-aspect-ratio threshold."""


def eye_labels(faces):
    """``{clip: {"fps", "closed": [(first, last)], "unsure": [(first, last)]}}`` of every clip
    with eye labels (frames inclusive, 0-based): ``eyes_closed`` rows are closures; lowered or
    narrowed lids are unsure; a ``none`` row marks a clip without blinks."""
    clips = {}
    for path in sorted((faces / "labels").glob("*.csv")):
        with open(path, newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                if not (row["event"].startswith("eyes") or row["event"] == "none"):
                    continue
                clip = clips.setdefault(row["clip"], {"fps": float(row["fps"]), "closed": [],
                                                      "unsure": []})
                if row["start_frame"]:
                    span = (int(row["start_frame"]), int(row["end_frame"]))
                    clip["closed" if row["event"] == "eyes_closed" else "unsure"].append(span)
    return clips


def halves(names):
    """``(development, held_out)``: odd and even positions of the sorted names."""
    ordered = sorted(names)
    return ordered[1::2], ordered[0::2]


def clip_path(faces, name):
    """The video file of a labelled clip (in clips/ or extra/)."""
    found = sorted(p for p in faces.glob(f"**/{name}.*") if p.suffix != ".csv")
    if not found:
        raise SystemExit(f"no video named {name} under {faces}")
    return found[0]


def frame_spans(spans, fps):
    """Inclusive frame spans as time spans, each frame covering its period."""
    return np.array([((a - 0.5) / fps, (b + 0.5) / fps) for a, b in spans]).reshape(-1, 2)


def score(reference, unsure, detected):
    """Hits and counts of ``detected`` blinks against ``reference``, detections overlapping an
    unsure span left out."""
    keep = [not any(s <= e_end and s_end >= e for e, e_end in unsure) for s, s_end in detected]
    detected = detected[np.array(keep, dtype=bool)] if len(detected) else detected
    hits = len(match_events(reference, detected))
    return {"hits": hits, "n_reference": len(reference), "n_detected": len(detected)}


def f1(counts):
    total = counts["n_reference"] + counts["n_detected"]
    return round(2 * counts["hits"] / total, 3) if total else None


def read_column(path, name):
    with open(path, newline="", encoding="utf-8") as handle:
        return np.array([float(row[name]) if row[name] else np.nan
                         for row in csv.DictReader(handle)])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faces", type=Path, default=ROOT.parent / "shared" / "data" / "faces")
    parser.add_argument("--half", choices=("development", "held-out", "all"), default="all")
    parser.add_argument("--out", type=Path, required=True, help="folder for the recordings")
    parser.add_argument("--camera", type=Path, default=ROOT / ".venv-camera/bin/distractd-camera")
    parser.add_argument("--closed-ratio", type=float, help="passed to the front-end")
    args = parser.parse_args(argv)

    labels = eye_labels(args.faces)
    development, held_out = halves(labels)
    chosen = {"development": development, "held-out": held_out,
              "all": sorted(labels)}[args.half]
    args.out.mkdir(parents=True, exist_ok=True)
    command = [str(args.camera), *(str(clip_path(args.faces, n)) for n in chosen),
               "--out", str(args.out), "--measures", str(args.out), "--json"]
    if args.closed_ratio is not None:
        command += ["--closed-ratio", str(args.closed_ratio)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"the front-end failed: {done.stderr[-2000:]}")
    records, pooled = [], {}
    for line in done.stdout.splitlines():   # the front-end's summary of each clip
        summary = json.loads(line)
        records.append({"bench": "camera_frontend", "clip": Path(summary["source"]).stem,
                        **summary})
        print(json.dumps(records[-1]), flush=True)

    config = PipelineConfig()
    blink_max_s = config.blink_max_s
    closed_frames = {}
    for name in chosen:
        clip = labels[name]
        fps = clip["fps"]
        closures = frame_spans(clip["closed"], fps)
        is_blink = (closures[:, 1] - closures[:, 0]) <= blink_max_s + 1.0 / fps
        reference = closures[is_blink]
        unsure = [tuple(s) for s in np.vstack([closures[~is_blink],
                                               frame_spans(clip["unsure"], fps)])]
        recording = read_recording(args.out / f"{name}.csv")
        events = detect_events(recording)
        ear = (read_column(args.out / f"{name}.measures.csv", "ear_r")
               + read_column(args.out / f"{name}.measures.csv", "ear_l")) / 2.0
        detected = {
            "camera": spans_from_flags(events.t, events.blink, 1.0 / fps),
            "naive_ear": spans_from_flags(recording.t, ear < NAIVE_EAR, 1.0 / fps),
        }
        half = "development" if name in development else "held-out"
        truth, sure = np.zeros(recording.n_samples, bool), np.ones(recording.n_samples, bool)
        for first, last in clip["closed"]:
            truth[first:last + 1] = True
        for first, last in clip["unsure"]:
            sure[first:last + 1] = False
        opening = np.nanmean([recording.column("eyelid_r"), recording.column("eyelid_l")], axis=0)
        shut = {"camera": opening < config.blink_opening_max, "naive_ear": ear < NAIVE_EAR}
        for key in (half, "all"):
            frames = closed_frames.setdefault(key, {"truth": [], "camera": [], "naive_ear": []})
            frames["truth"].append(truth[sure])
            for detector, flags in shut.items():
                frames[detector].append(flags[sure])
        for detector, spans in detected.items():
            counts = score(reference, unsure, spans)
            record = {"bench": "camera_blinks", "clip": name, "half": half,
                      "detector": detector, **counts, "f1": f1(counts)}
            records.append(record)
            print(json.dumps(record), flush=True)
            for key in (half, "all"):
                total = pooled.setdefault((key, detector), dict.fromkeys(counts, 0))
                for field, value in counts.items():
                    total[field] += value
    for (half, detector), counts in sorted(pooled.items()):
        record = {"bench": "camera_blinks_pooled", "half": half, "detector": detector,
                  "clips": sum(r["half"] == half or half == "all" for r in records
                               if r.get("detector") == detector),
                  **counts, "f1": f1(counts),
                  "closed_ratio": args.closed_ratio}
        records.append(record)
        print(json.dumps(record), flush=True)
    for half, frames in sorted(closed_frames.items()):
        truth = np.concatenate(frames["truth"])
        for detector in ("camera", "naive_ear"):
            flags = np.concatenate(frames[detector])
            record = {"bench": "camera_closed_frames_pooled", "half": half,
                      "detector": detector, "frames": int(len(truth)),
                      "closed_frames": int(truth.sum()), "flagged_frames": int(flags.sum()),
                      "kappa": round(cohen_kappa(truth, flags), 3)}
            records.append(record)
            print(json.dumps(record), flush=True)
    with open(args.out / "results.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
