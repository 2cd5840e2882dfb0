"""`distractd conformance`: scenarios scripted into simulated drives, scored through a real daemon
subprocess fed over ZeroMQ; a recording scored from its sidecar annotations."""

import json
import subprocess
import sys

import numpy as np
import pytest

from distractd.pipeline import FIELD_INDEX, PipelineConfig, detect_glances
from distractd.pipeline.formats import write_recording
from distractd.simulators._behaviour import ScriptedGlance
from distractd.simulators._body_scripts import (
    OPEN_S, REFERENCE_APERTURE_MM, lose_eyes, occlude_face, scale_aperture,
)
from distractd.simulators._conformance import _drives, _scorecard, headline, judge, run_conformance
from distractd.simulators._scenarios import (
    FAMILIES, LONG_LIMIT_S, MICROSLEEP_S, SLEEP_S, UNRESPONSIVE_LIMIT_S, ZONES, mirror_left_hand,
    scenario_library,
)
from distractd.simulators._simulate import simulate_drive_truth

SUBSET = {
    # one scenario per family, as CI runs them (one seed, one driver, right-hand drive)
    "long_distraction": "long_centre_stack_owl_6.0s",
    "vats": "vats_centre_stack_lizard_1.5s_road_0.5s",
    "phone": "phone_lap_sustained_lizard_8.0s",
    "microsleep": "microsleep_2.0s",
    "sleep": "sleep_4.0s",
    "drowsiness": "drowsiness_buildup_8min",
    "unresponsive": "unresponsive_eyes_closed_20s",
    "robustness": "driver_small_centre_stack_lizard_4.0s",
    "negative": "calm_normal_blinking_60s",
}

def _cli(*args):
    return subprocess.run([sys.executable, "-m", "distractd.cli", "conformance", *args],
                          capture_output=True, text=True, timeout=600)


def test_library_covers_every_zone_duration_strategy_and_family_with_protocol_expectations():
    library = scenario_library()
    assert {s.family for s in library} == set(FAMILIES)
    long = [s for s in library if s.family == "long_distraction"]
    assert len(long) == len(ZONES) * 2 * 5
    for scenario in long:
        (glance,) = scenario.glances
        warns = glance.duration_s >= 3.0
        assert scenario.expected == ("long_distraction" if warns else "none")
        assert scenario.limit_s == (LONG_LIMIT_S if warns else None)
    for scenario in library:
        if scenario.expected == "time_sharing":   # >= 10 s away, every road check under 2 s
            away = sum(g.duration_s for g in scenario.glances)
            gaps = np.diff([g.start_s for g in scenario.glances]) - [
                g.duration_s for g in scenario.glances[:-1]]
            assert away >= 10.0 and gaps.max() < 2.0 and scenario.span_s <= 30.0
        if scenario.family == "vats" and scenario.expected == "none":
            gaps = np.diff([g.start_s for g in scenario.glances]) - [
                g.duration_s for g in scenario.glances[:-1]]
            assert gaps.min() >= 2.0 and sum(g.duration_s for g in scenario.glances) >= 10.0


def test_fatigue_families_expect_the_protocol_kinds_within_their_limits():
    library = {s.name: s for s in scenario_library(("microsleep", "sleep", "drowsiness",
                                                    "unresponsive", "robustness"))}
    for scenario in library.values():
        for closure in scenario.closures:
            kind = ("sleep" if closure.duration_s > SLEEP_S else "microsleep"
                    if closure.duration_s >= MICROSLEEP_S else "none")
            if scenario.family in ("microsleep", "sleep", "robustness"):
                assert scenario.expected == kind
            if kind == "microsleep":
                assert scenario.limit_s == pytest.approx(closure.duration_s + 1.0)
            if kind == "sleep" and scenario.family != "unresponsive":
                assert scenario.limit_s == pytest.approx(SLEEP_S + 1.0)
        if scenario.closures:   # eyes shut facing forward: a road stretch covers the closure
            (road,) = [g for g in scenario.glances if g.target == 0]
            assert road.start_s < 0 and road.start_s + road.duration_s > scenario.span_s
            assert scenario.span_s == pytest.approx(max(
                c.start_s + c.duration_s for c in scenario.closures) + OPEN_S)
    assert library["microsleep_long_blink_0.7s"].expected == "none"
    for minutes in (30, 8):
        build_up = library[f"drowsiness_buildup_{minutes}min"]
        assert build_up.expected == "drowsiness" and build_up.limit_s == minutes * 60
        assert 0 < build_up.earliest_s < build_up.limit_s
    for name in ("unresponsive_eyes_closed_20s", "unresponsive_slumped_20s"):
        assert library[name].expected == "unresponsive"
        assert library[name].limit_s == UNRESPONSIVE_LIMIT_S < library[name].span_s


