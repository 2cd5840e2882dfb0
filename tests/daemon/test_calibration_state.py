"""The calibration status and the new state and alert fields as the wire builds them (issue 27):
the baseline's warm-up progress, and the fatigue, calibration and escalation dicts and alert
events with NaN published as null and nothing guessed."""

import math

import msgpack
import numpy as np
import pytest

from distractd.pipeline import RunningBaseline
from distractd.pipeline.formats import alert_event, decode_output, encode_event, encode_state, \
    state_message

ARGS = ("car", (0.0, 10.0), "attentive", -0.5, "m", 1.0, None)


def test_baseline_progress_follows_window_end_time_until_ready_and_restarts_on_reset():
    baseline = RunningBaseline(2, memory_s=60.0, spacing_s=1.0, warmup_s=10.0)
    assert baseline.progress == 0.0
    t = np.arange(5.0, 25.0, 0.5)
    X = np.column_stack([np.sin(t), np.cos(t)])
    progress = []
    for i in range(len(t)):
        baseline.update(t[i:i + 1], X[i:i + 1])
        progress.append((baseline.ready, baseline.progress))
    before = [p for ready, p in progress if not ready]
    assert before == pytest.approx([min((end - 5.0) / 10.0, 1.0)
                                    for end, (ready, _) in zip(t, progress) if not ready])
    assert progress[-1] == (True, 1.0) and before == sorted(before)
    baseline.reset()
    assert (baseline.ready, baseline.progress) == (False, 0.0)


def test_state_dicts_publish_nan_as_null_and_round_trip_msgpack():
    message = state_message(*ARGS, fatigue=(0.0, math.nan, 0.21, np.bool_(False)),
                            calibration=(np.bool_(False), np.float64(0.25), True, 1.0),
                            escalation=(0, "none", None))
    assert message["fatigue"] == {"available": True, "eyes_closed_s": 0.0, "perclos": None,
                                  "blink_duration_s": 0.21, "drowsy": False}
    assert message["calibration"] == {"baseline": {"ready": False, "progress": 0.25},
                                      "road": {"ready": True, "progress": 1.0}}
    assert message["escalation"] == {"level": 0, "name": "none", "since_s": None}
    assert decode_output(encode_state(message)) == ("state", "car", message)


def test_unavailable_fatigue_says_why_and_carries_no_values():
    message = state_message(*ARGS, fatigue="no_eyelid")
    assert message["fatigue"] == {"available": False, "reason": "no_eyelid"}
    assert {"fatigue", "calibration", "escalation"}.isdisjoint(state_message(*ARGS))


def test_alert_events_carry_the_fields_of_their_kind():
    glance = alert_event("car", "long_distraction", 83.6, [(80.6, 83.6)], 3.0)
    assert set(glance) == {"v", "stream", "t", "type", "kind", "glances", "away_s"}
    drowsy = alert_event("car", "drowsiness", 900.0, closures=[(880.0, 880.4), (890.0, 890.5)],
                         closed_s=math.nan, perclos=0.12)
    assert drowsy["closures"] == [[880.0, 880.4], [890.0, 890.5]]
    assert drowsy["closed_s"] is None and drowsy["perclos"] == 0.12
    assert "glances" not in drowsy
    unresponsive = alert_event("car", "unresponsive", 121.0, since=110.0, cause="eyes_closed")
    assert {key: unresponsive[key] for key in ("kind", "t", "since", "cause")} == {
        "kind": "unresponsive", "t": 121.0, "since": 110.0, "cause": "eyes_closed"}
    for event in (glance, drowsy, unresponsive):
        assert msgpack.unpackb(encode_event(event)[1]) == event
