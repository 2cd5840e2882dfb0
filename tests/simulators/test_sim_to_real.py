"""A small run of ``benchmarks/sim_to_real.py``: trained on simulated drives only, scored on real
Taamneh et al. 2017 drives (doi:10.1038/sdata.2017.110): development-half drivers only (held-out
drivers are never test fixtures)."""

import json
import subprocess
import sys
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "sim_to_real.py"


def test_sim_to_real_scores_real_drivers(tmp_path, shared_data):
    out = tmp_path / "s2r"
    subprocess.run([sys.executable, str(BENCHMARK), "--data", str(shared_data / "taamneh"),
                    "--subjects", "T003", "T011", "T019", "--drivers", "2", "--models", "svm",
                    "--out", str(out)],
                   check=True, capture_output=True, text=True)
    (line,) = [json.loads(text) for text in (out / "results.jsonl").read_text().splitlines()]
    assert line["model"] == "svm" and "2 simulated drivers" in line["scheme"]
    # T011 and T019 have gaze in both drives; T003's texting drive has none (not judged)
    assert set(line["per_driver"]) == {"T011", "T019"}
    assert all(0.0 <= g <= 1.0 for g in line["per_driver"].values())
    assert line["g_mean"]["all"]["n"] == 2
    # the halves are those of every subject file: all three are development drivers
    assert line["g_mean"]["development"]["n"] == 2 and line["g_mean"]["held_out"]["n"] == 0
    assert line["coverage"]["all"]["n"] == 3     # every real driver has a decided fraction
    assert 0.0 < line["coverage"]["all"]["mean"] <= 1.0
    assert line["false_alarms_per_hour"]["all"]["mean"] >= 0.0
    # gaze-only windows: the model scores track loss, so low-quality windows are decided
    assert "glance_track_loss_fraction" in line["features"]
    assert line["decision"] == {"loss_evidence": True}
    assert 0.0 <= line["summary"]["specificity"]["mean"] <= 1.0   # NaN fails too
