"""What a Capture-like gaze stream costs the pipeline, and what the adapter's reordering saves.

Simulated drives (60 Hz, tracker imperfections on) go through the Pupil Capture emulator over real
sockets (its real-time gaze matcher: binocular and monocular datums, non-monotonic timestamps);
the gaze datums are mapped by the daemon's adapter with several ``reorder_s`` and fed to the
pipeline. One JSON line per drive and ``reorder_s``: gaze datums by topic, the fraction of
samples the pipeline drops as ``backwards_t``, and how late (Pupil time) the latest datum came
behind the newest one.
"""

import argparse
import json
import threading

import numpy as np
import zmq

from distractd.pipeline import StreamProcessor
from distractd.pipeline.formats import PupilAdapter, unpack
from distractd.simulators import PupilEmulator, simulate_drive


def capture_stream(drive, speed):
    """The backbone messages the emulator publishes for ``drive`` (all of them)."""
    emulator = PupilEmulator(drive, port=0, speed=speed, wait_subscriptions=1)
    stopped, ready = threading.Event(), threading.Event()
    thread = threading.Thread(target=emulator.run, kwargs={
        "stop": stopped.is_set, "on_ready": lambda e: ready.set()}, daemon=True)
    thread.start()
    ready.wait(5)
    messages = []
    with zmq.Context() as context, context.socket(zmq.SUB) as sub:
        sub.linger = 0
        sub.subscribe(b"")
        sub.connect(f"tcp://127.0.0.1:{emulator.sub_port}")
        while emulator.n_passes == 0 or sub.poll(200):
            if sub.poll(200):
                messages.append(sub.recv_multipart())
    stopped.set()
    thread.join(5)
    return messages


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[7, 8, 9])
    parser.add_argument("--duration", type=float, default=120.0)
    parser.add_argument("--speed", type=float, default=10.0)
    args = parser.parse_args()
    for seed in args.seeds:
        drive = simulate_drive(seed, duration_s=args.duration)
        messages = capture_stream(drive, args.speed)
        topics = [bytes(m[0]).decode() for m in messages]
        gaze_t = np.array([unpack(m[1], "gaze")["timestamp"] for m, topic in
                           zip(messages, topics) if topic.startswith("gaze")])
        late_s = float(np.max(np.maximum.accumulate(gaze_t) - gaze_t))
        for reorder_s in (0.0, 0.1, 0.25):
            adapter = PupilAdapter(reorder_s)
            block = np.concatenate([adapter.update(m) for m in messages] + [adapter.flush()])
            processor = StreamProcessor()
            processor.update(block)
            print(json.dumps({
                "seed": seed, "duration_s": args.duration, "reorder_s": reorder_s,
                "samples_recorded": drive.n_samples,
                "gaze_binocular": topics.count("gaze.3d.01."),
                "gaze_monocular": topics.count("gaze.3d.0.") + topics.count("gaze.3d.1."),
                "gaze_samples": len(block), "max_lateness_s": round(late_s, 4),
                "backwards_t": processor.rejected["backwards_t"],
                "backwards_fraction": round(processor.rejected["backwards_t"] / len(block), 4),
            }), flush=True)


if __name__ == "__main__":
    main()
