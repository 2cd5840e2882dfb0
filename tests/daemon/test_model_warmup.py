"""The model's warm-up compiles what serving runs, once: READY means ready to serve (issue 26).

Run in a fresh interpreter, so that no other test's kernels count: after :class:`Model` is built,
the per-stream kernel has exactly one specialisation, and every form in which the daemon hands
samples to a stream's processor (a block-form message decoded as a read-only view of its bytes, a
block of another field order or dtype, a map-form sample, blocks joined by the stream table)
runs without a single numba compile; nor does a session's whole path on a simulated drive
(pipeline, batched scoring, decision rule, online segmenter).
"""

import json
import subprocess
import sys

SERVE = """
import json
import numpy as np
from numba.core import event
from distractd.daemon import Model
from distractd.pipeline import FIELD_INDEX, StreamProcessor, empty_block, _processor
from distractd.pipeline.formats import Limits, decode_samples, encode_block, encode_map

model = Model(None)
warmed = [str(signature) for signature in _processor._run.signatures]
n = 900
block = empty_block(n)
block[:, FIELD_INDEX["t"]] = 100.0 + np.arange(n) / 60.0
block[:, FIELD_INDEX["gaze_r_yaw"]] = 0.02 * np.cos(np.arange(n) / 9.0)
block[:, FIELD_INDEX["gaze_r_pitch"]] = 0.01
block[:, FIELD_INDEX["confidence"]] = 1.0
limits = Limits()
wire = [decode_samples(encode_block("s", part, seq), limits)[1]
        for seq, part in enumerate(np.array_split(block[:600], 20))]
subset = ["confidence", "gaze_r_pitch", "t", "gaze_r_yaw"]
reordered = decode_samples(encode_block("s", block[600:800, [FIELD_INDEX[f] for f in subset]]
                                        .astype("<f4"), 20, fields=subset), limits)[1]
maps = [decode_samples(encode_map("s", {f: float(block[i, FIELD_INDEX[f]]) for f in subset}),
                       limits)[1] for i in range(800, 900)]
forms = {"wire_read_only": all(not b.flags.writeable for b in wire),
         "others_writable": reordered.flags.writeable and maps[0].flags.writeable}
processor = StreamProcessor(model.pipeline_config)
with event.install_recorder("numba:compile") as compiles:
    n_windows = sum(len(processor.update(b)) for b in wire[:-2])
    n_windows += len(processor.update(np.concatenate(wire[-2:])))
    n_windows += len(processor.update(reordered))
    n_windows += sum(len(processor.update(b)) for b in maps)
    n_windows += len(processor.flush())
from distractd.daemon import Session, decision_options, load_config
from distractd.pipeline import FEATURE_NAMES
from distractd.simulators import simulate_drive
drive = simulate_drive(7, duration_s=75.0).samples
session = Session("s", model.pipeline_config, decision_options(load_config(),
                  model.detector.feature_names), model.segmenter(True), 0.0)
with event.install_recorder("numba:compile") as session_compiles:
    n_states = 0
    for lo in range(0, len(drive), 30):
        windows = session.process(drive[lo:lo + 30])
        if len(windows):
            session.choice = model.detector.choose(session.fields_seen, session.processor.rate_hz)
            scores = model.detector.window_scores(windows.X, FEATURE_NAMES, model.detector)
            n_states += len(session.decide(windows, scores, model.detector.model_id)[0])
print(json.dumps({"warmed": warmed, "compiles": len(compiles.buffer), "windows": n_windows,
                  "forms": forms, "session_compiles": len(session_compiles.buffer),
                  "session_states": n_states,
                  "after": [str(signature) for signature in _processor._run.signatures]}))
"""


def served():
    result = subprocess.run([sys.executable, "-c", SERVE], capture_output=True, text=True,
                            timeout=1800)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])


def test_the_warm_up_compiles_the_stream_kernel_once_and_serving_compiles_nothing():
    found = served()
    assert found["forms"] == {"wire_read_only": True, "others_writable": True}
    assert len(found["warmed"]) == 1, found["warmed"]
    assert found["compiles"] == 0 and found["after"] == found["warmed"], found
    assert found["windows"] > 0
    assert found["session_compiles"] == 0 and found["session_states"] > 100, found
