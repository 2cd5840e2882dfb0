"""Fatigue, calibration and escalation in the published state (issue 27), through a real daemon
subprocess fed over ZeroMQ: a simulated calm drive whose driver closes the eyes for 15 s, and the
same drive from a tracker without an eyelid signal; and the same closure through a session in
process, batch by batch as the daemon's loop feeds it, against the batch fatigue channel."""

import numpy as np
import pytest

from distractd.daemon import Model, Session, decision_options, load_config
from distractd.pipeline import (
    FATIGUE_ALERT_KINDS, FEATURE_NAMES, FIELD_INDEX, Recording, detect_fatigue,
)
from distractd.simulators import replay, simulate_drive

from ._published import states_of

SHUT_S = (110.0, 125.0)
"""The eyes closed, facing forward: a microsleep at 1 s, sleep at 3 s, the top escalation step
11 s in."""


def _eyes_shut(recording, start_s, end_s):
    """The recording with the lids shut over [start_s, end_s): eyelids 0, gaze and pupils lost,
    confidence 0.3 and the blink flag set, as a tracker reports closed eyes."""
    samples = recording.samples.copy()
    shut = (samples[:, 0] >= start_s) & (samples[:, 0] < end_s)
    samples[np.ix_(shut, [FIELD_INDEX["eyelid_r"], FIELD_INDEX["eyelid_l"]])] = 0.0
    lost = [FIELD_INDEX[name] for name in ("gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw",
                                           "gaze_l_pitch", "pupil_r", "pupil_l")]
    samples[np.ix_(shut, lost)] = np.nan
    samples[shut, FIELD_INDEX["confidence"]] = 0.3
    samples[shut, FIELD_INDEX["blink"]] = 1.0
    return Recording(samples, recording.labels, recording.meta)


def _without_eyelids(recording):
    samples = recording.samples.copy()
    samples[:, [FIELD_INDEX["eyelid_r"], FIELD_INDEX["eyelid_l"]]] = np.nan
    return Recording(samples, recording.labels, recording.meta)


@pytest.fixture(scope="module")
def calm():
    return simulate_drive(11, duration_s=150.0, protocol="none")


def test_eye_closure_publishes_fatigue_alerts_escalation_and_one_unresponsive(start_daemon,
                                                                              calm):
    drive = _eyes_shut(calm, *SHUT_S)
    daemon = start_daemon(["sessions.idle_timeout_s=3"])
    replay([drive], daemon.input, speed=40, prefix="sleepy")
    replay([_without_eyelids(calm)], daemon.input, speed=40, prefix="noeyelid")
    n_windows = int((calm.samples[-1, 0] - 10.0) / 0.5)
    messages = daemon.collect(lambda m: len(states_of(m, "sleepy")) >= n_windows
                              and len(states_of(m, "noeyelid")) >= n_windows, timeout_s=90)
    states = states_of(messages, "sleepy")
    assert len(states) >= n_windows
    alerts = [m for kind, stream, m in messages
              if kind == "event" and stream == "sleepy" and m["type"] == "alert"]

    fatigue_kinds = [a["kind"] for a in alerts if a["kind"] in ("microsleep", "sleep")]
    assert fatigue_kinds == ["microsleep", "sleep"]
    for alert, closed_s in zip([a for a in alerts if a["kind"] in fatigue_kinds], (1.0, 3.0)):
        (start, end), = alert["closures"]
        assert start == pytest.approx(SHUT_S[0], abs=0.1)
        assert alert["closed_s"] == pytest.approx(closed_s, abs=0.1)
        assert alert["t"] == pytest.approx(SHUT_S[0] + closed_s, abs=0.1) and end == alert["t"]
    unresponsive = [a for a in alerts if a["kind"] == "unresponsive"]
    assert len(unresponsive) == 1
    assert unresponsive[0]["cause"] == "eyes_closed"
    assert unresponsive[0]["since"] == pytest.approx(SHUT_S[0], abs=0.1)
    assert unresponsive[0]["t"] == pytest.approx(SHUT_S[0] + 11.0, abs=0.1)

    during = [m for m in states if SHUT_S[0] + 0.5 <= m["t"] < SHUT_S[1]]
    assert all(m["fatigue"]["available"] for m in during)
    closed = [m["fatigue"]["eyes_closed_s"] for m in during]
    assert closed == sorted(closed) and closed[-1] > 13.0
    levels = [m["escalation"]["level"] for m in during]
    assert levels == sorted(levels) and levels[-1] == 3
    top = next(m["escalation"] for m in during if m["escalation"]["level"] == 3)
    assert top["name"] == "unresponsive" and top["since_s"] == unresponsive[0]["t"]
    before = [m for m in states if 100.0 <= m["t"] < SHUT_S[0]]
    assert {m["escalation"]["name"] for m in before} == {"none"}
    assert any(m["fatigue"]["available"] and m["fatigue"]["eyes_closed_s"] == 0.0
               for m in before)

    baseline = [m["calibration"]["baseline"]["progress"] for m in states]
    assert baseline == sorted(baseline) and baseline[0] < 0.5
    assert states[-1]["calibration"] == {"baseline": {"ready": True, "progress": 1.0},
                                         "road": {"ready": True, "progress": 1.0}}
    assert all(m["calibration"]["baseline"]["ready"] == (m["baseline"] == "ready")
               for m in states)
    assert all(m["calibration"]["road"]["ready"] == (m["glance"]["road"] == "ready")
               for m in states)

    plain = states_of(messages, "noeyelid")
    assert {(m["fatigue"]["available"], m["fatigue"].get("reason")) for m in plain} == {
        (False, "no_eyelid")}
    assert not [m for kind, stream, m in messages if kind == "event" and stream == "noeyelid"
                and m["type"] == "alert" and m["kind"] in ("microsleep", "sleep", "drowsiness")]

    counted = {kind: daemon.metric("distractd_fatigue_alerts_total", kind=kind)
               for kind in ("microsleep", "sleep", "drowsiness")}
    published = {kind: sum(a["kind"] == kind for _, _, a in (
        m for m in messages if m[0] == "event") if a["type"] == "alert")
        for kind in counted}
    assert counted == published and counted["microsleep"] >= 1
    assert daemon.metric("distractd_unresponsive_alerts_total") == sum(
        m["type"] == "alert" and m["kind"] == "unresponsive"
        for kind, _, m in messages if kind == "event")
    assert daemon.stop() == 0