def _one_drive(name, family, seed=5):
    ((recording, placed),) = _drives(seed, 1, ("right",), 60.0, (family,), {name})
    ((_, start),) = placed
    return recording.samples, start


def test_scripted_closure_shuts_the_lids_facing_forward_and_hides_the_pupil():
    samples, start = _one_drive("sleep_4.0s", "sleep")
    t = samples[:, 0]
    shut = (t > start + 0.2) & (t < start + 3.9)
    lid = samples[shut, FIELD_INDEX["eyelid_r"]]
    lid = lid[np.isfinite(lid)]   # the tracker's own glare bursts lose the lids too
    assert len(lid) > 60 and (lid < 0.2).all()
    assert np.isnan(samples[shut, FIELD_INDEX["gaze_r_yaw"]]).all()
    assert (samples[shut, FIELD_INDEX["blink"]] == 1).all()
    assert np.nanmax(np.abs(np.degrees(samples[shut, FIELD_INDEX["head_yaw"]]))) < 10.0
    after = (t > start + 4.6) & (t < start + 6.0)
    assert np.nanmedian(samples[after, FIELD_INDEX["eyelid_r"]]) > 0.7


def test_slumped_driver_hangs_the_head_and_stops_the_gaze():
    samples, start = _one_drive("unresponsive_slumped_20s", "unresponsive")
    t = samples[:, 0]
    held = (t > start + 2.0) & (t < start + 20.0)
    assert np.degrees(np.nanmedian(samples[held, FIELD_INDEX["head_pitch"]])) < -30.0
    gaze = np.degrees(samples[held][:, [FIELD_INDEX["gaze_r_yaw"], FIELD_INDEX["gaze_r_pitch"]]])
    assert np.nanstd(gaze, axis=0).max() < 0.5 and (samples[held, FIELD_INDEX["saccade"]] == 0).all()


def test_aperture_scales_the_open_eyelid_and_occlusion_loses_the_whole_face():
    recording, _ = simulate_drive_truth(4, 30.0, 30.0, protocol="none")
    samples = recording.samples
    lid = FIELD_INDEX["eyelid_r"]
    for aperture in (6.0, 14.0):
        scaled = scale_aperture(samples, aperture)
        ratio = np.nanmedian(scaled[:, lid]) / np.nanmedian(samples[:, lid])
        assert ratio == pytest.approx(aperture / REFERENCE_APERTURE_MM, rel=0.02)
        assert np.nanmax(scaled[:, lid]) <= 1.5
    hidden = occlude_face(samples, np.random.default_rng(0))
    lost = np.isnan(hidden[:, FIELD_INDEX["head_yaw"]]) & ~np.isnan(samples[:, FIELD_INDEX["head_yaw"]])
    assert 0.15 < lost.mean() < 0.45 and (hidden[lost, FIELD_INDEX["confidence"]] == 0).all()
    assert np.isnan(hidden[lost, lid]).all()


def test_scripted_glances_are_the_drives_true_glances_and_the_head_follows_the_strategy():
    owl = ScriptedGlance(100.0, 4.0, -20.0, -22.0, 0.8)
    lizard = ScriptedGlance(130.0, 2.9, -20.0, -22.0, 0.0)
    _, truth = simulate_drive_truth(3, 170.0, 30.0, protocol="none", script=[owl, lizard])
    glances = truth.glances()
    for scripted in (owl, lizard):
        i = np.flatnonzero(np.isclose(glances.start_s, scripted.start_s))
        assert len(i) == 1 and glances.duration_s[i[0]] == pytest.approx(scripted.duration_s)
        # nothing else away within the 4 s cleared on either side
        near = (glances.end_s > scripted.start_s - 4.0) & (
            glances.start_s < scripted.start_s + scripted.duration_s + 4.0)
        assert near.sum() == 1
    head = truth.head[np.searchsorted(truth.t, [102.0, 132.0])]
    assert head[0, 0] < -12.0 and head[0, 1] < -10.0       # owl: the head turns and pitches
    assert abs(head[1, 0]) < 6.0 and abs(head[1, 1]) < 6.0  # lizard: the eyes alone


def test_left_hand_drive_mirrors_yaw_and_eye_loss_keeps_the_head():
    recording, _ = simulate_drive_truth(4, 20.0, 30.0, protocol="none")
    samples = recording.samples
    mirrored = mirror_left_hand(samples)
    yaw, r, l = FIELD_INDEX["head_yaw"], FIELD_INDEX["gaze_r_yaw"], FIELD_INDEX["gaze_l_yaw"]
    np.testing.assert_array_equal(mirrored[:, yaw], -samples[:, yaw])
    np.testing.assert_array_equal(mirrored[:, r], -samples[:, l])
    lost = lose_eyes(samples, np.random.default_rng(0))
    gone = np.isnan(lost[:, r]) & ~np.isnan(samples[:, r])
    assert 0.3 < gone.mean() < 0.7 and (lost[gone, FIELD_INDEX["confidence"]] == 0).all()
    np.testing.assert_array_equal(lost[:, yaw], samples[:, yaw])


