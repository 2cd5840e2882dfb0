"""A small run of ``benchmarks/real.py --subset`` in the suite: every section on real data.

The first 7 development-half Taamneh et al. 2017 drivers with gaze while texting (T011, T019,
T034, T039, T043, T062, T073; texting vs normal drive, 1 Hz gaze; held-out drivers are never test
fixtures), two IRF subjects and two HFC adult trials at 60 Hz, a sim-to-real fit on 4 simulated
drivers. The assertions are the benchmark's own claims at this size, with margins below what was
measured (in brackets): the offline naive floor beats chance on real drives (alarms at random
have a G-mean of at most 0.5), every model is tested against it over drivers, the shipped model
decides real gaze-only drives, the eye-event detectors beat the naive I-VT against human coders,
and the car raises the floor beside the eyes.
"""

import json
import subprocess
import sys
from pathlib import Path

from distractd.models.evaluation import driver_halves

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "real.py"


def test_the_real_data_benchmark_runs_every_section_on_a_subset(shared_data, tmp_path):
    result = subprocess.run([sys.executable, str(BENCHMARK), "--subset", "--out", str(tmp_path),
                             "--data", str(shared_data / "taamneh")],
                            cwd=BENCHMARK.parent, capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert all(r["subset"] for r in records)
    printed = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert [json.loads(line) for line in printed] == records           # printed as it went

    # development-half drivers only: held-out drivers are never test fixtures
    development, _ = driver_halves(path.stem for path in (shared_data / "taamneh").glob("T*.csv"))
    scored = {driver for r in records if isinstance(r.get("per_driver"), dict)
              for driver in r["per_driver"]}
    assert len(scored) >= 6 and scored <= development                   # [7 drivers]

    # (a) every model and both naive variants, on the same drivers, tested against the floor
    taamneh = {r["model"]: r for r in records if r.get("bench") == "taamneh"}
    assert set(taamneh) == {"svm", "elm", "sselm", "naive", "naive-offline"}
    floor = taamneh["naive-offline"]["g_mean"]["all"]
    assert floor["n"] >= 6 and floor["mean"] >= 0.6        # beats chance (0.5) [0.693, n = 7]
    for model in ("svm", "elm", "sselm", "naive"):
        assert taamneh[model]["g_mean"]["all"]["n"] == floor["n"]
        assert 0.0 <= taamneh[model]["coverage"]["all"]["mean"] <= 1.0
    (tests,) = [r["tests"] for r in records if r.get("bench") == "taamneh_vs_naive"]
    assert set(tests) == {"svm", "elm", "sselm", "naive"}
    assert all(t["all"]["n"] == floor["n"] and 0.0 <= t["all"]["p"] <= 1.0
               for t in tests.values())

    # (b) the shipped model as deployed decides the real gaze-only drives
    (shipped,) = [r for r in records if r.get("bench") == "shipped"]
    assert shipped["figure"] == "shipped"
    assert {row["driver"] for row in shipped["per_driver"]} <= development
    assert shipped["decided_fraction"] >= 0.88                               # [0.910]
    assert shipped["g_mean_mean"] >= 0.7                                     # [0.765, in-sample]

    # (c) eye events at 60 Hz against the coders, beside the naive I-VT
    events = {(r["set"], r["event"]): r for r in records if r.get("benchmark") == "real_events"}
    assert {r["rate_hz"] for r in events.values()} == {60.0}
    irf_saccade, hfc_fixation = events["irf", "saccade"], events["hfc", "fixation"]
    assert irf_saccade["detector_f1"] >= irf_saccade["naive_f1"] + 0.05        # [0.890, 0.756]
    assert irf_saccade["detector_f1"] >= irf_saccade["olsen_f1"] + 0.05        # [0.890, 0.728]
    assert hfc_fixation["detector_f1"] >= hfc_fixation["naive_f1"]             # [0.895, 0.873]
    assert hfc_fixation["coders_f1"] > hfc_fixation["detector_f1"] - 0.1       # the ceiling
    assert events["irf", "blink"]["detector_f1"] >= 0.9                        # [0.957]

    # the car's signals beside the eyes (texting, same stretch of road): every signal set has the
    # model in both forms and the floor with the same signals; the car raises the floor
    vehicle = {(r["signals"], r["model"]): r for r in records if r.get("bench") == "vehicle"}
    assert set(vehicle) == {(s, m) for s in ("eyes", "vehicle", "both")
                            for m in ("svm", "svm-offline", "naive-offline")}
    eyes, both = (vehicle[s, "naive-offline"]["g_mean"]["all"] for s in ("eyes", "both"))
    assert eyes["n"] == both["n"] >= 4 and both["mean"] >= eyes["mean"] + 0.05  # [0.869, 0.775]
    assert {r["task"] for r in records if r.get("bench") == "vehicle_vs_naive"} == {"texting"}
    trained_on_simulation = {(r["signals"], r["model"]) for r in records
                             if r.get("bench") == "vehicle_sim_to_real"}
    assert trained_on_simulation == {(s, m) for s in ("eyes", "vehicle", "both")
                                     for m in ("svm-offline", "naive-offline")}

    # sim-to-real: every model trained on simulated drives scores the real ones
    sim = {r["model"]: r for r in records if r.get("bench") == "sim_to_real"}
    assert set(sim) == {"svm", "elm", "sselm", "naive", "naive-offline"}
    assert all(r["g_mean"]["all"]["n"] >= 4 for r in sim.values())
    assert "(a) Taamneh" in result.stdout and "(c) Eye events" in result.stdout