def _session_events(recording, block_samples, windows_per_call):
    """A session fed ``block_samples`` at a time, its windows decided ``windows_per_call`` at a
    time (the daemon's coalesced batches), then flushed; return its events."""
    model = Model("")
    session = Session("car", model.pipeline_config,
                      decision_options(load_config(), model.detector.feature_names), None, 0.0)
    events = []

    def decide(windows):
        for lo in range(0, len(windows), windows_per_call):
            part = windows[lo:lo + windows_per_call]
            if not session.fields_checked:
                session.choice = model.detector.choose(session.fields_seen,
                                                       session.processor.rate_hz)
                session.check_fields(part, model.detector.model_id, model.detector.feature_names,
                                     model.columns, model.needs, session.choice)
            chosen = session.choice.detector
            scores = np.full(len(part), np.nan) if chosen is None \
                else chosen.window_scores(part.X, FEATURE_NAMES, chosen)
            events.extend(session.decide(part, scores, (chosen or model.detector).model_id)[1])

    samples = recording.samples
    for lo in range(0, len(samples), block_samples):
        decide(session.process(samples[lo:lo + block_samples]))
    decide(session.flush())
    return [m for m in events if m["type"] == "alert"]


@pytest.mark.parametrize("block_samples, windows_per_call", [(6, 1), (97, 3)])
def test_a_session_publishes_the_batch_fatigue_alerts_and_one_unresponsive(calm, block_samples,
                                                                           windows_per_call):
    """No alert of the closure is lost or repeated between the stream and the batch channel,
    however the samples and windows are batched (the conformance run's lost ``sleep``, issue 27,
    is not a stream/batch difference)."""
    drive = _eyes_shut(calm, *SHUT_S)
    alerts = _session_events(drive, block_samples, windows_per_call)
    batch = [(a.kind, a.t) for a in detect_fatigue(drive).alerts]
    assert [k for k, _ in batch][:2] == ["microsleep", "sleep"]
    assert [(a["kind"], a["t"]) for a in alerts if a["kind"] in FATIGUE_ALERT_KINDS] == [
        (kind, pytest.approx(t)) for kind, t in batch]
    unresponsive = [a for a in alerts if a["kind"] == "unresponsive"]
    assert len(unresponsive) == 1 and unresponsive[0]["cause"] == "eyes_closed"
    assert unresponsive[0]["t"] == pytest.approx(SHUT_S[0] + 11.0, abs=0.1)
