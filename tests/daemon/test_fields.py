"""The once-per-session check that a stream carries the fields the loaded model's features need."""

import numpy as np
import pytest

from distractd.daemon import DEFAULTS, Session, decision_options, default_model_path
from distractd.models import load_model
from distractd.pipeline import FEATURE_NAMES, FIELD_INDEX, PipelineConfig, Recording, feature_fields
from distractd.pipeline.formats import FIELDS
from distractd.simulators import replay, simulate_drive

from ._published import states_of

HEAD = ("head_x", "head_y", "head_z", "head_yaw", "head_pitch", "head_roll")
GAZE = ("gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch")
EYELID = ("eyelid_r", "eyelid_l")
NOT_FROM_GAZE = HEAD + EYELID + ("saccade", "blink")  # what a gaze-only tracker lacks


@pytest.fixture(scope="module")
def detector():
    return load_model(default_model_path())


@pytest.fixture(scope="module")
def drive():
    return simulate_drive(5, duration_s=30.0)


def gaze_only(recording):
    """The recording as a gaze-only tracker (Pupil Core) sees it: no head pose, no eyelid."""
    samples = recording.samples.copy()
    samples[:, [FIELD_INDEX[field] for field in NOT_FROM_GAZE]] = np.nan
    return Recording(samples, recording.labels)


def names(needs):
    return [tuple(FIELDS[i] for i in fields) for fields in needs]


def test_feature_fields_derive_from_the_names():
    needs = dict(zip(FEATURE_NAMES, names(feature_fields(FEATURE_NAMES))))
    for field in HEAD + GAZE:
        assert needs[f"mean_{field}"] == needs[f"sd_{field}"] == (field,)
    assert needs["mean_saccade"] == GAZE
    for blink in ("mean_blink", "mean_blink_frequency_hz", "mean_blink_duration_s"):
        assert needs[blink] == GAZE + EYELID  # the eyelid, or track loss of the gaze
    assert needs["mean_perclos"] == EYELID
    assert all(needs[name] == GAZE for name in FEATURE_NAMES if name.startswith("glance_"))
    flags = names(feature_fields(["mean_saccade", "mean_blink", "mean_perclos"], True))
    assert flags == [("saccade",), ("blink",), EYELID]
    assert names(feature_fields(["mean_pupil", "sd_unknown_thing"])) == [("pupil_r", "pupil_l"), ()]


def _first_windows(detector, recording, stream):
    """A session fed the recording until its first windows complete, and those windows."""
    config = PipelineConfig.from_dict(detector.pipeline_config)
    session = Session(stream, config, decision_options(DEFAULTS, detector.feature_names), None,
                      0.0)
    for lo in range(0, recording.n_samples, 30):
        windows = session.process(recording.samples[lo:lo + 30])
        if len(windows):
            return session, windows
    raise AssertionError("no window")


def _check(detector, session, windows):
    return session.check_fields(windows, detector.model_id, detector.feature_names,
                                detector.feature_columns(FEATURE_NAMES),
                                feature_fields(detector.feature_names))


def test_session_reports_what_a_gaze_only_stream_lacks(detector, drive):
    session, windows = _first_windows(detector, gaze_only(drive), "car1")
    lacking = [name for name in detector.feature_names
               if name.removeprefix("mean_").removeprefix("sd_") in HEAD + ("perclos",)]
    assert _check(detector, session, windows) == (
        f"stream car1: lacks {', '.join(HEAD + EYELID)} that model {detector.model_id} needs "
        f"(features {', '.join(lacking)}); its windows get no decision but glance alerts")
    assert session.fields_checked


def test_session_with_every_field_or_still_warming_reports_nothing(detector, drive):
    session, windows = _first_windows(detector, drive, "car")
    assert _check(detector, session, windows) is None and session.fields_checked
    # PERCLOS and the blink measures still warming up: NaN in the windows, yet the eyelid is there.
    windows.X[:, [FEATURE_NAMES.index(n) for n in ("mean_perclos", "mean_blink_frequency_hz")]] = \
        np.nan
    session.recheck_fields()
    assert _check(detector, session, windows) is None and session.fields_checked


def test_session_waits_while_its_samples_carry_no_signal(detector, drive):
    blank = drive.samples.copy()
    blank[:, 1:] = np.nan
    blank[:, FIELD_INDEX["confidence"]] = 0.0
    session, windows = _first_windows(detector, Recording(blank), "dark")
    assert _check(detector, session, windows) is None and not session.fields_checked


def test_session_says_when_the_gaze_only_fallback_scores_the_stream(detector, drive):
    assert detector.fallback is not None   # the shipped cohort model carries one
    session, windows = _first_windows(detector, gaze_only(drive), "car2")
    choice = detector.choose(session.fields_seen, session.processor.rate_hz)
    assert choice.detector is detector.fallback and choice.reason is None
    line = session.check_fields(windows, detector.model_id, detector.feature_names,
                                detector.feature_columns(FEATURE_NAMES),
                                feature_fields(detector.feature_names), choice)
    assert line.startswith(f"stream car2: lacks {', '.join(HEAD + EYELID)} that model ")
    assert line.endswith(f"its windows are scored by the model's gaze_only sub-model "
                         f"({detector.model_id}/gaze_only)")


def test_gaze_only_stream_is_reported_once_and_decided_by_the_fallback(start_daemon, drive,
                                                                       detector):
    daemon = start_daemon(["sessions.idle_timeout_s=3"])
    replay([drive], daemon.input, speed=60, prefix="full")
    assert states_of(daemon.collect(lambda m: len(states_of(m, "full")) >= 3, 30), "full")
    assert daemon.metric("distractd_stream_field_mismatch_total") == 0
    eyes = gaze_only(simulate_drive(5, duration_s=150.0, protocol="visual-manual"))
    replay([eyes], daemon.input, speed=60, prefix="eyes")
    published = states_of(daemon.collect(lambda m: len(states_of(m, "eyes")) >= 250, 30), "eyes")
    # decided once the running baseline is ready (60 s), by the model's gaze-only fallback
    assert {m["state"] for m in published if m["t"] > 75.0} <= {"attentive", "distracted"}
    assert any(m["state"] != "unknown" for m in published)
    assert daemon.metric("distractd_stream_field_mismatch_total") == 1  # once, not per window
    assert daemon.stop() == 0
    lines = [line for line in daemon.log_text.splitlines() if " lacks " in line]
    assert len(lines) == 1, daemon.log_text
    assert " WARNING distractd.daemon: stream eyes: lacks " \
           f"{', '.join(HEAD + EYELID)} that model {detector.model_id} needs (features " \
           "mean_head_x, " in lines[0]
    assert "mean_perclos" in lines[0] and "mean_blink" not in lines[0]
    assert lines[0].endswith(f"its windows are scored by the model's gaze_only sub-model "
                             f"({detector.model_id}/gaze_only)")
