"""A small run of ``benchmarks/daemon_load.py`` (the load part: the real daemon and the lean receiver
fed by the same sender) in the suite: every message reaches both, every window gets its state (also
with the car on its own topic, every car sample counted by the daemon's join), and
the JSON line written to stdout is the one appended to ``--out``. No timing is asserted here; the
figures are the benchmark's to print."""

import json
import subprocess
import sys
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "daemon_load.py"


def test_load_run_reaches_daemon_and_lean_receiver(tmp_path):
    out = tmp_path / "results.jsonl"
    result = subprocess.run([sys.executable, str(BENCHMARK), "--parts", "load",
                             "--block-streams", "4", "--map-streams", "2", "--segmentation", "on",
                             "--duration", "16", "--window", "2", "--out", str(out)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.strip().splitlines()
    assert out.read_text().splitlines() == lines
    runs = [json.loads(line) for line in lines[1:]]
    assert [(run["form"], run["streams"], run["segmentation"]) for run in runs] == [
        ("block", 4, True), ("map", 2, True)]
    for run in runs:
        per_message = 30 if run["form"] == "block" else 1
        assert run["messages_sent"] == run["streams"] * -(-16 * 60 // per_message)
        assert run["messages_dropped"] == 0 and run["lean_messages_dropped"] == 0
        # windows completed in the 2 s measured: 4 hops per stream, give or take one at each end
        assert abs(run["window_states"] - run["window_states_expected"]) <= run["streams"], run
        assert run["window_states_expected"] == run["streams"] * 4
        assert run["lag_ms"]["p50"] > 0   # a state arrives after the sample that completed it
        assert run["send_rate_vs_schedule"] > 0
        assert run["daemon_processed_vs_sent"] > 0   # the daemon's counter moved in the window
        assert set(run["cpu_us_per_sample"]) == {"daemon_process", "daemon_loop_thread",
                                                 "lean_process"}
        assert set(run["daemon_threads_us_per_sample"]) >= {"loop", "ZMQbg/IO/0"}


def test_car_on_its_own_topic_is_joined_counted_and_never_rejected(tmp_path):
    """``--vehicle-rate``: each stream's car on ``vehicle.<stream>`` at 20 Hz beside its eye
    messages (without the car's fields) reaches the daemon and the lean receiver; every window
    still gets its state, and the daemon's join counted every car sample and dropped none."""
    result = subprocess.run([sys.executable, str(BENCHMARK), "--parts", "load",
                             "--block-streams", "3", "--map-streams", "--segmentation", "off",
                             "--duration", "14", "--window", "2", "--vehicle-rate", "20",
                             "--out", str(tmp_path / "results.jsonl")],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    (run,) = [json.loads(line) for line in result.stdout.strip().splitlines()[1:]]
    assert run["vehicle_rate_hz"] == 20 and run["vehicle"]["samples_per_message"] == 1
    car = run["vehicle"]
    assert car["samples_sent"] == 3 * 14 * 20 == car["samples_counted"]
    assert car["rejected"] == {"vehicle_late": 0, "vehicle_overflow": 0}
    assert car["window_samples_sent"] > 0
    # one message per car sample and one per 30 eye samples, every one received by both
    assert run["messages_sent"] == 3 * (14 * 20 + 14 * 60 // 30)
    assert run["messages_dropped"] == 0 and run["lean_messages_dropped"] == 0
    assert abs(run["window_states"] - run["window_states_expected"]) <= run["streams"], run
    assert run["window_states_expected"] == 3 * 4


def test_bad_window_is_one_line_and_exit_2():
    result = subprocess.run([sys.executable, str(BENCHMARK), "--duration", "20", "--window", "30"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "--window 30 must be in (0, duration - 12] = (0, 8]" in result.stderr
    assert "Traceback" not in result.stderr


def test_negative_vehicle_rate_is_one_line_and_exit_2():
    result = subprocess.run([sys.executable, str(BENCHMARK), "--vehicle-rate", "0", "-5"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "--vehicle-rate -5 must be at least 0 and --vehicle-block 1 at least 1" in result.stderr
    assert "Traceback" not in result.stderr