def test_sunglasses_drive_warms_up_until_the_road_centre_is_ready():
    # half the samples lose the eyes, so 90 s of warm-up held only ~45 s of tracked gaze and the
    # first scenarios ran before the road centre was learned (every one of them silent)
    ((recording, placed),) = _drives(5, 1, ("right",), 60.0, ("robustness",),
                                     {"sunglasses_30hz_centre_stack_owl_4.0s"})
    (scenario, start), = placed
    trace = detect_glances(recording, PipelineConfig(drive_side="right"))
    before = (trace.t > start - 4.0) & (trace.t < start)
    assert before.any() and (trace.glance[before] > 0).all()   # 0: unknown (warming up)
    during = (trace.t > start + 3.5) & (trace.t < start + scenario.span_s)
    assert (trace.glance[during] == 2).mean() > 0.5   # off road: the head turned away


def test_judge_passes_in_time_and_fails_late_wrong_or_noisy():
    alerts = [{"kind": "long_distraction", "t": 103.1}]
    ok = judge(alerts, "a", "long_distraction", 100.0, 106.0, "long_distraction", 4.0)
    assert ok["pass"] and ok["latency_s"] == pytest.approx(3.1) and ok["got"] == ["long_distraction"]
    late = judge(alerts, "b", "long_distraction", 99.0, 106.0, "long_distraction", 4.0)
    assert not late["pass"] and late["latency_s"] == pytest.approx(4.1)
    wrong = judge(alerts, "c", "vats", 100.0, 110.0, "time_sharing", 12.0)
    assert not wrong["pass"] and wrong["latency_s"] is None
    noisy = judge(alerts, "d", "negative", 95.0, 101.5, "none", None)   # 103.1 <= 101.5 + 2
    assert not noisy["pass"] and noisy["got"] == ["long_distraction"]
    quiet = judge(alerts, "e", "negative", 95.0, 101.0, "none", None)
    assert quiet["pass"] and quiet["got"] == ["none"]
    # a drowsiness warning while the driver is still alert (before earliest_s) is too early
    drowsy = [{"kind": "drowsiness", "t": 150.0}]
    early = judge(drowsy, "g", "drowsiness", 100.0, 580.0, "drowsiness", 480.0, earliest_s=120.0)
    assert not early["pass"] and early["latency_s"] == pytest.approx(50.0)
    timely = judge(drowsy, "h", "drowsiness", 100.0, 580.0, "drowsiness", 480.0, earliest_s=40.0)
    assert timely["pass"] and timely["got"] == ["drowsiness"]
    # a silent row judges every kind of alert, whichever channel raised it
    for kind in ("microsleep", "time_sharing", "unresponsive"):
        assert not judge([{"kind": kind, "t": 99.0}], "j", "negative", 95.0, 101.5, "none",
                         None)["pass"]
    # silence the daemon never got to is not a pass: its states stopped before the window's end
    unseen = judge([], "f", "negative", 95.0, 101.0, "none", None, reached_s=102.0)
    assert not unseen["pass"] and unseen["got"] == ["not processed"]


def test_scorecard_reports_positives_negatives_and_both_floors_of_the_same_rows():
    rows = [judge([{"kind": "long_distraction", "t": 103.0}], "a", "long_distraction", 100.0,
                  106.0, "long_distraction", 4.0),                       # passes
            judge([], "b", "vats", 200.0, 220.0, "time_sharing", 11.0),   # missed
            judge([], "c", "drowsiness", 300.0, 780.0, "drowsiness", 480.0,
                  earliest_s=120.0),                                      # missed, not at once
            judge([], "d", "negative", 900.0, 910.0, "none", None),       # silent: passes
            judge([{"kind": "sleep", "t": 1001.0}], "e", "negative", 1000.0, 1010.0, "none",
                  None)]                                                  # warned: fails
    card = _scorecard(rows, {})
    assert card["passed"] == 2 and card["failed"] == 3
    assert card["positives"] == {"passed": 1, "total": 3, "share": 0.3333}
    assert card["negatives"] == {"passed": 1, "total": 2, "share": 0.5}
    # never warns: both silent rows; always warns: the positives but the drowsiness build-up
    assert card["floors"] == {"never_warns": {"passed": 2, "share": 0.4},
                              "always_warns": {"passed": 2, "share": 0.4}}
    card["background"] = {"per_hour": 1.5, "alerts": 3, "calm_hours": 2.0}
    assert headline(card) == (
        "2 of 5 scenarios pass (40.0 %; never warns 40.0 %, always warns 40.0 %); positives 1/3, "
        "negatives 1/2; background 1.5 warnings per calm hour (3 in 2 h)")


