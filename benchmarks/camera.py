"""Speed of the camera front-end: frames per second for one face at 640 x 480 on one core, and the
latency from a frame's arrival to its sample published.

    python benchmarks/camera.py [--clip PATH] [--seconds 20] [--core 0]

The tfjs-models demo clip (a laptop webcam, one face; ../shared/data/faces) is scaled to 640 x
480 and played forward and back to ``--seconds``, written as motion-JPEG. Then, each pinned to
one core with ``taskset``:

- **baseline**: decoding the same file with OpenCV and nothing else (what any front-end pays);
- **front-end**: ``distractd-camera VIDEO --to tcp://127.0.0.1:PORT``, publishing every sample
  in the wire protocol's map form to a subscriber of this process, as it would to the daemon.

Prints one JSON line each: frames, wall-clock frames per second, CPU milliseconds per frame
(``1000 / cpu_ms`` is the rate a dedicated core sustains, whatever else the machine runs), and
for the front-end the latency p50 and p99 from a frame read to its sample sent, and the samples
the subscriber received.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import zmq

from distractd.simulators import free_port

ROOT = Path(__file__).resolve().parents[1]
CAMERA = ROOT / ".venv-camera" / "bin"

_MAKE_VIDEO = """
import sys, cv2
source, out, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
capture = cv2.VideoCapture(source)
fps = capture.get(cv2.CAP_PROP_FPS)
frames = []
while True:
    ok, frame = capture.read()
    if not ok:
        break
    frames.append(cv2.resize(frame, (640, 480), interpolation=cv2.INTER_AREA))
cycle = frames + frames[-2:0:-1]
writer = cv2.VideoWriter(out, cv2.VideoWriter_fourcc(*"MJPG"), fps, (640, 480))
for i in range(int(seconds * fps)):
    writer.write(cycle[i % len(cycle)])
writer.release()
"""

_DECODE = """
import json, sys, time, cv2
start_cpu, start = time.process_time(), time.perf_counter()
capture = cv2.VideoCapture(sys.argv[1])
n = 0
while capture.read()[0]:
    n += 1
wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
print(json.dumps({"frames": n, "fps": n / wall, "cpu_ms_per_frame": cpu / n * 1000}))
"""


def _count(endpoint, received, stop):
    """Bind a SUB where the daemon's input would be and count the samples."""
    with zmq.Context() as context, context.socket(zmq.SUB) as sub:
        sub.linger = 0
        sub.subscribe(b"samples.")
        sub.bind(endpoint)
        while not stop.is_set():
            if sub.poll(100):
                sub.recv_multipart()
                received[0] += 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clip", type=Path, default=ROOT.parent / "shared" / "data" / "faces"
                        / "clips" / "tfjs-models_facemesh_demo_input.mp4")
    parser.add_argument("--seconds", type=float, default=20.0, help="video length, s")
    parser.add_argument("--core", type=int, default=0, help="the one core to run on")
    args = parser.parse_args(argv)
    pin = ["taskset", "-c", str(args.core)]
    with tempfile.TemporaryDirectory() as folder:
        video = Path(folder) / "face-640x480.avi"
        subprocess.run([str(CAMERA / "python"), "-c", _MAKE_VIDEO, str(args.clip), str(video),
                        str(args.seconds)], check=True)
        decode = json.loads(subprocess.run(
            [*pin, str(CAMERA / "python"), "-c", _DECODE, str(video)], check=True,
            capture_output=True, text=True).stdout)
        print(json.dumps({"bench": "camera", "what": "decode_only_baseline", "width": 640,
                          "height": 480, "core": args.core, **decode}), flush=True)

        endpoint = f"tcp://127.0.0.1:{free_port()}"
        received, stop = [0], threading.Event()
        counter = threading.Thread(target=_count, args=(endpoint, received, stop))
        counter.start()
        try:
            time.sleep(0.3)
            done = subprocess.run([*pin, str(CAMERA / "distractd-camera"), str(video), "--to",
                                   endpoint, "--stream", "bench", "--json"],
                                  capture_output=True, text=True)
            time.sleep(0.5)
        finally:
            stop.set()
            counter.join()
        if done.returncode:
            raise SystemExit(done.stderr[-2000:])
        summary = json.loads(done.stdout.splitlines()[-1])
        summary.pop("source")
        print(json.dumps({"bench": "camera", "what": "front_end_published", "core": args.core,
                          **summary, "received": received[0],
                          "cpu_vs_decode": summary["cpu_ms_per_frame"]
                          / decode["cpu_ms_per_frame"]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
