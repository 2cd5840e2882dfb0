"""`distractd demo`: daemon child on the shipped model, replayed drive, live states, clean stop."""

import io

from distractd.daemon import default_model_path
from distractd.models import load_model
from distractd.pipeline import Recording, extract_features
from distractd.simulators import demo, simulate_drive


def test_shipped_default_model_loads_with_segment_prototypes():
    detector = load_model(default_model_path())
    assert detector.kind == "SSELMClassifier"
    assert "segmenter" in detector.extras
    assert detector.summary["n_labelled"] == 60


def test_demo_runs_end_to_end_and_stops_cleanly():
    out = io.StringIO()
    assert demo(duration_s=40.0, speed=40.0, seed=7, out=out) == 0
    text = out.getvalue()
    assert "daemon ready" in text and "metrics at http://127.0.0.1:" in text
    assert "distractd_windows_classified_total" in text
    assert "daemon stopped with exit status 0" in text
    received = int(text.split(" states received")[0].rsplit(" ", 1)[1])
    drive = simulate_drive(7)  # the demo replays the start of the model's training drive
    first = drive.t < drive.t[0] + 40.0
    assert received == len(extract_features(Recording(drive.samples[first], drive.labels[first])))