@pytest.fixture(scope="module")
def subset(tmp_path_factory):
    out = tmp_path_factory.mktemp("conformance")
    rows = []
    card = run_conformance(out, seed=11, n_drivers=1, sides=("right",), families=FAMILIES,
                           only=set(SUBSET.values()), speed=60.0, on_row=rows.append)
    return card, json.loads((out / "scorecard.json").read_text()), rows


def test_subset_through_a_real_daemon_writes_the_scorecard_contract(subset):
    card, written, rows = subset
    assert written == json.loads(json.dumps(card))
    assert written["passed"] + written["failed"] == len(written["scenarios"]) == len(SUBSET)
    assert len(rows) == len(SUBSET)
    by_name = {row["name"].split("/", 1)[1]: row for row in written["scenarios"]}
    assert set(by_name) == set(SUBSET.values())
    for family, name in SUBSET.items():
        row = by_name[name]
        assert {"name", "family", "expected", "got", "latency_s", "pass"} <= set(row)
        assert row["family"] == family and row["got"] != ["not processed"]
        assert isinstance(row["pass"], bool) and row["got"]
    assert set(written["families"]) == set(FAMILIES)
    assert {"calm_hours", "per_hour", "per_hour_by_kind"} <= set(written["background"])
    positives = sum(row["expected"] != "none" for row in written["scenarios"])
    assert written["positives"]["total"] == positives == len(SUBSET) - 1
    assert written["floors"]["never_warns"]["passed"] == 1   # the calm-blinking row
    assert written["floors"]["always_warns"]["passed"] == positives - 1   # not the build-up


@pytest.mark.parametrize("family", SUBSET)
def test_subset_scenario_passes_through_a_real_daemon(subset, family):
    _, written, _ = subset
    (row,) = [r for r in written["scenarios"] if r["family"] == family]
    assert row["pass"], row
    if row["expected"] == "long_distraction":
        assert 2.5 < row["latency_s"] <= LONG_LIMIT_S   # raised at about 3 s of glance


def test_recording_with_sidecar_annotations_is_scored_and_a_wrong_expectation_fails(tmp_path):
    script = [ScriptedGlance(100.0, 6.0, -20.0, -22.0, 0.8)]
    recording, _ = simulate_drive_truth(12, 150.0, 30.0, protocol="none", script=script)
    path = tmp_path / "drive.bin"
    write_recording(recording, path)
    sidecar = tmp_path / "scenarios.csv"
    sidecar.write_text("name,family,start_s,end_s,expected,limit_s\n"
                       "stack_6s,long_distraction,100.0,106.0,long_distraction,4.0\n"
                       "stack_6s_said_silent,negative,100.0,106.0,none,\n"
                       "calm_said_long,long_distraction,125.0,129.0,long_distraction,4.0\n")
    done = _cli("--recording", str(path), "--annotations", str(sidecar),
                "--out", str(tmp_path / "out"))
    assert done.returncode == 1, done.stderr
    card = json.loads((tmp_path / "out" / "scorecard.json").read_text())
    verdict = {row["name"]: row["pass"] for row in card["scenarios"]}
    assert verdict == {"stack_6s": True, "stack_6s_said_silent": False, "calm_said_long": False}
    assert card["passed"] == 1 and card["failed"] == 2
    assert "PASS  stack_6s" in done.stdout and "FAIL  calm_said_long" in done.stdout


@pytest.mark.parametrize("row, message", [
    ("a,negative,1.0,2.0,maybe,", "expected must be one of"),
    ("a,negative,x,2.0,none,", "start_s must be a number, got 'x'"),
    ("a,long_distraction,1.0,2.0,long_distraction,", "limit_s must be a number, got ''"),
    ("a,negative,3.0,2.0,none,", "end_s 2.0 is before start_s 3.0"),
])
def test_bad_sidecar_exits_2_naming_the_line_and_field(tmp_path, row, message):
    recording, _ = simulate_drive_truth(12, 5.0, 30.0, protocol="none")
    path = tmp_path / "drive.bin"
    write_recording(recording, path)
    sidecar = tmp_path / "scenarios.csv"
    sidecar.write_text(f"name,family,start_s,end_s,expected,limit_s\n{row}\n")
    done = _cli("--recording", str(path), "--annotations", str(sidecar), "--out", str(tmp_path))
    assert done.returncode == 2
    assert f"line 2: {message}" in done.stderr and "Traceback" not in done.stderr
