"""A small run of ``benchmarks/studies/false_warnings.py``: one real normal drive, one simulated
driver.

Taamneh's T011 normal drive (1 Hz gaze, no eyelid signal) and one simulated driver's calm drive
at 60 Hz and at 1 Hz, and visual-manual drive. The assertions are the study's claims: every
glance alert comes with its reason, the counts add up, the floor sits beside them, and the
fatigue channel is reported unavailable (with why) where the tracker has no eyelid, never as
zero alerts, and available with counts where it has one.
"""

import json
import subprocess
import sys
from pathlib import Path

STUDY = Path(__file__).resolve().parents[1] / "benchmarks" / "studies" / "false_warnings.py"


def test_the_false_warnings_study_reports_every_alert_with_its_reason(shared_data, tmp_path):
    out = tmp_path / "false-warnings.jsonl"
    result = subprocess.run([sys.executable, str(STUDY), "--data", str(shared_data / "taamneh"),
                             "--subjects", "T011", "--drivers", "1", "--out", str(out)],
                            cwd=STUDY.parent, capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads(line) for line in out.read_text().splitlines()]
    printed = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert printed == records                                   # printed as it went

    drives = {(r["set"], r["drive"]): r for r in records if r["bench"] == "false_warnings"}
    alerts = [r for r in records if r["bench"] == "false_warnings_alert"]
    summaries = [r for r in records if r["bench"] == "false_warnings_summary"]
    assert [(s["set"], s.get("drivers")) for s in summaries] == [
        ("taamneh-normal", "all"), ("taamneh-normal", "development"),
        ("taamneh-normal", "all"), ("taamneh-normal", "development"),
        ("simulated-calm 60 Hz full", None), ("simulated-calm 1 Hz sparse-gaze", None),
        ("simulated visual-manual 60 Hz full", None)]   # T011 is a development-half driver

    # the real drive: 1 Hz gaze only, so fatigue is unavailable, not zero
    real = drives["taamneh-normal", "T011-d4"]
    assert real["fatigue"] == {"available": False, "reason": "no eyelid signal"}
    assert real["fatigue_floor"] is None
    assert summaries[0]["fatigue_alerts"] is None and summaries[0]["fatigue_per_h"] is None
    assert 0.0 < real["ready_hours"] < real["hours"]            # the road centre warms up first
    assert sum(real["glance_alerts"].values()) > 0              # this drive raises some [5]

    # every glance alert has a reason, and the counts add up per drive
    for line in drives.values():
        own = [a for a in alerts if (a["set"], a["drive"]) == (line["set"], line["drive"])
               and a["kind"] in line["glance_alerts"]]
        assert len(own) == sum(line["glance_alerts"].values()) == sum(line["reasons"].values())
        assert {a["reason"] for a in own} == set(line["reasons"])
        assert line["floor_alerts"]["2s"] >= line["floor_alerts"]["3s"]
        for a in own:
            # the first-to-last away sample span never exceeds the channel's glance duration
            assert all(short <= whole + 1e-9
                       for short, whole in zip(a["shortest_true_s"], a["glances_s"]))
            if a["kind"] == "long_distraction":
                assert a["away_s"] >= 3.0 and a["away_samples"] > 0
    real_alerts = [a for a in alerts if a["set"] == "taamneh-normal"]
    assert all("longest_true_s" not in a for a in real_alerts)  # no truth on real drives
    # at 1 Hz a 3 s glance is three away samples: it may have lasted 2 s
    assert all(a["reason"].endswith("(may be < 2.5 s: sampling)") for a in real_alerts
               if a["kind"] == "long_distraction")

    # simulated: the full tracker has an eyelid, the 1 Hz faceLAB export has none
    (full,) = [r for (name, _), r in drives.items() if name == "simulated-calm 60 Hz full"]
    (sparse,) = [r for (name, _), r in drives.items() if name == "simulated-calm 1 Hz sparse-gaze"]
    assert full["fatigue"]["available"] is True
    assert set(full["fatigue"]["alerts"]) == {"microsleep", "sleep", "drowsiness"}
    assert set(full["fatigue_floor"]) == {"microsleep", "sleep", "drowsy_minutes"}
    assert sparse["fatigue"] == {"available": False, "reason": "no eyelid signal"}
    assert all("true_away_in_window_s" in a for a in alerts if a["set"] != "taamneh-normal"
               and a["kind"] in ("long_distraction", "time_sharing"))
