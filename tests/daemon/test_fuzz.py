"""A small run of ``benchmarks/fuzz_daemon.py`` (every kind, a few thousand messages) in the suite.

The benchmark starts the real daemon, sends hostile messages of every kind beside a good stream and
checks its oracle: no crash, every message counted under its reason (scraped from /metrics), the
good stream's states identical to the batch prediction.
"""

import json
import subprocess
import sys
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "fuzz_daemon.py"


def test_fuzzer_oracle_holds_on_a_small_run():
    result = subprocess.run([sys.executable, str(BENCHMARK), "--messages", "4000", "--seed", "1",
                             "--speed", "40", "--max-streams", "60", "--dropped-connections", "2"],
                            capture_output=True, text=True, timeout=900)
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["kinds"] >= 38 and min(report["per_kind"].values()) > 0, report["per_kind"]
    assert report["hangs"] == 0, report.get("hang")
    assert report["crashes"] == 0 and report["exit_code"] == 0, report.get("daemon_log_tail")
    assert report["counts_counted"] == report["counts_expected"]
    assert report["counts_match"], report
    assert report["counts_expected"]["too_many_streams"] > 0   # the flood filled the table
    assert report["dropped_connections"] == 2
    assert report["good_states_received"] == report["good_windows"]
    assert report["good_stream_identical"]
    assert report["ok"] and result.returncode == 0
