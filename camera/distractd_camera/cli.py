"""``distractd-camera``: a webcam or a video file as a distractd tracker.

    distractd-camera clip.mp4 --out clip.csv                   # a recording every command reads
    distractd-camera a.mp4 b.mpg --out recordings/             # several files: a.csv, b.csv
    distractd-camera --camera 0 --to tcp://127.0.0.1:5555      # live, to a running daemon

Prints one summary line per source (``--json``: a JSON object): frames, the share with a face,
the processing rate and the latency from a frame's arrival to its sample written or sent.
"""

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np
import zmq

from ._eyelid import CLOSED_RATIO
from ._frontend import MEASURE_FIELDS, SAMPLE_FIELDS, FrontEnd
from ._sinks import CsvWriter, Publisher
from ._sources import SourceError, VideoSource

__all__ = ["main"]

_STREAM_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")


def _parser():
    parser = argparse.ArgumentParser(
        prog="distractd-camera",
        description="Face and iris landmarks of a video file or a camera as distractd samples.")
    # VIDEO or --camera, checked in main (argparse's exclusive groups mistake an empty VIDEO
    # list for a given one)
    parser.add_argument("videos", nargs="*", metavar="VIDEO",
                        help="video file(s) (mp4, mpg, avi, gif, ...); with several, --out and "
                             "--measures are folders that get <name>.csv and <name>.measures.csv")
    parser.add_argument("--camera", type=int, metavar="N", help="camera /dev/videoN (live)")
    parser.add_argument("--out", metavar="CSV", help="write the samples as a CSV recording")
    parser.add_argument("--to", metavar="ENDPOINT",
                        help="publish to a daemon's input, e.g. tcp://127.0.0.1:5555")
    parser.add_argument("--stream", default="camera-1",
                        help="stream id when publishing: [A-Za-z0-9_.:-], 1-128 (default camera-1)")
    parser.add_argument("--measures", metavar="CSV",
                        help="also write each frame's raw measures (apertures, eye aspect ratios)")
    parser.add_argument("--fov-deg", type=float, default=60.0,
                        help="the camera's horizontal field of view, degrees (default 60)")
    parser.add_argument("--closed-ratio", type=float, default=CLOSED_RATIO,
                        help="aperture of shut eyes over the open level, for the eyelid scale "
                             f"(default {CLOSED_RATIO}; docs/camera.md)")
    parser.add_argument("--width", type=int, default=640, help="camera frame width (default 640)")
    parser.add_argument("--height", type=int, default=480, help="camera frame height (default 480)")
    parser.add_argument("--seconds", type=float,
                        help="stop after this much video time (default: the file's end, or Ctrl-C)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    return parser


def main(argv=None):
    """Run the front-end; 0 on success, 1 for a source or sink that fails, 2 for bad options."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not args.videos and args.camera is None:
        parser.error("give VIDEO file(s) or --camera N")
    if args.videos and args.camera is not None:
        parser.error("give VIDEO file(s) or --camera N, not both")
    if not (args.out or args.to):
        parser.error("give --out CSV, --to ENDPOINT or both")
    if len(args.videos) > 1 and args.to:
        parser.error("--to takes one source: publish one video or camera at a time")
    for option in ("out", "measures"):
        folder = getattr(args, option)
        if len(args.videos) > 1 and folder and not Path(folder).is_dir():
            parser.error(f"--{option} must be an existing folder with several videos, "
                         f"got {folder}")
    if not 0.0 <= args.closed_ratio < 1.0:
        parser.error(f"--closed-ratio must be in [0, 1), got {args.closed_ratio:g}")
    if not 10.0 <= args.fov_deg <= 170.0:
        parser.error(f"--fov-deg must be in [10, 170], got {args.fov_deg:g}")
    if not _STREAM_ID.fullmatch(args.stream):
        parser.error(f"--stream must match [A-Za-z0-9_.:-]{{1,128}}, got {args.stream!r}")
    jobs = [(None, args.out, args.measures)] if args.camera is not None else [
        (video, *_outputs(video, args, several=len(args.videos) > 1)) for video in args.videos]
    for video, out, measures in jobs:
        try:
            summary = run(video, out, measures, args)
        except (SourceError, OSError, TimeoutError, zmq.ZMQError) as error:
            print(f"distractd-camera: error: {error}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:   # before the first frame (while MediaPipe loads)
            return 130
        if args.json:
            print(json.dumps(summary), flush=True)
        else:
            print(f"{summary['source']}: {summary['frames']} frames, face in "
                  f"{summary['face_fraction']:.1%}, {summary['fps']:.1f} frames/s, latency p50 "
                  f"{summary['latency_ms_p50']:.1f} ms p99 {summary['latency_ms_p99']:.1f} ms",
                  flush=True)
    return 0


def _outputs(video, args, several):
    """The recording and measures paths of one video: the options' paths, or with several
    videos files named after the video in the options' folders."""
    if not several:
        return args.out, args.measures
    stem = Path(video).stem
    return (str(Path(args.out) / f"{stem}.csv") if args.out else None,
            str(Path(args.measures) / f"{stem}.measures.csv") if args.measures else None)


def run(video, out, measures_path, args):
    """Read every frame of one source, write or send each sample; return the summary."""
    sinks, latencies, faces, measures = [], [], 0, None
    with VideoSource(video, args.camera, args.width, args.height) as source:
        try:
            if out:
                sinks.append(CsvWriter(out, SAMPLE_FIELDS))
            if args.to:
                sinks.append(Publisher(args.to, args.stream))
            if measures_path:
                measures = CsvWriter(measures_path, MEASURE_FIELDS)
            with FrontEnd(source.width, source.height, source.rate_hz, args.fov_deg,
                          args.closed_ratio) as front:
                start_cpu, start = time.process_time(), time.perf_counter()
                try:
                    for t, frame, arrived in source.frames():
                        if args.seconds is not None and t > args.seconds:
                            break
                        sample, raw = front.process(frame, t)
                        for sink in sinks:
                            sink.write(sample)
                        latencies.append(time.perf_counter() - arrived)
                        faces += sample["confidence"] > 0
                        if measures:
                            measures.write(raw)
                except KeyboardInterrupt:
                    pass
            wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        finally:
            for sink in sinks + ([measures] if measures else []):
                sink.close()
    n = len(latencies)
    latency_ms = np.array(latencies) * 1000.0 if n else np.array([np.nan])
    return {"source": source.name, "width": source.width, "height": source.height,
            "rate_hz": source.rate_hz, "frames": n, "face_fraction": faces / n if n else 0.0,
            "fps": n / wall if wall > 0 else float("nan"),
            "cpu_ms_per_frame": cpu / n * 1000.0 if n else float("nan"),
            "latency_ms_p50": float(np.percentile(latency_ms, 50)),
            "latency_ms_p99": float(np.percentile(latency_ms, 99))}


if __name__ == "__main__":
    raise SystemExit(main())
